//! LXC `netN` values: the canonical form PVE writes (`parse_lxc_network` +
//! `print_lxc_network`) and what `PVE::LXC::update_net` does to a running link.

use super::model::GuestEvent;
use super::propstr;

/// `parse_lxc_network` + `print_lxc_network`: canonical text, `type=veth`, a MAC if missing.
pub(crate) fn canonical_net(value: &str) -> String {
    let mut props = propstr::parse(value, None).unwrap_or_default();
    props.insert("type".to_owned(), "veth".to_owned());
    props
        .entry("hwaddr".to_owned())
        .or_insert_with(propstr::random_mac);
    propstr::print(&props, None, &["name"])
}

/// What `PVE::LXC::update_net` does to the running link for a new canonical `netN` value.
pub(crate) fn net_event(opt: &str, old: Option<&str>, new: &str) -> GuestEvent {
    let Some(old) = old else {
        return GuestEvent::LinkCreated(opt.to_owned());
    };
    let a = propstr::parse(old, None).unwrap_or_default();
    let b = propstr::parse(new, None).unwrap_or_default();
    let differs = |keys: &[&str]| keys.iter().any(|k| a.get(*k) != b.get(*k));
    if differs(&["hwaddr", "name"]) {
        GuestEvent::LinkRecreated(opt.to_owned())
    } else if differs(&["bridge", "tag", "firewall", "link_down", "trunks"]) {
        GuestEvent::LinkReplugged(opt.to_owned())
    } else if differs(&["rate", "ip", "gw", "ip6", "gw6"]) {
        GuestEvent::HotApplied(opt.to_owned())
    } else {
        GuestEvent::Written(opt.to_owned())
    }
}
