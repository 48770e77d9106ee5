//! The parameters of the QEMU endpoints the simulator serves, as qemu-server declares them:
//! `$confdesc` and `$confdesc_cloudinit` of `src/PVE/QemuServer.pm` (as
//! `json_config_properties` hands them out, drives with allocation), and the `parameters` of
//! `src/PVE/API2/Qemu.pm` (`vmlist`, `create_vm`, `vmdiridx`, `vm_config`, `vm_pending`,
//! `update_vm`, `update_vm_async`, `destroy_vm`, `resize_vm`, `clone_vm`, `template`,
//! `cloudinit_pending`, `cloudinit_update`, `cloudinit_generated_config_dump`, `vm_status`,
//! `vm_start`, `vm_stop`, `vm_shutdown`, `vm_reboot`, `vm_suspend`, `vm_resume`) and
//! `src/PVE/API2/Qemu/Agent.pm` (node and vmid only). Property strings: `qemu_formats.rs`.

use super::formats as f;
use super::qemu_formats as q;
use super::{Prop, Schema};

/// `pve-node` and `pve-vmid`.
const NODE_VMID: &[Prop] = &[
    Prop::string("node").required().format(f::node),
    Prop::int("vmid")
        .required()
        .format(f::vmid)
        .min(100.0)
        .max(999_999_999.0),
];

const LOCKS: &[&str] = &[
    "backup",
    "clone",
    "create",
    "migrate",
    "rollback",
    "snapshot",
    "snapshot-delete",
    "suspending",
    "suspended",
];

/// `PVE::Tools::kvmkeymaplist`.
const KEYMAPS: &[&str] = &[
    "de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is",
    "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr",
];

const OSTYPES: &[&str] = &[
    "other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24",
    "l26", "solaris",
];

/// `$numa_fmt` (`QemuServer/Memory.pm`).
const NUMA: &[Prop] = &[
    Prop::string("cpus").required(),
    Prop::string("hostnodes"),
    Prop::number("memory"),
    Prop::string("policy").one_of(&["preferred", "bind", "interleave"]),
];

/// `$usb_fmt` (`QemuServer/USB.pm`).
const USB: &[Prop] = &[
    Prop::string("host").default_key(),
    Prop::string("mapping"),
    Prop::boolean("usb3"),
];

/// `$hostpci_fmt` (`QemuServer/PCI.pm`).
const HOSTPCI: &[Prop] = &[
    Prop::string("host").default_key(),
    Prop::string("mapping"),
    Prop::boolean("rombar"),
    Prop::string("romfile"),
    Prop::boolean("pcie"),
    Prop::boolean("x-vga"),
    Prop::boolean("legacy-igd"),
    Prop::string("mdev"),
    Prop::string("device-id"),
    Prop::string("vendor-id"),
    Prop::string("sub-device-id"),
    Prop::string("sub-vendor-id"),
];

/// `$virtiofs_fmt` (`QemuServer/Virtiofs.pm`).
const VIRTIOFS: &[Prop] = &[
    Prop::string("dirid").required().default_key(),
    Prop::string("cache").one_of(&["auto", "always", "metadata", "never"]),
    Prop::boolean("direct-io"),
    Prop::boolean("expose-acl"),
    Prop::boolean("expose-xattr"),
    Prop::boolean("writeback"),
];

