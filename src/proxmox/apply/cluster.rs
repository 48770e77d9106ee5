//! The cluster's own objects at apply: a metric server is created at its own path, the
//! others by a `POST` to their collection; an update sends the changed keys without those
//! only a create sets, and deletes (`delete=`) the keys the configuration no longer sets that
//! the cluster holds, as read just before; `/etc/hosts` is written whole with the digest it
//! was read with, so a change made in between is refused rather than overwritten. A
//! collection object already gone (an HA resource or a replication job purged with its guest)
//! is deleted already.

use super::Run;
use crate::proxmox::client::{ObjectTarget, ObjectWrite};
use crate::proxmox::plan::DesiredObject;
use crate::proxmox::types::ObjectId;

type Params = Vec<(String, String)>;

impl Run<'_> {
    /// Creates the object or brings its keys to the configuration's.
    pub(super) async fn put_cluster_object(
        &self,
        object: &DesiredObject,
        create: bool,
    ) -> Result<(), String> {
        let api = self.exec.api;
        let id = &object.id;
        let what = id.describe();
        let fields: Params = object
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let (write, target, params) = match id.collection() {
            Some((_, name_key)) if create => {
                if id.kind.created_at_own_path() {
                    (ObjectWrite::Post, ObjectTarget::Object, fields)
                } else {
                    let mut p = vec![(name_key.to_owned(), id.name.clone().unwrap_or_default())];
                    p.extend(fields);
                    (ObjectWrite::Post, ObjectTarget::Collection, p)
                }
            }
            _ => {
                let live = api
                    .object_read(id, &ObjectTarget::Object)
                    .await
                    .map_err(|e| format!("reading {what}: {e}"))?;
                if id.kind.written_whole() {
                    let mut p = fields;
                    if let Some(digest) = live.get("digest").and_then(|d| d.as_str()) {
                        p.push(("digest".to_owned(), digest.to_owned()));
                    }
                    (ObjectWrite::Post, ObjectTarget::Object, p)
                } else {
                    (
                        ObjectWrite::Put,
                        ObjectTarget::Object,
                        update(object, &live),
                    )
                }
            }
        };
        if params.is_empty() {
            return Ok(());
        }
        api.object_write(id, &target, write, &params)
            .await
            .map_err(|e| {
                format!(
                    "{} {what}: {e}",
                    if create { "creating" } else { "setting" }
                )
            })
    }

    /// Whether a collection object is still there (its listing names it).
    pub(super) async fn cluster_object_listed(&self, id: &ObjectId) -> Result<bool, String> {
        let Some((_, name_key)) = id.collection() else {
            return Ok(true);
        };
        let listing = self
            .exec
            .api
            .object_read(id, &ObjectTarget::Collection)
            .await
            .map_err(|e| format!("listing before deleting {}: {e}", id.describe()))?;
        Ok(crate::proxmox::inventory::cluster_listed(
            &listing, name_key, id,
        ))
    }
}

/// An update's parameters: the keys the configuration sets (not those only a create sets),
/// and `delete` for the keys it manages but no longer sets that `live` holds.
fn update(object: &DesiredObject, live: &serde_json::Value) -> Params {
    let id = &object.id;
    let create_only = id.kind.create_only();
    let have = crate::proxmox::inventory::cluster_fields(id, live);
    let mut params: Params = object
        .fields
        .iter()
        .filter(|(k, _)| !create_only.contains(&k.as_str()))
        .filter(|(k, v)| have.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if id.kind.deletes_unset() {
        let gone: Vec<&str> = object
            .labels
            .keys()
            .filter(|k| !object.fields.contains_key(*k) && !create_only.contains(&k.as_str()))
            .filter(|k| have.contains_key(*k))
            .map(String::as_str)
            .collect();
        if !gone.is_empty() {
            params.push(("delete".to_owned(), gone.join(",")));
        }
    }
    params
}
