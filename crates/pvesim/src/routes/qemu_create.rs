//! `POST /nodes/{node}/qemu` (`create_vm`), after the schema check: the synchronous checks in
//! qemu-server's order, the `create` lock, then the `qmcreate` task (`create_disks`, default
//! boot order, `smbios1` uuid, `vmgenid`).

use std::collections::BTreeMap;

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::conf::Conf;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, Guest, GuestKind, now};
use crate::qemu_alloc::{self, DiskEnv};
use crate::{propstr, qemu, qemu_drive, qemu_schema, worker};

/// `POST /nodes/{node}/qemu`.
pub(crate) async fn create(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let mut set = config_params(&params)?;
    let vmid = parse_vmid(params.get("vmid")?.unwrap_or_default())?;
    let storage = params.get("storage")?.map(str::to_owned);
    let start = params.flag("start")?;
    if let Some(keys) = set.get("sshkeys") {
        qemu_schema::check_ssh_keys(keys).map_err(ApiError::die)?;
    }
    if let Some(units) = set.get_mut("cpuunits") {
        *units = crate::schema::clamp_cpuunits(units);
    }
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        cluster.node(&node)?;
        resolve_cdrom_alias(&mut set);
        check_storage_access(&cluster, &node, &set, storage.as_deref())?;
        check_root_only(&caller, &set)?;
        if let Some(script) = set.get("hookscript") {
            crate::snippets::check_hookscript(&cluster, &node, script).map_err(ApiError::die)?;
        }
        check_drive_param(&mut set)?;
        for (_, value) in set.iter_mut().filter(|(k, _)| k.starts_with("net")) {
            *value = qemu::print_net(value, false);
        }
        if let Err(e) = cluster.check_vmid_unused(vmid) {
            return Err(ApiError::die(format!(
                "unable to create VM {vmid} - {}",
                e.message
            )));
        }
        let mut conf = Conf::default();
        conf.main.insert("lock".to_owned(), "create".to_owned());
        crate::pools::check_exists(&cluster, params.get("pool")?)?;
        cluster.guests.insert(vmid, new_guest(vmid, &node, conf));
        crate::pools::add_vm(&mut cluster, vmid, params.get("pool")?);
        cluster.new_task(&node, "qmcreate", &vmid.to_string(), &caller.upid_user())
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            let result = fail.map_or_else(
                || build(cluster, &node, vmid, &set, storage.as_deref(), log),
                Err,
            );
            match result {
                Ok(conf) => {
                    if let Some(g) = cluster.guests.get_mut(&vmid) {
                        g.conf = conf;
                        if start {
                            log.push("Execute autostart".to_owned());
                            super::qemu_power::power_on(g);
                        }
                    }
                    Ok(0)
                }
                Err(e) => {
                    cluster.guests.remove(&vmid);
                    Err(format!("unable to create VM {vmid} - {e}"))
                }
            }
        },
    );
    worker::spawn(&sim, upid.clone(), "qmcreate", Some(vmid), body);
    Ok(data(json!(upid)))
}

/// A stopped QEMU guest with `conf`.
pub(crate) fn new_guest(vmid: u32, node: &str, conf: Conf) -> Guest {
    Guest {
        vmid,
        node: node.to_owned(),
        kind: GuestKind::Qemu,
        conf,
        running: false,
        started_at: None,
        pid: None,
        booted: None,
        ha_managed: false,
        events: Vec::new(),
        ignores_acpi: false,
        cloudinit_generated: None,
    }
}

/// The config keys of a request (already checked against the route's schema,
/// `api_schema::qemu`), with tags de-duplicated as PVE stores them.
pub(crate) fn config_params(params: &Params) -> ApiResult<BTreeMap<String, String>> {
    let mut set = BTreeMap::new();
    for key in params.keys() {
        if crate::api_schema::qemu::config_prop(key).is_none() {
            continue;
        }
        let Some(value) = params.get(key)? else {
            continue;
        };
        let value = if key == "tags" {
            propstr::unique_tags(value)
        } else {
            value.to_owned()
        };
        set.insert(key.clone(), value);
    }
    Ok(set)
}

