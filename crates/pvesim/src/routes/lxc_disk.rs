//! `PUT /nodes/{node}/lxc/{vmid}/resize`: grows `rootfs`/`mpN` (a `resize` task) from the
//! volume's real size, refuses shrinking and no-op sizes, checks free space on its storage.

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, GuestKind};
use crate::storage::storage_of;
use crate::{propstr, worker};

/// `PUT .../resize` with `disk` and `size` (`+` = relative).
pub(crate) async fn resize(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, vmid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = parse_vmid(&vmid)?;
    let sim = state.0;
    let (upid, job) = {
        let mut cluster = sim.cluster();
        let job = Resize::check(&mut cluster, &node, vmid, &params)?;
        (
            cluster.new_task(&node, "resize", &vmid.to_string(), &caller.upid_user()),
            job,
        )
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| match fail {
            Some(msg) => Err(msg),
            None => job.run(cluster, log),
        },
    );
    worker::spawn(&sim, upid.clone(), "resize", Some(vmid), body);
    Ok(data(json!(upid)))
}

/// `parse_volume` of a `rootfs`/`mpN` value; an unset mount point fails as the empty property
/// string does (`format error`, a 500).
fn parse_mount_point(disk: &str, value: &str) -> ApiResult<propstr::Props> {
    let desc = if disk == "rootfs" {
        crate::api_schema::lxc::ROOTFS
    } else {
        crate::api_schema::lxc::MOUNT_POINT
    };
    crate::api_schema::parse_props(desc, "", value)
        .map_err(|e| ApiError::die(e.replace("\n.", "\n")))
}

/// A checked resize: the volume, its new size and the key's new value.
struct Resize {
    node: String,
    vmid: u32,
    disk: String,
    volid: String,
    new_size: u64,
    printed: String,
}

impl Resize {
    /// The synchronous checks of `resize_vm` (`$load_and_check`): lock, digest, the mount
    /// point and its volume, whose real size (`volume_size_info`) the new size is measured from.
    fn check(cluster: &mut Cluster, node: &str, vmid: u32, params: &Params) -> ApiResult<Self> {
        let disk = params.get("disk")?.unwrap_or_default().to_owned();
        let size = params.get("size")?.unwrap_or_default();
        let (relative, amount) = size
            .strip_prefix('+')
            .map_or((false, size), |rest| (true, rest));
        let bytes =
            propstr::parse_size(amount).ok_or_else(|| ApiError::die("invalid size string"))?;
        cluster.guest_at(node, GuestKind::Lxc, vmid)?.check_lock()?;
        let storages = &cluster.storages;
        let Some(guest) = cluster.guests.get(&vmid) else {
            return Err(ApiError::die(format!("CT {vmid} does not exist")));
        };
        if let Some(d) = params.get("digest")?
            && d != guest.conf.digest()
        {
            return Err(ApiError::die(
                "detected modified configuration - file changed by other user? Try again.",
            ));
        }
        let value = guest.conf.main.get(&disk).cloned().unwrap_or_default();
        let mut props = parse_mount_point(&disk, &value)?;
        let volid = props.get("volume").cloned().unwrap_or_default();
        let volume = storage_of(&volid)
            .and_then(|sid| storages.get(&(node.to_owned(), sid.to_owned())))
            .and_then(|s| s.volumes.get(&volid));
        if let Some(owner) = volume.and_then(|v| v.vmid).filter(|o| *o != vmid) {
            return Err(ApiError::die(format!(
                "can't resize mount point owned by another container ({owner})"
            )));
        }
        let current = volume.map(|v| v.size).ok_or_else(|| {
            ApiError::die(format!(
                "Could not determine current size of volume '{volid}'"
            ))
        })?;
        let new_size = if relative { current + bytes } else { bytes };
        if new_size < current {
            return Err(ApiError::die("unable to shrink disk size"));
        }
        if new_size == current {
            return Err(ApiError::die("disk is already at specified size"));
        }
        props.insert("size".to_owned(), propstr::format_size(new_size));
        let required: &[&str] = if disk == "rootfs" { &[] } else { &["mp"] };
        let printed = propstr::print(&props, Some("volume"), required);
        Ok(Self {
            node: node.to_owned(),
            vmid,
            disk,
            volid,
            new_size,
            printed,
        })
    }

    /// The task: grow the volume if its storage has room, then record the new size.
    fn run(self, cluster: &mut Cluster, log: &mut Vec<String>) -> Result<u32, String> {
        if let Some(sid) = storage_of(&self.volid)
            && let Ok(storage) = cluster.storage_mut(&self.node, sid)
        {
            let old = storage.volumes.get(&self.volid).map_or(0, |v| v.size);
            let grow = self.new_size.saturating_sub(old);
            if grow > storage.avail() {
                return Err(format!(
                    "not enough free space ({} < {grow})",
                    storage.avail()
                ));
            }
            if let Some(v) = storage.volumes.get_mut(&self.volid) {
                v.size = self.new_size;
            }
        }
        let size = propstr::format_size(self.new_size);
        log.push(format!(
            "Size of logical volume {} changed to {size}.",
            self.volid
        ));
        if let Some(g) = cluster.guests.get_mut(&self.vmid) {
            g.conf.main.insert(self.disk, self.printed);
        }
        Ok(0)
    }
}
