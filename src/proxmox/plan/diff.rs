//! The diff: desired resources × atoll's state × the inventory -> the plan.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::attrs::{self, IGNORED, change};
use super::change::{Action, AttributeChange, Drift, Plan, ResourceChange};
use super::effect::{Effect, Power};
use super::keys::attr_path;
use super::model::{
    Desired, DesiredGuest, DesiredValue, GuestKind, Inventory, LiveGuest, PlanSource, StateEntry,
    StateValue,
};
use super::paths::typed;
use super::{download, notes, object, sdn};

/// Everything a plan is computed from.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    pub desired: &'a [Desired],
    pub state: &'a [StateEntry],
    pub inventory: &'a Inventory,
    pub source: &'a PlanSource,
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(
        "{address} has lifecycle.prevent_destroy set, but the plan would {action} it; \
         remove prevent_destroy or change the configuration so it is not {action}d"
    )]
    PreventDestroy {
        address: String,
        action: &'static str,
    },
    #[error("{address} and {other} both declare vm_id {vm_id}; give each guest its own vm_id")]
    DuplicateVmId {
        address: String,
        other: String,
        vm_id: u32,
    },
    #[error(
        "{address} and {other} both manage {what}; each would undo the other's changes at every \
         apply: keep one of them"
    )]
    DuplicateObject {
        address: String,
        other: String,
        what: String,
    },
    /// A guest the configuration declares (or imports) is another project's: its owner tag,
    /// or another scope's state, says so. `guest` is `CT 500 already exists on node pve`.
    #[error(
        "{guest}, managed by {owner}; choose another vm_id or move it with a moved block / \
         atoll state mv"
    )]
    ManagedElsewhere { guest: String, owner: String },
    /// A guest the configuration declares (or imports) carries an owner tag of no project this
    /// store knows (another server's, or a project whose state is gone).
    #[error(
        "{guest}, managed by an atoll project this server's store does not know (owner tag \
         {tag}); choose another vm_id, or, if that project is gone, remove the tag from the \
         guest and import it"
    )]
    UnknownOwner { guest: String, tag: String },
}

/// All errors found in one plan run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct PlanErrors(pub Vec<PlanError>);

/// Computes the plan. Pure: the same input always gives the same plan.
pub fn plan(input: PlanInput<'_>) -> Result<Plan, PlanErrors> {
    let state: BTreeMap<&str, &StateEntry> = input
        .state
        .iter()
        .map(|entry| (entry.address(), entry))
        .collect();
    let mut errors = duplicate_vm_ids(input.desired);
    errors.extend(duplicate_objects(input.desired));
    let mut changes = Vec::new();
    for desired in input.desired {
        let prior = state.get(desired.address()).copied();
        let resource = match desired {
            Desired::Guest(guest) => guest_change(guest, prior, input.inventory),
            Desired::Download(file) => download::change_for(file, prior, input.inventory),
            Desired::Object(object) if object.id.is_sdn() => {
                sdn::change_for(object, prior, input.inventory)
            }
            Desired::Object(object) => object::change_for(object, prior, input.inventory),
        };
        if resource.is_replace() && prevent_destroy(desired) {
            let address = desired.address().to_owned();
            errors.push(PlanError::PreventDestroy {
                address,
                action: "replace",
            });
        }
        changes.push(resource);
    }
    let wanted: BTreeSet<&str> = input.desired.iter().map(Desired::address).collect();
    for entry in input.state.iter().filter(|e| !wanted.contains(e.address())) {
        changes.extend(match entry {
            StateEntry::Guest { .. } => Some(guest_delete(entry, input.inventory)),
            StateEntry::Download { .. } => Some(download::delete(entry)),
            StateEntry::Object { .. } => object::delete(entry, input.inventory),
        });
    }
    sdn::settle(&mut changes, input.inventory);
    if !errors.is_empty() {
        return Err(PlanErrors(errors));
    }
    super::cluster::ha_placed(&mut changes, input.desired, input.inventory);
    changes.sort_by(|a, b| a.address.cmp(&b.address));
    Ok(Plan::new(input.source.clone(), changes))
}

fn prevent_destroy(desired: &Desired) -> bool {
    desired.lifecycle().prevent_destroy
}

fn duplicate_objects(desired: &[Desired]) -> Vec<PlanError> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    let mut errors = Vec::new();
    for object in desired.iter().filter_map(|d| match d {
        Desired::Object(object) => Some(object),
        _ => None,
    }) {
        if let Some(other) = seen.insert(object.id.key(), &object.address) {
            errors.push(PlanError::DuplicateObject {
                address: object.address.clone(),
                other: other.to_owned(),
                what: object.id.describe(),
            });
        }
    }
    errors
}

