//! Reads the network interfaces of the nodes the configuration or state has interfaces on:
//! one listing per node (`GET /nodes/{node}/network`, which shows the pending file when
//! there is one), every interface of it kept under its path, so the plan also sees the
//! bridges an interface is a port of, and whether the node has changes written but not
//! applied (which the next reload applies too). A comment comes back as PVE reads it from the file,
//! one line each with its newline; the trailing newline is dropped, as bpg does.

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, TryStreamExt, stream};
use serde_json::Value as Json;

use super::InventoryError;
use crate::proxmox::client::{ProxmoxApi, PveError};
use crate::proxmox::plan::LiveObject;
use crate::proxmox::types::ObjectId;

/// Node listings in flight at once.
const IN_FLIGHT: usize = 4;

/// The nodes `ids` has network interfaces on.
pub(super) fn nodes_of(ids: &[ObjectId]) -> BTreeSet<String> {
    ids.iter()
        .filter(|id| id.kind.network_type().is_some())
        .filter_map(|id| id.scope.node().map(ToString::to_string))
        .collect()
}

/// Every interface of the nodes of `ids`, by path.
pub(super) async fn read_interfaces(
    api: &dyn ProxmoxApi,
    ids: Vec<ObjectId>,
) -> Result<BTreeMap<String, LiveObject>, InventoryError> {
    let mut one_per_node: BTreeMap<String, ObjectId> = BTreeMap::new();
    for id in ids {
        if let Some(node) = id.scope.node() {
            one_per_node.entry(node.to_string()).or_insert(id);
        }
    }
    let listings: Vec<Vec<(String, LiveObject)>> = stream::iter(one_per_node.into_values())
        .map(|id| async move {
            let Some(node) = id.scope.node() else {
                return Ok(Vec::new());
            };
            let (listing, changes) = match api.network_list(node).await {
                Ok(answer) => answer,
                // an unknown node has no interfaces: each is planned as created
                Err(PveError::NotFound(_)) => (Json::Null, None),
                Err(e) => return Err(InventoryError::Api(e)),
            };
            let mut found = interfaces(&id, &listing);
            found.extend(pending(&id, changes.as_deref()));
            Ok::<_, InventoryError>(found)
        })
        .buffer_unordered(IN_FLIGHT)
        .try_collect()
        .await?;
    Ok(listings.into_iter().flatten().collect())
}

/// What the node has written but not applied, kept under the collection's own path as the
/// number of lines PVE's diff changes (`pending`); nothing when the diff is empty.
fn pending(id: &ObjectId, changes: Option<&str>) -> Option<(String, LiveObject)> {
    let (base, _) = id.collection()?;
    let lines = changes?
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .count();
    let fields = BTreeMap::from([("pending".to_owned(), lines.to_string())]);
    (lines > 0).then(|| {
        let live = LiveObject {
            fields,
            entries: None,
        };
        (base, live)
    })
}

/// The listed interfaces under their paths (`id` is any interface of the node).
fn interfaces(id: &ObjectId, listing: &Json) -> Vec<(String, LiveObject)> {
    let Some((base, name_key)) = id.collection() else {
        return Vec::new();
    };
    listing
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let name = item.get(name_key)?.as_str()?;
            // an interface name PVE accepts has no separator; never build a path from one
            if name.contains('/') {
                return None;
            }
            let mut fields = super::objects::text(item);
            fields.remove(name_key);
            if let Some(comment) = fields.get_mut("comments") {
                *comment = comment.trim_end().to_owned();
            }
            let live = LiveObject {
                fields,
                entries: None,
            };
            Some((format!("{base}/{name}"), live))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::types::{ObjectKind, Scope};

    #[test]
    fn every_listed_interface_is_kept_under_its_path_with_its_comment_trimmed() {
        let node = "pve".parse().expect("a node");
        let id = ObjectId::new(ObjectKind::LinuxBridge, Scope::Node { node }, Some("vmbr1"))
            .expect("a name");
        let listing = serde_json::json!([
            {"iface": "vmbr0", "type": "bridge", "bridge_ports": "eno1", "comments": "uplink\n", "autostart": 1},
            {"iface": "eno1", "type": "eth", "exists": 1},
            {"iface": "../x", "type": "eth"}
        ]);
        let found: BTreeMap<String, LiveObject> = interfaces(&id, &listing).into_iter().collect();
        assert_eq!(found.len(), 2);
        let vmbr0 = &found["/nodes/pve/network/vmbr0"];
        assert_eq!(vmbr0.fields["comments"], "uplink");
        assert_eq!(vmbr0.fields["autostart"], "1");
        assert_eq!(vmbr0.fields["bridge_ports"], "eno1");
    }

    #[test]
    fn a_pending_diff_is_counted_and_an_empty_one_is_nothing() {
        let node = "pve".parse().expect("a node");
        let id = ObjectId::new(ObjectKind::LinuxBridge, Scope::Node { node }, Some("vmbr1"))
            .expect("a name");
        let diff = "--- /etc/network/interfaces\n+++ /etc/network/interfaces.new\n@@ -1 +1 @@\n-auto vmbr1\n+iface vmbr1 inet manual\n";
        let (path, live) = pending(&id, Some(diff)).expect("pending");
        assert_eq!(path, "/nodes/pve/network");
        assert_eq!(live.fields["pending"], "2");
        assert!(pending(&id, Some("--- a\n+++ b\n")).is_none());
        assert!(pending(&id, None).is_none());
    }
}
