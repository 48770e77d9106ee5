//! The self-host rule for SDN: applying a change to a vnet (its own, its zone's or one of its
//! subnets) regenerates the vnet's bridge on every node, which re-plugs the links of the
//! guests on it; the plan marks that `link-reset`. Such a change is refused when a protected
//! guest has an interface on one of those bridges. A new zone, vnet or subnet nobody is on
//! goes through.

use super::ProtectedSet;
use super::rules::{describe, why};
use crate::proxmox::plan::{
    Blocked, Desired, Effect, GuardRule, ResourceChange, sdn_deleted_bridges,
};

/// The guard's decision on a change to an SDN object.
pub(super) fn check(
    change: &ResourceChange,
    protected: &ProtectedSet,
    desired: &[Desired],
) -> Option<Blocked> {
    let id = change.object.as_ref()?;
    let replugging = change.paths_with(Effect::LinkReset);
    if replugging.is_empty() {
        return None;
    }
    let declared = desired.iter().find_map(|d| match d {
        Desired::Object(o) if o.address == change.address => Some(o.bridges.clone()),
        _ => None,
    });
    let bridges = declared.unwrap_or_else(|| sdn_deleted_bridges(id));
    let (guest, nic) = protected.guests().iter().find_map(|g| {
        let nic = g
            .nics
            .iter()
            .find(|n| n.bridge.as_ref().is_some_and(|b| bridges.contains(b)))?;
        Some((g, nic))
    })?;
    let reason = format!(
        "atoll refuses to change {} ({}): applying it re-plugs {} of protected guest {} on \
         bridge {}: {}; change it by hand from outside that guest, or drop the change from \
         this pull request",
        id.describe(),
        replugging.join(", "),
        nic.key,
        describe(guest, None),
        nic.bridge.as_deref().unwrap_or_default(),
        why(guest)
    );
    Some(Blocked {
        rule: GuardRule::LinkReset,
        reason,
    })
}
