//! A node's network interfaces as PVE keeps them: the running `/etc/network/interfaces` and,
//! once the API changed something, the pending `/etc/network/interfaces.new` that every read
//! shows until `PUT /nodes/{node}/network` (ifreload) makes it the running one or
//! `DELETE /nodes/{node}/network` throws it away. Each write is checked as pve-common's
//! `__write_etc_network_interfaces` checks the whole file (ports used twice, missing bridge
//! ports, bond slaves and VLAN parents, MTUs); reads carry what
//! `__read_etc_network_interfaces` derives (`cidr`, `type`, a dotted VLAN's raw device and id).
//! Guests resolve their bridges (and the bridges' MTU) from the running set only.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult};

/// One interface as stored, by PVE's parameter names (`address`/`netmask`, never `cidr`).
pub(crate) type Iface = BTreeMap<String, String>;

/// A whole interfaces file.
pub(crate) type Ifaces = BTreeMap<String, Iface>;

/// A node's interfaces: what runs, and what is written but not applied yet.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeNetwork {
    running: Ifaces,
    pending: Option<Ifaces>,
    /// SDN vnets applied on this node (`/etc/network/interfaces.d/sdn`, outside the file
    /// this API edits), with their MTU.
    vnets: BTreeMap<String, u32>,
}

/// pve-common's `$PHYSICAL_NIC_RE`: `eth\d+`, `en...`, `ib...`, `nic\d+`, `if\d+`.
fn is_physical(name: &str) -> bool {
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let named = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && !n.contains([':', '.']))
    };
    numbered("eth") || numbered("nic") || numbered("if") || named("en") || named("ib")
}

/// `name.N`: a VLAN on `name` with id `N`.
pub(crate) fn dotted(name: &str) -> Option<(&str, u32)> {
    let (dev, id) = name.rsplit_once('.')?;
    let ok = !dev.is_empty() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| (dev, id.parse().unwrap_or(u32::MAX)))
}

/// `vlanN`: a VLAN with id `N` on its `vlan-raw-device`.
fn vlan_numbered(name: &str) -> Option<u32> {
    let id = name.strip_prefix("vlan")?;
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| id.parse().unwrap_or(0))
}

fn bond_named(name: &str) -> bool {
    name.strip_prefix("bond")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The type `__read_etc_network_interfaces` gives an interface from what the file says.
fn read_type(name: &str, d: &Iface) -> &'static str {
    // what PVE wrote for the type it was given reads back as that type
    match d.get("type").map(String::as_str) {
        Some("bridge") => return "bridge",
        Some("bond") if bond_named(name) => return "bond",
        Some("vlan") => return "vlan",
        _ => {}
    }
    if d.contains_key("bridge_ports") {
        "bridge"
    } else if bond_named(name) {
        "bond"
    } else if dotted(name).is_some() || d.contains_key("vlan-raw-device") {
        "vlan"
    } else if is_physical(name) {
        "eth"
    } else {
        "unknown"
    }
}

fn words(text: Option<&String>) -> Vec<String> {
    text.map(|t| crate::propstr::split_list(t))
        .unwrap_or_default()
}

impl NodeNetwork {
    /// A fresh node: three physical NICs, `vmbr0` on `eno1` with the node's address, and the
    /// scenario's other bridges (no ports) with their MTUs.
    pub(crate) fn seeded(bridges: &BTreeMap<String, u32>, index: u64) -> Self {
        let mut running = Ifaces::new();
        for (i, nic) in ["eno1", "eno2", "eno3"].into_iter().enumerate() {
            let iface = Iface::from([
                ("type".to_owned(), "eth".to_owned()),
                ("priority".to_owned(), (i + 2).to_string()),
            ]);
            running.insert(nic.to_owned(), iface);
        }
        for (i, (name, mtu)) in bridges.iter().enumerate() {
            let mut iface = Iface::from([
                ("type".to_owned(), "bridge".to_owned()),
                ("autostart".to_owned(), "1".to_owned()),
                ("bridge_ports".to_owned(), String::new()),
                ("priority".to_owned(), (i + 5).to_string()),
            ]);
            if *mtu != 1500 {
                iface.insert("mtu".to_owned(), mtu.to_string());
            }
            if name == "vmbr0" {
                iface.insert("bridge_ports".to_owned(), "eno1".to_owned());
                iface.insert("address".to_owned(), format!("10.10.10.{}", 11 + index));
                iface.insert("netmask".to_owned(), "24".to_owned());
                iface.insert("gateway".to_owned(), "10.10.10.1".to_owned());
            }
            running.insert(name.clone(), iface);
        }
        Self {
            running,
            pending: None,
            vnets: BTreeMap::new(),
        }
    }

