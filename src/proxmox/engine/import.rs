//! `import` blocks against the cluster: each target's existing guest or object is found by
//! bpg's import id and taken into state as the cluster holds it, so the plan shows what would
//! change after the import. An import whose target is already in state does nothing, as in
//! Terraform; one that names nothing on the cluster, or another object than the configuration
//! declares, is refused before anything is planned.

use std::collections::BTreeMap;

use tfconfig::ImportTarget;

use super::EngineError;
use crate::proxmox::plan::{Desired, Inventory, StateEntry};

/// One import the plan carries out: the entry it adds to state, and the id it came by.
#[derive(Debug, Clone)]
pub(super) struct Imported {
    pub(super) entry: StateEntry,
    pub(super) id: String,
}

/// The state entries `imports` bring in; every problem at once, Terraform-style.
pub(super) fn resolve(
    imports: &[ImportTarget],
    state: &[StateEntry],
    desired: &[Desired],
    inventory: &Inventory,
) -> Result<Vec<Imported>, EngineError> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut taken: BTreeMap<u32, &str> = state
        .iter()
        .filter_map(|e| match e {
            StateEntry::Guest { vm_id, address, .. } => Some((*vm_id, address.as_str())),
            _ => None,
        })
        .collect();
    for target in imports {
        if state.iter().any(|e| e.address() == target.address) {
            continue;
        }
        let Some(resource) = desired.iter().find(|d| d.address() == target.address) else {
            // not a Proxmox resource atoll manages (a generated value, say)
            errors.push(error(
                target,
                "Resource type does not support import",
                &format!(
                    "atoll imports guests, pools, firewall objects and node settings; {} is \
                     made by atoll itself: remove this import block.",
                    target.address
                ),
            ));
            continue;
        };
        match one(target, resource, inventory, &mut taken) {
            Ok(entry) => out.push(Imported {
                entry,
                id: target.id.clone(),
            }),
            Err((summary, detail)) => errors.push(error(target, summary, &detail)),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(EngineError::Config(errors.join("\n")))
    }
}

type Refusal = (&'static str, String);

const NOT_FOUND: &str = "Cannot import non-existent remote object";
const WRONG_ID: &str = "Import id does not match the configuration";

fn one<'a>(
    target: &'a ImportTarget,
    resource: &Desired,
    inventory: &Inventory,
    taken: &mut BTreeMap<u32, &'a str>,
) -> Result<StateEntry, Refusal> {
    match resource {
        Desired::Guest(guest) => {
            let noun = guest.kind.noun();
            let (node, vm_id) = target
                .id
                .split_once('/')
                .and_then(|(node, id)| Some((node, id.parse::<u32>().ok()?)))
                .filter(|(node, _)| !node.is_empty())
                .ok_or_else(|| {
                    (
                        "Invalid import id",
                        format!(
                            "bpg's import id of a guest is <node_name>/<vm_id>, e.g. \"pve/100\"; \
                             \"{}\" is not.",
                            target.id
                        ),
                    )
                })?;
            match guest.vm_id {
                Some(declared) if declared == vm_id => {}
                Some(declared) => {
                    return Err((
                        WRONG_ID,
                        format!(
                            "The import id names {noun} {vm_id}, but {} declares vm_id = \
                             {declared}: import the guest it declares, or change vm_id.",
                            target.address
                        ),
                    ));
                }
                None => {
                    return Err((
                        WRONG_ID,
                        format!(
                            "{} declares no vm_id, so Proxmox VE would pick a new one: set \
                             vm_id = {vm_id} to import {noun} {vm_id}.",
                            target.address
                        ),
                    ));
                }
            }
            let live = inventory
                .guests
                .get(&vm_id)
                .filter(|live| live.kind == guest.kind && live.node == node)
                .ok_or_else(|| {
                    (
                        NOT_FOUND,
                        format!(
                            "While attempting to import an existing object to \"{}\", no {noun} \
                             {vm_id} was found on node {node}. Only existing guests can be \
                             imported; check the id, or remove the import block to create it.",
                            target.address
                        ),
                    )
                })?;
            if let Some(owner) = taken.insert(vm_id, &target.address) {
                return Err((
                    "Resource already managed",
                    format!(
                        "{noun} {vm_id} is already managed as {owner}; one guest can be managed \
                         by one resource: remove this import block."
                    ),
                ));
            }
            Ok(StateEntry::Guest {
                address: guest.address.clone(),
                resource_type: guest.resource_type.clone(),
                kind: guest.kind,
                node: live.node.clone(),
                vm_id,
                attributes: Default::default(),
            })
        }
        Desired::Object(object) => {
            if let Some(expected) = object.id.import_id()
                && expected != target.id
            {
                return Err((
                    WRONG_ID,
                    format!(
                        "The import id \"{}\" does not name the object {} declares ({}), whose \
                         import id is \"{expected}\".",
                        target.id,
                        target.address,
                        object.id.describe()
                    ),
                ));
            }
            let live = inventory.objects.get(&object.id.path()).ok_or_else(|| {
                (
                    NOT_FOUND,
                    format!(
                        "While attempting to import an existing object to \"{}\", Proxmox VE \
                         has no {}. Only existing objects can be imported; check the id, or \
                         remove the import block to create it.",
                        target.address,
                        object.id.describe()
                    ),
                )
            })?;
            // what atoll manages of it: the parameters the configuration sets, as they are
            let fields = live
                .fields
                .iter()
                .filter(|(key, _)| object.fields.contains_key(*key))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Ok(StateEntry::Object {
                address: object.address.clone(),
                resource_type: object.resource_type.clone(),
                id: object.id.clone(),
                fields,
                entries: live.entries.clone(),
            })
        }
        Desired::Download(download) => Err((
            "Resource type does not support import",
            format!(
                "atoll does not import {} yet: delete the volume, or leave it unmanaged and \
                 remove this import block.",
                download.resource_type
            ),
        )),
    }
}

/// Terraform's rendering: `Error: SUMMARY`, where, the detail.
fn error(target: &ImportTarget, summary: &str, detail: &str) -> String {
    let at = match target.declared_at.rsplit_once(':') {
        Some((file, line)) => format!("  on {file} line {line}, in import:\n"),
        None => String::new(),
    };
    format!("Error: {summary}\n\n{at}\n{detail}\n")
}
