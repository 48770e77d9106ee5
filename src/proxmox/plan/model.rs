//! The plan's inputs, as plain values: what the configuration wants, what atoll's state says
//! it manages, and what the cluster holds now. Adapters from the loader, the store and the
//! Proxmox client build these; the diff never does I/O.

use std::collections::BTreeMap;
use std::fmt;

use sha2::{Digest, Sha256};

use super::effect::Power;
use crate::proxmox::types::ObjectId;

/// A secret value from the configuration (password, key). `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The only way to read the value: for sending it to PVE at create.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What state stores instead of the value: a SHA-256 fingerprint, to detect a change.
    pub fn fingerprint(&self) -> String {
        hex::encode(Sha256::digest(self.0.as_bytes()))
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A desired PVE config value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesiredValue {
    Known(String),
    /// Known only after apply (e.g. computed from a resource still to be created).
    Unknown,
    /// Marked sensitive: never shown, compared by fingerprint with state.
    Sensitive(Secret),
}

/// Terraform `lifecycle` settings of a resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lifecycle {
    /// bpg attribute paths (`cpu.units`, `network_interface`), or `all`.
    pub ignore_changes: Vec<String>,
    pub prevent_destroy: bool,
}

/// Container or virtual machine: one type for the plan, the client and the store.
pub use crate::proxmox::types::GuestKind;

/// One guest the configuration declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredGuest {
    pub address: String,
    pub resource_type: String,
    pub kind: GuestKind,
    pub node: String,
    /// `None`: PVE assigns one at create.
    pub vm_id: Option<u32>,
    /// PVE config keys as they would be sent (`cores`, `net0`, `rootfs` = `local-lvm:8`),
    /// including create-only keys (`ostemplate`, `password`, `ssh-public-keys`, `unprivileged`,
    /// `pool`).
    pub config: BTreeMap<String, DesiredValue>,
    pub started: bool,
    pub lifecycle: Lifecycle,
    /// Addresses of resources this guest uses (its template download).
    pub uses: Vec<String>,
}

/// How a volume the configuration puts in a storage gets there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VolumeSource {
    /// The node downloads it (`download-url`; the URL is `arguments["url"]`).
    Url,
    /// atoll sends these bytes (`proxmox_virtual_environment_file`): through the API's upload
    /// for `iso`, `vztmpl` and `import`, over SFTP into the storage's directory for
    /// `snippets`. Their SHA-256 is `arguments["content_sha256"]`, so a change replaces.
    Bytes(tfconfig::SourceBytes),
    /// The node pulls an OCI image from a registry (`oci-registry-pull`; the reference is
    /// `arguments["reference"]`).
    Registry,
}

/// A volume the configuration puts in a storage: downloaded by the node
/// (`proxmox_virtual_environment_download_file`) or uploaded by atoll
/// (`proxmox_virtual_environment_file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredDownload {
    pub address: String,
    pub resource_type: String,
    pub node: String,
    pub datastore: String,
    /// `vztmpl`, `iso` or `import`.
    pub content_type: String,
    pub file_name: String,
    /// Other replace-forcing arguments (`url`, `checksum`, ...), by bpg name.
    pub arguments: BTreeMap<String, String>,
    pub lifecycle: Lifecycle,
    pub source: VolumeSource,
}

impl DesiredDownload {
    /// The PVE volume id the file will have: `<datastore>:<content>/<file>`.
    pub fn volid(&self) -> String {
        format!(
            "{}:{}/{}",
            self.datastore, self.content_type, self.file_name
        )
    }
}

/// One entry of an object's list (a firewall rule, an IP set entry): PVE parameters by name.
pub type ObjectEntry = BTreeMap<String, String>;

/// A Proxmox VE object the configuration declares that is neither a guest nor a volume: a
/// pool, firewall options, a rule list, an alias, an IP set, a security group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredObject {
    pub address: String,
    pub resource_type: String,
    pub id: ObjectId,
    /// The PVE parameters the configuration sets, by PVE name (`policy_in`).
    pub fields: BTreeMap<String, String>,
    /// The entries, in order, for kinds that have them ([`ObjectId::entries`]).
    pub entries: Option<Vec<ObjectEntry>>,
    /// The bpg name of each PVE parameter (`policy_in` -> `input_policy`), for the plan.
    pub labels: BTreeMap<String, String>,
    pub lifecycle: Lifecycle,
    /// Addresses of resources this object uses (the guest whose firewall it is).
    pub uses: Vec<String>,
    /// The vnet bridges a change to this SDN object re-plugs once applied (a vnet's own, a
    /// subnet's vnet, the vnets of a zone); empty for other objects.
    pub bridges: Vec<String>,
    /// Write-only parameters (a user's `password`): sent when the object is created, never
    /// compared, shown or stored.
    pub secrets: BTreeMap<String, Secret>,
}

/// A resource the configuration declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Desired {
    Guest(DesiredGuest),
    Download(DesiredDownload),
    Object(DesiredObject),
}

impl Desired {
    pub fn address(&self) -> &str {
        match self {
            Self::Guest(guest) => &guest.address,
            Self::Download(download) => &download.address,
            Self::Object(object) => &object.address,
        }
    }

