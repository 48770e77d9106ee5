//! The store side of `proxmox::state`: rows of the `managed_resources` table, one per resource
//! address within a (repository, project directory, workspace) scope. The store keeps the
//! attribute document opaque (JSON owned by `proxmox::state`) and the generated secrets apart,
//! so `Debug` never prints them.

use std::collections::BTreeMap;
use std::fmt;

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};

use super::sql::{Db, On, Row, Sql};
use super::sqlite_commit::{Write, Written};
use super::state_versions::{self, StateVersion, VersionMeta};
use super::{PgStore, SqliteStore, StoreError};

/// Whose state: a repository (`host/owner/repo`, or `local` for the command line), a project
/// directory relative to its checkout, and a workspace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StateScope {
    pub repo: String,
    pub project_dir: String,
    pub workspace: String,
}

/// Generated values of one resource (`result` of a `random_password`). `Debug` redacts them.
#[derive(Clone, Default)]
pub struct Secrets(pub BTreeMap<String, SecretString>);

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl Secrets {
    fn to_json(&self) -> serde_json::Value {
        self.0
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::from(v.expose_secret())))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }

    fn from_json(value: serde_json::Value) -> Result<Self, StoreError> {
        let plain: BTreeMap<String, String> = serde_json::from_value(value)
            .map_err(|e| StoreError::Internal(format!("corrupt secrets column: {e}")))?;
        Ok(Self(
            plain
                .into_iter()
                .map(|(k, v)| (k, SecretString::from(v)))
                .collect(),
        ))
    }
}

/// One managed resource as stored.
#[derive(Debug, Clone)]
pub struct ManagedResource {
    pub address: String,
    pub resource_type: String,
    pub node: String,
    pub vm_id: Option<u32>,
    pub volid: Option<String>,
    /// What atoll last applied; the shape is `proxmox::state`'s.
    pub attributes: serde_json::Value,
    pub secrets: Secrets,
}

/// A guest some scope's state holds: whose, at which address, on which node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldGuest {
    pub scope: StateScope,
    pub address: String,
    pub node: String,
}

impl ManagedResource {
    /// The row as the server's state API sends it to `atoll --remote`, generated values
    /// included: a remote plan evaluates with them, as a local one does (Terraform's remote
    /// state carries them the same way). Only bearers of the API token get it.
    pub fn to_wire(&self) -> serde_json::Value {
        serde_json::json!({
            "address": self.address,
            "resource_type": self.resource_type,
            "node": self.node,
            "vm_id": self.vm_id,
            "volid": self.volid,
            "attributes": self.attributes,
            "secrets": self.secrets.to_json(),
        })
    }

    /// A row read back from [`ManagedResource::to_wire`]'s form.
    pub fn from_wire(value: serde_json::Value) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        struct Wire {
            address: String,
            resource_type: String,
            node: String,
            vm_id: Option<u32>,
            volid: Option<String>,
            attributes: serde_json::Value,
            #[serde(default)]
            secrets: serde_json::Value,
        }
        let wire: Wire = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let secrets = if wire.secrets.is_null() {
            Secrets::default()
        } else {
            Secrets::from_json(wire.secrets).map_err(|e| e.to_string())?
        };
        if wire.address.is_empty() {
            return Err("a resource needs an address".to_owned());
        }
        Ok(Self {
            address: wire.address,
            resource_type: wire.resource_type,
            node: wire.node,
            vm_id: wire.vm_id,
            volid: wire.volid,
            attributes: wire.attributes,
            secrets,
        })
    }
}

