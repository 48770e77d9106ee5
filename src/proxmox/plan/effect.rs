//! What a config change does to a guest, from PVE's own rules (`pve-container`
//! `vmconfig_hotplug_pending` and `update_net`; reference/proxmox.md section 3b), not from
//! the bpg provider's reboot decisions.
//!
//! A change to a **stopped** guest is written to its config at once and takes effect when the
//! guest next starts: every in-place effect is then `deferred`; `replace` stays `replace`.

use serde::{Deserialize, Serialize};

use super::normalize::{indexed, prop_default_key, volume_storage};
use super::propstr::{PropString, size_bytes};

/// The effect of one change on the guest, ordered from least to most disruptive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// Applied to the running guest now (cgroup limit, hot-plugged device, metadata).
    Live,
    /// Written to the config now, in effect only at the next start; PVE shows no pending
    /// marker (e.g. `hostname`, `mtu`); every change to a stopped guest.
    Deferred,
    /// The guest's network link is recreated (MAC or name change), re-plugged (bridge,
    /// VLAN tag, firewall, link state) or removed: connections through it drop.
    LinkReset,
    /// PVE keeps the change pending until the guest restarts; atoll restarts it.
    Restart,
    /// The guest must be destroyed and created again.
    Replace,
}

impl Effect {
    /// The name used in the JSON plan and in text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Deferred => "deferred",
            Self::LinkReset => "link-reset",
            Self::Restart => "restart",
            Self::Replace => "replace",
        }
    }
}

/// Whether the guest is running when the change is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Power {
    Running,
    Stopped,
}

/// One field-level change inside a PVE config key: `field` is `None` for plain keys and for a
/// whole property-string key being added or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub key: String,
    pub field: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    pub effect: Effect,
}

/// Keys that, changed in place, need a new guest (bpg ForceNew, or create-only in PVE).
const LXC_REPLACE_KEYS: &[&str] = &[
    "unprivileged",
    "ostemplate",
    "password",
    "ssh-public-keys",
    "pool",
    "template",
    "clone",
    "node",
    "vmid",
];

/// PVE's `$LXC_FASTPLUG_OPTIONS`: written to the config immediately, never pending.
const LXC_FASTPLUG: &[&str] = &[
    "description",
    "onboot",
    "startup",
    "protection",
    "hookscript",
    "cores",
    "tags",
    "lock",
];

/// The field-level changes between two (normalised) values of one LXC key, with their effect.
/// `before`/`after` are `None` when the key is absent (added or deleted).
pub fn classify_lxc(
    key: &str,
    before: Option<&str>,
    after: Option<&str>,
    power: Power,
) -> Vec<FieldChange> {
    split_fields(prop_default_key(key), before, after)
        .into_iter()
        .map(|(field, b, a)| {
            let effect = match lxc_replace(key, field.as_deref(), b.as_deref(), a.as_deref()) {
                true => Effect::Replace,
                false if power == Power::Stopped => Effect::Deferred,
                false => lxc_running(key, field.as_deref(), before.is_none(), after.is_none()),
            };
            FieldChange {
                key: key.to_owned(),
                field,
                before: b,
                after: a,
                effect,
            }
        })
        .collect()
}

/// The worst effect any change of `key` can have (used when the new value is unknown).
pub fn worst_lxc(key: &str, power: Power) -> Effect {
    if LXC_REPLACE_KEYS.contains(&key) || key == "rootfs" || indexed(key, "mp").is_some() {
        Effect::Replace
    } else if power == Power::Stopped {
        Effect::Deferred
    } else if indexed(key, "net").is_some() {
        Effect::LinkReset
    } else {
        lxc_running(key, None, false, false).max(lxc_running(key, Some(""), false, false))
    }
}

type Split = (Option<String>, Option<String>, Option<String>);

/// The fields that differ between two values of a key whose property string has
/// `prop_key` (see `normalize::prop_default_key`); the whole value when it is not a property
/// string, or one side is absent.
pub(crate) fn split_fields(
    prop_key: Option<Option<&str>>,
    before: Option<&str>,
    after: Option<&str>,
) -> Vec<Split> {
    let whole = || vec![(None, before.map(str::to_owned), after.map(str::to_owned))];
    let Some(default_key) = prop_key else {
        return whole();
    };
    let (Some(b), Some(a)) = (before, after) else {
        return whole();
    };
    let (b, a) = (
        PropString::parse(b, default_key),
        PropString::parse(a, default_key),
    );
    let mut names: Vec<&String> = b.fields.keys().chain(a.fields.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|name| b.fields.get(*name) != a.fields.get(*name))
        .map(|name| {
            (
                Some(name.clone()),
                b.fields.get(name).cloned(),
                a.fields.get(name).cloned(),
            )
        })
        .collect()
}

fn lxc_replace(key: &str, field: Option<&str>, before: Option<&str>, after: Option<&str>) -> bool {
    if LXC_REPLACE_KEYS.contains(&key) {
        return true;
    }
    let is_volume = key == "rootfs" || indexed(key, "mp").is_some();
    match (is_volume, field) {
        (true, Some("volume")) => match (before, after) {
            // rootfs may not move storage in place; a mount point given another volume keeps its
            // place and gets that volume when the change is applied (pve-container
            // `apply_pending_mountpoint`: a new `storage:size` is allocated, the old volume kept
            // as `unusedN`), which for a running container waits for its restart
            (Some(b), Some(a)) => key == "rootfs" && volume_storage(b) != volume_storage(a),
            _ => true,
        },
        (true, Some("size")) => match (before.and_then(size_bytes), after.and_then(size_bytes)) {
            (Some(b), Some(a)) => a < b,
            (Some(_), None) => false,
            _ => false,
        },
        (true, None) => key == "rootfs",
        _ => false,
    }
}

/// PVE's behaviour for a running container (reference/proxmox.md section 3b).
fn lxc_running(key: &str, field: Option<&str>, added: bool, deleted: bool) -> Effect {
    if LXC_FASTPLUG.contains(&key) {
        return Effect::Live;
    }
    if indexed(key, "net").is_some() {
        return match (added, deleted, field.unwrap_or("")) {
            // a new NIC is hot-plugged; removing one takes its link away
            (true, _, _) => Effect::Live,
            (_, true, _) => Effect::LinkReset,
            (_, _, "hwaddr" | "name" | "bridge" | "tag" | "firewall" | "link_down") => {
                Effect::LinkReset
            }
            (_, _, "rate" | "ip" | "gw" | "ip6" | "gw6") => Effect::Live,
            // mtu, host-managed, trunks: stored, not applied to the live link
            _ => Effect::Deferred,
        };
    }
    if indexed(key, "mp").is_some() || key == "rootfs" {
        return match (added, field) {
            (true, _) => Effect::Live,
            // growing a volume goes through `PUT resize`, which works online
            (false, Some("size")) if !deleted => Effect::Live,
            _ => Effect::Restart,
        };
    }
    if indexed(key, "dev").is_some() {
        return if added { Effect::Live } else { Effect::Restart };
    }
    if indexed(key, "unused").is_some() {
        return if deleted {
            Effect::Live
        } else {
            Effect::Restart
        };
    }
    match key {
        "hostname" => Effect::Deferred,
        "memory" | "swap" | "cpulimit" | "cpuunits" => Effect::Live,
        _ => Effect::Restart,
    }
}
