//! The names of access control objects and pool members, checked as pve-access-control checks
//! them ([`model::access`]), and taken apart: an ACL entry's `{path}?{subject}?{role}` (bpg's
//! import id), a pool member's `{pool}/{vm|storage}/{id}`.

use model::access::{check_userid, is_acl_path, is_group_or_role, split_tokenid};

/// Who an ACL entry grants its role to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    User,
    Group,
    Token,
}

impl Subject {
    /// How `GET /access/acl` names the subject's type (`user`, `group`, `token`).
    pub fn pve_type(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Group => "group",
            Self::Token => "token",
        }
    }

    /// The `PUT /access/acl` parameter naming the subject (`users`, `groups`, `tokens`).
    pub fn param(self) -> &'static str {
        match self {
            Self::User => "users",
            Self::Group => "groups",
            Self::Token => "tokens",
        }
    }

    /// What a subject id is: a token has `!`, a user `@`, anything else is a group.
    pub fn of(ugid: &str) -> Self {
        if ugid.contains('!') {
            Self::Token
        } else if ugid.contains('@') {
            Self::User
        } else {
            Self::Group
        }
    }
}

/// An ACL entry's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclEntry<'a> {
    pub path: &'a str,
    pub subject: Subject,
    pub ugid: &'a str,
    pub role: &'a str,
}

/// Splits `{path}?{subject}?{role}`; `None` when any part is not as PVE takes it.
pub fn parse_acl(name: &str) -> Option<AclEntry<'_>> {
    let (path, rest) = name.split_once('?')?;
    let (ugid, role) = rest.rsplit_once('?')?;
    let subject = Subject::of(ugid);
    let subject_ok = match subject {
        Subject::Token => split_tokenid(ugid).is_ok(),
        Subject::User => check_userid(ugid).is_ok(),
        Subject::Group => is_group_or_role(ugid),
    };
    (is_acl_path(path) && subject_ok && is_group_or_role(role)).then_some(AclEntry {
        path,
        subject,
        ugid,
        role,
    })
}

/// bpg's ACL id from its parts.
pub fn acl_name(path: &str, ugid: &str, role: &str) -> String {
    format!("{path}?{ugid}?{role}")
}

/// A pool member's parts: the pool, `vm` or `storage`, and the VMID or storage id.
pub fn parse_member(name: &str) -> Option<(&str, &str, &str)> {
    let mut parts = name.rsplitn(3, '/');
    let (id, kind, pool) = (parts.next()?, parts.next()?, parts.next()?);
    let id_ok = match kind {
        "vm" => id
            .parse::<u32>()
            .is_ok_and(|n| (100..=999_999_999).contains(&n)),
        "storage" => {
            id.len() >= 2
                && id.starts_with(|c: char| c.is_ascii_alphabetic())
                && id
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c))
        }
        _ => false,
    };
    let pool_ok =
        !pool.is_empty() && pool.split('/').count() <= 3 && pool.split('/').all(is_group_or_role);
    (id_ok && pool_ok).then_some((pool, kind, id))
}

/// A user-chosen name as one path segment: a user name may hold `?`, `#` or `%`.
pub(super) fn segment(name: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~')
        .remove(b'@')
        .remove(b'!');
    percent_encoding::utf8_percent_encode(name, KEEP).to_string()
}

pub(super) fn userid(b: &[u8]) -> bool {
    std::str::from_utf8(b).is_ok_and(|s| check_userid(s).is_ok())
}

pub(super) fn group_or_role(b: &[u8]) -> bool {
    std::str::from_utf8(b).is_ok_and(is_group_or_role)
}

pub(super) fn tokenid(b: &[u8]) -> bool {
    std::str::from_utf8(b).is_ok_and(|s| split_tokenid(s).is_ok())
}

pub(super) fn acl(b: &[u8]) -> bool {
    std::str::from_utf8(b).is_ok_and(|s| parse_acl(s).is_some())
}

pub(super) fn member(b: &[u8]) -> bool {
    std::str::from_utf8(b).is_ok_and(|s| parse_member(s).is_some())
}

/// For people: `role PVEAuditor for user ops@pve on /vms/100`.
pub(super) fn describe_acl(name: &str) -> String {
    match parse_acl(name) {
        Some(e) => format!(
            "role {} for {} {} on {}",
            e.role,
            e.subject.pve_type(),
            e.ugid,
            e.path
        ),
        None => format!("ACL entry {name}"),
    }
}

/// For people: `VM 100 in pool web`, `storage local in pool web`.
pub(super) fn describe_member(name: &str) -> String {
    match parse_member(name) {
        Some((pool, "vm", id)) => format!("guest {id} in pool {pool}"),
        Some((pool, _, id)) => format!("storage {id} in pool {pool}"),
        None => format!("pool member {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::types::{ObjectId, ObjectKind, Scope};

    #[test]
    fn acl_entries_and_members_are_named_as_bpg_imports_them() {
        let e = parse_acl("/vms/100?ops@pve!ci?PVEVMUser").expect("an entry");
        assert_eq!(e.subject, Subject::Token);
        assert_eq!(
            (e.path, e.ugid, e.role),
            ("/vms/100", "ops@pve!ci", "PVEVMUser")
        );
        assert_eq!(
            parse_acl("/?admins?Administrator").map(|e| e.subject),
            Some(Subject::Group)
        );
        assert!(parse_acl("/nope?ops@pve?PVEAuditor").is_none());
        assert!(parse_acl("/?ops@pve").is_none());
        assert_eq!(
            parse_member("web/prod/vm/100"),
            Some(("web/prod", "vm", "100"))
        );
        assert_eq!(
            parse_member("web/storage/local-lvm"),
            Some(("web", "storage", "local-lvm"))
        );
        assert!(parse_member("web/vm/abc").is_none());

        let acl = ObjectId::new(
            ObjectKind::Acl,
            Scope::Cluster,
            Some("/?ops@pve?PVEAuditor"),
        )
        .expect("ok");
        assert_eq!(acl.path(), "/access/acl");
        assert_eq!(acl.key(), "/access/acl#/?ops@pve?PVEAuditor");
        assert_eq!(acl.import_id().as_deref(), Some("/?ops@pve?PVEAuditor"));
        assert_eq!(acl.describe(), "role PVEAuditor for user ops@pve on /");
        let token =
            ObjectId::new(ObjectKind::UserToken, Scope::Cluster, Some("ops@pve!ci")).expect("ok");
        assert_eq!(token.path(), "/access/users/ops@pve/token/ci");
        let member =
            ObjectId::new(ObjectKind::PoolMember, Scope::Cluster, Some("web/vm/100")).expect("ok");
        assert_eq!(member.path(), "/pools/web");
        assert_eq!(member.import_id().as_deref(), Some("web/vm/100"));
        for (kind, bad) in [
            (ObjectKind::User, "ops"),
            (ObjectKind::User, "a b@pve"),
            (ObjectKind::Group, "a/b"),
            (ObjectKind::Role, "x y"),
            (ObjectKind::UserToken, "ops@pve"),
        ] {
            assert!(
                ObjectId::new(kind, Scope::Cluster, Some(bad)).is_err(),
                "{bad}"
            );
        }
    }
}