/// Managed-resource state, implemented by both backends.
#[async_trait]
pub trait StateStore: Send + Sync {
    /// Every resource of a scope, ordered by address.
    async fn state_list(&self, scope: &StateScope) -> Result<Vec<ManagedResource>, StoreError>;
    /// Inserts or replaces the row for `resource.address`.
    async fn state_put(
        &self,
        scope: &StateScope,
        resource: &ManagedResource,
    ) -> Result<(), StoreError>;
    /// Removes one address; `false` when it was not there.
    async fn state_remove(&self, scope: &StateScope, address: &str) -> Result<bool, StoreError>;
    /// Every scope that holds at least one resource.
    async fn state_scopes(&self) -> Result<Vec<StateScope>, StoreError>;
    /// Every scope holding a guest with `vm_id`, ordered by scope and address: who owns a
    /// VMID, across every project this store knows.
    async fn state_holders(&self, vm_id: u32) -> Result<Vec<HeldGuest>, StoreError>;
    /// Writes the next version of `scope` (`document` holds no secret: `proxmox::state`
    /// strips them) and returns its number (1, 2, ...).
    async fn state_version_add(
        &self,
        scope: &StateScope,
        meta: &VersionMeta,
        document: &serde_json::Value,
        resources: u32,
    ) -> Result<u32, StoreError>;
    /// Every version of `scope`, newest first, without documents.
    async fn state_versions(&self, scope: &StateScope) -> Result<Vec<StateVersion>, StoreError>;
    /// One version with its document; `None` when `scope` has no such version.
    async fn state_version(
        &self,
        scope: &StateScope,
        version: u32,
    ) -> Result<Option<StateVersion>, StoreError>;
    /// Renames addresses (`from` -> `to`, in order) in one transaction: all or none. Refused
    /// with [`StoreError::Conflict`] when a `to` is in state (and not moved away first), and
    /// with [`StoreError::NotFound`] when a `from` is not.
    async fn state_move(
        &self,
        scope: &StateScope,
        moves: &[(String, String)],
    ) -> Result<(), StoreError>;
}

/// The state of a store that keeps none.
#[derive(Debug)]
pub(super) struct NoState;

fn no_state() -> StoreError {
    StoreError::Unavailable("this store keeps no managed-resource state".to_owned())
}

#[async_trait]
impl StateStore for NoState {
    async fn state_list(&self, _: &StateScope) -> Result<Vec<ManagedResource>, StoreError> {
        Err(no_state())
    }
    async fn state_put(&self, _: &StateScope, _: &ManagedResource) -> Result<(), StoreError> {
        Err(no_state())
    }
    async fn state_remove(&self, _: &StateScope, _: &str) -> Result<bool, StoreError> {
        Err(no_state())
    }
    async fn state_scopes(&self) -> Result<Vec<StateScope>, StoreError> {
        Err(no_state())
    }
    async fn state_holders(&self, _: u32) -> Result<Vec<HeldGuest>, StoreError> {
        Err(no_state())
    }
    async fn state_version_add(
        &self,
        _: &StateScope,
        _: &VersionMeta,
        _: &serde_json::Value,
        _: u32,
    ) -> Result<u32, StoreError> {
        Err(no_state())
    }
    async fn state_versions(&self, _: &StateScope) -> Result<Vec<StateVersion>, StoreError> {
        Err(no_state())
    }
    async fn state_version(
        &self,
        _: &StateScope,
        _: u32,
    ) -> Result<Option<StateVersion>, StoreError> {
        Err(no_state())
    }
    async fn state_move(&self, _: &StateScope, _: &[(String, String)]) -> Result<(), StoreError> {
        Err(no_state())
    }
}

const COLUMNS: &str = "address, resource_type, node, vm_id, volid, attributes, secrets";

fn vm_id_of(raw: Option<i64>) -> Result<Option<u32>, StoreError> {
    raw.map(|id| {
        u32::try_from(id).map_err(|_| StoreError::Internal(format!("vm_id {id} out of range")))
    })
    .transpose()
}

fn from_row(row: &Row) -> Result<ManagedResource, StoreError> {
    Ok(ManagedResource {
        address: row.get("address")?,
        resource_type: row.get("resource_type")?,
        node: row.get("node")?,
        vm_id: vm_id_of(row.get("vm_id")?)?,
        volid: row.get("volid")?,
        attributes: row.json("attributes")?,
        secrets: Secrets::from_json(row.json("secrets")?)?,
    })
}

/// A state write; SQLite queues it on its group committer, PostgreSQL runs it at once.
#[derive(Debug)]
pub(super) enum StateWrite {
    Put(StateScope, ManagedResource),
    Remove(StateScope, String),
    Move(StateScope, Vec<(String, String)>),
}

