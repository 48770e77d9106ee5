//! Proxmox VE's access control vocabulary, as pve-access-control defines it
//! (`PVE::AccessControl`, `PVE::Auth::Plugin`): the privileges, the built-in roles made from
//! them, and the formats of user, group, role and token ids and of ACL paths. The server checks
//! a configuration against these; the simulator serves them.

use std::collections::BTreeSet;

/// The privileges by category and level (`$privgroups`): `(category, root, admin, user,
/// audit)`.
type Group = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

const PRIVGROUPS: &[Group] = &[
    (
        "VM",
        &[],
        &[
            "VM.Config.Disk",
            "VM.Config.CPU",
            "VM.Config.Memory",
            "VM.Config.Network",
            "VM.Config.HWType",
            "VM.Config.Options",
            "VM.Allocate",
            "VM.Clone",
            "VM.GuestAgent.Unrestricted",
            "VM.Migrate",
            "VM.Replicate",
            "VM.Snapshot",
            "VM.Snapshot.Rollback",
        ],
        &[
            "VM.Config.CDROM",
            "VM.Config.Cloudinit",
            "VM.Console",
            "VM.Backup",
            "VM.GuestAgent.FileRead",
            "VM.GuestAgent.FileSystemMgmt",
            "VM.GuestAgent.FileWrite",
            "VM.PowerMgmt",
        ],
        &["VM.Audit", "VM.GuestAgent.Audit"],
    ),
    (
        "Sys",
        &[
            "Sys.PowerMgmt",
            "Sys.Modify",
            "Sys.Incoming",
            "Sys.AccessNetwork",
        ],
        &["Sys.Console", "Sys.Syslog"],
        &[],
        &["Sys.Audit"],
    ),
    (
        "Datastore",
        &[],
        &["Datastore.Allocate", "Datastore.AllocateTemplate"],
        &["Datastore.AllocateSpace"],
        &["Datastore.Audit"],
    ),
    (
        "SDN",
        &[],
        &["SDN.Allocate", "SDN.Audit"],
        &["SDN.Use"],
        &["SDN.Audit"],
    ),
    (
        "User",
        &["Realm.Allocate"],
        &["User.Modify", "Group.Allocate", "Realm.AllocateUser"],
        &[],
        &[],
    ),
    (
        "Pool",
        &[],
        &["Pool.Allocate"],
        &["Pool.Audit"],
        &["Pool.Audit"],
    ),
    (
        "Mapping",
        &[],
        &["Mapping.Modify"],
        &["Mapping.Use"],
        &["Mapping.Audit"],
    ),
];

/// Whether `name` is a privilege Proxmox VE knows (`verify_privname`).
pub fn is_privilege(name: &str) -> bool {
    name == "Permissions.Modify"
        || PRIVGROUPS.iter().any(|(_, root, admin, user, audit)| {
            [*root, *admin, *user, *audit]
                .iter()
                .any(|level| level.contains(&name))
        })
}

/// Every privilege, in name order.
pub fn privileges() -> BTreeSet<&'static str> {
    let mut all = BTreeSet::from(["Permissions.Modify"]);
    for (_, root, admin, user, audit) in PRIVGROUPS {
        for level in [*root, *admin, *user, *audit] {
            all.extend(level.iter().copied());
        }
    }
    all
}

/// The built-in roles (`$special_roles` after `create_roles`), which cannot be changed or
/// deleted, with their privileges.
pub fn builtin_roles() -> Vec<(String, BTreeSet<&'static str>)> {
    let mut roles: std::collections::BTreeMap<String, BTreeSet<&'static str>> = [
        ("NoAccess".to_owned(), BTreeSet::new()),
        ("Administrator".to_owned(), privileges()),
        (
            "PVETemplateUser".to_owned(),
            BTreeSet::from(["VM.Clone", "VM.Audit"]),
        ),
    ]
    .into_iter()
    .collect();
    for (category, _, admin, user, audit) in PRIVGROUPS {
        for level in [*admin, *user, *audit] {
            roles
                .entry(format!("PVE{category}Admin"))
                .or_default()
                .extend(level.iter().copied());
            let pve_admin = roles.entry("PVEAdmin".to_owned()).or_default();
            pve_admin.extend(level.iter().copied());
        }
        if !user.is_empty() {
            let role = roles.entry(format!("PVE{category}User")).or_default();
            role.extend(user.iter().chain(audit.iter()).copied());
        }
        roles
            .entry("PVEAuditor".to_owned())
            .or_default()
            .extend(audit.iter().copied());
    }
    if let Some(admin) = roles.get_mut("PVEAdmin") {
        admin.remove("Mapping.Modify");
    }
    roles.into_iter().collect()
}

/// Whether `role` is built in (`role_is_special`).
pub fn is_builtin_role(role: &str) -> bool {
    builtin_roles().iter().any(|(name, _)| name == role)
}

/// `[A-Za-z][A-Za-z0-9\.\-_]+`: a realm, and a token's own id.
pub fn is_realm(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b".-_".contains(c))
}

