//! IP sets of the cluster and of guests: the sets (create, rename, delete) and their entries
//! (add, read, update, remove), with PVE's checks and words.

use serde_json::Value;

use super::addr;
use super::spec::{self, DIGEST, Field};
use super::{Entry, Firewall, FwConf, Scope, list_digest, render_list};
use crate::error::{ApiError, ApiResult};
use crate::routes::Params;

/// `ipset-name`.
pub(crate) const IPSET_NAME: Field = Field::str("name").pattern(addr::is_name).len(2, 64);
const CIDR: Field = Field::str("cidr")
    .format(addr::verify_ip_or_cidr_or_alias)
    .required();
const COMMENT: Field = Field::str("comment");
const NOMATCH: Field = Field::boolean("nomatch");

fn set_list(conf: Option<&FwConf>) -> Vec<Entry> {
    let Some(conf) = conf else {
        return Vec::new();
    };
    conf.ipsets
        .keys()
        .map(|name| {
            let mut e = Entry::from([("name".to_owned(), name.clone())]);
            if let Some(c) = conf.ipset_comments.get(name) {
                e.insert("comment".to_owned(), c.clone());
            }
            e
        })
        .collect()
}

/// `GET .../ipset`: the sets, with the list's `digest`.
pub(crate) fn list_sets(fw: &Firewall, scope: &Scope, params: &Params) -> ApiResult<Value> {
    spec::check(params, &[])?;
    Ok(render_list(&set_list(fw.conf(scope))))
}

/// `POST .../ipset`: create, or with `rename` rename (or update the comment).
pub(crate) fn create_set(fw: &mut Firewall, scope: &Scope, params: &Params) -> ApiResult<()> {
    let rename = IPSET_NAME.named("rename");
    let p = spec::check(params, &[IPSET_NAME.required(), COMMENT, DIGEST, rename])?;
    let name = p.get("name").cloned().unwrap_or_default();
    let comment = p.get("comment").filter(|c| !c.trim().is_empty()).cloned();
    let digest = list_digest(&set_list(fw.conf(scope)));
    let conf = fw.conf_mut(scope);
    let key = name.to_lowercase();
    let Some(old) = p.get("rename").cloned() else {
        if conf.ipsets.contains_key(&name) {
            return Err(ApiError::param(
                "name",
                format!("IPSet '{name}' already exists"),
            ));
        }
        conf.ipsets.insert(key.clone(), Vec::new());
        if let Some(c) = comment {
            conf.ipset_comments.insert(key, c);
        }
        return Ok(());
    };
    spec::assert_digest(p.get("digest"), &digest)?;
    if !conf.ipsets.contains_key(&old) {
        return Err(ApiError::param(
            "name",
            format!("IPSet '{old}' does not exist"),
        ));
    }
    if conf.ipsets.contains_key(&name) && name != old {
        return Err(ApiError::param(
            "name",
            format!("IPSet '{name}' does already exist"),
        ));
    }
    let entries = conf.ipsets.remove(&old).unwrap_or_default();
    conf.ipsets.insert(key.clone(), entries);
    if let Some(c) = comment.or_else(|| conf.ipset_comments.remove(&old)) {
        conf.ipset_comments.insert(key, c);
    }
    Ok(())
}

fn set_of<'a>(fw: &'a Firewall, scope: &Scope, name: &str) -> ApiResult<&'a [Entry]> {
    fw.conf(scope)
        .and_then(|c| c.ipsets.get(name))
        .map(Vec::as_slice)
        .ok_or_else(|| ApiError::die(format!("no such IPSet '{name}'")))
}

fn set_mut<'a>(fw: &'a mut Firewall, scope: &Scope, name: &str) -> ApiResult<&'a mut Vec<Entry>> {
    fw.conf_mut(scope)
        .ipsets
        .get_mut(name)
        .ok_or_else(|| ApiError::die(format!("no such IPSet '{name}'")))
}

/// `GET .../ipset/{name}`: the entries, sorted by `cidr`, with the list's `digest`.
pub(crate) fn list_entries(
    fw: &Firewall,
    scope: &Scope,
    name: &str,
    params: &Params,
) -> ApiResult<Value> {
    spec::check(params, &[])?;
    spec::check_path(&IPSET_NAME, name)?;
    Ok(render_list(set_of(fw, scope, name)?))
}

/// `DELETE .../ipset/{name}`: only an empty set, unless `force`.
pub(crate) fn delete_set(
    fw: &mut Firewall,
    scope: &Scope,
    name: &str,
    params: &Params,
) -> ApiResult<()> {
    let p = spec::check(params, &[Field::boolean("force")])?;
    spec::check_path(&IPSET_NAME, name)?;
    let force = p.get("force").is_some_and(|f| f == "1");
    if !set_of(fw, scope, name)?.is_empty() && !force {
        return Err(ApiError::die(format!("IPSet '{name}' is not empty")));
    }
    let conf = fw.conf_mut(scope);
    conf.ipsets.remove(name);
    conf.ipset_comments.remove(name);
    Ok(())
}