fn duplicate_vm_ids(desired: &[Desired]) -> Vec<PlanError> {
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    let mut errors = Vec::new();
    for guest in desired.iter().filter_map(|d| match d {
        Desired::Guest(guest) => Some(guest),
        Desired::Download(_) | Desired::Object(_) => None,
    }) {
        let Some(vm_id) = guest.vm_id else { continue };
        if let Some(other) = seen.insert(vm_id, &guest.address) {
            let (address, other) = (guest.address.clone(), other.to_owned());
            errors.push(PlanError::DuplicateVmId {
                address,
                other,
                vm_id,
            });
        }
    }
    errors
}

fn empty_change(
    address: &str,
    resource_type: &str,
    node: &str,
    vm_id: Option<u32>,
) -> ResourceChange {
    let mut change = ResourceChange::no_op(address, resource_type, node);
    change.vm_id = vm_id;
    change
}

fn guest_change(
    desired: &DesiredGuest,
    prior: Option<&StateEntry>,
    inventory: &Inventory,
) -> ResourceChange {
    let mut drift = Drift::default();
    let existing = match prior {
        Some(StateEntry::Guest {
            vm_id,
            attributes,
            node,
            ..
        }) => match inventory.guests.get(vm_id) {
            Some(live) => Some((live, attributes)),
            None => {
                drift.notes.push(format!(
                    "guest {vm_id} on node {node} no longer exists on the cluster \
                     (removed outside atoll); it will be created again"
                ));
                None
            }
        },
        _ => None,
    };
    let mut resource = match existing {
        Some((live, attributes)) => guest_update(desired, attributes, live, drift),
        None => guest_create(desired, inventory, drift),
    };
    resource.uses = desired.uses.clone();
    resource
}

fn guest_create(desired: &DesiredGuest, inventory: &Inventory, mut drift: Drift) -> ResourceChange {
    let (address, kind) = (&desired.address, &desired.resource_type);
    let mut resource = empty_change(address, kind, &desired.node, desired.vm_id);
    resource.kind = Some(desired.kind);
    resource.actions = vec![Action::Create];
    if let Some(taken) = desired.vm_id.and_then(|id| inventory.guests.get(&id)) {
        drift.notes.push(format!(
            "vm_id {} is already used on node {} by a guest not in atoll's state; apply adopts \
             it only if it carries atoll's marker, and fails otherwise: to take it over, add \
             import {{ to = {address}, id = \"{}/{}\" }}",
            taken.vm_id, taken.node, taken.node, taken.vm_id
        ));
    }
    resource.drift = drift;
    let mut attributes = vec![change(
        "node_name".to_owned(),
        "node",
        Json::Null,
        Json::from(desired.node.clone()),
    )];
    let mut vm_id = change("vm_id".to_owned(), "vmid", Json::Null, Json::Null);
    match desired.vm_id {
        Some(id) => vm_id.after = Json::from(id),
        None => vm_id.after_unknown = true,
    }
    attributes.push(vm_id);
    attributes.push(change(
        "started".to_owned(),
        "started",
        Json::Null,
        Json::Bool(desired.started),
    ));
    for (key, value) in desired
        .config
        .iter()
        .filter(|(k, _)| !IGNORED.contains(&k.as_str()))
    {
        attributes.extend(created_values(desired.kind, key, value));
    }
    attributes.sort_by(|a, b| a.path.cmp(&b.path));
    resource.attributes = attributes;
    resource
}

fn created_values(guest: GuestKind, key: &str, value: &DesiredValue) -> Vec<AttributeChange> {
    let hidden = |sensitive: bool| {
        let mut attribute = change(attr_path(guest, key, None).0, key, Json::Null, Json::Null);
        attribute.after_sensitive = sensitive;
        attribute.after_unknown = !sensitive;
        vec![attribute]
    };
    match value {
        DesiredValue::Known(raw) => attrs::expand(guest, key, raw)
            .into_iter()
            .map(|(path, after)| change(path, key, Json::Null, after))
            .collect(),
        DesiredValue::Unknown => hidden(false),
        DesiredValue::Sensitive(_) => hidden(true),
    }
}

