//! The privileges atoll needs, on which ACL path, and why; and which of them a set of answers
//! from `GET /access/permissions` lacks. Pure. The facts come from PVE's own permission
//! checks: pve-container `src/PVE/API2/LXC.pm` (`create_vm`: VM.Allocate on /vms/{vmid},
//! Datastore.AllocateSpace on the storage, Sys.Modify on / for a privileged container,
//! Sys.Console on / for an HA-managed one; `vm_config`: VM.Audit; `destroy_vm`: VM.Allocate;
//! `clone_vm`: VM.Clone), `src/PVE/LXC.pm` (`check_ct_modify_config_perm`: VM.Config.CPU,
//! .Disk, .Memory, .Network, .Options), `src/PVE/API2/LXC/Status.pm` (VM.PowerMgmt),
//! qemu-server `src/PVE/API2/Qemu.pm` (VM.Config.HWType, .CDROM, .Cloudinit), pve-guest-common
//! `src/PVE/GuestHelpers.pm` (`check_vnet_access`: SDN.Use on
//! /sdn/zones/localnetwork/{bridge}), pve-storage (`Datastore.Audit` to list a storage's
//! content, `Datastore.AllocateTemplate` for `download-url` and uploads) and pve-manager
//! (`Sys.Audit` on /nodes/{node} for its status and network).

use std::collections::BTreeMap;

/// Where a privilege is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `/`.
    Root,
    /// `/vms` (inherited by every `/vms/{vmid}` when the grant propagates).
    Guests,
    /// `/storage/{id}` for each storage.
    Storage,
    /// `/nodes/{node}` for each node.
    Node,
    /// `/sdn/zones/localnetwork/{bridge}` for each bridge.
    Bridge,
}

/// One privilege atoll needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    pub scope: Scope,
    pub privilege: &'static str,
    /// What atoll does with it.
    pub why: &'static str,
    /// Needed for everything atoll does with guests; otherwise only for the named feature,
    /// and a missing one is a warning.
    pub required: bool,
}

const fn need(scope: Scope, privilege: &'static str, why: &'static str) -> Need {
    Need {
        scope,
        privilege,
        why,
        required: true,
    }
}

const fn only_for(scope: Scope, privilege: &'static str, why: &'static str) -> Need {
    Need {
        scope,
        privilege,
        why,
        required: false,
    }
}

/// Everything atoll asks of Proxmox VE, by path.
pub const NEEDS: &[Need] = &[
    need(
        Scope::Guests,
        "VM.Audit",
        "to read guest configuration and status",
    ),
    need(Scope::Guests, "VM.Allocate", "to create and destroy guests"),
    need(
        Scope::Guests,
        "VM.Config.CPU",
        "to set cores and CPU limits",
    ),
    need(Scope::Guests, "VM.Config.Memory", "to set memory and swap"),
    need(
        Scope::Guests,
        "VM.Config.Disk",
        "to set root disks and mount points",
    ),
    need(
        Scope::Guests,
        "VM.Config.Network",
        "to set network devices, hostname and DNS",
    ),
    need(
        Scope::Guests,
        "VM.Config.Options",
        "to set start-up, description and tags",
    ),
    need(
        Scope::Guests,
        "VM.PowerMgmt",
        "to start, stop and restart guests",
    ),
    only_for(Scope::Guests, "VM.Config.HWType", "needed for QEMU VMs"),
    only_for(
        Scope::Guests,
        "VM.Config.CDROM",
        "needed for QEMU VMs with an ISO",
    ),
    only_for(
        Scope::Guests,
        "VM.Config.Cloudinit",
        "needed for QEMU cloud-init",
    ),
    only_for(Scope::Guests, "VM.Clone", "needed to clone templates"),
    need(
        Scope::Storage,
        "Datastore.Audit",
        "to read storage status and templates",
    ),
    need(
        Scope::Storage,
        "Datastore.AllocateSpace",
        "to create container and VM disks",
    ),
    only_for(
        Scope::Storage,
        "Datastore.AllocateTemplate",
        "needed to download or upload templates, ISOs and snippets",
    ),
    need(Scope::Node, "Sys.Audit", "to read node status and networks"),
    need(Scope::Bridge, "SDN.Use", "to attach guests to this bridge"),
    only_for(
        Scope::Root,
        "Sys.Modify",
        "needed for privileged containers, unprivileged = false",
    ),
    only_for(
        Scope::Root,
        "Sys.Console",
        "needed for HA-managed containers on PVE 9",
    ),
];