/// `$resolve_cdrom_alias`: `cdrom` is `ide2` with `media=cdrom`.
fn resolve_cdrom_alias(set: &mut BTreeMap<String, String>) {
    if let Some(mut value) = set.remove("cdrom") {
        if !value.contains("media=") {
            value.push_str(",media=cdrom");
        }
        set.insert("ide2".to_owned(), value);
    }
}

/// `$check_storage_access`: new disks need a storage with `images`; existing volumes must be
/// `images` or `iso`; an `import-from` source must be `images` or `import`.
pub(crate) fn check_storage_access(
    cluster: &Cluster,
    node: &str,
    set: &BTreeMap<String, String>,
    default_storage: Option<&str>,
) -> ApiResult<()> {
    let storage = |sid: &str| {
        cluster
            .storages
            .get(&(node.to_owned(), sid.to_owned()))
            .ok_or_else(|| ApiError::die(format!("storage '{sid}' does not exist")))
    };
    for (key, value) in set.iter().filter(|(k, _)| qemu_drive::is_drive_key(k)) {
        let props = qemu_drive::parse(value)
            .map_err(|_| ApiError::param(key, "unable to parse drive options"))?;
        let file = props.get("file").map_or("", String::as_str);
        let cdrom = qemu_drive::is_cdrom(&props);
        let volname = file.split_once(':').map(|(_, n)| n);
        if file.is_empty()
            || file == "none"
            || file == "cloudinit"
            || volname == Some("cloudinit")
            || (cdrom && file == "cdrom")
        {
        } else if let (false, Some((sid, _))) = (cdrom, qemu_drive::new_disk(file)) {
            let sid = sid
                .or(default_storage)
                .ok_or_else(|| ApiError::die("no storage ID specified (and no default storage)"))?;
            if !storage(sid)?.content.contains("images") {
                return Err(ApiError::param(
                    "storage",
                    format!("storage '{sid}' does not support vm images"),
                ));
            }
        } else if let Some(sid) = crate::storage::storage_of(file) {
            let vtype = storage(sid)?
                .volumes
                .get(file)
                .map_or_else(|| vtype_of(file), |v| v.content.clone());
            if vtype != "images" && vtype != "iso" {
                return Err(ApiError::param(
                    key,
                    "content type needs to be 'images' or 'iso'",
                ));
            }
        }
        if let Some(src) = props.get("import-from") {
            let vtype = vtype_of(src);
            if vtype != "images" && vtype != "import" {
                return Err(ApiError::param(
                    key,
                    format!("{src} has wrong type '{vtype}' - needs to be 'images' or 'import'"),
                ));
            }
        }
    }
    Ok(())
}

/// `parse_volname`'s `vtype` from the volume's path (`iso/`, `import/`, `vztmpl/`, images).
fn vtype_of(volid: &str) -> String {
    let name = volid.split_once(':').map_or(volid, |(_, n)| n);
    match name.split_once('/') {
        Some((dir @ ("iso" | "import" | "vztmpl" | "snippets" | "dump"), _)) => {
            if dir == "dump" {
                "backup".to_owned()
            } else {
                dir.to_owned()
            }
        }
        _ => "images".to_owned(),
    }
}

/// `$check_vm_modify_config_perm` and the serial/usb/hostpci checks: for everyone but
/// `root@pam` (an API token of root is not root here).
pub(crate) fn check_root_only(caller: &Caller, set: &BTreeMap<String, String>) -> ApiResult<()> {
    if caller.is_root() {
        return Ok(());
    }
    match set.iter().find_map(|(k, v)| qemu_schema::root_only(k, v)) {
        Some(msg) => Err(ApiError::die(msg)),
        None => Ok(()),
    }
}