fn guest_update(
    desired: &DesiredGuest,
    applied: &BTreeMap<String, StateValue>,
    live: &LiveGuest,
    mut drift: Drift,
) -> ResourceChange {
    let mut resource = empty_change(
        &desired.address,
        &desired.resource_type,
        &live.node,
        Some(live.vm_id),
    );
    resource.kind = Some(live.kind);
    resource.guest_name = live.name.clone();
    resource.power = Some(live.power);
    let mut attributes = attrs::compare(&desired.config, applied, live);
    attributes.extend(identity_changes(desired, live));
    attributes.retain(|a| !attrs::ignored(&a.path, &desired.lifecycle.ignore_changes));
    attributes.sort_by(|a, b| a.path.cmp(&b.path));
    let found = attrs::drift(applied, live);
    drift.pending = found.pending;
    drift.changed_outside = found.changed_outside;
    resource.drift = drift;
    let worst = attributes.iter().filter_map(|a| a.effect).max();
    resource.actions = match worst {
        None => vec![Action::NoOp],
        Some(Effect::Replace) => vec![Action::Delete, Action::Create],
        Some(_) => vec![Action::Update],
    };
    resource.disruption = worst;
    resource.notes = notes::guest_notes(live, &attributes);
    resource.attributes = attributes;
    resource
}

/// Node, VMID and power state: not config keys, compared with what the cluster reports.
fn identity_changes(desired: &DesiredGuest, live: &LiveGuest) -> Vec<AttributeChange> {
    let mut out = Vec::new();
    if desired.kind != live.kind {
        let mut other = change(
            "vm_id".to_owned(),
            "vmid",
            Json::from(format!("{} {}", live.kind.noun(), live.vm_id)),
            Json::from(format!("{} {}", desired.kind.noun(), live.vm_id)),
        );
        other.effect = Some(Effect::Replace);
        out.push(other);
    }
    if desired.node != live.node {
        let mut moved = change(
            "node_name".to_owned(),
            "node",
            Json::from(live.node.clone()),
            Json::from(desired.node.clone()),
        );
        moved.effect = Some(Effect::Replace);
        out.push(moved);
    }
    if let Some(want) = desired.vm_id.filter(|want| *want != live.vm_id) {
        let mut renumbered = change(
            "vm_id".to_owned(),
            "vmid",
            Json::from(live.vm_id),
            Json::from(want),
        );
        renumbered.effect = Some(Effect::Replace);
        out.push(renumbered);
    }
    let running = live.power == Power::Running;
    if desired.started != running {
        let mut power = change(
            "started".to_owned(),
            "started",
            Json::Bool(running),
            Json::Bool(desired.started),
        );
        // stopping takes the guest down like a restart; starting is applied now
        power.effect = Some(if running {
            Effect::Restart
        } else {
            Effect::Live
        });
        out.push(power);
    }
    out
}

fn guest_delete(entry: &StateEntry, inventory: &Inventory) -> ResourceChange {
    let StateEntry::Guest {
        address,
        resource_type,
        node,
        vm_id,
        attributes,
        kind,
    } = entry
    else {
        return download::delete(entry);
    };
    let live = inventory.guests.get(vm_id);
    let node = live.map_or(node.as_str(), |live| live.node.as_str());
    let mut resource = empty_change(address, resource_type, node, Some(*vm_id));
    resource.kind = Some(*kind);
    resource.actions = vec![Action::Delete];
    resource.guest_name = live.and_then(|live| live.name.clone());
    resource.power = live.map(|live| live.power);
    if live.is_none() {
        resource.drift.notes.push(format!(
            "guest {vm_id} no longer exists on the cluster; apply only removes it from state"
        ));
    }
    for (key, value) in attributes {
        if IGNORED.contains(&key.as_str()) {
            continue;
        }
        match value {
            StateValue::Plain(raw) => resource.attributes.extend(
                attrs::expand(*kind, key, raw)
                    .into_iter()
                    .map(|(path, before)| change(path, key, before, Json::Null)),
            ),
            StateValue::Fingerprint(_) => {
                let path = attr_path(*kind, key, None).0;
                let mut hidden = change(path, key, Json::Null, Json::Null);
                hidden.before_sensitive = true;
                resource.attributes.push(hidden);
            }
        }
    }
    let (path, value_kind) = attr_path(*kind, "vmid", None);
    resource.attributes.push(change(
        path,
        "vmid",
        typed(value_kind, &vm_id.to_string()),
        Json::Null,
    ));
    resource.attributes.sort_by(|a, b| a.path.cmp(&b.path));
    resource
}
