//! LXC `netN` values: the canonical form PVE writes (`parse_lxc_network` +
//! `print_lxc_network`) and what `PVE::LXC::update_net` does to a running link.

use std::collections::BTreeMap;

use super::error::{ApiError, ApiResult};
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
    } else if differs(&["bridge", "tag", "firewall", "link_down"]) {
        // `trunks` is not among them: a trunks-only change is written, the link stays plugged
        GuestEvent::LinkReplugged(opt.to_owned())
    } else if differs(&["rate", "ip", "gw", "ip6", "gw6"]) {
        GuestEvent::HotApplied(opt.to_owned())
    } else {
        GuestEvent::Written(opt.to_owned())
    }
}

/// `update_pct_config` on `netN`: an `mtu` must fit the bridge's (`read_bridge_mtu`, which
/// dies for a bridge that does not exist), and a host-managed NIC whose link is up cannot take
/// IPv6 by SLAAC.
pub(crate) fn check_net(opt: &str, value: &str, bridges: &BTreeMap<String, u32>) -> ApiResult<()> {
    let props = propstr::parse(value, None).map_err(ApiError::die)?;
    let flag = |key: &str| props.get(key).is_some_and(|v| v == "1");
    if !flag("link_down") && flag("host-managed") && props.get("ip6").is_some_and(|v| v == "auto") {
        return Err(ApiError::die(format!(
            "{opt}: SLAAC is not supported for host-managed network configuration."
        )));
    }
    if let Some(mtu) = props.get("mtu").and_then(|m| m.parse::<u32>().ok()) {
        let bridge = props.get("bridge").map(String::as_str).unwrap_or_default();
        let Some(bridge_mtu) = bridges.get(bridge).copied() else {
            return Err(ApiError::die(format!("bridge '{bridge}' does not exist")));
        };
        if mtu > bridge_mtu {
            return Err(ApiError::die(format!(
                "{opt}: MTU size '{mtu}' is bigger than bridge MTU '{bridge_mtu}'"
            )));
        }
    }
    Ok(())
}

/// `update_net` on a running CT: a new or re-created veth reads its bridge's MTU
/// (`veth_create` -> `read_bridge_mtu`); a re-plugged one needs a Linux or OVS bridge
/// (`tap_plug`), both in pve-common `src/PVE/Network.pm`.
pub(crate) fn check_link_bridge(
    event: &GuestEvent,
    net: &str,
    bridges: &BTreeMap<String, u32>,
) -> Result<(), String> {
    let props = propstr::parse(net, None).unwrap_or_default();
    let bridge = props.get("bridge").map(String::as_str).unwrap_or_default();
    if bridges.contains_key(bridge) {
        return Ok(());
    }
    match event {
        GuestEvent::LinkCreated(_) | GuestEvent::LinkRecreated(_) if bridge.is_empty() => {
            Err("unable to get bridge setting".to_owned())
        }
        GuestEvent::LinkCreated(_) | GuestEvent::LinkRecreated(_) => {
            Err(format!("bridge '{bridge}' does not exist"))
        }
        GuestEvent::LinkReplugged(_) => Err(format!(
            "bridge '{bridge}' is neither a linux nor an OVS bridge!"
        )),
        _ => Ok(()),
    }
}
