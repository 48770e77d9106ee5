//! `proxmox::guard` owns the self-host rule: atoll manages everything except itself. It holds
//! the protected set (guests configured under `protect.guests`, plus atoll's own guest found
//! by MAC, each with its network identity: MACs and static addresses) and the refusal rules,
//! applied to a plan at plan time and again before apply. It is pure: callers pass the
//! inventory, the desired guests and local MACs in; it must not do I/O.

mod access;
mod firewall;
mod ha;
mod identity;
mod network;
mod rules;
mod sdn;

pub use access::OwnAccess;
pub use identity::Nic;
pub use rules::{GuardRefusal, check, recheck};

use crate::proxmox::plan::LiveGuest;

/// One entry of `protect.guests` in the server config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtectSpec {
    VmId(u32),
    Name { name: String, node: Option<String> },
}

/// Why a guest is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtectedBy {
    /// Listed in `protect.guests`.
    Configured,
    /// atoll runs in it: one of the machine's MACs matched the guest's `netN` MAC.
    Discovered { mac: String },
}

/// atoll's own guest, as found by `proxmox::discover` or pinned in config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfGuest {
    pub vm_id: u32,
    pub node: String,
    pub mac: String,
}

/// One protected guest. Name entries that match no guest on the cluster keep `vm_id: None`
/// and match by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedGuest {
    pub vm_id: Option<u32>,
    pub name: Option<String>,
    pub node: Option<String>,
    pub by: ProtectedBy,
    /// Its interfaces as the refresh read them (config and pending), for the identity rule;
    /// empty when its config was not read.
    pub nics: Vec<Nic>,
}

/// The guard's settings (`protect.allow_live_changes`, default false).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GuardPolicy {
    pub allow_live_changes: bool,
}

/// The guests atoll must not disrupt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedSet {
    guests: Vec<ProtectedGuest>,
    /// Who atoll is on the cluster and what grants it access, when known.
    access: Option<OwnAccess>,
}

impl ProtectedSet {
    /// Resolves the configured entries against the cluster's guests (a name entry protects
    /// every guest with that name, on its node if given) and adds atoll's own guest. Each
    /// guest found on the cluster carries the interfaces of its config there.
    pub fn resolve<'a>(
        specs: &[ProtectSpec],
        own: Option<&SelfGuest>,
        cluster: impl IntoIterator<Item = &'a LiveGuest>,
    ) -> Self {
        let cluster: Vec<&LiveGuest> = cluster.into_iter().collect();
        let nics = |vm_id: u32| {
            let live = cluster.iter().find(|g| g.vm_id == vm_id);
            live.map(|g| identity::nics_of(g)).unwrap_or_default()
        };
        let mut guests = Vec::new();
        for spec in specs {
            match spec {
                ProtectSpec::VmId(vm_id) => {
                    let live = cluster.iter().find(|g| g.vm_id == *vm_id);
                    guests.push(ProtectedGuest {
                        vm_id: Some(*vm_id),
                        name: live.and_then(|g| g.name.clone()),
                        node: live.map(|g| g.node.clone()),
                        by: ProtectedBy::Configured,
                        nics: nics(*vm_id),
                    });
                }
                ProtectSpec::Name { name, node } => {
                    let on_node = |g: &&&LiveGuest| node.as_ref().is_none_or(|n| *n == g.node);
                    let named = cluster.iter().filter(|g| g.name.as_ref() == Some(name));
                    guests.extend(named.filter(on_node).map(|g| ProtectedGuest {
                        vm_id: Some(g.vm_id),
                        name: Some(name.clone()),
                        node: Some(g.node.clone()),
                        by: ProtectedBy::Configured,
                        nics: identity::nics_of(g),
                    }));
                    guests.push(ProtectedGuest {
                        vm_id: None,
                        name: Some(name.clone()),
                        node: node.clone(),
                        by: ProtectedBy::Configured,
                        nics: Vec::new(),
                    });
                }
            }
        }
        if let Some(own) = own {
            guests.push(ProtectedGuest {
                vm_id: Some(own.vm_id),
                name: None,
                node: Some(own.node.clone()),
                by: ProtectedBy::Discovered {
                    mac: own.mac.clone(),
                },
                nics: nics(own.vm_id),
            });
        }
        Self {
            guests,
            access: None,
        }
    }

    /// With what grants atoll its own access (the self-lockout rule).
    pub fn with_access(mut self, access: OwnAccess) -> Self {
        self.access = Some(access);
        self
    }

    /// Who atoll is on the cluster, when known.
    pub fn own_access(&self) -> Option<&OwnAccess> {
        self.access.as_ref()
    }

    /// The VMIDs of the protected guests found so far.
    pub fn vm_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.guests.iter().filter_map(|g| g.vm_id)
    }

    pub fn is_empty(&self) -> bool {
        self.guests.is_empty()
    }

    pub fn guests(&self) -> &[ProtectedGuest] {
        &self.guests
    }

    /// The entry protecting the guest with this VMID or name on this node, if any; a
    /// discovered entry wins over a configured one (its reason is the more useful).
    pub fn find(
        &self,
        vm_id: Option<u32>,
        name: Option<&str>,
        node: &str,
    ) -> Option<&ProtectedGuest> {
        let matches = |g: &&ProtectedGuest| match (g.vm_id, vm_id) {
            (Some(protected), Some(id)) => protected == id,
            (None, _) => {
                g.name.as_deref().is_some_and(|n| Some(n) == name)
                    && g.node.as_deref().is_none_or(|n| n == node)
            }
            (Some(_), None) => false,
        };
        let discovered = |g: &&ProtectedGuest| matches!(g.by, ProtectedBy::Discovered { .. });
        let mut found = self.guests.iter().filter(matches);
        let first = found.clone().next();
        found.find(discovered).or(first)
    }
}
