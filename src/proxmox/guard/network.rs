//! The self-host rule for a node's network: a change to an interface that can cut a bridge's
//! traffic (the plan marks it `link-reset`: ports, VLAN awareness, addresses, a lower MTU,
//! autostart off, a VLAN's raw device or id, a bond's slaves, deleting it) is refused when a
//! protected guest on that node has a NIC on a bridge the change reaches (the plan names
//! them: the bridge itself, the bridges a VLAN or a bond is a port of, the bridge a VLAN is
//! made on). Creating an interface, or changing only its comment, goes through.

use super::rules::{describe, why};
use super::{ProtectedGuest, ProtectedSet};
use crate::proxmox::plan::{Blocked, Effect, GuardRule, ResourceChange};

/// The guard's decision on a change to a network interface.
pub(super) fn check(change: &ResourceChange, protected: &ProtectedSet) -> Option<Blocked> {
    let id = change.object.as_ref()?;
    let cutting = change.paths_with(Effect::LinkReset);
    if cutting.is_empty() {
        return None;
    }
    let node = id.scope.node()?.as_str();
    let (guest, nic, bridge) = protected
        .guests()
        .iter()
        .find_map(|g| using(g, node, change))?;
    let reason = format!(
        "atoll refuses to change {} ({}): it can cut the traffic of bridge {bridge}, which \
         protected guest {} uses ({nic}): {}; change the network by hand from outside that \
         guest, move the guest to another bridge first, or drop the change from this pull \
         request",
        id.describe(),
        cutting.join(", "),
        describe(guest, None),
        why(guest)
    );
    Some(Blocked {
        rule: GuardRule::LinkReset,
        reason,
    })
}

/// The protected guest's NIC on one of the bridges the change reaches, on its node.
fn using<'g>(
    guest: &'g ProtectedGuest,
    node: &str,
    change: &ResourceChange,
) -> Option<(&'g ProtectedGuest, String, String)> {
    if guest.node.as_deref().is_some_and(|n| n != node) {
        return None;
    }
    guest.nics.iter().find_map(|nic| {
        let bridge = nic.bridge.as_deref()?;
        change
            .bridges
            .iter()
            .any(|b| b == bridge)
            .then(|| (guest, nic.key.clone(), bridge.to_owned()))
    })
}
