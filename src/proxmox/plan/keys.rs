//! The one place the plan engine asks how a guest kind's config keys behave: PVE's value for
//! an absent key, which keys hold property strings, their canonical spelling, the bpg path a
//! user wrote, which keys only exist in the create request, and what changing one does to a
//! running guest. Containers follow `normalize`/`paths`/`effect`; VMs `qemu_keys`/`qemu`.

use super::effect::{Effect, FieldChange, Power, classify_lxc, split_fields, worst_lxc};
use super::model::{GuestKind, LiveGuest};
use super::paths::{Kind, bpg_path};
use super::qemu::{Hotplug, classify_qemu};
use super::{normalize, qemu_keys};

/// LXC keys that exist only in the create request: compared with state, never with the guest
/// (`clone` is the source a container was cloned from).
const LXC_CREATE_ONLY: &[&str] = &["ostemplate", "password", "ssh-public-keys", "pool", "clone"];
/// QEMU keys that exist only in the create request: the clone source, the template
/// conversion, the pool (set through the pools API afterwards).
const QEMU_CREATE_ONLY: &[&str] = &["clone", "template", "pool"];
/// QEMU keys PVE never shows back (`cipassword` reads as `**********`): compared with the
/// fingerprint in state, and updated in place when they change.
const QEMU_WRITE_ONLY: &[&str] = &["cipassword"];

/// PVE's value for `key` when the config does not hold it.
pub(crate) fn default_value(kind: GuestKind, key: &str) -> Option<&'static str> {
    match kind {
        GuestKind::Lxc => normalize::lxc_default(key),
        GuestKind::Qemu => qemu_keys::default(key),
    }
}

/// The field a bare leading item of `key`'s property string is stored under.
pub(crate) fn prop_key(kind: GuestKind, key: &str) -> Option<Option<&'static str>> {
    match kind {
        GuestKind::Lxc => normalize::prop_default_key(key),
        GuestKind::Qemu => qemu_keys::prop_default_key(key),
    }
}

/// The canonical form of `value`.
pub(crate) fn canonical(kind: GuestKind, key: &str, value: &str) -> String {
    match kind {
        GuestKind::Lxc => normalize::normalize(key, value),
        GuestKind::Qemu => qemu_keys::normalize(key, value),
    }
}

/// The bpg attribute path and value kind of `key` (and one of its fields).
pub(crate) fn attr_path(kind: GuestKind, key: &str, field: Option<&str>) -> (String, Kind) {
    match kind {
        GuestKind::Lxc => bpg_path(key, field),
        GuestKind::Qemu => qemu_keys::path(key, field),
    }
}

/// [`attr_path`] given the value too (a VM drive's value says whether it is a disk, the
/// cloud-init drive or a CD-ROM); `None` for a field that is no attribute of its own.
pub(crate) fn attr_path_of(
    kind: GuestKind,
    key: &str,
    field: Option<&str>,
    value: Option<&str>,
) -> Option<(String, Kind)> {
    match kind {
        GuestKind::Lxc => Some(bpg_path(key, field)),
        GuestKind::Qemu => qemu_keys::path_of(key, field, value),
    }
}

/// Keys only the create request holds; a change replaces the guest.
pub(crate) fn create_only(kind: GuestKind, key: &str) -> bool {
    match kind {
        GuestKind::Lxc => LXC_CREATE_ONLY.contains(&key),
        GuestKind::Qemu => QEMU_CREATE_ONLY.contains(&key),
    }
}

/// Keys PVE never shows back: compared with state, changed in place.
pub(crate) fn write_only(kind: GuestKind, key: &str) -> bool {
    kind == GuestKind::Qemu && QEMU_WRITE_ONLY.contains(&key)
}

/// The field that holds a NIC's MAC, which PVE generates when none is given.
pub(crate) fn mac_field(kind: GuestKind) -> &'static str {
    match kind {
        GuestKind::Lxc => "hwaddr",
        GuestKind::Qemu => "macaddr",
    }
}

fn hotplug(live: &LiveGuest) -> Hotplug {
    Hotplug::parse(live.config.get("hotplug").map(String::as_str))
}

/// The changed fields of `key` between two canonical values, each with its effect on `live`.
pub(crate) fn field_changes(
    key: &str,
    before: Option<&str>,
    after: Option<&str>,
    live: &LiveGuest,
) -> Vec<FieldChange> {
    match live.kind {
        GuestKind::Lxc => classify_lxc(key, before, after, live.power),
        GuestKind::Qemu => {
            let default_key = qemu_keys::prop_default_key(key);
            let hotplug = hotplug(live);
            split_fields(default_key, before, after)
                .into_iter()
                .map(|(field, b, a)| {
                    let (old, new) = (before.map(|_| b.as_deref()), after.map(|_| a.as_deref()));
                    let effect = qemu_field_effect(key, field.as_deref(), old, new, live, &hotplug);
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
    }
}

/// The effect of one changed field of a VM key; `before`/`after` are `None` when the whole
/// key is added or removed (and the field's old and new value otherwise).
///
/// Beyond [`classify_qemu`]'s rules: a drive on another storage is another disk (atoll does
/// not move disks, so the plan says the guest is replaced rather than promising a move it will
/// not make); a NIC added or removed leaves the others' links alone (hot-plugged with the
/// `network` feature); turning the balloon device on or off (`balloon: 0`) waits for a restart
/// (qemu-server `vmconfig_hotplug_pending` hot-applies only a new target size).
fn qemu_field_effect(
    key: &str,
    field: Option<&str>,
    before: Option<Option<&str>>,
    after: Option<Option<&str>>,
    live: &LiveGuest,
    hotplug: &Hotplug,
) -> Effect {
    let running = live.power == Power::Running;
    let moved = qemu_keys::is_drive(key)
        && field == Some("volume")
        && before.flatten().is_some()
        && !before.flatten().is_some_and(qemu_keys::is_cloud_init);
    if moved {
        return Effect::Replace;
    }
    let whole = before.is_none() || after.is_none();
    if running && whole && super::normalize::indexed(key, "net").is_some() {
        return if hotplug.has("network") {
            Effect::Live
        } else {
            Effect::Restart
        };
    }
    let off = |v: Option<Option<&str>>| matches!(v, None | Some(None | Some("0")));
    if running && key == "balloon" && (off(before) || off(after)) {
        return Effect::Restart;
    }
    classify_qemu(key, field, live.power, hotplug)
}

/// The most disruptive effect any change of `key` can have on `live` (for values not known
/// until apply, and sensitive ones).
pub(crate) fn worst(key: &str, live: &LiveGuest) -> Effect {
    match live.kind {
        GuestKind::Lxc => worst_lxc(key, live.power),
        GuestKind::Qemu if create_only(GuestKind::Qemu, key) => Effect::Replace,
        GuestKind::Qemu => classify_qemu(key, None, live.power, &hotplug(live)),
    }
}

/// The effect of a write-only key's change: what PVE does with the key, never a replace.
pub(crate) fn write_only_effect(key: &str, live: &LiveGuest) -> Effect {
    match live.power {
        Power::Stopped => Effect::Deferred,
        Power::Running => classify_qemu(key, None, live.power, &hotplug(live)),
    }
}
