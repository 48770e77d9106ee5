//! The self-host rule for HA: an HA resource whose requested state stops its guest
//! (`stopped`, `disabled`) is a stop of that guest, done by the HA manager rather than by
//! `status/stop`; for a protected guest it is refused like any other stop.

use super::ProtectedSet;
use super::rules::{describe, why};
use crate::proxmox::plan::{Blocked, GuardRule, ResourceChange, ha_stops_guest};

/// The guard's decision on a change to an HA resource.
pub(super) fn check(change: &ResourceChange, protected: &ProtectedSet) -> Option<Blocked> {
    if !ha_stops_guest(change) {
        return None;
    }
    let sid = change.object.as_ref()?.name.as_deref()?;
    let vm_id = sid.split_once(':')?.1.parse::<u32>().ok()?;
    let guest = protected.find(Some(vm_id), None, "")?;
    let reason = format!(
        "atoll refuses to stop protected guest {} through the HA manager (HA resource {sid} \
         requests a state that stops it): {}; keep the state `started`, or stop the guest by \
         hand from outside it",
        describe(guest, None),
        why(guest)
    );
    Some(Blocked {
        rule: GuardRule::Stop,
        reason,
    })
}
