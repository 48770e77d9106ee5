//! Container volumes in the pending engine: allocation of `storage:<GiB>` mount points
//! (`apply_pending_mountpoint`), `unusedN` bookkeeping and freeing volumes.

use super::conf::Conf;
use super::pending::Env;
use super::propstr;

pub(crate) fn volume_of(value: &str) -> Option<String> {
    propstr::parse(value, Some("volume"))
        .ok()?
        .get("volume")
        .cloned()
}

/// `add_unused_volume`: the first free `unusedN` slot gets the volume.
pub(crate) fn add_unused(conf: &mut Conf, volid: &str) {
    if conf
        .main
        .iter()
        .any(|(k, v)| k.starts_with("unused") && v == volid)
    {
        return;
    }
    if let Some(n) = (0..256).find(|n| !conf.main.contains_key(&format!("unused{n}"))) {
        conf.main.insert(format!("unused{n}"), volid.to_owned());
    }
}

pub(crate) fn free_volume(env: &mut Env<'_>, volid: &str) {
    if let Some(sid) = super::storage::storage_of(volid)
        && let Some(storage) = env.storages.get_mut(&(env.node.to_owned(), sid.to_owned()))
    {
        storage.volumes.remove(volid);
    }
}

/// `apply_pending_mountpoint`: a `storage:size` volume is allocated and printed with its volid.
pub(crate) fn alloc_mountpoint(value: &str, env: &mut Env<'_>) -> Result<String, String> {
    let mut props = propstr::parse(value, Some("volume"))?;
    let volume = props.get("volume").cloned().unwrap_or_default();
    let Some((sid, size)) = new_disk(&volume) else {
        return Ok(value.to_owned());
    };
    let sid = sid.to_owned();
    let storage = env
        .storages
        .get_mut(&(env.node.to_owned(), sid.clone()))
        .ok_or_else(|| format!("storage '{sid}' does not exist"))?;
    let bytes = (size * 1024.0 * 1024.0 * 1024.0).round() as u64;
    let volid = storage.alloc_disk(env.vmid, bytes, env.now)?;
    props.insert("volume".to_owned(), volid);
    props.insert("size".to_owned(), propstr::format_size(bytes));
    let required: &[&str] = if props.contains_key("mp") {
        &["mp"]
    } else {
        &[]
    };
    Ok(propstr::print(&props, Some("volume"), required))
}

/// `NEW_DISK_RE`: `storage:<GiB>`.
fn new_disk(volume: &str) -> Option<(&str, f64)> {
    let (sid, size) = volume.split_once(':')?;
    let gib: f64 = size.parse().ok()?;
    (!sid.is_empty() && size.chars().all(|c| c.is_ascii_digit() || c == '.')).then_some((sid, gib))
}

/// `destroy_lxc_container` without `destroy-unreferenced-disks`: the volumes the config and its
/// pending section reference (`rootfs`, `mpN`, `unusedN`), each freed once, and only those the
/// container owns (`delete_mountpoint_volume`); bind and device mounts are left alone.
pub(crate) fn destroy_referenced(
    cluster: &mut super::model::Cluster,
    node: &str,
    vmid: u32,
    conf: &Conf,
) {
    let referenced = conf
        .main
        .iter()
        .chain(conf.pending.iter())
        .filter(|(k, _)| *k == "rootfs" || k.starts_with("mp") || k.starts_with("unused"))
        .filter_map(|(_, v)| volume_of(v))
        .filter(|v| !v.starts_with('/'));
    for volid in referenced.collect::<std::collections::BTreeSet<_>>() {
        if let Some(sid) = super::storage::storage_of(&volid)
            && let Some(storage) = cluster.storages.get_mut(&(node.to_owned(), sid.to_owned()))
            && storage
                .volumes
                .get(&volid)
                .is_some_and(|v| v.vmid == Some(vmid))
        {
            storage.volumes.remove(&volid);
        }
    }
}
