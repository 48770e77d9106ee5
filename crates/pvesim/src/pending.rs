//! The LXC pending/hotplug engine: `update_pct_config`, `vmconfig_hotplug_pending` (running)
//! and `vmconfig_apply_pending` (stopped, and at start/stop/reboot), key by key as in
//! pve-container's `PVE::LXC::Config`. Works on a copy of the config; the caller writes it only
//! when no error was collected.

use std::collections::{BTreeMap, BTreeSet};

use super::conf::Conf;
use super::error::{ApiError, ApiResult};
use super::model::GuestEvent;
use super::netconf::{canonical_net, check_link_bridge, check_net, net_event};
use super::propstr;
use super::storage::Storage;
use super::volumes::{add_unused, alloc_mountpoint, free_volume, volume_of};

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
    for opt in &req.revert {
        conf.pending.remove(opt);
        conf.remove_from_pending_delete(opt);
    }
    let mut modified = queue_deletes(conf, &req.delete, env)?;
    modified.extend(queue_sets(conf, &req.set, env)?);
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

/// The delete half of `update_pct_config`: checks, then `add_to_pending_delete`.
fn queue_deletes(
    conf: &mut Conf,
    delete: &[String],
    env: &mut Env<'_>,
) -> ApiResult<BTreeSet<String>> {
    let mut modified = BTreeSet::new();
    for opt in delete {
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
                let msg = format!("can't remove CT {} drive '{opt}'", env.vmid);
                check_protection(conf, &msg)?;
            }
            _ => {}
        }
        conf.add_to_pending_delete(opt);
    }
    Ok(modified)
}

