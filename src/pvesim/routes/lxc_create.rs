//! `POST /nodes/{node}/lxc` (the `vzcreate` task with its `create` lock), `resize`, and the
//! in-guest view of a network interface.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::lxc::{check_root_only, config_params};
use super::{Params, SimState, data, parse_vmid};
use crate::pvesim::auth::Caller;
use crate::pvesim::conf::Conf;
use crate::pvesim::error::{ApiError, ApiResult};
use crate::pvesim::model::{Cluster, Guest, GuestKind, now};
use crate::pvesim::pending::{self, Env};
use crate::pvesim::server::Sim;
use crate::pvesim::{propstr, worker};

const CREATE_EXTRA: &[&str] = &[
    "vmid",
    "ostemplate",
    "storage",
    "password",
    "ssh-public-keys",
    "pool",
    "start",
    "unique",
    "restore",
    "force",
    "ignore-unpack-errors",
    "bwlimit",
    "ha-managed",
    "unprivileged",
];

/// `POST /nodes/{node}/lxc`.
pub(crate) async fn create(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let missing = |k: &str| ApiError::param(k, "property is missing and it is not optional");
    let vmid = parse_vmid(params.get("vmid")?.ok_or_else(|| missing("vmid"))?)?;
    let ostemplate = params
        .get("ostemplate")?
        .ok_or_else(|| missing("ostemplate"))?
        .to_owned();
    let storage = params.get("storage")?.unwrap_or("local").to_owned();
    let start = params.flag("start")?;
    let unprivileged = params
        .get("unprivileged")?
        .is_none_or(|u| u == "1" || u.eq_ignore_ascii_case("true"));
    if let Some(pw) = params.get("password")?
        && pw.chars().count() < 5
    {
        return Err(ApiError::param(
            "password",
            "value must be at least 5 characters long",
        ));
    }
    let set = config_params(&params, CREATE_EXTRA)?;
    let mut current = BTreeMap::new();
    current.insert(
        "unprivileged".to_owned(),
        if unprivileged { "1" } else { "0" }.to_owned(),
    );
    check_root_only(&caller, &current, &set, &[])?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        cluster.node(&node)?;
        cluster.check_vmid_unused(vmid)?;
        match cluster.storages.get(&(node.clone(), storage.clone())) {
            Some(s) if s.content.contains("rootdir") => {}
            Some(_) => {
                return Err(ApiError::param(
                    "storage",
                    format!("storage '{storage}' does not support container directories"),
                ));
            }
            None => {
                return Err(ApiError::param(
                    "storage",
                    format!("storage '{storage}' does not exist"),
                ));
            }
        }
        let mut conf = Conf::default();
        conf.main.insert("lock".to_owned(), "create".to_owned());
        let guest = Guest {
            vmid,
            node: node.clone(),
            kind: GuestKind::Lxc,
            conf,
            running: false,
            started_at: None,
            pid: None,
            ha_managed: params.flag("ha-managed")?,
            events: Vec::new(),
        };
        cluster.guests.insert(vmid, guest);
        let mut created_from = BTreeMap::from([("ostemplate".to_owned(), ostemplate.clone())]);
        for key in ["ssh-public-keys", "pool", "storage"] {
            if let Some(value) = params.get(key)? {
                created_from.insert(key.to_owned(), value.to_owned());
            }
        }
        cluster.created_from.insert(vmid, created_from);
        cluster.new_task(&node, "vzcreate", &vmid.to_string(), &caller.upid_user())
    };
    let job = CreateJob {
        node,
        vmid,
        ostemplate,
        storage,
        set,
        unprivileged,
        start,
    };
    worker::spawn(
        &sim,
        upid.clone(),
        "vzcreate",
        Some(vmid),
        Box::new(move |cluster, log, fail| job.run(cluster, log, fail)),
    );
    Ok(data(json!(upid)))
}

struct CreateJob {
    node: String,
    vmid: u32,
    ostemplate: String,
    storage: String,
    set: BTreeMap<String, String>,
    unprivileged: bool,
    start: bool,
}

impl CreateJob {
    fn run(
        self,
        cluster: &mut Cluster,
        log: &mut Vec<String>,
        fail: Option<String>,
    ) -> Result<u32, String> {
        let vmid = self.vmid;
        let result = self.build(cluster, log, fail);
        match result {
            Ok(conf) => {
                if let Some(g) = cluster.guests.get_mut(&vmid) {
                    g.conf = conf;
                    if self.start {
                        log.push(format!("starting CT {vmid}"));
                        super::lxc_status::power_on(g);
                    }
                }
                Ok(0)
            }
            Err(e) => {
                cluster.destroy_volumes_of(&self.node, vmid);
                cluster.guests.remove(&vmid);
                Err(format!("unable to create CT {vmid} - {e}"))
            }
        }
    }

