//! `POST /nodes/{node}/lxc` (the `vzcreate` task with its `create` lock), `resize`, and the
//! in-guest view of a network interface.

use std::collections::BTreeMap;

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::lxc::{check_root_only, config_params};
use super::{Params, SimState, data, parse_vmid};
use crate::auth::Caller;
use crate::conf::Conf;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, Guest, GuestKind, now};
use crate::pending::{self, Env};
use crate::storage::storage_of;
use crate::worker;

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

/// `POST /nodes/{node}/lxc`: checks, the `create` lock at once, the rest in a `vzcreate` task.
pub(crate) async fn create(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let job = CreateJob::from_params(node, &caller, &params)?;
    let ha_managed = params.flag("ha-managed")?;
    let sim = state.0;
    let (upid, vmid) = {
        let mut cluster = sim.cluster();
        crate::pools::check_exists(&cluster, params.get("pool")?)?;
        job.reserve(&mut cluster, ha_managed)?;
        crate::pools::add_vm(&mut cluster, job.vmid, params.get("pool")?);
        // What PVE writes into the guest out of the API's sight, kept for tests.
        let mut created_from = BTreeMap::from([("ostemplate".to_owned(), job.ostemplate.clone())]);
        for key in ["ssh-public-keys", "pool", "storage"] {
            if let Some(value) = params.get(key)? {
                created_from.insert(key.to_owned(), value.to_owned());
            }
        }
        cluster.created_from.insert(job.vmid, created_from);
        (
            cluster.new_task(
                &job.node,
                "vzcreate",
                &job.vmid.to_string(),
                &caller.upid_user(),
            ),
            job.vmid,
        )
    };
    let body = Box::new(move |cluster: &mut Cluster, log: &mut Vec<String>, fail| {
        job.run(cluster, log, fail)
    });
    worker::spawn(&sim, upid.clone(), "vzcreate", Some(vmid), body);
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
    /// The synchronous parameter checks of `create_vm`.
    fn from_params(node: String, caller: &Caller, params: &Params) -> ApiResult<Self> {
        let missing = |k: &str| ApiError::param(k, "property is missing and it is not optional");
        let vmid = parse_vmid(params.get("vmid")?.ok_or_else(|| missing("vmid"))?)?;
        let ostemplate = params
            .get("ostemplate")?
            .ok_or_else(|| missing("ostemplate"))?
            .to_owned();
        let storage = params.get("storage")?.unwrap_or("local").to_owned();
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
        let set = config_params(params, CREATE_EXTRA)?;
        let current = BTreeMap::from([(
            "unprivileged".to_owned(),
            if unprivileged { "1" } else { "0" }.to_owned(),
        )]);
        check_root_only(caller, &current, &set, &[])?;
        Ok(Self {
            node,
            vmid,
            ostemplate,
            storage,
            set,
            unprivileged,
            start: params.flag("start")?,
        })
    }

    /// `check_vmid_unused`, the storage check, then `create_and_lock_config`.
    fn reserve(&self, cluster: &mut Cluster, ha_managed: bool) -> ApiResult<()> {
        cluster.node(&self.node)?;
        cluster.check_vmid_unused(self.vmid)?;
        let storage = &self.storage;
        // API2/LXC.pm create_vm: the default storage is checked only when `rootfs` is absent
        // (`pct create ... --rootfs local-lvm:8` names its storage in the volume)
        let default_used = !self.set.contains_key("rootfs");
        match cluster.storages.get(&(self.node.clone(), storage.clone())) {
            _ if !default_used => {}
            Some(s) if s.content.contains("rootdir") => {}
            Some(_) => {
                let msg = format!("storage '{storage}' does not support container directories");
                return Err(ApiError::param("storage", msg));
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
            vmid: self.vmid,
            node: self.node.clone(),
            kind: GuestKind::Lxc,
            conf,
            running: false,
            started_at: None,
            pid: None,
            booted: None,
            ha_managed,
            events: Vec::new(),
            ignores_acpi: false,
            cloudinit_generated: None,
        };
        cluster.guests.insert(self.vmid, guest);
        Ok(())
    }

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

    /// The task body: template check, disks and config, archive extraction, defaults.
    fn build(
        &self,
        cluster: &mut Cluster,
        log: &mut Vec<String>,
        fail: Option<String>,
    ) -> Result<Conf, String> {
        if let Some(script) = self.set.get("hookscript") {
            crate::snippets::check_hookscript(cluster, &self.node, script)?;
        }
        let mut conf = self.initial_config(cluster)?;
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
        let arch = conf
            .main
            .get("arch")
            .cloned()
            .unwrap_or_else(|| "amd64".to_owned());
        log.push(format!("Detected container architecture: {arch}"));
        log.push(
            "Creating SSH host key 'ssh_host_ed25519_key' - this may take some time ...".to_owned(),
        );
        let defaults = [
            ("arch", arch),
            ("ostype", detect_ostype(&name).to_owned()),
            ("hostname", format!("CT{}", self.vmid)),
            ("memory", "512".to_owned()),
            ("swap", "512".to_owned()),
        ];
        for (key, value) in defaults {
            conf.main.entry(key.to_owned()).or_insert(value);
        }
        if self.unprivileged {
            conf.main.insert("unprivileged".to_owned(), "1".to_owned());
        }
        Ok(conf)
    }

    /// The template must exist; disks are allocated (`rootfs` defaults to `<storage>:4`).
    fn initial_config(&self, cluster: &mut Cluster) -> Result<Conf, String> {
        let template_sid = storage_of(&self.ostemplate).unwrap_or("local").to_owned();
        let template = cluster.storages.get(&(self.node.clone(), template_sid));
        if !template.is_some_and(|s| {
            s.volumes
                .get(&self.ostemplate)
                .is_some_and(|v| v.content == "vztmpl")
        }) {
            return Err(format!("volume '{}' does not exist", self.ostemplate));
        }
        let mut set = self.set.clone();
        set.entry("rootfs".to_owned())
            .or_insert_with(|| format!("{}:4", self.storage));
        let bridges = cluster
            .nodes
            .get(&self.node)
            .map(|n| n.network.bridges())
            .unwrap_or_default();
        let mut env = Env {
            node: &self.node,
            vmid: self.vmid,
            storages: &mut cluster.storages,
            bridges: &bridges,
            now: now(),
            events: Vec::new(),
            warnings: Vec::new(),
        };
        pending::initial(&set, &mut env)
    }
}

/// The OS PVE's setup code would detect, guessed from the template name.
fn detect_ostype(template: &str) -> &'static str {
    const KNOWN: &[&str] = &[
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
    ];
    let first = template.split(['-', '_']).next().unwrap_or_default();
    KNOWN
        .iter()
        .find(|k| **k == first)
        .copied()
        .unwrap_or("unmanaged")
}
