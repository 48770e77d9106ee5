//! Authentication as pveproxy does it: API tokens (`PVEAPIToken=USER@REALM!ID=SECRET`, no CSRF),
//! and tickets from `POST /access/ticket` (`PVEAuthCookie` + `CSRFPreventionToken` on writes),
//! with PVE's 401 messages. Tickets are HMAC-signed with a per-process key and expire.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::error::ApiError;

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// `user@realm`.
    pub(crate) user: String,
    /// Token id when authenticated by an API token.
    pub(crate) token: Option<String>,
}

impl Caller {
    /// The user field of a UPID: `user@realm` or `user@realm!token`.
    pub(crate) fn upid_user(&self) -> String {
        match &self.token {
            Some(t) => format!("{}!{t}", self.user),
            None => self.user.clone(),
        }
    }

    /// Whether root-only checks pass: only `root@pam` itself, never a token.
    pub(crate) fn is_root(&self) -> bool {
        self.user == "root@pam" && self.token.is_none()
    }
}

/// Known tokens and passwords, and the ticket signing key.
pub(crate) struct Auth {
    /// Token secrets by full id: the scenario's, and those made through the API
    /// (`routes::access_control`), which also removes them.
    tokens: std::sync::Mutex<BTreeMap<String, String>>,
    passwords: BTreeMap<String, String>,
    key: [u8; 32],
    pub(crate) ticket_lifetime: Duration,
    clock: model::SharedClock,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("tokens", &self.tokens().keys().cloned().collect::<Vec<_>>())
            .field("users", &self.passwords.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

type HmacSha256 = Hmac<Sha256>;

impl Auth {
    /// `tokens`: `user@realm!id` → secret; `passwords`: `user@realm` → password.
    pub(crate) fn new(
        tokens: BTreeMap<String, String>,
        passwords: BTreeMap<String, String>,
        ticket_lifetime: Duration,
        clock: model::SharedClock,
    ) -> Self {
        Self {
            tokens: std::sync::Mutex::new(tokens),
            passwords,
            key: rand::random(),
            ticket_lifetime,
            clock,
        }
    }

    fn tokens(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A token made through the API: a new random secret (a UUID, as PVE makes them), which
    /// authenticates from now on.
    pub(crate) fn add_token(&self, full_id: &str) -> String {
        let secret = format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            rand::random::<u32>(),
            rand::random::<u16>(),
            rand::random::<u16>() & 0xfff,
            (rand::random::<u16>() & 0x3fff) | 0x8000,
            rand::random::<u64>() & 0xffff_ffff_ffff
        );
        self.tokens().insert(full_id.to_owned(), secret.clone());
        secret
    }

    /// A token removed (or its user): its secret no longer authenticates.
    pub(crate) fn remove_token(&self, full_id: &str) {
        self.tokens().remove(full_id);
    }

    /// Seconds since the epoch, on the simulator's clock.
    fn now(&self) -> u64 {
        u64::try_from(self.clock.now().unix_timestamp()).unwrap_or_default()
    }

    fn sign(&self, data: &str) -> String {
        let mut mac = HmacSha256::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("hmac takes any key length"));
        mac.update(data.as_bytes());
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// Checks `Authorization: PVEAPIToken=...`.
    pub(crate) fn check_token(&self, header: &str) -> Result<Caller, ApiError> {
        let failed = || ApiError::unauthorized("Authentication failed!");
        let value = header.strip_prefix("PVEAPIToken=").ok_or_else(failed)?;
        let (full_id, secret) = value.split_once('=').ok_or_else(failed)?;
        let expected = self.tokens().get(full_id).cloned().ok_or_else(failed)?;
        if !bool::from(expected.as_bytes().ct_eq(secret.as_bytes())) {
            return Err(failed());
        }
        let (user, token) = full_id.split_once('!').ok_or_else(failed)?;
        Ok(Caller {
            user: user.to_owned(),
            token: Some(token.to_owned()),
        })
    }

    /// `POST /access/ticket`: a password (or a valid ticket as password, to renew).
    pub(crate) fn login(
        &self,
        username: &str,
        password: &str,
    ) -> Result<(String, String), ApiError> {
        let ok = match self.passwords.get(username) {
            Some(p) => bool::from(p.as_bytes().ct_eq(password.as_bytes())),
            None => false,
        } || self
            .verify_ticket(password)
            .is_ok_and(|c| c.user == username);
        if !ok {
            return Err(ApiError::unauthorized("authentication failure"));
        }
        Ok((
            self.ticket(username, self.now()),
            self.csrf_token(username, self.now()),
        ))
    }

    fn ticket(&self, user: &str, time: u64) -> String {
        let data = format!("PVE:{user}:{time:08X}");
        format!("{data}::{}", self.sign(&data))
    }

    fn csrf_token(&self, user: &str, time: u64) -> String {
        format!("{time:08X}:{}", self.sign(&format!("{time:08X}:{user}")))
    }

    /// Checks a `PVEAuthCookie` ticket.
    pub(crate) fn verify_ticket(&self, ticket: &str) -> Result<Caller, ApiError> {
        let failed = || ApiError::unauthorized("Authentication failed!");
        let (data, sig) = ticket.split_once("::").ok_or_else(failed)?;
        if !bool::from(self.sign(data).as_bytes().ct_eq(sig.as_bytes())) {
            return Err(failed());
        }
        let mut parts = data.splitn(3, ':');
        let (Some("PVE"), Some(user), Some(time)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(failed());
        };
        let time = u64::from_str_radix(time, 16).map_err(|_| failed())?;
        if self.now().saturating_sub(time) > self.ticket_lifetime.as_secs() {
            return Err(failed());
        }
        Ok(Caller {
            user: user.to_owned(),
            token: None,
        })
    }

    /// Checks the `CSRFPreventionToken` header for a ticket user.
    pub(crate) fn verify_csrf(&self, user: &str, token: Option<&str>) -> Result<(), ApiError> {
        let denied = || ApiError::unauthorized("Permission denied - invalid csrf token");
        let token = token.ok_or_else(denied)?;
        let (time, _) = token.split_once(':').ok_or_else(denied)?;
        let time = u64::from_str_radix(time, 16).map_err(|_| denied())?;
        let expected = self.csrf_token(user, time);
        if !bool::from(expected.as_bytes().ct_eq(token.as_bytes()))
            || self.now().saturating_sub(time) > self.ticket_lifetime.as_secs()
        {
            return Err(denied());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth() -> Auth {
        Auth::new(
            BTreeMap::from([("root@pam!atoll".to_owned(), "secret".to_owned())]),
            BTreeMap::from([("root@pam".to_owned(), "pw".to_owned())]),
            Duration::from_secs(7200),
            model::SystemClock::shared(),
        )
    }

    #[test]
    fn valid_token_names_user_and_token() {
        let c = auth().check_token("PVEAPIToken=root@pam!atoll=secret");
        assert_eq!(
            c,
            Ok(Caller {
                user: "root@pam".to_owned(),
                token: Some("atoll".to_owned())
            })
        );
    }

    #[test]
    fn wrong_token_secret_is_refused() {
        assert_eq!(
            auth()
                .check_token("PVEAPIToken=root@pam!atoll=nope")
                .map_err(|e| e.status),
            Err(401)
        );
    }

    #[test]
    fn ticket_and_csrf_from_login_verify() {
        let a = auth();
        let (ticket, csrf) = a.login("root@pam", "pw").unwrap_or_default();
        assert_eq!(
            a.verify_ticket(&ticket).map(|c| c.user),
            Ok("root@pam".to_owned())
        );
        assert!(a.verify_csrf("root@pam", Some(&csrf)).is_ok());
        assert!(a.verify_csrf("root@pam", Some("00000000:x")).is_err());
        assert!(a.login("root@pam", "bad").is_err());
    }
}
