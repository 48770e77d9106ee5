//! The LXC pending/hotplug engine: `update_pct_config`, `vmconfig_hotplug_pending` (running)
//! and `vmconfig_apply_pending` (stopped, and at start/stop/reboot), key by key as in
//! pve-container's `PVE::LXC::Config`. Works on a copy of the config; the caller writes it only
//! when no error was collected.

use std::collections::{BTreeMap, BTreeSet};

use super::conf::Conf;
use super::error::{ApiError, ApiResult};
use super::model::GuestEvent;
use super::propstr;
use super::storage::Storage;

/// Written to config at once on a running CT, never pending.
const FASTPLUG: &[&str] = &[
    "description",
    "onboot",
    "startup",
    "protection",
    "hostname",
    "hookscript",
    "cores",
    "tags",
    "lock",
];

/// What the engine may touch besides the config: storages and bridges of the guest's node.
#[derive(Debug)]
pub(crate) struct Env<'a> {
    pub(crate) node: &'a str,
    pub(crate) vmid: u32,
    pub(crate) storages: &'a mut BTreeMap<(String, String), Storage>,
    pub(crate) bridges: &'a BTreeMap<String, u32>,
    pub(crate) now: u64,
    pub(crate) events: Vec<GuestEvent>,
    pub(crate) warnings: Vec<String>,
}

/// A validated `PUT config` request.
#[derive(Debug, Default)]
pub(crate) struct Update {
    pub(crate) set: BTreeMap<String, String>,
    pub(crate) delete: Vec<String>,
    pub(crate) revert: Vec<String>,
}

/// `update_pct_config`: queue everything in pending, then hotplug (running) or apply (stopped).
/// Returns 400 with per-key errors when a hotplug/apply step failed (nothing must be written).
pub(crate) fn update(
    conf: &mut Conf,
    running: bool,
    req: &Update,
    env: &mut Env<'_>,
) -> ApiResult<()> {
    let vmid = env.vmid;
    for opt in &req.revert {
        conf.pending.remove(opt);
        conf.remove_from_pending_delete(opt);
    }
    let mut modified = BTreeSet::new();
    for opt in &req.delete {
        if !conf.main.contains_key(opt) && !conf.pending.contains_key(opt) {
            env.warnings.push(format!(
                "cannot delete '{opt}' - not set in current configuration!"
            ));
            continue;
        }
        modified.insert(opt.clone());
        match opt.as_str() {
            "memory" | "rootfs" | "ostype" => {
                return Err(ApiError::die(format!(
                    "unable to delete required option '{opt}'"
                )));
            }
            "unprivileged" => {
                return Err(ApiError::die(format!(
                    "unable to delete read-only option: '{opt}'"
                )));
            }
            o if o.starts_with("mp") || o.starts_with("unused") => {
                check_protection(conf, &format!("can't remove CT {vmid} drive '{opt}'"))?;
            }
            _ => {}
        }
        conf.add_to_pending_delete(opt);
    }
    for (opt, value) in &req.set {
        modified.insert(opt.clone());
        let mut value = value.clone();
        match opt.as_str() {
            o if o == "rootfs" || o.starts_with("mp") => {
                check_protection(conf, &format!("can't update CT {vmid} drive '{opt}'"))?;
                check_volume_storage(&value, env)?;
            }
            "nameserver" | "searchdomain" => value = propstr::split_list(&value).join(" "),
            "unprivileged" => {
                return Err(ApiError::die(format!(
                    "unable to modify read-only option: '{opt}'"
                )));
            }
            "tags" => value = propstr::unique_tags(&value),
            o if o.starts_with("net") => check_mtu(opt, &value, env)?,
            _ => {}
        }
        conf.pending.insert(opt.clone(), value);
        conf.remove_from_pending_delete(opt);
    }
    conf.cleanup_pending();
    let errors = if running {
        hotplug(conf, Some(&modified), env)
    } else {
        apply(conf, Some(&modified), env)
    };
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::params(errors))
    }
}

fn check_protection(conf: &Conf, msg: &str) -> ApiResult<()> {
    if conf.main.get("protection").is_some_and(|p| p == "1") {
        return Err(ApiError::die(format!("{msg} - protection mode enabled")));
    }
    Ok(())
}

