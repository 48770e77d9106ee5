//! QEMU drives as `PVE::QemuServer::Drive` sees them: which keys are drives, the drive
//! property string (`file` as default key), CD-ROM and cloud-init detection, the
//! `STORAGE:SIZE` new-disk syntax, and `create_disks`' allocation of new volumes.
//! It must not decide hot or pending, nor touch any guest but the one it allocates for.

use std::collections::BTreeMap;

use super::propstr::{self, Props};
use super::storage::Storage;

/// `is_valid_drivename`: ide0-3, sata0-5, scsi0-30, virtio0-15, efidisk0, tpmstate0.
pub(crate) fn is_drive_key(key: &str) -> bool {
    let bus = |prefix: &str, count: u32| {
        key.strip_prefix(prefix)
            .filter(|n| !n.is_empty() && (n.len() == 1 || !n.starts_with('0')))
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n < count)
    };
    bus("ide", 4)
        || bus("sata", 6)
        || bus("scsi", 31)
        || bus("virtio", 16)
        || key == "efidisk0"
        || key == "tpmstate0"
}

/// `parse_drive`: the drive's options with `file` as the default key.
pub(crate) fn parse(value: &str) -> Result<Props, String> {
    propstr::parse(value, Some("file"))
}

/// `print_drive`: `file` first, the other options sorted.
pub(crate) fn print(props: &Props) -> String {
    propstr::print(props, Some("file"), &[])
}

/// `drive_is_cdrom`.
pub(crate) fn is_cdrom(props: &Props) -> bool {
    props.get("media").is_some_and(|m| m == "cdrom")
}

/// `drive_is_cloudinit`: the volume is `[vm-<id>-]cloudinit[.fmt]`.
pub(crate) fn is_cloudinit(props: &Props) -> bool {
    let file = props.get("file").map_or("", String::as_str);
    let name = file.rsplit([':', '/']).next().unwrap_or_default();
    let stem = name.split('.').next().unwrap_or_default();
    file.contains([':', '/'])
        && (stem == "cloudinit"
            || stem
                .strip_prefix("vm-")
                .and_then(|r| r.strip_suffix("-cloudinit"))
                .is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_digit())))
}

/// `$NEW_DISK_RE`: `[STORAGE:]SIZE_GiB` → (storage, GiB).
pub(crate) fn new_disk(file: &str) -> Option<(Option<&str>, f64)> {
    let (sid, size) = match file.split_once(':') {
        Some((s, n)) if !s.is_empty() && !s.contains(['/', ' ']) => (Some(s), n),
        Some(_) => return None,
        None => (None, file),
    };
    let ok = !size.is_empty()
        && size.chars().all(|c| c.is_ascii_digit() || c == '.')
        && !size.starts_with('.');
    ok.then(|| size.parse().ok().map(|n| (sid, n))).flatten()
}

/// Volumes of a VM's current and pending drives (not CD-ROMs), with their config keys.
pub(crate) fn volumes(keys: &BTreeMap<String, String>) -> Vec<(String, String)> {
    keys.iter()
        .filter(|(k, _)| is_drive_key(k) || k.starts_with("unused"))
        .filter_map(|(k, v)| {
            let props = parse(v).ok()?;
            let file = props.get("file")?.clone();
            (!is_cdrom(&props) || is_cloudinit(&props)).then(|| (k.clone(), file))
        })
        .collect()
}

/// What kind of volume `create_disks` makes for a drive key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NewVolume {
    Disk(u64),
    Efi { four_m: bool },
    Tpm,
    CloudInit,
}

impl Storage {
    /// The volume id of a VM image named `name` (`vm-100-disk-0`) in this storage's layout.
    pub(crate) fn image_volid(&self, vmid: u32, name: &str, format: &str) -> String {
        if self.is_file_based() {
            format!("{}:{vmid}/{name}.{format}", self.id)
        } else {
            format!("{}:{name}", self.id)
        }
    }

    /// `find_free_diskname`: the first `vm-<id>-disk-<k>` not taken (nor as `base-`).
    fn free_disk_name(&self, vmid: u32) -> String {
        let used = |k: u32| {
            let (vm, base) = (
                format!("vm-{vmid}-disk-{k}"),
                format!("base-{vmid}-disk-{k}"),
            );
            self.volumes.keys().any(|v| {
                v.split([':', '/'])
                    .map(|seg| seg.split('.').next().unwrap_or_default())
                    .any(|stem| stem == vm || stem == base)
            })
        };
        let k = (0..).find(|k| !used(*k)).unwrap_or(0);
        format!("vm-{vmid}-disk-{k}")
    }