/// `resolve_alias`: the alias an ipset entry names must exist in its scope.
fn resolve_alias(fw: &Firewall, scope: &Scope, prefix: &str, alias: &str) -> ApiResult<()> {
    let (cluster, local) = match scope {
        Scope::Cluster | Scope::Group(_) => (Some(&fw.cluster), None),
        _ => (Some(&fw.cluster), fw.conf(scope)),
    };
    let key = alias.to_lowercase();
    let local_hit = prefix != "dc/" && local.is_some_and(|c| c.aliases.contains_key(&key));
    let cluster_hit = prefix != "guest/" && cluster.is_some_and(|c| c.aliases.contains_key(&key));
    if local_hit || cluster_hit {
        Ok(())
    } else {
        Err(ApiError::die(format!("no such alias '{alias}'")))
    }
}

/// `POST .../ipset/{name}`: adds an address, network or alias.
pub(crate) fn add_entry(
    fw: &mut Firewall,
    scope: &Scope,
    name: &str,
    params: &Params,
) -> ApiResult<()> {
    let p = spec::check(params, &[CIDR, NOMATCH, COMMENT])?;
    spec::check_path(&IPSET_NAME, name)?;
    set_of(fw, scope, name)?;
    let given = p.get("cidr").cloned().unwrap_or_default();
    let cidr = match addr::alias_ref(&given) {
        Some((prefix, alias)) => {
            resolve_alias(fw, scope, prefix, alias)?;
            given
        }
        None => {
            addr::parse_ip_or_cidr(&addr::clean_cidr(&given))
                .map_err(ApiError::die)?
                .0
        }
    };
    let set = set_mut(fw, scope, name)?;
    if set.iter().any(|e| e.get("cidr") == Some(&cidr)) {
        return Err(ApiError::param(
            "cidr",
            format!("address '{cidr}' already exists"),
        ));
    }
    let zero_prefix = cidr
        .rsplit_once('/')
        .is_some_and(|(_, l)| !l.is_empty() && l.chars().all(|c| c == '0'));
    if zero_prefix {
        return Err(ApiError::param(
            "cidr",
            "a zero prefix is not allowed in ipset entries",
        ));
    }
    let mut entry = Entry::from([("cidr".to_owned(), cidr)]);
    apply_flags(&mut entry, &p);
    set.push(entry);
    set.sort_by(|a, b| a.get("cidr").cmp(&b.get("cidr")));
    Ok(())
}

/// `nomatch` and `comment` as PVE writes and reads them back.
fn apply_flags(entry: &mut Entry, p: &spec::Checked) {
    entry.remove("nomatch");
    entry.remove("comment");
    if p.get("nomatch").is_some_and(|n| n == "1") {
        entry.insert("nomatch".to_owned(), "1".to_owned());
    }
    if let Some(c) = p.get("comment").filter(|c| !c.trim().is_empty()) {
        entry.insert("comment".to_owned(), c.trim().to_owned());
    }
}

/// `GET .../ipset/{name}/{cidr}`: the entry with the set's `digest`.
pub(crate) fn get_entry(
    fw: &Firewall,
    scope: &Scope,
    name: &str,
    cidr: &str,
    params: &Params,
) -> ApiResult<Value> {
    spec::check(params, &[])?;
    spec::check_path(&IPSET_NAME, name)?;
    spec::check_path(&CIDR, cidr)?;
    let list = render_list(set_of(fw, scope, name)?);
    list.as_array()
        .and_then(|items| items.iter().find(|e| e["cidr"] == cidr))
        .cloned()
        .ok_or_else(|| ApiError::param("cidr", "no such IP/Network"))
}

/// `PUT .../ipset/{name}/{cidr}`: sets `nomatch` and `comment` (absent ones are cleared).
pub(crate) fn update_entry(
    fw: &mut Firewall,
    scope: &Scope,
    name: &str,
    cidr: &str,
    params: &Params,
) -> ApiResult<()> {
    let p = spec::check(params, &[NOMATCH, COMMENT, DIGEST])?;
    spec::check_path(&IPSET_NAME, name)?;
    spec::check_path(&CIDR, cidr)?;
    spec::assert_digest(p.get("digest"), &list_digest(set_of(fw, scope, name)?))?;
    let set = set_mut(fw, scope, name)?;
    let entry = set
        .iter_mut()
        .find(|e| e.get("cidr").is_some_and(|c| c == cidr))
        .ok_or_else(|| ApiError::param("cidr", "no such IP/Network"))?;
    apply_flags(entry, &p);
    Ok(())
}

/// `DELETE .../ipset/{name}/{cidr}`: removing an absent entry succeeds, as in PVE.
pub(crate) fn remove_entry(
    fw: &mut Firewall,
    scope: &Scope,
    name: &str,
    cidr: &str,
    params: &Params,
) -> ApiResult<()> {
    let p = spec::check(params, &[DIGEST])?;
    spec::check_path(&IPSET_NAME, name)?;
    spec::check_path(&CIDR, cidr)?;
    spec::assert_digest(p.get("digest"), &list_digest(set_of(fw, scope, name)?))?;
    set_mut(fw, scope, name)?.retain(|e| e.get("cidr").is_none_or(|c| c != cidr));
    Ok(())
}