    fn build(
        &self,
        cluster: &mut Cluster,
        log: &mut Vec<String>,
        fail: Option<String>,
    ) -> Result<Conf, String> {
        let vmid = self.vmid;
        let template_sid = crate::pvesim::storage::storage_of(&self.ostemplate)
            .unwrap_or("local")
            .to_owned();
        let exists = cluster
            .storages
            .get(&(self.node.clone(), template_sid))
            .is_some_and(|s| {
                s.volumes
                    .get(&self.ostemplate)
                    .is_some_and(|v| v.content == "vztmpl")
            });
        if !exists {
            return Err(format!("volume '{}' does not exist", self.ostemplate));
        }
        let mut conf = Conf::default();
        conf.pending.clone_from(&self.set);
        conf.pending
            .entry("rootfs".to_owned())
            .or_insert_with(|| format!("{}:4", self.storage));
        let bridges = cluster
            .nodes
            .get(&self.node)
            .map(|n| n.bridges.clone())
            .unwrap_or_default();
        let mut env = Env {
            node: &self.node,
            vmid,
            storages: &mut cluster.storages,
            bridges: &bridges,
            now: now(),
            events: Vec::new(),
            warnings: Vec::new(),
        };
        let errors = pending::apply(&mut conf, None, &mut env);
        if let Some((_, e)) = errors.into_iter().next() {
            return Err(e.rsplit(" : ").next().unwrap_or_default().to_owned());
        }
        let name = self
            .ostemplate
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        log.push(format!(
            "extracting archive '/var/lib/vz/template/cache/{name}'"
        ));
        if let Some(msg) = fail {
            return Err(msg);
        }
        log.push("Total bytes read: 524288000 (500MiB, 250MiB/s)".to_owned());
        let ostype = name
            .split(['-', '_'])
            .next()
            .filter(|o| {
                crate::pvesim::schema::check(
                    crate::pvesim::schema::Kind::Enum(&[
                        "debian",
                        "ubuntu",
                        "alpine",
                        "centos",
                        "fedora",
                        "archlinux",
                        "devuan",
                        "gentoo",
                        "opensuse",
                        "nixos",
                    ]),
                    o,
                )
                .is_ok()
            })
            .unwrap_or("unmanaged");
        log.push(format!(
            "Detected container architecture: {}",
            conf.main.get("arch").map_or("amd64", String::as_str)
        ));
        log.push(
            "Creating SSH host key 'ssh_host_ed25519_key' - this may take some time ...".to_owned(),
        );
        conf.main
            .entry("arch".to_owned())
            .or_insert_with(|| "amd64".to_owned());
        conf.main
            .entry("ostype".to_owned())
            .or_insert_with(|| ostype.to_owned());
        conf.main
            .entry("hostname".to_owned())
            .or_insert_with(|| format!("CT{vmid}"));
        conf.main
            .entry("memory".to_owned())
            .or_insert_with(|| "512".to_owned());
        conf.main
            .entry("swap".to_owned())
            .or_insert_with(|| "512".to_owned());
        if self.unprivileged {
            conf.main.insert("unprivileged".to_owned(), "1".to_owned());
        }
        Ok(conf)
    }
}

/// `PUT .../resize`: grows a volume (`+` relative), refuses shrinking; runs as a task.
pub(crate) fn resize(
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

/// One interface as `ip --json a` inside the CT shows it.
pub(crate) fn interface_json(
    vmid: u32,
    key: &str,
    props: &propstr::Props,
    dhcp_ready: bool,
) -> Value {
    let mac = props
        .get("hwaddr")
        .map(|m| m.to_lowercase())
        .unwrap_or_default();
    let name = props.get("name").cloned().unwrap_or_else(|| key.to_owned());
    let idx = key.trim_start_matches("net").parse::<u32>().unwrap_or(0);
    let mut addrs = Vec::new();
    let mut v = json!({ "name": name, "hwaddr": mac, "hardware-address": mac });
    let v4 = match props.get("ip").map(String::as_str) {
        Some("dhcp") if dhcp_ready => Some(format!(
            "10.{}.{}.{}/24",
            (vmid >> 8) & 0xff,
            vmid & 0xff,
            10 + idx
        )),
        Some(ip) if ip.contains('/') => Some(ip.to_owned()),
        _ => None,
    };
    if let Some(cidr) = v4 {
        let (ip, prefix) = cidr.split_once('/').unwrap_or((&cidr, "24"));
        v["inet"] = json!(cidr);
        addrs.push(json!({ "ip-address": ip, "ip-address-type": "inet", "prefix": prefix.parse::<u32>().unwrap_or(24) }));
    }
    let bytes: Vec<u8> = mac
        .split(':')
        .filter_map(|b| u8::from_str_radix(b, 16).ok())
        .collect();
    if bytes.len() == 6 {
        let ll = format!(
            "fe80::{:02x}{:02x}:{:02x}ff:fe{:02x}:{:02x}{:02x}",
            bytes[0] ^ 2,
            bytes[1],
            bytes[2],
            bytes[3],
            bytes[4],
            bytes[5]
        );
        v["inet6"] = json!(format!("{ll}/64"));
        addrs.push(json!({ "ip-address": ll, "ip-address-type": "inet6", "prefix": 64 }));
    }
    v["ip-addresses"] = Value::Array(addrs);
    v
}
