//! Reads the pools and firewall objects the plan compares: each by its own path, an IP set's
//! or a security group's comment from its collection's listing. An object that does not exist
//! (or whose guest does not) is absent from the result.

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt, stream};
use serde_json::Value as Json;

use super::InventoryError;
use crate::proxmox::client::{ObjectTarget, ProxmoxApi, PveError};
use crate::proxmox::plan::{LiveObject, ObjectEntry, config_from_json};
use crate::proxmox::types::ObjectId;

/// Object reads in flight at once.
const IN_FLIGHT: usize = 16;

/// PVE's bookkeeping in what it returns, never compared.
const BOOKKEEPING: &[&str] = &["pos", "ipversion", "members"];

/// The objects, by path.
pub(super) async fn read_objects(
    api: &dyn ProxmoxApi,
    ids: Vec<ObjectId>,
) -> Result<BTreeMap<String, LiveObject>, InventoryError> {
    let (network, ids): (Vec<ObjectId>, Vec<ObjectId>) = ids
        .into_iter()
        .partition(|id| id.kind.network_type().is_some());
    let mut objects = super::network::read_interfaces(api, network).await?;
    let read: Vec<Option<(String, LiveObject)>> = stream::iter(ids)
        .map(|id| async move {
            let live = read_object(api, &id).await?;
            Ok::<_, InventoryError>(live.map(|live| (id.key(), live)))
        })
        .buffer_unordered(IN_FLIGHT)
        .try_collect()
        .await?;
    objects.extend(read.into_iter().flatten());
    Ok(objects)
}

pub(super) fn text(value: &Json) -> BTreeMap<String, String> {
    let Some(object) = value.as_object() else {
        return BTreeMap::new();
    };
    let mut fields = config_from_json(object);
    for key in BOOKKEEPING {
        fields.remove(*key);
    }
    fields
}

/// An object's entries as PVE lists them (rules, IP set entries), in position order, without
/// PVE's bookkeeping: what the plan compares and apply reconciles against.
pub(crate) fn entries(value: &Json) -> Vec<ObjectEntry> {
    let mut list: Vec<&Json> = value
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    // rules come in position order; say so rather than trust it
    list.sort_by_key(|e| e.get("pos").and_then(Json::as_u64).unwrap_or(0));
    list.into_iter().map(text).collect()
}

/// `None` when the object (or the guest it belongs to) does not exist.
async fn read_object(
    api: &dyn ProxmoxApi,
    id: &ObjectId,
) -> Result<Option<LiveObject>, InventoryError> {
    let absent = |e: PveError| match e {
        PveError::NotFound(_) => Ok(None),
        e => Err(InventoryError::Api(e)),
    };
    if id.kind.is_cluster_family() {
        return super::cluster::read(api, id).await;
    }
    if id.is_access() {
        return super::access::read(api, id).await;
    }
    let mut live = LiveObject::default();
    if id.fields_from_listing() {
        let listing = match api.object_read(id, &ObjectTarget::Collection).await {
            Ok(listing) => listing,
            Err(e) => return absent(e),
        };
        let (_, name_key) = id.collection().unwrap_or_default();
        let found = listing
            .as_array()
            .into_iter()
            .flatten()
            .find(|item| item.get(name_key).and_then(Json::as_str) == id.name.as_deref());
        let Some(found) = found else {
            return Ok(None);
        };
        live.fields = text(found);
        live.fields.remove(name_key);
        if id.entries().is_none() {
            return Ok(Some(live));
        }
    }
    let value = match api.object_read(id, &ObjectTarget::Object).await {
        Ok(value) => value,
        Err(e) => return absent(e),
    };
    if id.entries().is_some() {
        live.entries = Some(entries(&value));
    } else {
        live.fields = text(&value);
        if id.kind == crate::proxmox::types::ObjectKind::SdnSubnet {
            super::sdn::subnet_fields(&value, &mut live.fields);
        }
        if let Some((_, name_key)) = id.collection() {
            live.fields.remove(name_key);
        }
    }
    Ok(Some(live))
}