impl StateWrite {
    /// Runs the write; `true` when a row changed.
    pub(super) async fn run(&self, on: On<'_>) -> Result<bool, StoreError> {
        let sql = match self {
            Self::Move(scope, moves) => return move_rows(scope, moves, on).await,
            Self::Put(scope, resource) => Sql::new(
                "INSERT INTO managed_resources (repo, project_dir, workspace, address,
                     resource_type, node, vm_id, volid, attributes, secrets, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, {now})
                 ON CONFLICT (repo, project_dir, workspace, address) DO UPDATE SET
                     resource_type = excluded.resource_type, node = excluded.node,
                     vm_id = excluded.vm_id, volid = excluded.volid,
                     attributes = excluded.attributes, secrets = excluded.secrets,
                     updated_at = excluded.updated_at",
            )
            .bind(&scope.repo)
            .bind(&scope.project_dir)
            .bind(&scope.workspace)
            .bind(&resource.address)
            .bind(&resource.resource_type)
            .bind(&resource.node)
            .bind(resource.vm_id.map(i64::from))
            .bind(&resource.volid)
            .bind(&resource.attributes)
            .bind(resource.secrets.to_json()),
            Self::Remove(scope, address) => Sql::new(
                "DELETE FROM managed_resources
                 WHERE repo = $1 AND project_dir = $2 AND workspace = $3 AND address = $4",
            )
            .bind(&scope.repo)
            .bind(&scope.project_dir)
            .bind(&scope.workspace)
            .bind(address),
        };
        Ok(sql.execute(on).await? > 0)
    }
}

/// Each rename in turn, on one connection inside the caller's transaction, so a refusal part
/// way leaves nothing renamed.
async fn move_rows(
    scope: &StateScope,
    moves: &[(String, String)],
    mut on: On<'_>,
) -> Result<bool, StoreError> {
    let exists = |address: &str| {
        Sql::new(
            "SELECT address FROM managed_resources
             WHERE repo = $1 AND project_dir = $2 AND workspace = $3 AND address = $4",
        )
        .bind(&scope.repo)
        .bind(&scope.project_dir)
        .bind(&scope.workspace)
        .bind(address)
    };
    for (from, to) in moves {
        if exists(to).fetch_optional(on.reborrow()).await?.is_some() {
            return Err(StoreError::Conflict(format!(
                "cannot move {from} to {to}: {to} is already in state; remove it first \
                 (atoll state rm {to}) or choose another address"
            )));
        }
        let moved = Sql::new(
            "UPDATE managed_resources SET address = $5, updated_at = {now}
             WHERE repo = $1 AND project_dir = $2 AND workspace = $3 AND address = $4",
        )
        .bind(&scope.repo)
        .bind(&scope.project_dir)
        .bind(&scope.workspace)
        .bind(from)
        .bind(to)
        .execute(on.reborrow())
        .await?;
        if moved == 0 {
            return Err(StoreError::NotFound(format!(
                "cannot move {from}: it is not in state (atoll state list shows what is)"
            )));
        }
    }
    Ok(!moves.is_empty())
}

/// Every resource of a scope, ordered by address.
async fn list(db: &Db, scope: &StateScope) -> Result<Vec<ManagedResource>, StoreError> {
    let rows = Sql::new(format!(
        "SELECT {COLUMNS} FROM managed_resources
         WHERE repo = $1 AND project_dir = $2 AND workspace = $3 ORDER BY address"
    ))
    .bind(&scope.repo)
    .bind(&scope.project_dir)
    .bind(&scope.workspace)
    .fetch_all(db.read())
    .await?;
    rows.iter().map(from_row).collect()
}

async fn scopes(db: &Db) -> Result<Vec<StateScope>, StoreError> {
    let rows = Sql::new(
        "SELECT DISTINCT repo, project_dir, workspace FROM managed_resources
         ORDER BY repo, project_dir, workspace",
    )
    .fetch_all(db.read())
    .await?;
    rows.iter()
        .map(|row| {
            Ok(StateScope {
                repo: row.get("repo")?,
                project_dir: row.get("project_dir")?,
                workspace: row.get("workspace")?,
            })
        })
        .collect()
}

async fn holders(db: &Db, vm_id: u32) -> Result<Vec<HeldGuest>, StoreError> {
    let rows = Sql::new(
        "SELECT repo, project_dir, workspace, address, node FROM managed_resources
         WHERE vm_id = $1 ORDER BY repo, project_dir, workspace, address",
    )
    .bind(i64::from(vm_id))
    .fetch_all(db.read())
    .await?;
    rows.iter()
        .map(|row| {
            Ok(HeldGuest {
                scope: StateScope {
                    repo: row.get("repo")?,
                    project_dir: row.get("project_dir")?,
                    workspace: row.get("workspace")?,
                },
                address: row.get("address")?,
                node: row.get("node")?,
            })
        })
        .collect()
}

