//! The scenario file (YAML): nodes, storages, templates, existing guests and API credentials,
//! with the defaults used when no file is given. `docs/pve-sim.md` documents the format.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::conf::Conf;
use super::model::{Cluster, Guest, GuestKind, Node, now};
use super::pending::{self, Env};
use super::propstr;
use super::storage::{Storage, Volume};

/// A whole scenario.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Nodes; default: one node `pve`.
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    /// Existing guests.
    #[serde(default)]
    pub guests: Vec<GuestSpec>,
    /// API tokens `user@realm!id` → secret; default `root@pam!atoll` = `secret`.
    #[serde(default)]
    pub tokens: BTreeMap<String, String>,
    /// Users `user@realm` → password for ticket login; default `root@pam` = `secret`.
    #[serde(default)]
    pub users: BTreeMap<String, String>,
    /// Resource pools that exist from the start.
    #[serde(default)]
    pub pools: Vec<PoolSpec>,
    /// Roles made by the administrator: name → privileges (the built-in ones always exist).
    #[serde(default)]
    pub roles: BTreeMap<String, Vec<String>>,
    /// ACL entries that exist from the start.
    #[serde(default)]
    pub acl: Vec<AclSpec>,
    /// Tokens (`user@realm!id`, listed under `tokens`) with privilege separation: they hold
    /// only their own ACL entries, limited to what their user holds. Others act as their user.
    #[serde(default)]
    pub privsep_tokens: Vec<String>,
    /// The OCI registry `oci-registry-pull` reaches: image reference (with its tag) → the
    /// image's configuration. A reference not listed cannot be pulled.
    #[serde(default)]
    pub registry: BTreeMap<String, crate::oci::OciImageSpec>,
}

/// One ACL entry: a role for exactly one of `user` or `token` on `path`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AclSpec {
    pub path: String,
    pub role: String,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub token: Option<String>,
    /// Whether the role also holds below `path` (PVE's default: yes).
    #[serde(default = "default_propagate")]
    pub propagate: bool,
}

fn default_propagate() -> bool {
    true
}

/// One resource pool (`poolid` may be nested, `a/b`: its parent must be listed before it).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    pub poolid: String,
    #[serde(default)]
    pub comment: Option<String>,
    /// Member guests.
    #[serde(default)]
    pub vms: Vec<u32>,
    /// Member storage ids.
    #[serde(default)]
    pub storage: Vec<String>,
}

/// One node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    /// Bridge name → MTU; default `vmbr0: 1500`.
    #[serde(default)]
    pub bridges: BTreeMap<String, u32>,
    /// Storages; default `local` (dir) and `local-lvm` (lvmthin).
    #[serde(default)]
    pub storages: Option<Vec<StorageSpec>>,
    #[serde(default)]
    pub offline: bool,
    /// DNS, `/etc/hosts` and time zone; defaults of a fresh install.
    #[serde(default)]
    pub settings: Option<super::node_settings::NodeSettingsSpec>,
}

/// One storage on a node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageSpec {
    pub id: String,
    #[serde(rename = "type")]
    pub stype: String,
    pub content: Vec<String>,
    /// Capacity, e.g. `100G` or bytes; default 100G.
    #[serde(default)]
    pub total: Option<String>,
    #[serde(default)]
    pub shared: bool,
    /// Template file names present (`vztmpl`).
    #[serde(default)]
    pub templates: Vec<String>,
    /// ISO file names present (`iso`).
    #[serde(default)]
    pub isos: Vec<String>,
    /// Disk images for `import-from` (`<id>:import/<name>`, 2 GiB each).
    #[serde(default)]
    pub imports: Vec<String>,
    /// A real directory that stands for the storage's path (reported by `GET /storage/{id}`);
    /// the files in its `snippets` subdirectory are the storage's snippets.
    #[serde(default)]
    pub path: Option<std::path::PathBuf>,
}

