//! Snippets: files in a storage's `snippets` directory. PVE's API cannot upload them (people
//! copy them onto the node), so a storage given a real directory (`path:` in the scenario)
//! lists the files found in `<path>/snippets` as its `snippets` content, as PVE's directory
//! plugin does (`<path>/snippets/*`: names starting with a dot are not listed). A guest's
//! `hookscript` must name one that exists and is executable (pve-guest-common
//! `check_hookscript`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::model::Cluster;
use crate::storage::Storage;

impl Storage {
    /// The directory PVE reports as the storage's `path` (file-based storages only).
    pub(crate) fn path(&self) -> Option<String> {
        if let Some(dir) = &self.dir {
            return Some(dir.display().to_string());
        }
        match self.stype.as_str() {
            "dir" if self.id == "local" => Some("/var/lib/vz".to_owned()),
            "dir" | "nfs" | "cifs" | "cephfs" | "btrfs" => Some(format!("/mnt/pve/{}", self.id)),
            _ => None,
        }
    }

    /// `<path>/snippets/<name>` on the simulator's disk, when the storage has a real directory.
    fn snippet_path(&self, name: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        (!name.contains('/')).then(|| dir.join("snippets").join(name))
    }

    /// The `GET .../content` entries of the snippets in the storage's directory.
    pub(crate) fn snippets_json(&self) -> Vec<Value> {
        if !self.content.contains("snippets") {
            return Vec::new();
        }
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir.join("snippets")) else {
            return Vec::new();
        };
        let mut out: Vec<(String, Value)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let meta = e.metadata().ok()?;
                if name.starts_with('.') || !meta.is_file() {
                    return None;
                }
                let ctime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                let volid = format!("{}:snippets/{name}", self.id);
                let entry = json!({
                    "volid": volid, "content": "snippets", "format": "snippet",
                    "size": meta.len(), "ctime": ctime,
                });
                Some((volid, entry))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.into_iter().map(|(_, v)| v).collect()
    }

    /// Deletes a snippet file from the directory; `false` when there is none.
    pub(crate) fn remove_snippet(&self, name: &str) -> Result<bool, String> {
        let Some(path) = self.snippet_path(name) else {
            return Ok(false);
        };
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("unlink '{}' failed - {e}", path.display())),
        }
    }
}

/// Whether a file is executable by someone (`-x` as root sees it).
fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o111 != 0
}

/// pve-guest-common's `check_hookscript`, for a guest on `node`.
pub(crate) fn check_hookscript(cluster: &Cluster, node: &str, volid: &str) -> Result<(), String> {
    let Some((sid, volname)) = volid.split_once(':') else {
        return Err(format!("unable to parse volume ID '{volid}'"));
    };
    let storage = cluster
        .storages
        .get(&(node.to_owned(), sid.to_owned()))
        .ok_or_else(|| format!("storage '{sid}' does not exist"))?;
    let Some(name) = volname.strip_prefix("snippets/") else {
        return Err(format!("'{volid}' is not in the snippets directory"));
    };
    let missing = || format!("script '{volid}' does not exist");
    match storage.snippet_path(name) {
        Some(path) => {
            let meta = std::fs::metadata(&path).map_err(|_| missing())?;
            if !meta.is_file() {
                return Err(missing());
            }
            if !executable(&meta) {
                return Err(format!("script '{volid}' is not executable"));
            }
            Ok(())
        }
        None if storage.volumes.contains_key(volid) => Ok(()),
        None => Err(missing()),
    }
}
