//! The request bodies apply sends: the create options of a new container, and the
//! `PUT config` change (plus any root disk growth) that brings an existing one to the desired
//! config, keeping what PVE must not regenerate (the live MAC, allocated volumes).

use std::collections::{BTreeMap, BTreeSet};

use secrecy::SecretString;

use crate::proxmox::client::{ConfigChange, GuestConfig};
use crate::proxmox::plan::{DesiredGuest, DesiredValue, GuestKind, allocation, volume_storage};

/// Keys that are sent only at create time.
pub(super) const CREATE_ONLY: &[&str] = &[
    "ostemplate",
    "password",
    "ssh-public-keys",
    "pool",
    "storage",
    "unprivileged",
];

/// Why a body could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{key} is still unknown at apply time; make a new plan once the value it depends on exists"
)]
pub struct StillUnknown {
    pub key: String,
}

/// What a create sends: the options of `POST /nodes/{node}/{lxc|qemu}` (without `vmid`),
/// the guest's password apart (a container's root password, a VM's cloud-init password), and
/// the disks to grow once created (a VM disk imported from an image has the image's size).
#[derive(Debug, Default)]
pub(super) struct CreateBody {
    pub(super) options: BTreeMap<String, String>,
    pub(super) password: Option<SecretString>,
    pub(super) grow: Vec<(String, String)>,
}

/// Keys of a guest's desired config that are not create options: done by other calls (the
/// clone request, the conversion to a template after create).
const NOT_OPTIONS: &[&str] = &["clone", "template"];

pub(super) fn create_options(guest: &DesiredGuest) -> Result<CreateBody, StillUnknown> {
    let mut body = CreateBody::default();
    let password_key = match guest.kind {
        GuestKind::Lxc => "password",
        GuestKind::Qemu => "cipassword",
    };
    for (key, value) in &guest.config {
        let text = match value {
            DesiredValue::Known(text) => text.clone(),
            DesiredValue::Sensitive(secret) => secret.expose().to_owned(),
            DesiredValue::Unknown => return Err(StillUnknown { key: key.clone() }),
        };
        if text.is_empty() || NOT_OPTIONS.contains(&key.as_str()) {
            continue;
        }
        if key == password_key {
            body.password = Some(SecretString::from(text));
        } else if let Some((imported, size)) = imported_drive(&text) {
            // PVE sizes an imported disk like its image: `STORAGE:0,import-from=...`
            body.options.insert(key.clone(), imported);
            body.grow.push((key.clone(), size));
        } else {
            body.options.insert(key.clone(), text);
        }
    }
    Ok(body)
}

/// `local-lvm:20,import-from=local:import/x.qcow2,...` -> (`local-lvm:0,import-from=...`, `20G`).
fn imported_drive(text: &str) -> Option<(String, String)> {
    let fields = fields(text, "volume");
    fields.get("import-from")?;
    let (storage, size) = fields.get("volume")?.split_once(':')?;
    let gigabytes: f64 = size.parse().ok()?;
    let mut imported = fields.clone();
    imported.insert("volume".to_owned(), format!("{storage}:0"));
    let size = format!("{}G", tfconfig::value::format_number(gigabytes));
    Some((print(Some("volume"), &imported), size))
}

/// Fields of a property string; a bare first item goes under `first`.
fn fields(text: &str, first: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (i, item) in text.split(',').map(str::trim).enumerate() {
        match item.split_once('=') {
            Some((k, v)) => {
                out.insert(k.to_owned(), v.to_owned());
            }
            None if i == 0 && !item.is_empty() => {
                out.insert(first.to_owned(), item.to_owned());
            }
            None => {}
        }
    }
    out
}

/// Prints fields back; `bare` is printed first as a bare value (`volume` of a disk).
fn print(bare: Option<&str>, fields: &BTreeMap<String, String>) -> String {
    let mut items: Vec<String> = bare
        .and_then(|first| fields.get(first).cloned())
        .into_iter()
        .collect();
    items.extend(
        fields
            .iter()
            .filter(|(k, _)| Some(k.as_str()) != bare)
            .map(|(k, v)| format!("{k}={v}")),
    );
    items.join(",")
}

