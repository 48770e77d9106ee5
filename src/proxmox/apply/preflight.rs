//! Before the first change: the plan must still match atoll's state and the guests it was
//! refreshed from (the state fingerprint) and the configuration (its hash), and a guest that
//! exists but is missing from state is adopted, never created twice, when it is this project's.

use std::collections::BTreeSet;
use std::fmt;

use crate::proxmox::owner;
use crate::proxmox::plan::{
    Desired, GuestDiff, Inventory, ObjectDiff, Plan, Refreshed, StateEntry, differences,
    object_differences, observe_again, state_fingerprint,
};

/// Why a saved plan may not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreflightError {
    #[error(
        "the plan is stale: atoll's state changed since it was made (another apply ran); make a new plan"
    )]
    StaleState,
    #[error("the plan is stale: {0}; make a new plan")]
    ClusterChanged(ClusterChanges),
    #[error(
        "the plan was made from a different configuration (files or variables changed since); make a new plan"
    )]
    ConfigChanged,
}

/// The guests and objects that changed on the cluster since a plan was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterChanges {
    pub guests: Vec<GuestDiff>,
    pub objects: Vec<ObjectDiff>,
}

impl fmt::Display for ClusterChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let guests = self.guests.iter().map(ToString::to_string);
        let all: Vec<String> = guests
            .chain(self.objects.iter().map(ToString::to_string))
            .collect();
        write!(f, "the cluster changed since this plan: {}", all.join("; "))
    }
}

/// What a saved plan is compared with: the project as just loaded and refreshed.
#[derive(Debug, Clone)]
pub struct Now<'a> {
    /// The fingerprint of atoll's state.
    pub state_fingerprint: &'a str,
    pub config_hash: String,
    pub inventory: &'a Inventory,
}

impl Now<'_> {
    /// The plan's guests and objects as the cluster holds them now.
    fn refreshed(&self, plan: &Plan) -> Refreshed {
        observe_again(&plan.refreshed, self.state_fingerprint, self.inventory)
    }

    /// The `state_fingerprint` `plan` would carry if it were made now.
    pub fn state_fingerprint_for(&self, plan: &Plan) -> String {
        state_fingerprint(&self.refreshed(plan))
    }

    /// The plan's guests and objects that changed on the cluster since it was made, if any.
    pub fn cluster_changes(&self, plan: &Plan) -> Option<ClusterChanges> {
        let now = self.refreshed(plan);
        let changes = ClusterChanges {
            guests: differences(&plan.refreshed, &now),
            objects: object_differences(&plan.refreshed, &now),
        };
        (!changes.guests.is_empty() || !changes.objects.is_empty()).then_some(changes)
    }
}

/// Refuses a plan whose state fingerprint (atoll's state, or a guest it changes) or
/// configuration hash no longer holds; a changed guest is named with what changed.
pub fn check_fresh(plan: &Plan, now: &Now<'_>) -> Result<(), PreflightError> {
    if plan.source.state_fingerprint != now.state_fingerprint_for(plan) {
        let saved = &plan.refreshed;
        let state_held = !saved.is_empty() && saved.state == now.state_fingerprint;
        return Err(match now.cluster_changes(plan) {
            Some(changes) if state_held => PreflightError::ClusterChanged(changes),
            _ => PreflightError::StaleState,
        });
    }
    if plan.source.config_hash != now.config_hash {
        return Err(PreflightError::ConfigChanged);
    }
    Ok(())
}

/// Whether a guest's `tags` say it is this project's: atoll's marker, and either no owner tag
/// (a guest made before owner tags) or `own_tag` only.
fn is_own(tags: Option<&String>, own_tag: &str) -> bool {
    let tags = tags.map(String::as_str);
    owner::has_marker(tags) && owner::owner_tags(tags).iter().all(|t| t == own_tag)
}

