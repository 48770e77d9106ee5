//! The access control data sources (bpg/proxmox v0.111, SDKv2, `proxmoxtf/datasource/`):
//! `proxmox_virtual_environment_user` and `_users`, `_group` and `_groups`, `_role` and
//! `_roles`. What each reads is `crate::data::access`'s.

use std::collections::BTreeMap;

use super::BodySchema;
use super::builders::*;
use crate::types::{Constraint, ObjectAttr};

fn body(attrs: Vec<super::AttrSchema>) -> BodySchema {
    BodySchema {
        attrs,
        blocks: Vec::new(),
    }
}

fn set_of_strings() -> Constraint {
    Constraint::Set(Box::new(s()))
}

/// An ACL entry as a user or a group lists it: `path`, `propagate`, `role_id`.
fn acl() -> Constraint {
    let attrs: BTreeMap<String, ObjectAttr> = [("path", s()), ("propagate", b()), ("role_id", s())]
        .into_iter()
        .map(|(name, ty)| {
            let attr = ObjectAttr {
                ty,
                optional: false,
                default: None,
            };
            (name.to_owned(), attr)
        })
        .collect();
    Constraint::Set(Box::new(Constraint::Object(attrs)))
}

pub(super) fn user() -> BodySchema {
    body(vec![
        req("user_id", s()),
        ro("id", s()),
        ro("acl", acl()),
        ro("comment", s()),
        ro("email", s()),
        ro("enabled", b()),
        ro("expiration_date", s()),
        ro("first_name", s()),
        ro("groups", ls()),
        ro("keys", s()),
        ro("last_name", s()),
    ])
}

pub(super) fn users() -> BodySchema {
    body(vec![
        ro("id", s()),
        ro("comments", ls()),
        ro("emails", ls()),
        ro("enabled", list_of(b())),
        ro("expiration_dates", ls()),
        ro("first_names", ls()),
        ro("groups", list_of(ls())),
        ro("keys", ls()),
        ro("last_names", ls()),
        ro("user_ids", ls()),
    ])
}

pub(super) fn group() -> BodySchema {
    body(vec![
        req("group_id", s()),
        ro("id", s()),
        ro("acl", acl()),
        ro("comment", s()),
        ro("members", set_of_strings()),
    ])
}

pub(super) fn groups() -> BodySchema {
    body(vec![
        ro("id", s()),
        ro("comments", ls()),
        ro("group_ids", ls()),
    ])
}

pub(super) fn role() -> BodySchema {
    body(vec![
        req("role_id", s()),
        ro("id", s()),
        ro("privileges", set_of_strings()),
    ])
}

pub(super) fn roles() -> BodySchema {
    body(vec![
        ro("id", s()),
        ro("privileges", list_of(set_of_strings())),
        ro("role_ids", ls()),
        ro("special", list_of(b())),
    ])
}
