//! `proxmox_virtual_environment_vm` (bpg/proxmox, SDKv2, `proxmoxtf/resource/vm/vm.go` and
//! its `disk/` and `network/` packages): every argument with the default its schema code
//! gives (not its documentation, where the two differ), whether a change forces replacement,
//! and the provider's validators.
//!
//! SDKv2 applies defaults to primitive arguments only: a block the configuration leaves out
//! (`cpu`, `memory`, `agent`, ...) is an empty list in the plan, as in Terraform's, and the
//! provider sends its defaults for it on create only (the desired-state mapping does that).

use super::builders::*;
use super::{AttrSchema, BlockSchema, Check, ResourceSchema, Sdk};

/// bpg's deprecation of `timeout_move_disk`.
const TIMEOUT_MOVE_DISK: &str = "This field is deprecated and will be removed in a future \
                                 release. An overall operation timeout (`timeout_create` / \
                                 `timeout_clone` / `timeout_migrate`) is used instead.";
/// bpg's deprecation of `cdrom.enabled` and `network_device.enabled`.
const ENABLED: &str = "Remove this attribute's configuration as it is no longer used and the \
                       attribute will be removed in the next major version of the provider.";

const CPU_TYPES: &[&str] = &[
    "486",
    "Broadwell",
    "Broadwell-IBRS",
    "Broadwell-noTSX",
    "Broadwell-noTSX-IBRS",
    "Cascadelake-Server",
    "Cascadelake-Server-noTSX",
    "Cascadelake-Server-v2",
    "Cascadelake-Server-v4",
    "Cascadelake-Server-v5",
    "Conroe",
    "Cooperlake",
    "Cooperlake-v2",
    "EPYC",
    "EPYC-Genoa",
    "EPYC-IBPB",
    "EPYC-Milan",
    "EPYC-Milan-v2",
    "EPYC-Rome",
    "EPYC-Rome-v2",
    "EPYC-Rome-v3",
    "EPYC-Rome-v4",
    "EPYC-v3",
    "EPYC-v4",
    "GraniteRapids",
    "Haswell",
    "Haswell-IBRS",
    "Haswell-noTSX",
    "Haswell-noTSX-IBRS",
    "Icelake-Client",
    "Icelake-Client-noTSX",
    "Icelake-Server",
    "Icelake-Server-noTSX",
    "Icelake-Server-v3",
    "Icelake-Server-v4",
    "Icelake-Server-v5",
    "Icelake-Server-v6",
    "IvyBridge",
    "IvyBridge-IBRS",
    "KnightsMill",
    "Nehalem",
    "Nehalem-IBRS",
    "Opteron_G1",
    "Opteron_G2",
    "Opteron_G3",
    "Opteron_G4",
    "Opteron_G5",
    "Penryn",
    "SandyBridge",
    "SandyBridge-IBRS",
    "SapphireRapids",
    "SapphireRapids-v2",
    "Skylake-Client",
    "Skylake-Client-IBRS",
    "Skylake-Client-noTSX-IBRS",
    "Skylake-Client-v4",
    "Skylake-Server",
    "Skylake-Server-IBRS",
    "Skylake-Server-noTSX-IBRS",
    "Skylake-Server-v4",
    "Skylake-Server-v5",
    "athlon",
    "core2duo",
    "coreduo",
    "host",
    "kvm32",
    "kvm64",
    "max",
    "pentium",
    "pentium2",
    "pentium3",
    "phenom",
    "qemu32",
    "qemu64",
    "x86-64-v2",
    "x86-64-v2-AES",
    "x86-64-v3",
    "x86-64-v4",
];

const KEYBOARDS: &[&str] = &[
    "da", "de", "de-ch", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is",
    "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sl", "sv", "tr",
];

const OS_TYPES: &[&str] = &[
    "l24", "l26", "other", "solaris", "w2k", "w2k3", "w2k8", "win7", "win8", "win10", "win11",
    "wvista", "wxp",
];

const FORMATS: &[&str] = &["qcow2", "raw", "vmdk"];

/// Disk interfaces as PVE numbers them: `ide0`-`ide3`, `sata0`-`sata5`, `scsi0`-`scsi30`,
/// `virtio0`-`virtio15` (qemu-server's `$MAX_*_DISKS`).
pub(super) const DISK_INTERFACE: Check = Check::Matches {
    pattern: r"^(ide[0-3]|sata[0-5]|scsi([0-9]|[12][0-9]|30)|virtio([0-9]|1[0-5]))$",
    expected: "a disk interface: ide0-ide3, sata0-sata5, scsi0-scsi30 or virtio0-virtio15",
};

