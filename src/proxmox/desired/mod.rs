//! `proxmox::desired` adapts the loader's resource instances to the plan engine's desired
//! input: containers to PVE config keys and property strings (reference/proxmox.md section 2),
//! downloads to storage volumes, and values generated at apply time (`random_password`,
//! `random_string`) to secrets kept in state. It must not do I/O, and it never puts a
//! sensitive value anywhere but a [`Secret`](crate::proxmox::plan::Secret).

mod access;
mod cluster;
mod container;
mod file;
mod generated;
mod network;
mod object;
mod oci;
mod sdn;
mod values;
mod vm;

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

pub use generated::{
    Generated, computed, due, follows_update, generate, is_bool, is_dynamic, is_generated,
    is_number, is_sensitive, is_stored_value, replaces, shown_argument, wait,
};

use crate::proxmox::plan::{
    Desired, DesiredDownload, DesiredGuest, DesiredValue, GuestKind, VolumeSource,
};
use crate::proxmox::state::GeneratedValues;
use tfconfig::{Known, ResourceInstance, Value};
use values::{Marks, object};

pub(crate) use sdn::net_bridge;

pub const CONTAINER: &str = "proxmox_virtual_environment_container";
pub const VM: &str = "proxmox_virtual_environment_vm";

/// The tag atoll adds to every guest it creates, with the project's owner tag
/// ([`owner`](crate::proxmox::owner)): with the same VMID, they let a guest that exists on the
/// cluster but is missing from state (after a crash) be adopted by its own project only.
pub use crate::proxmox::owner::MARKER_TAG;

/// Why a resource cannot be turned into desired state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesiredError {
    #[error("{address}: {what} is not supported: {why}")]
    Unsupported {
        address: String,
        what: String,
        why: String,
    },
    #[error(
        "{address}: {attribute} must be known when planning (it is computed by another resource); set it to a literal value"
    )]
    MustBeKnown { address: String, attribute: String },
    #[error("{address}: {why}")]
    Invalid { address: String, why: String },
    /// An argument the provider could not use (a PEM that does not parse), with the
    /// provider's summary, said where the resource is declared, as Terraform says it.
    #[error(
        "{summary}\n\n  on {}, in resource {address}:\n\n{detail}",
        location(declared_at)
    )]
    Refused {
        address: String,
        declared_at: String,
        summary: &'static str,
        detail: String,
    },
}

/// `main.tf:12` as Terraform writes a location: `main.tf line 12`.
fn location(declared_at: &str) -> String {
    match declared_at.rsplit_once(':') {
        Some((file, line)) => format!("{file} line {line}"),
        None => declared_at.to_owned(),
    }
}

/// The desired state of a project, ready for the plan engine.
#[derive(Debug, Clone, Default)]
pub struct DesiredState {
    pub resources: Vec<Desired>,
    /// Resources whose values atoll generates at apply time.
    pub generated: Vec<Generated>,
    /// The evaluator's warnings (a provisioner that never runs, ...), rendered as Terraform
    /// prints them: shown with the plan, never dropped.
    pub warnings: Vec<String>,
    /// The root module's outputs, as far as they are known.
    pub outputs: BTreeMap<String, tfconfig::OutputValue>,
    /// The root module's `import` blocks.
    pub imports: Vec<tfconfig::ImportTarget>,
    /// What each resource instance depends on (references and `depends_on`), by address:
    /// what `-target` follows.
    pub depends_on: BTreeMap<String, Vec<String>>,
    /// `moved` blocks of every module instance (addresses absolute).
    pub moves: Vec<tfconfig::MoveStatement>,
    /// `removed` blocks of every module instance.
    pub removals: Vec<tfconfig::Removal>,
}

impl DesiredState {
    /// A hash of everything the configuration asks for (secrets by fingerprint), recorded in
    /// the plan so apply can refuse a plan made from another configuration.
    pub fn config_hash(&self) -> String {
        let mut hasher = Sha256::new();
        for resource in &self.resources {
            hasher.update(format!("{resource:?}").as_bytes());
            if let Desired::Guest(guest) = resource {
                for (key, value) in &guest.config {
                    if let DesiredValue::Sensitive(secret) = value {
                        hasher.update(format!("{key}={}", secret.fingerprint()).as_bytes());
                    }
                }
            }
        }
        for generated in &self.generated {
            hasher.update(format!("{}{:?}", generated.address, generated.arguments).as_bytes());
        }
        for import in &self.imports {
            hasher.update(format!("import {} {}", import.address, import.id).as_bytes());
        }
        for moved in &self.moves {
            hasher.update(format!("moved {} {}", moved.from, moved.to).as_bytes());
        }
        for removed in &self.removals {
            hasher.update(format!("removed {} {}", removed.from, removed.destroy).as_bytes());
        }
        hex::encode(hasher.finalize())
    }
}

