//! Creating, changing and deleting SDN zones, vnets and subnets with pve-network's checks in
//! its order: the API schema first (400), then the section's options for the zone type
//! (`check_config`), then, under the SDN lock, the hooks of `Zones/*Plugin.pm`,
//! `VnetPlugin.pm` and `SubnetPlugin.pm`; what fails under the lock is wrapped the way
//! `lock_sdn_config` wraps it (`create sdn vnet object failed: ...`). Nothing is written when
//! a check fails.

use std::net::IpAddr;

use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, Checked, Field, Ty};
use crate::model::Cluster;
use crate::routes::Params;
use crate::sdn::{Kind, Section, Sections};

/// `raise_param_exc` as `lock_sdn_config` passes it on: its text, status and all.
fn param_exc(key: &str, message: &str) -> String {
    format!("400 Parameter verification failed.\n{key}: {message}")
}

fn failed(what: &str, inner: &str) -> ApiError {
    ApiError::die(format!("{what} failed: {inner}"))
}

/// `ip` format.
fn ip(v: &str) -> Result<(), String> {
    v.parse::<IpAddr>()
        .map(|_| ())
        .map_err(|_| format!("value does not look like a valid IP address: {v}"))
}

/// `pve-sdn-subnet-id`: a CIDR, or `{zone}-{network}-{mask}`.
fn subnet_id(v: &str) -> Result<(), String> {
    let cidr = if v.contains('/') {
        v.to_owned()
    } else {
        let parts: Vec<&str> = v.splitn(3, '-').collect();
        format!(
            "{}/{}",
            parts.get(1).unwrap_or(&""),
            parts.get(2).unwrap_or(&"")
        )
    };
    parse_cidr(&cidr)
        .map(|_| ())
        .ok_or_else(|| "value does not look like a valid CIDR network".to_owned())
}

/// `pve-sdn-dhcp-range`: `start-address=<ip>,end-address=<ip>`.
fn dhcp_range(v: &str) -> Result<(), String> {
    for part in v.split(',') {
        match part.split_once('=') {
            Some(("start-address" | "end-address", addr)) => ip(addr)?,
            _ => return Err(format!("invalid format - unknown property '{part}'")),
        }
    }
    Ok(())
}

fn parse_cidr(cidr: &str) -> Option<(IpAddr, u8)> {
    let (addr, mask) = cidr.split_once('/')?;
    let addr: IpAddr = addr.parse().ok()?;
    let mask: u8 = mask.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (mask <= max).then_some((addr, mask))
}

/// Whether `addr` lies in `cidr` (`subnet_matcher`).
fn contains(cidr: &str, addr: &str) -> bool {
    let (Some((net, mask)), Ok(addr)) = (parse_cidr(cidr), addr.parse::<IpAddr>()) else {
        return false;
    };
    let bits = |a: IpAddr| -> u128 {
        match a {
            IpAddr::V4(v) => u128::from(u32::from(v)) << 96,
            IpAddr::V6(v) => u128::from(v),
        }
    };
    if net.is_ipv4() != addr.is_ipv4() {
        return false;
    }
    let mask = if net.is_ipv4() { mask } else { mask.min(128) };
    let keep = if mask == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(mask))
    };
    bits(net) & keep == bits(addr) & keep
}

const ZONE_PROPS: &[Field] = &[
    Field::int("mtu", None, None),
    Field::str("dns"),
    Field::str("reversedns"),
    Field::str("dnszone"),
    Field::str("ipam"),
    Field::one_of("dhcp", &["dnsmasq"]),
    Field::str("rt-import"),
    Field::int("vrf-vxlan", Some(1), Some(16_777_215)),
    Field::str("mac"),
    Field::str("controller"),
    Field::str("nodes"),
    Field::str("exitnodes"),
    Field::boolean("exitnodes-local-routing"),
    Field::str("exitnodes-primary"),
    Field::boolean("advertise-subnets"),
    Field::boolean("disable-arp-nd-suppression"),
    Field::int("tag", Some(0), None),
    Field::one_of("vlan-protocol", &["802.1q", "802.1ad"]),
    Field::str("peers"),
    Field::int("vxlan-port", Some(1), Some(65_536)),
    Field::str("bridge"),
    Field::boolean("bridge-disable-mac-learning"),
    Field::str("fabric"),
    Field::str("lock-token"),
];
const ZONE_TYPES: &[&str] = &["evpn", "faucet", "qinq", "simple", "vlan", "vxlan"];

