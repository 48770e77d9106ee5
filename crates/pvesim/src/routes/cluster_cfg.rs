//! `/cluster/options`, `/nodes/{node}/hosts` (write), `/cluster/ha/{resources,groups,rules}`,
//! `/cluster/replication` and `/cluster/metrics/server`, with PVE's parameter checks and
//! messages. The rules live in `crate::cluster_cfg`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use serde_json::{Map, Value, json};
use sha1::{Digest, Sha1};

use super::{Params, SimState, data};
use crate::cluster_cfg::{Section, groups_migrated, parse_sid, purge_rules, sorted_list};
use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, DELETE_LIST, DIGEST, Field};
use crate::server::Sim;

/// The routes of this family.
pub(crate) fn routes() -> Router<Arc<Sim>> {
    Router::new()
        .route("/cluster/options", get(options_get).put(options_put))
        .route(
            "/cluster/ha/resources",
            get(resources_list).post(resource_create),
        )
        .route(
            "/cluster/ha/resources/{sid}",
            get(resource_get)
                .put(resource_update)
                .delete(resource_delete),
        )
        .route("/cluster/ha/groups", get(groups_index).post(groups_create))
        .route(
            "/cluster/ha/groups/{group}",
            get(groups_read).put(groups_update).delete(groups_delete),
        )
        .route("/cluster/ha/rules", get(rules_list).post(rule_create))
        .route(
            "/cluster/ha/rules/{rule}",
            get(rule_get).put(rule_update).delete(rule_delete),
        )
        .route(
            "/cluster/replication",
            get(super::cluster_cfg_jobs::jobs_list).post(super::cluster_cfg_jobs::job_create),
        )
        .route(
            "/cluster/replication/{id}",
            get(super::cluster_cfg_jobs::job_get)
                .put(super::cluster_cfg_jobs::job_update)
                .delete(super::cluster_cfg_jobs::job_delete),
        )
        .route(
            "/cluster/metrics/server",
            get(super::cluster_cfg_jobs::metrics_list),
        )
        .route(
            "/cluster/metrics/server/{id}",
            get(super::cluster_cfg_jobs::metric_get)
                .post(super::cluster_cfg_jobs::metric_create)
                .put(super::cluster_cfg_jobs::metric_update)
                .delete(super::cluster_cfg_jobs::metric_delete),
        )
}

/// The digest of a section config file.
pub(super) fn digest<T: std::fmt::Debug>(sections: &T) -> String {
    hex::encode(Sha1::digest(format!("{sections:?}").as_bytes()))
}

/// `assert_if_modified`.
pub(super) fn check_digest(given: Option<&String>, current: &str) -> ApiResult<()> {
    match given {
        Some(d) if d != current => Err(ApiError::die(
            "detected modified configuration - file changed by other user? Try again.",
        )),
        _ => Ok(()),
    }
}

/// A section as JSON: numbers for the keys that are numbers, the rest as text.
pub(super) fn section_json(section: &Section, numbers: &[&str]) -> Map<String, Value> {
    section
        .iter()
        .map(|(k, v)| {
            let value = match v.parse::<i64>() {
                Ok(n) if numbers.contains(&k.as_str()) => json!(n),
                _ => json!(v),
            };
            (k.clone(), value)
        })
        .collect()
}

/// Applies an update's `delete` list and values; `options` are the keys the section may hold.
pub(super) fn update_section(
    section: &mut Section,
    values: &spec::Checked,
    delete: &[String],
    options: &[&str],
    required: &[&str],
) -> ApiResult<()> {
    for key in delete {
        if !options.contains(&key.as_str()) {
            return Err(ApiError::die(format!("no such option '{key}'")));
        }
        if required.contains(&key.as_str()) {
            return Err(ApiError::die(format!(
                "unable to delete required option '{key}'"
            )));
        }
        if values.contains_key(key) {
            return Err(ApiError::die(format!(
                "cannot set and delete property '{key}' at the same time!"
            )));
        }
        section.remove(key);
    }
    for (k, v) in values {
        if !["digest", "delete"].contains(&k.as_str()) {
            section.insert(k.clone(), v.clone());
        }
    }
    Ok(())
}

// --- datacenter options ---------------------------------------------------------------------