    pub fn lifecycle(&self) -> &Lifecycle {
        match self {
            Self::Guest(guest) => &guest.lifecycle,
            Self::Download(download) => &download.lifecycle,
            Self::Object(object) => &object.lifecycle,
        }
    }
}

/// A value atoll last applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateValue {
    Plain(String),
    /// The fingerprint of a sensitive value ([`Secret::fingerprint`]).
    Fingerprint(String),
}

/// What atoll's state records for one resource address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateEntry {
    Guest {
        address: String,
        resource_type: String,
        kind: GuestKind,
        node: String,
        vm_id: u32,
        /// The PVE config keys atoll last applied, with their values.
        attributes: BTreeMap<String, StateValue>,
    },
    Download {
        address: String,
        resource_type: String,
        node: String,
        volid: String,
        arguments: BTreeMap<String, String>,
    },
    Object {
        address: String,
        resource_type: String,
        id: ObjectId,
        /// The PVE parameters atoll last set.
        fields: BTreeMap<String, String>,
        entries: Option<Vec<ObjectEntry>>,
    },
}

impl StateEntry {
    pub fn address(&self) -> &str {
        match self {
            Self::Guest { address, .. }
            | Self::Download { address, .. }
            | Self::Object { address, .. } => address,
        }
    }
}

/// An object as the cluster holds it now.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LiveObject {
    /// Its parameters, as text, without PVE's bookkeeping (`digest`, `pos`).
    pub fields: BTreeMap<String, String>,
    pub entries: Option<Vec<ObjectEntry>>,
}

/// One entry of `GET .../pending`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PendingEntry {
    pub key: String,
    pub value: Option<String>,
    pub pending: Option<String>,
    /// A delete is queued for this key.
    pub delete: bool,
}

/// A guest as the cluster reports it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveGuest {
    pub vm_id: u32,
    pub node: String,
    pub kind: GuestKind,
    pub name: Option<String>,
    pub power: Power,
    /// `GET config?current=1`, values as text (see [`config_from_json`]).
    pub config: BTreeMap<String, String>,
    pub pending: Vec<PendingEntry>,
}

/// The cluster's guests and the storage contents the plan needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory {
    pub guests: BTreeMap<u32, LiveGuest>,
    /// Volume ids present, per node.
    pub volumes: BTreeMap<String, Vec<String>>,
    /// The objects the plan compares, by [`ObjectId::path`]; one that does not exist is absent.
    pub objects: BTreeMap<String, LiveObject>,
}

/// Where a plan came from, recorded in the JSON plan (`source`).
pub use model::PlanSource;

/// Config values from PVE's JSON (`{"cores":2,"cpulimit":"1.5",...}`) as text; `digest` and
/// raw `lxc` entries are dropped.
pub fn config_from_json(
    config: &serde_json::Map<String, serde_json::Value>,
) -> BTreeMap<String, String> {
    config
        .iter()
        .filter(|(key, _)| key.as_str() != "digest" && key.as_str() != "lxc")
        .filter_map(|(key, value)| {
            let text = match value {
                serde_json::Value::String(text) => text.clone(),
                serde_json::Value::Number(number) => number.to_string(),
                serde_json::Value::Bool(flag) => u8::from(*flag).to_string(),
                _ => return None,
            };
            Some((key.clone(), text))
        })
        .collect()
}

/// `GET .../pending` (`[{key, value?, pending?, delete?}]`) as entries; values as text.
pub fn pending_from_json(entries: &[serde_json::Value]) -> Vec<PendingEntry> {
    let text = |value: Option<&serde_json::Value>| match value? {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Number(number) => Some(number.to_string()),
        _ => None,
    };
    entries
        .iter()
        .filter_map(|entry| {
            let key = entry.get("key")?.as_str()?.to_owned();
            let delete = entry
                .get("delete")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
                > 0;
            Some(PendingEntry {
                key,
                value: text(entry.get("value")),
                pending: text(entry.get("pending")),
                delete,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pve_json_config_and_pending_become_text() {
        let config =
            serde_json::json!({"cores": 2, "cpulimit": "1.5", "digest": "ab", "hostname": "a"});
        let config = config_from_json(config.as_object().expect("an object"));
        let keys: Vec<(&str, &str)> = config
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            keys,
            vec![("cores", "2"), ("cpulimit", "1.5"), ("hostname", "a")]
        );
        let pending = serde_json::json!([
            {"key": "features", "value": "nesting=1", "pending": "nesting=1,keyctl=1"},
            {"key": "mp0", "value": "local-lvm:vm-1-disk-1,mp=/d", "delete": 1},
            {"key": "cores", "value": 2}
        ]);
        let pending = pending_from_json(pending.as_array().expect("an array"));
        assert_eq!(pending[0].pending.as_deref(), Some("nesting=1,keyctl=1"));
        assert!(pending[1].delete && !pending[2].delete);
        assert_eq!(pending[2].value.as_deref(), Some("2"));
    }

    #[test]
    fn secrets_do_not_print_in_debug() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "Secret(..)");
        assert_eq!(secret.fingerprint().len(), 64);
    }
}