fn check_volume_storage(value: &str, env: &Env<'_>) -> ApiResult<()> {
    let props = propstr::parse(value, Some("volume")).map_err(ApiError::die)?;
    let volume = props.get("volume").map(String::as_str).unwrap_or_default();
    if volume.starts_with('/') {
        return Ok(());
    }
    let Some(sid) = super::storage::storage_of(volume) else {
        return Err(ApiError::die(format!(
            "unable to parse volume ID '{volume}'"
        )));
    };
    match env.storages.get(&(env.node.to_owned(), sid.to_owned())) {
        Some(s) if s.content.contains("rootdir") => Ok(()),
        Some(_) => Err(ApiError::die(format!(
            "storage '{sid}' does not allow content type 'rootdir' (Container)"
        ))),
        None => Err(ApiError::die(format!("storage '{sid}' does not exist"))),
    }
}

fn check_mtu(opt: &str, value: &str, env: &Env<'_>) -> ApiResult<()> {
    let props = propstr::parse(value, None).map_err(ApiError::die)?;
    if let Some(mtu) = props.get("mtu").and_then(|m| m.parse::<u32>().ok()) {
        let bridge = props.get("bridge").map(String::as_str).unwrap_or("vmbr0");
        let bridge_mtu = env.bridges.get(bridge).copied().unwrap_or(1500);
        if mtu > bridge_mtu {
            return Err(ApiError::die(format!(
                "{opt}: MTU size '{mtu}' is bigger than bridge MTU '{bridge_mtu}'"
            )));
        }
    }
    Ok(())
}

/// `parse_lxc_network` + `print_lxc_network`: canonical text, `type=veth`, a MAC if missing.
pub(crate) fn canonical_net(value: &str) -> String {
    let mut props = propstr::parse(value, None).unwrap_or_default();
    props.insert("type".to_owned(), "veth".to_owned());
    props
        .entry("hwaddr".to_owned())
        .or_insert_with(propstr::random_mac);
    propstr::print(&props, None, &["name"])
}

fn selected(selection: Option<&BTreeSet<String>>, opt: &str) -> bool {
    selection.is_none_or(|s| s.contains(opt))
}

/// `vmconfig_hotplug_pending` for a running CT. Returns per-key errors.
pub(crate) fn hotplug(
    conf: &mut Conf,
    selection: Option<&BTreeSet<String>>,
    env: &mut Env<'_>,
) -> BTreeMap<String, String> {
    let mut errors = BTreeMap::new();
    let fast: Vec<String> = conf
        .pending
        .keys()
        .filter(|k| FASTPLUG.contains(&k.as_str()) && selected(selection, k))
        .cloned()
        .collect();
    for opt in fast {
        if let Some(v) = conf.pending.remove(&opt) {
            conf.main.insert(opt.clone(), v);
            env.events.push(GuestEvent::Written(opt));
        }
    }
    for opt in conf
        .pending_delete()
        .into_keys()
        .filter(|k| selected(selection, k))
    {
        let event = match opt.as_str() {
            o if FASTPLUG.contains(&o) => GuestEvent::Written(opt.clone()),
            o if o.starts_with("unused") => {
                if let Some(volid) = conf.main.get(&opt).cloned() {
                    free_volume(env, &volid);
                }
                GuestEvent::HotApplied(opt.clone())
            }
            "swap" | "cpulimit" | "cpuunits" => GuestEvent::HotApplied(opt.clone()),
            // pve-container matches `net(\d)` here: net10 and above stay pending
            o if o.len() == 4 && o.starts_with("net") => GuestEvent::LinkDeleted(opt.clone()),
            _ => continue,
        };
        conf.main.remove(&opt);
        conf.remove_from_pending_delete(&opt);
        env.events.push(event);
    }
    let keys: Vec<String> = conf
        .pending
        .keys()
        .filter(|k| *k != "delete" && selected(selection, k))
        .cloned()
        .collect();
    for opt in keys {
        let Some(value) = conf.pending.get(&opt).cloned() else {
            continue;
        };
        let result = match opt.as_str() {
            "cpulimit" | "cpuunits" | "memory" | "swap" => {
                Ok(Some((value, GuestEvent::HotApplied(opt.clone()))))
            }
            o if o.starts_with("net") => {
                let canonical = canonical_net(&value);
                let event = net_event(&opt, conf.main.get(&opt).map(String::as_str), &canonical);
                Ok(Some((canonical, event)))
            }
            o if o.starts_with("mp") && !conf.main.contains_key(o) => alloc_mountpoint(&value, env)
                .map(|v| Some((v, GuestEvent::HotApplied(opt.clone())))),
            o if o.starts_with("dev") && !conf.main.contains_key(o) => {
                Ok(Some((value, GuestEvent::HotApplied(opt.clone()))))
            }
            _ => Ok(None),
        };
        match result {
            Ok(Some((value, event))) => {
                conf.pending.remove(&opt);
                conf.main.insert(opt, value);
                env.events.push(event);
            }
            Ok(None) => {}
            Err(msg) => {
                errors.insert(opt.clone(), format!("unable to hotplug {opt}: {msg}"));
            }
        }
    }
    errors
}