fn is_download(resource_type: &str) -> bool {
    matches!(
        resource_type,
        "proxmox_download_file" | "proxmox_virtual_environment_download_file"
    )
}

/// A volume the configuration puts in a storage: downloaded, pulled or uploaded.
fn is_volume(resource_type: &str) -> bool {
    is_download(resource_type) || oci::is_oci_image(resource_type) || file::is_file(resource_type)
}

/// Computed values known before apply: each download's `id` and `file_name`, and the
/// generated values already in state (`generated_in_state`: address -> attribute -> value).
pub fn known_values(
    resources: &[ResourceInstance],
    generated_in_state: &BTreeMap<String, GeneratedValues>,
) -> Known {
    let mut known = Known::new();
    for (address, stored) in generated_in_state {
        let resource_type = stored.resource_type.as_str();
        let fields = stored
            .values
            .iter()
            .map(|(k, v)| {
                let secret = is_sensitive(resource_type, k);
                let value = match v.parse::<f64>() {
                    Ok(n) if is_number(resource_type, k) => Value::Number(n),
                    _ if is_bool(resource_type, k) => Value::Bool(v == "true"),
                    // A stored value of any type comes back with its type and marks; a corrupt
                    // one stays unknown (and sensitive, for all anyone can tell).
                    _ if is_stored_value(resource_type, k) => {
                        Value::from_stored(v).unwrap_or_else(|_| Value::unknown().mark(true))
                    }
                    _ => Value::string(v.clone()),
                };
                (k.clone(), value.mark(secret))
            })
            .collect();
        known.insert(address.clone(), fields);
    }
    for resource in resources {
        let volume = match resource.resource_type.as_str() {
            t if is_download(t) => download(resource).ok(),
            t if oci::is_oci_image(t) => oci::oci_image(resource).ok(),
            t if file::is_file(t) => file::file(resource).ok(),
            _ => None,
        };
        if let Some(file) = volume {
            let fields = BTreeMap::from([
                ("id".to_owned(), Value::string(file.volid())),
                ("file_name".to_owned(), Value::string(file.file_name)),
            ]);
            known.insert(resource.address.clone(), fields);
        }
    }
    known
}

/// Builds the desired state from loaded resource instances.
pub fn build(resources: &[ResourceInstance]) -> Result<DesiredState, Vec<DesiredError>> {
    let mut state = DesiredState::default();
    let mut errors = Vec::new();
    for resource in resources {
        let built = match resource.resource_type.as_str() {
            CONTAINER | VM => guest(resource, resources).map(Desired::Guest),
            t if is_download(t) => download(resource).map(Desired::Download),
            t if oci::is_oci_image(t) => oci::oci_image(resource).map(Desired::Download),
            t if object::is_object(t) => object::build(resource).map(Desired::Object),
            t if sdn::is_sdn(t) => sdn::build(resource, resources),
            t if file::is_file(t) => file::file(resource).map(Desired::Download),
            _ => {
                match generated::from_instance(resource) {
                    Some(Ok(generated))
                        if waits_on_the_cluster(&generated, resource, resources) =>
                    {
                        errors.push(DesiredError::Invalid {
                            address: resource.address.clone(),
                            why: format!(
                                "{} must be known before the cluster changes: atoll makes \
                                 generated values first, and this one reads what a Proxmox VE \
                                 resource computes; use a value from the configuration instead",
                                generated.pending.join(", ")
                            ),
                        });
                    }
                    Some(Ok(generated)) => state.generated.push(generated),
                    Some(Err(error)) => errors.push(error),
                    None => {}
                }
                continue;
            }
        };
        match built {
            Ok(desired) => state.resources.push(desired),
            Err(error) => errors.push(error),
        }
    }
    errors.extend(
        generated::over_budget(&state.generated).map(|why| DesiredError::Invalid {
            address: "this project".to_owned(),
            why,
        }),
    );
    link_clone_sources(&mut state.resources);
    link_objects(&mut state.resources);
    sdn::link(&mut state.resources);
    if errors.is_empty() {
        Ok(state)
    } else {
        Err(errors)
    }
}

