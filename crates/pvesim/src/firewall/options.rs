//! Firewall options of the cluster (`$cluster_option_properties`), a node
//! (`$host_option_properties`) and a guest (`$vm_option_properties`): read with the options'
//! `digest`, set with `delete` and `digest`.

use serde_json::{Value, json};

use super::spec::{self, DELETE_LIST, DIGEST, Field};
use super::{Firewall, Scope, object_digest, render};
use crate::error::{ApiError, ApiResult};
use crate::routes::Params;

const LOG_LEVELS: &[&str] = &[
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug", "nolog",
];
const POLICY: &[&str] = &["ACCEPT", "REJECT", "DROP"];
const POLICY_FORWARD: &[&str] = &["ACCEPT", "DROP"];
const HELPERS: &[&str] = &[
    "amanda",
    "ftp",
    "irc",
    "netbios-ns",
    "pptp",
    "sane",
    "sip",
    "snmp",
    "tftp",
];

const CLUSTER: &[Field] = &[
    Field::int("enable", Some(0), None),
    Field::boolean("ebtables"),
    Field::one_of("policy_in", POLICY),
    Field::one_of("policy_out", POLICY),
    Field::one_of("policy_forward", POLICY_FORWARD),
    Field::str("log_ratelimit").format(log_ratelimit),
];

const HOST: &[Field] = &[
    Field::boolean("enable"),
    Field::one_of("log_level_in", LOG_LEVELS),
    Field::one_of("log_level_out", LOG_LEVELS),
    Field::one_of("log_level_forward", LOG_LEVELS),
    Field::one_of("tcp_flags_log_level", LOG_LEVELS),
    Field::one_of("smurf_log_level", LOG_LEVELS),
    Field::boolean("nosmurfs"),
    Field::boolean("tcpflags"),
    Field::int("nf_conntrack_max", Some(32768), None),
    Field::int("nf_conntrack_tcp_timeout_established", Some(7875), None),
    Field::int("nf_conntrack_tcp_timeout_syn_recv", Some(30), Some(60)),
    Field::boolean("ndp"),
    Field::boolean("nf_conntrack_allow_invalid"),
    Field::str("nf_conntrack_helpers").format(conntrack_helpers),
    Field::boolean("protection_synflood"),
    Field::int("protection_synflood_rate", None, None),
    Field::int("protection_synflood_burst", None, None),
    Field::boolean("log_nf_conntrack"),
    Field::boolean("nftables"),
];

const GUEST: &[Field] = &[
    Field::boolean("enable"),
    Field::boolean("macfilter"),
    Field::boolean("dhcp"),
    Field::boolean("ndp"),
    Field::boolean("radv"),
    Field::boolean("ipfilter"),
    Field::one_of("policy_in", POLICY),
    Field::one_of("policy_out", POLICY),
    Field::one_of("log_level_in", LOG_LEVELS),
    Field::one_of("log_level_out", LOG_LEVELS),
];

fn fields(scope: &Scope) -> &'static [Field] {
    match scope {
        Scope::Cluster | Scope::Group(_) => CLUSTER,
        Scope::Host(_) => HOST,
        Scope::Guest(..) => GUEST,
    }
}

/// `log_ratelimit`: `[enable=]<bool>,rate=<n>/<unit>,burst=<n>`.
fn log_ratelimit(text: &str) -> Result<(), String> {
    let props = crate::propstr::parse(text, Some("enable"))?;
    for (key, value) in &props {
        let ok = match key.as_str() {
            "enable" => ["0", "1", "true", "false", "yes", "no", "on", "off"]
                .contains(&value.to_ascii_lowercase().as_str()),
            "rate" => value.split_once('/').is_some_and(|(n, unit)| {
                n.starts_with(|c: char| ('1'..='9').contains(&c))
                    && n.chars().all(|c| c.is_ascii_digit())
                    && ["second", "minute", "hour", "day"].contains(&unit)
            }),
            "burst" => value.parse::<u64>().is_ok(),
            other => return Err(format!("property string: unknown key '{other}'")),
        };
        if !ok {
            let what = match key.as_str() {
                "enable" => format!("type check ('boolean') failed - got '{value}'"),
                "burst" => format!("type check ('integer') failed - got '{value}'"),
                _ => "value does not match the regex pattern".to_owned(),
            };
            return Err(format!("{key}: {what}"));
        }
    }
    Ok(())
}

/// `pve_fw_verify_conntrack_helper`.
fn conntrack_helpers(list: &str) -> Result<(), String> {
    let items: Vec<&str> = list.split(',').collect();
    for helper in items {
        if !HELPERS.contains(&helper) {
            return Err(format!("unknown helper {helper}"));
        }
    }
    Ok(())
}

/// `GET .../options`: the options set, plus `digest`.
pub(crate) fn get(fw: &Firewall, scope: &Scope, params: &Params) -> ApiResult<Value> {
    spec::check(params, &[])?;
    let mut options = fw
        .conf(scope)
        .map(|c| c.options.clone())
        .unwrap_or_default();
    // an anti-lockout timestamp older than a minute reads back as disabled
    if matches!(scope, Scope::Cluster)
        && let Some(enable) = options.get_mut("enable")
        && let Ok(stamp) = enable.parse::<u64>()
        && stamp > 1
        && crate::model::now().saturating_sub(stamp) > 60
    {
        *enable = "0".to_owned();
    }
    let mut out = render(&options);
    out["digest"] = json!(object_digest(&options));
    Ok(out)
}

/// `PUT .../options`.
pub(crate) fn set(fw: &mut Firewall, scope: &Scope, params: &Params) -> ApiResult<()> {
    let known = fields(scope);
    let mut all = known.to_vec();
    all.push(DELETE_LIST);
    all.push(DIGEST);
    let mut p = spec::check(params, &all)?;
    let conf = fw.conf_mut(scope);
    spec::assert_digest(p.get("digest"), &object_digest(&conf.options))?;
    if let Some(list) = p.get("delete") {
        for opt in crate::propstr::split_list(list) {
            if !known.iter().any(|f| f.name == opt) {
                return Err(ApiError::param("delete", format!("no such option '{opt}'")));
            }
            conf.options.remove(&opt);
        }
    }
    if matches!(scope, Scope::Cluster)
        && let Some(enable) = p.get_mut("enable")
        && enable.parse::<u64>().is_ok_and(|n| n > 1)
    {
        *enable = crate::model::now().to_string();
    }
    for field in known {
        if let Some(v) = p.get(field.name) {
            let value = match field.name {
                "nf_conntrack_helpers" => v.to_lowercase(),
                _ => v.clone(),
            };
            conf.options.insert(field.name.to_owned(), value);
        }
    }
    Ok(())
}
