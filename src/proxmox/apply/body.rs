//! The request bodies apply sends: the create options of a new container, and the
//! `PUT config` change (plus any root disk growth) that brings an existing one to the desired
//! config, keeping what PVE must not regenerate (the live MAC, allocated volumes).

use std::collections::{BTreeMap, BTreeSet};

use secrecy::SecretString;

use crate::proxmox::client::{ConfigChange, GuestConfig};
use crate::proxmox::plan::{DesiredGuest, DesiredValue};

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

/// The options of `POST /nodes/{node}/lxc` (without `vmid`) and the root password.
pub(super) fn create_options(
    guest: &DesiredGuest,
) -> Result<(BTreeMap<String, String>, Option<SecretString>), StillUnknown> {
    let mut options = BTreeMap::new();
    let mut password = None;
    for (key, value) in &guest.config {
        let text = match value {
            DesiredValue::Known(text) => text.clone(),
            DesiredValue::Sensitive(secret) => secret.expose().to_owned(),
            DesiredValue::Unknown => return Err(StillUnknown { key: key.clone() }),
        };
        if text.is_empty() {
            continue;
        }
        if key == "password" {
            password = Some(SecretString::from(text));
        } else {
            options.insert(key.clone(), text);
        }
    }
    Ok((options, password))
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

/// What an update sends: the config change and, if the root disk grows, its new size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct UpdateBody {
    pub(super) change: ConfigChange,
    /// `rootfs` grows to this size (`12G`) through `PUT .../resize`.
    pub(super) grow_rootfs: Option<String>,
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
        if CREATE_ONLY.contains(&key.as_str())
            || matches!(key.as_str(), "started" | "node" | "vmid")
        {
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
            Some(want) if key == "rootfs" => rootfs(&mut body, &want, have.as_deref()),
            Some(want) => {
                let value = keep_live_parts(key, &want, have.as_deref());
                body.change.set.insert(key.clone(), value);
            }
        }
    }
    Ok(body)
}

/// A `netN` keeps its live MAC unless one is set; an existing `mpN` keeps its volume.
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
    if key.starts_with("mp") {
        let mut fields = fields(want, "volume");
        let live = self::fields(have, "volume");
        if let Some(volume) = live.get("volume") {
            fields.insert("volume".to_owned(), volume.clone());
        }
        if let Some(size) = live.get("size") {
            fields.insert("size".to_owned(), size.clone());
        }
        return print(Some("volume"), &fields);
    }
    want.to_owned()
}

/// Root disk: growth through `resize`, option changes on the live volume.
fn rootfs(body: &mut UpdateBody, want: &str, have: Option<&str>) {
    let want_fields = fields(want, "volume");
    let Some(have) = have else { return };
    let have_fields = fields(have, "volume");
    let want_gb = want_fields
        .get("volume")
        .and_then(|v| v.split_once(':'))
        .and_then(|(_, gb)| gb.parse::<f64>().ok());
    let have_bytes = have_fields.get("size").and_then(|s| size_bytes(s));
    if let (Some(gb), Some(bytes)) = (want_gb, have_bytes)
        && (gb * f64::from(1u32 << 30)) as u64 > bytes
    {
        body.grow_rootfs = Some(format!("{}G", tfconfig::value::format_number(gb)));
    }
    let options = |f: &BTreeMap<String, String>| {
        f.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "volume" | "size"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let normalise = |f: BTreeMap<String, String>| -> BTreeMap<String, String> {
        f.into_iter().filter(|(_, v)| v != "0").collect()
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
            .insert("rootfs".to_owned(), print(Some("volume"), &fields));
    }
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
        assert_eq!(body.grow_rootfs.as_deref(), Some("12G"));
        assert!(body.change.set.is_empty());
    }

    #[test]
    fn create_keeps_the_password_apart_and_skips_empty_values() {
        let mut desired = guest(&[("hostname", "a"), ("tags", "")]);
        desired.config.insert(
            "password".to_owned(),
            DesiredValue::Sensitive(crate::proxmox::plan::Secret::new("pw-secret")),
        );
        let (options, password) = create_options(&desired).expect("options");
        assert_eq!(options.keys().collect::<Vec<_>>(), vec!["hostname"]);
        assert!(password.is_some());
    }
}
