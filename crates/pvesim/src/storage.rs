//! Storages of one node: type, content types, capacity accounting and volumes (templates,
//! ISOs, guest disks), with PVE's volume naming and allocation errors.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

/// One volume on a storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Volume {
    pub(crate) volid: String,
    pub(crate) content: String,
    pub(crate) size: u64,
    pub(crate) vmid: Option<u32>,
    pub(crate) ctime: u64,
}

/// A storage as seen on one node.
#[derive(Debug, Clone)]
pub(crate) struct Storage {
    pub(crate) id: String,
    pub(crate) stype: String,
    pub(crate) content: BTreeSet<String>,
    pub(crate) total: u64,
    pub(crate) shared: bool,
    pub(crate) volumes: BTreeMap<String, Volume>,
    /// Linked clones: clone volume id → the base volume it was cloned from.
    pub(crate) linked: BTreeMap<String, String>,
    /// A real directory standing for the storage's path (`path:` in the scenario): its
    /// `snippets` subdirectory holds the storage's snippets.
    pub(crate) dir: Option<std::path::PathBuf>,
}

impl Storage {
    pub(crate) fn used(&self) -> u64 {
        self.volumes.values().map(|v| v.size).sum()
    }

    pub(crate) fn avail(&self) -> u64 {
        self.total.saturating_sub(self.used())
    }

    /// Whether files (templates, ISOs) can live here.
    pub(crate) fn is_file_based(&self) -> bool {
        matches!(
            self.stype.as_str(),
            "dir" | "nfs" | "cifs" | "cephfs" | "btrfs"
        )
    }

    /// The volume id of a guest disk `vm-<vmid>-disk-<n>` in this storage's naming scheme.
    fn disk_volid(&self, vmid: u32, n: u32) -> String {
        match self.stype.as_str() {
            "dir" | "nfs" | "cifs" | "btrfs" => {
                format!("{}:{vmid}/vm-{vmid}-disk-{n}.raw", self.id)
            }
            "zfspool" => format!("{}:subvol-{vmid}-disk-{n}", self.id),
            _ => format!("{}:vm-{vmid}-disk-{n}", self.id),
        }
    }

    /// Allocates a new guest disk of `size` bytes, as `create_disks` / `alloc_image` would.
    pub(crate) fn alloc_disk(&mut self, vmid: u32, size: u64, now: u64) -> Result<String, String> {
        if !self.content.contains("rootdir") && !self.content.contains("images") {
            return Err(format!(
                "storage '{}' does not allow content type 'rootdir' (Container)",
                self.id
            ));
        }
        let n = (0..)
            .find(|n| !self.volumes.contains_key(&self.disk_volid(vmid, *n)))
            .unwrap_or(0);
        let volid = self.disk_volid(vmid, n);
        if size > self.avail() {
            return Err(match self.stype.as_str() {
                "lvm" | "lvmthin" => format!(
                    "lvcreate 'pve/vm-{vmid}-disk-{n}' error:   Volume group \"pve\" has insufficient free space ({} extents): {} required.",
                    self.avail() / (4 << 20),
                    size / (4 << 20)
                ),
                _ => format!("not enough free space ({} < {size})", self.avail()),
            });
        }
        let volume = Volume {
            volid: volid.clone(),
            content: "rootdir".to_owned(),
            size,
            vmid: Some(vmid),
            ctime: now,
        };
        self.volumes.insert(volid.clone(), volume);
        Ok(volid)
    }

    /// The `GET /nodes/{node}/storage` entry.
    pub(crate) fn status_json(&self) -> Value {
        let content: Vec<&str> = self.content.iter().map(String::as_str).collect();
        let fraction = if self.total == 0 {
            0.0
        } else {
            self.used() as f64 / self.total as f64
        };
        json!({
            "storage": self.id, "type": self.stype, "content": content.join(","),
            "active": 1, "enabled": 1, "shared": u8::from(self.shared),
            "total": self.total, "used": self.used(), "avail": self.avail(), "used_fraction": fraction,
        })
    }