/// `[A-Za-z0-9\.\-_]+`: a group or a role id.
pub fn is_group_or_role(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b".-_".contains(&c))
}

/// A user id `name@realm` (`verify_username`): 3 to 64 characters, the name without white
/// space, `:` or `/`. Why not, in PVE's words.
pub fn check_userid(userid: &str) -> Result<(), String> {
    let len = userid.len();
    if len < 3 {
        return Err(format!("user name '{userid}' is too short"));
    }
    if len > 64 {
        return Err(format!("user name '{userid}' is too long ({len} > 64)"));
    }
    let ok = userid.rsplit_once('@').is_some_and(|(name, realm)| {
        !name.is_empty()
            && !name
                .chars()
                .any(|c| c.is_whitespace() || c == ':' || c == '/')
            && is_realm(realm)
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "value '{userid}' does not look like a valid user name"
        ))
    }
}

/// A token id `name@realm!token` split into the user and the token's own id.
pub fn split_tokenid(tokenid: &str) -> Result<(&str, &str), String> {
    let bad = || format!("value '{tokenid}' does not look like a valid token ID");
    let (user, token) = tokenid.rsplit_once('!').ok_or_else(bad)?;
    check_userid(user).map_err(|_| bad())?;
    if !is_realm(token) {
        return Err(bad());
    }
    Ok((user, token))
}

/// Whether `path` is an ACL path Proxmox VE accepts (`check_path`).
pub fn is_acl_path(path: &str) -> bool {
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b".-_".contains(&c))
    };
    let alnum = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric());
    let vmid = |s: &str| {
        s.len() >= 3
            && s.len() <= 10
            && s.bytes().all(|c| c.is_ascii_digit())
            && !s.starts_with('0')
    };
    if path == "/" {
        return true;
    }
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        ["access"] | ["nodes"] | ["pool"] | ["sdn"] | ["storage"] | ["vms"] | ["mapping"] => true,
        ["access", "groups" | "realm"] => true,
        ["access", "groups" | "realm", name] => word(name),
        ["nodes" | "storage", name] | ["mapping", name] => word(name),
        ["mapping", a, b] => word(a) && word(b),
        ["pool", rest @ ..] => !rest.is_empty() && rest.len() <= 3 && rest.iter().all(|p| word(p)),
        ["vms", id] => vmid(id),
        [
            "sdn",
            "controllers" | "dns" | "fabrics" | "ipams" | "prefix-lists" | "route-maps",
        ] => true,
        ["sdn", "controllers", name] => {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"_-".contains(&c))
        }
        [
            "sdn",
            "dns" | "fabrics" | "ipams" | "prefix-lists" | "route-maps",
            name,
        ] => alnum(name),
        ["sdn", "zones"] => true,
        ["sdn", "zones", zone] => word(zone),
        ["sdn", "zones", zone, vnet] => word(zone) && word(vnet),
        ["sdn", "zones", zone, vnet, tag] => {
            word(zone)
                && word(vnet)
                && tag.len() <= 4
                && !tag.starts_with('0')
                && tag.bytes().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_roles_are_made_from_the_privilege_groups_as_pve_makes_them() {
        let roles = builtin_roles();
        let role = |name: &str| {
            roles
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, p)| p.clone())
                .unwrap_or_default()
        };
        assert_eq!(role("PVEAuditor").len(), 7);
        assert!(role("PVEVMUser").contains("VM.PowerMgmt"));
        assert!(role("PVEVMUser").contains("VM.Audit"));
        assert!(!role("PVEAdmin").contains("Mapping.Modify"));
        assert!(!role("PVEAdmin").contains("Sys.PowerMgmt"));
        assert!(role("Administrator").contains("Permissions.Modify"));
        assert!(role("NoAccess").is_empty());
        assert!(is_builtin_role("PVEDatastoreUser"));
        assert!(!is_builtin_role("PVEUserUser"));
        assert!(is_privilege("SDN.Use") && !is_privilege("VM.Monitor"));
    }

    #[test]
    fn ids_and_paths_follow_pve_formats() {
        assert!(check_userid("ops@pve").is_ok());
        assert!(check_userid("a b@pve").is_err());
        assert!(check_userid("ops@1x").is_err());
        assert!(check_userid("x@").is_err());
        assert_eq!(split_tokenid("ops@pve!ci"), Ok(("ops@pve", "ci")));
        assert!(split_tokenid("ops@pve").is_err());
        for good in [
            "/",
            "/vms/100",
            "/pool/web/a",
            "/storage/local-lvm",
            "/sdn/zones/z/v/10",
        ] {
            assert!(is_acl_path(good), "{good}");
        }
        for bad in [
            "",
            "vms",
            "/vms/99",
            "/vms/0100",
            "/x",
            "/pool/a/b/c/d",
            "/nodes/",
        ] {
            assert!(!is_acl_path(bad), "{bad}");
        }
    }
}