const OPTION_GROUPS: &[(&str, &[&str])] = &[
    (
        "bwlimit",
        &["clone", "default", "migration", "move", "restore"],
    ),
    (
        "crs",
        &[
            "ha",
            "ha-rebalance-on-start",
            "ha-auto-rebalance",
            "ha-auto-rebalance-threshold",
            "ha-auto-rebalance-method",
            "ha-auto-rebalance-hold-duration",
            "ha-auto-rebalance-margin",
        ],
    ),
    ("ha", &["shutdown_policy"]),
    ("migration", &["type", "network"]),
    ("replication", &["type", "network"]),
    ("next-id", &["lower", "upper"]),
    (
        "notify",
        &[
            "package-updates",
            "target-package-updates",
            "fencing",
            "target-fencing",
            "replication",
            "target-replication",
        ],
    ),
];

/// A grouped option's parts, checked against its format.
fn check_group(key: &str, value: &str) -> Result<(), String> {
    let Some((_, parts)) = OPTION_GROUPS.iter().find(|(k, _)| *k == key) else {
        return Ok(());
    };
    for part in value.split(',').filter(|p| !p.is_empty()) {
        let (name, v) = part.split_once('=').ok_or_else(|| {
            "invalid format - missing key in comma-separated list property".to_owned()
        })?;
        if !parts.contains(&name) {
            return Err(format!(
                "invalid format - property '{name}' not defined in format"
            ));
        }
        let allowed: Option<&[&str]> = match (key, name) {
            ("crs", "ha") => Some(&["basic", "static", "dynamic"]),
            ("crs", "ha-auto-rebalance-method") => Some(&["bruteforce", "topsis"]),
            ("migration" | "replication", "type") => Some(&["secure", "insecure"]),
            ("ha", "shutdown_policy") => Some(&["freeze", "failover", "conditional", "migrate"]),
            ("notify", "fencing" | "replication") => Some(&["always", "never"]),
            ("notify", "package-updates") => Some(&["auto", "always", "never"]),
            _ => None,
        };
        if let Some(allowed) = allowed
            && !allowed.contains(&v)
        {
            return Err(format!(
                "invalid format - {name}: value '{v}' does not have a value in the enumeration '{}'",
                allowed.join(", ")
            ));
        }
        if key == "next-id" || key == "bwlimit" {
            let n: i64 = v.parse().map_err(|_| {
                format!("invalid format - {name}: type check ('integer') failed - got '{v}'")
            })?;
            if key == "next-id" && !(100..=999_999_999).contains(&n) {
                return Err(format!(
                    "invalid format - {name}: value must have a minimum value of 100"
                ));
            }
        }
    }
    Ok(())
}

fn option_fields() -> Vec<Field> {
    let mut fields = vec![
        DIGEST,
        DELETE_LIST,
        Field::one_of("console", &["applet", "vv", "html5", "xtermjs"]),
        Field::str("description").max_len(64 * 1024),
        Field::str("email_from"),
        Field::str("http_proxy").pattern(|v| v.starts_with("http://")),
        Field::one_of(
            "keyboard",
            &[
                "de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch",
                "hu", "is", "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl",
                "tr",
            ],
        ),
        Field::one_of(
            "language",
            &[
                "ar", "ca", "da", "de", "en", "es", "eu", "fa", "fr", "hr", "he", "it", "ja", "ka",
                "kr", "nb", "nl", "nn", "pl", "pt_BR", "ru", "sl", "sv", "tr", "ukr", "zh_CN",
                "zh_TW",
            ],
        ),
        Field::str("mac_prefix"),
        Field::int("max_workers", Some(1), None),
    ];
    fields.extend(OPTION_GROUPS.iter().map(|(k, _)| Field::str(k)));
    fields
}

/// `GET /cluster/options`: `datacenter.cfg` parsed, grouped keys as objects (but `bwlimit`,
/// which PVE leaves a string).
async fn options_get(state: SimState) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let mut out = Map::new();
    for (key, value) in &cluster.cluster_cfg.options {
        let grouped = OPTION_GROUPS.iter().any(|(k, _)| k == key) && key != "bwlimit";
        let value = if grouped {
            let parts: Map<String, Value> = value
                .split(',')
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| {
                    let v = v.parse::<i64>().map_or_else(|_| json!(v), |n| json!(n));
                    (k.to_owned(), v)
                })
                .collect();
            Value::Object(parts)
        } else if key == "max_workers" {
            value
                .parse::<i64>()
                .map_or_else(|_| json!(value), |n| json!(n))
        } else {
            json!(value)
        };
        out.insert(key.clone(), value);
    }
    Ok(data(Value::Object(out)))
}

