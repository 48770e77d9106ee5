//! The cluster's own configuration: bpg's `_hosts`, `_cluster_options`, `_hagroup`,
//! `_haresource`, `_harule`, `_replication` and `_metrics_server` to PVE objects. One table
//! per type names each argument's PVE key; the datacenter options' grouped keys (`crs`,
//! `migration`, `next-id`, ...) are property strings with their parts sorted by name, the
//! way the inventory reads them back, and a map of nodes is PVE's `node[:priority]` list.

use std::collections::BTreeMap;

use super::values::{Marks, Object, bit, blocks, num, object};
use super::{DesiredError, lifecycle, must_know};
use crate::proxmox::plan::DesiredObject;
use crate::proxmox::types::{ObjectId, ObjectKind, Scope};
use tfconfig::{ResourceInstance, Value};

#[derive(Clone, Copy)]
enum Conv {
    Text,
    Flag,
    Number,
}

/// `(bpg argument, PVE key, conversion)`; a key with a `.` is a part of a property string
/// (`crs.ha`), a bpg argument with a `.` an attribute of a nested object (`next_id.lower`).
type Params = &'static [(&'static str, &'static str, Conv)];

struct Spec {
    kind: ObjectKind,
    name: Option<&'static str>,
    params: Params,
}

const OPTIONS: Params = {
    use Conv::{Flag, Number, Text};
    &[
        ("bandwidth_limit_clone", "bwlimit.clone", Number),
        ("bandwidth_limit_default", "bwlimit.default", Number),
        ("bandwidth_limit_migration", "bwlimit.migration", Number),
        ("bandwidth_limit_move", "bwlimit.move", Number),
        ("bandwidth_limit_restore", "bwlimit.restore", Number),
        ("console", "console", Text),
        ("crs_ha", "crs.ha", Text),
        ("crs_ha_auto_rebalance", "crs.ha-auto-rebalance", Flag),
        (
            "crs_ha_auto_rebalance_hold_duration",
            "crs.ha-auto-rebalance-hold-duration",
            Number,
        ),
        (
            "crs_ha_auto_rebalance_margin",
            "crs.ha-auto-rebalance-margin",
            Number,
        ),
        (
            "crs_ha_auto_rebalance_method",
            "crs.ha-auto-rebalance-method",
            Text,
        ),
        (
            "crs_ha_auto_rebalance_threshold",
            "crs.ha-auto-rebalance-threshold",
            Number,
        ),
        (
            "crs_ha_rebalance_on_start",
            "crs.ha-rebalance-on-start",
            Flag,
        ),
        ("description", "description", Text),
        ("email_from", "email_from", Text),
        ("ha_shutdown_policy", "ha.shutdown_policy", Text),
        ("http_proxy", "http_proxy", Text),
        ("keyboard", "keyboard", Text),
        ("language", "language", Text),
        ("mac_prefix", "mac_prefix", Text),
        ("max_workers", "max_workers", Number),
        ("migration_cidr", "migration.network", Text),
        ("migration_type", "migration.type", Text),
        ("next_id.lower", "next-id.lower", Number),
        ("next_id.upper", "next-id.upper", Number),
        ("notify.ha_fencing_mode", "notify.fencing", Text),
        ("notify.ha_fencing_target", "notify.target-fencing", Text),
        ("notify.package_updates", "notify.package-updates", Text),
        (
            "notify.package_updates_target",
            "notify.target-package-updates",
            Text,
        ),
        ("notify.replication", "notify.replication", Text),
        (
            "notify.replication_target",
            "notify.target-replication",
            Text,
        ),
    ]
};

const METRICS: Params = {
    use Conv::{Flag, Number, Text};
    &[
        ("port", "port", Number),
        ("server", "server", Text),
        ("type", "type", Text),
        ("disable", "disable", Flag),
        ("mtu", "mtu", Number),
        ("timeout", "timeout", Number),
        ("graphite_path", "path", Text),
        ("graphite_proto", "proto", Text),
        ("influx_api_path_prefix", "api-path-prefix", Text),
        ("influx_bucket", "bucket", Text),
        ("influx_db_proto", "influxdbproto", Text),
        ("influx_max_body_size", "max-body-size", Number),
        ("influx_organization", "organization", Text),
        ("influx_verify", "verify-certificate", Flag),
        ("opentelemetry_compression", "otel-compression", Text),
        ("opentelemetry_max_body_size", "otel-max-body-size", Number),
        ("opentelemetry_path", "otel-path", Text),
        ("opentelemetry_proto", "otel-protocol", Text),
        (
            "opentelemetry_resource_attributes",
            "otel-resource-attributes",
            Text,
        ),
        ("opentelemetry_timeout", "otel-timeout", Number),
        ("opentelemetry_verify_ssl", "otel-verify-ssl", Flag),
    ]
};

