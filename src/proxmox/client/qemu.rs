//! What only QEMU guests have: regenerating the cloud-init drive (`PUT .../cloudinit`).

use reqwest::Method;

use super::transport::Call;
use super::{ProxmoxClient, PveError, seg};
use crate::proxmox::types::{NodeName, VmId};

fn vm_path(node: &NodeName, vmid: VmId) -> String {
    format!("/nodes/{}/qemu/{vmid}", seg(node.as_str()))
}

impl ProxmoxClient {
    /// Regenerates the cloud-init drive from the config (`PUT .../cloudinit`).
    pub async fn qemu_cloudinit(&self, node: &NodeName, vmid: VmId) -> Result<(), PveError> {
        let call = Call::new(
            Method::PUT,
            format!("{}/cloudinit", vm_path(node, vmid)),
            Some(node.as_str()),
        );
        let _: serde_json::Value = self.transport.execute(&call).await?;
        Ok(())
    }
}
