//! The refusal rules (DESIGN.md "The self-host guard"): for a protected guest refuse destroy,
//! replace, moving node, stop, any `restart` or `link-reset` effect, an IP address or gateway
//! change (live in PVE, but it cuts connections like a link reset), and `live`/`deferred`
//! changes unless `allow_live_changes`; for any other guest, taking a protected guest's VMID,
//! MAC address or static IP address (see `identity`).

use std::collections::BTreeMap;

use super::{GuardPolicy, ProtectedBy, ProtectedGuest, ProtectedSet, identity};
use crate::proxmox::plan::{
    Action, Blocked, Desired, DesiredGuest, Effect, GuardRule, Plan, ResourceChange,
};

/// Resources a saved plan may no longer apply, found at apply time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the guard refuses this plan: {}; make a new plan",
    .refusals.iter().map(|(a, b)| format!("{a}: {}", b.reason)).collect::<Vec<_>>().join("; ")
)]
pub struct GuardRefusal {
    pub refusals: Vec<(String, Blocked)>,
}

/// Marks every resource change the guard refuses as blocked, and recounts the summary.
/// `desired` is the configuration the plan was made from (the identity rule reads the
/// interfaces it declares).
pub fn check(plan: &mut Plan, protected: &ProtectedSet, policy: GuardPolicy, desired: &[Desired]) {
    let guests = by_address(desired);
    for change in &mut plan.resource_changes {
        let guest = guests.get(change.address.as_str()).copied();
        change.blocked = evaluate(change, protected, policy, guest, desired);
    }
    plan.recount();
}

/// Re-checks a saved plan against the protected set as it is now (apply time): a change the
/// plan allowed but the guard refuses now (the guest became protected, took a protected
/// guest's address since, the policy changed) stops the apply before its first step. Changes
/// already blocked in the plan have no apply steps (`plan::steps` skips them).
pub fn recheck(
    plan: &Plan,
    protected: &ProtectedSet,
    policy: GuardPolicy,
    desired: &[Desired],
) -> Result<(), GuardRefusal> {
    let guests = by_address(desired);
    let refusals: Vec<(String, Blocked)> = plan
        .resource_changes
        .iter()
        .filter(|change| change.blocked.is_none())
        .filter_map(|change| {
            let guest = guests.get(change.address.as_str()).copied();
            let blocked = evaluate(change, protected, policy, guest, desired)?;
            Some((change.address.clone(), blocked))
        })
        .collect();
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(GuardRefusal { refusals })
    }
}

/// The desired guests by address.
fn by_address(desired: &[Desired]) -> BTreeMap<&str, &DesiredGuest> {
    desired
        .iter()
        .filter_map(|d| match d {
            Desired::Guest(guest) => Some((guest.address.as_str(), guest)),
            Desired::Download(_) | Desired::Object(_) => None,
        })
        .collect()
}

/// The guard's decision on one resource change.
fn evaluate(
    change: &ResourceChange,
    protected: &ProtectedSet,
    policy: GuardPolicy,
    desired: Option<&DesiredGuest>,
    all: &[Desired],
) -> Option<Blocked> {
    if change.is_no_op() {
        return None;
    }
    if change
        .object
        .as_ref()
        .is_some_and(|o| o.kind.network_type().is_some())
    {
        return super::network::check(change, protected);
    }
    if change.object.as_ref().is_some_and(|o| o.is_sdn()) {
        return super::sdn::check(change, protected, all);
    }
    if change.object.is_some() {
        let lockout = protected
            .own_access()
            .and_then(|own| super::access::check(change, own));
        return lockout
            .or_else(|| super::firewall::check(change, protected, all))
            .or_else(|| super::ha::check(change, protected));
    }
    change.kind?;
    own_rules(change, protected, policy)
        .or_else(|| identity::check(change, desired, protected.guests(), |g| describe(g, None)))
}