/// One existing guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestSpec {
    pub vmid: u32,
    #[serde(default = "default_node")]
    pub node: String,
    /// `lxc` or `qemu`.
    #[serde(rename = "type", default = "default_type")]
    pub kind: String,
    /// `running` or `stopped`.
    #[serde(default = "default_status")]
    pub status: String,
    /// Config keys (values may be YAML strings, numbers or booleans).
    #[serde(default)]
    pub config: BTreeMap<String, serde_yaml_ng::Value>,
    /// Changes already pending.
    #[serde(default)]
    pub pending: BTreeMap<String, serde_yaml_ng::Value>,
    #[serde(default)]
    pub ha_managed: bool,
    /// The guest OS ignores ACPI shutdown requests (QEMU: a shutdown without the guest agent
    /// times out unless forced).
    #[serde(default)]
    pub ignores_acpi: bool,
}

fn default_node() -> String {
    "pve".to_owned()
}
fn default_type() -> String {
    "lxc".to_owned()
}
fn default_status() -> String {
    "stopped".to_owned()
}

/// The template every default `local` storage holds.
pub const DEFAULT_TEMPLATE: &str = "debian-12-standard_12.7-1_amd64.tar.zst";

fn default_storages() -> Vec<StorageSpec> {
    vec![
        StorageSpec {
            id: "local".to_owned(),
            stype: "dir".to_owned(),
            content: vec!["vztmpl".to_owned(), "iso".to_owned(), "backup".to_owned()],
            total: Some("100G".to_owned()),
            shared: false,
            templates: vec![DEFAULT_TEMPLATE.to_owned()],
            isos: Vec::new(),
            imports: Vec::new(),
            path: None,
        },
        StorageSpec {
            id: "local-lvm".to_owned(),
            stype: "lvmthin".to_owned(),
            content: vec!["rootdir".to_owned(), "images".to_owned()],
            total: Some("500G".to_owned()),
            shared: false,
            templates: Vec::new(),
            isos: Vec::new(),
            imports: Vec::new(),
            path: None,
        },
    ]
}

impl Scenario {
    /// Reads a scenario file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading scenario {}: {e}", path.display()))?;
        serde_yaml_ng::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "parsing scenario {}: {e} (see docs/pve-sim.md for the format)",
                path.display()
            )
        })
    }

    pub(crate) fn tokens(&self) -> BTreeMap<String, String> {
        if self.tokens.is_empty() {
            BTreeMap::from([("root@pam!atoll".to_owned(), "secret".to_owned())])
        } else {
            self.tokens.clone()
        }
    }

    pub(crate) fn users(&self) -> BTreeMap<String, String> {
        if self.users.is_empty() {
            BTreeMap::from([("root@pam".to_owned(), "secret".to_owned())])
        } else {
            self.users.clone()
        }
    }

    /// Builds the cluster state, or says which entry is wrong.
    pub(crate) fn build(&self) -> anyhow::Result<Cluster> {
        let mut cluster = Cluster::default();
        cluster.oci.registry = self.registry.clone();
        let default_node = [NodeSpec {
            name: "pve".to_owned(),
            bridges: BTreeMap::new(),
            storages: None,
            offline: false,
            settings: None,
        }];
        let nodes = if self.nodes.is_empty() {
            &default_node[..]
        } else {
            &self.nodes[..]
        };
        for (i, spec) in nodes.iter().enumerate() {
            add_node(&mut cluster, spec, i as u64)?;
        }
        for guest in &self.guests {
            add_guest(&mut cluster, guest)?;
        }
        for pool in &self.pools {
            let p = crate::pools::Pool {
                comment: pool.comment.clone(),
                vms: pool.vms.iter().copied().collect(),
                storage: pool.storage.iter().cloned().collect(),
            };
            cluster.pools.insert(pool.poolid.clone(), p);
        }
        cluster.access =
            crate::access_control::AccessControl::seeded(self.users().keys(), self.tokens().keys());
        self.add_access(&mut cluster.access)?;
        Ok(cluster)
    }
}

