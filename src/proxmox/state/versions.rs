//! What `proxmox::state` adds for state versions and other stores: a whole [`Store`] seen as
//! a [`StateStore`], and a version's document (the rows without a secret, nor a sensitive
//! value's fingerprint) and its way back to rows for `atoll state show --version`.

use std::sync::Arc;

use secrecy::SecretString;
use serde::Deserialize;

use crate::store::{
    HeldGuest, ManagedResource, Secrets, StateScope, StateStore, StateVersion, Store, StoreError,
    VersionMeta,
};

/// The state part of a whole store, as a [`StateStore`] of its own.
#[derive(Debug)]
pub(super) struct WholeStore(pub(super) Arc<dyn Store>);

#[async_trait::async_trait]
impl StateStore for WholeStore {
    async fn state_list(&self, scope: &StateScope) -> Result<Vec<ManagedResource>, StoreError> {
        self.0.state().state_list(scope).await
    }
    async fn state_put(&self, scope: &StateScope, row: &ManagedResource) -> Result<(), StoreError> {
        self.0.state().state_put(scope, row).await
    }
    async fn state_remove(&self, scope: &StateScope, address: &str) -> Result<bool, StoreError> {
        self.0.state().state_remove(scope, address).await
    }
    async fn state_scopes(&self) -> Result<Vec<StateScope>, StoreError> {
        self.0.state().state_scopes().await
    }
    async fn state_holders(&self, vm_id: u32) -> Result<Vec<HeldGuest>, StoreError> {
        self.0.state().state_holders(vm_id).await
    }
    async fn state_move(
        &self,
        scope: &StateScope,
        moves: &[(String, String)],
    ) -> Result<(), StoreError> {
        self.0.state().state_move(scope, moves).await
    }
    async fn state_version_add(
        &self,
        scope: &StateScope,
        meta: &VersionMeta,
        document: &serde_json::Value,
        resources: u32,
    ) -> Result<u32, StoreError> {
        let state = self.0.state();
        state
            .state_version_add(scope, meta, document, resources)
            .await
    }
    async fn state_versions(&self, scope: &StateScope) -> Result<Vec<StateVersion>, StoreError> {
        self.0.state().state_versions(scope).await
    }
    async fn state_version(
        &self,
        scope: &StateScope,
        version: u32,
    ) -> Result<Option<StateVersion>, StoreError> {
        self.0.state().state_version(scope, version).await
    }
}

/// A version's document: the rows, with generated values by name only and every sensitive
/// fingerprint blanked (a SHA-256 of a password would let anyone who reads it try guesses).
pub(super) fn version_document(rows: &[ManagedResource]) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            serde_json::json!({
                "address": row.address,
                "resource_type": row.resource_type,
                "node": row.node,
                "vm_id": row.vm_id,
                "volid": row.volid,
                "attributes": blank_fingerprints(row.attributes.clone()),
                "generated": row.secrets.0.keys().collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// `{"fingerprint": "..."}` (a [`Stored::Fingerprint`]) becomes `{"fingerprint": ""}`.
fn blank_fingerprints(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) if map.len() == 1 && map.contains_key("fingerprint") => {
            serde_json::json!({ "fingerprint": "" })
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, blank_fingerprints(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(blank_fingerprints).collect()),
        other => other,
    }
}

/// The rows a version's document describes; generated values come back empty (by name).
pub(super) fn rows_of_version(document: serde_json::Value) -> Result<Vec<ManagedResource>, String> {
    #[derive(Deserialize)]
    struct Shown {
        address: String,
        resource_type: String,
        node: String,
        vm_id: Option<u32>,
        volid: Option<String>,
        attributes: serde_json::Value,
        generated: Vec<String>,
    }
    let rows: Vec<Shown> = serde_json::from_value(document).map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(|row| ManagedResource {
            address: row.address,
            resource_type: row.resource_type,
            node: row.node,
            vm_id: row.vm_id,
            volid: row.volid,
            attributes: row.attributes,
            secrets: Secrets(
                row.generated
                    .into_iter()
                    .map(|name| (name, SecretString::from(String::new())))
                    .collect(),
            ),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::proxmox::state::secrets;

    #[test]
    fn a_version_document_keeps_no_secret_and_no_fingerprint() {
        let row = ManagedResource {
            address: "random_password.db".to_owned(),
            resource_type: "random_password".to_owned(),
            node: "pve".to_owned(),
            vm_id: Some(101),
            volid: None,
            attributes: serde_json::json!({"kind": "guest", "guest_kind": "lxc", "config": {
                "hostname": {"plain": "web"}, "password": {"fingerprint": "5e88489"}}}),
            secrets: secrets(BTreeMap::from([(
                "result".to_owned(),
                "hunter2".to_owned(),
            )])),
        };
        let text = version_document(&[row]).to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("5e88489"), "{text}");
        assert!(
            text.contains("\"web\"") && text.contains("\"result\""),
            "{text}"
        );
        let back = rows_of_version(serde_json::from_str(&text).expect("json")).expect("rows");
        assert_eq!(back[0].secrets.0.len(), 1);
        assert_eq!(back[0].vm_id, Some(101));
    }
}
