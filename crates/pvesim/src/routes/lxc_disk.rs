//! `PUT /nodes/{node}/lxc/{vmid}/resize`: grows `rootfs`/`mpN` (a `resize` task), refuses
//! shrinking and no-op sizes, checks free space on the volume's storage.

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
    /// The synchronous checks of `resize_vm`: lock, digest, shrinking, no-op size.
    fn check(cluster: &mut Cluster, node: &str, vmid: u32, params: &Params) -> ApiResult<Self> {
        let missing = |k: &str| ApiError::param(k, "property is missing and it is not optional");
        let disk = params
            .get("disk")?
            .ok_or_else(|| missing("disk"))?
            .to_owned();
        let size = params.get("size")?.ok_or_else(|| missing("size"))?;
        let (relative, amount) = size
            .strip_prefix('+')
            .map_or((false, size), |rest| (true, rest));
        let bytes = propstr::parse_size(amount)
            .ok_or_else(|| ApiError::param("size", "value does not match the regex pattern"))?;
        let guest = cluster.guest_at(node, GuestKind::Lxc, vmid)?;
        guest.check_lock()?;
        if let Some(d) = params.get("digest")?
            && d != guest.conf.digest()
        {
            return Err(ApiError::die(
                "detected modified configuration - file changed by other user? Try again.",
            ));
        }
        let value = guest.conf.main.get(&disk).cloned();
        let value = value
            .ok_or_else(|| ApiError::die(format!("parameter '{disk}' not set in CT {vmid}")))?;
        let mut props = propstr::parse(&value, Some("volume")).map_err(ApiError::die)?;
        let current = props
            .get("size")
            .and_then(|s| propstr::parse_size(s))
            .unwrap_or(0);
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
        let volid = props.get("volume").cloned().unwrap_or_default();
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