impl Scenario {
    /// The scenario's roles, ACL entries and privilege-separated tokens.
    fn add_access(&self, access: &mut crate::access_control::AccessControl) -> anyhow::Result<()> {
        for (name, privs) in &self.roles {
            access
                .roles
                .insert(name.clone(), privs.iter().cloned().collect());
        }
        for full in &self.privsep_tokens {
            let token = full.rsplit_once('!').and_then(|(user, id)| {
                access
                    .users
                    .get_mut(user)
                    .and_then(|u| u.tokens.get_mut(id))
            });
            let Some(token) = token else {
                anyhow::bail!("privsep_tokens: {full} is not listed under tokens");
            };
            token.privsep = true;
        }
        for entry in &self.acl {
            let (ty, who) = match (&entry.user, &entry.token) {
                (Some(user), None) => ("user", user),
                (None, Some(token)) => ("token", token),
                _ => anyhow::bail!(
                    "acl entry on {}: give exactly one of user or token",
                    entry.path
                ),
            };
            if access.role(&entry.role).is_none() {
                anyhow::bail!(
                    "acl entry on {}: role {} does not exist",
                    entry.path,
                    entry.role
                );
            }
            let key = (entry.path.clone(), ty, who.clone(), entry.role.clone());
            access.acl.insert(key, entry.propagate);
        }
        Ok(())
    }
}

fn add_node(cluster: &mut Cluster, spec: &NodeSpec, index: u64) -> anyhow::Result<()> {
    let mut bridges = spec.bridges.clone();
    if bridges.is_empty() {
        bridges.insert("vmbr0".to_owned(), 1500);
    }
    let node = Node {
        name: spec.name.clone(),
        online: !spec.offline,
        network: super::network::NodeNetwork::seeded(&bridges, index),
        pstart: 0x12C3D4 + index * 0x1000,
        settings: super::node_settings::NodeSettings::new(
            &spec.name,
            index,
            spec.settings.as_ref(),
        ),
    };
    cluster.nodes.insert(spec.name.clone(), node);
    for s in spec.storages.clone().unwrap_or_else(default_storages) {
        let total = match &s.total {
            Some(t) => propstr::parse_size(t).ok_or_else(|| {
                anyhow::anyhow!(
                    "storage '{}' on node '{}': bad total '{t}' (use e.g. 100G)",
                    s.id,
                    spec.name
                )
            })?,
            None => 100 << 30,
        };
        let mut storage = Storage {
            id: s.id.clone(),
            stype: s.stype.clone(),
            content: s.content.iter().cloned().collect(),
            total,
            shared: s.shared,
            volumes: BTreeMap::new(),
            linked: BTreeMap::new(),
            dir: s.path.clone(),
        };
        for (content, names) in [
            ("vztmpl", &s.templates),
            ("iso", &s.isos),
            ("import", &s.imports),
        ] {
            for name in names {
                let volid = format!("{}:{content}/{name}", s.id);
                let volume = Volume {
                    volid: volid.clone(),
                    content: content.to_owned(),
                    size: if content == "import" {
                        2 << 30
                    } else {
                        120 << 20
                    },
                    vmid: None,
                    ctime: now(),
                };
                storage.volumes.insert(volid, volume);
            }
        }
        cluster
            .storages
            .insert((spec.name.clone(), s.id.clone()), storage);
    }
    Ok(())
}

fn yaml_to_string(value: &serde_yaml_ng::Value) -> String {
    match value {
        serde_yaml_ng::Value::Bool(b) => if *b { "1" } else { "0" }.to_owned(),
        serde_yaml_ng::Value::Number(n) => n.to_string(),
        serde_yaml_ng::Value::String(s) => s.clone(),
        other => serde_yaml_ng::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_owned(),
    }
}

fn add_guest(cluster: &mut Cluster, spec: &GuestSpec) -> anyhow::Result<()> {
    let vmid = spec.vmid;
    if !(100..=999_999_999).contains(&vmid) {
        anyhow::bail!("guest {vmid}: vmid must be between 100 and 999999999");
    }
    if cluster.guests.contains_key(&vmid) {
        anyhow::bail!("guest {vmid} is declared twice (VMIDs are unique across the cluster)");
    }
    let kind = match spec.kind.as_str() {
        "lxc" => GuestKind::Lxc,
        "qemu" => GuestKind::Qemu,
        other => anyhow::bail!("guest {vmid}: type '{other}' is not lxc or qemu"),
    };
    let running = match spec.status.as_str() {
        "running" => true,
        "stopped" => false,
        other => anyhow::bail!("guest {vmid}: status '{other}' is not running or stopped"),
    };
    let mut conf = guest_conf(cluster, spec, kind)?;
    for (k, v) in &spec.pending {
        conf.pending.insert(k.clone(), yaml_to_string(v));
    }
    let guest = Guest {
        vmid,
        node: spec.node.clone(),
        kind,
        conf,
        running,
        started_at: running.then(now),
        pid: running.then_some(10_000 + vmid),
        booted: running.then(std::time::Instant::now),
        ha_managed: spec.ha_managed,
        events: Vec::new(),
        ignores_acpi: spec.ignores_acpi,
        cloudinit_generated: None,
    };
    cluster.guests.insert(vmid, guest);
    Ok(())
}