/// Each zone type's options (`*Plugin.pm` `options`), required ones marked.
fn zone_options(zone_type: &str) -> Vec<(&'static str, bool)> {
    let own: &[(&str, bool)] = match zone_type {
        "simple" => &[("dhcp", false)],
        "vlan" => &[("bridge", true), ("bridge-disable-mac-learning", false)],
        "qinq" => &[
            ("tag", true),
            ("bridge", true),
            ("bridge-disable-mac-learning", false),
            ("vlan-protocol", false),
        ],
        "vxlan" => &[("peers", false), ("vxlan-port", false), ("fabric", false)],
        "evpn" => &[
            ("vrf-vxlan", true),
            ("controller", true),
            ("exitnodes", false),
            ("exitnodes-local-routing", false),
            ("exitnodes-primary", false),
            ("advertise-subnets", false),
            ("disable-arp-nd-suppression", false),
            ("bridge-disable-mac-learning", false),
            ("rt-import", false),
            ("vxlan-port", false),
            ("mac", false),
        ],
        _ => return Vec::new(),
    };
    let common = ["nodes", "mtu", "dns", "reversedns", "dnszone", "ipam"];
    common
        .iter()
        .map(|k| (*k, false))
        .chain(own.iter().copied())
        .collect()
}

/// `SectionConfig::check_config`: every option known to the type; on create, the required
/// ones present.
fn check_config(
    options: &[(&str, bool)],
    given: &Checked,
    skip: &[&str],
    create: bool,
) -> Result<Section, String> {
    let mut section = Section::new();
    for (k, v) in given.iter().filter(|(k, _)| !skip.contains(&k.as_str())) {
        if !options.iter().any(|(o, _)| o == k) {
            return Err(format!("unexpected property '{k}'"));
        }
        section.insert(k.clone(), v.clone());
    }
    if create
        && let Some((k, _)) = options
            .iter()
            .find(|(k, req)| *req && !given.contains_key(*k))
    {
        return Err(format!("missing value for required option '{k}'"));
    }
    Ok(section)
}

/// `SectionConfig::delete_from_config`.
fn delete_from(
    section: &mut Section,
    options: &[(&str, bool)],
    given: &Checked,
    delete: &[String],
) -> Result<(), String> {
    for k in delete {
        let Some((_, required)) = options.iter().find(|(o, _)| o == k) else {
            return Err(format!("no such option '{k}'"));
        };
        if *required {
            return Err(format!("unable to delete required option '{k}'"));
        }
        if given.contains_key(k) {
            return Err(format!(
                "cannot set and delete property '{k}' at the same time!"
            ));
        }
        section.remove(k);
    }
    Ok(())
}

fn update_fields(props: &[Field]) -> Vec<Field> {
    let mut fields = props.to_vec();
    fields.extend([spec::DIGEST, spec::DELETE_LIST]);
    fields
}

/// The zone API's checks on the DNS servers and the IPAM (`Zones.pm`): the simulator has the
/// default `pve` IPAM and no DNS plugin.
fn zone_refs(zone: &Section) -> Result<(), String> {
    for key in ["dns", "reversedns"] {
        if let Some(server) = zone.get(key) {
            return Err(param_exc(key, &format!("{server} don't exist")));
        }
    }
    if zone.contains_key("dnszone") {
        return Err(param_exc("dnszone", "missing dns server"));
    }
    if let Some(ipam) = zone.get("ipam").filter(|i| *i != "pve") {
        return Err(param_exc("ipam", &format!("{ipam} not existing")));
    }
    if zone.get("type").map(String::as_str) == Some("evpn") {
        // EvpnPlugin::on_update_hook: no controller is defined in the simulator
        let controller = zone.get("controller").cloned().unwrap_or_default();
        return Err(format!("controller {controller} don't exist"));
    }
    Ok(())
}

/// `POST /cluster/sdn/zones`.
pub(crate) fn zone_create(cluster: &mut Cluster, params: &Params) -> ApiResult<()> {
    let mut fields = ZONE_PROPS.to_vec();
    fields.extend([
        crate::sdn::ZONE_ID.required(),
        Field::one_of("type", ZONE_TYPES).required(),
    ]);
    let p = spec::check(params, &fields)?;
    let (id, zone_type) = (p["zone"].clone(), p["type"].clone());
    let options = zone_options(&zone_type);
    let mut zone =
        check_config(&options, &p, &["zone", "type", "lock-token"], true).map_err(ApiError::die)?;
    zone.insert("type".to_owned(), zone_type);
    let what = "create sdn zone object";
    if cluster.sdn.config.zones.contains_key(&id) {
        return Err(failed(
            what,
            &format!("sdn zone object ID '{id}' already defined"),
        ));
    }
    zone_refs(&zone).map_err(|e| failed(what, &e))?;
    cluster.sdn.config.zones.insert(id, zone);
    cluster.sdn.wrote();
    Ok(())
}

