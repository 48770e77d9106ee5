//! `atoll state import-terraform`: a Terraform state taken over by address. bpg's guests and
//! objects are found on the cluster by bpg's import id, derived from the instance's attributes
//! (`node_name/vm_id` for a guest), exactly as an `import` block finds them
//! ([`import_one`]); the utility resources atoll generates keep Terraform's values (secrets in
//! atoll's state, shown or hidden as their schema says). Everything else (other providers,
//! data sources, what the configuration does not declare) is listed and left alone. Nothing
//! on the cluster changes; on any refusal nothing is recorded.

use std::collections::BTreeMap;

use secrecy::ExposeSecret;
use tfconfig::Input;

use super::{BPG, TfState, scalar_text};
use crate::proxmox::desired;
use crate::proxmox::engine::{Engine, EngineError, Prepared, import_one};
use crate::proxmox::plan::{Desired, StateEntry};
use crate::proxmox::state::{GeneratedEntry, ProjectState, StateError, StateHandle, secrets};

/// Why the import did nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Every problem found, each with what to do; nothing was recorded.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    State(#[from] StateError),
}

/// What the import did, for the summary.
#[derive(Debug, Default)]
pub struct Report {
    /// Guests and objects taken over: address, and the object in words (`CT 120 on node pve`).
    pub taken: Vec<(String, String)>,
    /// Generated values taken over, by address.
    pub generated: Vec<String>,
    /// Already in atoll's state as the same object: address.
    pub kept: Vec<String>,
    /// Left alone: address, and why.
    pub left_alone: Vec<(String, String)>,
}

/// A bpg instance to find on the cluster.
struct Proxmox {
    address: String,
    resource_type: String,
    /// bpg's import id, when the instance's attributes give it (`node/vmid` for a guest).
    id: Option<String>,
}

/// The state file's instances, sorted by what atoll does with them.
struct Sorted {
    proxmox: Vec<Proxmox>,
    generated: Vec<GeneratedEntry>,
    left_alone: Vec<(String, String)>,
}

fn sort(file: &TfState) -> Sorted {
    let mut sorted = Sorted {
        proxmox: Vec::new(),
        generated: Vec::new(),
        left_alone: Vec::new(),
    };
    for resource in &file.resources {
        for instance in &resource.instances {
            let address = resource.address(instance);
            let ty = resource.resource_type.as_str();
            let schema = tfconfig::schema::resource(ty);
            if resource.mode != "managed" {
                let why = "a data source: read again at every plan, not state";
                sorted.left_alone.push((address, why.to_owned()));
            } else if resource.provider_source() == BPG && schema.is_some() {
                let attrs = &instance.attributes;
                let id = match (attrs.get("node_name"), attrs.get("vm_id")) {
                    (Some(node), Some(vm_id)) if is_guest(ty) => scalar_text(node)
                        .zip(scalar_text(vm_id))
                        .map(|(node, vm_id)| format!("{node}/{vm_id}")),
                    _ => None,
                };
                sorted.proxmox.push(Proxmox {
                    address,
                    resource_type: ty.to_owned(),
                    id,
                });
            } else if desired::is_generated(ty) && resource.provider_source() != BPG {
                match generated(&address, ty, &instance.attributes) {
                    Ok(entry) => sorted.generated.push(entry),
                    Err(why) => sorted.left_alone.push((address, why)),
                }
            } else {
                let why = format!(
                    "{ty} of {}: not a resource atoll manages",
                    resource.provider_source()
                );
                sorted.left_alone.push((address, why));
            }
        }
    }
    sorted
}

fn is_guest(resource_type: &str) -> bool {
    matches!(
        resource_type,
        "proxmox_virtual_environment_container" | "proxmox_virtual_environment_vm"
    )
}

