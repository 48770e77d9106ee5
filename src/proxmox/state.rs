//! `proxmox::state` owns what atoll manages per (repository, project directory, workspace):
//! each resource address -> node and VMID (or volume id), the PVE config keys atoll last
//! applied (sensitive ones only as fingerprints), and generated values (secrets, never shown).
//! It stores them through [`StateStore`]; it must not talk to Proxmox.

use std::collections::BTreeMap;
use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::proxmox::plan::{GuestKind, ObjectEntry, StateEntry, StateValue};
use crate::proxmox::types::ObjectId;
use crate::store::{
    HeldGuest, ManagedResource, Secrets, StateScope, StateStore, StateVersion, Store, StoreError,
    VersionMeta,
};

pub use crate::store::StateScope as Scope;

mod versions;

use versions::{WholeStore, rows_of_version, version_document};

/// What kind of resource a state row describes, with its kind-specific data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Document {
    Guest {
        guest_kind: GuestKind,
        config: BTreeMap<String, Stored>,
    },
    Download {
        arguments: BTreeMap<String, String>,
    },
    Generated {
        arguments: BTreeMap<String, String>,
    },
    Object {
        object: ObjectId,
        fields: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        entries: Option<Vec<ObjectEntry>>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Stored {
    Plain(String),
    Fingerprint(String),
}

/// A generated resource in state: its arguments and its values (secrets).
#[derive(Debug, Clone)]
pub struct GeneratedEntry {
    pub address: String,
    pub resource_type: String,
    pub arguments: BTreeMap<String, String>,
    pub values: Secrets,
}

/// One project's state as loaded.
#[derive(Debug, Clone, Default)]
pub struct ProjectState {
    /// Guests and downloads, as the plan engine reads them.
    pub entries: Vec<StateEntry>,
    pub generated: Vec<GeneratedEntry>,
    /// What Proxmox VE made for an object and answered once (an API token's `value`), kept
    /// as secrets by address: given to the configuration like generated values, never shown.
    pub object_values: Vec<GeneratedEntry>,
    /// Changes whenever any row changes; plans record it, apply checks it.
    pub fingerprint: String,
}

impl ProjectState {
    /// The addresses in state that `covers` names, each with whether it is a guest: what
    /// `atoll state rm` and `atlantis state rm` forget.
    pub fn covered(&self, covers: impl Fn(&str) -> bool) -> Vec<(&str, bool)> {
        let entries = self
            .entries
            .iter()
            .map(|e| (e.address(), matches!(e, StateEntry::Guest { .. })));
        let generated = self.generated.iter().map(|g| (g.address.as_str(), false));
        entries
            .chain(generated)
            .filter(|(a, _)| covers(a))
            .collect()
    }

    /// Generated values by address, with their resource type, for the loader's known values.
    pub fn generated_values(&self) -> BTreeMap<String, GeneratedValues> {
        self.generated
            .iter()
            .chain(&self.object_values)
            .map(|g| {
                let values = g.values.0.iter();
                let values = values.map(|(k, v)| (k.clone(), v.expose_secret().to_owned()));
                let stored = GeneratedValues {
                    resource_type: g.resource_type.clone(),
                    values: values.collect(),
                };
                (g.address.clone(), stored)
            })
            .collect()
    }
}

/// One generated resource's values as the loader is given them. The type decides which are
/// sensitive; it is stored, never read back out of the address (a `for_each` key could make
/// an address look like another type's).
#[derive(Clone, PartialEq, Eq)]
pub struct GeneratedValues {
    pub resource_type: String,
    pub values: BTreeMap<String, String>,
}

impl std::fmt::Debug for GeneratedValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratedValues")
            .field("resource_type", &self.resource_type)
            .field("values", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Why state could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("reading or writing atoll's state: {0}")]
    Store(#[from] StoreError),
    #[error(
        "state row {address} is corrupt ({detail}); remove it with the store's tools or restore a backup"
    )]
    Corrupt { address: String, detail: String },
}

/// The state of one scope in one store: the server's database, or the server's API
/// (`atoll plan --remote`).
#[derive(Clone)]
pub struct StateHandle {
    store: Arc<dyn StateStore>,
    scope: StateScope,
}

impl std::fmt::Debug for StateHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateHandle")
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// One state version as people read it: who, when, why, and the state it held (generated
/// values by name only, sensitive values hidden).
#[derive(Debug, Clone)]
pub struct ShownVersion {
    pub version: StateVersion,
    pub state: ProjectState,
}

impl StateHandle {
    pub fn new(store: Arc<dyn Store>, scope: StateScope) -> Self {
        Self::over(Arc::new(WholeStore(store)), scope)
    }

    /// A handle over any state store (the API client of `--remote`).
    pub fn over(store: Arc<dyn StateStore>, scope: StateScope) -> Self {
        Self { store, scope }
    }

    pub fn scope(&self) -> &StateScope {
        &self.scope
    }

    pub async fn load(&self) -> Result<ProjectState, StateError> {
        let rows = self.store.state_list(&self.scope).await?;
        project_state(rows)
    }

