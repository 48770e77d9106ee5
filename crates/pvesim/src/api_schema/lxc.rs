//! The parameters of the LXC endpoints the simulator serves, as pve-container declares them:
//! `$confdesc` and the property-string formats of `src/PVE/LXC/Config.pm` (`$netconf_desc`,
//! `$rootfs_desc`, `$mp_desc`, `$features_desc`, `$dev_desc`, `$unused_desc`), and the
//! `parameters` of `src/PVE/API2/LXC.pm`, `API2/LXC/Config.pm` and `API2/LXC/Status.pm`.
//! Standard options (`pve-node`, `pve-vmid`, `skiplock`, ...) come from pve-common's
//! `src/PVE/JSONSchema.pm`.

use super::formats as f;
use super::{Prop, Schema};

/// `MAX_LXC_NETWORKS`, `MAX_MOUNT_POINTS`, `MAX_UNUSED_DISKS`, `MAX_DEVICES`.
const NETS: u32 = 32;
const MOUNT_POINTS: u32 = 256;
const UNUSED: u32 = 256;
const DEVICES: u32 = 256;

/// `pve-node` and `pve-vmid` (integer, format `pve-vmid`, 100..999999999).
const NODE_VMID: &[Prop] = &[
    Prop::string("node").required().format(f::node),
    Prop::int("vmid")
        .required()
        .format(f::vmid)
        .min(100.0)
        .max(999_999_999.0),
];

const NODE: &[Prop] = &[Prop::string("node").required().format(f::node)];

/// `$netconf_desc`.
pub(crate) const NET: &[Prop] = &[
    Prop::string("type").one_of(&["veth"]),
    Prop::string("name").required().pattern(f::word_dots),
    Prop::string("bridge").pattern(f::word_dots),
    Prop::string("hwaddr").format(f::mac_addr),
    Prop::int("mtu").min(64.0).max(65535.0),
    Prop::string("ip").format(f::ipv4_config),
    Prop::string("gw").format(f::ipv4),
    Prop::string("ip6").format(f::ipv6_config),
    Prop::string("gw6").format(f::ipv6),
    Prop::boolean("firewall"),
    Prop::int("tag").min(1.0).max(4094.0),
    Prop::string("trunks").pattern(f::vlan_list),
    Prop::number("rate"),
    Prop::boolean("link_down"),
    Prop::boolean("host-managed"),
];

/// `$rootfs_desc`.
pub(crate) const ROOTFS: &[Prop] = &[
    Prop::string("volume")
        .required()
        .default_key()
        .format(f::lxc_mp_string),
    Prop::string("size").format(f::disk_size),
    Prop::boolean("acl"),
    Prop::string("mountoptions").pattern(f::mount_options),
    Prop::string("idmap").pattern(f::idmap),
    Prop::boolean("ro"),
    Prop::boolean("quota"),
    Prop::boolean("replicate"),
    Prop::boolean("shared"),
];

/// `$mp_desc`: `$rootfs_desc` plus `backup`, `mp` and `keepattrs`.
pub(crate) const MOUNT_POINT: &[Prop] = &[
    Prop::string("volume")
        .required()
        .default_key()
        .format(f::lxc_mp_string),
    Prop::string("size").format(f::disk_size),
    Prop::boolean("acl"),
    Prop::string("mountoptions").pattern(f::mount_options),
    Prop::string("idmap").pattern(f::idmap),
    Prop::boolean("ro"),
    Prop::boolean("quota"),
    Prop::boolean("replicate"),
    Prop::boolean("shared"),
    Prop::boolean("backup"),
    Prop::string("mp").required().format(f::lxc_mp_string),
    Prop::boolean("keepattrs"),
];

/// `$features_desc`.
pub(crate) const FEATURES: &[Prop] = &[
    Prop::string("mount").pattern(f::fstype_list),
    Prop::boolean("nesting"),
    Prop::boolean("keyctl"),
    Prop::boolean("fuse"),
    Prop::boolean("mknod"),
    Prop::boolean("force_rw_sys"),
];