/// `PUT /cluster/options` (`set_options`): the keys given, then those in `delete` removed.
async fn options_put(state: SimState, params: Params) -> ApiResult<Response> {
    let checked = spec::check(&params, &option_fields())?;
    let mut errors = BTreeMap::new();
    for (key, value) in &checked {
        if let Err(e) = check_group(key, value) {
            errors.insert(key.clone(), e);
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::params(errors));
    }
    let mut cluster = state.0.cluster();
    let options = &mut cluster.cluster_cfg.options;
    check_digest(checked.get("digest"), &digest(&*options))?;
    for (k, v) in &checked {
        if !["digest", "delete"].contains(&k.as_str()) {
            options.insert(k.clone(), v.clone());
        }
    }
    for key in params.list("delete") {
        options.remove(&key);
    }
    Ok(data(Value::Null))
}

/// `POST /nodes/{node}/hosts` (`write_etc_hosts`): the whole file, refused when `digest` is
/// not the file's.
pub(crate) async fn write_hosts(
    state: SimState,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let checked = spec::check(&params, &[DIGEST, Field::str("data")])?;
    let mut cluster = state.0.cluster();
    let current = cluster.node(&node)?.settings.hosts_digest();
    check_digest(checked.get("digest"), &current)?;
    if let Some(n) = cluster.nodes.get_mut(&node) {
        n.settings.hosts = checked.get("data").cloned().unwrap_or_default();
    }
    Ok(data(Value::Null))
}

// --- HA resources ---------------------------------------------------------------------------

const RESOURCE_KEYS: &[&str] = &[
    "comment",
    "group",
    "state",
    "max_restart",
    "max_relocate",
    "failback",
];

fn resource_fields() -> Vec<Field> {
    vec![
        Field::str("sid").required(),
        Field::one_of("type", &["ct", "vm"]),
        Field::str("comment").max_len(4096),
        Field::str("group"),
        Field::one_of(
            "state",
            &["started", "stopped", "enabled", "disabled", "ignored"],
        ),
        Field::int("max_restart", Some(0), None),
        Field::int("max_relocate", Some(0), None),
        Field::boolean("failback"),
        DIGEST,
        DELETE_LIST,
    ]
}

fn resource_json(sid: &str, section: &Section, digest: &str) -> Value {
    let mut out = section_json(section, &["max_restart", "max_relocate", "failback"]);
    out.insert("sid".to_owned(), json!(sid));
    out.insert("digest".to_owned(), json!(digest));
    Value::Object(out)
}

async fn resources_list(state: SimState) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let all = &cluster.cluster_cfg.ha_resources;
    let d = digest(all);
    let list: Vec<Value> = all
        .iter()
        .map(|(sid, s)| resource_json(sid, s, &d))
        .collect();
    Ok(data(Value::Array(list)))
}

async fn resource_get(state: SimState, Path(sid): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let (sid, _, _) = parse_sid(&cluster, &sid)?;
    let all = &cluster.cluster_cfg.ha_resources;
    let section = all
        .get(&sid)
        .ok_or_else(|| ApiError::die(format!("no such resource '{sid}'")))?;
    Ok(data(resource_json(&sid, section, &digest(all))))
}

/// `POST /cluster/ha/resources`: the guest must exist and be of the resource's kind.
async fn resource_create(state: SimState, params: Params) -> ApiResult<Response> {
    let mut checked = spec::check(&params, &resource_fields())?;
    let mut cluster = state.0.cluster();
    let given = checked.remove("sid").unwrap_or_default();
    let (sid, kind, vmid) = parse_sid(&cluster, &given)?;
    if let Some(t) = checked.remove("type")
        && t != kind
    {
        return Err(ApiError::die("types does not match"));
    }
    if checked.contains_key("group") {
        return Err(ApiError::die(
            "invalid parameter 'group': ha groups have been migrated to rules",
        ));
    }
    cluster.ha_guest_exists(&kind, vmid)?;
    if cluster.cluster_cfg.ha_resources.contains_key(&sid) {
        return Err(ApiError::die(format!(
            "create resource failed: resource ID '{sid}' already defined"
        )));
    }
    let mut section = Section::from([("type".to_owned(), kind)]);
    update_section(&mut section, &checked, &[], RESOURCE_KEYS, &[])?;
    let state_now = section.get("state").cloned();
    cluster.cluster_cfg.ha_resources.insert(sid, section);
    cluster.ha_apply_state(vmid, state_now.as_deref());
    Ok(data(Value::Null))
}

