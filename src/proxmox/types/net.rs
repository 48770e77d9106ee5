//! Network values: MAC addresses, LXC `net<N>` (`pve-lxc-network`) and the MAC inside a QEMU
//! `net<N>` (`virtio=<MAC>,bridge=...`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use super::PropertyError;
use super::propstring::{PropPrinter, RawProps};

/// A 48-bit MAC address; printed upper-case with colons, compared by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mac([u8; 6]);

impl Mac {
    pub const fn new(bytes: [u8; 6]) -> Self {
        Self(bytes)
    }
    pub const fn bytes(self) -> [u8; 6] {
        self.0
    }
    pub fn is_zero(self) -> bool {
        self.0 == [0; 6]
    }
    /// The I/G bit is clear (PVE refuses group addresses for guests).
    pub fn is_unicast(self) -> bool {
        self.0[0] & 1 == 0
    }
}

impl FromStr for Mac {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || PropertyError::new("mac address", format!("'{s}' is not XX:XX:XX:XX:XX:XX"));
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for byte in &mut out {
            let part = parts.next().ok_or_else(bad)?;
            if part.len() != 2 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Self(out))
    }
}

impl serde::Serialize for Mac {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Mac {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02X}:{b:02X}:{c:02X}:{d:02X}:{e:02X}:{g:02X}")
    }
}

/// `ip=` / `ip6=` of a container interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpConfig {
    Dhcp,
    /// SLAAC (IPv6 only).
    Auto,
    Manual,
    Static {
        addr: IpAddr,
        prefix: u8,
    },
}

impl IpConfig {
    fn parse(key: &'static str, s: &str, v6: bool) -> Result<Self, PropertyError> {
        let bad = || {
            let kind = if v6 {
                "IPv6/CIDR, auto, dhcp or manual"
            } else {
                "IPv4/CIDR, dhcp or manual"
            };
            PropertyError::new("net", format!("'{key}' must be {kind}, got '{s}'"))
        };
        match s {
            "dhcp" => return Ok(Self::Dhcp),
            "manual" => return Ok(Self::Manual),
            "auto" if v6 => return Ok(Self::Auto),
            _ => {}
        }
        let (addr, prefix) = s.split_once('/').ok_or_else(bad)?;
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        let max = if v6 { 128 } else { 32 };
        if addr.is_ipv6() != v6 || !(8..=max).contains(&prefix) {
            return Err(bad());
        }
        Ok(Self::Static { addr, prefix })
    }
}

impl fmt::Display for IpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dhcp => f.write_str("dhcp"),
            Self::Auto => f.write_str("auto"),
            Self::Manual => f.write_str("manual"),
            Self::Static { addr, prefix } => write!(f, "{addr}/{prefix}"),
        }
    }
}

/// One LXC `net<N>` value. `name` is required; every other key is optional.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LxcNet {
    pub name: String,
    pub bridge: Option<String>,
    pub firewall: Option<bool>,
    pub gw: Option<Ipv4Addr>,
    pub gw6: Option<Ipv6Addr>,
    pub host_managed: Option<bool>,
    pub hwaddr: Option<Mac>,
    pub ip: Option<IpConfig>,
    pub ip6: Option<IpConfig>,
    pub link_down: Option<bool>,
    pub mtu: Option<u16>,
    /// MB/s, kept as PVE's decimal text (a `number`), e.g. `12.5`.
    pub rate: Option<Rate>,
    pub tag: Option<u16>,
    pub trunks: Vec<u16>,
    /// Only `veth` exists.
    pub veth: bool,
}

/// A non-negative decimal rate (MB/s), stored in thousandths so it compares exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

impl Rate {
    pub const fn from_milli(milli: u64) -> Self {
        Self(milli)
    }
    pub const fn milli(self) -> u64 {
        self.0
    }
}

impl FromStr for Rate {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            PropertyError::new(
                "net",
                format!("'rate' must be a number like 12.5, got '{s}'"),
            )
        };
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !digits(int) || !digits(frac) || frac.len() > 3 {
            return Err(bad());
        }
        let whole: u64 = int.parse().map_err(|_| bad())?;
        let frac_milli: u64 = format!("{frac:0<3}").parse().map_err(|_| bad())?;
        whole
            .checked_mul(1000)
            .and_then(|w| w.checked_add(frac_milli))
            .map(Self)
            .ok_or_else(bad)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, frac) = (self.0 / 1000, self.0 % 1000);
        if frac == 0 {
            write!(f, "{whole}")
        } else {
            let frac = format!("{frac:03}");
            write!(f, "{whole}.{}", frac.trim_end_matches('0'))
        }
    }
}

