//! Property tests: every typed value prints to text that parses back to the same value, and
//! printing is stable (print . parse . print == print).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

use super::*;

fn ident() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_.-]{0,10}"
}

fn mac() -> impl Strategy<Value = Mac> {
    any::<[u8; 6]>().prop_map(|mut b| {
        b[0] &= 0xfe;
        Mac::new(b)
    })
}

fn ip4cfg() -> impl Strategy<Value = IpConfig> {
    prop_oneof![
        Just(IpConfig::Dhcp),
        Just(IpConfig::Manual),
        (any::<u32>(), 8u8..=32).prop_map(|(a, prefix)| IpConfig::Static {
            addr: IpAddr::V4(Ipv4Addr::from(a)),
            prefix
        }),
    ]
}

fn ip6cfg() -> impl Strategy<Value = IpConfig> {
    prop_oneof![
        Just(IpConfig::Auto),
        Just(IpConfig::Dhcp),
        (any::<u128>(), 8u8..=128).prop_map(|(a, prefix)| IpConfig::Static {
            addr: IpAddr::V6(Ipv6Addr::from(a)),
            prefix
        }),
    ]
}

prop_compose! {
    fn lxc_net()(
        name in ident(), bridge in option::of(ident()), firewall in option::of(any::<bool>()),
        gw in option::of(any::<u32>().prop_map(Ipv4Addr::from)),
        gw6 in option::of(any::<u128>().prop_map(Ipv6Addr::from)),
        host_managed in option::of(any::<bool>()), hwaddr in option::of(mac()),
        ip in option::of(ip4cfg()), ip6 in option::of(ip6cfg()),
        link_down in option::of(any::<bool>()), mtu in option::of(64u16..),
        rate in option::of((0u64..10_000_000).prop_map(Rate::from_milli)),
        tag in option::of(1u16..=4094), trunks in vec(1u16..=4094, 0..4), veth in any::<bool>(),
    ) -> LxcNet {
        LxcNet { name, bridge, firewall, gw, gw6, host_managed, hwaddr, ip, ip6, link_down, mtu,
                 rate, tag, trunks, veth }
    }
}

prop_compose! {
    fn volume_options()(
        storage in ident(), disk in 0u32..1000,
        acl in option::of(any::<bool>()), mountoptions in vec("[a-z]{2,8}", 0..3),
        quota in option::of(any::<bool>()), replicate in option::of(any::<bool>()),
        ro in option::of(any::<bool>()), shared in option::of(any::<bool>()),
        size in option::of(any::<u64>().prop_map(|b| DiskSize::from_bytes(b >> 4))),
    ) -> VolumeOptions {
        VolumeOptions { volume: format!("{storage}:vm-100-disk-{disk}"), acl, idmap: None,
                        mountoptions, quota, replicate, ro, shared, size }
    }
}

proptest! {
    #[test]
    fn lxc_net_round_trips(net in lxc_net()) {
        let text = net.to_string();
        let back: LxcNet = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(&back, &net);
        prop_assert_eq!(back.to_string(), text);
    }

    #[test]
    fn rootfs_and_mount_points_round_trip(
        options in volume_options(), path in "/[a-z]{1,8}(/[a-z]{1,8}){0,2}",
        backup in option::of(any::<bool>()), keepattrs in option::of(any::<bool>()),
    ) {
        let root = RootFs { options: options.clone() };
        prop_assert_eq!(root.to_string().parse::<RootFs>().ok(), Some(root));
        let mp = MountPoint { options, mp: path, backup, keepattrs };
        let text = mp.to_string();
        prop_assert_eq!(text.parse::<MountPoint>().ok(), Some(mp));
    }

    #[test]
    fn features_round_trip(
        force_rw_sys in option::of(any::<bool>()), fuse in option::of(any::<bool>()),
        keyctl in option::of(any::<bool>()), mknod in option::of(any::<bool>()),
        mount in vec("[a-z0-9]{2,6}", 0..3), nesting in option::of(any::<bool>()),
    ) {
        let f = Features { force_rw_sys, fuse, keyctl, mknod, mount, nesting };
        prop_assert_eq!(f.to_string().parse::<Features>().ok(), Some(f));
    }

    #[test]
    fn startup_round_trips(order in option::of(0u64..1000), up in option::of(0u64..1000), down in option::of(0u64..1000)) {
        let s = Startup { order, up, down };
        prop_assume!(s != Startup::default());
        prop_assert_eq!(s.to_string().parse::<Startup>().ok(), Some(s));
    }

    #[test]
    fn disk_sizes_round_trip(bytes in any::<u64>()) {
        let size = DiskSize::from_bytes(bytes >> 2);
        prop_assert_eq!(DiskSize::parse(&size.to_string()).ok(), Some(size));
    }

    #[test]
    fn macs_round_trip_case_insensitively(m in mac()) {
        prop_assert_eq!(m.to_string().to_lowercase().parse::<Mac>().ok(), Some(m));
    }

    #[test]
    fn parsers_never_panic_on_arbitrary_text(s in "\\PC{0,60}") {
        let _ = s.parse::<LxcNet>();
        let _ = s.parse::<RootFs>();
        let _ = s.parse::<MountPoint>();
        let _ = s.parse::<Features>();
        let _ = s.parse::<Startup>();
        let _ = s.parse::<Upid>();
        let _ = DiskSize::parse(&s);
        let _ = qemu_net_mac(&s);
    }
}