/// A utility resource's values and arguments as Terraform's state holds them.
fn generated(
    address: &str,
    resource_type: &str,
    attrs: &serde_json::Map<String, serde_json::Value>,
) -> Result<GeneratedEntry, String> {
    let mut values = BTreeMap::new();
    for name in desired::computed(resource_type) {
        match attrs.get(*name) {
            None | Some(serde_json::Value::Null) => {}
            Some(value) => {
                let text = scalar_text(value).ok_or_else(|| {
                    format!("its {name} is not a single value, which atoll cannot carry over yet")
                })?;
                values.insert((*name).to_owned(), text);
            }
        }
    }
    if values.is_empty() {
        return Err("it holds no generated value (was it ever applied?)".to_owned());
    }
    let mut arguments = BTreeMap::new();
    if let Some(schema) = tfconfig::schema::resource(resource_type) {
        for attr in schema.body.attrs.iter().filter(|a| !a.read_only) {
            if desired::is_stored_value(resource_type, attr.name) {
                continue;
            }
            match attrs.get(attr.name) {
                Some(serde_json::Value::Object(map)) if !map.is_empty() => {
                    let map: BTreeMap<&String, String> = map
                        .iter()
                        .filter_map(|(k, v)| scalar_text(v).map(|v| (k, v)))
                        .collect();
                    arguments.insert(
                        attr.name.to_owned(),
                        serde_json::to_string(&map).unwrap_or_default(),
                    );
                }
                Some(value) => {
                    arguments.extend(scalar_text(value).map(|t| (attr.name.to_owned(), t)));
                }
                None => {}
            }
        }
    }
    Ok(GeneratedEntry {
        address: address.to_owned(),
        resource_type: resource_type.to_owned(),
        arguments,
        values: secrets(values),
    })
}

/// Takes `file` over into `state`: refuses, recording nothing, when atoll's state holds
/// another object at one of its addresses or an object is not found as the file says.
pub async fn take_over(
    engine: &Engine,
    state: &StateHandle,
    input: &Input,
    file: &TfState,
) -> Result<Report, ImportError> {
    let current = state.load().await?;
    let sorted = sort(file);
    let mut report = Report {
        left_alone: sorted.left_alone,
        ..Report::default()
    };
    let mut conflicts = Vec::new();
    let mut new_generated = Vec::new();
    for entry in sorted.generated {
        match generated_conflict(&current, &entry) {
            Some(Ok(())) => report.kept.push(entry.address),
            Some(Err(why)) => conflicts.push(why),
            None => new_generated.push(entry),
        }
    }
    let mut to_find = Vec::new();
    for one in sorted.proxmox {
        match proxmox_conflict(&current, &one) {
            Some(Ok(())) => report.kept.push(one.address),
            Some(Err(why)) => conflicts.push(why),
            None => to_find.push(one),
        }
    }
    if !conflicts.is_empty() {
        return Err(ImportError::Refused(conflicts.join("\n")));
    }
    // The generated values first: the configuration reads them (a container's password).
    for entry in &new_generated {
        state.record_generated(entry).await?;
    }
    let outcome = find_all(engine, state, input, &mut new_generated, to_find).await;
    let found = match outcome {
        Ok(found) => found,
        Err(e) => {
            for entry in &new_generated {
                state.forget(&entry.address).await?;
            }
            return Err(e);
        }
    };
    for entry in &new_generated {
        state.record_generated(entry).await?;
    }
    report.generated = new_generated.into_iter().map(|g| g.address).collect();
    for (entry, what, left) in found {
        match (entry, left) {
            (Some(entry), _) => {
                state.record(&entry).await?;
                report.taken.push((entry.address().to_owned(), what));
            }
            (None, Some(why)) => report.left_alone.push((what, why)),
            (None, None) => {}
        }
    }
    Ok(report)
}

type Found = (Option<StateEntry>, String, Option<String>);

