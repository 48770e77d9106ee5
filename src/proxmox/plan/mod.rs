//! `proxmox::plan` owns the pure plan engine: the effect of each config change on a guest
//! (from PVE's hotplug rules), the diff of desired resources against atoll's state and the
//! live inventory, normalisation so applied values compare equal, the apply order, and what
//! the refresh saw (so apply can tell the cluster changed since the plan).
//! It must not do I/O, read the clock, or format user-facing text (that is `render`'s job).

mod attrs;
mod change;
mod diff;
mod download;
mod effect;
mod model;
mod normalize;
mod observed;
mod order;
mod paths;
mod propstr;
mod qemu;

pub use change::{
    Action, AttributeChange, Blocked, Drift, GuardRule, OutsideDrift, PendingDrift, Plan,
    ResourceChange, Summary,
};
pub use diff::{PlanError, PlanErrors, PlanInput, plan};
pub use effect::{Effect, FieldChange, Power, classify_lxc, worst_lxc};
pub use model::{
    Desired, DesiredDownload, DesiredGuest, DesiredValue, GuestKind, Inventory, Lifecycle,
    LiveGuest, PendingEntry, PlanSource, Secret, StateEntry, StateValue, config_from_json,
    pending_from_json,
};
pub use observed::{
    Difference, GuestDiff, ObservedGuest, ObservedLive, Refreshed, differences, observe,
    observe_ids, state_fingerprint,
};
pub use order::{Step, StepOp, steps};
pub use qemu::{Hotplug, classify_qemu, qemu_mac};