/// The cluster's objects the paths are made from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    pub nodes: Vec<String>,
    pub storages: Vec<String>,
    pub bridges: Vec<String>,
}

impl Targets {
    /// Every ACL path to ask about, with its scope. With no storage (or bridge) known, the
    /// parent path stands in for them.
    pub fn paths(&self) -> Vec<(Scope, String)> {
        let each = |scope, parent: &str, names: &[String]| -> Vec<(Scope, String)> {
            if names.is_empty() {
                vec![(scope, parent.to_owned())]
            } else {
                names
                    .iter()
                    .map(|n| (scope, format!("{parent}/{n}")))
                    .collect()
            }
        };
        let mut out = vec![
            (Scope::Root, "/".to_owned()),
            (Scope::Guests, "/vms".to_owned()),
        ];
        out.extend(each(Scope::Node, "/nodes", &self.nodes));
        out.extend(each(Scope::Storage, "/storage", &self.storages));
        out.extend(each(
            Scope::Bridge,
            "/sdn/zones/localnetwork",
            &self.bridges,
        ));
        out
    }
}

/// A privilege not held where atoll needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub privilege: &'static str,
    pub path: String,
    pub why: &'static str,
    pub required: bool,
}

/// Every need not met by `held` (path → privileges held there), in table order per path.
pub fn missing(paths: &[(Scope, String)], held: &BTreeMap<String, Vec<String>>) -> Vec<Missing> {
    let mut out = Vec::new();
    for (scope, path) in paths {
        let here = held.get(path).map(Vec::as_slice).unwrap_or_default();
        for need in NEEDS.iter().filter(|n| n.scope == *scope) {
            if !here.iter().any(|p| p == need.privilege) {
                out.push(Missing {
                    privilege: need.privilege,
                    path: path.clone(),
                    why: need.why,
                    required: need.required,
                });
            }
        }
    }
    out
}

/// The smallest built-in role holding all of `privileges` (to name in the fix).
pub fn role_for(privileges: &[&str]) -> Option<String> {
    model::access::builtin_roles()
        .into_iter()
        .filter(|(name, privs)| name != "NoAccess" && privileges.iter().all(|p| privs.contains(p)))
        .min_by_key(|(_, privs)| privs.len())
        .map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets() -> Targets {
        Targets {
            nodes: vec!["pve".into()],
            storages: vec!["local".into(), "local-lvm".into()],
            bridges: vec![],
        }
    }

    fn all_of(scope: Scope) -> Vec<String> {
        NEEDS
            .iter()
            .filter(|n| n.scope == scope)
            .map(|n| n.privilege.to_owned())
            .collect()
    }

    #[test]
    fn a_privilege_missing_on_one_storage_is_named_with_that_path_only() {
        let paths = targets().paths();
        let mut held: BTreeMap<String, Vec<String>> = paths
            .iter()
            .map(|(scope, path)| (path.clone(), all_of(*scope)))
            .collect();
        held.get_mut("/storage/local-lvm")
            .expect("listed")
            .retain(|p| p != "Datastore.AllocateSpace");
        let gaps = missing(&paths, &held);
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert_eq!(gaps[0].privilege, "Datastore.AllocateSpace");
        assert_eq!(gaps[0].path, "/storage/local-lvm");
        assert!(gaps[0].required);
    }

    #[test]
    fn unknown_bridges_are_checked_on_the_zone_and_nothing_held_misses_everything() {
        let paths = targets().paths();
        assert!(paths.contains(&(Scope::Bridge, "/sdn/zones/localnetwork".to_owned())));
        let gaps = missing(&paths, &BTreeMap::new());
        let required = NEEDS.iter().filter(|n| n.required).count();
        // two storages: the storage needs count twice
        let storage = NEEDS
            .iter()
            .filter(|n| n.required && n.scope == Scope::Storage)
            .count();
        assert_eq!(
            gaps.iter().filter(|g| g.required).count(),
            required + storage
        );
    }

    #[test]
    fn the_fix_names_the_smallest_built_in_role_holding_the_privilege() {
        assert_eq!(
            role_for(&["Datastore.AllocateSpace"]).as_deref(),
            Some("PVEDatastoreUser")
        );
        assert_eq!(role_for(&["SDN.Use"]).as_deref(), Some("PVESDNUser"));
        assert_eq!(
            role_for(&["VM.Allocate", "VM.PowerMgmt"]).as_deref(),
            Some("PVEVMAdmin")
        );
        assert!(role_for(&["No.Such"]).is_none());
    }
}