/// Metric server arguments atoll does not send: a secret it would have to show in the plan
/// and keep in its state, and PVE never gives back to compare.
const SECRETS: &[&str] = &["influx_token", "influx_token_wo", "opentelemetry_headers"];

fn spec(resource_type: &str) -> Option<Spec> {
    use Conv::{Flag, Number, Text};
    let short = resource_type
        .strip_prefix("proxmox_virtual_environment_")
        .or_else(|| resource_type.strip_prefix("proxmox_"))?;
    Some(match short {
        "hosts" => Spec {
            kind: ObjectKind::NodeHosts,
            name: None,
            params: &[],
        },
        "cluster_options" => Spec {
            kind: ObjectKind::ClusterOptions,
            name: None,
            params: OPTIONS,
        },
        "hagroup" => Spec {
            kind: ObjectKind::HaGroup,
            name: Some("group"),
            params: &[
                ("comment", "comment", Text),
                ("no_failback", "nofailback", Flag),
                ("restricted", "restricted", Flag),
            ],
        },
        "haresource" => Spec {
            kind: ObjectKind::HaResource,
            name: Some("resource_id"),
            params: &[
                ("comment", "comment", Text),
                ("failback", "failback", Flag),
                ("group", "group", Text),
                ("max_relocate", "max_relocate", Number),
                ("max_restart", "max_restart", Number),
                ("state", "state", Text),
            ],
        },
        "harule" => Spec {
            kind: ObjectKind::HaRule,
            name: Some("rule"),
            params: &[
                ("type", "type", Text),
                ("affinity", "affinity", Text),
                ("comment", "comment", Text),
                ("disable", "disable", Flag),
                ("strict", "strict", Flag),
            ],
        },
        "replication" => Spec {
            kind: ObjectKind::Replication,
            name: Some("id"),
            params: &[
                ("target", "target", Text),
                ("type", "type", Text),
                ("comment", "comment", Text),
                ("disable", "disable", Flag),
                ("rate", "rate", Number),
                ("schedule", "schedule", Text),
            ],
        },
        "metrics_server" => Spec {
            kind: ObjectKind::MetricServer,
            name: Some("name"),
            params: METRICS,
        },
        _ => return None,
    })
}

/// Whether `resource_type` is one of the cluster's own objects.
pub(super) fn is_cluster(resource_type: &str) -> bool {
    spec(resource_type).is_some()
}

struct Reader<'a> {
    address: &'a str,
    attrs: &'a Object,
}

impl Reader<'_> {
    fn invalid(&self, why: impl Into<String>) -> DesiredError {
        DesiredError::Invalid {
            address: self.address.to_owned(),
            why: why.into(),
        }
    }

    /// The value at `path` (`next_id.lower`), through nested objects.
    fn value(&self, path: &str) -> Option<&Value> {
        let mut parts = path.split('.');
        let mut value = self.attrs.get(parts.next()?)?;
        for part in parts {
            value = match value.unmark().0 {
                Value::Object(fields) | Value::Map(_, fields) => fields.get(part)?,
                _ => return None,
            };
        }
        Some(value)
    }

    /// A known, not sensitive value as PVE takes it; `None` when unset.
    fn param(&self, path: &str, conv: Conv) -> Result<Option<String>, DesiredError> {
        let mut marks = Marks::default();
        let value = self.value(path);
        let text = match conv {
            Conv::Text => marks.text(value).filter(|v| !v.is_empty()),
            Conv::Flag => marks.flag(value).map(|f| bit(f).to_owned()),
            Conv::Number => marks.number(value).map(num),
        };
        self.plain(path, marks)?;
        Ok(text)
    }

    fn plain(&self, path: &str, marks: Marks) -> Result<(), DesiredError> {
        if marks.unknown {
            return Err(must_know(self.address, path));
        }
        if marks.sensitive {
            return Err(self.invalid(format!(
                "{path} is sensitive, and atoll shows this object's values in the plan and \
                 keeps them in its state; set it from a value that is not sensitive"
            )));
        }
        Ok(())
    }

    /// A map of node names to priorities as PVE's `node[:priority]` list, sorted by node.
    fn nodes(&self, path: &str) -> Result<Option<String>, DesiredError> {
        let mut marks = Marks::default();
        let Some(map) = self.value(path).and_then(|v| marks.plain(v)) else {
            self.plain(path, marks)?;
            return Ok(None);
        };
        let (Value::Map(_, entries) | Value::Object(entries)) = map else {
            return Err(self.invalid(format!("{path} must be a map of node names")));
        };
        let mut list = Vec::new();
        for (node, priority) in entries {
            node.parse::<crate::proxmox::types::NodeName>()
                .map_err(|e| self.invalid(format!("{path}: {e}")))?;
            match marks.number(Some(priority)) {
                Some(p) if p.fract() != 0.0 || !(0.0..=1000.0).contains(&p) => {
                    return Err(self.invalid(format!(
                        "{path}[\"{node}\"]: a priority is a whole number from 0 to 1000"
                    )));
                }
                Some(p) => list.push(format!("{node}:{}", num(p))),
                None => list.push(node.clone()),
            }
        }
        self.plain(path, marks)?;
        // sorted as text, as PVE's list is compared
        list.sort();
        Ok((!list.is_empty()).then(|| list.join(",")))
    }
}