/// `$confdesc` and `$confdesc_cloudinit`, without the keys `json_config_properties` skips
/// (`parent`, `snaptime`, `vmstate`, `meta`, `runningmachine`, `runningcpu`,
/// `running-nets-host-mtu`).
pub(crate) const CONFIG: &[Prop] = &[
    Prop::boolean("onboot"),
    Prop::boolean("autostart"),
    Prop::string("hotplug").format(q::hotplug),
    Prop::boolean("reboot"),
    Prop::string("lock").one_of(LOCKS),
    Prop::number("cpulimit").min(0.0).max(128.0),
    Prop::int("cpuunits").min(1.0).max(262_144.0),
    Prop::string("memory").props(q::MEMORY),
    Prop::string("amd-sev"),
    Prop::string("intel-tdx"),
    Prop::int("balloon").min(0.0),
    Prop::int("shares").min(0.0).max(50_000.0),
    Prop::string("keyboard").one_of(KEYMAPS),
    Prop::string("name").format(f::dns_name),
    Prop::string("scsihw").one_of(&[
        "lsi",
        "lsi53c810",
        "virtio-scsi-pci",
        "virtio-scsi-single",
        "megasas",
        "pvscsi",
    ]),
    Prop::string("description").max_len(8192),
    Prop::string("ostype").one_of(OSTYPES),
    Prop::string("boot").props(q::BOOT),
    Prop::string("bootdisk").pattern(q::bootdisk),
    Prop::int("smp").min(1.0),
    Prop::int("sockets").min(1.0),
    Prop::int("cores").min(1.0),
    Prop::boolean("numa"),
    Prop::string("hugepages").one_of(&["any", "2", "1024"]),
    Prop::boolean("keephugepages"),
    Prop::int("vcpus").min(1.0),
    Prop::boolean("acpi"),
    Prop::string("agent").props(q::AGENT),
    Prop::boolean("kvm"),
    Prop::boolean("tdf"),
    Prop::boolean("localtime"),
    Prop::boolean("freeze"),
    Prop::string("vga").props(q::VGA),
    Prop::string("watchdog").props(q::WATCHDOG),
    Prop::string("startdate").pattern(q::startdate),
    Prop::string("startup").format(f::startup_order),
    Prop::boolean("template"),
    Prop::string("args"),
    Prop::boolean("tablet"),
    Prop::int("migrate_speed").min(0.0),
    Prop::number("migrate_downtime").min(0.0),
    Prop::string("cdrom").props(q::DRIVE),
    Prop::string("cpu").format(q::cpu_conf),
    Prop::string("vmstatestorage").format(f::storage_id),
    Prop::string("machine").props(q::MACHINE),
    Prop::string("arch").one_of(&["x86_64", "aarch64"]),
    Prop::string("smbios1").max_len(512),
    Prop::boolean("protection"),
    Prop::string("bios").one_of(&["seabios", "ovmf"]),
    Prop::string("vmgenid").pattern(q::vmgenid),
    Prop::string("hookscript").format(f::volume_id),
    Prop::string("ivshmem"),
    Prop::string("audio0").props(q::AUDIO),
    Prop::string("spice_enhancements"),
    Prop::string("tags").list(f::tag),
    Prop::string("rng0").props(q::RNG),
    Prop::string("affinity"),
    Prop::boolean("allow-ksm"),
    Prop::string("citype").one_of(&["configdrive2", "nocloud", "opennebula"]),
    Prop::string("ciuser"),
    Prop::string("cipassword"),
    Prop::boolean("ciupgrade"),
    Prop::string("cicustom").props(q::CICUSTOM),
    Prop::string("searchdomain"),
    Prop::string("nameserver").list(q::address),
    Prop::string("sshkeys").format(q::urlencoded),
    Prop::indexed("net", 32).props(q::NET),
    Prop::indexed("ipconfig", 32).props(q::IPCONFIG),
    Prop::indexed("numa", 8).props(NUMA),
    Prop::indexed("virtiofs", 10).props(VIRTIOFS),
    Prop::indexed("serial", 4).pattern(q::serial),
    Prop::indexed("parallel", 3).pattern(q::parallel),
    Prop::indexed("hostpci", 16).props(HOSTPCI),
    Prop::indexed("usb", 14).props(USB),
    Prop::indexed("ide", 4).props(q::DRIVE),
    Prop::indexed("sata", 6).props(q::DRIVE),
    Prop::indexed("scsi", 31).props(q::DRIVE),
    Prop::indexed("virtio", 16).props(q::DRIVE),
    Prop::string("efidisk0").props(q::EFIDISK),
    Prop::string("tpmstate0").props(q::TPMSTATE),
    Prop::indexed("unused", 256).props(q::UNUSED),
];

/// `create_vm`'s own parameters besides the config.
const CREATE_EXTRA: &[Prop] = &[
    Prop::string("archive").max_len(255),
    Prop::string("storage").format(f::storage_id),
    Prop::boolean("force").requires("archive"),
    Prop::boolean("unique").requires("archive"),
    Prop::boolean("live-restore"),
    Prop::string("pool").format(f::pool_id),
    Prop::int("bwlimit").min(0.0),
    Prop::boolean("start"),
    Prop::boolean("ha-managed"),
    Prop::string("import-working-storage").format(f::storage_id),
];

/// `update_vm`'s own parameters besides the config.
const UPDATE_EXTRA: &[Prop] = &[
    Prop::boolean("skiplock"),
    Prop::string("delete").list(f::configid),
    Prop::string("revert").list(f::configid),
    Prop::boolean("force").requires("delete"),
    Prop::string("digest").max_len(40),
];

/// `update_vm_async`'s parameters besides `update_vm`'s.
const UPDATE_ASYNC_EXTRA: &[Prop] = &[
    Prop::int("background_delay").min(1.0).max(30.0),
    Prop::string("import-working-storage").format(f::storage_id),
];