    /// What the API reads and changes: the pending file when there is one.
    pub(crate) fn config(&self) -> &Ifaces {
        self.pending.as_ref().unwrap_or(&self.running)
    }

    /// The bridges guests can use now, with their MTU: the running interfaces' and the
    /// applied SDN vnets'.
    pub(crate) fn bridges(&self) -> BTreeMap<String, u32> {
        let mut bridges: BTreeMap<String, u32> = self
            .running
            .iter()
            .filter(|(name, d)| read_type(name, d) == "bridge")
            .map(|(name, d)| {
                let mtu = d.get("mtu").and_then(|m| m.parse().ok()).unwrap_or(1500);
                (name.clone(), mtu)
            })
            .collect();
        bridges.extend(self.vnets.iter().map(|(k, v)| (k.clone(), *v)));
        bridges
    }

    /// An SDN apply made vnet `name` a bridge on this node.
    pub(crate) fn add_vnet(&mut self, name: String, mtu: u32) {
        self.vnets.insert(name, mtu);
    }

    /// An SDN apply took vnet `name` away from this node.
    pub(crate) fn remove_vnet(&mut self, name: &str) {
        self.vnets.remove(name);
    }

    /// Writes `ifaces` as the pending file, after PVE's checks of the whole file.
    pub(crate) fn write(&mut self, mut ifaces: Ifaces) -> ApiResult<()> {
        check_file(&mut ifaces).map_err(ApiError::die)?;
        for (name, d) in &mut ifaces {
            let ty = read_type(name, d);
            d.insert("type".to_owned(), ty.to_owned());
        }
        self.pending = Some(ifaces);
        Ok(())
    }

    /// `ifreload`: the pending file becomes the running one. Returns the bridges whose
    /// traffic the reload cut.
    pub(crate) fn reload(&mut self) -> BTreeSet<String> {
        let Some(pending) = self.pending.take() else {
            return BTreeSet::new();
        };
        let old = std::mem::replace(&mut self.running, pending);
        cut_bridges(&old, &self.running)
    }

    /// `DELETE /nodes/{node}/network`: the pending file is removed.
    pub(crate) fn revert(&mut self) {
        self.pending = None;
    }

    /// The `changes` PVE attaches to the listing: a diff of the running and the pending
    /// file, `None` without pending changes.
    pub(crate) fn changes(&self) -> Option<String> {
        let pending = self.pending.as_ref()?;
        let render = |ifaces: &Ifaces| -> Vec<String> {
            ifaces
                .iter()
                .map(|(name, d)| format!("iface {name} {}", Value::Object(view(name, d))))
                .collect()
        };
        let (old, new) = (render(&self.running), render(pending));
        let mut out =
            String::from("--- /etc/network/interfaces\n+++ /etc/network/interfaces.new\n");
        for line in old.iter().filter(|l| !new.contains(l)) {
            out.push_str(&format!("-{line}\n"));
        }
        for line in new.iter().filter(|l| !old.contains(l)) {
            out.push_str(&format!("+{line}\n"));
        }
        (old != new).then_some(out)
    }

