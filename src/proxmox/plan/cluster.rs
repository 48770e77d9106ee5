//! The cluster's own objects in the plan (datacenter options, hosts, HA, replication, metric
//! servers): what PVE takes for a key it does not list, the keys the configuration no longer
//! sets (deleted at apply), a key only a create sets (a change replaces the object), and what
//! an HA resource's requested state does to its guest. Every change applies at once (`live`);
//! an HA state that stops the guest says so, and the guard weighs it as a stop.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::attrs::change;
use super::change::{Action, AttributeChange, ResourceChange};
use super::effect::Effect;
use super::model::{Desired, DesiredObject, Inventory, LiveObject};
use crate::proxmox::types::{ObjectId, ObjectKind};

/// What PVE takes for a key its configuration does not hold (the schemas' defaults).
pub(super) fn pve_default(id: &ObjectId, key: &str) -> Option<&'static str> {
    Some(match (id.kind, key) {
        (ObjectKind::HaGroup, "nofailback" | "restricted") => "0",
        (ObjectKind::HaRule, "disable" | "strict") => "0",
        (ObjectKind::HaResource, "failback") => "1",
        (ObjectKind::HaResource, "state") => "started",
        (ObjectKind::HaResource, "max_restart") => "1",
        (ObjectKind::HaResource, "max_relocate") => "1",
        (ObjectKind::Replication | ObjectKind::MetricServer, "disable") => "0",
        (ObjectKind::Replication, "schedule") => "*/15",
        _ => return None,
    })
}

/// The keys atoll set that the configuration no longer sets and the cluster holds with a
/// value other than PVE's default: apply deletes them.
pub(super) fn unset(object: &DesiredObject, live: &LiveObject) -> Vec<AttributeChange> {
    if !object.id.kind.deletes_unset() {
        return Vec::new();
    }
    object
        .labels
        .iter()
        .filter(|(key, _)| !object.fields.contains_key(*key))
        .filter(|(key, _)| !object.id.kind.create_only().contains(&key.as_str()))
        .filter_map(|(key, label)| {
            let have = live.fields.get(key)?;
            let default = pve_default(&object.id, key);
            if default == Some(have.as_str()) || have.is_empty() {
                return None;
            }
            let after = default.map_or(Json::Null, |d| Json::from(d.to_owned()));
            let mut c = change(label.clone(), key, Json::from(have.clone()), after);
            c.effect = Some(Effect::Live);
            Some(c)
        })
        .collect()
}

/// Why the object is replaced rather than changed: a key only a create sets differs.
pub(super) fn replaced_because(object: &DesiredObject, live: &LiveObject) -> Option<String> {
    let key = object.id.kind.create_only().iter().find(|key| {
        let want = object.fields.get(**key);
        want.is_some()
            && live
                .fields
                .get(**key)
                .is_some_and(|have| Some(have) != want)
    })?;
    let label = object.labels.get(*key).map_or(*key, String::as_str);
    Some(format!(
        "{label} of {} cannot change in place: Proxmox VE sets it only at create, so it is \
         deleted and created again",
        object.id.describe()
    ))
}

/// What the HA manager does to the guest of an HA resource whose requested state this plan
/// sets: `stopped` and `disabled` stop it, `started` and `enabled` start it.
pub(super) fn ha_notes(resource: &mut ResourceChange) {
    let Some(id) = resource
        .object
        .as_ref()
        .filter(|id| id.kind == ObjectKind::HaResource)
    else {
        return;
    };
    let sid = id.name.clone().unwrap_or_default();
    let state = resource
        .attributes
        .iter()
        .find(|a| a.pve_key == "state")
        .and_then(|a| a.after.as_str());
    let note = match state {
        Some("stopped" | "disabled") => format!(
            "the HA manager stops {sid}: its guest is shut down (and stays down) once this applies"
        ),
        Some("started" | "enabled") => {
            format!("the HA manager starts {sid} if it is not running")
        }
        Some("ignored") => format!(
            "the HA manager no longer acts on {sid}: start and stop it yourself until the state \
             changes again"
        ),
        _ => return,
    };
    resource.notes.push(note);
}

