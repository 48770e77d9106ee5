//! The self-host rule for the firewall: a change that can drop traffic flowing today
//! (the plan marks it `link-reset`: a stricter policy, a filter or firewall turned on, a rule
//! removed, changed or inserted that does not accept, an alias or IP set changed) is refused
//! when it reaches a protected guest: the guest's own firewall objects, the cluster's firewall
//! options (they apply to every guest), and a cluster alias, IP set or security group that a
//! protected guest's rules in the configuration name. A plainly additive change (a rule that
//! accepts, a log level, a comment, a policy that opens) goes through.

use super::rules::{describe, why};
use super::{ProtectedGuest, ProtectedSet};
use crate::proxmox::plan::{Blocked, Desired, Effect, GuardRule, ResourceChange};
use crate::proxmox::types::{ObjectId, ObjectKind, Scope};

/// The guard's decision on a change to a pool or a firewall object.
pub(super) fn check(
    change: &ResourceChange,
    protected: &ProtectedSet,
    desired: &[Desired],
) -> Option<Blocked> {
    let id = change.object.as_ref()?;
    let dropping = change.paths_with(Effect::LinkReset);
    if dropping.is_empty() {
        return None;
    }
    let (guest, how) = reached(id, protected, desired)?;
    let reason = format!(
        "atoll refuses to change {} ({}): it can drop traffic of protected guest {} ({how}): {}; \
         only additive firewall changes (rules that accept, log levels, comments) reach a \
         protected guest; change it by hand from outside that guest, or drop the change from \
         this pull request",
        id.describe(),
        dropping.join(", "),
        describe(guest, None),
        why(guest)
    );
    Some(Blocked {
        rule: GuardRule::LinkReset,
        reason,
    })
}

/// The protected guest an object's change reaches, and how.
fn reached<'p>(
    id: &ObjectId,
    protected: &'p ProtectedSet,
    desired: &[Desired],
) -> Option<(&'p ProtectedGuest, String)> {
    match (&id.scope, id.kind) {
        (Scope::Guest { node, vm_id, .. }, _) => {
            let guest = protected.find(Some(vm_id.get()), None, node.as_str())?;
            Some((guest, "its own firewall".to_owned()))
        }
        (Scope::Cluster, ObjectKind::FirewallOptions) => {
            let guest = protected.guests().first()?;
            Some((
                guest,
                "the cluster's options apply to every guest".to_owned(),
            ))
        }
        (Scope::Cluster, ObjectKind::Alias | ObjectKind::IpSet | ObjectKind::SecurityGroup) => {
            let name = id.name.as_deref()?;
            desired.iter().find_map(|d| {
                let Desired::Object(rules) = d else {
                    return None;
                };
                let Scope::Guest { node, vm_id, .. } = &rules.id.scope else {
                    return None;
                };
                let guest = protected.find(Some(vm_id.get()), None, node.as_str())?;
                let names = rules
                    .entries
                    .iter()
                    .flatten()
                    .any(|e| e.values().any(|v| mentions(v, name)));
                names.then(|| (guest, format!("its rules use {name}")))
            })
        }
        _ => None,
    }
}

/// Whether a rule's value names `name`: a security group (`action`), an alias (`lan`,
/// `dc/lan`) or an IP set (`+lan`, `+dc/lan`), alone or in a list.
fn mentions(value: &str, name: &str) -> bool {
    value.split(',').any(|part| {
        let part = part.trim().trim_start_matches('+');
        let part = part
            .strip_prefix("dc/")
            .or_else(|| part.strip_prefix("guest/"))
            .unwrap_or(part);
        part == name
    })
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn a_rule_names_a_set_an_alias_or_a_group_in_any_of_its_spellings() {
        assert!(mentions("+dc/lan", "lan"));
        assert!(mentions("10.0.0.1,lan", "lan"));
        assert!(mentions("web", "web"));
        assert!(!mentions("+lan2", "lan"));
    }
}