    /// `GET /nodes/{node}/network[?type=]`: every interface but `lo`, as PVE reads it.
    pub(crate) fn listing(&self, filter: Option<&str>) -> Value {
        let config = self.config();
        let listed = config.iter().filter(|(name, d)| {
            let ty = read_type(name, d);
            match filter {
                None => true,
                Some("any_bridge" | "any_local_bridge") => ty == "bridge",
                Some(f) => f == ty,
            }
        });
        Value::Array(
            listed
                .map(|(name, d)| {
                    let mut v = view(name, d);
                    v.insert("iface".to_owned(), json!(name));
                    Value::Object(v)
                })
                .collect(),
        )
    }

    /// `GET /nodes/{node}/network/{iface}`.
    pub(crate) fn read(&self, name: &str) -> ApiResult<Value> {
        let config = self.config();
        let d = config.get(name).ok_or_else(no_such_iface)?;
        Ok(Value::Object(view(name, d)))
    }
}

/// Whether ifupdown2 reconfiguring `old` as `new` cuts the interface's traffic: it is gone,
/// or anything but its comment, its order or a higher MTU changed.
fn cuts(old: &Iface, new: Option<&Iface>) -> bool {
    let Some(new) = new else {
        return true;
    };
    let mtu = |d: &Iface| {
        d.get("mtu")
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(1500)
    };
    if mtu(new) < mtu(old) {
        return true;
    }
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter(|k| !matches!(k.as_str(), "comments" | "priority" | "mtu" | "type"))
        .any(|k| old.get(k) != new.get(k))
}

/// The bridges a reload from `old` to `new` cut: changed bridges, and the bridges whose port
/// (or whose VLAN) changed.
fn cut_bridges(old: &Ifaces, new: &Ifaces) -> BTreeSet<String> {
    let changed: BTreeSet<&String> = old
        .iter()
        .filter(|(name, d)| cuts(d, new.get(*name)))
        .map(|(name, _)| name)
        .chain(new.keys().filter(|n| !old.contains_key(*n)))
        .collect();
    let mut out = BTreeSet::new();
    for file in [old, new] {
        for (bridge, d) in file.iter().filter(|(n, d)| read_type(n, d) == "bridge") {
            let port_changed = words(d.get("bridge_ports"))
                .iter()
                .any(|p| changed.contains(p));
            if (changed.contains(bridge) && old.contains_key(bridge)) || port_changed {
                out.insert(bridge.clone());
            }
        }
        for name in &changed {
            let parent = file
                .get(*name)
                .and_then(|d| d.get("vlan-raw-device").cloned())
                .or_else(|| dotted(name).map(|(dev, _)| dev.to_owned()));
            if let Some(parent) =
                parent.filter(|p| file.get(p).is_some_and(|d| read_type(p, d) == "bridge"))
            {
                out.insert(parent);
            }
        }
    }
    out
}

pub(crate) fn no_such_iface() -> ApiError {
    ApiError::param("iface", "interface does not exist")
}

