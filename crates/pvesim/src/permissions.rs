//! Effective privileges, as `GET /access/permissions` reports them: the roles a user, group or
//! token holds on a path (ACL entries walked from `/` down, propagation, `NoAccess`), the roles
//! a pool grants its members, and a privilege-separated token limited to what its user also
//! has. Facts from pve-access-control: `PVE::AccessControl::roles`, `PVE::RPCEnvironment`
//! `permissions`, `compile_acl_path` and `get_effective_permissions`. It only computes; no
//! other endpoint of the simulator enforces privileges.

use std::collections::{BTreeMap, BTreeSet};

use crate::access_control::AccessControl;
use crate::pools::Pool;

/// Privilege → propagate flag (PVE's `{priv: 1|0}`: a key present means the privilege is set).
pub(crate) type Privs = BTreeMap<String, bool>;

/// The paths every answer without `path` considers (`get_effective_permissions`).
const TOP_PATHS: &[&str] = &[
    "/",
    "/access",
    "/access/groups",
    "/nodes",
    "/pool",
    "/sdn",
    "/storage",
    "/vms",
];

impl AccessControl {
    /// `$rpcenv->permissions($authid, $path)`: what `authid` (`user@realm` or a full token id)
    /// may do on `path`.
    pub(crate) fn privileges(
        &self,
        pools: &BTreeMap<String, Pool>,
        authid: &str,
        path: &str,
    ) -> Privs {
        if authid == "root@pam" {
            return self.role_privs(&BTreeMap::from([("Administrator".to_owned(), true)]));
        }
        let Some((user, token)) = authid.rsplit_once('!') else {
            return self.own_privileges(pools, authid, path);
        };
        let Some(info) = self.users.get(user).and_then(|u| u.tokens.get(token)) else {
            return Privs::new();
        };
        let of_user = self.privileges(pools, user, path);
        if !info.privsep {
            return of_user;
        }
        let of_token = self.own_privileges(pools, authid, path);
        if user == "root@pam" {
            return of_token;
        }
        of_token
            .into_iter()
            .filter_map(|(p, prop)| of_user.get(&p).map(|u| (p, prop && *u)))
            .collect()
    }

    /// `get_effective_permissions`: every path that matters, with what `authid` holds there;
    /// paths where it holds nothing are left out.
    pub(crate) fn effective(
        &self,
        pools: &BTreeMap<String, Pool>,
        authid: &str,
    ) -> BTreeMap<String, Privs> {
        let mut paths: BTreeSet<String> = TOP_PATHS.iter().map(|p| (*p).to_owned()).collect();
        paths.extend(self.acl.keys().map(|(path, ..)| path.clone()));
        for pool in pools.values() {
            paths.extend(pool.vms.iter().map(|id| format!("/vms/{id}")));
            paths.extend(pool.storage.iter().map(|s| format!("/storage/{s}")));
        }
        paths
            .into_iter()
            .map(|path| {
                let privs = self.privileges(pools, authid, &path);
                (path, privs)
            })
            .filter(|(_, privs)| !privs.is_empty())
            .collect()
    }

    /// `compile_acl_path` for one subject (a user, or a token on its own ACLs).
    fn own_privileges(&self, pools: &BTreeMap<String, Pool>, subject: &str, path: &str) -> Privs {
        let mut roles = self.roles_on(subject, path);
        if !roles.contains_key("NoAccess") {
            let from_pools = self.pool_roles(pools, subject, path);
            if from_pools.contains("NoAccess") {
                roles = BTreeMap::from([("NoAccess".to_owned(), false)]);
            } else {
                for role in from_pools {
                    roles.entry(role).or_insert(false);
                }
            }
        }
        self.role_privs(&roles)
    }

    /// The roles pools give `subject` on `path` (a member guest or storage of a pool on which
    /// it holds roles); never propagated.
    fn pool_roles(
        &self,
        pools: &BTreeMap<String, Pool>,
        subject: &str,
        path: &str,
    ) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (id, pool) in pools {
            let member = pool.vms.iter().any(|v| format!("/vms/{v}") == path)
                || pool.storage.iter().any(|s| format!("/storage/{s}") == path);
            if member {
                out.extend(self.roles_on(subject, &format!("/pool/{id}")).into_keys());
            }
        }
        out
    }

    /// `PVE::AccessControl::roles`: walks the ACL tree from `/` to `path`; at each level the
    /// subject's own entries win over its groups', and an entry on a parent counts only when it
    /// propagates. `NoAccess` anywhere on the final set wins.
    fn roles_on(&self, subject: &str, path: &str) -> BTreeMap<String, bool> {
        let is_token = subject.contains('!');
        let groups = self
            .users
            .get(subject)
            .map(|u| u.groups.clone())
            .unwrap_or_default();
        let levels = prefixes(path);
        let last = levels.len().saturating_sub(1);
        let mut roles = BTreeMap::new();
        for (i, level) in levels.iter().enumerate() {
            let applies = |propagate: bool| i == last || propagate;
            let pick = |ty: &str, who: &dyn Fn(&str) -> bool| -> BTreeMap<String, bool> {
                self.acl
                    .iter()
                    .filter(|((p, t, ugid, _), prop)| {
                        p == level && *t == ty && who(ugid.as_str()) && applies(**prop)
                    })
                    .map(|((.., role), prop)| (role.clone(), *prop))
                    .collect()
            };
            let own = pick(if is_token { "token" } else { "user" }, &|u| u == subject);
            if !own.is_empty() {
                roles = own;
                continue;
            }
            let by_group = pick("group", &|g| groups.contains(g));
            if !by_group.is_empty() {
                roles = by_group;
            }
        }
        match roles.get("NoAccess") {
            Some(prop) => BTreeMap::from([("NoAccess".to_owned(), *prop)]),
            None => roles,
        }
    }

    /// The privileges of a set of roles; a privilege propagates when any role holding it does.
    fn role_privs(&self, roles: &BTreeMap<String, bool>) -> Privs {
        let mut privs = Privs::new();
        for (role, propagate) in roles {
            for p in self.role(role).unwrap_or_default() {
                let entry = privs.entry(p).or_insert(false);
                *entry = *entry || *propagate;
            }
        }
        privs
    }
}