async fn resource_update(
    state: SimState,
    Path(sid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let mut fields = resource_fields();
    fields.retain(|f| f.name != "sid");
    let mut checked = spec::check(&params, &fields)?;
    let mut cluster = state.0.cluster();
    let (sid, kind, vmid) = parse_sid(&cluster, &sid)?;
    if let Some(t) = checked.remove("type")
        && t != kind
    {
        return Err(ApiError::die("types does not match"));
    }
    if checked.contains_key("group") {
        return Err(ApiError::die(
            "invalid parameter 'group': ha groups have been migrated to rules",
        ));
    }
    let all = &mut cluster.cluster_cfg.ha_resources;
    check_digest(checked.get("digest"), &digest(&*all))?;
    let section = all
        .get_mut(&sid)
        .ok_or_else(|| ApiError::die(format!("no such resource '{sid}'")))?;
    update_section(
        section,
        &checked,
        &params.list("delete"),
        RESOURCE_KEYS,
        &[],
    )?;
    let state_now = section.get("state").cloned();
    cluster.ha_apply_state(vmid, state_now.as_deref());
    Ok(data(Value::Null))
}

/// `DELETE /cluster/ha/resources/{sid}` (`purge` by default: out of the rules too).
async fn resource_delete(
    state: SimState,
    Path(sid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let checked = spec::check(&params, &[Field::boolean("purge")])?;
    let mut cluster = state.0.cluster();
    let (sid, _, vmid) = parse_sid(&cluster, &sid)?;
    let cfg = &mut cluster.cluster_cfg;
    if cfg.ha_resources.remove(&sid).is_none() {
        return Err(ApiError::die(format!(
            "cannot delete service '{sid}', not HA managed!"
        )));
    }
    if checked.get("purge").is_none_or(|p| p == "1") {
        purge_rules(&mut cfg.ha_rules, &[sid]);
    }
    if let Some(guest) = cluster.guests.get_mut(&vmid) {
        guest.ha_managed = false;
    }
    Ok(data(Value::Null))
}

// --- HA groups: migrated to rules on this PVE 9 cluster ------------------------------------

async fn groups_index() -> ApiError {
    groups_migrated("cannot index groups")
}

async fn groups_create() -> ApiError {
    groups_migrated("cannot create group")
}

async fn groups_read() -> ApiError {
    groups_migrated("cannot read group")
}

async fn groups_update() -> ApiError {
    groups_migrated("cannot update group")
}

async fn groups_delete() -> ApiError {
    groups_migrated("cannot delete group")
}

// --- HA rules -------------------------------------------------------------------------------

fn rule_fields(create: bool) -> Vec<Field> {
    let mut fields = vec![
        Field::one_of("type", &["node-affinity", "resource-affinity"]),
        Field::str("resources"),
        Field::str("nodes"),
        Field::boolean("strict"),
        Field::one_of("affinity", &["positive", "negative"]),
        Field::boolean("disable"),
        Field::str("comment").max_len(4096),
    ];
    if create {
        fields.push(Field::str("rule").required().pattern(configid).max_len(128));
    } else {
        fields.extend([DIGEST, DELETE_LIST]);
    }
    fields
}

/// An error raised inside `lock_ha_domain`, which prefixes it with what failed.
fn locked(e: ApiError, what: &str) -> ApiError {
    if e.status == 500 {
        ApiError::die(format!("{what}: {}", e.message))
    } else {
        e
    }
}

pub(super) fn configid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_".contains(c))
}

/// The keys a rule of this type may hold, and those it must.
fn rule_keys(kind: &str) -> (&'static [&'static str], &'static [&'static str]) {
    if kind == "node-affinity" {
        (
            &["resources", "nodes", "strict", "disable", "comment"],
            &["resources", "nodes"],
        )
    } else {
        (
            &["resources", "affinity", "disable", "comment"],
            &["resources", "affinity"],
        )
    }
}

/// The rule's values checked against its type, its resources managed, its nodes existing.
fn check_rule(
    cluster: &crate::model::Cluster,
    kind: &str,
    values: &spec::Checked,
) -> ApiResult<()> {
    let (allowed, _) = rule_keys(kind);
    for key in values.keys() {
        if !allowed.contains(&key.as_str()) && !["digest", "delete", "type"].contains(&key.as_str())
        {
            return Err(ApiError::param(
                key,
                "property is not defined in schema and the schema does not allow additional properties",
            ));
        }
    }
    if let Some(resources) = values.get("resources") {
        let list = sorted_list(resources);
        if list.is_empty() {
            return Err(ApiError::die("no resources were specified"));
        }
        let unmanaged: Vec<&str> = list
            .split(',')
            .filter(|sid| !cluster.cluster_cfg.ha_resources.contains_key(*sid))
            .collect();
        if !unmanaged.is_empty() {
            return Err(ApiError::die(format!(
                "cannot use unmanaged resource(s) {}.",
                unmanaged.join(", ")
            )));
        }
    }
    if let Some(nodes) = values.get("nodes") {
        let missing: Vec<String> = sorted_list(nodes)
            .split(',')
            .map(|n| n.split(':').next().unwrap_or_default().to_owned())
            .filter(|n| !cluster.nodes.contains_key(n))
            .collect();
        if !missing.is_empty() {
            return Err(ApiError::die(format!(
                "cannot use non-existent node(s) {}.",
                missing.join(", ")
            )));
        }
    }
    Ok(())
}

