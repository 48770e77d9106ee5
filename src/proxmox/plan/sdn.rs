//! SDN zones, vnets, subnets and the applier. pve-network keeps every write in `sdn/*.cfg`
//! as pending until `PUT /cluster/sdn` applies it; atoll compares with what is written there
//! and says, for each change, what applying it does: a vnet's bridge is regenerated on every
//! node (`ifreload`), which re-plugs the links of the guests whose interfaces are on it
//! (`link-reset`, the plan names them); an object nobody uses changes nothing that runs
//! (`live`). The applier (bpg's `sdn_applier`) applies the SDN configuration whenever the
//! plan changes an SDN object, after all of them; without one the changes stay pending.

use serde_json::Value as Json;

use super::change::{Action, ResourceChange};
use super::effect::Effect;
use super::model::{DesiredObject, Inventory, StateEntry};
use crate::proxmox::desired::net_bridge;
use crate::proxmox::types::{ObjectId, ObjectKind};

/// The plan for one desired SDN object.
pub(crate) fn change_for(
    object: &DesiredObject,
    prior: Option<&StateEntry>,
    inventory: &Inventory,
) -> ResourceChange {
    if object.id.kind == ObjectKind::SdnApplier {
        return applier(object, prior);
    }
    let mut change = super::object::change_for(object, prior, inventory);
    let new =
        !inventory.objects.contains_key(&object.id.path()) && change.actions == [Action::Create];
    let bridges = if new {
        // a new vnet nobody can be on yet (its bridge does not exist before it is applied)
        Vec::new()
    } else {
        object.bridges.clone()
    };
    set_effects(&mut change, &bridges, inventory);
    change
}

/// The applier: created when new; otherwise it acts only when the plan changes an SDN
/// object ([`settle`]).
fn applier(object: &DesiredObject, prior: Option<&StateEntry>) -> ResourceChange {
    let node = String::new();
    let mut change = ResourceChange::no_op(&object.address, &object.resource_type, &node);
    change.object = Some(object.id.clone());
    change.uses.clone_from(&object.uses);
    if prior.is_none() {
        change.actions = vec![Action::Create];
        change.attributes = object
            .fields
            .iter()
            .map(|(k, v)| super::attrs::change(k.clone(), k, Json::Null, Json::Bool(v == "1")))
            .collect();
        if object.fields.get("on_create").map(String::as_str) != Some("0") {
            change.notes.push(APPLIES.to_owned());
        }
    }
    change
}

const APPLIES: &str = "applies the SDN configuration (PUT /cluster/sdn) after the SDN changes \
                       of this apply: each node regenerates its vnet bridges";

/// The effect of each attribute: `link-reset` when a guest's interface is on one of
/// `bridges`, else `live`; the note names the guests.
fn set_effects(change: &mut ResourceChange, bridges: &[String], inventory: &Inventory) {
    if change.is_no_op() {
        return;
    }
    let guests = guests_on(bridges, inventory);
    let effect = if guests.is_empty() {
        Effect::Live
    } else {
        change.notes.push(format!(
            "applying it re-plugs the interfaces on {} of {}",
            bridges.join(", "),
            guests.join(", ")
        ));
        Effect::LinkReset
    };
    for attribute in &mut change.attributes {
        attribute.effect = Some(effect);
    }
    change.disruption = change.attributes.iter().filter_map(|a| a.effect).max();
}

/// The guests (`VM 100 (web) on pve`) with an interface on one of `bridges`.
fn guests_on(bridges: &[String], inventory: &Inventory) -> Vec<String> {
    inventory
        .guests
        .values()
        .filter(|g| {
            g.config
                .iter()
                .filter(|(k, _)| k.starts_with("net"))
                .filter_map(|(_, v)| net_bridge(v))
                .any(|b| bridges.contains(&b))
        })
        .map(|g| {
            let name = g
                .name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!("{} {}{name} on {}", g.kind.noun(), g.vm_id, g.node)
        })
        .collect()
}

/// The vnet bridges deleting `id` takes away: a vnet's own, a subnet's vnet's.
pub fn deleted_bridges(id: &ObjectId) -> Vec<String> {
    let name = id.name.clone().unwrap_or_default();
    match id.kind {
        ObjectKind::SdnVnet => vec![name],
        ObjectKind::SdnSubnet => name
            .split_once('/')
            .map(|(v, _)| v.to_owned())
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// After every change is planned: SDN deletes get their effect, the applier acts when an SDN
/// object changes, and without an applier each SDN change says it stays pending.
pub(crate) fn settle(changes: &mut [ResourceChange], inventory: &Inventory) {
    let sdn_object = |c: &ResourceChange| {
        c.object
            .as_ref()
            .is_some_and(|o| o.is_sdn() && o.kind != ObjectKind::SdnApplier)
    };
    for change in changes.iter_mut() {
        if sdn_object(change) && change.actions == [Action::Delete] {
            let bridges = change
                .object
                .as_ref()
                .map(deleted_bridges)
                .unwrap_or_default();
            set_effects(change, &bridges, inventory);
        }
    }
    let changed = changes.iter().any(|c| sdn_object(c) && !c.is_no_op());
    if !changed {
        return;
    }
    let mut applier = false;
    for change in changes.iter_mut() {
        let Some(id) = &change.object else { continue };
        if id.kind != ObjectKind::SdnApplier {
            continue;
        }
        applier = true;
        if change.is_no_op() {
            change.actions = vec![Action::Update];
            change.notes.push(APPLIES.to_owned());
        }
    }
    if applier {
        return;
    }
    for change in changes
        .iter_mut()
        .filter(|c| sdn_object(c) && !c.is_no_op())
    {
        change.notes.push(
            "stays pending in Proxmox VE until the SDN configuration is applied: declare a \
             proxmox_sdn_applier resource, or apply it in the web interface (Datacenter, SDN, \
             Apply)"
                .to_owned(),
        );
    }
}