fn moved(written: Written) -> Result<bool, StoreError> {
    match written {
        Written::Moved(changed) => Ok(changed),
        other => Err(StoreError::Internal(format!(
            "unexpected answer to a state write: {other:?}"
        ))),
    }
}

/// SQLite: reads on the reader pool, writes through the group committer.
#[async_trait]
impl StateStore for SqliteStore {
    async fn state_list(&self, scope: &StateScope) -> Result<Vec<ManagedResource>, StoreError> {
        list(&self.db, scope).await
    }

    async fn state_put(
        &self,
        scope: &StateScope,
        resource: &ManagedResource,
    ) -> Result<(), StoreError> {
        let write = StateWrite::Put(scope.clone(), resource.clone());
        moved(self.committer.write(Write::State(write)).await?).map(|_| ())
    }

    async fn state_remove(&self, scope: &StateScope, address: &str) -> Result<bool, StoreError> {
        let write = StateWrite::Remove(scope.clone(), address.to_owned());
        moved(self.committer.write(Write::State(write)).await?)
    }

    async fn state_move(
        &self,
        scope: &StateScope,
        moves: &[(String, String)],
    ) -> Result<(), StoreError> {
        let write = StateWrite::Move(scope.clone(), moves.to_vec());
        moved(self.committer.write(Write::State(write)).await?).map(|_| ())
    }

    async fn state_scopes(&self) -> Result<Vec<StateScope>, StoreError> {
        scopes(&self.db).await
    }

    async fn state_holders(&self, vm_id: u32) -> Result<Vec<HeldGuest>, StoreError> {
        holders(&self.db, vm_id).await
    }

    async fn state_version_add(
        &self,
        scope: &StateScope,
        meta: &VersionMeta,
        document: &serde_json::Value,
        resources: u32,
    ) -> Result<u32, StoreError> {
        state_versions::add(&self.db, scope, meta, document, resources).await
    }

    async fn state_versions(&self, scope: &StateScope) -> Result<Vec<StateVersion>, StoreError> {
        state_versions::list(&self.db, scope).await
    }

    async fn state_version(
        &self,
        scope: &StateScope,
        version: u32,
    ) -> Result<Option<StateVersion>, StoreError> {
        state_versions::get(&self.db, scope, version).await
    }
}

#[async_trait]
impl StateStore for PgStore {
    async fn state_list(&self, scope: &StateScope) -> Result<Vec<ManagedResource>, StoreError> {
        list(&self.db, scope).await
    }

    async fn state_put(
        &self,
        scope: &StateScope,
        resource: &ManagedResource,
    ) -> Result<(), StoreError> {
        let write = StateWrite::Put(scope.clone(), resource.clone());
        write.run(self.db.write()).await.map(|_| ())
    }

    async fn state_remove(&self, scope: &StateScope, address: &str) -> Result<bool, StoreError> {
        let write = StateWrite::Remove(scope.clone(), address.to_owned());
        write.run(self.db.write()).await
    }

    async fn state_move(
        &self,
        scope: &StateScope,
        moves: &[(String, String)],
    ) -> Result<(), StoreError> {
        let mut tx = self.db.begin().await?;
        StateWrite::Move(scope.clone(), moves.to_vec())
            .run((&mut tx).into())
            .await?;
        tx.commit().await
    }

    async fn state_scopes(&self) -> Result<Vec<StateScope>, StoreError> {
        scopes(&self.db).await
    }

    async fn state_holders(&self, vm_id: u32) -> Result<Vec<HeldGuest>, StoreError> {
        holders(&self.db, vm_id).await
    }

    async fn state_version_add(
        &self,
        scope: &StateScope,
        meta: &VersionMeta,
        document: &serde_json::Value,
        resources: u32,
    ) -> Result<u32, StoreError> {
        state_versions::add(&self.db, scope, meta, document, resources).await
    }

    async fn state_versions(&self, scope: &StateScope) -> Result<Vec<StateVersion>, StoreError> {
        state_versions::list(&self.db, scope).await
    }

    async fn state_version(
        &self,
        scope: &StateScope,
        version: u32,
    ) -> Result<Option<StateVersion>, StoreError> {
        state_versions::get(&self.db, scope, version).await
    }
}