/// Whether the change stops the guest of an HA resource: the `state` it requests is one that
/// stops it (for the guard).
pub(crate) fn stops_guest(change: &ResourceChange) -> bool {
    change
        .object
        .as_ref()
        .is_some_and(|id| id.kind == ObjectKind::HaResource)
        && change.attributes.iter().any(|a| {
            a.pve_key == "state" && matches!(a.after.as_str(), Some("stopped" | "disabled"))
        })
}

/// The guests an HA resource manages (in the configuration or on the cluster), by VMID.
fn ha_guests(desired: &[Desired], inventory: &Inventory) -> BTreeSet<u32> {
    let vmid = |sid: &str| {
        sid.split_once(':')
            .and_then(|(_, id)| id.parse::<u32>().ok())
    };
    let declared = desired.iter().filter_map(|d| match d {
        Desired::Object(o) if o.id.kind == ObjectKind::HaResource => o.id.name.as_deref(),
        _ => None,
    });
    let live = inventory
        .objects
        .keys()
        .filter_map(|path| path.strip_prefix("/cluster/ha/resources/"));
    declared.chain(live).filter_map(vmid).collect()
}

/// PVE's HA manager and its resource scheduler move an HA guest between nodes on their own:
/// for such a guest, a `node_name` other than the one it runs on is where HA placed it, not a
/// move to plan (which would replace it). The plan keeps it as a note.
pub(super) fn ha_placed(
    changes: &mut [ResourceChange],
    desired: &[Desired],
    inventory: &Inventory,
) {
    let managed = ha_guests(desired, inventory);
    for change in changes.iter_mut() {
        if change.vm_id.is_none_or(|id| !managed.contains(&id)) || change.kind.is_none() {
            continue;
        }
        let Some(at) = change
            .attributes
            .iter()
            .position(|a| a.path == "node_name" && a.effect == Some(Effect::Replace))
        else {
            continue;
        };
        let moved = change.attributes.remove(at);
        change.drift.notes.push(format!(
            "the HA manager runs this guest on {} (the configuration says {}): HA placement is \
             observed, not changed",
            moved.before.as_str().unwrap_or_default(),
            moved.after.as_str().unwrap_or_default()
        ));
        let worst = change.attributes.iter().filter_map(|a| a.effect).max();
        change.disruption = worst;
        change.actions = match worst {
            None => vec![Action::NoOp],
            Some(Effect::Replace) => vec![Action::Delete, Action::Create],
            Some(_) => vec![Action::Update],
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::types::{GuestKind, Scope};

    fn ha_object(sid: &str) -> Desired {
        let id = ObjectId::new(ObjectKind::HaResource, Scope::Cluster, Some(sid)).expect("sid");
        Desired::Object(DesiredObject {
            address: "proxmox_haresource.x".to_owned(),
            resource_type: "proxmox_haresource".to_owned(),
            id,
            fields: Default::default(),
            entries: None,
            labels: Default::default(),
            lifecycle: Default::default(),
            uses: Vec::new(),
            bridges: Vec::new(),
            secrets: Default::default(),
        })
    }

    fn moved_guest(vm_id: u32) -> ResourceChange {
        let mut c = ResourceChange::no_op("proxmox_virtual_environment_vm.db", "vm", "pve2");
        c.vm_id = Some(vm_id);
        c.kind = Some(GuestKind::Qemu);
        let mut node = change("node_name".to_owned(), "node", "pve2".into(), "pve".into());
        node.effect = Some(Effect::Replace);
        c.attributes.push(node);
        c.actions = vec![Action::Delete, Action::Create];
        c.disruption = Some(Effect::Replace);
        c
    }

    #[test]
    fn an_ha_guest_placed_elsewhere_by_ha_is_observed_not_replaced() {
        let mut changes = vec![moved_guest(100), moved_guest(101)];
        let desired = vec![ha_object("vm:100")];
        ha_placed(&mut changes, &desired, &Inventory::default());
        assert_eq!(changes[0].actions, vec![Action::NoOp]);
        assert!(changes[0].drift.notes[0].contains("the HA manager runs this guest on pve2"));
        assert_eq!(changes[1].actions, vec![Action::Delete, Action::Create]);
    }
}