/// `$check_drive_param` and `cleanup_drive_path`: `import-from` syntax, ISOs need
/// `media=cdrom`, `none`/`cdrom` get `media=cdrom`; values re-printed canonically.
pub(crate) fn check_drive_param(set: &mut BTreeMap<String, String>) -> ApiResult<()> {
    for (key, value) in set.iter_mut().filter(|(k, _)| qemu_drive::is_drive_key(k)) {
        let mut props = qemu_drive::parse(value)
            .map_err(|_| ApiError::param(key, "unable to parse drive options"))?;
        let file = props.get("file").cloned().unwrap_or_default();
        if props.contains_key("import-from")
            && qemu_drive::new_disk(&file).is_none_or(|(_, n)| n != 0.0)
        {
            return Err(ApiError::param(
                key,
                "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>",
            ));
        }
        if key == "efidisk0" && props.contains_key("import-from") {
            for required in ["efitype", "pre-enrolled-keys"] {
                if !props.contains_key(required) {
                    return Err(ApiError::param(
                        key,
                        format!("need to specify '{required}' when using 'import-from'"),
                    ));
                }
            }
        }
        if vtype_of(&file) == "iso" && file.contains(':') && !qemu_drive::is_cdrom(&props) {
            return Err(ApiError::param(
                key,
                "explicit 'media=cdrom' is required for iso images",
            ));
        }
        if (file == "cdrom" || file == "none") && !props.contains_key("media") {
            props.insert("media".to_owned(), "cdrom".to_owned());
        }
        *value = qemu_drive::print(&props);
    }
    Ok(())
}

/// The `qmcreate` task body: disks, then the defaults `create_vm` adds.
fn build(
    cluster: &mut Cluster,
    node: &str,
    vmid: u32,
    set: &BTreeMap<String, String>,
    storage: Option<&str>,
    log: &mut Vec<String>,
) -> Result<Conf, String> {
    let mut env = DiskEnv {
        node,
        vmid,
        storages: &mut cluster.storages,
        default_storage: storage,
        now: now(),
        cloudinit_at: None,
    };
    let created = qemu_alloc::create_disks(&mut env, set, log)?;
    let mut main = set.clone();
    main.extend(created);
    if !main.contains_key("boot") {
        let order = default_boot_devices(&main);
        if !order.is_empty() {
            main.insert("boot".to_owned(), format!("order={}", order.join(";")));
        }
    }
    main.entry("smbios1".to_owned())
        .or_insert_with(|| format!("uuid={}", random_uuid()));
    let arch = main.get("arch").map_or("x86_64", String::as_str);
    if main.get("vmgenid").is_none_or(|g| g == "1") && arch != "aarch64" {
        main.insert("vmgenid".to_owned(), random_uuid());
    }
    main.insert(
        "meta".to_owned(),
        format!("creation-qemu=10.1.2,ctime={}", now()),
    );
    Ok(Conf {
        main,
        pending: BTreeMap::new(),
    })
}

/// `get_default_bootdevices`: the first disk, the first CD-ROM, the first NIC.
fn default_boot_devices(conf: &BTreeMap<String, String>) -> Vec<String> {
    let buses = [("ide", 4), ("sata", 6), ("scsi", 31), ("virtio", 16)];
    let drives: Vec<String> = buses
        .iter()
        .flat_map(|(b, n)| (0..*n).map(move |i| format!("{b}{i}")))
        .filter(|k| conf.contains_key(k))
        .collect();
    let first = |cdrom: bool| {
        drives.iter().find(|k| {
            conf.get(*k)
                .and_then(|v| qemu_drive::parse(v).ok())
                .is_some_and(|p| qemu_drive::is_cdrom(&p) == cdrom)
        })
    };
    let mut out: Vec<String> = [first(false), first(true)]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if let Some(net) = (0..32)
        .map(|i| format!("net{i}"))
        .find(|k| conf.contains_key(k))
    {
        out.push(net);
    }
    out
}

/// `generate_uuid`: a random version-4 UUID.
pub(crate) fn random_uuid() -> String {
    let b: [u8; 16] = rand::random();
    let hex = hex::encode(b);
    format!(
        "{}-{}-4{}-{:x}{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        (b[8] & 0x3) | 0x8,
        &hex[17..20],
        &hex[20..32]
    )
}