/// `8G`, `512M`, `1T` or bytes -> bytes.
pub(super) fn size_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, scale) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1u64 << 10),
        'M' => (&text[..text.len() - 1], 1 << 20),
        'G' => (&text[..text.len() - 1], 1 << 30),
        'T' => (&text[..text.len() - 1], 1 << 40),
        _ => (text, 1),
    };
    let value: f64 = number.parse().ok()?;
    Some((value * scale as f64) as u64)
}

/// What an update sends: the config change and the disks that grow, with their new sizes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct UpdateBody {
    pub(super) change: ConfigChange,
    /// Disks (`rootfs`, `scsi0`) that grow to these sizes (`12G`) through `PUT .../resize`.
    pub(super) grow: Vec<(String, String)>,
}

/// Whether `key` is a VM drive (`scsi0`, `virtio1`, `sata0`, `ide0`, `efidisk0`, `tpmstate0`).
fn is_qemu_drive(key: &str) -> bool {
    ["scsi", "virtio", "sata", "ide"].iter().any(|p| {
        key.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }) || key == "efidisk0"
        || key == "tpmstate0"
}

/// The change for the keys the plan says differ (`keys`), against the guest's config.
pub(super) fn update_body(
    guest: &DesiredGuest,
    keys: &BTreeSet<String>,
    live: &GuestConfig,
) -> Result<UpdateBody, StillUnknown> {
    let mut body = UpdateBody::default();
    body.change.digest = live.digest.clone();
    for key in keys {
        let create_only = NOT_OPTIONS.contains(&key.as_str())
            || match guest.kind {
                GuestKind::Lxc => CREATE_ONLY.contains(&key.as_str()),
                GuestKind::Qemu => key == "pool",
            };
        if create_only || matches!(key.as_str(), "started" | "node" | "vmid") {
            continue;
        }
        let want = match guest.config.get(key) {
            None => None,
            Some(DesiredValue::Known(text)) => Some(text.clone()),
            Some(DesiredValue::Sensitive(secret)) => Some(secret.expose().to_owned()),
            Some(DesiredValue::Unknown) => return Err(StillUnknown { key: key.clone() }),
        };
        let have = live.get(key);
        match want.filter(|w| !w.is_empty()) {
            None if have.is_some() => body.change.delete.push(key.clone()),
            None => {}
            Some(want) if key == "rootfs" || (is_mount_point(key) && have.is_some()) => {
                drive(&mut body, key, &want, have.as_deref());
            }
            Some(want) if guest.kind == GuestKind::Qemu && is_qemu_drive(key) && have.is_some() => {
                drive(&mut body, key, &want, have.as_deref());
            }
            Some(want) if guest.kind == GuestKind::Qemu && key.starts_with("net") => {
                let value = keep_qemu_mac(&want, have.as_deref());
                body.change.set.insert(key.clone(), value);
            }
            Some(want) => {
                let value = keep_live_parts(key, &want, have.as_deref());
                body.change.set.insert(key.clone(), value);
            }
        }
    }
    Ok(body)
}

