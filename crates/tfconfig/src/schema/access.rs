//! Access control and pool membership (bpg/proxmox v0.111): users, groups, roles (SDKv2),
//! ACL entries, API tokens and pool memberships (framework), under both names where bpg
//! renamed them to `proxmox_*`; the old names draw bpg's deprecation warning
//! ([`super::resource_deprecation`]). Defaults are those of bpg's code.

use super::builders::*;
use super::{AttrSchema, BlockSchema, BodySchema, Check, ResourceSchema};
use std::collections::BTreeMap;

use crate::types::Constraint;
use crate::value::Value;

/// An RFC 3339 date as bpg's validators take it (`2034-01-01T22:00:00Z`).
const RFC3339: Check = Check::Matches {
    pattern: r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$",
    expected: "a valid RFC3339 date",
};

/// A set of strings (SDKv2's `TypeSet` of `TypeString`).
fn set_of_strings() -> Constraint {
    Constraint::Set(Box::new(Constraint::String))
}

fn schema(
    type_name: &'static str,
    attrs: Vec<AttrSchema>,
    blocks: Vec<BlockSchema>,
) -> ResourceSchema {
    ResourceSchema {
        type_name,
        body: BodySchema { attrs, blocks },
        generated: false,
    }
}

/// The inline `acl` block of a user or a group (deprecated by bpg, still honoured).
fn acl_block() -> BlockSchema {
    block(
        "acl",
        None,
        vec![
            req("path", s()),
            db("propagate", false),
            req("role_id", s()),
        ],
        vec![],
    )
}

pub(super) fn user() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        ds("comment", ""),
        ds("email", ""),
        db("enabled", true),
        checked(ds("expiration_date", "1970-01-01T00:00:00Z"), RFC3339),
        ds("first_name", ""),
        def(
            "groups",
            set_of_strings(),
            Value::Set(crate::value::Type::String, Vec::new()),
        ),
        ds("keys", ""),
        ds("last_name", ""),
        sens(opt("password", s())),
        fnew(req("user_id", s())),
    ];
    schema("proxmox_virtual_environment_user", attrs, vec![acl_block()])
}

pub(super) fn group() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        ds("comment", ""),
        fnew(req("group_id", s())),
        ro("members", set_of_strings()),
    ];
    schema(
        "proxmox_virtual_environment_group",
        attrs,
        vec![acl_block()],
    )
}

pub(super) fn role() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        req("privileges", set_of_strings()),
        fnew(req("role_id", s())),
    ];
    schema("proxmox_virtual_environment_role", attrs, vec![])
}

pub(super) fn acl(type_name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(opt("group_id", s())),
        fnew(req("path", s())),
        db("propagate", true),
        fnew(req("role_id", s())),
        fnew(opt("token_id", s())),
        fnew(opt("user_id", s())),
    ];
    schema(type_name, attrs, vec![])
}

pub(super) fn user_token(type_name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        opt("comment", s()),
        checked(opt("expiration_date", s()), RFC3339),
        db("privileges_separation", true),
        fnew(req("token_name", s())),
        fnew(req("user_id", s())),
        sens(ro("value", s())),
    ];
    schema(type_name, attrs, vec![])
}

pub(super) fn pool_membership(type_name: &'static str) -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        fnew(req("pool_id", s())),
        fnew(opt("storage_id", s())),
        ro("type", s()),
        fnew(opt("vm_id", n())),
    ];
    schema(type_name, attrs, vec![])
}

/// The `id` (and a pool membership's `type`) bpg sets from the arguments, planned as soon as
/// they are known, so other resources can name the object by it at plan: a user's, group's,
/// role's and pool's own id, a token's `user@realm!token`, an ACL entry's
/// `{path}?{subject}?{role}`, a membership's `{pool}/{vm|storage}/{id}`.
pub(super) fn planned(type_name: &str, fields: &mut BTreeMap<String, Value>) {
    let text = |name: &str| match fields.get(name).map(Value::unmark) {
        Some((Value::String(s), _)) => Some(s.clone()),
        Some((Value::Number(n), _)) if n.fract() == 0.0 => Some(format!("{n}")),
        _ => None,
    };
    let short = type_name
        .strip_prefix("proxmox_virtual_environment_")
        .or_else(|| type_name.strip_prefix("proxmox_"))
        .unwrap_or_default();
    let mut member_type = None;
    let id = match short {
        "user" => text("user_id"),
        "group" => text("group_id"),
        "role" => text("role_id"),
        "pool" => text("pool_id"),
        "user_token" => text("user_id")
            .zip(text("token_name"))
            .map(|(u, t)| format!("{u}!{t}")),
        "acl" => {
            let subject = text("user_id")
                .or_else(|| text("group_id"))
                .or_else(|| text("token_id"));
            match (text("path"), subject, text("role_id")) {
                (Some(path), Some(subject), Some(role)) => Some(format!("{path}?{subject}?{role}")),
                _ => None,
            }
        }
        "pool_membership" => {
            let member = match (text("vm_id"), text("storage_id")) {
                (Some(vm), None) => Some(("vm", vm)),
                (None, Some(storage)) => Some(("storage", storage)),
                _ => None,
            };
            member_type = member.as_ref().map(|(kind, _)| *kind);
            text("pool_id")
                .zip(member)
                .map(|(pool, (kind, id))| format!("{pool}/{kind}/{id}"))
        }
        _ => None,
    };
    if let Some(id) = id {
        fields.insert("id".to_owned(), Value::string(id));
    }
    if let Some(kind) = member_type {
        fields.insert("type".to_owned(), Value::string(kind));
    }
}

/// The schema of a type bpg serves under two names, under the name it was asked by.
pub(super) fn resource_named(
    type_name: &str,
    build: fn(&'static str) -> ResourceSchema,
) -> Option<ResourceSchema> {
    let name = super::SUPPORTED.iter().find(|t| **t == type_name)?;
    Some(build(name))
}

#[cfg(test)]
mod tests {
    use super::super::{SUPPORTED, resource};
    use super::*;

    #[test]
    fn access_types_are_known_under_both_names_and_only_the_old_names_are_deprecated() {
        for (old, new) in [
            ("proxmox_virtual_environment_acl", "proxmox_acl"),
            (
                "proxmox_virtual_environment_user_token",
                "proxmox_user_token",
            ),
            (
                "proxmox_virtual_environment_pool_membership",
                "proxmox_pool_membership",
            ),
        ] {
            assert!(resource(old).is_some() && SUPPORTED.contains(&old), "{old}");
            assert!(resource(new).is_some() && SUPPORTED.contains(&new), "{new}");
            assert!(super::super::resource_deprecation(old).is_some_and(|m| m.contains(new)));
            assert!(super::super::resource_deprecation(new).is_none());
        }
        for name in ["user", "group", "role"] {
            let name = format!("proxmox_virtual_environment_{name}");
            assert!(resource(&name).is_some(), "{name}");
            assert!(super::super::resource_deprecation(&name).is_none());
        }
    }

    #[test]
    fn the_token_value_and_the_user_password_are_sensitive() {
        let token = user_token("proxmox_user_token");
        let value = token.body.attr("value").expect("value");
        assert!(value.sensitive && value.read_only);
        let user = user();
        assert!(user.body.attr("password").expect("password").sensitive);
        assert!(!user.body.attr("comment").expect("comment").sensitive);
    }
}
