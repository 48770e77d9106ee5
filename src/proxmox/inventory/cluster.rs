//! Reads the cluster's own objects as the plan compares them: a collection object (HA
//! resource, group, rule, replication job, metric server) is looked up in its listing (PVE
//! answers a missing one with an error, not "not found") and then read by its path; the
//! datacenter options' grouped keys, which PVE gives as objects or property strings, become
//! property strings with their parts sorted; `/etc/hosts` becomes its entries' lines.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::InventoryError;
use crate::proxmox::client::{ObjectTarget, ProxmoxApi, PveError};
use crate::proxmox::plan::{LiveObject, config_from_json};
use crate::proxmox::types::{ObjectId, ObjectKind};

/// The object, or `None` when it does not exist.
pub(super) async fn read(
    api: &dyn ProxmoxApi,
    id: &ObjectId,
) -> Result<Option<LiveObject>, InventoryError> {
    if let Some((_, name_key)) = id.collection() {
        let listing = api.object_read(id, &ObjectTarget::Collection).await;
        let listing = match listing {
            Ok(listing) => listing,
            Err(PveError::NotFound(_)) => return Ok(None),
            // PVE 9 answers for its groups that they became rules: there is none to read,
            // and creating one fails at apply in PVE's words
            Err(e)
                if id.kind == ObjectKind::HaGroup
                    && e.to_string().contains("migrated to rules") =>
            {
                return Ok(None);
            }
            Err(e) => return Err(InventoryError::Api(e)),
        };
        if !listed(&listing, name_key, id) {
            return Ok(None);
        }
    }
    let value = match api.object_read(id, &ObjectTarget::Object).await {
        Ok(value) => value,
        Err(PveError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(InventoryError::Api(e)),
    };
    Ok(Some(LiveObject {
        fields: fields(id, &value),
        entries: None,
    }))
}

/// Whether the collection's listing names the object.
pub(crate) fn listed(listing: &Json, name_key: &str, id: &ObjectId) -> bool {
    listing
        .as_array()
        .into_iter()
        .flatten()
        .any(|item| item.get(name_key).and_then(Json::as_str) == id.name.as_deref())
}

/// The object's fields as text, as the desired side writes them.
pub(crate) fn fields(id: &ObjectId, value: &Json) -> BTreeMap<String, String> {
    let Some(object) = value.as_object() else {
        return BTreeMap::new();
    };
    let mut fields = config_from_json(object);
    if let Some((_, name_key)) = id.collection() {
        fields.remove(name_key);
    }
    match id.kind {
        ObjectKind::ClusterOptions => {
            for (key, value) in object.iter().filter(|(k, _)| GROUPED.contains(&k.as_str())) {
                if let Some(parts) = property_string(value) {
                    fields.insert(key.clone(), parts);
                }
            }
        }
        ObjectKind::NodeHosts => {
            let data = fields.remove("data").unwrap_or_default();
            fields.insert("data".to_owned(), hosts_lines(&data));
        }
        ObjectKind::HaGroup | ObjectKind::HaRule => {
            for key in ["nodes", "resources"] {
                if let Some(list) = fields.get_mut(key) {
                    *list = sorted_list(list);
                }
            }
        }
        _ => {}
    }
    fields
}

/// The datacenter options that are property strings (pve-cluster's `DataCenterConfig`).
const GROUPED: &[&str] = &[
    "bwlimit",
    "crs",
    "ha",
    "migration",
    "next-id",
    "notify",
    "replication",
    "tag-style",
    "u2f",
    "user-tag-access",
    "webauthn",
];

/// A grouped datacenter option (`crs`, `migration`, `next-id`, `bwlimit`, ...) as a
/// property string with its parts sorted by name; `None` for a plain value.
fn property_string(value: &Json) -> Option<String> {
    let mut parts: Vec<String> = match value {
        Json::Object(map) => map
            .iter()
            .filter_map(|(k, v)| {
                let v = match v {
                    Json::String(s) => s.clone(),
                    Json::Number(n) => n.to_string(),
                    Json::Bool(b) => u8::from(*b).to_string(),
                    _ => return None,
                };
                Some(format!("{k}={v}"))
            })
            .collect(),
        Json::String(s) if s.contains('=') => s.split(',').map(|p| p.trim().to_owned()).collect(),
        _ => return None,
    };
    parts.retain(|p| !p.is_empty());
    parts.sort();
    Some(parts.join(","))
}

/// A comma list sorted (PVE's node and resource lists compare as sets).
fn sorted_list(list: &str) -> String {
    let mut items: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    items.sort_unstable();
    items.join(",")
}

/// `/etc/hosts` as its entries' lines (`address name...`), comments and blank lines left
/// out, as bpg reads it back.
pub(crate) fn hosts_lines(data: &str) -> String {
    data.lines()
        .filter_map(|line| {
            let line = line.split('#').next().unwrap_or_default();
            let words: Vec<&str> = line.split_whitespace().collect();
            (words.len() >= 2).then(|| format!("{}\n", words.join(" ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_options_read_as_sorted_property_strings_either_way_pve_gives_them() {
        let object = serde_json::json!({"type": "secure", "network": "10.0.0.0/8"});
        assert_eq!(
            property_string(&object).as_deref(),
            Some("network=10.0.0.0/8,type=secure")
        );
        let text = serde_json::json!("restore=5,clone=10");
        assert_eq!(
            property_string(&text).as_deref(),
            Some("clone=10,restore=5")
        );
        assert_eq!(property_string(&serde_json::json!("en")), None);
    }

    #[test]
    fn a_hosts_file_reads_as_its_entries() {
        let file =
            "# generated\n127.0.0.1 localhost.localdomain   localhost\n\n::1 ip6-localhost # v6\n";
        assert_eq!(
            hosts_lines(file),
            "127.0.0.1 localhost.localdomain localhost\n::1 ip6-localhost\n"
        );
    }
}
