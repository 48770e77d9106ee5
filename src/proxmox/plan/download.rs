//! Downloads (`proxmox_virtual_environment_download_file`): every argument forces
//! replacement; the file's presence comes from the storage content lists.

use serde_json::Value as Json;

use super::attrs::change;
use super::change::{Action, AttributeChange, ResourceChange};
use super::model::{DesiredDownload, Inventory, StateEntry, VolumeSource};

/// The bpg arguments of a download, by name, as JSON values.
fn arguments(file: &DesiredDownload) -> Vec<(String, String)> {
    let mut out = vec![
        ("node_name".to_owned(), file.node.clone()),
        ("datastore_id".to_owned(), file.datastore.clone()),
        ("file_name".to_owned(), file.file_name.clone()),
    ];
    // an OCI image is always `vztmpl`, and bpg has no argument for it
    if file.source != VolumeSource::Registry {
        out.push(("content_type".to_owned(), file.content_type.clone()));
    }
    out.extend(file.arguments.iter().map(|(k, v)| (k.clone(), v.clone())));
    out.sort();
    out
}

fn present(inventory: &Inventory, node: &str, volid: &str) -> bool {
    inventory
        .volumes
        .get(node)
        .is_some_and(|volumes| volumes.iter().any(|v| v == volid))
}

/// The plan for one desired download.
pub(crate) fn change_for(
    file: &DesiredDownload,
    prior: Option<&StateEntry>,
    inventory: &Inventory,
) -> ResourceChange {
    let mut resource = ResourceChange::no_op(&file.address, &file.resource_type, &file.node);
    let volid = file.volid();
    let created = |resource: &mut ResourceChange| {
        resource.actions = vec![Action::Create];
        resource.attributes = arguments(file)
            .into_iter()
            .map(|(name, value)| change(name.clone(), &name, Json::Null, Json::from(value)))
            .collect();
    };
    let Some(StateEntry::Download {
        node,
        volid: had,
        arguments: had_args,
        ..
    }) = prior
    else {
        if present(inventory, &file.node, &volid) {
            let what = match (&file.source, file.arguments.get("overwrite")) {
                (VolumeSource::Url, _) => "the download will refuse to overwrite it",
                (VolumeSource::Registry, _) => "the pull will refuse to overwrite it",
                (VolumeSource::Bytes(_), Some(no)) if no == "false" => {
                    "the upload will refuse to overwrite it (overwrite = false)"
                }
                (VolumeSource::Bytes(_), _) => "the upload will overwrite it",
            };
            resource.drift.notes.push(format!(
                "{volid} already exists on node {} and is not managed by atoll; {what}",
                file.node
            ));
        }
        created(&mut resource);
        return resource;
    };
    let mut before = vec![("node_name".to_owned(), node.clone())];
    before.extend(volid_parts(had));
    before.extend(had_args.iter().map(|(k, v)| (k.clone(), v.clone())));
    let changed: Vec<AttributeChange> = arguments(file)
        .into_iter()
        .filter_map(|(name, want)| {
            let old = before
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone());
            (old.as_deref() != Some(want.as_str())).then(|| {
                let old = old.map_or(Json::Null, Json::from);
                change(name.clone(), &name, old, Json::from(want))
            })
        })
        .collect();
    if !changed.is_empty() {
        resource.actions = vec![Action::Delete, Action::Create];
        resource.attributes = changed;
    } else if !present(inventory, &file.node, &volid) {
        resource.drift.notes.push(format!(
            "{volid} is missing from node {} (removed outside atoll); it will be downloaded again",
            file.node
        ));
        created(&mut resource);
    }
    resource
}

/// `local:vztmpl/debian.tar.zst` -> datastore, content type and file name.
fn volid_parts(volid: &str) -> Vec<(String, String)> {
    let Some((datastore, rest)) = volid.split_once(':') else {
        return Vec::new();
    };
    let Some((content, file)) = rest.split_once('/') else {
        return Vec::new();
    };
    vec![
        ("datastore_id".to_owned(), datastore.to_owned()),
        ("content_type".to_owned(), content.to_owned()),
        ("file_name".to_owned(), file.to_owned()),
    ]
}

/// The plan for a download in state that the configuration no longer declares.
pub(crate) fn delete(entry: &StateEntry) -> ResourceChange {
    let (address, resource_type, node, volid) = match entry {
        StateEntry::Download {
            address,
            resource_type,
            node,
            volid,
            ..
        } => (address, resource_type, node, volid.clone()),
        StateEntry::Guest {
            address,
            resource_type,
            node,
            vm_id,
            ..
        } => (address, resource_type, node, vm_id.to_string()),
        StateEntry::Object {
            address,
            resource_type,
            id,
            ..
        } => (address, resource_type, address, id.path()),
    };
    let mut resource = ResourceChange::no_op(address, resource_type, node);
    resource.actions = vec![Action::Delete];
    resource.attributes = vec![change("id".to_owned(), "id", Json::from(volid), Json::Null)];
    resource
}