/// The desired object of one resource instance of this family.
pub(super) fn build(resource: &ResourceInstance) -> Result<DesiredObject, DesiredError> {
    let address = &resource.address;
    let spec = spec(&resource.resource_type).ok_or_else(|| DesiredError::Invalid {
        address: address.clone(),
        why: "not one of the cluster's objects".to_owned(),
    })?;
    let attrs = object(&resource.attributes).ok_or_else(|| must_know(address, "the resource"))?;
    let reader = Reader { address, attrs };
    let (scope, name) = place(&reader, &spec)?;
    let id = ObjectId::new(spec.kind, scope, name.as_deref())
        .map_err(|e| reader.invalid(e.to_string()))?;
    let mut fields = BTreeMap::new();
    let mut labels = BTreeMap::new();
    let mut parts: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (arg, key, conv) in spec.params {
        let value = reader.param(arg, *conv)?;
        match key.split_once('.') {
            Some((group, part)) => {
                if let Some(value) = value {
                    parts
                        .entry(group)
                        .or_default()
                        .push(format!("{part}={value}"));
                }
                let label = labels.entry(group.to_owned()).or_insert_with(String::new);
                if !label.is_empty() {
                    label.push_str(", ");
                }
                label.push_str(arg);
            }
            None => {
                if let Some(value) = value {
                    fields.insert((*key).to_owned(), value);
                }
                labels.insert((*key).to_owned(), (*arg).to_owned());
            }
        }
    }
    for (group, mut list) in parts {
        list.sort();
        fields.insert(group.to_owned(), list.join(","));
    }
    extra(&reader, spec.kind, &mut fields, &mut labels)?;
    Ok(DesiredObject {
        address: address.clone(),
        resource_type: resource.resource_type.clone(),
        id,
        fields,
        entries: None,
        labels,
        lifecycle: lifecycle(&resource.lifecycle, None),
        uses: Vec::new(),
        bridges: Vec::new(),
        secrets: Default::default(),
    })
}

/// Where the object lives and its name.
fn place(reader: &Reader<'_>, spec: &Spec) -> Result<(Scope, Option<String>), DesiredError> {
    if spec.kind == ObjectKind::NodeHosts {
        let node = reader
            .param("node_name", Conv::Text)?
            .ok_or_else(|| reader.invalid("node_name is required"))?;
        let node = node
            .parse()
            .map_err(|e| reader.invalid(format!("node_name: {e}")))?;
        return Ok((Scope::Node { node }, None));
    }
    let name = match spec.name {
        Some(arg) => Some(
            reader
                .param(arg, Conv::Text)?
                .ok_or_else(|| reader.invalid(format!("{arg} is required")))?,
        ),
        None => None,
    };
    Ok((Scope::Cluster, name))
}

