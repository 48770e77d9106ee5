//! `POST /nodes/{node}/storage/{storage}/oci-registry-pull` (pve-storage
//! `API2/Storage/Status.pm` `oci_registry_pull`): an `ociregistrypull` task that copies an
//! image from the scenario's registry into a file-based storage's `vztmpl` content as
//! `<filename>.tar`, with PVE's parameter, storage and existing-file checks.

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::{Params, SimState, data};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, now};
use crate::oci::{normalize_filename, valid_reference};
use crate::storage::Volume;
use crate::worker;

/// The simulated size of a pulled image archive.
const SIZE: u64 = 52_428_800;

pub(crate) async fn oci_registry_pull(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, sid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let mut errors = std::collections::BTreeMap::new();
    for key in params.keys() {
        if !["reference", "filename"].contains(&key.as_str()) {
            errors.insert(
                key.clone(),
                "property is not defined in schema and the schema does not allow additional \
                 properties"
                    .to_owned(),
            );
        }
    }
    let reference = params.get("reference")?.map(str::to_owned);
    match &reference {
        None => {
            errors.insert(
                "reference".to_owned(),
                "property is missing and it is not optional".to_owned(),
            );
        }
        Some(r) if !valid_reference(r) => {
            errors.insert(
                "reference".to_owned(),
                "value does not match the regex pattern".to_owned(),
            );
        }
        Some(_) => {}
    }
    let filename = params.get("filename")?.map(str::to_owned);
    match filename.as_deref().map(str::len) {
        Some(0) => {
            errors.insert(
                "filename".to_owned(),
                "value must be at least 1 characters long".to_owned(),
            );
        }
        Some(n) if n > 255 => {
            errors.insert(
                "filename".to_owned(),
                "value may only be 255 characters long".to_owned(),
            );
        }
        _ => {}
    }
    if !errors.is_empty() {
        return Err(ApiError::params(errors));
    }
    let reference = reference.unwrap_or_default();
    let name = format!(
        "{}.tar",
        normalize_filename(filename.as_deref().unwrap_or(&reference))
    );
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        cluster.node(&node)?;
        let storage = cluster.storage_mut(&node, &sid)?;
        if !storage.is_file_based() {
            return Err(ApiError::die(format!(
                "can't upload to storage type '{}', not a file based storage!",
                storage.stype
            )));
        }
        if !storage.content.iter().any(|c| c == "vztmpl") {
            return Err(ApiError::die(format!(
                "storage '{sid}' is not configured for content-type 'vztmpl'"
            )));
        }
        let volid = format!("{sid}:vztmpl/{name}");
        if storage.volumes.contains_key(&volid) {
            return Err(ApiError::die(format!(
                "refusing to override existing file '{name}'"
            )));
        }
        cluster.new_task(&node, "ociregistrypull", &name, &caller.upid_user())
    };
    let body = Box::new(move |cluster: &mut Cluster, log: &mut Vec<String>, fail| {
        pull(cluster, &node, &sid, &reference, &name, log, fail)
    });
    worker::spawn(&sim, upid.clone(), "ociregistrypull", None, body);
    Ok(data(json!(upid)))
}

/// The task: `skopeo copy docker://<reference> oci-archive:<path>`, then the rename.
fn pull(
    cluster: &mut Cluster,
    node: &str,
    sid: &str,
    reference: &str,
    name: &str,
    log: &mut Vec<String>,
    fail: Option<String>,
) -> Result<u32, String> {
    let path = format!("/var/lib/vz/template/cache/{name}");
    let skopeo = format!("skopeo copy docker://{reference} oci-archive:{path}.tmp");
    log.push("Getting image source signatures".to_owned());
    let Some(image) = cluster.oci.registry.get(reference).cloned() else {
        log.push(format!(
            "time=\"0\" level=fatal msg=\"initializing source docker://{reference}: reading \
             manifest in {reference}: manifest unknown\""
        ));
        return Err(format!("command '{skopeo}' failed: exit code 1"));
    };
    if let Some(msg) = fail {
        return Err(msg);
    }
    let storage = cluster.storage_mut(node, sid).map_err(|e| e.message)?;
    if SIZE > storage.avail() {
        return Err(format!("command '{skopeo}' failed: exit code 1"));
    }
    let volid = format!("{sid}:vztmpl/{name}");
    storage.volumes.insert(
        volid.clone(),
        Volume {
            volid: volid.clone(),
            content: "vztmpl".to_owned(),
            size: SIZE,
            vmid: None,
            ctime: now(),
        },
    );
    log.push("Writing manifest to image destination".to_owned());
    cluster.oci.archives.insert(volid, image);
    Ok(0)
}