/// State entries for desired guests that exist on the cluster with their configured VMID and
/// atoll's marker tag but are missing from state (a crash between create and the state write,
/// or a lost state). A guest whose owner tag names another project (`own_tag` is this one's)
/// is never adopted; the engine has already refused a VMID another scope's state holds.
/// Their attributes are empty: the next apply records them in full.
pub fn adopt(
    state: &[StateEntry],
    desired: &[Desired],
    inventory: &Inventory,
    own_tag: &str,
) -> Vec<StateEntry> {
    let known_addresses: BTreeSet<&str> = state.iter().map(StateEntry::address).collect();
    let known_ids: BTreeSet<u32> = state
        .iter()
        .filter_map(|e| match e {
            StateEntry::Guest { vm_id, .. } => Some(*vm_id),
            StateEntry::Download { .. } | StateEntry::Object { .. } => None,
        })
        .collect();
    desired
        .iter()
        .filter_map(|d| match d {
            Desired::Guest(guest) => Some(guest),
            Desired::Download(_) | Desired::Object(_) => None,
        })
        .filter(|guest| !known_addresses.contains(guest.address.as_str()))
        .filter_map(|guest| {
            let id = guest.vm_id.filter(|id| !known_ids.contains(id))?;
            let live = inventory.guests.get(&id)?;
            let ours = live.kind == guest.kind && is_own(live.config.get("tags"), own_tag);
            ours.then(|| StateEntry::Guest {
                address: guest.address.clone(),
                resource_type: guest.resource_type.clone(),
                kind: guest.kind,
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
    use crate::proxmox::plan::{GuestKind, LiveGuest, Power, observe_ids};

    fn plan(state: &str, config: &str) -> Plan {
        let source = crate::proxmox::plan::PlanSource {
            sha: String::new(),
            config_hash: config.to_owned(),
            state_fingerprint: state.to_owned(),
        };
        Plan::new(source, Vec::new())
    }

    fn now<'a>(state: &'a str, config: &'a str, inventory: &'a Inventory) -> Now<'a> {
        Now {
            state_fingerprint: state,
            config_hash: config.to_owned(),
            inventory,
        }
    }

    #[test]
    fn plan_is_fresh_only_while_state_and_configuration_hold() {
        let empty = Inventory::default();
        assert_eq!(
            check_fresh(&plan("s1", "c1"), &now("s1", "c1", &empty)),
            Ok(())
        );
        assert_eq!(
            check_fresh(&plan("s1", "c1"), &now("s2", "c1", &empty)),
            Err(PreflightError::StaleState)
        );
        assert_eq!(
            check_fresh(&plan("s1", "c1"), &now("s1", "c2", &empty)),
            Err(PreflightError::ConfigChanged)
        );
    }

    fn inventory(cores: &str) -> Inventory {
        let guest = LiveGuest {
            vm_id: 260,
            node: "pve".to_owned(),
            kind: GuestKind::Lxc,
            name: None,
            power: Power::Running,
            config: [("cores".to_owned(), cores.to_owned())]
                .into_iter()
                .collect(),
            pending: Vec::new(),
        };
        let mut inventory = Inventory::default();
        inventory.guests.insert(260, guest);
        inventory
    }

    #[test]
    fn a_guest_changed_on_the_cluster_makes_the_plan_stale_naming_the_change() {
        let mut saved = plan("s1", "c1");
        saved.refreshed = observe_ids([260], "s1", &inventory("2"));
        saved.source.state_fingerprint = state_fingerprint(&saved.refreshed);
        assert_eq!(
            check_fresh(&saved, &now("s1", "c1", &inventory("2"))),
            Ok(())
        );
        let err = check_fresh(&saved, &now("s1", "c1", &inventory("6"))).expect_err("stale");
        assert_eq!(
            err.to_string(),
            "the plan is stale: the cluster changed since this plan: CT 260 (cores 2 -> 6); make a new plan"
        );
        assert_eq!(
            check_fresh(&saved, &now("s2", "c1", &inventory("6"))),
            Err(PreflightError::StaleState),
            "another apply ran: that is the reason given"
        );
    }

    #[test]
    fn a_guest_is_this_projects_with_the_marker_and_no_owner_tag_or_its_own() {
        let own = "atoll-0123456789";
        let is = |tags: &str| is_own(Some(&tags.to_owned()), own);
        assert!(is("atoll;web") && is("db;ATOLL") && is("atoll;atoll-0123456789"));
        assert!(!is("atoll;atoll-abcdefabcd"), "another project's");
        assert!(!is("atoll;atoll-0123456789;atoll-abcdefabcd"), "two owners");
        assert!(!is("atoll-old;web") && !is("atoll-0123456789"), "no marker");
        assert!(!is_own(None, own));
    }
}