fn one_of(a: AttrSchema, allowed: &'static [&'static str]) -> AttrSchema {
    checked(a, Check::OneOf(allowed))
}

fn between(a: AttrSchema, min: f64, max: f64) -> AttrSchema {
    checked(
        a,
        Check::Between {
            min,
            max,
            why: None,
        },
    )
}

pub(super) fn vm() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        db("acpi", true),
        one_of(ds("bios", "seabios"), &["ovmf", "seabios"]),
        oc("boot_order", ls()),
        ds("description", ""),
        ds("hook_script_file_id", ""),
        oc("hotplug", s()),
        one_of(ds("keyboard_layout", "en-us"), KEYBOARDS),
        ds("kvm_arguments", ""),
        ds("machine", ""),
        db("migrate", false),
        ds("name", ""),
        fnew(req("node_name", s())),
        db("on_boot", true),
        ds("pool_id", ""),
        db("protection", false),
        db("reboot", false),
        db("reboot_after_update", true),
        one_of(
            ds("scsi_hardware", "virtio-scsi-pci"),
            &[
                "lsi",
                "lsi53c810",
                "virtio-scsi-pci",
                "virtio-scsi-single",
                "megasas",
                "pvscsi",
            ],
        ),
        db("started", true),
        db("stop_on_destroy", false),
        db("purge_on_destroy", true),
        db("delete_unreferenced_disks_on_destroy", true),
        db("tablet_device", true),
        opt("tags", ls()),
        db("template", false),
        fnew(between(oc("vm_id", n()), 100.0, 2_147_483_647.0)),
        dn("timeout_clone", 1800.0),
        dn("timeout_create", 1800.0),
        dn("timeout_migrate", 1800.0),
        deprecated(dn("timeout_move_disk", 1800.0), Sdk::V2, TIMEOUT_MOVE_DISK),
        dn("timeout_reboot", 1800.0),
        dn("timeout_shutdown_vm", 1800.0),
        dn("timeout_start_vm", 1800.0),
        dn("timeout_stop_vm", 300.0),
        ro("ipv4_addresses", list_of(ls())),
        ro("ipv6_addresses", list_of(ls())),
        oc("mac_addresses", ls()),
        ro("network_interface_names", ls()),
    ];
    let mut blocks = vec![
        agent(),
        replacing(block(
            "amd_sev",
            Some(1),
            vec![
                one_of(ds("type", "std"), &["std", "es", "snp"]),
                db("allow_smt", true),
                db("kernel_hashes", false),
                db("no_debug", false),
                db("no_key_sharing", false),
            ],
            vec![],
        )),
        block(
            "audio_device",
            Some(1),
            vec![
                one_of(
                    ds("device", "intel-hda"),
                    &["AC97", "ich9-intel-hda", "intel-hda"],
                ),
                one_of(ds("driver", "spice"), &["spice"]),
                db("enabled", true),
            ],
            vec![],
        ),
        block(
            "cdrom",
            Some(1),
            vec![
                deprecated(db("enabled", false), Sdk::V2, ENABLED),
                ds("file_id", ""),
                checked(
                    ds("interface", "ide3"),
                    Check::Matches {
                        pattern: r"^(ide[0-3]|sata[0-5]|scsi([0-9]|1[0-3]))$",
                        expected: "a CD-ROM interface: ide0-ide3, sata0-sata5 or scsi0-scsi13",
                    },
                ),
            ],
            vec![],
        ),
        block(
            "clone",
            Some(1),
            vec![
                fnew(req("vm_id", n())),
                fnew(ds("datastore_id", "")),
                fnew(ds("node_name", "")),
                fnew(db("full", true)),
                fnew(dn("retries", 1.0)),
            ],
            vec![],
        ),
        cpu(),
        disk(),
        block(
            "efi_disk",
            Some(1),
            vec![
                ds("datastore_id", "local-lvm"),
                one_of(oc("file_format", s()), FORMATS),
                one_of(ds("type", "2m"), &["2m", "4m"]),
                db("pre_enrolled_keys", false),
            ],
            vec![],
        ),
        block(
            "hostpci",
            Some(16),
            vec![
                req("device", s()),
                opt("id", s()),
                opt("mapping", s()),
                opt("mdev", s()),
                opt("pcie", b()),
                opt("rombar", b()),
                opt("rom_file", s()),
                opt("xvga", b()),
            ],
            vec![],
        ),
        initialization(),
        block(
            "memory",
            Some(1),
            vec![
                between(dn("dedicated", 512.0), 64.0, 268_435_456.0),
                between(dn("floating", 0.0), 0.0, 268_435_456.0),
                between(dn("shared", 0.0), 0.0, 268_435_456.0),
                one_of(ds("hugepages", ""), &["", "1024", "2", "any"]),
                db("keep_hugepages", false),
            ],
            vec![],
        ),
        network_device(),
        block(
            "numa",
            None,
            vec![
                req("device", s()),
                req("cpus", s()),
                req("memory", n()),
                opt("hostnodes", s()),
                one_of(
                    ds("policy", "preferred"),
                    &["bind", "interleave", "preferred"],
                ),
            ],
            vec![],
        ),
        block(
            "operating_system",
            Some(1),
            vec![one_of(ds("type", "other"), OS_TYPES)],
            vec![],
        ),
        block(
            "rng",
            None,
            vec![req("source", s()), oc("max_bytes", n()), oc("period", n())],
            vec![],
        ),
        block(
            "serial_device",
            Some(4),
            vec![ds("device", "socket")],
            vec![],
        ),
        block(
            "smbios",
            Some(1),
            vec![
                ds("family", ""),
                ds("manufacturer", ""),
                ds("product", ""),
                ds("serial", ""),
                ds("sku", ""),
                oc("uuid", s()),
                ds("version", ""),
            ],
            vec![],
        ),
        block(
            "startup",
            Some(1),
            vec![
                dn("order", -1.0),
                dn("up_delay", -1.0),
                dn("down_delay", -1.0),
            ],
            vec![],
        ),
        block(
            "tpm_state",
            Some(1),
            vec![
                ds("datastore_id", "local-lvm"),
                one_of(ds("version", "v2.0"), &["v1.2", "v2.0"]),
            ],
            vec![],
        ),
        block(
            "usb",
            None,
            vec![opt("host", s()), opt("mapping", s()), db("usb3", false)],
            vec![],
        ),
        block(
            "vga",
            Some(1),
            vec![
                one_of(ds("clipboard", ""), &["", "vnc"]),
                between(dn("memory", 16.0), 4.0, 512.0),
                one_of(
                    ds("type", "std"),
                    &[
                        "cirrus",
                        "none",
                        "qxl",
                        "qxl2",
                        "qxl3",
                        "qxl4",
                        "serial0",
                        "serial1",
                        "serial2",
                        "serial3",
                        "std",
                        "virtio",
                        "virtio-gl",
                        "vmware",
                    ],
                ),
            ],
            vec![],
        ),
        block(
            "virtiofs",
            Some(8),
            vec![
                req("mapping", s()),
                one_of(
                    ds("cache", "auto"),
                    &["auto", "always", "metadata", "never"],
                ),
                db("direct_io", false),
                db("expose_acl", false),
                db("expose_xattr", false),
            ],
            vec![],
        ),
        block(
            "watchdog",
            Some(1),
            vec![
                db("enabled", false),
                one_of(ds("model", "i6300esb"), &["i6300esb", "ib700"]),
                one_of(
                    ds("action", "none"),
                    &["debug", "none", "pause", "poweroff", "reset", "shutdown"],
                ),
            ],
            vec![],
        ),
    ];
    blocks.sort_by_key(|b| b.name);
    ResourceSchema {
        type_name: "proxmox_virtual_environment_vm",
        body: super::BodySchema { attrs, blocks },
        generated: false,
    }
}

