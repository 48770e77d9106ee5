//! `POST /nodes/{node}/lxc`: the synchronous checks of pve-container's `create_vm`
//! (`src/PVE/API2/LXC.pm`), the `create` lock, then the `vzcreate` task.

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
        job.reserve(&mut cluster, &params, ha_managed)?;
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
    /// The request's values (checked against `api_schema::lxc::CREATE` already). A bare size
    /// for `rootfs`/`mpN` means a new volume on the default storage (`<storage>:<size>`).
    fn from_params(node: String, caller: &Caller, params: &Params) -> ApiResult<Self> {
        let vmid = parse_vmid(params.get("vmid")?.unwrap_or_default())?;
        let ostemplate = params.get("ostemplate")?.unwrap_or_default().to_owned();
        let storage = params.get("storage")?.unwrap_or("local").to_owned();
        let unprivileged = params.get("unprivileged")? != Some("0");
        let mut set = config_params(params)?;
        for (key, value) in set.iter_mut() {
            let bare = value.split_once('.').map_or(value.as_str(), |(a, _)| a);
            if (key == "rootfs" || key.starts_with("mp"))
                && !bare.is_empty()
                && bare.bytes().all(|b| b.is_ascii_digit())
                && value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            {
                *value = format!("{storage}:{value}");
            }
        }
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

    /// `create_vm`'s synchronous part, in its order: `check_vmid_unused`, the SSH keys, the
    /// pool, the mount points and their storages (the default storage only without `rootfs`),
    /// `update_pct_config`'s checks (hook script, MTU), then `create_and_lock_config`.
    fn reserve(&self, cluster: &mut Cluster, params: &Params, ha_managed: bool) -> ApiResult<()> {
        cluster.node(&self.node)?;
        cluster.check_vmid_unused(self.vmid)?;
        if let Some(keys) = params.get("ssh-public-keys")? {
            crate::qemu_format::check_ssh_key_lines(keys).map_err(ApiError::die)?;
        }
        if let Some(pool) = params.get("pool")?
            && !cluster.pools.contains_key(pool)
        {
            return Err(ApiError::forbidden(format!(
                "Permission check failed (pool '{pool}' does not exist)"
            )));
        }
        self.check_storages(cluster)?;
        self.check_config(cluster)?;
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

    /// Mount points need `rootfs`; every volume's storage (or the default one) must exist on
    /// the node and hold container directories (`$check_and_activate_storage`).
    fn check_storages(&self, cluster: &Cluster) -> ApiResult<()> {
        let has_mp = self.set.keys().any(|k| k.starts_with("mp"));
        if has_mp && !self.set.contains_key("rootfs") {
            return Err(ApiError::die(
                "mount points configured, but 'rootfs' not set - aborting",
            ));
        }
        let mut sids: Vec<String> = self
            .set
            .iter()
            .filter(|(k, _)| *k == "rootfs" || k.starts_with("mp"))
            .filter_map(|(_, v)| crate::volumes::volume_of(v))
            .filter(|v| !v.starts_with('/'))
            .filter_map(|v| storage_of(&v).map(str::to_owned))
            .collect();
        if !self.set.contains_key("rootfs") {
            sids.push(self.storage.clone());
        }
        for sid in sids {
            match cluster.storages.get(&(self.node.clone(), sid.clone())) {
                Some(s) if s.content.contains("rootdir") => {}
                Some(_) => {
                    let msg = format!("storage '{sid}' does not support container directories");
                    return Err(ApiError::param("storage", msg));
                }
                None => return Err(ApiError::die(format!("storage '{sid}' does not exist"))),
            }
        }
        Ok(())
    }

    /// The checks `update_pct_config` makes on a new container before it is locked.
    fn check_config(&self, cluster: &Cluster) -> ApiResult<()> {
        if let Some(script) = self.set.get("hookscript") {
            crate::snippets::check_hookscript(cluster, &self.node, script)
                .map_err(ApiError::die)?;
        }
        let bridges = cluster
            .nodes
            .get(&self.node)
            .map(|n| n.network.bridges())
            .unwrap_or_default();
        for (key, value) in self.set.iter().filter(|(k, _)| k.starts_with("net")) {
            crate::netconf::check_net(key, value, &bridges)?;
        }
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
        let mut conf = self.initial_config(cluster)?;
        let name = self
            .ostemplate
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let oci = cluster.oci.archives.get(&self.ostemplate).cloned();
        if oci.is_some() {
            log.push("Detected OCI archive".to_owned());
        } else {
            log.push(format!(
                "extracting archive '/var/lib/vz/template/cache/{name}'"
            ));
        }
        if let Some(msg) = fail {
            return Err(msg);
        }
        if let Some(image) = &oci {
            crate::oci::restore(image, &mut conf.main);
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
