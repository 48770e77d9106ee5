//! Files atoll puts in a storage itself: `POST .../upload` (PVE's `imgcopy` task, for `iso`,
//! `vztmpl` and `import`), the storage's configuration (`GET /storage/{storage}`, whose `path`
//! is where snippets go over SFTP) and `DELETE .../content/{volume}`.

use bytes::Bytes;
use reqwest::Method;
use serde::Deserialize;

use super::transport::Call;
use super::{ProxmoxClient, PveError, seg};
use crate::proxmox::types::{NodeName, StorageId, Upid};

/// `POST /nodes/{node}/storage/{storage}/upload`.
#[derive(Clone, PartialEq, Eq)]
pub struct Upload {
    /// `iso`, `vztmpl` or `import`.
    pub content: String,
    pub filename: String,
    pub bytes: Bytes,
    /// `(algorithm, hex digest)`: PVE checks the file against it before moving it into place.
    pub checksum: Option<(String, String)>,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("content", &self.content)
            .field("filename", &self.filename)
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

/// `GET /storage/{storage}`: the cluster-wide configuration of one storage.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StorageConfig {
    pub storage: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// Comma-separated content types.
    #[serde(default)]
    pub content: String,
    /// The directory of a file-based storage.
    #[serde(default)]
    pub path: Option<String>,
}

impl StorageConfig {
    pub fn allows(&self, content: &str) -> bool {
        self.content.split(',').any(|c| c.trim() == content)
    }
}

impl ProxmoxClient {
    /// Starts an `imgcopy` task that moves the uploaded bytes onto the storage.
    pub async fn upload(
        &self,
        node: &NodeName,
        storage: &StorageId,
        req: &Upload,
    ) -> Result<Upid, PveError> {
        let path = format!(
            "/nodes/{}/storage/{}/upload",
            seg(node.as_str()),
            seg(storage.as_str())
        );
        let mut call =
            Call::new(Method::POST, path, Some(node.as_str())).param("content", &req.content);
        if let Some((algorithm, sum)) = &req.checksum {
            call = call
                .param("checksum-algorithm", algorithm)
                .param("checksum", sum);
        }
        // PVE overwrites the file: sending it again does no harm.
        let call = call.file(&req.filename, req.bytes.clone()).idempotent(true);
        self.transport.execute(&call).await
    }

    pub async fn storage_config(&self, storage: &StorageId) -> Result<StorageConfig, PveError> {
        let path = format!("/storage/{}", seg(storage.as_str()));
        self.transport
            .execute(&Call::new(Method::GET, path, None))
            .await
    }

    /// Deletes a volume (`local:snippets/hook.sh`); PVE answers with a task or `null`.
    pub async fn delete_volume(
        &self,
        node: &NodeName,
        storage: &StorageId,
        volid: &str,
    ) -> Result<Option<Upid>, PveError> {
        let path = format!(
            "/nodes/{}/storage/{}/content/{}",
            seg(node.as_str()),
            seg(storage.as_str()),
            seg(volid)
        );
        self.transport
            .execute(&Call::new(Method::DELETE, path, Some(node.as_str())))
            .await
    }
}
