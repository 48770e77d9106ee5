//! Files atoll puts in a storage itself (`proxmox_virtual_environment_file`): `iso`, `vztmpl`
//! and `import` through PVE's upload (an `imgcopy` task), `snippets` over SFTP into the
//! storage's `snippets` directory, found from the storage's configuration. Every check that
//! can refuse (the storage takes the content type, it is file based, the node has SSH access)
//! runs before anything is written; a write lands whole or not at all, and state is recorded
//! only after it.

use bytes::Bytes;

use super::Run;
use crate::proxmox::client::Upload;
use crate::proxmox::inventory::parse;
use crate::proxmox::plan::DesiredDownload;
use crate::proxmox::sftp::{self, Put};
use crate::proxmox::types::{NodeName, StorageId};

impl Run<'_> {
    /// Puts `bytes` in the file's storage; `replacing`: the file is atoll's already.
    pub(super) async fn put_file(
        &self,
        file: &DesiredDownload,
        bytes: &tfconfig::SourceBytes,
        replacing: bool,
    ) -> Result<(), String> {
        let node = parse("node name", &file.node).map_err(|e| e.to_string())?;
        let storage = parse("storage", &file.datastore).map_err(|e| e.to_string())?;
        if file.content_type == "snippets" {
            self.put_snippet(file, &storage, bytes, replacing).await
        } else {
            self.upload(file, &node, &storage, bytes).await
        }
    }

    async fn upload(
        &self,
        file: &DesiredDownload,
        node: &NodeName,
        storage: &StorageId,
        bytes: &tfconfig::SourceBytes,
    ) -> Result<(), String> {
        let volid = file.volid();
        let request = Upload {
            content: file.content_type.clone(),
            filename: file.file_name.clone(),
            bytes: Bytes::from(bytes.0.as_ref().clone()),
            checksum: Some(("sha256".to_owned(), bytes.sha256())),
        };
        let api = self.exec.api;
        let upid = api
            .upload(node, storage, &request)
            .await
            .map_err(|e| format!("uploading {volid}: {e}"))?;
        api.wait_task(&upid)
            .await
            .map_err(|e| format!("uploading {volid}: {e}"))?;
        Ok(())
    }

    async fn put_snippet(
        &self,
        file: &DesiredDownload,
        storage: &StorageId,
        bytes: &tfconfig::SourceBytes,
        replacing: bool,
    ) -> Result<(), String> {
        let volid = file.volid();
        let Some(settings) = self.exec.sftp else {
            return Err(format!(
                "{volid}: Proxmox VE's API cannot upload snippets, and the server has no SSH \
                 access to the nodes; set proxmox.ssh (user, private_key_file, \
                 known_hosts_file, nodes) in the server settings"
            ));
        };
        let config = self
            .exec
            .api
            .storage_config(storage)
            .await
            .map_err(|e| format!("reading storage '{}': {e}", file.datastore))?;
        let Some(path) = config.path.as_deref().filter(|p| p.starts_with('/')) else {
            return Err(format!(
                "can't upload to storage type '{}', not a file based storage!",
                config.kind
            ));
        };
        if !config.allows("snippets") {
            return Err(format!(
                "storage '{}' does not support 'snippets' content",
                file.datastore
            ));
        }
        let mode = file
            .arguments
            .get("file_mode")
            .and_then(|m| u32::from_str_radix(m, 8).ok());
        let overwrite = file.arguments.get("overwrite").is_none_or(|o| o != "false");
        let dir = format!("{}/snippets", path.trim_end_matches('/'));
        let put = Put {
            node: &file.node,
            dir: &dir,
            file_name: &file.file_name,
            bytes: &bytes.0,
            mode,
            refuse_existing: !overwrite && !replacing,
        };
        sftp::put(settings, &put)
            .await
            .map_err(|e| format!("{volid}: {e}"))
    }

    /// Deletes a file atoll put in a storage (`id` is its volume id).
    pub(super) async fn delete_file(&self, node: &str, volid: &str) -> Result<(), String> {
        let node = parse("node name", node).map_err(|e| e.to_string())?;
        let Some((datastore, _)) = volid.split_once(':') else {
            return Err(format!("{volid} is not a volume id"));
        };
        let storage = parse("storage", datastore).map_err(|e| e.to_string())?;
        let api = self.exec.api;
        let task = api
            .delete_volume(&node, &storage, volid)
            .await
            .map_err(|e| format!("deleting {volid}: {e}"))?;
        if let Some(upid) = task {
            api.wait_task(&upid)
                .await
                .map_err(|e| format!("deleting {volid}: {e}"))?;
        }
        Ok(())
    }
}