/// The set half of `update_pct_config`: checks and normalisation, then into pending.
fn queue_sets(
    conf: &mut Conf,
    set: &BTreeMap<String, String>,
    env: &Env<'_>,
) -> ApiResult<BTreeSet<String>> {
    let mut modified = BTreeSet::new();
    for (opt, value) in set {
        modified.insert(opt.clone());
        let mut value = value.clone();
        match opt.as_str() {
            o if o == "rootfs" || o.starts_with("mp") => {
                check_protection(conf, &format!("can't update CT {} drive '{opt}'", env.vmid))?;
                check_volume_storage(&value, env)?;
            }
            "nameserver" | "searchdomain" => value = propstr::split_list(&value).join(" "),
            "unprivileged" => {
                return Err(ApiError::die(format!(
                    "unable to modify read-only option: '{opt}'"
                )));
            }
            "tags" => value = propstr::unique_tags(&value),
            o if o.starts_with("net") => check_net(opt, &value, env.bridges)?,
            _ => {}
        }
        conf.pending.insert(opt.clone(), value);
        conf.remove_from_pending_delete(opt);
    }
    Ok(modified)
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

fn selected(selection: Option<&BTreeSet<String>>, opt: &str) -> bool {
    selection.is_none_or(|s| s.contains(opt))
}

/// `vmconfig_hotplug_pending` for a running CT. Returns per-key errors.
pub(crate) fn hotplug(
    conf: &mut Conf,
    selection: Option<&BTreeSet<String>>,
    env: &mut Env<'_>,
) -> BTreeMap<String, String> {
    let fast = selected_keys(conf, selection)
        .into_iter()
        .filter(|k| FASTPLUG.contains(&k.as_str()));
    for opt in fast.collect::<Vec<_>>() {
        if let Some(v) = conf.pending.remove(&opt) {
            conf.main.insert(opt.clone(), v);
            env.events.push(GuestEvent::Written(opt));
        }
    }
    hot_deletes(conf, selection, env);
    let mut errors = BTreeMap::new();
    for opt in selected_keys(conf, selection) {
        let Some(value) = conf.pending.get(&opt).cloned() else {
            continue;
        };
        match hot_set(conf, &opt, value, env) {
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

/// Pending (non-`delete`) keys in the selection.
fn selected_keys(conf: &Conf, selection: Option<&BTreeSet<String>>) -> Vec<String> {
    conf.pending
        .keys()
        .filter(|k| *k != "delete" && selected(selection, k))
        .cloned()
        .collect()
}

/// The delete pass of `vmconfig_hotplug_pending`; what is not hot stays queued.
fn hot_deletes(conf: &mut Conf, selection: Option<&BTreeSet<String>>, env: &mut Env<'_>) {
    let deletes: Vec<String> = conf
        .pending_delete()
        .into_keys()
        .filter(|k| selected(selection, k))
        .collect();
    for opt in deletes {
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
}

/// One key of the set pass: the value to write and what it did, `None` to keep it pending.
fn hot_set(
    conf: &Conf,
    opt: &str,
    value: String,
    env: &mut Env<'_>,
) -> Result<Option<(String, GuestEvent)>, String> {
    let hot = |v: String| Ok(Some((v, GuestEvent::HotApplied(opt.to_owned()))));
    match opt {
        "cpulimit" | "cpuunits" | "memory" | "swap" => hot(value),
        o if o.starts_with("net") => {
            let canonical = canonical_net(&value);
            let event = net_event(opt, conf.main.get(opt).map(String::as_str), &canonical);
            check_link_bridge(&event, &canonical, env.bridges)?;
            Ok(Some((canonical, event)))
        }
        o if o.starts_with("mp") && !conf.main.contains_key(o) => {
            hot(alloc_mountpoint(&value, env)?)
        }
        o if o.starts_with("dev") && !conf.main.contains_key(o) => hot(value),
        _ => Ok(None),
    }
}

/// `vmconfig_apply_pending`: everything at once (stopped CT, or start/stop/reboot).
pub(crate) fn apply(
    conf: &mut Conf,
    selection: Option<&BTreeSet<String>>,
    env: &mut Env<'_>,
) -> BTreeMap<String, String> {
    let deletes: Vec<String> = conf
        .pending_delete()
        .into_keys()
        .filter(|k| selected(selection, k))
        .collect();
    for opt in deletes {
        let volid = conf.main.get(&opt).cloned();
        if opt.starts_with("mp")
            && let Some(volid) = volid.as_deref().and_then(volume_of)
            && !volid.starts_with('/')
        {
            add_unused(conf, &volid);
        } else if opt.starts_with("unused")
            && let Some(volid) = volid
        {
            free_volume(env, &volid);
        }
        conf.main.remove(&opt);
        conf.remove_from_pending_delete(&opt);
        env.events.push(GuestEvent::PendingApplied(opt));
    }
    conf.cleanup_pending();
    let mut errors = BTreeMap::new();
    for opt in selected_keys(conf, selection) {
        let Some(value) = conf.pending.get(&opt).cloned() else {
            continue;
        };
        match apply_value(conf, &opt, value, env) {
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

/// One key of the apply pass: volumes are allocated (a replaced one becomes `unusedN`), NICs
/// printed canonically, everything else taken as it is.
fn apply_value(
    conf: &mut Conf,
    opt: &str,
    value: String,
    env: &mut Env<'_>,
) -> Result<String, String> {
    if opt.starts_with("mp") || opt == "rootfs" {
        let old = conf.main.get(opt).and_then(|v| volume_of(v));
        let new = alloc_mountpoint(&value, env)?;
        if let Some(old) =
            old.filter(|o| volume_of(&new).as_ref() != Some(o) && !o.starts_with('/'))
        {
            add_unused(conf, &old);
        }
        Ok(new)
    } else if opt.starts_with("net") {
        Ok(canonical_net(&value))
    } else {
        Ok(value)
    }
}

/// A new container's config (create, scenario): disks allocated first (`create_disks`), the
/// rest through `update_pct_config` on a stopped CT, then the read-only `unprivileged` flag.
/// Returns the first error's message.
pub(crate) fn initial(set: &BTreeMap<String, String>, env: &mut Env<'_>) -> Result<Conf, String> {
    let mut set = set.clone();
    let unprivileged = set.remove("unprivileged");
    // `foreach_volume` order: rootfs first, then mp0, mp1, ... (numerically)
    let mut disks: Vec<String> = set
        .keys()
        .filter(|k| *k == "rootfs" || k.starts_with("mp"))
        .cloned()
        .collect();
    disks.sort_by_key(|k| {
        k.strip_prefix("mp")
            .and_then(|n| n.parse::<u32>().ok())
            .map_or(0, |n| n + 1)
    });
    let mut conf = Conf::default();
    for key in disks {
        if let Some(value) = set.remove(&key) {
            let value = alloc_mountpoint(&value, env)?;
            conf.main.insert(key, value);
        }
    }
    let req = Update {
        set,
        delete: Vec::new(),
        revert: Vec::new(),
    };
    update(&mut conf, false, &req, env).map_err(|e| {
        match e.errors.and_then(|m| m.into_values().next()) {
            Some(first) => first,
            None => e.message,
        }
    })?;
    if let Some(u) = unprivileged {
        conf.main.insert("unprivileged".to_owned(), u);
    }
    Ok(conf)
}
