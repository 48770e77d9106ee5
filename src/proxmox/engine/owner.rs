//! Ownership at plan time: every guest a project creates or updates carries atoll's marker and
//! the project's owner tag, and a guest the plan would create, adopt or import whose VMID
//! another project holds (in the store's state, or by its owner tag on the cluster) refuses
//! the plan, naming that project, as Terraform refuses a resource that already exists. It
//! reads the store; it never changes the cluster.

use std::collections::BTreeSet;

use crate::proxmox::desired::DesiredState;
use crate::proxmox::owner::{self, MARKER_TAG};
use crate::proxmox::plan::{
    Desired, DesiredValue, GuestKind, Inventory, PlanError, PlanErrors, StateEntry,
};
use crate::proxmox::state::{Scope, StateHandle};

use super::EngineError;

/// Writes atoll's marker and `owner_tag` into every guest's `tags` (the plan's diff does not
/// show them; a create or an update that sends `tags` keeps them).
pub(super) fn stamp(desired: &mut DesiredState, owner_tag: &str) {
    for resource in &mut desired.resources {
        let Desired::Guest(guest) = resource else {
            continue;
        };
        let markers = [MARKER_TAG, owner_tag];
        match guest.config.get_mut("tags") {
            Some(DesiredValue::Known(tags)) => *tags = owner::with_markers(tags, &markers),
            Some(_) => {}
            None => {
                let tags = owner::with_markers("", &markers);
                guest
                    .config
                    .insert("tags".to_owned(), DesiredValue::Known(tags));
            }
        }
    }
}

/// The guests a plan would take: every desired guest with a VMID, and every guest an import
/// brings in.
pub(super) fn claims<'a>(
    desired: &'a [Desired],
    imported: impl IntoIterator<Item = &'a StateEntry>,
) -> Vec<(GuestKind, u32)> {
    let declared = desired.iter().filter_map(|d| match d {
        Desired::Guest(guest) => guest.vm_id.map(|id| (guest.kind, id)),
        Desired::Download(_) | Desired::Object(_) => None,
    });
    let imported = imported.into_iter().filter_map(|e| match e {
        StateEntry::Guest { kind, vm_id, .. } => Some((*kind, *vm_id)),
        StateEntry::Download { .. } | StateEntry::Object { .. } => None,
    });
    declared.chain(imported).collect()
}

/// Refuses the plan when a claimed guest that this project's state does not hold is another
/// project's; every such guest is named at once.
pub async fn refuse_foreign(
    state: &StateHandle,
    own: &[StateEntry],
    claims: &[(GuestKind, u32)],
    inventory: &Inventory,
) -> Result<(), EngineError> {
    let held: BTreeSet<u32> = own
        .iter()
        .filter_map(|e| match e {
            StateEntry::Guest { vm_id, .. } => Some(*vm_id),
            StateEntry::Download { .. } | StateEntry::Object { .. } => None,
        })
        .collect();
    let own_tag = state.owner_tag();
    let mut seen = BTreeSet::new();
    let mut errors = Vec::new();
    for &(kind, vm_id) in claims {
        if held.contains(&vm_id) || !seen.insert(vm_id) {
            continue;
        }
        errors.extend(foreign(state, &own_tag, kind, vm_id, inventory).await?);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(EngineError::Plan(PlanErrors(errors)))
    }
}

/// Why `vm_id` is another project's, if it is: another scope holds it in the store, or the
/// guest on the cluster carries another owner tag.
async fn foreign(
    state: &StateHandle,
    own_tag: &str,
    kind: GuestKind,
    vm_id: u32,
    inventory: &Inventory,
) -> Result<Option<PlanError>, EngineError> {
    let live = inventory.guests.get(&vm_id);
    let elsewhere = state.held_elsewhere(vm_id).await?;
    let noun = live.map_or(kind, |l| l.kind).noun();
    let guest = match (live, elsewhere.first()) {
        (Some(live), _) => format!("{noun} {vm_id} already exists on node {}", live.node),
        (None, Some(holder)) => format!(
            "{noun} {vm_id} (node {}, not on the cluster now) is in another project's state",
            holder.node
        ),
        (None, None) => return Ok(None),
    };
    if let Some(holder) = elsewhere.first() {
        let owner = describe(&holder.scope);
        return Ok(Some(PlanError::ManagedElsewhere { guest, owner }));
    }
    let tags = live.and_then(|l| l.config.get("tags")).map(String::as_str);
    let Some(tag) = owner::owner_tags(tags).into_iter().find(|t| t != own_tag) else {
        return Ok(None);
    };
    Ok(Some(match state.scope_of_owner_tag(&tag).await? {
        Some(scope) => PlanError::ManagedElsewhere {
            guest,
            owner: describe(&scope),
        },
        None => PlanError::UnknownOwner { guest, tag },
    }))
}

/// A scope as the refusal names it: `github.com/acme/infra envs/prod (default)`.
fn describe(scope: &Scope) -> String {
    let dir = if scope.project_dir.is_empty() {
        "."
    } else {
        scope.project_dir.as_str()
    };
    format!("{} {dir} ({})", scope.repo, scope.workspace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_is_named_by_repository_directory_and_workspace() {
        let scope = Scope {
            repo: "github.com/acme/infra".to_owned(),
            project_dir: "envs/prod".to_owned(),
            workspace: "default".to_owned(),
        };
        assert_eq!(
            describe(&scope),
            "github.com/acme/infra envs/prod (default)"
        );
        let root = Scope {
            project_dir: String::new(),
            ..scope
        };
        assert_eq!(describe(&root), "github.com/acme/infra . (default)");
    }
}