/// A VM cloned from another guest of the same configuration uses it: apply makes the
/// source first (a template created in the same apply), and skips the clone if that failed.
fn link_clone_sources(resources: &mut [Desired]) {
    let by_id: BTreeMap<u32, String> = resources
        .iter()
        .filter_map(|r| match r {
            Desired::Guest(g) => Some((g.vm_id?, g.address.clone())),
            Desired::Download(_) | Desired::Object(_) => None,
        })
        .collect();
    for resource in resources.iter_mut() {
        let Desired::Guest(guest) = resource else {
            continue;
        };
        let Some(DesiredValue::Known(clone)) = guest.config.get("clone") else {
            continue;
        };
        let source = clone
            .split(',')
            .find_map(|f| f.strip_prefix("vmid="))
            .and_then(|id| id.parse::<u32>().ok())
            .and_then(|id| by_id.get(&id));
        if let Some(source) = source.filter(|s| **s != guest.address && !guest.uses.contains(s)) {
            guest.uses.push(source.clone());
        }
    }
}

/// A guest's firewall object uses the guest (made first, deleted with it), a guest in a pool
/// uses the pool, and a rule list inserting a security group of the configuration uses it.
fn link_objects(resources: &mut [Desired]) {
    use crate::proxmox::types::ObjectKind;
    let mut guests: BTreeMap<u32, String> = BTreeMap::new();
    let mut named: BTreeMap<(ObjectKind, String), String> = BTreeMap::new();
    for resource in resources.iter() {
        match resource {
            Desired::Guest(g) => {
                if let Some(id) = g.vm_id {
                    guests.insert(id, g.address.clone());
                }
            }
            Desired::Object(o) => {
                if let Some(name) = &o.id.name {
                    named.insert((o.id.kind, name.clone()), o.address.clone());
                }
            }
            Desired::Download(_) => {}
        }
    }
    for resource in resources.iter_mut() {
        let (address, used): (&str, Vec<&String>) = match resource {
            Desired::Guest(g) => {
                let pool = match g.config.get("pool") {
                    Some(DesiredValue::Known(pool)) => named.get(&(ObjectKind::Pool, pool.clone())),
                    _ => None,
                };
                (g.address.as_str(), pool.into_iter().collect())
            }
            Desired::Object(o) => {
                let guest = o.id.guest().and_then(|id| guests.get(&id.get()));
                let groups = o.entries.iter().flatten().filter_map(|e| {
                    (e.get("type").map(String::as_str) == Some("group"))
                        .then(|| named.get(&(ObjectKind::SecurityGroup, e.get("action")?.clone())))
                        .flatten()
                });
                let cluster = cluster::used(&o.id, &o.fields, &guests, &named);
                let member = access::member_guest(&o.id).and_then(|id| guests.get(&id));
                let named_access = access::uses(&o.id, &o.fields)
                    .into_iter()
                    .filter_map(|k| named.get(&k));
                (
                    o.address.as_str(),
                    guest
                        .into_iter()
                        .chain(groups)
                        .chain(cluster)
                        .chain(member)
                        .chain(named_access)
                        .collect(),
                )
            }
            Desired::Download(_) => continue,
        };
        let used: Vec<String> = used
            .into_iter()
            .filter(|u| u.as_str() != address)
            .cloned()
            .collect();
        let uses = match resource {
            Desired::Guest(g) => &mut g.uses,
            Desired::Object(o) => &mut o.uses,
            Desired::Download(_) => continue,
        };
        for u in used {
            if !uses.contains(&u) {
                uses.push(u);
            }
        }
    }
}

/// Whether a generated resource's argument is unknown for want of what a Proxmox VE resource
/// computes (known only after the apply changed the cluster), rather than another generated
/// value (made first, at apply).
fn waits_on_the_cluster(
    generated: &Generated,
    resource: &ResourceInstance,
    all: &[ResourceInstance],
) -> bool {
    !generated.pending.is_empty()
        && resource.depends_on.iter().any(|dep| {
            all.iter().any(|r| {
                tfconfig::dependency_covers(dep, &r.address) && !is_generated(&r.resource_type)
            })
        })
}

