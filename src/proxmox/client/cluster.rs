//! Cluster-wide and storage endpoints: version, nodes, guests, next free id, storages, content,
//! download-url.

use reqwest::Method;

use super::model::{
    ClusterGuest, DownloadUrl, NodeInfo, RawResource, StorageStatus, StorageVolume, Version,
};
use super::transport::Call;
use super::{ProxmoxClient, PveError, seg};
use crate::proxmox::types::{NodeName, StorageId, Upid, VmId};

impl ProxmoxClient {
    pub async fn version(&self) -> Result<Version, PveError> {
        self.transport
            .execute(&Call::new(Method::GET, "/version".into(), None))
            .await
    }

    pub async fn nodes(&self) -> Result<Vec<NodeInfo>, PveError> {
        self.transport
            .execute(&Call::new(Method::GET, "/nodes".into(), None))
            .await
    }

    /// Every LXC and QEMU guest in the cluster, in one call.
    pub async fn cluster_guests(&self) -> Result<Vec<ClusterGuest>, PveError> {
        let call = Call::new(Method::GET, "/cluster/resources".into(), None).param("type", "vm");
        let raw: Vec<RawResource> = self.transport.execute(&call).await?;
        Ok(raw
            .into_iter()
            .filter_map(RawResource::into_guest)
            .collect())
    }

    /// The lowest free id (not a reservation), or checks that `want` is free.
    pub async fn next_id(&self, want: Option<VmId>) -> Result<VmId, PveError> {
        let call = Call::new(Method::GET, "/cluster/nextid".into(), None).param_opt("vmid", want);
        self.transport.execute(&call).await
    }

    pub async fn storages(&self, node: &NodeName) -> Result<Vec<StorageStatus>, PveError> {
        let path = format!("/nodes/{}/storage", seg(node.as_str()));
        self.transport
            .execute(&Call::new(Method::GET, path, Some(node.as_str())))
            .await
    }

    /// Volumes on a storage, optionally of one content type (`vztmpl`, `rootdir`, ...).
    pub async fn storage_content(
        &self,
        node: &NodeName,
        storage: &StorageId,
        content: Option<&str>,
    ) -> Result<Vec<StorageVolume>, PveError> {
        let path = format!(
            "/nodes/{}/storage/{}/content",
            seg(node.as_str()),
            seg(storage.as_str())
        );
        let call = Call::new(Method::GET, path, Some(node.as_str())).param_opt("content", content);
        self.transport.execute(&call).await
    }

    /// Starts a `download` task that fetches `req.url` onto the storage.
    pub async fn download_url(
        &self,
        node: &NodeName,
        storage: &StorageId,
        req: &DownloadUrl,
    ) -> Result<Upid, PveError> {
        let path = format!(
            "/nodes/{}/storage/{}/download-url",
            seg(node.as_str()),
            seg(storage.as_str())
        );
        let mut call = Call::new(Method::POST, path, Some(node.as_str()))
            .param("url", &req.url)
            .param("content", &req.content)
            .param("filename", &req.filename)
            .param_opt("verify-certificates", req.verify_certificates.map(u8::from));
        if let Some((algorithm, sum)) = &req.checksum {
            call = call
                .param("checksum-algorithm", algorithm)
                .param("checksum", sum);
        }
        self.transport.execute(&call).await
    }

    /// Starts an `ociregistrypull` task that pulls the image `reference` onto the storage as
    /// `<filename>.tar` (pve-storage `oci_registry_pull`; `filename` without `.tar`).
    pub async fn oci_registry_pull(
        &self,
        node: &NodeName,
        storage: &StorageId,
        reference: &str,
        filename: &str,
    ) -> Result<Upid, PveError> {
        let path = format!(
            "/nodes/{}/storage/{}/oci-registry-pull",
            seg(node.as_str()),
            seg(storage.as_str())
        );
        let call = Call::new(Method::POST, path, Some(node.as_str()))
            .param("reference", reference)
            .param("filename", filename);
        self.transport.execute(&call).await
    }
}