    /// Writes the next state version from the rows the scope holds now; returns its number.
    pub async fn record_version(&self, meta: &VersionMeta) -> Result<u32, StateError> {
        let rows = self.store.state_list(&self.scope).await?;
        let count = u32::try_from(rows.len()).unwrap_or(u32::MAX);
        let document = version_document(&rows);
        Ok(self
            .store
            .state_version_add(&self.scope, meta, &document, count)
            .await?)
    }

    /// Every version of the scope, newest first.
    pub async fn versions(&self) -> Result<Vec<StateVersion>, StateError> {
        Ok(self.store.state_versions(&self.scope).await?)
    }

    /// One version with the state it held; `None` when there is no such version.
    pub async fn version(&self, number: u32) -> Result<Option<ShownVersion>, StateError> {
        let Some(mut version) = self.store.state_version(&self.scope, number).await? else {
            return Ok(None);
        };
        let document = version.document.take().unwrap_or_default();
        let rows = rows_of_version(document).map_err(|detail| StateError::Corrupt {
            address: format!("(state version {number})"),
            detail,
        })?;
        Ok(Some(ShownVersion {
            version,
            state: project_state(rows)?,
        }))
    }

    /// Records (or replaces) a guest, download or object entry.
    pub async fn record(&self, entry: &StateEntry) -> Result<(), StateError> {
        Ok(self.store.state_put(&self.scope, &row_of(entry)).await?)
    }

    /// Records an object with what Proxmox VE made for it (`secrets`, an API token's value);
    /// `None` keeps what the row held (a token changed in place keeps its value).
    pub async fn record_object(
        &self,
        entry: &StateEntry,
        secrets: Option<Secrets>,
    ) -> Result<(), StateError> {
        let secrets = match secrets {
            Some(secrets) => secrets,
            None => self
                .store
                .state_list(&self.scope)
                .await?
                .into_iter()
                .find(|row| row.address == entry.address())
                .map(|row| row.secrets)
                .unwrap_or_default(),
        };
        let row = ManagedResource {
            secrets,
            ..row_of(entry)
        };
        Ok(self.store.state_put(&self.scope, &row).await?)
    }

    /// Records generated values (before anything that uses them is created).
    pub async fn record_generated(&self, entry: &GeneratedEntry) -> Result<(), StateError> {
        let row = ManagedResource {
            address: entry.address.clone(),
            resource_type: entry.resource_type.clone(),
            node: String::new(),
            vm_id: None,
            volid: None,
            attributes: document_json(&Document::Generated {
                arguments: entry.arguments.clone(),
            }),
            secrets: entry.values.clone(),
        };
        Ok(self.store.state_put(&self.scope, &row).await?)
    }

    /// Renames addresses (`from` -> `to`, in order) all at once or not at all: a `moved`
    /// block's apply and `atoll state mv`. Refused when a `to` is already in state.
    pub async fn rename(&self, moves: &[(String, String)]) -> Result<(), StateError> {
        if moves.is_empty() {
            return Ok(());
        }
        Ok(self.store.state_move(&self.scope, moves).await?)
    }

    pub async fn forget(&self, address: &str) -> Result<bool, StateError> {
        Ok(self.store.state_remove(&self.scope, address).await?)
    }

    /// This project's owner tag ([`owner_tag`](crate::proxmox::owner::owner_tag)).
    pub fn owner_tag(&self) -> String {
        crate::proxmox::owner::owner_tag(&self.scope)
    }

    /// The guests with `vm_id` that other scopes of the store hold.
    pub async fn held_elsewhere(&self, vm_id: u32) -> Result<Vec<HeldGuest>, StateError> {
        let held = self.store.state_holders(vm_id).await?;
        Ok(held.into_iter().filter(|h| h.scope != self.scope).collect())
    }

    /// The scope of the store whose owner tag is `tag`, if the store knows one (a scope that
    /// holds nothing any more is not known).
    pub async fn scope_of_owner_tag(&self, tag: &str) -> Result<Option<Scope>, StateError> {
        let scopes = self.store.state_scopes().await?;
        Ok(scopes
            .into_iter()
            .find(|scope| crate::proxmox::owner::owner_tag(scope) == tag))
    }
}