pub(super) fn must_know(address: &str, attribute: &str) -> DesiredError {
    DesiredError::MustBeKnown {
        address: address.to_owned(),
        attribute: attribute.to_owned(),
    }
}

fn guest(
    resource: &ResourceInstance,
    all: &[ResourceInstance],
) -> Result<DesiredGuest, DesiredError> {
    let address = &resource.address;
    let attrs = object(&resource.attributes).ok_or_else(|| must_know(address, "the resource"))?;
    let mut marks = Marks::default();
    let node = marks
        .text(attrs.get("node_name"))
        .filter(|_| !marks.unknown)
        .ok_or_else(|| must_know(address, "node_name"))?;
    let mut id_marks = Marks::default();
    let vm_id = id_marks
        .number(attrs.get("vm_id"))
        .filter(|id| *id >= 100.0 && id.fract() == 0.0 && *id <= f64::from(u32::MAX))
        .map(|id| id as u32);
    let kind = if resource.resource_type == VM {
        GuestKind::Qemu
    } else {
        GuestKind::Lxc
    };
    let config = match kind {
        GuestKind::Lxc => container::config(attrs, address)?,
        GuestKind::Qemu => vm::config(attrs, address)?,
    };
    // a template never runs (PVE refuses to start one)
    let template = Marks::default().flag(attrs.get("template")) == Some(true);
    let started = !template && Marks::default().flag(attrs.get("started")).unwrap_or(true);
    let uses = resource
        .depends_on
        .iter()
        .filter(|dep| {
            all.iter()
                .any(|r| r.address == **dep && is_volume(&r.resource_type))
        })
        .cloned()
        .collect();
    Ok(DesiredGuest {
        address: address.clone(),
        resource_type: resource.resource_type.clone(),
        kind,
        node,
        vm_id,
        config,
        started,
        lifecycle: lifecycle(&resource.lifecycle, Some(attrs)),
        uses,
    })
}

/// bpg's `file_name` default: the last path segment of the URL, without query or fragment.
fn file_name_from_url(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next()?;
    let name = path.rsplit('/').next()?;
    (!name.is_empty() && !path.ends_with("//")).then(|| name.to_owned())
}

/// A resource's text arguments as plan time knows them.
pub(super) struct TextArgs<'a> {
    address: &'a str,
    attrs: &'a values::Object,
}

impl<'a> TextArgs<'a> {
    pub(super) fn of(resource: &'a ResourceInstance) -> Result<Self, DesiredError> {
        let address = &resource.address;
        let attrs =
            object(&resource.attributes).ok_or_else(|| must_know(address, "the resource"))?;
        Ok(Self { address, attrs })
    }

    /// The argument's text; `None` when it is unset or not known yet.
    pub(super) fn get(&self, name: &str) -> Option<String> {
        let mut marks = Marks::default();
        let text = marks.text(self.attrs.get(name));
        if marks.unknown { None } else { text }
    }

    /// A value the plan cannot do without, named as `name` when it is missing.
    pub(super) fn known(&self, value: Option<String>, name: &str) -> Result<String, DesiredError> {
        value.ok_or_else(|| must_know(self.address, name))
    }
}

fn download(resource: &ResourceInstance) -> Result<DesiredDownload, DesiredError> {
    let address = &resource.address;
    let args = TextArgs::of(resource)?;
    let get = |name: &str| args.get(name);
    let known = |value: Option<String>, name: &str| args.known(value, name);
    let url = known(get("url"), "url")?;
    let file_name = get("file_name")
        .filter(|f| !f.is_empty())
        .or_else(|| file_name_from_url(&url));
    let mut arguments = BTreeMap::from([("url".to_owned(), url)]);
    for name in ["checksum", "checksum_algorithm", "decompression_algorithm"] {
        if let Some(value) = get(name).filter(|v| !v.is_empty()) {
            arguments.insert(name.to_owned(), value);
        }
    }
    Ok(DesiredDownload {
        address: address.clone(),
        resource_type: resource.resource_type.clone(),
        node: known(get("node_name"), "node_name")?,
        datastore: known(get("datastore_id"), "datastore_id")?,
        content_type: known(get("content_type"), "content_type")?,
        file_name: known(file_name, "file_name")?,
        arguments,
        lifecycle: lifecycle(&resource.lifecycle, None),
        source: VolumeSource::Url,
    })
}