    /// The `GET .../content` entry of one volume.
    pub(crate) fn volume_json(volume: &Volume) -> Value {
        let format = volume_format(&volume.volid);
        let mut v = json!({
            "volid": volume.volid, "content": volume.content, "format": format,
            "size": volume.size, "ctime": volume.ctime,
        });
        if let Some(vmid) = volume.vmid {
            v["vmid"] = json!(vmid);
            v["used"] = json!(volume.size);
        }
        v
    }
}

/// The `format` field PVE derives from a volume name.
fn volume_format(volid: &str) -> &'static str {
    let name = volid.rsplit('/').next().unwrap_or(volid);
    if name.ends_with(".tar.zst") {
        "tzst"
    } else if name.ends_with(".tar.gz") {
        "tgz"
    } else if name.ends_with(".tar.xz") {
        "txz"
    } else if name.ends_with(".iso") || name.ends_with(".img") {
        "iso"
    } else if name.ends_with(".raw") || name.starts_with("vm-") {
        "raw"
    } else if name.starts_with("subvol-") {
        "subvol"
    } else {
        "raw"
    }
}

/// The storage id of a volume id (`local-lvm:vm-100-disk-0` → `local-lvm`).
pub(crate) fn storage_of(volid: &str) -> Option<&str> {
    volid
        .split_once(':')
        .map(|(s, _)| s)
        .filter(|s| !s.is_empty() && !s.contains('/'))
}

/// `download-url` filename checks: vztmpl needs `.tar[.gz|.xz|.zst|.bz2]`, iso `.iso|.img`.
pub(crate) fn check_download_filename(content: &str, filename: &str) -> Result<(), String> {
    let ok = match content {
        "vztmpl" => [".tar", ".tar.gz", ".tar.xz", ".tar.zst", ".tar.bz2"]
            .iter()
            .any(|e| filename.ends_with(e)),
        "iso" => filename.ends_with(".iso") || filename.ends_with(".img"),
        "import" => [".ova", ".ovf", ".qcow2", ".raw", ".vmdk"]
            .iter()
            .any(|e| filename.ends_with(e)),
        _ => false,
    };
    if filename.contains('/') || filename.starts_with('.') {
        return Err("invalid filename".to_owned());
    }
    if ok {
        Ok(())
    } else {
        Err("wrong file extension".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lvmthin(total: u64) -> Storage {
        Storage {
            id: "local-lvm".to_owned(),
            stype: "lvmthin".to_owned(),
            content: ["rootdir".to_owned(), "images".to_owned()].into(),
            total,
            shared: false,
            volumes: BTreeMap::new(),
            linked: BTreeMap::new(),
            dir: None,
        }
    }

    #[test]
    fn disks_are_numbered_per_guest() {
        let mut s = lvmthin(100 << 30);
        assert_eq!(
            s.alloc_disk(100, 4 << 30, 0).as_deref(),
            Ok("local-lvm:vm-100-disk-0")
        );
        assert_eq!(
            s.alloc_disk(100, 4 << 30, 0).as_deref(),
            Ok("local-lvm:vm-100-disk-1")
        );
        assert_eq!(s.used(), 8 << 30);
    }

    #[test]
    fn allocation_beyond_capacity_fails() {
        let mut s = lvmthin(4 << 30);
        assert!(
            s.alloc_disk(100, 8 << 30, 0)
                .is_err_and(|e| e.contains("insufficient free space"))
        );
    }

    #[test]
    fn vztmpl_download_needs_a_tar_extension() {
        assert_eq!(
            check_download_filename("vztmpl", "debian.iso"),
            Err("wrong file extension".to_owned())
        );
        assert!(check_download_filename("vztmpl", "debian-12.tar.zst").is_ok());
    }
}