/// Plans the project with the generated values known, settles their arguments with the
/// configuration's, and finds every bpg instance on the cluster.
async fn find_all(
    engine: &Engine,
    state: &StateHandle,
    input: &Input,
    generated: &mut [GeneratedEntry],
    to_find: Vec<Proxmox>,
) -> Result<Vec<Found>, ImportError> {
    let prepared = engine.prepare(state, input).await?;
    for entry in generated.iter_mut() {
        settle_arguments(entry, &prepared);
    }
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for one in to_find {
        let declared = prepared
            .desired
            .resources
            .iter()
            .find(|d| d.address() == one.address);
        let id = match declared {
            None => {
                let why = "not declared in the configuration: declare it, then import again";
                found.push((None, one.address, Some(why.to_owned())));
                continue;
            }
            Some(Desired::Download(_)) => {
                let why = format!("atoll does not take over {} yet", one.resource_type);
                found.push((None, one.address, Some(why)));
                continue;
            }
            Some(Desired::Object(object)) => one.id.clone().or_else(|| object.id.import_id()),
            Some(Desired::Guest(_)) => one.id.clone(),
        };
        let Some(id) = id else {
            errors.push(format!(
                "Error: Cannot import {}\n\nThe Terraform state gives no node_name and vm_id \
                 for it: check the file is what `terraform state pull` prints.\n",
                one.address
            ));
            continue;
        };
        match import_one(&prepared, &one.address, &id) {
            Ok(imported) => found.push((Some(imported.entry), imported.what, None)),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(ImportError::Refused(errors.join("\n")))
    }
}

/// The configuration's arguments, but Terraform's where a single value differs: the next plan
/// then replaces the value as Terraform's would.
fn settle_arguments(entry: &mut GeneratedEntry, prepared: &Prepared) {
    let Some(declared) = prepared
        .desired
        .generated
        .iter()
        .find(|g| g.address == entry.address)
    else {
        return;
    };
    let mut arguments = declared.arguments.clone();
    for (name, text) in &mut arguments {
        if let Some(theirs) = entry.arguments.get(name)
            && !desired::is_stored_value(&entry.resource_type, name)
        {
            text.clone_from(theirs);
        }
    }
    entry.arguments = arguments;
}

/// `Some(Ok)`: the same values are in state already; `Some(Err)`: others are.
fn generated_conflict(
    current: &ProjectState,
    entry: &GeneratedEntry,
) -> Option<Result<(), String>> {
    if current.entries.iter().any(|e| e.address() == entry.address) {
        return Some(Err(holds_other(&entry.address, "a Proxmox VE object")));
    }
    let stored = current
        .generated
        .iter()
        .find(|g| g.address == entry.address)?;
    let same = stored.values.0.len() == entry.values.0.len()
        && stored.values.0.iter().all(|(name, value)| {
            entry
                .values
                .0
                .get(name)
                .is_some_and(|theirs| theirs.expose_secret() == value.expose_secret())
        });
    Some(if same {
        Ok(())
    } else {
        Err(holds_other(&entry.address, "other generated values"))
    })
}

fn proxmox_conflict(current: &ProjectState, one: &Proxmox) -> Option<Result<(), String>> {
    if current.generated.iter().any(|g| g.address == one.address) {
        return Some(Err(holds_other(&one.address, "generated values")));
    }
    let entry = current
        .entries
        .iter()
        .find(|e| e.address() == one.address)?;
    Some(match entry {
        StateEntry::Guest { node, vm_id, .. } => {
            let ours = format!("{node}/{vm_id}");
            if one.id.as_deref() == Some(ours.as_str()) {
                Ok(())
            } else {
                Err(holds_other(&one.address, &format!("the guest {ours}")))
            }
        }
        StateEntry::Object { resource_type, .. } | StateEntry::Download { resource_type, .. }
            if *resource_type == one.resource_type =>
        {
            Ok(())
        }
        _ => Err(holds_other(&one.address, "another kind of object")),
    })
}

fn holds_other(address: &str, what: &str) -> String {
    format!(
        "Error: {address} is already in atoll's state\n\natoll's state holds {what} at \
         {address}, and the Terraform state another. Remove atoll's with `atoll state rm \
         {address}` if the Terraform state is right (or `terraform state rm {address}` before \
         pulling it if atoll's is), then import again.\n"
    )
}
