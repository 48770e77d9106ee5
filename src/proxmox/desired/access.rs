//! What access control resources add to the object table ([`super::object`]): the names made
//! of several arguments (an ACL entry's `{path}?{subject}?{role}`, a token's
//! `user@realm!token`, a pool member's `{pool}/{vm|storage}/{id}`), the values PVE takes in
//! another form (dates as epoch seconds, sets as sorted lists), the privileges a role may name,
//! and the user's password, which is write-only.

use std::collections::BTreeMap;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::proxmox::plan::Secret;
use crate::proxmox::types::{ObjectId, ObjectKind, Subject, acl_name, parse_acl, parse_member};

/// The most privileges a role lists, and groups a user is in: bounded, as a PR chooses them.
const MAX_ITEMS: usize = 256;

/// A text argument as the object reader gives it: known, absent, or why not.
pub(super) type TextOf<'a> = &'a dyn Fn(&str) -> Result<Option<String>, super::DesiredError>;

/// Why a configured value is refused, for the reader to wrap with the address.
pub(super) enum Refused {
    Desired(super::DesiredError),
    Invalid(String),
}

impl From<super::DesiredError> for Refused {
    fn from(e: super::DesiredError) -> Self {
        Self::Desired(e)
    }
}

/// The object's name when several arguments make it; `None` for a kind named by one argument.
pub(super) fn composite_name(
    kind: ObjectKind,
    text: TextOf<'_>,
) -> Result<Option<String>, Refused> {
    let required = |arg: &str| -> Result<String, Refused> {
        text(arg)?.ok_or_else(|| Refused::Invalid(format!("{arg} is required")))
    };
    Ok(Some(match kind {
        ObjectKind::Acl => {
            let subjects = [text("user_id")?, text("group_id")?, text("token_id")?];
            let set: Vec<&String> = subjects.iter().flatten().collect();
            let [ugid] = set.as_slice() else {
                return Err(Refused::Invalid(
                    "exactly one of user_id, group_id or token_id must be set".to_owned(),
                ));
            };
            let path = required("path")?;
            if !model::access::is_acl_path(&path) {
                return Err(Refused::Invalid(format!(
                    "path: '{path}' is not an ACL path Proxmox VE accepts (like /, /vms/100, \
                     /storage/local, /pool/web, /nodes/pve, /access/groups/ops)"
                )));
            }
            acl_name(&path, ugid, &required("role_id")?)
        }
        ObjectKind::UserToken => {
            format!("{}!{}", required("user_id")?, required("token_name")?)
        }
        ObjectKind::PoolMember => {
            let pool = required("pool_id")?;
            match (text("vm_id")?, text("storage_id")?) {
                (Some(vm), None) => format!("{pool}/vm/{vm}"),
                (None, Some(storage)) => format!("{pool}/storage/{storage}"),
                _ => {
                    return Err(Refused::Invalid(
                        "exactly one of vm_id or storage_id must be set".to_owned(),
                    ));
                }
            }
        }
        _ => return Ok(None),
    }))
}

/// An RFC 3339 date as PVE's `expire`: seconds since the epoch, `0` for never.
pub(super) fn epoch(name: &str, date: &str) -> Result<String, String> {
    let at = OffsetDateTime::parse(date, &Rfc3339).map_err(|_| {
        format!("{name}: '{date}' is not an RFC 3339 date (like 2034-01-01T22:00:00Z)")
    })?;
    let secs = at.unix_timestamp();
    if secs < 0 {
        return Err(format!("{name}: '{date}' is before 1970"));
    }
    Ok(secs.to_string())
}

/// A set of strings as PVE's list: sorted, without repeats, joined by commas.
pub(super) fn joined(name: &str, mut items: Vec<String>) -> Result<String, String> {
    items.sort();
    items.dedup();
    if items.len() > MAX_ITEMS {
        return Err(format!(
            "{name}: {} items are more than atoll sets at once ({MAX_ITEMS})",
            items.len()
        ));
    }
    Ok(items.join(","))
}

