//! `PUT /nodes/{node}/lxc/{vmid}/resize`: grows `rootfs`/`mpN` (a `resize` task), refuses
//! shrinking and no-op sizes, checks free space on the volume's storage.

use std::sync::Arc;

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::{Params, SimState, data, parse_vmid};
use crate::pvesim::auth::Caller;
use crate::pvesim::error::{ApiError, ApiResult};
use crate::pvesim::model::GuestKind;
use crate::pvesim::server::Sim;
use crate::pvesim::{propstr, worker};

/// `PUT .../resize` with `disk` and `size` (`+` = relative).
pub(crate) async fn resize(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    resize_task(state.0, caller, node, parse_vmid(&vmid)?, params)
}

/// `PUT .../resize`: grows a volume (`+` relative), refuses shrinking; runs as a task.
fn resize_task(
    sim: Arc<Sim>,
    caller: Caller,
    node: String,
    vmid: u32,
    params: Params,
) -> ApiResult<Response> {
    let disk = params
        .get("disk")?
        .ok_or_else(|| ApiError::param("disk", "property is missing and it is not optional"))?
        .to_owned();
    let size = params
        .get("size")?
        .ok_or_else(|| ApiError::param("size", "property is missing and it is not optional"))?
        .to_owned();
    let (relative, amount) = match size.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, size.as_str()),
    };
    let bytes = propstr::parse_size(amount)
        .ok_or_else(|| ApiError::param("size", "value does not match the regex pattern"))?;
    let upid =
        {
            let mut cluster = sim.cluster();
            let guest = cluster.guest_at(&node, GuestKind::Lxc, vmid)?;
            guest.check_lock()?;
            if let Some(d) = params.get("digest")?
                && d != guest.conf.digest()
            {
                return Err(ApiError::die(
                    "detected modified configuration - file changed by other user? Try again.",
                ));
            }
            let value =
                guest.conf.main.get(&disk).cloned().ok_or_else(|| {
                    ApiError::die(format!("parameter '{disk}' not set in CT {vmid}"))
                })?;
            let mut props = propstr::parse(&value, Some("volume")).map_err(ApiError::die)?;
            let current = props
                .get("size")
                .and_then(|s| propstr::parse_size(s))
                .unwrap_or(0);
            let new = if relative { current + bytes } else { bytes };
            if new < current {
                return Err(ApiError::die("unable to shrink disk size"));
            }
            if new == current {
                return Err(ApiError::die("disk is already at specified size"));
            }
            props.insert("size".to_owned(), propstr::format_size(new));
            let required: &[&str] = if disk == "rootfs" { &[] } else { &["mp"] };
            let printed = propstr::print(&props, Some("volume"), required);
            let volid = props.get("volume").cloned().unwrap_or_default();
            let task = cluster.new_task(&node, "resize", &vmid.to_string(), &caller.upid_user());
            (task, printed, volid, new)
        };
    let (task, printed, volid, new) = upid;
    let node2 = node;
    worker::spawn(
        &sim,
        task.clone(),
        "resize",
        Some(vmid),
        Box::new(move |cluster, log, fail| {
            if let Some(msg) = fail {
                return Err(msg);
            }
            if let Some(sid) = crate::pvesim::storage::storage_of(&volid)
                && let Ok(storage) = cluster.storage_mut(&node2, sid)
            {
                let grow = new.saturating_sub(storage.volumes.get(&volid).map_or(0, |v| v.size));
                if grow > storage.avail() {
                    return Err(format!(
                        "not enough free space ({} < {grow})",
                        storage.avail()
                    ));
                }
                if let Some(v) = storage.volumes.get_mut(&volid) {
                    v.size = new;
                }
            }
            log.push(format!(
                "Size of logical volume {volid} changed to {}.",
                propstr::format_size(new)
            ));
            if let Some(g) = cluster.guests.get_mut(&vmid) {
                g.conf.main.insert(disk, printed);
            }
            Ok(0)
        }),
    );
    Ok(data(json!(task)))
}