/// The row that records a guest, download or object entry (without secrets).
fn row_of(entry: &StateEntry) -> ManagedResource {
    match entry {
        StateEntry::Guest {
            address,
            resource_type,
            kind,
            node,
            vm_id,
            attributes,
        } => ManagedResource {
            address: address.clone(),
            resource_type: resource_type.clone(),
            node: node.clone(),
            vm_id: Some(*vm_id),
            volid: None,
            attributes: document_json(&Document::Guest {
                guest_kind: *kind,
                config: attributes
                    .iter()
                    .map(|(k, v)| (k.clone(), stored(v)))
                    .collect(),
            }),
            secrets: Secrets::default(),
        },
        StateEntry::Download {
            address,
            resource_type,
            node,
            volid,
            arguments,
        } => ManagedResource {
            address: address.clone(),
            resource_type: resource_type.clone(),
            node: node.clone(),
            vm_id: None,
            volid: Some(volid.clone()),
            attributes: document_json(&Document::Download {
                arguments: arguments.clone(),
            }),
            secrets: Secrets::default(),
        },
        StateEntry::Object {
            address,
            resource_type,
            id,
            fields,
            entries,
        } => ManagedResource {
            address: address.clone(),
            resource_type: resource_type.clone(),
            node: id.scope.node().map(ToString::to_string).unwrap_or_default(),
            vm_id: None,
            volid: Some(id.path()),
            attributes: document_json(&Document::Object {
                object: id.clone(),
                fields: fields.clone(),
                entries: entries.clone(),
            }),
            secrets: Secrets::default(),
        },
    }
}

enum Loaded {
    Entry(StateEntry),
    Generated(GeneratedEntry),
}

fn to_entry(row: ManagedResource, document: Document) -> Result<Loaded, StateError> {
    let corrupt = |detail: &str| StateError::Corrupt {
        address: row.address.clone(),
        detail: detail.to_owned(),
    };
    Ok(match document {
        Document::Guest { guest_kind, config } => Loaded::Entry(StateEntry::Guest {
            vm_id: row.vm_id.ok_or_else(|| corrupt("guest without vm_id"))?,
            address: row.address,
            resource_type: row.resource_type,
            kind: guest_kind,
            node: row.node,
            attributes: config
                .into_iter()
                .map(|(k, v)| {
                    let value = match v {
                        Stored::Plain(text) => StateValue::Plain(text),
                        Stored::Fingerprint(text) => StateValue::Fingerprint(text),
                    };
                    (k, value)
                })
                .collect(),
        }),
        Document::Download { arguments } => Loaded::Entry(StateEntry::Download {
            volid: row.volid.ok_or_else(|| corrupt("download without volid"))?,
            address: row.address,
            resource_type: row.resource_type,
            node: row.node,
            arguments,
        }),
        Document::Object {
            object,
            fields,
            entries,
        } => Loaded::Entry(StateEntry::Object {
            address: row.address,
            resource_type: row.resource_type,
            id: object,
            fields,
            entries,
        }),
        Document::Generated { arguments } => Loaded::Generated(GeneratedEntry {
            address: row.address,
            resource_type: row.resource_type,
            arguments,
            values: row.secrets,
        }),
    })
}

fn stored(value: &StateValue) -> Stored {
    match value {
        StateValue::Plain(text) => Stored::Plain(text.clone()),
        StateValue::Fingerprint(text) => Stored::Fingerprint(text.clone()),
    }
}

fn document_json(document: &Document) -> serde_json::Value {
    // A `Document` holds only strings and maps of strings: serialisation cannot fail.
    serde_json::to_value(document).unwrap_or(serde_json::Value::Null)
}

/// A hash over every row (secrets by their own hash), stable across backends.
pub fn fingerprint(rows: &[ManagedResource]) -> String {
    let mut hasher = Sha256::new();
    let mut rows: Vec<&ManagedResource> = rows.iter().collect();
    rows.sort_by(|a, b| a.address.cmp(&b.address));
    for row in rows {
        let line = format!(
            "{}\u{1}{}\u{1}{}\u{1}{:?}\u{1}{:?}\u{1}{}\u{1}",
            row.address, row.resource_type, row.node, row.vm_id, row.volid, row.attributes
        );
        hasher.update(line.as_bytes());
        for (key, secret) in &row.secrets.0 {
            let digest = Sha256::digest(secret.expose_secret().as_bytes());
            hasher.update(format!("{key}={}\u{1}", hex::encode(digest)).as_bytes());
        }
    }
    hex::encode(hasher.finalize())
}

/// New generated values as a [`Secrets`] set.
pub fn secrets(values: BTreeMap<String, String>) -> Secrets {
    Secrets(
        values
            .into_iter()
            .map(|(k, v)| (k, SecretString::from(v)))
            .collect(),
    )
}

/// The state held by `rows`, as the engine reads it.
fn project_state(rows: Vec<ManagedResource>) -> Result<ProjectState, StateError> {
    let mut state = ProjectState {
        fingerprint: fingerprint(&rows),
        ..ProjectState::default()
    };
    for row in rows {
        let document: Document =
            serde_json::from_value(row.attributes.clone()).map_err(|e| StateError::Corrupt {
                address: row.address.clone(),
                detail: e.to_string(),
            })?;
        let secrets = (!row.secrets.0.is_empty()).then(|| GeneratedEntry {
            address: row.address.clone(),
            resource_type: row.resource_type.clone(),
            arguments: BTreeMap::new(),
            values: row.secrets.clone(),
        });
        match to_entry(row, document)? {
            Loaded::Entry(entry) => {
                state.object_values.extend(secrets);
                state.entries.push(entry);
            }
            Loaded::Generated(generated) => state.generated.push(generated),
        }
    }
    Ok(state)
}