fn ifname_ok(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

fn parse_opt<T: FromStr>(key: &'static str, v: Option<String>) -> Result<Option<T>, PropertyError> {
    v.map(|v| {
        v.parse()
            .map_err(|_| PropertyError::new("net", format!("'{key}' has an invalid value '{v}'")))
    })
    .transpose()
}

impl FromStr for LxcNet {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut p = RawProps::parse("net", s, None)?;
        let name = p.take_required("name")?;
        let bridge = p.take("bridge");
        if !ifname_ok(&name) || bridge.as_deref().is_some_and(|b| !ifname_ok(b)) {
            return Err(PropertyError::new(
                "net",
                format!("invalid interface or bridge name in '{s}'"),
            ));
        }
        let hwaddr: Option<Mac> = parse_opt("hwaddr", p.take("hwaddr"))?;
        if hwaddr.is_some_and(|m| !m.is_unicast()) {
            return Err(PropertyError::new(
                "net",
                "'hwaddr' is not a unicast MAC address",
            ));
        }
        let veth = match p.take("type").as_deref() {
            None => false,
            Some("veth") => true,
            Some(other) => {
                return Err(PropertyError::new(
                    "net",
                    format!("'type' must be veth, got '{other}'"),
                ));
            }
        };
        let trunks = super::propstring::split_list(p.take("trunks"))
            .iter()
            .map(|t| t.parse::<u16>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| PropertyError::new("net", "'trunks' must be vlan ids separated by ';'"))?;
        let net = Self {
            name,
            bridge,
            firewall: p.take_bool("firewall")?,
            gw: parse_opt("gw", p.take("gw"))?,
            gw6: parse_opt("gw6", p.take("gw6"))?,
            host_managed: p.take_bool("host-managed")?,
            hwaddr,
            ip: p
                .take("ip")
                .map(|v| IpConfig::parse("ip", &v, false))
                .transpose()?,
            ip6: p
                .take("ip6")
                .map(|v| IpConfig::parse("ip6", &v, true))
                .transpose()?,
            link_down: p.take_bool("link_down")?,
            mtu: p
                .take_uint("mtu", 64, 65535)?
                .and_then(|v| u16::try_from(v).ok()),
            rate: parse_opt("rate", p.take("rate"))?,
            tag: p
                .take_uint("tag", 1, 4094)?
                .and_then(|v| u16::try_from(v).ok()),
            trunks,
            veth,
        };
        p.finish()?;
        Ok(net)
    }
}

impl fmt::Display for LxcNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let trunks: Vec<String> = self.trunks.iter().map(u16::to_string).collect();
        let text = PropPrinter::default()
            .required("name", &self.name)
            .opt("bridge", self.bridge.as_ref())
            .opt_bool("firewall", self.firewall)
            .opt("gw", self.gw)
            .opt("gw6", self.gw6)
            .opt_bool("host-managed", self.host_managed)
            .opt("hwaddr", self.hwaddr)
            .opt("ip", self.ip)
            .opt("ip6", self.ip6)
            .opt_bool("link_down", self.link_down)
            .opt("mtu", self.mtu)
            .opt("rate", self.rate)
            .opt("tag", self.tag)
            .opt_list("trunks", &trunks)
            .opt("type", self.veth.then_some("veth"))
            .finish();
        f.write_str(&text)
    }
}

/// QEMU NIC models; a `net<N>` names its MAC as `<model>=<MAC>` (or `macaddr=<MAC>`).
const QEMU_MODELS: &[&str] = &[
    "e1000",
    "e1000-82540em",
    "e1000-82544gc",
    "e1000-82545em",
    "e1000e",
    "i82551",
    "i82557b",
    "i82559er",
    "ne2k_isa",
    "ne2k_pci",
    "pcnet",
    "rtl8139",
    "virtio",
    "vmxnet3",
];

/// The MAC of a QEMU `net<N>` value, if it names one.
pub fn qemu_net_mac(value: &str) -> Result<Option<Mac>, PropertyError> {
    for part in value.split(',') {
        let Some((key, val)) = part.split_once('=') else {
            continue;
        };
        if key == "macaddr" || QEMU_MODELS.contains(&key) {
            if key != "macaddr" && val.is_empty() {
                continue;
            }
            return val.parse().map(Some);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "name=eth0,bridge=vmbr0,firewall=1,gw=10.0.0.1,hwaddr=BC:24:11:5E:7A:01,ip=10.0.0.50/24,tag=20,type=veth";

    #[test]
    fn lxc_net_example_round_trips_exactly() {
        let net: LxcNet = EXAMPLE.parse().expect("test value");
        assert_eq!(
            net.hwaddr.expect("test value").to_string(),
            "BC:24:11:5E:7A:01"
        );
        assert_eq!(net.tag, Some(20));
        assert_eq!(net.to_string(), EXAMPLE);
    }

    #[test]
    fn lxc_net_prints_name_first_then_alphabetical() {
        let net: LxcNet =
            "type=veth,ip6=auto,hwaddr=bc:24:11:00:00:0a,name=eth1,rate=1.50,host-managed=yes"
                .parse()
                .expect("test value");
        assert_eq!(
            net.to_string(),
            "name=eth1,host-managed=1,hwaddr=BC:24:11:00:00:0A,ip6=auto,rate=1.5,type=veth"
        );
    }

    #[test]
    fn lxc_net_rejects_what_pve_rejects() {
        for bad in [
            "bridge=vmbr0",
            "name=eth0,ip=10.0.0.1",
            "name=eth0,ip=10.0.0.1/4",
            "name=eth0,ip6=10.0.0.1/24",
            "name=eth0,ip=auto",
            "name=eth0,hwaddr=01:00:5E:00:00:01",
            "name=eth0,tag=4095",
            "name=eth0,mtu=10",
            "name=eth0,type=macvlan",
            "name=eth0,colour=blue",
            "name=eth 0",
        ] {
            assert!(bad.parse::<LxcNet>().is_err(), "{bad}");
        }
    }

    #[test]
    fn qemu_net_mac_is_found_after_the_model() {
        let mac =
            qemu_net_mac("virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=1").expect("test value");
        assert_eq!(mac, Some("bc:24:11:aa:bb:cc".parse().expect("test value")));
        let mac = qemu_net_mac("model=e1000,macaddr=BC:24:11:00:00:01").expect("test value");
        assert_eq!(mac.expect("test value").to_string(), "BC:24:11:00:00:01");
        assert_eq!(qemu_net_mac("bridge=vmbr0").expect("test value"), None);
        assert!(qemu_net_mac("virtio=nonsense").is_err());
    }
}