/// `PUT /cluster/sdn/zones/{zone}`.
pub(crate) fn zone_update(cluster: &mut Cluster, id: &str, params: &Params) -> ApiResult<()> {
    let id = spec::check_path(&crate::sdn::ZONE_ID, id)?;
    let p = spec::check(params, &update_fields(ZONE_PROPS))?;
    let what = "update sdn zone object";
    let sdn = &cluster.sdn;
    let delete = crate::sdn::digest_and_delete(sdn, &p)?;
    let mut zone = sdn
        .config
        .zones
        .get(&id)
        .cloned()
        .ok_or_else(|| failed(what, &format!("sdn '{id}' does not exist")))?;
    let options = zone_options(zone.get("type").map_or("", String::as_str));
    let skip = ["lock-token", "digest", "delete"];
    let given = check_config(&options, &p, &skip, false).map_err(|e| failed(what, &e))?;
    delete_from(&mut zone, &options, &given, &delete).map_err(|e| failed(what, &e))?;
    let old_ipam = zone.get("ipam").cloned();
    zone.extend(given);
    let in_zone = sdn
        .config
        .subnets
        .keys()
        .any(|s| s.split('-').next() == Some(&id));
    if zone.get("ipam") != old_ipam.as_ref() && in_zone {
        let e = param_exc(
            "ipam",
            "can't change ipam if a subnet is already defined in this zone",
        );
        return Err(failed(what, &e));
    }
    zone_refs(&zone).map_err(|e| failed(what, &e))?;
    cluster.sdn.config.zones.insert(id, zone);
    cluster.sdn.wrote();
    Ok(())
}

/// `DELETE /cluster/sdn/zones/{zone}`.
pub(crate) fn zone_delete(cluster: &mut Cluster, id: &str, params: &Params) -> ApiResult<()> {
    let id = spec::check_path(&crate::sdn::ZONE_ID, id)?;
    spec::check(params, &[Field::str("lock-token")])?;
    let what = "delete sdn zone object";
    let config = &cluster.sdn.config;
    if !config.zones.contains_key(&id) {
        return Err(failed(what, &format!("sdn '{id}' does not exist")));
    }
    if let Some((vnet, _)) = config
        .vnets
        .iter()
        .find(|(_, v)| v.get("zone") == Some(&id))
    {
        return Err(failed(what, &format!("zone {id} is used by vnet {vnet}")));
    }
    cluster.sdn.config.zones.remove(&id);
    cluster.sdn.wrote();
    Ok(())
}

const VNET_PROPS: &[Field] = &[
    Field::str("zone"),
    Field::one_of("type", &["vnet"]),
    Field::int("tag", Some(1), Some(16_777_215)),
    Field::boolean("vlanaware"),
    Field::str("alias").max_len(256),
    Field::boolean("isolate-ports"),
    Field::str("lock-token"),
];
const VNET_OPTIONS: &[(&str, bool)] = &[
    ("zone", true),
    ("tag", false),
    ("alias", false),
    ("vlanaware", false),
    ("isolate-ports", false),
];

