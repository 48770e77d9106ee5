//! `PUT /cluster/sdn`: Proxmox VE commits the pending SDN configuration (`sdn/*.cfg` becomes
//! the running one) and starts a `reloadnetworkall` task that regenerates the vnet bridges
//! on every node; its UPID is the answer, and the caller waits for it.

use reqwest::Method;

use super::transport::Call;
use super::{ProxmoxClient, PveError};
use crate::proxmox::types::Upid;

impl ProxmoxClient {
    /// Applies the pending SDN configuration; the task that reloads the nodes' networks.
    /// Applying again applies what is pending then, so it may be retried.
    pub async fn sdn_apply(&self) -> Result<Upid, PveError> {
        let call = Call::new(Method::PUT, "/cluster/sdn".to_owned(), None).idempotent(true);
        self.transport.execute(&call).await
    }
}