/// `/`, `/vms`, `/vms/100` for `/vms/100`.
fn prefixes(path: &str) -> Vec<String> {
    let mut out = vec!["/".to_owned()];
    let mut current = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        current.push('/');
        current.push_str(part);
        out.push(current.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_control::{Token, User};

    fn access() -> AccessControl {
        let mut a = AccessControl::default();
        let mut user = User {
            enable: true,
            ..User::default()
        };
        user.groups.insert("ops".to_owned());
        user.tokens.insert(
            "sep".to_owned(),
            Token {
                privsep: true,
                ..Token::default()
            },
        );
        user.tokens.insert("full".to_owned(), Token::default());
        a.users.insert("alice@pve".to_owned(), user);
        a.groups.insert("ops".to_owned(), None);
        let mut grant = |path: &str, ty: &'static str, who: &str, role: &str, prop: bool| {
            a.acl
                .insert((path.into(), ty, who.into(), role.into()), prop);
        };
        grant("/", "group", "ops", "PVEAuditor", true);
        grant("/vms", "user", "alice@pve", "PVEVMAdmin", true);
        grant("/storage/local", "user", "alice@pve", "NoAccess", true);
        grant("/vms", "token", "alice@pve!sep", "PVEVMUser", true);
        grant("/", "token", "alice@pve!sep", "PVEAdmin", false);
        a
    }

    #[test]
    fn a_users_own_entry_wins_over_its_groups_and_propagates_down() {
        let a = access();
        let pools = BTreeMap::new();
        let on_vm = a.privileges(&pools, "alice@pve", "/vms/100");
        assert!(on_vm.contains_key("VM.Allocate"), "{on_vm:?}");
        let on_node = a.privileges(&pools, "alice@pve", "/nodes/pve");
        assert!(on_node.contains_key("Sys.Audit") && !on_node.contains_key("VM.Allocate"));
        assert!(
            a.privileges(&pools, "alice@pve", "/storage/local")
                .is_empty()
        );
    }

    #[test]
    fn a_separated_token_holds_only_what_both_it_and_its_user_hold() {
        let a = access();
        let pools = BTreeMap::new();
        let sep = a.privileges(&pools, "alice@pve!sep", "/vms/100");
        assert!(sep.contains_key("VM.PowerMgmt"), "{sep:?}");
        assert!(
            !sep.contains_key("VM.Allocate"),
            "PVEVMUser lacks it: {sep:?}"
        );
        // PVEAdmin on / does not propagate: nothing below / from it
        assert!(
            a.privileges(&pools, "alice@pve!sep", "/nodes/pve")
                .is_empty()
        );
        let full = a.privileges(&pools, "alice@pve!full", "/vms/100");
        assert!(full.contains_key("VM.Allocate"));
        assert!(a.privileges(&pools, "alice@pve!none", "/").is_empty());
    }

    #[test]
    fn root_holds_every_privilege_everywhere_and_pools_lend_their_roles() {
        let mut a = access();
        let mut pools = BTreeMap::new();
        let root = a.privileges(&pools, "root@pam", "/storage/x");
        assert!(root.contains_key("Datastore.AllocateSpace") && root.contains_key("SDN.Use"));
        a.acl.insert(
            (
                "/pool/dev".into(),
                "user",
                "bob@pve".into(),
                "PVEVMAdmin".into(),
            ),
            true,
        );
        pools.insert(
            "dev".to_owned(),
            Pool {
                comment: None,
                vms: BTreeSet::from([105]),
                storage: BTreeSet::new(),
            },
        );
        assert!(
            a.privileges(&pools, "bob@pve", "/vms/105")
                .contains_key("VM.Allocate")
        );
        assert!(a.privileges(&pools, "bob@pve", "/vms/106").is_empty());
        let all = a.effective(&pools, "bob@pve");
        assert!(
            all.contains_key("/vms/105") && !all.contains_key("/"),
            "{all:?}"
        );
    }
}