/// The zone type's `vnet_update_hook` and `VnetPlugin::on_update_hook`.
fn vnet_hooks(config: &crate::sdn::Config, id: &str, vnet: &Section) -> Result<(), String> {
    let zone_id = vnet.get("zone").cloned().unwrap_or_default();
    let Some(zone) = config.zones.get(&zone_id) else {
        return Err("unknown section type ''".to_owned());
    };
    let tag: Option<u64> = vnet.get("tag").and_then(|t| t.parse().ok());
    let others = config.vnets.iter().filter(|(o, _)| o.as_str() != id);
    let same_zone = |o: &&Section| o.get("zone") == Some(&zone_id);
    match zone.get("type").map(String::as_str) {
        Some("simple") if tag.is_some() => {
            return Err(param_exc("tag", "vlan tag is not allowed on simple zone"));
        }
        Some("vlan") => {
            let tag = tag.ok_or_else(|| param_exc("tag", "missing vlan tag"))?;
            if tag > 4096 {
                return Err(param_exc("tag", "vlan tag max value is 4096"));
            }
            if let Some((other, _)) = others
                .filter(|(_, o)| same_zone(o))
                .find(|(_, o)| o.get("tag") == vnet.get("tag"))
            {
                return Err(param_exc(
                    "tag",
                    &format!("tag {tag} already exist in vnet {other}"),
                ));
            }
        }
        Some("qinq") => {
            if tag.is_some_and(|t| t > 4096) {
                return Err(param_exc("tag", "VLAN tag maximal value is 4096"));
            }
            for (other, o) in others.filter(|(_, o)| same_zone(o)) {
                match (tag, o.get("tag")) {
                    (Some(t), Some(ot)) if t.to_string() == *ot => {
                        let m = format!("tag {t} already exist in zone {zone_id} vnet {other}");
                        return Err(param_exc("tag", &m));
                    }
                    (None, None) => {
                        let m =
                            format!("tag-less vnet already exists in zone {zone_id} vnet {other}");
                        return Err(param_exc("tag", &m));
                    }
                    _ => {}
                }
            }
        }
        Some(t @ ("vxlan" | "evpn")) => {
            let tag = tag.ok_or_else(|| param_exc("tag", "missing vxlan tag"))?;
            if tag > 16_777_216 {
                return Err(param_exc("tag", "vxlan tag max value is 16777216"));
            }
            if t == "evpn" && vnet.get("vlanaware").map(String::as_str) == Some("1") {
                return Err(param_exc(
                    "vlan-aware",
                    "vlan-aware option can't be enabled with evpn",
                ));
            }
            for (other, o) in others {
                let other_zone = o.get("zone").cloned().unwrap_or_default();
                let tunnel = config.zones.get(&other_zone).and_then(|z| z.get("type"));
                if matches!(tunnel.map(String::as_str), Some("vxlan" | "evpn"))
                    && o.get("tag") == vnet.get("tag")
                {
                    let m = format!(
                        "vxlan tag {tag} already exist in vnet {other} in zone {other_zone} "
                    );
                    return Err(param_exc("tag", &m));
                }
            }
        }
        _ => {}
    }
    let has_subnets = config
        .subnets
        .values()
        .any(|s| s.get("vnet").map(String::as_str) == Some(id));
    if vnet.get("vlanaware").map(String::as_str) == Some("1") && has_subnets {
        return Err(param_exc(
            "vlanaware",
            "vlanaware vnet is not compatible with subnets",
        ));
    }
    Ok(())
}

/// `POST /cluster/sdn/vnets`.
pub(crate) fn vnet_create(cluster: &mut Cluster, params: &Params) -> ApiResult<()> {
    let mut fields = VNET_PROPS.to_vec();
    fields[0] = fields[0].required();
    fields.push(crate::sdn::VNET_ID.required());
    let p = spec::check(params, &fields)?;
    let id = p["vnet"].clone();
    let what = "create sdn vnet object";
    let vnet = check_config(VNET_OPTIONS, &p, &["vnet", "type", "lock-token"], true)
        .map_err(|e| failed(what, &e))?;
    let config = &cluster.sdn.config;
    if config.vnets.contains_key(&id) {
        return Err(failed(
            what,
            &format!("sdn vnet object ID '{id}' already defined"),
        ));
    }
    vnet_hooks(config, &id, &vnet).map_err(|e| failed(what, &e))?;
    let mut vnet = vnet;
    vnet.insert("type".to_owned(), "vnet".to_owned());
    cluster.sdn.config.vnets.insert(id, vnet);
    cluster.sdn.wrote();
    Ok(())
}

/// The vnet, or `check_vnet_access`'s refusal.
fn vnet_of(config: &crate::sdn::Config, id: &str) -> ApiResult<Section> {
    config
        .vnets
        .get(id)
        .cloned()
        .ok_or_else(|| Kind::Vnet.missing(id))
}

