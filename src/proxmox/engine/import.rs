//! `import` blocks against the cluster: each target's existing guest or object is found by
//! bpg's import id and taken into state as the cluster holds it, so the plan shows what would
//! change after the import. An import whose target is already in state does nothing, as in
//! Terraform; one that names nothing on the cluster, or another object than the configuration
//! declares, is refused before anything is planned.
//!
//! `atlantis import ADDRESS ID` ([`import_one`]) finds its object the same way, against what
//! a plan of the project read, and refuses as Terraform's `import` command does an address the
//! configuration does not declare or one already in state.

use std::collections::BTreeMap;

use tfconfig::ImportTarget;

use super::{EngineError, Prepared};
use crate::proxmox::guard::ProtectedBy;
use crate::proxmox::plan::{Desired, Inventory, StateEntry};

/// What `atlantis import ADDRESS ID` takes into state.
#[derive(Debug, Clone)]
pub struct CommandImport {
    /// The entry to record (a guest's attributes stay empty: the next apply records them).
    pub entry: StateEntry,
    /// The object in words: `CT 120 on node pve`, `pool dev`.
    pub what: String,
    /// Why the guest is protected (`protect.guests`, or atoll runs in it), if it is.
    pub protected: Option<ProtectedBy>,
}

/// The state entry `atlantis import ADDRESS ID` adds, found as an `import` block would find
/// it, in the cluster `prepared` read. Nothing is written: the caller records the entry.
pub fn import_one(
    prepared: &Prepared,
    address: &str,
    id: &str,
) -> Result<CommandImport, EngineError> {
    let state = &prepared.state;
    let managed = state.entries.iter().any(|e| e.address() == address)
        || state.generated.iter().any(|g| g.address == address);
    if managed {
        return Err(EngineError::Config(format!(
            "Error: Resource already managed by atoll\n\natoll is already managing a remote \
             object for {address}. To import to this address you must first remove the existing \
             object from the state: `atlantis state rm {address}`.\n"
        )));
    }
    let declared = prepared
        .desired
        .resources
        .iter()
        .any(|d| d.address() == address)
        || prepared
            .desired
            .generated
            .iter()
            .any(|g| g.address == address);
    if !declared {
        let (kind, name) = address
            .rsplit_once('.')
            .map(|(head, name)| (head.rsplit('.').next().unwrap_or(head), name))
            .unwrap_or(("TYPE", address));
        let name = name.split('[').next().unwrap_or(name);
        return Err(EngineError::Config(format!(
            "Error: resource address \"{address}\" does not exist in the configuration.\n\n\
             Before importing this resource, please create its configuration in the project. \
             For example:\n\nresource \"{kind}\" \"{name}\" {{\n  # (resource arguments)\n}}\n"
        )));
    }
    let target = ImportTarget {
        address: address.to_owned(),
        id: id.to_owned(),
        declared_at: String::new(),
        subject: tfconfig::Span {
            file: 0,
            range: 0..0,
        },
    };
    let mut found = resolve(
        std::slice::from_ref(&target),
        &state.entries,
        &prepared.desired.resources,
        &prepared.inventory,
    )?;
    let Some(imported) = found.pop() else {
        return Err(EngineError::Config(format!(
            "Error: Cannot import {address}\n\n{address} is already in state.\n"
        )));
    };
    let (what, protected) = match &imported.entry {
        StateEntry::Guest {
            kind, node, vm_id, ..
        } => {
            let by = prepared
                .protected
                .find(Some(*vm_id), None, node)
                .map(|g| g.by.clone());
            (format!("{} {vm_id} on node {node}", kind.noun()), by)
        }
        StateEntry::Object { id, .. } => (id.describe(), None),
        StateEntry::Download { volid, .. } => (volid.clone(), None),
    };
    Ok(CommandImport {
        entry: imported.entry,
        what,
        protected,
    })
}

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