/// What PVE would refuse in the parameters, said at plan: a privilege it does not know.
pub(super) fn check(kind: ObjectKind, fields: &BTreeMap<String, String>) -> Result<(), String> {
    if kind != ObjectKind::Role {
        return Ok(());
    }
    let privs = fields.get("privs").map(String::as_str).unwrap_or_default();
    let unknown: Vec<&str> = privs
        .split(',')
        .filter(|p| !p.is_empty() && !model::access::is_privilege(p))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(format!(
        "privileges: Proxmox VE knows no privilege {} (its privileges are named like \
         VM.Audit, Datastore.AllocateSpace, Sys.Audit)",
        unknown
            .iter()
            .map(|p| format!("'{p}'"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The user's password, sent when the user is created and never compared, shown or stored.
pub(super) fn write_only(
    kind: ObjectKind,
    password: Option<String>,
) -> Result<BTreeMap<String, Secret>, String> {
    match (kind, password) {
        (ObjectKind::User, Some(p)) if !p.is_empty() => {
            let chars = p.chars().count();
            if !(8..=64).contains(&chars) {
                // the value is never said, only its length
                return Err(format!(
                    "password: Proxmox VE takes 8 to 64 characters, this one has {chars}"
                ));
            }
            Ok(BTreeMap::from([("password".to_owned(), Secret::new(p))]))
        }
        _ => Ok(BTreeMap::new()),
    }
}

/// The objects of the same configuration an access object needs first, by kind and name: a
/// user's groups, an ACL entry's subject and role, a token's user, a member's pool.
pub(super) fn uses(id: &ObjectId, fields: &BTreeMap<String, String>) -> Vec<(ObjectKind, String)> {
    let name = id.name.as_deref().unwrap_or_default();
    match id.kind {
        ObjectKind::User => fields
            .get("groups")
            .into_iter()
            .flat_map(|g| g.split(','))
            .filter(|g| !g.is_empty())
            .map(|g| (ObjectKind::Group, g.to_owned()))
            .collect(),
        ObjectKind::Acl => parse_acl(name)
            .map(|e| {
                let subject = match e.subject {
                    Subject::User => ObjectKind::User,
                    Subject::Group => ObjectKind::Group,
                    Subject::Token => ObjectKind::UserToken,
                };
                let mut used = vec![
                    (subject, e.ugid.to_owned()),
                    (ObjectKind::Role, e.role.to_owned()),
                ];
                if let Some(pool) = e.path.strip_prefix("/pool/") {
                    used.push((ObjectKind::Pool, pool.to_owned()));
                }
                used
            })
            .unwrap_or_default(),
        ObjectKind::UserToken => name
            .rsplit_once('!')
            .map(|(user, _)| vec![(ObjectKind::User, user.to_owned())])
            .unwrap_or_default(),
        ObjectKind::PoolMember => parse_member(name)
            .map(|(pool, _, _)| vec![(ObjectKind::Pool, pool.to_owned())])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The guest a pool member names, by VMID.
pub(super) fn member_guest(id: &ObjectId) -> Option<u32> {
    if id.kind != ObjectKind::PoolMember {
        return None;
    }
    match parse_member(id.name.as_deref()?)? {
        (_, "vm", vmid) => vmid.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_become_epoch_seconds_and_sets_sorted_lists() {
        assert_eq!(
            epoch("e", "1970-01-01T00:00:00Z").ok().as_deref(),
            Some("0")
        );
        assert_eq!(
            epoch("e", "2034-01-01T22:00:00Z").ok().as_deref(),
            Some("2019765600")
        );
        assert!(epoch("e", "tomorrow").is_err());
        let set = joined("g", vec!["b".into(), "a".into(), "b".into()]);
        assert_eq!(set.ok().as_deref(), Some("a,b"));
        let fields = BTreeMap::from([("privs".to_owned(), "VM.Audit,VM.Nope".to_owned())]);
        let refused = check(ObjectKind::Role, &fields).err().unwrap_or_default();
        assert!(refused.contains("'VM.Nope'") && !refused.contains("'VM.Audit'"));
    }
}
