//! Finding atoll's own guest: the machine's MAC addresses matched against every guest's
//! `netN` MAC (`hwaddr=` for LXC, `virtio=`/`e1000=`... for QEMU), exactly one match or none
//! (reference/proxmox.md section 6). The caller reads the MACs and the configs.

use super::SelfGuest;
use crate::proxmox::plan::{GuestKind, LiveGuest, qemu_mac};

/// Discovery could not decide which guest atoll runs in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    #[error(
        "local MAC addresses match more than one guest ({}); atoll cannot tell which guest it \
         runs in: set protect.local_macs or list the guest under protect.guests",
        .matches.join(", ")
    )]
    Ambiguous { matches: Vec<String> },
}

fn guest_macs(guest: &LiveGuest) -> Vec<String> {
    let nets = guest.config.iter().filter(|(key, _)| {
        key.strip_prefix("net")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    nets.filter_map(|(_, value)| match guest.kind {
        GuestKind::Qemu => qemu_mac(value),
        GuestKind::Lxc => value
            .split(',')
            .find_map(|item| item.trim().strip_prefix("hwaddr="))
            .map(str::to_ascii_uppercase),
    })
    .collect()
}

/// The one guest whose network MAC is one of `local_macs`, `None` if no guest matches.
/// All-zero MACs (loopback) are ignored. More than one matching guest is an error: fail closed.
pub fn discover_self<'a>(
    local_macs: &[String],
    guests: impl IntoIterator<Item = &'a LiveGuest>,
) -> Result<Option<SelfGuest>, DiscoveryError> {
    let local: Vec<String> = local_macs
        .iter()
        .map(|mac| mac.trim().to_ascii_uppercase())
        .filter(|mac| !mac.is_empty() && mac != "00:00:00:00:00:00")
        .collect();
    let mut found: Vec<SelfGuest> = Vec::new();
    for guest in guests {
        if let Some(mac) = guest_macs(guest)
            .into_iter()
            .find(|mac| local.contains(mac))
        {
            found.push(SelfGuest {
                vm_id: guest.vm_id,
                node: guest.node.clone(),
                mac,
            });
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(DiscoveryError::Ambiguous {
            matches: found
                .iter()
                .map(|g| format!("{} on {}", g.vm_id, g.node))
                .collect(),
        }),
    }
}
