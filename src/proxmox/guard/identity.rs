//! The network identity rule: a change must not give another guest a protected guest's MAC
//! address, or one of its static IPv4/IPv6 addresses on the same bridge and VLAN tag; either
//! cuts the protected guest off its network. A protected guest's identity is read from its
//! live config and its pending config (a queued `netN` change is what it will have next).

use std::collections::BTreeSet;
use std::net::IpAddr;

use super::ProtectedGuest;
use crate::proxmox::plan::{
    Action, Blocked, DesiredGuest, DesiredValue, GuardRule, GuestKind, LiveGuest, ResourceChange,
};
use crate::proxmox::types::{Mac, qemu_net_mac};

/// One interface's identity: its MAC, and its static addresses on its bridge and VLAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    /// `net0`.
    pub key: String,
    pub mac: Option<Mac>,
    pub bridge: Option<String>,
    pub tag: Option<u16>,
    pub addresses: Vec<IpAddr>,
}

/// The interfaces of a live guest, from its config and its pending values.
pub(super) fn nics_of(guest: &LiveGuest) -> Vec<Nic> {
    let pending = guest
        .pending
        .iter()
        .filter(|p| !p.delete)
        .filter_map(|p| Some((p.key.as_str(), p.pending.as_deref()?)));
    let current = guest.config.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let values: Vec<(&str, &str)> = current.chain(pending).collect();
    let mut nics = Vec::new();
    for (key, value) in &values {
        let Some(index) = key.strip_prefix("net") else {
            continue;
        };
        let mut nic = match guest.kind {
            GuestKind::Lxc => lxc_nic(key, value),
            GuestKind::Qemu => qemu_nic(key, value),
        };
        if guest.kind == GuestKind::Qemu {
            let ipconfig = format!("ipconfig{index}");
            let configs = values.iter().filter(|(k, _)| *k == ipconfig);
            nic.addresses = configs.flat_map(|(_, v)| static_addresses(v)).collect();
        }
        nics.push(nic);
    }
    nics
}

fn fields(value: &str) -> impl Iterator<Item = (&str, &str)> {
    value.split(',').filter_map(|part| part.split_once('='))
}

fn field<'a>(value: &'a str, name: &str) -> Option<&'a str> {
    fields(value).find(|(k, _)| *k == name).map(|(_, v)| v)
}

fn lxc_nic(key: &str, value: &str) -> Nic {
    Nic {
        key: key.to_owned(),
        mac: field(value, "hwaddr").and_then(|m| m.parse().ok()),
        bridge: field(value, "bridge").map(str::to_owned),
        tag: field(value, "tag").and_then(|t| t.parse().ok()),
        addresses: static_addresses(value),
    }
}

fn qemu_nic(key: &str, value: &str) -> Nic {
    Nic {
        key: key.to_owned(),
        mac: qemu_net_mac(value).ok().flatten(),
        bridge: field(value, "bridge").map(str::to_owned),
        tag: field(value, "tag").and_then(|t| t.parse().ok()),
        addresses: Vec::new(),
    }
}

/// The static addresses of `ip=`/`ip6=` (CIDR); `dhcp`, `auto` and `manual` claim none.
fn static_addresses(value: &str) -> Vec<IpAddr> {
    fields(value)
        .filter(|(k, _)| *k == "ip" || *k == "ip6")
        .filter_map(|(_, v)| v.split_once('/')?.0.parse().ok())
        .collect()
}

/// The interfaces this change sets: every `netN` of a create or replace, the changed `netN`
/// keys of an update.
fn claimed(change: &ResourceChange, desired: &DesiredGuest) -> Vec<Nic> {
    let changed: BTreeSet<&str> = change
        .attributes
        .iter()
        .map(|a| a.pve_key.as_str())
        .collect();
    let whole = change.actions.contains(&Action::Create);
    desired
        .config
        .iter()
        .filter(|(key, _)| key.starts_with("net") && (whole || changed.contains(key.as_str())))
        .filter_map(|(key, value)| match value {
            DesiredValue::Known(text) => Some(lxc_nic(key, text)),
            DesiredValue::Unknown | DesiredValue::Sensitive(_) => None,
        })
        .collect()
}

/// An identity a claimed interface would take from a protected guest's interface.
struct Taken<'a> {
    /// `the MAC address BC:24:11:AA:BB:01`, `the static IP address 10.0.0.5 on bridge vmbr0 (untagged)`.
    what: String,
    /// What to choose instead.
    instead: &'static str,
    theirs: &'a Nic,
}

/// The identity of `theirs` that `nic` would take, if any: the MAC (case does not matter:
/// both are parsed), or a static address on the same bridge and VLAN tag.
fn taken<'a>(nic: &Nic, theirs: &'a Nic) -> Option<Taken<'a>> {
    if let Some(mac) = nic.mac.filter(|m| Some(*m) == theirs.mac) {
        return Some(Taken {
            what: format!("the MAC address {mac}"),
            instead: "another mac_address",
            theirs,
        });
    }
    let same_segment = nic.bridge.is_some() && nic.bridge == theirs.bridge && nic.tag == theirs.tag;
    let address = nic
        .addresses
        .iter()
        .find(|a| theirs.addresses.contains(a))?;
    same_segment.then(|| {
        let bridge = theirs.bridge.as_deref().unwrap_or_default();
        let vlan = theirs
            .tag
            .map_or_else(|| "untagged".to_owned(), |t| format!("VLAN {t}"));
        Taken {
            what: format!("the static IP address {address} on bridge {bridge} ({vlan})"),
            instead: "another address (or another bridge or VLAN)",
            theirs,
        }
    })
}

/// Blocks a change that gives its guest a protected guest's MAC or static address.
pub(super) fn check(
    change: &ResourceChange,
    desired: Option<&DesiredGuest>,
    protected: &[ProtectedGuest],
    describe: impl Fn(&ProtectedGuest) -> String,
) -> Option<Blocked> {
    let sets = |a: &Action| matches!(a, Action::Create | Action::Update);
    if !change.actions.iter().any(sets) {
        return None;
    }
    let claims = claimed(change, desired?);
    let others = protected
        .iter()
        .filter(|g| g.vm_id.is_some() && g.vm_id != change.vm_id);
    for guest in others {
        let found = claims.iter().find_map(|nic| {
            let taken = guest.nics.iter().find_map(|theirs| taken(nic, theirs))?;
            Some((nic, taken))
        });
        let Some((nic, taken)) = found else {
            continue;
        };
        let reason = format!(
            "atoll refuses to give {} ({}) {} of protected guest {} (its {}): two guests with              one address cut the protected guest off its network; choose {} for {}",
            change.address,
            nic.key,
            taken.what,
            describe(guest),
            taken.theirs.key,
            taken.instead,
            nic.key
        );
        return Some(Blocked {
            rule: GuardRule::NetworkIdentity,
            reason,
        });
    }
    None
}