/// The config of a declared guest: an LXC one is built like a create (disks allocated, values
/// normalised, MACs generated); a QEMU one gets MACs for its NICs.
fn guest_conf(cluster: &mut Cluster, spec: &GuestSpec, kind: GuestKind) -> anyhow::Result<Conf> {
    let vmid = spec.vmid;
    let Some(node) = cluster.nodes.get(&spec.node).cloned() else {
        anyhow::bail!(
            "guest {vmid}: node '{}' is not declared under nodes",
            spec.node
        );
    };
    let mut set = BTreeMap::new();
    for (k, v) in &spec.config {
        let v = yaml_to_string(v);
        let v = match k.as_str() {
            "description" => super::conf::normalize_description(&v).unwrap_or_default(),
            _ => v,
        };
        set.insert(k.clone(), v);
    }
    if kind == GuestKind::Qemu {
        let mut conf = Conf {
            main: set,
            pending: BTreeMap::new(),
        };
        super::qemu::normalize_new(&mut conf);
        return Ok(conf);
    }
    for (key, value) in &set {
        super::api_schema::lxc::check_config_value(key, value)
            .map_err(|e| anyhow::anyhow!("guest {vmid}: {e}"))?;
    }
    let lock = set.remove("lock");
    let bridges = node.network.bridges();
    let mut env = Env {
        node: &spec.node,
        vmid,
        storages: &mut cluster.storages,
        bridges: &bridges,
        now: now(),
        events: Vec::new(),
        warnings: Vec::new(),
    };
    let mut conf =
        pending::initial(&set, &mut env).map_err(|e| anyhow::anyhow!("guest {vmid}: {e}"))?;
    if let Some(lock) = lock {
        conf.main.insert("lock".to_owned(), lock);
    }
    Ok(conf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(yaml: &str) -> anyhow::Result<Cluster> {
        let scenario: Scenario = serde_yaml_ng::from_str(yaml)?;
        scenario.build()
    }

    #[test]
    fn default_scenario_has_node_pve_with_local_and_local_lvm() {
        let cluster = build("{}").unwrap_or_default();
        let keys: Vec<(String, String)> = cluster.storages.keys().cloned().collect();
        assert_eq!(
            keys,
            [
                ("pve".to_owned(), "local".to_owned()),
                ("pve".to_owned(), "local-lvm".to_owned())
            ]
        );
    }

    #[test]
    fn guest_on_an_undeclared_node_is_refused() {
        let err = build("guests: [{vmid: 100, node: nope}]")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("guest 100: node 'nope' is not declared under nodes")
        );
    }

    #[test]
    fn bad_config_values_name_the_guest_and_key() {
        let err = build("guests: [{vmid: 100, config: {net0: 'bridge=vmbr0'}}]")
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.starts_with("guest 100: net0: invalid format")));
    }

    #[test]
    fn scenario_guest_is_normalised_like_a_create() {
        let cluster = build("guests: [{vmid: 100, config: {rootfs: 'local-lvm:8', tags: 'B;a', net0: 'name=eth0'}}]")
            .unwrap_or_default();
        let main = cluster
            .guests
            .get(&100)
            .map(|g| g.conf.main.clone())
            .unwrap_or_default();
        assert_eq!(
            main.get("rootfs").map(String::as_str),
            Some("local-lvm:vm-100-disk-0,size=8G")
        );
        assert_eq!(main.get("tags").map(String::as_str), Some("a;b"));
        assert!(
            main.get("net0")
                .is_some_and(|n| n.contains("hwaddr=BC:24:11:"))
        );
    }
}
