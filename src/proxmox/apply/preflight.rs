//! Before the first change: the plan must still match atoll's state (its fingerprint), and a
//! guest that exists but is missing from state is adopted, never created twice.

use std::collections::BTreeSet;

use crate::proxmox::desired::MARKER_TAG;
use crate::proxmox::plan::{Desired, GuestKind, Inventory, Plan, StateEntry};

/// Why a saved plan may not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreflightError {
    #[error(
        "the plan is stale: atoll's state changed since it was made (another apply ran); make a new plan"
    )]
    StaleState,
    #[error(
        "the plan was made from a different configuration (files or variables changed since); make a new plan"
    )]
    ConfigChanged,
}

/// Refuses a plan whose state fingerprint or configuration hash no longer holds.
pub fn check_fresh(
    plan: &Plan,
    state_fingerprint: &str,
    config_hash: &str,
) -> Result<(), PreflightError> {
    if plan.source.state_fingerprint != state_fingerprint {
        return Err(PreflightError::StaleState);
    }
    if plan.source.config_hash != config_hash {
        return Err(PreflightError::ConfigChanged);
    }
    Ok(())
}

fn has_marker(tags: Option<&String>) -> bool {
    tags.is_some_and(|tags| {
        tags.split([';', ',', ' '])
            .any(|t| t.trim().eq_ignore_ascii_case(MARKER_TAG))
    })
}

/// State entries for desired guests that exist on the cluster with their configured VMID and
/// atoll's marker tag but are missing from state (a crash between create and the state write,
/// or a lost state). Their attributes are empty: the next apply records them in full.
pub fn adopt(state: &[StateEntry], desired: &[Desired], inventory: &Inventory) -> Vec<StateEntry> {
    let known_addresses: BTreeSet<&str> = state.iter().map(StateEntry::address).collect();
    let known_ids: BTreeSet<u32> = state
        .iter()
        .filter_map(|e| match e {
            StateEntry::Guest { vm_id, .. } => Some(*vm_id),
            StateEntry::Download { .. } => None,
        })
        .collect();
    desired
        .iter()
        .filter_map(|d| match d {
            Desired::Guest(guest) => Some(guest),
            Desired::Download(_) => None,
        })
        .filter(|guest| !known_addresses.contains(guest.address.as_str()))
        .filter_map(|guest| {
            let id = guest.vm_id.filter(|id| !known_ids.contains(id))?;
            let live = inventory.guests.get(&id)?;
            let ours = live.kind == GuestKind::Lxc && has_marker(live.config.get("tags"));
            ours.then(|| StateEntry::Guest {
                address: guest.address.clone(),
                resource_type: guest.resource_type.clone(),
                kind: GuestKind::Lxc,
                node: live.node.clone(),
                vm_id: id,
                attributes: Default::default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(state: &str, config: &str) -> Plan {
        let source = crate::proxmox::plan::PlanSource {
            sha: String::new(),
            config_hash: config.to_owned(),
            state_fingerprint: state.to_owned(),
        };
        Plan::new(source, Vec::new())
    }

    #[test]
    fn plan_is_fresh_only_while_state_and_configuration_hold() {
        assert_eq!(check_fresh(&plan("s1", "c1"), "s1", "c1"), Ok(()));
        assert_eq!(
            check_fresh(&plan("s1", "c1"), "s2", "c1"),
            Err(PreflightError::StaleState)
        );
        assert_eq!(
            check_fresh(&plan("s1", "c1"), "s1", "c2"),
            Err(PreflightError::ConfigChanged)
        );
    }

    #[test]
    fn marker_tag_is_found_in_any_position_and_case() {
        assert!(has_marker(Some(&"atoll;web".to_owned())));
        assert!(has_marker(Some(&"db;ATOLL".to_owned())));
        assert!(!has_marker(Some(&"atoll-old;web".to_owned())));
        assert!(!has_marker(None));
    }
}