fn agent() -> BlockSchema {
    block(
        "agent",
        Some(1),
        vec![
            db("enabled", false),
            ds("timeout", "15m"),
            db("trim", false),
            one_of(ds("type", "virtio"), &["isa", "virtio"]),
        ],
        vec![block(
            "wait_for_ip",
            Some(1),
            vec![db("disabled", false), db("ipv4", false), db("ipv6", false)],
            vec![],
        )],
    )
}

fn cpu() -> BlockSchema {
    block(
        "cpu",
        Some(1),
        vec![
            one_of(ds("architecture", ""), &["", "aarch64", "x86_64"]),
            between(dn("cores", 1.0), 1.0, 2304.0),
            empty_list("flags"),
            between(dn("hotplugged", 0.0), 0.0, 2304.0),
            checked(
                dn("limit", 0.0),
                Check::Between {
                    min: 0.0,
                    max: 128.0,
                    why: None,
                },
            ),
            db("numa", false),
            between(dn("sockets", 1.0), 1.0, 16.0),
            checked(
                ds("type", "qemu64"),
                Check::OneOfOrMatches {
                    allowed: CPU_TYPES,
                    pattern: r"^custom-.+$",
                },
            ),
            between(oc("units", n()), 1.0, 262_144.0),
            ds("affinity", ""),
        ],
        vec![],
    )
}

