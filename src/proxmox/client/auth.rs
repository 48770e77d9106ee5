//! Ticket authentication: `POST /access/ticket`, cached, renewed before the two-hour expiry by
//! posting the current ticket as the password, and re-created from the password if renewal fails.

use std::time::{Duration, Instant};

use model::SharedClock;

use reqwest::Method;
use reqwest::header::HeaderMap;
use secrecy::SecretString;
use serde::Deserialize;
use tokio::sync::Mutex;

use super::error::PveError;
use super::transport::{Call, Param, Transport, decode};

/// A valid ticket and its CSRF token. `Debug` redacts both.
#[derive(Debug, Clone)]
pub(crate) struct Ticket {
    pub(crate) cookie: SecretString,
    pub(crate) csrf: SecretString,
    obtained: Instant,
}

#[derive(Deserialize)]
struct TicketResponse {
    ticket: String,
    #[serde(rename = "CSRFPreventionToken")]
    csrf: String,
}

#[derive(Debug)]
pub(crate) struct TicketCache {
    renew_after: Duration,
    clock: SharedClock,
    current: Mutex<Option<Ticket>>,
}

impl TicketCache {
    pub(crate) fn new(renew_after: Duration, clock: SharedClock) -> Self {
        Self {
            renew_after,
            clock,
            current: Mutex::new(None),
        }
    }

    /// A ticket young enough to use, logging in or renewing first if needed. Concurrent callers
    /// wait for one login instead of each sending their own.
    pub(crate) async fn get(
        &self,
        transport: &Transport,
        username: &str,
        password: &SecretString,
    ) -> Result<Ticket, PveError> {
        let mut current = self.current.lock().await;
        if let Some(ticket) = current.as_ref()
            && self.clock.since(ticket.obtained) < self.renew_after
        {
            return Ok(ticket.clone());
        }
        let renewed = match current.as_ref() {
            Some(old) => login(transport, username, &old.cookie, &self.clock)
                .await
                .ok(),
            None => None,
        };
        let ticket = match renewed {
            Some(t) => t,
            None => login(transport, username, password, &self.clock).await?,
        };
        *current = Some(ticket.clone());
        Ok(ticket)
    }

    pub(crate) async fn invalidate(&self) {
        *self.current.lock().await = None;
    }
}

async fn login(
    transport: &Transport,
    username: &str,
    password: &SecretString,
    clock: &SharedClock,
) -> Result<Ticket, PveError> {
    let mut call =
        Call::new(Method::POST, "/access/ticket".into(), None).param("username", username);
    call.params
        .push(("password".into(), Param::Secret(password.clone())));
    let body = transport.send(&call, HeaderMap::new()).await?;
    let response: TicketResponse = decode(&call, &body)?;
    tracing::debug!(user = username, "obtained proxmox ticket");
    Ok(Ticket {
        cookie: SecretString::from(response.ticket),
        csrf: SecretString::from(response.csrf),
        obtained: clock.instant(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticket_debug_redacts_cookie_and_csrf() {
        let t = Ticket {
            cookie: SecretString::from("PVE:root@pam:66F0A2B1::sig"),
            csrf: SecretString::from("66F0A2B1:csrfsecret"),
            obtained: Instant::now(),
        };
        let debug = format!("{t:?}");
        assert!(
            !debug.contains("sig") && !debug.contains("csrfsecret"),
            "{debug}"
        );
    }
}