    /// `vdisk_alloc` for a VM: a new image of `size` bytes (`name` for cloud-init drives).
    pub(crate) fn alloc_image(
        &mut self,
        vmid: u32,
        size: u64,
        name: Option<&str>,
        now: u64,
    ) -> Result<String, String> {
        let name = name.map_or_else(|| self.free_disk_name(vmid), str::to_owned);
        let format = if self.is_file_based() && name.ends_with("cloudinit") {
            "qcow2"
        } else {
            "raw"
        };
        let volid = self.image_volid(vmid, &name, format);
        // LVM allocates whole 4 MiB extents, and `volume_size_info` reports the LV size
        let size = if matches!(self.stype.as_str(), "lvm" | "lvmthin") {
            size.div_ceil(4 << 20) * (4 << 20)
        } else {
            size
        };
        if size > self.avail() {
            return Err(match self.stype.as_str() {
                "lvm" | "lvmthin" => format!(
                    "lvcreate 'pve/{name}' error:   Volume group \"pve\" has insufficient free space ({} extents): {} required.",
                    self.avail() / (4 << 20),
                    size / (4 << 20)
                ),
                _ => format!("not enough free space ({} < {size})", self.avail()),
            });
        }
        let volume = super::storage::Volume {
            volid: volid.clone(),
            content: "images".to_owned(),
            size,
            vmid: Some(vmid),
            ctime: now,
        };
        self.volumes.insert(volid.clone(), volume);
        Ok(volid)
    }

    /// `vdisk_create_base`: renames `vm-<id>-disk-<k>` to `base-<id>-disk-<k>`.
    pub(crate) fn create_base(&mut self, volid: &str) -> Option<String> {
        let cut = volid.rfind(['/', ':']).map_or(0, |i| i + 1);
        let (dir, name) = volid.split_at(cut);
        let base = format!(
            "{dir}{}",
            name.strip_prefix("vm-").map(|r| format!("base-{r}"))?
        );
        let mut volume = self.volumes.remove(volid)?;
        volume.volid.clone_from(&base);
        self.volumes.insert(base.clone(), volume);
        Some(base)
    }

    /// `vdisk_clone` (linked clone) of a base image for `newid`, as the plugin names it:
    /// LVM-thin `vm-<new>-disk-<k>`, ZFS/RBD `base-<src>-disk-<k>/vm-<new>-disk-<k>`,
    /// directories `<src>/base-<src>-disk-<k>.raw/<new>/vm-<new>-disk-<k>.qcow2`.
    pub(crate) fn clone_image(
        &mut self,
        base: &str,
        newid: u32,
        now: u64,
    ) -> Result<String, String> {
        let size = self
            .volumes
            .get(base)
            .map(|v| v.size)
            .ok_or_else(|| format!("volume '{base}' does not exist"))?;
        let name = self.free_disk_name(newid);
        let base_name = base.split_once(':').map_or(base, |(_, n)| n);
        let volid = match self.stype.as_str() {
            "lvmthin" => format!("{}:{name}", self.id),
            s if self.is_file_based() || s == "dir" => {
                format!("{}:{base_name}/{newid}/{name}.qcow2", self.id)
            }
            _ => format!("{}:{base_name}/{name}", self.id),
        };
        let volume = super::storage::Volume {
            volid: volid.clone(),
            content: "images".to_owned(),
            size,
            vmid: Some(newid),
            ctime: now,
        };
        self.volumes.insert(volid.clone(), volume);
        self.linked.insert(volid.clone(), base.to_owned());
        Ok(volid)
    }

    /// `volume_is_base_and_used`: a linked clone of `base` still exists.
    pub(crate) fn base_in_use(&self, base: &str) -> bool {
        self.linked
            .iter()
            .any(|(clone, b)| b == base && self.volumes.contains_key(clone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drive_keys_follow_the_bus_limits() {
        assert!(is_drive_key("scsi30") && !is_drive_key("scsi31"));
        assert!(is_drive_key("ide3") && !is_drive_key("ide4"));
        assert!(is_drive_key("efidisk0") && !is_drive_key("efidisk1"));
    }

    #[test]
    fn new_disk_syntax_is_storage_colon_gib() {
        assert_eq!(new_disk("local-lvm:32"), Some((Some("local-lvm"), 32.0)));
        assert_eq!(new_disk("8"), Some((None, 8.0)));
        assert_eq!(new_disk("local-lvm:vm-100-disk-0"), None);
    }

    #[test]
    fn cloudinit_volumes_are_recognised() {
        let p = parse("local-lvm:vm-100-cloudinit,media=cdrom").unwrap_or_default();
        assert!(is_cloudinit(&p));
        let p = parse("local-lvm:cloudinit").unwrap_or_default();
        assert!(is_cloudinit(&p));
        let p = parse("local:iso/debian.iso,media=cdrom").unwrap_or_default();
        assert!(!is_cloudinit(&p));
    }
}