fn rule_json(id: &str, section: &Section, digest: &str) -> Value {
    let mut section = section.clone();
    if section.get("type").map(String::as_str) == Some("node-affinity") {
        section
            .entry("strict".to_owned())
            .or_insert_with(|| "0".to_owned());
    }
    let mut out = section_json(&section, &["strict", "disable", "order"]);
    out.insert("rule".to_owned(), json!(id));
    out.insert("digest".to_owned(), json!(digest));
    Value::Object(out)
}

async fn rules_list(state: SimState) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let all = &cluster.cluster_cfg.ha_rules;
    let d = digest(all);
    Ok(data(Value::Array(
        all.iter().map(|(id, s)| rule_json(id, s, &d)).collect(),
    )))
}

async fn rule_get(state: SimState, Path(rule): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let all = &cluster.cluster_cfg.ha_rules;
    let section = all
        .get(&rule)
        .ok_or_else(|| ApiError::die(format!("no such ha rule '{rule}'")))?;
    Ok(data(rule_json(&rule, section, &digest(all))))
}

async fn rule_create(state: SimState, params: Params) -> ApiResult<Response> {
    let mut checked = spec::check(&params, &rule_fields(true))?;
    let Some(kind) = checked.remove("type") else {
        return Err(ApiError::param(
            "type",
            "property is missing and it is not optional",
        ));
    };
    let id = checked.remove("rule").unwrap_or_default();
    if checked.get("disable").map(String::as_str) == Some("0") {
        checked.remove("disable");
    }
    let (_, required) = rule_keys(&kind);
    let missing: BTreeMap<String, String> = required
        .iter()
        .filter(|k| !checked.contains_key(**k))
        .map(|k| {
            (
                (*k).to_owned(),
                "property is missing and it is not optional".to_owned(),
            )
        })
        .collect();
    if !missing.is_empty() {
        return Err(ApiError::params(missing));
    }
    let mut cluster = state.0.cluster();
    if cluster.cluster_cfg.ha_rules.contains_key(&id) {
        return Err(ApiError::die(format!(
            "create ha rule failed: HA rule '{id}' already defined"
        )));
    }
    check_rule(&cluster, &kind, &checked).map_err(|e| locked(e, "create ha rule failed"))?;
    let cfg = &mut cluster.cluster_cfg;
    cfg.rule_order += 1;
    let mut section = Section::from([
        ("type".to_owned(), kind),
        ("order".to_owned(), cfg.rule_order.to_string()),
    ]);
    for (k, v) in checked {
        let v = if k == "resources" || k == "nodes" {
            sorted_list(&v)
        } else {
            v
        };
        section.insert(k, v);
    }
    cfg.ha_rules.insert(id, section);
    Ok(data(Value::Null))
}

async fn rule_update(
    state: SimState,
    Path(rule): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let mut checked = spec::check(&params, &rule_fields(false))?;
    if checked.get("disable").map(String::as_str) == Some("0") {
        checked.remove("disable");
    }
    if checked.contains_key("type") {
        return Err(ApiError::param(
            "type",
            "property is not defined in schema and the schema does not allow additional properties",
        ));
    }
    let mut cluster = state.0.cluster();
    check_digest(
        checked.get("digest"),
        &digest(&cluster.cluster_cfg.ha_rules),
    )?;
    let Some(kind) = cluster
        .cluster_cfg
        .ha_rules
        .get(&rule)
        .and_then(|r| r.get("type").cloned())
    else {
        return Err(ApiError::die(format!(
            "update HA rules failed: HA rule '{rule}' does not exist"
        )));
    };
    check_rule(&cluster, &kind, &checked).map_err(|e| locked(e, "update HA rules failed"))?;
    for key in ["resources", "nodes"] {
        if let Some(v) = checked.get_mut(key) {
            *v = sorted_list(v);
        }
    }
    let (allowed, required) = rule_keys(&kind);
    let section = cluster.cluster_cfg.ha_rules.get_mut(&rule);
    if let Some(section) = section {
        update_section(section, &checked, &params.list("delete"), allowed, required)?;
    }
    Ok(data(Value::Null))
}

async fn rule_delete(state: SimState, Path(rule): Path<String>) -> ApiResult<Response> {
    state.0.cluster().cluster_cfg.ha_rules.remove(&rule);
    Ok(data(Value::Null))
}
