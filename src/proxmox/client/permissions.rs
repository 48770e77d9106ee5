//! What `atoll doctor` asks of the endpoint beyond the engine's calls: an unauthenticated
//! request that proves the endpoint answers over TLS, and `GET /access/permissions`
//! (pve-access-control `API2/AccessControl.pm` `permissions`) for the authenticated user or
//! token.

use std::collections::BTreeMap;

use reqwest::Method;
use reqwest::header::HeaderMap;

use super::error::PveError;
use super::transport::Call;
use super::{ProxmoxClient, seg};

/// Privilege → propagate flag, as PVE reports it: a privilege listed is held.
pub type Privileges = BTreeMap<String, serde_json::Value>;

impl ProxmoxClient {
    /// One `GET /access/ticket` without credentials (the login form's placeholder, which
    /// pveproxy serves to anyone, without the 3 s delay of a refused login; pve-manager
    /// `PVE/HTTPServer.pm`): `Ok` once the answer proves the endpoint is reachable and its
    /// certificate trusted; the transport or TLS error, or an answer PVE never gives there,
    /// otherwise. No retry.
    pub async fn reach(&self) -> Result<(), PveError> {
        let call = Call::new(Method::GET, "/access/ticket".into(), None);
        match self.transport.send(&call, HeaderMap::new()).await {
            Ok(_) | Err(PveError::Unauthorized(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The privileges the authenticated user or token holds on `path` (privilege separation
    /// already applied by PVE).
    pub async fn permissions(&self, path: &str) -> Result<Privileges, PveError> {
        let call = Call::new(Method::GET, "/access/permissions".into(), None).param("path", path);
        let mut all: BTreeMap<String, Privileges> = self.transport.execute(&call).await?;
        Ok(all.remove(path).unwrap_or_default())
    }

    /// The names of the bridges on `node` (`GET /nodes/{node}/network?type=any_bridge`).
    pub async fn bridges(&self, node: &str) -> Result<Vec<String>, PveError> {
        #[derive(serde::Deserialize)]
        struct Iface {
            iface: String,
        }
        let path = format!("/nodes/{}/network", seg(node));
        let call = Call::new(Method::GET, path, Some(node)).param("type", "any_bridge");
        let list: Vec<Iface> = self.transport.execute(&call).await?;
        Ok(list.into_iter().map(|i| i.iface).collect())
    }
}