/// The rules about the protected guest itself (and its VMID).
fn own_rules(
    change: &ResourceChange,
    protected: &ProtectedSet,
    policy: GuardPolicy,
) -> Option<Blocked> {
    if change.actions == [Action::Create] {
        let guest = protected
            .find(change.vm_id, None, &change.node)
            .filter(|g| g.vm_id.is_some())?;
        let vm_id = change.vm_id.unwrap_or_default();
        let reason = format!(
            "vm_id {vm_id} belongs to protected guest {}; choose another vm_id",
            describe(guest, Some(change))
        );
        return Some(Blocked {
            rule: GuardRule::VmIdTaken,
            reason,
        });
    }
    let guest = protected.find(change.vm_id, change.guest_name.as_deref(), &change.node)?;
    let (rule, what) = violation(change, policy)?;
    let reason = format!(
        "atoll refuses to {what} protected guest {}: {}; change it by hand with `atoll apply` \
         from outside that guest, or drop the change from this pull request",
        describe(guest, Some(change)),
        why(guest)
    );
    Some(Blocked { rule, reason })
}

/// The first rule the change breaks, with a phrase naming what it would do.
fn violation(change: &ResourceChange, policy: GuardPolicy) -> Option<(GuardRule, String)> {
    if change.actions == [Action::Delete] {
        return Some((GuardRule::Destroy, "destroy".to_owned()));
    }
    if change.is_replace() {
        let moved = change
            .attributes
            .iter()
            .any(|a| a.path == "node_name" && a.effect == Some(Effect::Replace));
        return Some(if moved {
            (
                GuardRule::Move,
                "move to another node (by replacing)".to_owned(),
            )
        } else {
            let paths = change.paths_with(Effect::Replace).join(", ");
            (GuardRule::Replace, format!("replace (because of {paths})"))
        });
    }
    let stops = change
        .attributes
        .iter()
        .any(|a| a.path == "started" && a.after == serde_json::Value::Bool(false));
    if stops {
        return Some((GuardRule::Stop, "stop".to_owned()));
    }
    let rules = [
        (Effect::Restart, GuardRule::Restart, "restart"),
        (
            Effect::LinkReset,
            GuardRule::LinkReset,
            "reset the network link of",
        ),
    ];
    for (effect, rule, what) in rules {
        let paths = change.paths_with(effect);
        if !paths.is_empty() {
            return Some((rule, format!("{what} (for {})", paths.join(", "))));
        }
    }
    // PVE applies an address change live, but connections to the old address drop: for a
    // protected guest that is as disruptive as a link reset (reference/proxmox.md section 6)
    let addresses: Vec<&str> = change
        .attributes
        .iter()
        .filter(|a| a.path.contains(".ipv4.") || a.path.contains(".ipv6."))
        .map(|a| a.path.as_str())
        .collect();
    if !addresses.is_empty() {
        let what = format!(
            "change the network addresses of (for {})",
            addresses.join(", ")
        );
        return Some((GuardRule::LinkReset, what));
    }
    if policy.allow_live_changes {
        return None;
    }
    let mut paths = change.paths_with(Effect::Live);
    paths.extend(change.paths_with(Effect::Deferred));
    (!paths.is_empty()).then(|| {
        let what = format!(
            "change (live: {}; set protect.allow_live_changes to allow live changes)",
            paths.join(", ")
        );
        (GuardRule::LiveChange, what)
    })
}

/// `100 (db) on node pve`; what the guest entry does not know is taken from `change`, the
/// change to that same guest.
pub(super) fn describe(guest: &ProtectedGuest, change: Option<&ResourceChange>) -> String {
    let vm_id = guest
        .vm_id
        .or(change.and_then(|c| c.vm_id))
        .map_or_else(|| "?".to_owned(), |id| id.to_string());
    let node = guest
        .node
        .as_deref()
        .or(change.map(|c| c.node.as_str()))
        .unwrap_or("?");
    let name = guest
        .name
        .as_deref()
        .or(change.and_then(|c| c.guest_name.as_deref()));
    match name {
        Some(name) => format!("{vm_id} ({name}) on node {node}"),
        None => format!("{vm_id} on node {node}"),
    }
}

pub(super) fn why(guest: &ProtectedGuest) -> String {
    match &guest.by {
        ProtectedBy::Configured => "it is listed under protect.guests".to_owned(),
        ProtectedBy::Discovered { mac } => {
            format!("atoll runs in it (this machine's MAC {mac} is the guest's)")
        }
    }
}