/// Terraform's `ignore_changes` paths (`cpu[0].units`) as the plan's paths (`cpu.units`): a
/// single block loses its index; a VM's `disk[1]` becomes the disk's interface
/// (`disk[scsi1]`), as the plan names drives by the key Proxmox VE gives them.
pub(super) fn lifecycle(
    from: &tfconfig::Lifecycle,
    attrs: Option<&values::Object>,
) -> crate::proxmox::plan::Lifecycle {
    const SINGLE: &[&str] = &[
        "agent",
        "audio_device",
        "cdrom",
        "clone",
        "console",
        "cpu",
        "dns",
        "efi_disk",
        "features",
        "initialization",
        "memory",
        "operating_system",
        "smbios",
        "startup",
        "tpm_state",
        "user_account",
        "vga",
        "watchdog",
    ];
    let interfaces: Vec<String> = attrs
        .map(|attrs| {
            values::blocks(attrs, "disk")
                .iter()
                .filter_map(|d| Marks::default().text(d.get("interface")))
                .collect()
        })
        .unwrap_or_default();
    let ignore_changes = from
        .ignore_changes
        .iter()
        .map(|path| {
            let mut out = path.clone();
            for name in SINGLE {
                out = out.replace(&format!("{name}[0]"), name);
            }
            if interfaces.is_empty() {
                // a container's single `disk` block
                out = out.replace("disk[0]", "disk");
            }
            for (i, interface) in interfaces.iter().enumerate() {
                out = out.replace(&format!("disk[{i}]"), &format!("disk[{interface}]"));
            }
            out
        })
        .collect();
    crate::proxmox::plan::Lifecycle {
        ignore_changes,
        prevent_destroy: from.prevent_destroy,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_generated_values_sensitivity_follows_its_stored_type_not_its_address() {
        // A `for_each` key can make a password's address read like another type's.
        let address = r#"random_password.p["x.random_string.y"]"#;
        let stored = GeneratedValues {
            resource_type: "random_password".to_owned(),
            values: BTreeMap::from([
                ("result".to_owned(), "hunter22".to_owned()),
                ("id".to_owned(), "none".to_owned()),
            ]),
        };
        let known = known_values(&[], &BTreeMap::from([(address.to_owned(), stored)]));
        assert!(
            known[address]["result"].unmark().1,
            "the password is sensitive"
        );
        assert!(!known[address]["id"].unmark().1);
    }

    use super::{BTreeMap, GeneratedValues, file_name_from_url, known_values, lifecycle};

    #[test]
    fn ignore_changes_name_a_vms_disks_by_interface_and_single_blocks_without_index() {
        let disk = |interface: &str| {
            tfconfig::Value::Object(BTreeMap::from([(
                "interface".to_owned(),
                tfconfig::Value::string(interface),
            )]))
        };
        let attrs = BTreeMap::from([(
            "disk".to_owned(),
            tfconfig::Value::Tuple(vec![disk("virtio0"), disk("scsi1")]),
        )]);
        let from = tfconfig::Lifecycle {
            ignore_changes: vec![
                "disk[1].size".to_owned(),
                "initialization[0].user_account".to_owned(),
                "network_device".to_owned(),
            ],
            ..Default::default()
        };
        let planned = lifecycle(&from, Some(&attrs));
        assert_eq!(
            planned.ignore_changes,
            [
                "disk[scsi1].size",
                "initialization.user_account",
                "network_device"
            ]
        );
        let container = tfconfig::Lifecycle {
            ignore_changes: vec!["disk[0].size".to_owned()],
            ..Default::default()
        };
        assert_eq!(
            lifecycle(&container, Some(&BTreeMap::new())).ignore_changes,
            ["disk.size"]
        );
    }

    #[test]
    fn download_file_name_defaults_to_the_url_basename() {
        assert_eq!(
            file_name_from_url("https://x.org/t/debian-12.tar.zst?sig=1").as_deref(),
            Some("debian-12.tar.zst")
        );
        assert_eq!(file_name_from_url("https://x.org/"), None);
    }
}