/// `$dev_desc`.
const DEV: &[Prop] = &[
    Prop::string("path").default_key().format(f::lxc_dev_string),
    Prop::string("mode").pattern(f::octal_mode),
    Prop::int("uid").min(0.0),
    Prop::int("gid").min(0.0),
    Prop::boolean("deny-write"),
];

/// `$unused_desc`.
const UNUSED_DESC: &[Prop] = &[Prop::string("volume")
    .required()
    .default_key()
    .format(f::volume_id)];

const LOCKS: &[&str] = &[
    "backup",
    "create",
    "destroyed",
    "disk",
    "fstrim",
    "migrate",
    "mounted",
    "rollback",
    "snapshot",
    "snapshot-delete",
];
const OSTYPES: &[&str] = &[
    "debian",
    "devuan",
    "ubuntu",
    "centos",
    "fedora",
    "opensuse",
    "archlinux",
    "alpine",
    "gentoo",
    "nixos",
    "unmanaged",
];

/// `$confdesc` as `json_config_properties` hands it out (without `parent` and `snaptime`).
pub(crate) const CONFIG: &[Prop] = &[
    Prop::string("lock").one_of(LOCKS),
    Prop::boolean("onboot"),
    Prop::string("startup").format(f::startup_order),
    Prop::boolean("template"),
    Prop::string("arch").one_of(&["amd64", "i386", "arm64", "armhf", "riscv32", "riscv64"]),
    Prop::string("ostype").one_of(OSTYPES),
    Prop::boolean("console"),
    Prop::int("tty").min(0.0).max(6.0),
    Prop::int("cores").min(1.0).max(8192.0),
    Prop::number("cpulimit").min(0.0).max(8192.0),
    Prop::int("cpuunits").min(0.0).max(500_000.0),
    Prop::int("memory").min(16.0),
    Prop::int("swap").min(0.0),
    Prop::string("hostname").format(f::dns_name).max_len(255),
    Prop::string("description").max_len(8192),
    Prop::string("searchdomain").list(f::dns_name),
    Prop::string("nameserver").list(f::ip_with_ll_iface),
    Prop::string("timezone").format(f::ct_timezone),
    Prop::string("rootfs").props(ROOTFS),
    Prop::string("cmode").one_of(&["shell", "console", "tty"]),
    Prop::string("entrypoint").pattern(f::no_controls),
    Prop::boolean("protection"),
    Prop::boolean("unprivileged"),
    Prop::string("features").props(FEATURES),
    Prop::string("env").pattern(f::env_list),
    Prop::string("hookscript").format(f::volume_id),
    Prop::string("tags").list(f::tag),
    Prop::boolean("debug"),
    Prop::indexed("net", NETS).props(NET),
    Prop::indexed("mp", MOUNT_POINTS).props(MOUNT_POINT),
    Prop::indexed("unused", UNUSED).props(UNUSED_DESC),
    Prop::indexed("dev", DEVICES).props(DEV),
];

/// `create_vm`'s own parameters besides `$confdesc`.
const CREATE_EXTRA: &[Prop] = &[
    Prop::string("ostemplate").required().max_len(255),
    Prop::string("password").min_len(5),
    Prop::string("storage").format(f::storage_id),
    Prop::boolean("force"),
    Prop::boolean("restore"),
    Prop::boolean("unique").requires("restore"),
    Prop::string("pool").format(f::pool_id),
    Prop::boolean("ignore-unpack-errors"),
    Prop::string("ssh-public-keys"),
    Prop::number("bwlimit").min(0.0),
    Prop::boolean("start"),
    Prop::boolean("ha-managed"),
];

/// `update_vm`'s own parameters besides `$confdesc`.
const UPDATE_EXTRA: &[Prop] = &[
    Prop::string("delete").list(f::configid),
    Prop::string("revert").list(f::configid),
    Prop::string("digest").max_len(40),
];