/// What `PVE::LXC::update_net` does to the running link for a new canonical `netN` value.
fn net_event(opt: &str, old: Option<&str>, new: &str) -> GuestEvent {
    let Some(old) = old else {
        return GuestEvent::LinkCreated(opt.to_owned());
    };
    let a = propstr::parse(old, None).unwrap_or_default();
    let b = propstr::parse(new, None).unwrap_or_default();
    let differs = |keys: &[&str]| keys.iter().any(|k| a.get(*k) != b.get(*k));
    if differs(&["hwaddr", "name"]) {
        GuestEvent::LinkRecreated(opt.to_owned())
    } else if differs(&["bridge", "tag", "firewall", "link_down", "trunks"]) {
        GuestEvent::LinkReplugged(opt.to_owned())
    } else if differs(&["rate", "ip", "gw", "ip6", "gw6"]) {
        GuestEvent::HotApplied(opt.to_owned())
    } else {
        GuestEvent::Written(opt.to_owned())
    }
}

/// `vmconfig_apply_pending`: everything at once (stopped CT, or start/stop/reboot).
pub(crate) fn apply(
    conf: &mut Conf,
    selection: Option<&BTreeSet<String>>,
    env: &mut Env<'_>,
) -> BTreeMap<String, String> {
    for opt in conf
        .pending_delete()
        .into_keys()
        .filter(|k| selected(selection, k))
    {
        if opt.starts_with("mp")
            && let Some(volid) = conf.main.get(&opt).and_then(|v| volume_of(v))
            && !volid.starts_with('/')
        {
            add_unused(conf, &volid);
        } else if opt.starts_with("unused")
            && let Some(volid) = conf.main.get(&opt).cloned()
        {
            free_volume(env, &volid);
        }
        conf.main.remove(&opt);
        conf.remove_from_pending_delete(&opt);
        env.events.push(GuestEvent::PendingApplied(opt));
    }
    conf.cleanup_pending();
    let mut errors = BTreeMap::new();
    let keys: Vec<String> = conf
        .pending
        .keys()
        .filter(|k| *k != "delete" && selected(selection, k))
        .cloned()
        .collect();
    for opt in keys {
        let Some(value) = conf.pending.get(&opt).cloned() else {
            continue;
        };
        let result = if opt.starts_with("mp") || opt == "rootfs" {
            let old = conf.main.get(&opt).and_then(|v| volume_of(v));
            alloc_mountpoint(&value, env).inspect(|new| {
                if let Some(old) =
                    old.filter(|o| volume_of(new).as_ref() != Some(o) && !o.starts_with('/'))
                {
                    add_unused(conf, &old);
                }
            })
        } else if opt.starts_with("net") {
            Ok(canonical_net(&value))
        } else {
            Ok(value)
        };
        match result {
            Ok(value) => {
                conf.pending.remove(&opt);
                conf.main.insert(opt.clone(), value);
                env.events.push(GuestEvent::PendingApplied(opt));
            }
            Err(msg) => {
                errors.insert(
                    opt.clone(),
                    format!("unable to apply pending change {opt} : {msg}"),
                );
            }
        }
    }
    errors
}

fn volume_of(value: &str) -> Option<String> {
    propstr::parse(value, Some("volume"))
        .ok()?
        .get("volume")
        .cloned()
}

/// `add_unused_volume`: the first free `unusedN` slot gets the volume.
fn add_unused(conf: &mut Conf, volid: &str) {
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

fn free_volume(env: &mut Env<'_>, volid: &str) {
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
