//! The self-lockout rule: atoll must keep the access it works with. It knows who it is (the
//! user, and the API token it authenticates with) and, from the cluster today, the groups its
//! user is in and the ACL entries that grant it anything (to its user, its token or one of
//! those groups). A change that takes any of that away, or weakens it, is refused: deleting,
//! replacing, disabling or expiring its user or token, taking its user out of a group that
//! grants it, turning its token's privilege separation on, removing (or no longer propagating)
//! an ACL entry that grants it, deleting a role such an entry uses or taking privileges out of
//! one, and deleting a group such an entry names.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::proxmox::plan::{Action, AttributeChange, Blocked, GuardRule, ResourceChange};
use crate::proxmox::types::{ObjectId, ObjectKind, parse_acl};

/// Who atoll is on the cluster, and what grants it access there today.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnAccess {
    /// `user@realm`.
    pub user: String,
    /// `user@realm!token`, when atoll authenticates with an API token.
    pub token: Option<String>,
    /// The groups its user is in.
    pub groups: BTreeSet<String>,
    /// The ACL entries that grant it: `(path, user, group or token, role)`.
    pub grants: Vec<(String, String, String)>,
}

impl OwnAccess {
    /// atoll as it authenticates: `user@realm!token` or `user@realm`; nothing granted yet.
    pub fn of(caller: &str) -> Self {
        let (user, token) = match caller.rsplit_once('!') {
            Some((user, _)) => (user.to_owned(), Some(caller.to_owned())),
            None => (caller.to_owned(), None),
        };
        Self {
            user,
            token,
            ..Self::default()
        }
    }

    /// Whether an ACL entry's subject is atoll (its user, its token, one of its groups).
    pub fn is_subject(&self, ugid: &str) -> bool {
        ugid == self.user || self.token.as_deref() == Some(ugid) || self.groups.contains(ugid)
    }

    fn who(&self) -> String {
        match &self.token {
            Some(token) => format!("API token {token}"),
            None => format!("user {}", self.user),
        }
    }

    fn grant_with(&self, matches: impl Fn(&str, &str) -> bool) -> Option<String> {
        self.grants
            .iter()
            .find(|(_, ugid, role)| matches(ugid, role))
            .map(|(path, ugid, role)| format!("role {role} for {ugid} on {path}"))
    }
}

/// The guard's decision on a change to an access object.
pub(super) fn check(change: &ResourceChange, own: &OwnAccess) -> Option<Blocked> {
    let removed = change.replaced.as_ref().or_else(|| {
        change
            .object
            .as_ref()
            .filter(|_| change.actions.contains(&Action::Delete))
    });
    let harm = removed.and_then(|id| removal(id, own)).or_else(|| {
        let id = change.object.as_ref()?;
        (change.actions == [Action::Update]).then(|| weakening(id, &change.attributes, own))?
    })?;
    let reason = format!(
        "atoll refuses to {harm}: atoll works as {} and would lock itself out of the cluster; \
         change its own access by hand, or drop the change from this pull request",
        own.who()
    );
    Some(Blocked {
        rule: GuardRule::SelfLockout,
        reason,
    })
}

/// What removing the object takes from atoll, said as what the change would do.
fn removal(id: &ObjectId, own: &OwnAccess) -> Option<String> {
    let name = id.name.as_deref()?;
    match id.kind {
        ObjectKind::User if name == own.user => Some(format!("delete its own user {name}")),
        ObjectKind::UserToken if own.token.as_deref() == Some(name) => {
            Some(format!("delete its own API token {name}"))
        }
        ObjectKind::Acl => {
            let entry = parse_acl(name)?;
            own.grants
                .iter()
                .any(|(path, ugid, role)| {
                    path == entry.path && ugid == entry.ugid && role == entry.role
                })
                .then(|| format!("remove the ACL entry that grants it {}", id.describe()))
        }
        ObjectKind::Role => own
            .grant_with(|_, role| role == name)
            .map(|grant| format!("delete role {name}, which grants it {grant}")),
        ObjectKind::Group if own.groups.contains(name) => own
            .grant_with(|ugid, _| ugid == name)
            .map(|grant| format!("delete group {name}, which grants it {grant}")),
        _ => None,
    }
}

fn attr<'a>(attributes: &'a [AttributeChange], path: &str) -> Option<&'a AttributeChange> {
    attributes.iter().find(|a| a.path == path)
}

