//! Aliases (cluster and guest) and security groups (cluster), with PVE's checks and words.

use serde_json::{Value, json};

use super::addr;
use super::spec::{self, DIGEST, Field};
use super::{Entry, Firewall, Scope, list_digest, render, render_list};
use crate::error::{ApiError, ApiResult};
use crate::routes::Params;

/// `pve-fw-alias`.
pub(crate) const ALIAS_NAME: Field = Field::str("name").pattern(addr::is_name).len(2, 64);
/// `pve-security-group-name`.
pub(crate) const GROUP_NAME: Field = Field::str("group").pattern(addr::is_name).len(2, 18);

const CIDR: Field = Field::str("cidr")
    .format(addr::verify_ip_or_cidr)
    .required();
const COMMENT: Field = Field::str("comment");

fn aliases(fw: &Firewall, scope: &Scope) -> Vec<Entry> {
    fw.conf(scope)
        .map(|c| c.aliases.values().cloned().collect())
        .unwrap_or_default()
}

/// `GET .../aliases`: sorted by name, with the list's `digest`.
pub(crate) fn list_aliases(fw: &Firewall, scope: &Scope, params: &Params) -> ApiResult<Value> {
    spec::check(params, &[])?;
    Ok(render_list(&aliases(fw, scope)))
}

/// The alias as PVE reads it back: `/32` or `/128` dropped, `ipversion` added.
fn alias_entry(name: &str, cidr: &str, comment: Option<&String>) -> ApiResult<Entry> {
    let (cidr, version) = addr::parse_ip_or_cidr(cidr).map_err(ApiError::die)?;
    let mut e = Entry::from([
        ("name".to_owned(), name.to_owned()),
        ("cidr".to_owned(), cidr),
        ("ipversion".to_owned(), version.to_string()),
    ]);
    if let Some(c) = comment.filter(|c| !c.trim().is_empty()) {
        e.insert("comment".to_owned(), c.trim().to_owned());
    }
    Ok(e)
}

/// `POST .../aliases`.
pub(crate) fn create_alias(fw: &mut Firewall, scope: &Scope, params: &Params) -> ApiResult<()> {
    let p = spec::check(params, &[ALIAS_NAME.required(), CIDR, COMMENT])?;
    let name = p.get("name").cloned().unwrap_or_default();
    let key = name.to_lowercase();
    let conf = fw.conf_mut(scope);
    if conf.aliases.contains_key(&key) {
        return Err(ApiError::param(
            "name",
            format!("alias '{name}' already exists"),
        ));
    }
    let cidr = p.get("cidr").cloned().unwrap_or_default();
    let entry = alias_entry(&name, &cidr, p.get("comment"))?;
    conf.aliases.insert(key, entry);
    Ok(())
}

/// `GET .../aliases/{name}` (no digest).
pub(crate) fn get_alias(
    fw: &Firewall,
    scope: &Scope,
    name: &str,
    params: &Params,
) -> ApiResult<Value> {
    spec::check(params, &[])?;
    spec::check_path(&ALIAS_NAME, name)?;
    fw.conf(scope)
        .and_then(|c| c.aliases.get(&name.to_lowercase()))
        .map(render)
        .ok_or_else(|| ApiError::param("name", "no such alias"))
}

/// `PUT .../aliases/{name}`: replaces cidr and comment; `rename` moves it.
pub(crate) fn update_alias(
    fw: &mut Firewall,
    scope: &Scope,
    name: &str,
    params: &Params,
) -> ApiResult<()> {
    let rename = ALIAS_NAME.named("rename");
    let p = spec::check(params, &[rename, CIDR, COMMENT, DIGEST])?;
    spec::check_path(&ALIAS_NAME, name)?;
    let conf = fw.conf_mut(scope);
    spec::assert_digest(p.get("digest"), &list_digest(conf.aliases.values()))?;
    let key = name.to_lowercase();
    if !conf.aliases.contains_key(&key) {
        return Err(ApiError::param("name", "no such alias"));
    }
    let cidr = p.get("cidr").cloned().unwrap_or_default();
    let mut entry = alias_entry(name, &cidr, p.get("comment"))?;
    let new_name = p.get("rename").filter(|r| r.to_lowercase() != key);
    if let Some(new_name) = new_name {
        let new_key = new_name.to_lowercase();
        if conf.aliases.contains_key(&new_key) {
            return Err(ApiError::param(
                "name",
                format!("alias '{new_name}' already exists"),
            ));
        }
        entry.insert("name".to_owned(), new_name.clone());
        conf.aliases.remove(&key);
        conf.aliases.insert(new_key, entry);
    } else {
        conf.aliases.insert(key, entry);
    }
    Ok(())
}