/// `GET /nodes/{node}/lxc`.
pub(crate) static LIST: Schema = Schema { parts: &[NODE] };
/// `POST /nodes/{node}/lxc` (`create_vm`).
pub(crate) static CREATE: Schema = Schema {
    parts: &[NODE_VMID, CREATE_EXTRA, CONFIG],
};
/// Endpoints with only `node` and `vmid`: the index, `pending`, `interfaces`, `template`,
/// `status/current`, `status/resume`, `status/suspend`.
pub(crate) static GUEST: Schema = Schema {
    parts: &[NODE_VMID],
};
/// `GET .../config` (`vm_config`).
pub(crate) static CONFIG_GET: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("current"),
            Prop::string("snapshot").format(f::configid).max_len(40),
        ],
    ],
};
/// `PUT .../config` (`update_vm`).
pub(crate) static CONFIG_PUT: Schema = Schema {
    parts: &[NODE_VMID, UPDATE_EXTRA, CONFIG],
};
/// `DELETE .../{vmid}` (`destroy_vm`).
pub(crate) static DESTROY: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("force"),
            Prop::boolean("purge"),
            Prop::boolean("destroy-unreferenced-disks"),
        ],
    ],
};
/// `PUT .../resize` (`resize_vm`): `disk` is one of `valid_volume_keys`.
pub(crate) static RESIZE: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::string("disk").required().computed(volume_keys),
            Prop::string("size").required().pattern(f::resize_size),
            Prop::string("digest").max_len(40),
        ],
    ],
};
/// `POST .../status/start` (`vm_start`).
pub(crate) static START: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[Prop::boolean("skiplock"), Prop::boolean("debug")],
    ],
};
/// `POST .../status/stop` (`vm_stop`).
pub(crate) static STOP: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("skiplock"),
            Prop::boolean("overrule-shutdown"),
        ],
    ],
};
/// `POST .../status/shutdown` (`vm_shutdown`).
pub(crate) static SHUTDOWN: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[Prop::int("timeout").min(0.0), Prop::boolean("forceStop")],
    ],
};
/// `POST .../status/reboot` (`vm_reboot`).
pub(crate) static REBOOT: Schema = Schema {
    parts: &[NODE_VMID, &[Prop::int("timeout").min(0.0)]],
};

/// `POST .../clone` (`clone_vm`).
pub(crate) static CLONE: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::int("newid")
                .required()
                .format(f::vmid)
                .min(100.0)
                .max(999_999_999.0),
            Prop::string("hostname").format(f::dns_name),
            Prop::string("description"),
            Prop::string("pool").format(f::pool_id),
            Prop::string("snapname").format(f::configid).max_len(40),
            Prop::string("storage").format(f::storage_id),
            Prop::boolean("full"),
            Prop::string("target").format(f::node),
            Prop::number("bwlimit").min(0.0),
        ],
    ],
};

/// The power action's schema, by the `{action}` path segment.
pub(crate) fn power(action: &str) -> Option<&'static Schema> {
    match action {
        "start" => Some(&START),
        "stop" => Some(&STOP),
        "shutdown" => Some(&SHUTDOWN),
        "reboot" => Some(&REBOOT),
        "suspend" | "resume" => Some(&GUEST),
        _ => None,
    }
}

/// `PVE::LXC::Config->valid_volume_keys`: `rootfs`, then `mp0`..`mp255`.
pub(crate) fn volume_keys() -> Vec<String> {
    std::iter::once("rootfs".to_owned())
        .chain((0..MOUNT_POINTS).map(|i| format!("mp{i}")))
        .collect()
}

/// The `$confdesc` entry of a config key, if there is one.
pub(crate) fn config_prop(key: &str) -> Option<&'static Prop> {
    CONFIG.iter().find(|p| p.name.matches(key))
}

/// Checks one config value as `update_vm`'s schema does (for scenario files): `key: message`.
pub(crate) fn check_config_value(key: &str, value: &str) -> Result<(), String> {
    let prop = config_prop(key).ok_or_else(|| format!("'{key}' is not an LXC config key"))?;
    super::value_error(prop, key, value).map_err(|e| format!("{key}: {e}"))
}