/// One interface as `__read_etc_network_interfaces` returns it.
fn view(name: &str, d: &Iface) -> Map<String, Value> {
    let ty = read_type(name, d);
    let mut v = Map::new();
    v.insert("type".to_owned(), json!(ty));
    for (k, value) in d {
        match k.as_str() {
            "type" => {}
            "autostart" | "bridge_vlan_aware" if value == "1" => {
                v.insert(k.clone(), json!(1));
            }
            "autostart" | "bridge_vlan_aware" => {}
            "priority" => {
                v.insert(k.clone(), json!(value.parse::<u64>().unwrap_or(50)));
            }
            "comments" => {
                let lines: String = value.lines().map(|l| format!("{l}\n")).collect();
                v.insert(k.clone(), json!(lines));
            }
            _ => {
                v.insert(k.clone(), json!(value));
            }
        }
    }
    if let Some(address) = d.get("address") {
        let mask = d.get("netmask").map_or("32", String::as_str);
        v.insert("cidr".to_owned(), json!(format!("{address}/{mask}")));
    }
    if let Some(address) = d.get("address6") {
        let mask = d.get("netmask6").map_or("128", String::as_str);
        v.insert("cidr6".to_owned(), json!(format!("{address}/{mask}")));
    }
    let method = |set: bool| if set { "static" } else { "manual" };
    v.insert(
        "method".to_owned(),
        json!(method(d.contains_key("address"))),
    );
    v.insert(
        "method6".to_owned(),
        json!(method(d.contains_key("address6"))),
    );
    let mut families = vec![];
    if d.contains_key("address") || !d.contains_key("address6") {
        families.push("inet");
    }
    if d.contains_key("address6") {
        families.push("inet6");
    }
    v.insert("families".to_owned(), json!(families));
    match ty {
        "bridge" => {
            v.entry("bridge_ports").or_insert(json!(""));
            v.insert("bridge_stp".to_owned(), json!("off"));
            v.insert("bridge_fd".to_owned(), json!("0"));
            if d.get("bridge_vlan_aware").is_some_and(|f| f == "1")
                && !d.contains_key("bridge_vids")
            {
                v.insert("bridge_vids".to_owned(), json!("2-4094"));
            }
        }
        "bond" => {
            v.entry("bond_mode").or_insert(json!("balance-rr"));
            v.entry("bond_miimon").or_insert(json!("100"));
        }
        "vlan" => {
            if let Some((dev, id)) = dotted(name) {
                v.insert("vlan-raw-device".to_owned(), json!(dev));
                v.insert("vlan-id".to_owned(), json!(id.to_string()));
            } else if let Some(id) = vlan_numbered(name).filter(|id| *id > 0) {
                v.insert("vlan-id".to_owned(), json!(id.to_string()));
            }
        }
        "eth" => {
            v.insert("exists".to_owned(), json!(1));
        }
        _ => {}
    }
    v
}

/// `$check_mtu`: a child's MTU may not exceed its parent's (1500 when unset; a bond without
/// one takes the child's).
fn check_mtu(ifaces: &Ifaces, parent: &str, child: &str) -> Result<(), String> {
    let mtu = |name: &str| {
        ifaces
            .get(name)
            .and_then(|d| d.get("mtu"))
            .and_then(|m| m.parse::<u32>().ok())
    };
    let Some(cmtu) = mtu(child) else {
        return Ok(());
    };
    let parent_is_bond = ifaces
        .get(parent)
        .is_some_and(|d| read_type(parent, d) == "bond");
    let pmtu = mtu(parent).unwrap_or(if parent_is_bond { cmtu } else { 1500 });
    if pmtu < cmtu {
        return Err(format!(
            "interface '{parent}' - mtu {pmtu} is lower than '{child}' - mtu {cmtu}\n"
        ));
    }
    Ok(())
}

/// `__write_etc_network_interfaces`'s checks, in its order; a dotted VLAN's stored raw
/// device and id are dropped (the name says them).
fn check_file(ifaces: &mut Ifaces) -> Result<(), String> {
    let mut used: BTreeMap<String, String> = BTreeMap::new();
    for (name, d) in ifaces.iter() {
        let ports = ["bridge_ports", "slaves"]
            .iter()
            .flat_map(|k| words(d.get(*k)))
            .collect::<Vec<_>>();
        for p in ports {
            if let Some(other) = used.get(&p).filter(|o| *o != name) {
                return Err(format!(
                    "port '{p}' is already used on interface '{other}'\n"
                ));
            }
            used.insert(p, name.clone());
        }
    }
    check_bonds(ifaces)?;
    check_vlans(ifaces)?;
    check_bridges(ifaces)
}