fn disk() -> BlockSchema {
    let speed = block(
        "speed",
        Some(1),
        vec![
            dn("iops_read", 0.0),
            dn("iops_read_burstable", 0.0),
            dn("iops_write", 0.0),
            dn("iops_write_burstable", 0.0),
            dn("read", 0.0),
            dn("read_burstable", 0.0),
            dn("write", 0.0),
            dn("write_burstable", 0.0),
        ],
        vec![],
    );
    block(
        "disk",
        Some(31),
        vec![
            checked(req("interface", s()), DISK_INTERFACE),
            ds("datastore_id", "local-lvm"),
            oc("path_in_datastore", s()),
            one_of(oc("file_format", s()), FORMATS),
            one_of(ds("aio", "io_uring"), &["io_uring", "native", "threads"]),
            db("backup", true),
            one_of(
                ds("cache", "none"),
                &["none", "writethrough", "writeback", "unsafe", "directsync"],
            ),
            one_of(ds("discard", "ignore"), &["ignore", "on"]),
            fnew(ds("file_id", "")),
            ds("import_from", ""),
            db("iothread", false),
            dn("queues", 0.0),
            db("replicate", true),
            ds("serial", ""),
            checked(
                AttrSchema {
                    computed: true,
                    ..dn("size", 8.0)
                },
                Check::AtLeast(1.0),
            ),
            db("ssd", false),
        ],
        vec![speed],
    )
}

fn initialization() -> BlockSchema {
    let ip = |name| {
        block(
            name,
            Some(1),
            vec![ds("address", ""), ds("gateway", "")],
            vec![],
        )
    };
    block(
        "initialization",
        Some(1),
        vec![
            ds("datastore_id", "local-lvm"),
            checked(
                ds("interface", ""),
                Check::Matches {
                    pattern: r"^(|ide[0-3]|sata[0-5]|scsi([0-9]|[12][0-9]|30))$",
                    expected: "a cloud-init drive interface: ide0-ide3, sata0-sata5 or scsi0-scsi30",
                },
            ),
            one_of(oc("file_format", s()), FORMATS),
            fnew(oc("meta_data_file_id", s())),
            fnew(oc("network_data_file_id", s())),
            fnew(one_of(oc("type", s()), &["configdrive2", "nocloud"])),
            oc("upgrade", b()),
            fnew(oc("user_data_file_id", s())),
            fnew(oc("vendor_data_file_id", s())),
        ],
        vec![
            block(
                "dns",
                Some(1),
                vec![ds("domain", ""), opt("servers", ls())],
                vec![],
            ),
            block("ip_config", Some(32), vec![], vec![ip("ipv4"), ip("ipv6")]),
            block(
                "user_account",
                Some(1),
                vec![
                    opt("keys", ls()),
                    sens(ds("password", "")),
                    opt("username", s()),
                ],
                vec![],
            ),
        ],
    )
}

fn network_device() -> BlockSchema {
    block(
        "network_device",
        Some(32),
        vec![
            ds("bridge", "vmbr0"),
            opt("disconnected", b()),
            deprecated(db("enabled", true), Sdk::V2, ENABLED),
            db("firewall", false),
            checked(
                oc("mac_address", s()),
                Check::Matches {
                    pattern: r"^[A-Fa-f0-9]{2}(:[A-Fa-f0-9]{2}){5}$",
                    expected: "a MAC address like BC:24:11:00:00:01",
                },
            ),
            one_of(
                ds("model", "virtio"),
                &["e1000", "e1000e", "rtl8139", "virtio", "vmxnet3"],
            ),
            between(dn("queues", 0.0), 0.0, 64.0),
            dn("rate_limit", 0.0),
            dn("vlan_id", 0.0),
            opt("trunks", s()),
            dn("mtu", 0.0),
        ],
        vec![],
    )
}