/// A set of names as the plan shows it (`"a,b"`).
fn names(value: &Json) -> BTreeSet<String> {
    value
        .as_str()
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// An expiry set where there was none, or sooner: `0` (or nothing) is never.
fn expires(change: &AttributeChange) -> bool {
    let at = |v: &Json| v.as_str().and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    let (before, after) = (at(&change.before), at(&change.after));
    after != 0 && (before == 0 || after < before)
}

/// What changing the object in place takes from atoll.
fn weakening(id: &ObjectId, attributes: &[AttributeChange], own: &OwnAccess) -> Option<String> {
    let name = id.name.as_deref()?;
    let flag_off =
        |path: &str| attr(attributes, path).is_some_and(|a| a.after == Json::Bool(false));
    match id.kind {
        ObjectKind::User if name == own.user => {
            if flag_off("enabled") {
                return Some(format!("disable its own user {name}"));
            }
            if attr(attributes, "expiration_date").is_some_and(expires) {
                return Some(format!("expire its own user {name}"));
            }
            let groups = attr(attributes, "groups")?;
            let left: Vec<String> = names(&groups.before)
                .difference(&names(&groups.after))
                .filter(|g| own.grant_with(|ugid, _| ugid == g.as_str()).is_some())
                .cloned()
                .collect();
            (!left.is_empty()).then(|| {
                format!(
                    "take its own user {name} out of group {}, which grants it access",
                    left.join(", ")
                )
            })
        }
        ObjectKind::UserToken if own.token.as_deref() == Some(name) => {
            if attr(attributes, "expiration_date").is_some_and(expires) {
                return Some(format!("expire its own API token {name}"));
            }
            attr(attributes, "privileges_separation")
                .is_some_and(|a| a.after == Json::Bool(true))
                .then(|| {
                    format!(
                        "separate the privileges of its own API token {name} (it would lose \
                         those of its user)"
                    )
                })
        }
        ObjectKind::Acl => {
            let entry = parse_acl(name)?;
            let grants = own.grants.iter().any(|(path, ugid, role)| {
                path == entry.path && ugid == entry.ugid && role == entry.role
            });
            (grants && flag_off("propagate")).then(|| {
                format!(
                    "stop propagating the ACL entry that grants it {}",
                    id.describe()
                )
            })
        }
        ObjectKind::Role => {
            let grant = own.grant_with(|_, role| role == name)?;
            let privs = attr(attributes, "privileges")?;
            let taken: Vec<String> = names(&privs.before)
                .difference(&names(&privs.after))
                .cloned()
                .collect();
            (!taken.is_empty()).then(|| {
                format!(
                    "take {} out of role {name}, which grants it {grant}",
                    taken.join(", ")
                )
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::proxmox::plan::ResourceChange;
    use crate::proxmox::types::Scope;

    fn own() -> OwnAccess {
        OwnAccess {
            groups: BTreeSet::from(["ops".to_owned()]),
            grants: vec![
                (
                    "/".to_owned(),
                    "atoll@pve!ci".to_owned(),
                    "Deployer".to_owned(),
                ),
                ("/vms".to_owned(), "ops".to_owned(), "PVEVMAdmin".to_owned()),
            ],
            ..OwnAccess::of("atoll@pve!ci")
        }
    }

    fn change(kind: ObjectKind, name: &str, actions: Vec<Action>) -> ResourceChange {
        let mut c = ResourceChange::no_op("proxmox_x.y", "proxmox_x", "");
        c.object = Some(ObjectId::new(kind, Scope::Cluster, Some(name)).expect("an id"));
        c.actions = actions;
        c
    }

    fn with(mut c: ResourceChange, path: &str, before: Json, after: Json) -> ResourceChange {
        c.attributes.push(AttributeChange {
            path: path.to_owned(),
            pve_key: path.to_owned(),
            before,
            after,
            effect: None,
            before_sensitive: false,
            after_sensitive: false,
            after_unknown: false,
        });
        c
    }

    #[test]
    fn removing_or_weakening_what_grants_atoll_is_refused() {
        let own = own();
        let refused = |c: &ResourceChange| check(c, &own).map(|b| b.reason);
        let deletes = [
            (ObjectKind::User, "atoll@pve"),
            (ObjectKind::UserToken, "atoll@pve!ci"),
            (ObjectKind::Acl, "/?atoll@pve!ci?Deployer"),
            (ObjectKind::Role, "Deployer"),
            (ObjectKind::Group, "ops"),
        ];
        for (kind, name) in deletes {
            let reason = refused(&change(kind, name, vec![Action::Delete]));
            assert!(
                reason.is_some_and(|r| r.contains("lock itself out")),
                "{name}"
            );
        }
        let user = change(ObjectKind::User, "atoll@pve", vec![Action::Update]);
        let disabled = with(user.clone(), "enabled", json!(true), json!(false));
        assert!(refused(&disabled).is_some_and(|r| r.contains("disable")));
        let expired = with(
            user.clone(),
            "expiration_date",
            json!("0"),
            json!("2019765600"),
        );
        assert!(refused(&expired).is_some_and(|r| r.contains("expire")));
        let left = with(user.clone(), "groups", json!("dev,ops"), json!("dev"));
        assert!(refused(&left).is_some_and(|r| r.contains("group ops")));
        let role = change(ObjectKind::Role, "Deployer", vec![Action::Update]);
        let fewer = with(
            role.clone(),
            "privileges",
            json!("Sys.Audit,VM.Audit"),
            json!("VM.Audit"),
        );
        assert!(refused(&fewer).is_some_and(|r| r.contains("Sys.Audit")));

        // what does not take anything away goes through
        let more = with(
            role,
            "privileges",
            json!("VM.Audit"),
            json!("Sys.Audit,VM.Audit"),
        );
        assert!(refused(&more).is_none());
        let renamed = with(user, "comment", json!(null), json!("the robot"));
        assert!(refused(&renamed).is_none());
        let others = [
            (ObjectKind::User, "alice@pve"),
            (ObjectKind::UserToken, "atoll@pve!other"),
            (ObjectKind::Acl, "/?alice@pve?Deployer"),
            (ObjectKind::Role, "Unused"),
            (ObjectKind::Group, "dev"),
        ];
        for (kind, name) in others {
            assert!(
                refused(&change(kind, name, vec![Action::Delete])).is_none(),
                "{name}"
            );
        }
    }
}