/// `PUT /cluster/sdn/vnets/{vnet}`.
pub(crate) fn vnet_update(cluster: &mut Cluster, id: &str, params: &Params) -> ApiResult<()> {
    let id = spec::check_path(&crate::sdn::VNET_ID, id)?;
    let p = spec::check(params, &update_fields(VNET_PROPS))?;
    let mut vnet = vnet_of(&cluster.sdn.config, &id)?;
    let what = "update sdn vnet object";
    let delete = crate::sdn::digest_and_delete(&cluster.sdn, &p)?;
    let skip = ["lock-token", "digest", "delete", "type"];
    let given = check_config(VNET_OPTIONS, &p, &skip, false).map_err(|e| failed(what, &e))?;
    let old_zone = vnet.get("zone").cloned();
    let no_zone = delete.iter().any(|d| d == "zone");
    delete_from(&mut vnet, VNET_OPTIONS, &given, &delete).map_err(|e| {
        failed(
            what,
            &if no_zone {
                param_exc("zone", "cannot delete zone")
            } else {
                e
            },
        )
    })?;
    vnet.extend(given);
    let config = &cluster.sdn.config;
    let has_subnets = config.subnets.values().any(|s| s.get("vnet") == Some(&id));
    if has_subnets && vnet.get("zone") != old_zone.as_ref() {
        return Err(failed(
            what,
            &param_exc("zone", "can't change zone if subnets exist"),
        ));
    }
    vnet_hooks(config, &id, &vnet).map_err(|e| failed(what, &e))?;
    cluster.sdn.config.vnets.insert(id, vnet);
    cluster.sdn.wrote();
    Ok(())
}

/// `DELETE /cluster/sdn/vnets/{vnet}`.
pub(crate) fn vnet_delete(cluster: &mut Cluster, id: &str, params: &Params) -> ApiResult<()> {
    let id = spec::check_path(&crate::sdn::VNET_ID, id)?;
    spec::check(params, &[Field::str("lock-token")])?;
    vnet_of(&cluster.sdn.config, &id)?;
    if cluster
        .sdn
        .config
        .subnets
        .values()
        .any(|s| s.get("vnet") == Some(&id))
    {
        let e = param_exc("vnet", "Can't delete vnet if subnets exists");
        return Err(failed("delete sdn vnet object", &e));
    }
    cluster.sdn.config.vnets.remove(&id);
    cluster.sdn.wrote();
    Ok(())
}

const SUBNET_PROPS: &[Field] = &[
    Field::one_of("type", &["subnet"]),
    Field::str("gateway").format(ip),
    Field::boolean("snat"),
    Field::str("dnszoneprefix"),
    Field::str("dhcp-range").format(dhcp_range),
    Field::str("dhcp-dns-server").format(ip),
    Field::str("lock-token"),
];
const SUBNET_OPTIONS: &[(&str, bool)] = &[
    ("vnet", true),
    ("gateway", false),
    ("snat", false),
    ("dnszoneprefix", false),
    ("dhcp-range", false),
    ("dhcp-dns-server", false),
];
pub(crate) const SUBNET_ID: Field = Field::new("subnet", Ty::Str).format(subnet_id);

/// `SubnetPlugin::on_update_hook` (without IPAM bookkeeping) and `validate_dhcp_ranges`.
fn subnet_hooks(vnet: &Section, cidr: &str, subnet: &Section) -> Result<(), String> {
    if vnet.get("vlanaware").map(String::as_str) == Some("1") {
        return Err(param_exc(
            "vnet",
            "you can't add a subnet on a vlanaware vnet",
        ));
    }
    let point_to_point = cidr.ends_with("/32") && cidr.contains('.');
    if let Some(gateway) = subnet.get("gateway")
        && !contains(cidr, gateway)
        && !point_to_point
    {
        return Err(param_exc(
            "gateway",
            &format!("{gateway} is not in subnet {cidr}"),
        ));
    }
    if let Some(range) = subnet.get("dhcp-range") {
        let field = |name: &str| {
            range
                .split(',')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .unwrap_or_default()
                .to_owned()
        };
        let (start, end) = (field("start-address"), field("end-address"));
        let (s, e) = (start.parse::<IpAddr>(), end.parse::<IpAddr>());
        let ordered = match (s, e) {
            (Ok(s), Ok(e)) => s <= e,
            _ => false,
        };
        if !ordered {
            let m = format!("start-address {start} must be smaller than end-address {end}");
            return Err(param_exc("dhcp-range", &m));
        }
        for (name, addr) in [("start-address", &start), ("end-address", &end)] {
            if !contains(cidr, addr) {
                let m = format!("{name} {addr} is not in subnet {cidr}");
                return Err(param_exc("dhcp-range", &m));
            }
        }
    }
    Ok(())
}

