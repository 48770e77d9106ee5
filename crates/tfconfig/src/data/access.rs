//! `proxmox_virtual_environment_user`, `_users`, `_group`, `_groups`, `_role` and `_roles`,
//! read as bpg reads them (`proxmoxtf/datasource/user.go`, `users.go`, `group.go`,
//! `groups.go`, `role.go`, `roles.go`): missing text as `""`, a missing `enable` as true, an
//! expiry of `0` as the epoch in RFC 3339, a user's or a group's ACL entries from `/access/acl`.

use serde_json::Value as Json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::json::{attrs, flag, items, list, number, object, strings, text};
use super::{Attributes, DataRead, Facts, Query, ReadError};
use crate::value::Value;

/// An expiry (epoch seconds) as bpg shows it: RFC 3339, the epoch for none.
fn expiry(v: &Json) -> String {
    let secs = number(v, "expire").unwrap_or(0.0) as i64;
    OffsetDateTime::from_unix_timestamp(secs.max(0))
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// A list PVE gives as an array or as a comma-separated string.
fn names(v: &Json, key: &str) -> Vec<String> {
    match v.get(key) {
        Some(Json::Array(a)) => a
            .iter()
            .filter_map(Json::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Json::String(s)) => s
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn text_or_empty(v: &Json, key: &str) -> Value {
    Value::String(text(v, key).unwrap_or_default())
}

/// The ACL entries of `ugid` of type `kind` (`user`, `group`).
fn acl_of(listing: &Json, kind: &str, ugid: &str) -> Value {
    let entries = items(listing)
        .iter()
        .filter(|e| {
            text(e, "type").as_deref() == Some(kind) && text(e, "ugid").as_deref() == Some(ugid)
        })
        .map(|e| {
            object([
                ("path", text_or_empty(e, "path")),
                (
                    "propagate",
                    Value::Bool(flag(e, "propagate").unwrap_or(false)),
                ),
                ("role_id", text_or_empty(e, "roleid")),
            ])
        });
    list(entries)
}

pub(super) fn users_query(_: &DataRead) -> Vec<Query> {
    vec![Query::Users]
}

pub(super) fn users(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = items(facts.read(&Query::Users, "error listing users")?);
    let column = |f: &dyn Fn(&Json) -> Value| list(listed.iter().map(f));
    Ok(attrs([
        ("id", Value::string("users")),
        ("comments", column(&|u| text_or_empty(u, "comment"))),
        ("emails", column(&|u| text_or_empty(u, "email"))),
        (
            "enabled",
            column(&|u| Value::Bool(flag(u, "enable").unwrap_or(true))),
        ),
        ("expiration_dates", column(&|u| Value::String(expiry(u)))),
        ("first_names", column(&|u| text_or_empty(u, "firstname"))),
        ("groups", column(&|u| strings(names(u, "groups")))),
        ("keys", column(&|u| text_or_empty(u, "keys"))),
        ("last_names", column(&|u| text_or_empty(u, "lastname"))),
        ("user_ids", column(&|u| text_or_empty(u, "userid"))),
    ]))
}

fn user_request(read: &DataRead) -> Query {
    Query::User {
        user: read.text("user_id"),
    }
}

pub(super) fn user_query(read: &DataRead) -> Vec<Query> {
    vec![user_request(read), Query::Acl]
}

pub(super) fn user(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let id = read.text("user_id");
    let user = facts.read(&user_request(read), "error retrieving user")?;
    let acl = facts.read(&Query::Acl, "error retrieving ACL")?;
    Ok(attrs([
        ("id", Value::String(id.clone())),
        ("acl", acl_of(acl, "user", &id)),
        ("comment", text_or_empty(user, "comment")),
        ("email", text_or_empty(user, "email")),
        ("enabled", Value::Bool(flag(user, "enable").unwrap_or(true))),
        ("expiration_date", Value::String(expiry(user))),
        ("first_name", text_or_empty(user, "firstname")),
        ("groups", strings(names(user, "groups"))),
        ("keys", text_or_empty(user, "keys")),
        ("last_name", text_or_empty(user, "lastname")),
    ]))
}

pub(super) fn groups_query(_: &DataRead) -> Vec<Query> {
    vec![Query::Groups]
}

pub(super) fn groups(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = items(facts.read(&Query::Groups, "error listing groups")?);
    Ok(attrs([
        ("id", Value::string("groups")),
        (
            "comments",
            list(listed.iter().map(|g| text_or_empty(g, "comment"))),
        ),
        (
            "group_ids",
            list(listed.iter().map(|g| text_or_empty(g, "groupid"))),
        ),
    ]))
}

fn group_request(read: &DataRead) -> Query {
    Query::Group {
        group: read.text("group_id"),
    }
}

pub(super) fn group_query(read: &DataRead) -> Vec<Query> {
    vec![group_request(read), Query::Acl]
}

pub(super) fn group(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let id = read.text("group_id");
    let group = facts.read(&group_request(read), "error retrieving group")?;
    let acl = facts.read(&Query::Acl, "error retrieving ACL")?;
    Ok(attrs([
        ("id", Value::String(id.clone())),
        ("acl", acl_of(acl, "group", &id)),
        ("comment", text_or_empty(group, "comment")),
        ("members", strings(names(group, "members"))),
    ]))
}

pub(super) fn roles_query(_: &DataRead) -> Vec<Query> {
    vec![Query::Roles]
}

pub(super) fn roles(_: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let listed = items(facts.read(&Query::Roles, "error listing roles")?);
    Ok(attrs([
        ("id", Value::string("roles")),
        (
            "privileges",
            list(listed.iter().map(|r| strings(names(r, "privs")))),
        ),
        (
            "role_ids",
            list(listed.iter().map(|r| text_or_empty(r, "roleid"))),
        ),
        (
            "special",
            list(
                listed
                    .iter()
                    .map(|r| Value::Bool(flag(r, "special").unwrap_or(false))),
            ),
        ),
    ]))
}

fn role_request(read: &DataRead) -> Query {
    Query::Role {
        role: read.text("role_id"),
    }
}

pub(super) fn role_query(read: &DataRead) -> Vec<Query> {
    vec![role_request(read)]
}

pub(super) fn role(read: &DataRead, facts: &Facts) -> Result<Attributes, ReadError> {
    let id = read.text("role_id");
    let role = facts.read(&role_request(read), "error retrieving role")?;
    let privileges: Vec<String> = role
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, on)| on.as_u64() == Some(1) || on.as_bool() == Some(true))
        .map(|(p, _)| p.clone())
        .collect();
    Ok(attrs([
        ("id", Value::String(id)),
        ("privileges", strings(privileges)),
    ]))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::data::{DataRead, Facts, Query, answer};
    use crate::diag::Span;

    fn read(data_type: &str, args: &[(&str, &str)]) -> DataRead {
        let fields = args
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::string(*v)))
            .collect();
        DataRead {
            data_type: data_type.to_owned(),
            address: format!("data.{data_type}.x"),
            arguments: Value::Object(fields),
            subject: Span {
                file: 0,
                range: 0..1,
            },
            declared_at: "main.tf:1".to_owned(),
        }
    }

    fn facts(readings: Vec<(Query, Json)>) -> Facts {
        Facts {
            guests: Vec::new(),
            readings: readings.into_iter().map(|(q, v)| (q, Ok(v))).collect(),
        }
    }

    #[test]
    fn a_user_is_read_with_its_acl_entries_and_bpg_defaults() {
        let r = read(
            "proxmox_virtual_environment_user",
            &[("user_id", "ops@pve")],
        );
        assert_eq!(
            crate::data::queries(&r),
            vec![
                Query::User {
                    user: "ops@pve".to_owned()
                },
                Query::Acl
            ]
        );
        let f = facts(vec![
            (
                Query::User {
                    user: "ops@pve".to_owned(),
                },
                json!({"enable": 1, "expire": 2019765600, "groups": ["admins"], "email": "o@x"}),
            ),
            (
                Query::Acl,
                json!([
                    {"path": "/vms", "type": "user", "ugid": "ops@pve", "roleid": "PVEVMUser", "propagate": 1},
                    {"path": "/", "type": "group", "ugid": "ops@pve", "roleid": "PVEAdmin", "propagate": 1},
                ]),
            ),
        ]);
        let got = answer(&r, &f).expect("an answer");
        assert_eq!(
            got["expiration_date"],
            Value::string("2034-01-01T22:00:00Z")
        );
        assert_eq!(got["comment"], Value::string(""));
        assert_eq!(got["enabled"], Value::Bool(true));
        let acl = format!("{:?}", got["acl"]);
        assert!(
            acl.contains("PVEVMUser") && !acl.contains("PVEAdmin"),
            "{acl}"
        );
        assert!(format!("{:?}", got["groups"]).contains("admins"));
    }

    #[test]
    fn lists_and_roles_are_read_as_bpg_reads_them() {
        let f = facts(vec![
            (
                Query::Users,
                json!([{"userid": "a@pve", "enable": 0}, {"userid": "b@pve", "groups": "x,y"}]),
            ),
            (
                Query::Roles,
                json!([{"roleid": "NoAccess", "privs": "", "special": 1}, {"roleid": "Ops", "privs": "VM.Audit,Sys.Audit"}]),
            ),
            (
                Query::Role {
                    role: "Ops".to_owned(),
                },
                json!({"VM.Audit": 1, "Sys.Audit": 1}),
            ),
            (
                Query::Group {
                    group: "admins".to_owned(),
                },
                json!({"comment": "the admins", "members": ["a@pve"]}),
            ),
            (Query::Acl, json!([])),
        ]);
        let users = answer(&read("proxmox_virtual_environment_users", &[]), &f).expect("users");
        let enabled = format!("{:?}", users["enabled"]);
        assert!(
            enabled.find("false") < enabled.find("true"),
            "a@pve is disabled, b@pve enabled by default: {enabled}"
        );
        assert!(format!("{:?}", users["groups"]).contains('y'));
        let roles = answer(&read("proxmox_virtual_environment_roles", &[]), &f).expect("roles");
        assert!(format!("{:?}", roles["special"]).contains("true"));
        let role = answer(
            &read("proxmox_virtual_environment_role", &[("role_id", "Ops")]),
            &f,
        )
        .expect("a role");
        assert!(format!("{:?}", role["privileges"]).contains("Sys.Audit"));
        let group = answer(
            &read(
                "proxmox_virtual_environment_group",
                &[("group_id", "admins")],
            ),
            &f,
        )
        .expect("a group");
        assert_eq!(group["comment"], Value::string("the admins"));
        let missing = answer(
            &read("proxmox_virtual_environment_role", &[("role_id", "Nope")]),
            &f,
        );
        assert!(missing.is_err());
    }
}