fn check_bonds(ifaces: &mut Ifaces) -> Result<(), String> {
    let bonds: Vec<String> = ifaces
        .iter()
        .filter(|(n, d)| d.get("type").map(String::as_str) == Some("bond") || bond_named(n))
        .filter(|(_, d)| d.contains_key("slaves"))
        .map(|(n, _)| n.clone())
        .collect();
    for bond in bonds {
        let d = ifaces[&bond].clone();
        let mut primary_is_slave = false;
        for p in words(d.get("slaves")) {
            let Some(n) = ifaces.get_mut(&p) else {
                return Err(format!("bond '{bond}' - unable to find slave '{p}'\n"));
            };
            n.insert("autostart".to_owned(), "1".to_owned());
            let ty = read_type(&p, n);
            if ty != "eth" && ty != "bond" {
                return Err(format!(
                    "bond '{bond}' - wrong interface type on slave '{p}' ('{ty}' != 'eth or bond')\n"
                ));
            }
            check_mtu(ifaces, &bond, &p)?;
            primary_is_slave |= d.get("bond-primary") == Some(&p);
        }
        if d.contains_key("bond-primary") && !primary_is_slave {
            return Err(format!(
                "bond '{bond}' - bond-primary interface is not a slave"
            ));
        }
    }
    Ok(())
}

fn check_vlans(ifaces: &mut Ifaces) -> Result<(), String> {
    let vlans: Vec<String> = ifaces
        .iter()
        .filter(|(n, d)| read_type(n, d) == "vlan")
        .map(|(n, _)| n.clone())
        .collect();
    for vlan in vlans {
        let (parent, id) = if let Some((dev, id)) = dotted(&vlan) {
            if let Some(d) = ifaces.get_mut(&vlan) {
                d.remove("vlan-raw-device");
                d.remove("vlan-id");
            }
            (dev.to_owned(), id)
        } else {
            let d = &ifaces[&vlan];
            let parent = d
                .get("vlan-raw-device")
                .cloned()
                .ok_or("missing vlan-raw-device option")?;
            let id = match vlan_numbered(&vlan) {
                Some(id) => id,
                None => d
                    .get("vlan-id")
                    .and_then(|v| v.parse().ok())
                    .ok_or("missing vlan-id option")?,
            };
            (parent, id)
        };
        if id > 4094 {
            return Err(format!("vlan '{vlan}' - vlan-id {id} should be <= 4094\n"));
        }
        let Some(n) = ifaces.get(&parent) else {
            return Err(format!(
                "vlan '{vlan}' - unable to find parent '{parent}'\n"
            ));
        };
        let ty = read_type(&parent, n);
        if !["eth", "bridge", "bond", "vlan"].contains(&ty) {
            return Err(format!(
                "vlan '{vlan}' - wrong interface type on parent '{parent}' ('{ty}' != 'eth|bond|bridge|vlan' )\n"
            ));
        }
        check_mtu(ifaces, &parent, &vlan)?;
    }
    Ok(())
}