/// `POST /cluster/sdn/vnets/{vnet}/subnets`.
pub(crate) fn subnet_create(
    cluster: &mut Cluster,
    vnet_id: &str,
    params: &Params,
) -> ApiResult<()> {
    let vnet_id = spec::check_path(&crate::sdn::VNET_ID, vnet_id)?;
    let mut fields = SUBNET_PROPS.to_vec();
    fields.push(SUBNET_ID.required());
    let mut p = spec::check(params, &fields)?;
    let vnet = vnet_of(&cluster.sdn.config, &vnet_id)?;
    // the path's `vnet` is one of the section's options
    p.insert("vnet".to_owned(), vnet_id);
    let cidr = p["subnet"].clone();
    let zone = vnet.get("zone").cloned().unwrap_or_default();
    let id = format!("{zone}-{}", cidr.replace('/', "-"));
    let what = "create sdn subnet object";
    let mut subnet = check_config(SUBNET_OPTIONS, &p, &["subnet", "type", "lock-token"], true)
        .map_err(|e| failed(what, &e))?;
    if cluster.sdn.config.subnets.contains_key(&id) {
        return Err(failed(
            what,
            &format!("sdn subnet object ID '{id}' already defined"),
        ));
    }
    subnet_hooks(&vnet, &cidr, &subnet).map_err(|e| failed(what, &e))?;
    subnet.insert("type".to_owned(), "subnet".to_owned());
    cluster.sdn.config.subnets.insert(id, subnet);
    cluster.sdn.wrote();
    Ok(())
}

/// `PUT /cluster/sdn/vnets/{vnet}/subnets/{subnet}`.
pub(crate) fn subnet_update(
    cluster: &mut Cluster,
    vnet_id: &str,
    id: &str,
    params: &Params,
) -> ApiResult<()> {
    let vnet_id = spec::check_path(&crate::sdn::VNET_ID, vnet_id)?;
    let id = spec::check_path(&SUBNET_ID, id)?;
    let p = spec::check(params, &update_fields(SUBNET_PROPS))?;
    let vnet = vnet_of(&cluster.sdn.config, &vnet_id)?;
    let what = "update sdn subnet object";
    let mut subnet =
        existing_subnet(&cluster.sdn.config.subnets, &id).map_err(|e| failed(what, &e))?;
    let delete = crate::sdn::digest_and_delete(&cluster.sdn, &p)?;
    let skip = ["lock-token", "digest", "delete", "type"];
    let given = check_config(SUBNET_OPTIONS, &p, &skip, false).map_err(|e| failed(what, &e))?;
    delete_from(&mut subnet, SUBNET_OPTIONS, &given, &delete).map_err(|e| failed(what, &e))?;
    subnet.extend(given);
    let cidr = cidr_of(&id);
    subnet_hooks(&vnet, &cidr, &subnet).map_err(|e| failed(what, &e))?;
    cluster.sdn.config.subnets.insert(id, subnet);
    cluster.sdn.wrote();
    Ok(())
}

/// `DELETE /cluster/sdn/vnets/{vnet}/subnets/{subnet}`.
pub(crate) fn subnet_delete(
    cluster: &mut Cluster,
    vnet_id: &str,
    id: &str,
    params: &Params,
) -> ApiResult<()> {
    let vnet_id = spec::check_path(&crate::sdn::VNET_ID, vnet_id)?;
    let id = spec::check_path(&SUBNET_ID, id)?;
    spec::check(params, &[Field::str("lock-token")])?;
    vnet_of(&cluster.sdn.config, &vnet_id)?;
    // PVE deletes with `noerr`: a missing subnet is no error
    if cluster.sdn.config.subnets.remove(&id).is_some() {
        cluster.sdn.wrote();
    }
    Ok(())
}

fn existing_subnet(subnets: &Sections, id: &str) -> Result<Section, String> {
    subnets
        .get(id)
        .cloned()
        .ok_or_else(|| format!("sdn subnet '{id}' does not exist"))
}

/// `{zone}-{network}-{mask}` to `network/mask`.
fn cidr_of(id: &str) -> String {
    let mut parts = id.splitn(3, '-').skip(1);
    format!(
        "{}/{}",
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_matched_against_the_subnet_as_pve_matches_them() {
        assert!(contains("10.0.0.0/24", "10.0.0.1"));
        assert!(!contains("10.0.0.0/24", "10.0.1.1"));
        assert!(contains("fd00::/64", "fd00::1"));
        assert!(!contains("fd00::/64", "10.0.0.1"));
        assert!(subnet_id("zone1-10.0.0.0-24").is_ok());
        assert!(subnet_id("zone1-10.0.0.0-33").is_err());
        assert_eq!(cidr_of("zone1-10.0.0.0-24"), "10.0.0.0/24");
    }
}