/// `GET /nodes/{node}/qemu` (`vmlist`).
pub(crate) static LIST: Schema = Schema {
    parts: &[&[
        Prop::string("node").required().format(f::node),
        Prop::boolean("full"),
    ]],
};
/// `POST /nodes/{node}/qemu` (`create_vm`).
pub(crate) static CREATE: Schema = Schema {
    parts: &[NODE_VMID, CREATE_EXTRA, CONFIG],
};
/// Endpoints with only `node` and `vmid`: the index, `pending`, `status/current`, the
/// cloud-init pending list and regeneration, the guest-agent calls.
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
/// `POST .../config` (`update_vm_async`).
pub(crate) static CONFIG_POST: Schema = Schema {
    parts: &[NODE_VMID, UPDATE_EXTRA, UPDATE_ASYNC_EXTRA, CONFIG],
};
/// `DELETE .../{vmid}` (`destroy_vm`).
pub(crate) static DESTROY: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("skiplock"),
            Prop::boolean("purge"),
            Prop::boolean("destroy-unreferenced-disks"),
        ],
    ],
};
/// `PUT .../resize` (`resize_vm`): `disk` is one of `valid_drive_names`.
pub(crate) static RESIZE: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("skiplock"),
            Prop::string("disk").required().computed(drive_names),
            Prop::string("size").required().pattern(f::resize_size),
            Prop::string("digest").max_len(40),
        ],
    ],
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
            Prop::string("name").format(f::dns_name),
            Prop::string("description"),
            Prop::string("pool").format(f::pool_id),
            Prop::string("snapname").format(f::configid).max_len(40),
            Prop::string("storage").format(f::storage_id),
            Prop::string("format").one_of(&["raw", "qcow2", "vmdk"]),
            Prop::boolean("full"),
            Prop::string("target").format(f::node),
            Prop::int("bwlimit").min(0.0),
        ],
    ],
};
/// `POST .../template` (`template`).
pub(crate) static TEMPLATE: Schema = Schema {
    parts: &[NODE_VMID, &[Prop::string("disk").computed(drive_names)]],
};
/// `GET .../cloudinit/dump` (`cloudinit_generated_config_dump`).
pub(crate) static CLOUDINIT_DUMP: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[Prop::string("type")
            .required()
            .one_of(&["user", "network", "meta"])],
    ],
};
/// `POST .../status/start` (`vm_start`).
pub(crate) static START: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("skiplock"),
            Prop::string("stateuri").max_len(128),
            Prop::string("migratedfrom").format(f::node),
            Prop::string("migration_type").one_of(&["secure", "insecure"]),
            Prop::string("migration_network"),
            Prop::string("machine").props(q::MACHINE),
            Prop::string("force-cpu"),
            Prop::string("targetstorage"),
            Prop::int("timeout").min(0.0),
            Prop::boolean("with-conntrack-state"),
            Prop::string("nets-host-mtu"),
        ],
    ],
};
/// `POST .../status/stop` (`vm_stop`).
pub(crate) static STOP: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("skiplock"),
            Prop::string("migratedfrom").format(f::node),
            Prop::int("timeout").min(0.0),
            Prop::boolean("keepActive"),
            Prop::boolean("overrule-shutdown"),
        ],
    ],
};
/// `POST .../status/shutdown` (`vm_shutdown`).
pub(crate) static SHUTDOWN: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("skiplock"),
            Prop::int("timeout").min(0.0),
            Prop::boolean("forceStop"),
            Prop::boolean("keepActive"),
        ],
    ],
};
/// `POST .../status/reboot` (`vm_reboot`).
pub(crate) static REBOOT: Schema = Schema {
    parts: &[NODE_VMID, &[Prop::int("timeout").min(0.0)]],
};
/// `POST .../status/suspend` (`vm_suspend`).
pub(crate) static SUSPEND: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[
            Prop::boolean("skiplock"),
            Prop::boolean("todisk"),
            Prop::string("statestorage")
                .format(f::storage_id)
                .requires("todisk"),
        ],
    ],
};
/// `POST .../status/resume` (`vm_resume`).
pub(crate) static RESUME: Schema = Schema {
    parts: &[
        NODE_VMID,
        &[Prop::boolean("skiplock"), Prop::boolean("nocheck")],
    ],
};

/// The power action's schema, by the `{action}` path segment.
pub(crate) fn power(action: &str) -> Option<&'static Schema> {
    match action {
        "start" => Some(&START),
        "stop" => Some(&STOP),
        "shutdown" => Some(&SHUTDOWN),
        "reboot" => Some(&REBOOT),
        "suspend" => Some(&SUSPEND),
        "resume" => Some(&RESUME),
        _ => None,
    }
}

/// `PVE::QemuServer::Drive::valid_drive_names`, in its order: ide, scsi, virtio, sata,
/// efidisk0, tpmstate0.
pub(crate) fn drive_names() -> Vec<String> {
    let buses = [("ide", 4), ("scsi", 31), ("virtio", 16), ("sata", 6)];
    buses
        .iter()
        .flat_map(|(b, n)| (0..*n).map(move |i| format!("{b}{i}")))
        .chain(["efidisk0".to_owned(), "tpmstate0".to_owned()])
        .collect()
}

/// The `$confdesc` entry of a config key, if there is one.
pub(crate) fn config_prop(key: &str) -> Option<&'static Prop> {
    CONFIG.iter().find(|p| p.name.matches(key))
}