/// `DELETE .../aliases/{name}`: removing an unknown alias succeeds, as in PVE.
pub(crate) fn delete_alias(
    fw: &mut Firewall,
    scope: &Scope,
    name: &str,
    params: &Params,
) -> ApiResult<()> {
    let p = spec::check(params, &[DIGEST])?;
    spec::check_path(&ALIAS_NAME, name)?;
    let conf = fw.conf_mut(scope);
    spec::assert_digest(p.get("digest"), &list_digest(conf.aliases.values()))?;
    conf.aliases.remove(&name.to_lowercase());
    Ok(())
}

fn group_list(fw: &Firewall) -> Vec<Entry> {
    fw.groups
        .keys()
        .map(|g| {
            let mut e = Entry::from([("group".to_owned(), g.clone())]);
            if let Some(c) = fw.group_comments.get(g) {
                e.insert("comment".to_owned(), c.clone());
            }
            e
        })
        .collect()
}

/// `GET /cluster/firewall/groups`.
pub(crate) fn list_groups(fw: &Firewall, params: &Params) -> ApiResult<Value> {
    spec::check(params, &[])?;
    Ok(render_list(&group_list(fw)))
}

/// `POST /cluster/firewall/groups`: create, or with `rename` rename (rules referencing the
/// old name follow) or update the comment.
pub(crate) fn create_group(fw: &mut Firewall, params: &Params) -> ApiResult<()> {
    let rename = GROUP_NAME.named("rename");
    let p = spec::check(params, &[GROUP_NAME.required(), COMMENT, rename, DIGEST])?;
    let group = p.get("group").cloned().unwrap_or_default();
    let comment = p.get("comment").filter(|c| !c.trim().is_empty()).cloned();
    let Some(old) = p.get("rename").cloned() else {
        if fw.groups.contains_key(&group) {
            return Err(ApiError::param(
                "group",
                format!("Security group '{group}' already exists"),
            ));
        }
        let key = group.to_lowercase();
        fw.groups.insert(key.clone(), Vec::new());
        if let Some(c) = comment {
            fw.group_comments.insert(key, c);
        }
        return Ok(());
    };
    spec::assert_digest(p.get("digest"), &list_digest(&group_list(fw)))?;
    if !fw.groups.contains_key(&old) {
        return Err(ApiError::param(
            "group",
            format!("Security group '{old}' does not exist"),
        ));
    }
    if fw.groups.contains_key(&group) && group != old {
        return Err(ApiError::param(
            "group",
            format!("Security group '{group}' does already exist"),
        ));
    }
    if group == old {
        if let Some(c) = comment {
            fw.group_comments.insert(old, c);
        }
        return Ok(());
    }
    rename_group(fw, &old, &group, comment);
    Ok(())
}

fn rename_group(fw: &mut Firewall, old: &str, new: &str, comment: Option<String>) {
    let key = new.to_lowercase();
    let rules = fw.groups.remove(old).unwrap_or_default();
    fw.groups.insert(key.clone(), rules);
    let old_comment = fw.group_comments.remove(old);
    if let Some(c) = comment.or(old_comment) {
        fw.group_comments.insert(key, c);
    }
    let confs = std::iter::once(&mut fw.cluster)
        .chain(fw.hosts.values_mut())
        .chain(fw.guests.values_mut());
    for conf in confs {
        for rule in &mut conf.rules {
            if rule.get("type").is_some_and(|t| t == "group")
                && rule.get("action").is_some_and(|a| a == old)
            {
                rule.insert("action".to_owned(), new.to_owned());
            }
        }
    }
}

/// `DELETE /cluster/firewall/groups/{group}`: only an empty group (PVE does not look for
/// rules that insert it).
pub(crate) fn delete_group(fw: &mut Firewall, group: &str, params: &Params) -> ApiResult<()> {
    spec::check(params, &[])?;
    spec::check_path(&GROUP_NAME, group)?;
    let rules = fw
        .groups
        .get(group)
        .ok_or_else(|| ApiError::die(format!("no such security group '{group}'")))?;
    if !rules.is_empty() {
        return Err(ApiError::die(format!(
            "Security group '{group}' is not empty"
        )));
    }
    fw.groups.remove(group);
    fw.group_comments.remove(group);
    Ok(())
}

/// `GET /cluster/firewall/macros`.
pub(crate) fn macros() -> Value {
    let list = super::macros::MACROS
        .iter()
        .map(|m| json!({ "macro": m.name, "descr": m.descr }))
        .collect();
    Value::Array(list)
}