/// What a table cannot say: the hosts file, the node maps, a rule's resources, the metric
/// server secrets atoll refuses.
fn extra(
    reader: &Reader<'_>,
    kind: ObjectKind,
    fields: &mut BTreeMap<String, String>,
    labels: &mut BTreeMap<String, String>,
) -> Result<(), DesiredError> {
    match kind {
        ObjectKind::NodeHosts => {
            fields.insert("data".to_owned(), hosts_file(reader)?);
            labels.insert("data".to_owned(), "entry".to_owned());
        }
        ObjectKind::HaGroup | ObjectKind::HaRule => {
            if let Some(nodes) = reader.nodes("nodes")? {
                fields.insert("nodes".to_owned(), nodes);
            }
            labels.insert("nodes".to_owned(), "nodes".to_owned());
            if kind == ObjectKind::HaRule {
                let mut marks = Marks::default();
                let mut resources = marks.texts(reader.value("resources"));
                reader.plain("resources", marks)?;
                resources.sort();
                resources.dedup();
                if resources.is_empty() {
                    return Err(reader.invalid("resources: a rule needs at least one resource"));
                }
                fields.insert("resources".to_owned(), resources.join(","));
                labels.insert("resources".to_owned(), "resources".to_owned());
            }
        }
        ObjectKind::MetricServer => {
            for secret in SECRETS {
                let mut marks = Marks::default();
                if marks.text(reader.value(secret)).is_some() || marks.unknown {
                    return Err(reader.invalid(format!(
                        "{secret}: atoll does not send a metric server's secrets (it would keep \
                         them in its state, and Proxmox VE never gives them back to compare); \
                         remove the argument and set the secret once by hand in Datacenter > \
                         Metric Server, where atoll leaves it alone"
                    )));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The `entry` blocks as the lines of `/etc/hosts`: `address name...`, one per entry.
fn hosts_file(reader: &Reader<'_>) -> Result<String, DesiredError> {
    let entries = blocks(reader.attrs, "entry");
    if entries.is_empty() {
        return Err(reader.invalid("at least one entry block is required"));
    }
    if entries.len() > MAX_HOSTS {
        return Err(reader.invalid(format!(
            "{} entry blocks are more than atoll writes to /etc/hosts ({MAX_HOSTS})",
            entries.len()
        )));
    }
    let mut out = String::new();
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("entry[{i}]");
        let mut marks = Marks::default();
        let address = marks.text(entry.get("address"));
        let names = marks.texts(entry.get("hostnames"));
        reader.plain(&at, marks)?;
        let address = address
            .filter(|a| a.parse::<std::net::IpAddr>().is_ok())
            .ok_or_else(|| reader.invalid(format!("{at}.address must be an IP address")))?;
        if names.is_empty() {
            return Err(reader.invalid(format!("{at}.hostnames needs at least one name")));
        }
        for name in &names {
            let ok = !name.is_empty()
                && name.len() <= 253
                && name
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"-._".contains(&c));
            if !ok {
                return Err(reader.invalid(format!(
                    "{at}.hostnames: {name:?} is not a host name (letters, digits, '-', '.', '_')"
                )));
            }
        }
        out.push_str(&format!("{address} {}\n", names.join(" ")));
    }
    Ok(out)
}

/// The most entries one hosts file may list: a pull request chooses how many.
const MAX_HOSTS: usize = 1_000;

/// What an object of this family uses among the configuration's other resources: an HA
/// resource or a replication job its guest, an HA resource its group, a rule the HA
/// resources it names.
pub(super) fn used<'a>(
    id: &ObjectId,
    fields: &BTreeMap<String, String>,
    guests: &'a BTreeMap<u32, String>,
    named: &'a BTreeMap<(ObjectKind, String), String>,
) -> Vec<&'a String> {
    let name = id.name.as_deref().unwrap_or_default();
    let guest = |vmid: &str| vmid.parse::<u32>().ok().and_then(|id| guests.get(&id));
    match id.kind {
        ObjectKind::HaResource => {
            let group = fields
                .get("group")
                .and_then(|g| named.get(&(ObjectKind::HaGroup, g.clone())));
            let vm = name.split_once(':').and_then(|(_, id)| guest(id));
            vm.into_iter().chain(group).collect()
        }
        ObjectKind::Replication => name
            .split_once('-')
            .and_then(|(id, _)| guest(id))
            .into_iter()
            .collect(),
        ObjectKind::HaRule => fields
            .get("resources")
            .into_iter()
            .flat_map(|list| list.split(','))
            .filter_map(|sid| named.get(&(ObjectKind::HaResource, sid.to_owned())))
            .collect(),
        _ => Vec::new(),
    }
}
