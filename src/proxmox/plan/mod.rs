//! `proxmox::plan` owns the pure plan engine: the effect of each config change on a guest
//! (from PVE's hotplug rules), the diff of desired resources against atoll's state and the
//! live inventory, normalisation so applied values compare equal, the apply order, and what
//! the refresh saw (so apply can tell the cluster changed since the plan).
//! It must not do I/O, read the clock, or format user-facing text (that is `render`'s job).

mod attrs;
mod change;
mod cluster;
mod diff;
mod download;
mod effect;
mod keys;
mod model;
mod network;
mod normalize;
mod notes;
mod object;
mod observed;
mod order;
mod paths;
mod propstr;
mod qemu;
mod qemu_keys;
mod sdn;

pub use change::{
    Action, AttributeChange, Blocked, Drift, GuardRule, Importing, OutsideDrift, PendingDrift,
    Plan, ResourceChange, Summary,
};
pub(crate) use cluster::stops_guest as ha_stops_guest;
pub use diff::{PlanError, PlanErrors, PlanInput, plan};
pub use effect::{Effect, FieldChange, Power, classify_lxc, worst_lxc};
pub use model::{
    Desired, DesiredDownload, DesiredGuest, DesiredObject, DesiredValue, GuestKind, Inventory,
    Lifecycle, LiveGuest, LiveObject, ObjectEntry, PendingEntry, PlanSource, Secret, StateEntry,
    StateValue, VolumeSource, config_from_json, pending_from_json,
};
pub(crate) use normalize::{allocation, volume_storage};
pub use observed::{
    Difference, GuestDiff, ObjectDiff, ObservedGuest, ObservedLive, ObservedObject, Refreshed,
    differences, object_differences, observe, observe_again, observe_ids, state_fingerprint,
};
pub use order::{Step, StepOp, steps};
pub use qemu::{Hotplug, classify_qemu, qemu_mac};
pub use sdn::deleted_bridges as sdn_deleted_bridges;

/// Whether `desired`, the value the configuration asks for `key`, differs from the guest's
/// `live` value, as the plan compares them (PVE's defaults, spellings and allocated volumes
/// taken into account): what a clone's first config update needs to send.
pub fn differs(kind: GuestKind, key: &str, desired: &str, live: Option<&str>) -> bool {
    let live = live.or_else(|| keys::default_value(kind, key));
    let want = normalize::normalize_desired(kind, key, desired, live);
    live.map(|raw| keys::canonical(kind, key, raw)) != Some(want)
}