fn check_bridges(ifaces: &Ifaces) -> Result<(), String> {
    for (bridge, d) in ifaces.iter().filter(|(n, d)| read_type(n, d) == "bridge") {
        let mut copy = ifaces.clone();
        for p in words(d.get("bridge_ports")) {
            if let Some((parent, _)) = dotted(&p)
                && !copy.contains_key(&p)
            {
                // a dotted port is a VLAN of its own, made by ifupdown2
                let mut implicit = Iface::from([("type".to_owned(), "vlan".to_owned())]);
                if let Some(mtu) = copy.get(parent).and_then(|x| x.get("mtu")) {
                    implicit.insert("mtu".to_owned(), mtu.clone());
                }
                copy.insert(p.clone(), implicit);
            }
            let Some(n) = copy.get(&p) else {
                return Err(format!(
                    "bridge '{bridge}' - unable to find bridge port '{p}'\n"
                ));
            };
            let static_v4 = n.get("address").is_some_and(|a| a != "0.0.0.0");
            let static_v6 = n.get("address6").is_some_and(|a| a != "::");
            if static_v4 || static_v6 {
                return Err(format!(
                    "iface {p} - ip address can't be set on interface if bridged in {bridge}\n"
                ));
            }
            check_mtu(&copy, &p, bridge)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> NodeNetwork {
        NodeNetwork::seeded(&BTreeMap::from([("vmbr0".to_owned(), 1500)]), 0)
    }

    fn bridge(ports: &str) -> Iface {
        Iface::from([
            ("type".to_owned(), "bridge".to_owned()),
            ("bridge_ports".to_owned(), ports.to_owned()),
        ])
    }

    #[test]
    fn a_write_is_pending_until_reloaded_and_guests_see_only_the_running_bridges() {
        let mut net = node();
        let mut file = net.config().clone();
        file.insert("vmbr1".to_owned(), bridge("eno2"));
        net.write(file).expect("valid");
        assert!(net.config().contains_key("vmbr1"));
        assert!(!net.bridges().contains_key("vmbr1"));
        assert!(net.changes().is_some_and(|c| c.contains("+iface vmbr1")));
        net.reload();
        assert!(net.bridges().contains_key("vmbr1"));
        assert!(net.changes().is_none());
    }

    #[test]
    fn pves_file_checks_refuse_missing_ports_reused_ports_and_orphan_vlans() {
        let net = node();
        let mut file = net.config().clone();
        file.insert("vmbr1".to_owned(), bridge("eno9"));
        let e = node().write(file).expect_err("missing port");
        assert_eq!(
            e.message,
            "bridge 'vmbr1' - unable to find bridge port 'eno9'\n"
        );
        let mut file = net.config().clone();
        file.insert("vmbr1".to_owned(), bridge("eno1"));
        let e = node().write(file).expect_err("port used twice");
        assert!(
            e.message
                .contains("port 'eno1' is already used on interface"),
            "{}",
            e.message
        );
        let mut file = net.config().clone();
        file.insert("eno7.20".to_owned(), Iface::new());
        let e = node().write(file).expect_err("no parent");
        assert_eq!(e.message, "vlan 'eno7.20' - unable to find parent 'eno7'\n");
        let mut file = net.config().clone();
        file.insert(
            "vlan_lab".to_owned(),
            Iface::from([("vlan-raw-device".to_owned(), "eno2".to_owned())]),
        );
        let e = node().write(file).expect_err("no id");
        assert_eq!(e.message, "missing vlan-id option");
        let mut file = net.config().clone();
        let mut jumbo = bridge("eno2");
        jumbo.insert("mtu".to_owned(), "9000".to_owned());
        file.insert("vmbr1".to_owned(), jumbo);
        let e = node().write(file).expect_err("mtu");
        assert_eq!(
            e.message,
            "interface 'eno2' - mtu 1500 is lower than 'vmbr1' - mtu 9000\n"
        );
        // a dotted port is made by ifupdown2: no interface of its own needed
        let mut file = net.config().clone();
        file.insert("vmbr1".to_owned(), bridge("eno2.30"));
        node().write(file).expect("implicit vlan port");
    }

    #[test]
    fn reads_derive_cidr_type_and_a_dotted_vlans_device_and_id() {
        let mut net = node();
        let mut file = net.config().clone();
        file.insert(
            "eno3.20".to_owned(),
            Iface::from([("comments".to_owned(), "lab".to_owned())]),
        );
        net.write(file).expect("valid");
        let vlan = net.read("eno3.20").expect("exists");
        assert_eq!(vlan["type"], "vlan");
        assert_eq!(vlan["vlan-raw-device"], "eno3");
        assert_eq!(vlan["vlan-id"], "20");
        assert_eq!(vlan["comments"], "lab\n");
        let br = net.read("vmbr0").expect("exists");
        assert_eq!(br["cidr"], "10.10.10.11/24");
        assert_eq!(br["autostart"], 1);
        assert_eq!(
            net.read("nope")
                .expect_err("absent")
                .errors
                .unwrap_or_default()["iface"],
            "interface does not exist"
        );
    }
}
