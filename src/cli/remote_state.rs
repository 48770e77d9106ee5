//! [`RemoteState`]: an atoll server's state as a [`StateStore`] over its API, so the engine's
//! `StateHandle` works on it unchanged. Reads need only the token; every write carries the
//! project lock this run holds, and the server refuses a write without it.

use async_trait::async_trait;
use reqwest::Method;
use serde_json::Value;
use uuid::Uuid;

use super::remote::{Remote, RemoteError, query};
use crate::store::{
    HeldGuest, ManagedResource, StateScope, StateStore, StateVersion, StoreError, VersionMeta,
    VersionReason,
};

/// The server's state as a [`StateStore`]; writes need the lock this run holds.
#[derive(Debug)]
pub(super) struct RemoteState {
    pub(super) remote: std::sync::Arc<Remote>,
    pub(super) lock: Option<Uuid>,
}

impl RemoteState {
    fn write_query<'a>(
        &'a self,
        scope: &'a StateScope,
        lock: &'a str,
    ) -> Vec<(&'static str, &'a str)> {
        let mut q = query(scope);
        q.push(("lock", lock));
        q
    }

    fn lock(&self) -> Result<String, StoreError> {
        self.lock.map(|id| id.to_string()).ok_or_else(|| {
            StoreError::Conflict(
                "this run holds no lock on the server, so it cannot write state".to_owned(),
            )
        })
    }
}

#[async_trait]
impl StateStore for RemoteState {
    async fn state_list(&self, scope: &StateScope) -> Result<Vec<ManagedResource>, StoreError> {
        let (_, answer) = self
            .remote
            .call(Method::GET, "/state", &query(scope), None)
            .await?;
        let rows = answer
            .get("resources")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        rows.into_iter()
            .map(|row| {
                ManagedResource::from_wire(row).map_err(|e| {
                    StoreError::Internal(format!(
                        "the server sent a state row atoll cannot read: {e}"
                    ))
                })
            })
            .collect()
    }

    async fn state_put(&self, scope: &StateScope, row: &ManagedResource) -> Result<(), StoreError> {
        let lock = self.lock()?;
        let query = self.write_query(scope, &lock);
        self.remote
            .call(Method::PUT, "/state/resource", &query, Some(row.to_wire()))
            .await?;
        Ok(())
    }

    async fn state_remove(&self, scope: &StateScope, address: &str) -> Result<bool, StoreError> {
        let lock = self.lock()?;
        let mut query = self.write_query(scope, &lock);
        query.push(("address", address));
        let (_, answer) = self
            .remote
            .call(Method::DELETE, "/state/resource", &query, None)
            .await?;
        Ok(answer
            .get("removed")
            .and_then(Value::as_bool)
            .unwrap_or(false))
    }

    async fn state_scopes(&self) -> Result<Vec<StateScope>, StoreError> {
        let (_, answer) = self
            .remote
            .call(Method::GET, "/state/scopes", &[], None)
            .await?;
        let scopes = answer
            .get("scopes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(scopes
            .iter()
            .filter_map(|s| {
                Some(StateScope {
                    repo: s.get("repo")?.as_str()?.to_owned(),
                    project_dir: s.get("dir")?.as_str()?.to_owned(),
                    workspace: s.get("workspace")?.as_str()?.to_owned(),
                })
            })
            .collect())
    }

    async fn state_move(
        &self,
        scope: &StateScope,
        moves: &[(String, String)],
    ) -> Result<(), StoreError> {
        let lock = self.lock()?;
        let query = self.write_query(scope, &lock);
        self.remote
            .call(
                Method::POST,
                "/state/move",
                &query,
                Some(serde_json::json!({ "moves": moves })),
            )
            .await?;
        Ok(())
    }

    async fn state_holders(&self, vm_id: u32) -> Result<Vec<HeldGuest>, StoreError> {
        let id = vm_id.to_string();
        let (_, answer) = self
            .remote
            .call(
                Method::GET,
                "/state/holders",
                &[("vm_id", id.as_str())],
                None,
            )
            .await?;
        let held = answer
            .get("holders")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        held.iter()
            .map(|h| {
                let text = |name: &str| {
                    h.get(name)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| {
                            StoreError::Internal(format!(
                                "the server sent a holder of vm_id {vm_id} without {name}"
                            ))
                        })
                };
                Ok(HeldGuest {
                    scope: StateScope {
                        repo: text("repo")?,
                        project_dir: text("dir")?,
                        workspace: text("workspace")?,
                    },
                    address: text("address")?,
                    node: text("node")?,
                })
            })
            .collect()
    }

    /// The server writes the version from its own rows; `document` and `meta.actor` here
    /// are this run's word only for who and which commit.
    async fn state_version_add(
        &self,
        scope: &StateScope,
        meta: &VersionMeta,
        _document: &Value,
        _resources: u32,
    ) -> Result<u32, StoreError> {
        debug_assert!(meta.reason == VersionReason::RemoteApply);
        let lock = self
            .lock
            .ok_or_else(|| StoreError::Conflict("this run holds no lock".to_owned()))?;
        Ok(self
            .remote
            .add_version(scope, lock, &meta.actor, meta.commit.as_deref())
            .await?)
    }

    async fn state_versions(&self, scope: &StateScope) -> Result<Vec<StateVersion>, StoreError> {
        let (_, answer) = self
            .remote
            .call(Method::GET, "/state/versions", &query(scope), None)
            .await?;
        serde_json::from_value(answer.get("versions").cloned().unwrap_or_default()).map_err(|e| {
            StoreError::Internal(format!("the server sent versions atoll cannot read: {e}"))
        })
    }

    async fn state_version(
        &self,
        scope: &StateScope,
        version: u32,
    ) -> Result<Option<StateVersion>, StoreError> {
        let path = format!("/state/versions/{version}");
        match self
            .remote
            .call(Method::GET, &path, &query(scope), None)
            .await
        {
            Ok((_, answer)) => {
                serde_json::from_value(answer.get("version").cloned().unwrap_or_default())
                    .map(Some)
                    .map_err(|e| {
                        StoreError::Internal(format!(
                            "the server sent a version atoll cannot read: {e}"
                        ))
                    })
            }
            Err(RemoteError::Refused { status: 404, .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}