/// Whether `key` is a container mount point (`mp0` .. `mp255`).
fn is_mount_point(key: &str) -> bool {
    key.strip_prefix("mp")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A `netN` keeps its live MAC unless one is set (an existing `mpN` goes through [`drive`]).
fn keep_live_parts(key: &str, want: &str, have: Option<&str>) -> String {
    let Some(have) = have else {
        return want.to_owned();
    };
    if key.starts_with("net") {
        let mut fields = fields(want, "name");
        if !fields.contains_key("hwaddr")
            && let Some(mac) = self::fields(have, "name").remove("hwaddr")
        {
            fields.insert("hwaddr".to_owned(), mac);
        }
        return print(None, &fields);
    }
    want.to_owned()
}

/// A VM NIC written as a bare model (`virtio,bridge=vmbr0`) keeps the MAC it has, as
/// `virtio=BC:24:11:..`: PVE would otherwise generate a new one.
fn keep_qemu_mac(want: &str, have: Option<&str>) -> String {
    const MODELS: &[&str] = &["virtio", "e1000", "e1000e", "rtl8139", "vmxnet3"];
    let Some((first, rest)) = want.split_once(',').or(Some((want, ""))) else {
        return want.to_owned();
    };
    if !MODELS.contains(&first) {
        return want.to_owned();
    }
    let live_mac = have.and_then(|have| {
        have.split(',').find_map(|item| {
            let (k, v) = item.split_once('=')?;
            (MODELS.contains(&k) || k == "macaddr").then(|| v.to_owned())
        })
    });
    match live_mac {
        Some(mac) if rest.is_empty() => format!("{first}={mac}"),
        Some(mac) => format!("{first}={mac},{rest}"),
        None => want.to_owned(),
    }
}

/// A disk that exists (a container's root disk or mount point, a VM drive): growth through
/// `resize`, option changes written on the live volume.
fn drive(body: &mut UpdateBody, key: &str, want: &str, have: Option<&str>) {
    let want_fields = fields(want, "volume");
    let Some(have) = have else { return };
    let have_fields = fields(have, "volume");
    if is_mount_point(key) && another_volume(&want_fields, &have_fields) {
        // the whole new value: PVE allocates it and keeps the old volume as `unusedN`
        body.change.set.insert(key.to_owned(), want.to_owned());
        return;
    }
    let have_bytes = have_fields.get("size").and_then(|s| size_bytes(s));
    if let (Some((size, bytes)), Some(have_bytes)) = (wanted_size(&want_fields), have_bytes)
        && bytes > have_bytes
    {
        body.grow.push((key.to_owned(), size));
    }
    let options = |f: &BTreeMap<String, String>| {
        f.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "volume" | "size" | "import-from" | "format"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let normalise = |f: BTreeMap<String, String>| -> BTreeMap<String, String> {
        // off flags equal absent ones, except `replicate`, which is on unless written off
        f.into_iter()
            .filter(|(k, v)| if k == "replicate" { v != "1" } else { v != "0" })
            .collect()
    };
    if normalise(options(&want_fields)) != normalise(options(&have_fields)) {
        let mut fields = options(&want_fields);
        for key in ["volume", "size"] {
            if let Some(value) = have_fields.get(key) {
                fields.insert(key.to_owned(), value.clone());
            }
        }
        body.change
            .set
            .insert(key.to_owned(), print(Some("volume"), &fields));
    }
}

/// Whether a mount point is given a volume other than the one it has: an allocation on another
/// storage (`fast:8` for `local-lvm:vm-100-disk-1`), or another volume or directory. An
/// allocation on the volume's own storage is that volume.
fn another_volume(want: &BTreeMap<String, String>, have: &BTreeMap<String, String>) -> bool {
    let (Some(want), Some(have)) = (want.get("volume"), have.get("volume")) else {
        return false;
    };
    match allocation(want) {
        Some((storage, _)) => volume_storage(have) != Some(storage),
        None => want != have,
    }
}

/// The size a disk is asked to have, as `resize` takes it (`12G`) and in bytes: from an
/// allocation (`local-lvm:12`), else from a `size` field (an existing volume, `...,size=12G`).
fn wanted_size(fields: &BTreeMap<String, String>) -> Option<(String, u64)> {
    let allocated = fields
        .get("volume")
        .and_then(|v| v.split_once(':'))
        .and_then(|(_, gb)| gb.parse::<f64>().ok());
    if let Some(gb) = allocated {
        let size = format!("{}G", tfconfig::value::format_number(gb));
        return Some((size, (gb * f64::from(1u32 << 30)) as u64));
    }
    let size = fields.get("size")?;
    Some((size.clone(), size_bytes(size)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::plan::{GuestKind, Lifecycle};

    fn guest(config: &[(&str, &str)]) -> DesiredGuest {
        DesiredGuest {
            address: "ct".to_owned(),
            resource_type: "proxmox_virtual_environment_container".to_owned(),
            kind: GuestKind::Lxc,
            node: "pve".to_owned(),
            vm_id: Some(100),
            config: config
                .iter()
                .map(|(k, v)| ((*k).to_owned(), DesiredValue::Known((*v).to_owned())))
                .collect(),
            started: true,
            lifecycle: Lifecycle::default(),
            uses: Vec::new(),
        }
    }

    fn live(pairs: &[(&str, &str)]) -> GuestConfig {
        GuestConfig {
            digest: Some("d1".to_owned()),
            values: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), serde_json::json!(v)))
                .collect(),
        }
    }

    fn keys(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|k| (*k).to_owned()).collect()
    }

    #[test]
    fn net_update_keeps_the_live_mac_and_sends_the_digest() {
        let desired = guest(&[("net0", "name=eth0,bridge=vmbr1")]);
        let have = live(&[("net0", "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01")]);
        let body = update_body(&desired, &keys(&["net0"]), &have).expect("body");
        assert_eq!(
            body.change.set["net0"],
            "bridge=vmbr1,hwaddr=BC:24:11:00:00:01,name=eth0"
        );
        assert_eq!(body.change.digest.as_deref(), Some("d1"));
    }

    #[test]
    fn removed_and_emptied_keys_are_deleted() {
        let desired = guest(&[("tags", "")]);
        let have = live(&[("tags", "a"), ("nameserver", "1.1.1.1")]);
        let body = update_body(&desired, &keys(&["tags", "nameserver"]), &have).expect("body");
        assert_eq!(body.change.delete, vec!["nameserver", "tags"]);
        assert!(body.change.set.is_empty());
    }

    #[test]
    fn larger_root_disk_is_a_resize_not_a_config_write() {
        let desired = guest(&[("rootfs", "local-lvm:12")]);
        let have = live(&[("rootfs", "local-lvm:vm-100-disk-0,size=8G")]);
        let body = update_body(&desired, &keys(&["rootfs"]), &have).expect("body");
        assert_eq!(body.grow, [("rootfs".to_owned(), "12G".to_owned())]);
        assert!(body.change.set.is_empty());
    }

    #[test]
    fn larger_mount_point_is_a_resize_keeping_the_live_volume() {
        let desired = guest(&[("mp0", "local-lvm:3,mp=/mnt/data,backup=1")]);
        let have = live(&[("mp0", "local-lvm:vm-100-disk-1,mp=/mnt/data,size=1G")]);
        let body = update_body(&desired, &keys(&["mp0"]), &have).expect("body");
        assert_eq!(body.grow, [("mp0".to_owned(), "3G".to_owned())]);
        assert_eq!(
            body.change.set["mp0"],
            "local-lvm:vm-100-disk-1,backup=1,mp=/mnt/data,size=1G"
        );
    }

    #[test]
    fn create_keeps_the_password_apart_and_skips_empty_values() {
        let mut desired = guest(&[("hostname", "a"), ("tags", "")]);
        desired.config.insert(
            "password".to_owned(),
            DesiredValue::Sensitive(crate::proxmox::plan::Secret::new("pw-secret")),
        );
        let body = create_options(&desired).expect("options");
        assert_eq!(body.options.keys().collect::<Vec<_>>(), vec!["hostname"]);
        assert!(body.password.is_some());
    }

    #[test]
    fn a_vm_disk_imported_from_an_image_is_created_at_the_images_size_then_grown() {
        let mut desired = guest(&[(
            "scsi0",
            "local-lvm:20,import-from=local:import/noble.qcow2,iothread=1",
        )]);
        desired.kind = GuestKind::Qemu;
        desired.config.insert(
            "clone".to_owned(),
            DesiredValue::Known("vmid=9000".to_owned()),
        );
        let body = create_options(&desired).expect("options");
        assert_eq!(
            body.options["scsi0"],
            "local-lvm:0,import-from=local:import/noble.qcow2,iothread=1"
        );
        assert_eq!(body.grow, [("scsi0".to_owned(), "20G".to_owned())]);
        assert!(!body.options.contains_key("clone"));
    }

    #[test]
    fn a_vm_nic_keeps_its_mac() {
        assert_eq!(
            keep_qemu_mac(
                "virtio,bridge=vmbr1",
                Some("virtio=BC:24:11:00:00:01,bridge=vmbr0")
            ),
            "virtio=BC:24:11:00:00:01,bridge=vmbr1"
        );
        assert_eq!(
            keep_qemu_mac("e1000=AA:BB:CC:DD:EE:FF", None),
            "e1000=AA:BB:CC:DD:EE:FF"
        );
    }
}
