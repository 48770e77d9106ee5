//! The property strings of qemu-server's config (`netN`, drives, `agent`, `vga`, `boot`,
//! `ipconfigN`, ...) as tables, and the formats and anchored patterns only qemu-server
//! registers, each with the message it `die`s with. Sources: `src/PVE/QemuServer.pm`,
//! `QemuServer/Drive.pm`, `QemuServer/Network.pm`, `QemuServer/Agent.pm`,
//! `QemuServer/Memory.pm`; pve-common `src/PVE/JSONSchema.pm` for the shared formats.

use super::Prop;
use super::formats as f;

fn fail(ok: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(msg()) }
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `parse_bridge_id` (JSONSchema.pm): `^[-_.\w\d]+$`.
pub(crate) fn bridge_id(v: &str) -> Result<(), String> {
    fail(f::word_dots(v), || format!("invalid bridge ID '{v}'"))
}

/// `pve_verify_urlencoded` (JSONSchema.pm).
pub(crate) fn urlencoded(v: &str) -> Result<(), String> {
    let ok = v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-%_.!~*'()".contains(c));
    fail(ok, || format!("invalid urlencoded string: {v}"))
}

/// `pve_verify_address` (JSONSchema.pm): an IP address or a DNS name.
pub(crate) fn address(v: &str) -> Result<(), String> {
    let ok = f::ip_with_ll_iface(v).is_ok_and(|()| !v.contains('%')) || f::dns_name(v).is_ok();
    fail(ok, || {
        format!("value does not look like a valid address: {v}")
    })
}

/// `verify_volume_id_or_absolute_path` (QemuServer.pm): an absolute path or a volume ID.
pub(crate) fn volume_or_path(v: &str) -> Result<(), String> {
    if v.starts_with('/') {
        return Ok(());
    }
    f::volume_id(v)
}

/// `verify_volume_id_or_qm_path` (QemuServer.pm): also `none` and `cdrom`.
pub(crate) fn volume_or_qm_path(v: &str) -> Result<(), String> {
    if v == "none" || v == "cdrom" {
        return Ok(());
    }
    volume_or_path(v)
}

/// `verify_bootdev` (QemuServer.pm): a drive (not an EFI or TPM disk), `netN`, `usbN`, `hostpciN`.
pub(crate) fn boot_device(v: &str) -> Result<(), String> {
    let special = v.starts_with("efidisk") || v.starts_with("tpmstate");
    let indexed = |p: &'static str, n: u32| super::Name::Indexed(p, n).matches(v);
    let drive = indexed("ide", 4) || indexed("sata", 6) || indexed("scsi", 31);
    let ok = ((drive || indexed("virtio", 16)) && !special)
        || indexed("net", 32)
        || indexed("usb", 14)
        || indexed("hostpci", 16);
    fail(ok, || format!("invalid boot device '{v}'"))
}

/// `pve-hotplug-features` (`parse_hotplug_features` dies at the first unknown feature).
pub(crate) fn hotplug(v: &str) -> Result<(), String> {
    const KNOWN: &[&str] = &["network", "disk", "cpu", "memory", "usb", "cloudinit"];
    if v == "0" || v == "1" {
        return Ok(());
    }
    match crate::propstr::split_list(v)
        .into_iter()
        .find(|x| !KNOWN.contains(&x.as_str()))
    {
        Some(bad) => Err(format!("invalid hotplug feature '{bad}'")),
        None => Ok(()),
    }
}

/// `pve-vm-cpu-conf` (`QemuServer/CPUConfig.pm`): the property string, then the built-in
/// model check of `validate_vm_cpu_conf`.
pub(crate) fn cpu_conf(v: &str) -> Result<(), String> {
    let props = super::parse_props(CPU, "cpu", v)?;
    let cputype = props.get("cputype").map_or("kvm64", String::as_str);
    let known = crate::qemu_format::is_cpu_model(cputype);
    fail(cputype.starts_with("custom-") || known, || {
        format!("Built-in cputype '{cputype}' is not defined (missing 'custom-' prefix?)")
    })
}

/// `trunks` of `$net_fmt`: `\d+(?:-\d+)?(?:;\d+(?:-\d+)?)*`.
pub(crate) fn trunks(v: &str) -> bool {
    v.split(';').all(|r| match r.split_once('-') {
        Some((a, b)) => digits(a) && digits(b),
        None => digits(r),
    })
}

/// `pve-qemu-machine`'s `type`: `(pc|pc(-i440fx)?-\d+(\.\d+)+(\+pve\d+)?(\.pxe)?|q35|pc-q35-...|virt(?:-\d+(\.\d+)+)?(\+pve\d+)?)`.
pub(crate) fn machine_type(t: &str) -> bool {
    let versioned = |prefix: &str| {
        t.strip_prefix(prefix).is_some_and(|rest| {
            let rest = rest.strip_suffix(".pxe").unwrap_or(rest);
            let (v, pve) = rest.split_once("+pve").unwrap_or((rest, "0"));
            digits(pve) && v.split('.').count() >= 2 && v.split('.').all(digits)
        })
    };
    matches!(t, "pc" | "q35" | "virt")
        || ["pc-i440fx-", "pc-", "pc-q35-", "virt-"]
            .iter()
            .any(|p| versioned(p))
}

/// `vmgenid`: a UUID, `0` or `1`.
pub(crate) fn vmgenid(v: &str) -> bool {
    let uuid = v.len() == 36
        && v.char_indices().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    uuid || v == "0" || v == "1"
}

/// `serialN`: `(/dev/[^,]+|socket)`.
pub(crate) fn serial(v: &str) -> bool {
    v == "socket"
        || v.strip_prefix("/dev/")
            .is_some_and(|d| !d.is_empty() && !d.contains(','))
}

/// `parallelN`: `/dev/parport\d+|/dev/usb/lp\d+`.
pub(crate) fn parallel(v: &str) -> bool {
    v.strip_prefix("/dev/parport")
        .or_else(|| v.strip_prefix("/dev/usb/lp"))
        .is_some_and(digits)
}

/// `bootdisk`: `(ide|sata|scsi|virtio)\d+`.
pub(crate) fn bootdisk(v: &str) -> bool {
    ["ide", "sata", "scsi", "virtio"]
        .iter()
        .any(|p| v.strip_prefix(p).is_some_and(digits))
}

/// `boot`'s `legacy`: `[acdn]{1,4}`.
pub(crate) fn legacy_boot(v: &str) -> bool {
    (1..=4).contains(&v.len()) && v.chars().all(|c| "acdn".contains(c))
}

/// `startdate`: `(now|\d{4}-\d{1,2}-\d{1,2}(T\d{1,2}:\d{1,2}:\d{1,2})?)`.
pub(crate) fn startdate(v: &str) -> bool {
    let (date, time) = v.split_once('T').unwrap_or((v, ""));
    let parts = |s: &str, n: usize| s.split(if n == 3 { '-' } else { ':' }).count() == n;
    v == "now"
        || (parts(date, 3)
            && date.split('-').all(digits)
            && (time.is_empty() || (parts(time, 3) && time.split(':').all(digits))))
}

/// `$net_fmt`'s NIC models (`$nic_model_list`), each also a `keyAlias` of `model`.
pub(crate) const NIC_MODELS: &[&str] = &[
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

const fn model_alias(model: &'static str) -> Prop {
    Prop::string(model).alias("macaddr", Some("model"))
}

/// `$net_fmt` (`QemuServer/Network.pm`).
pub(crate) const NET: &[Prop] = &[
    Prop::string("macaddr").format(f::mac_addr),
    Prop::string("model")
        .required()
        .default_key()
        .one_of(NIC_MODELS),
    model_alias("e1000"),
    model_alias("e1000-82540em"),
    model_alias("e1000-82544gc"),
    model_alias("e1000-82545em"),
    model_alias("e1000e"),
    model_alias("i82551"),
    model_alias("i82557b"),
    model_alias("i82559er"),
    model_alias("ne2k_isa"),
    model_alias("ne2k_pci"),
    model_alias("pcnet"),
    model_alias("rtl8139"),
    model_alias("virtio"),
    model_alias("vmxnet3"),
    Prop::string("bridge").format(bridge_id),
    Prop::int("queues").min(0.0).max(64.0),
    Prop::number("rate").min(0.0),
    Prop::int("tag").min(1.0).max(4094.0),
    Prop::string("trunks").pattern(trunks),
    Prop::boolean("firewall"),
    Prop::boolean("link_down"),
    Prop::int("mtu").min(1.0).max(65520.0),
    Prop::boolean("host-tunnel"),
];

/// `$ipconfig_fmt` (`QemuServer/Network.pm`).
pub(crate) const IPCONFIG: &[Prop] = &[
    Prop::string("ip").format(f::ipv4_config),
    Prop::string("gw").format(f::ipv4).requires("ip"),
    Prop::string("ip6").format(f::ipv6_config),
    Prop::string("gw6").format(f::ipv6).requires("ip6"),
];

const FORMATS: &[&str] = &["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"];

/// `$alldrive_fmt_with_alloc` (`QemuServer/Drive.pm`): every bus's options in one table
/// (PVE gives each bus its own subset), plus `import-from`.
pub(crate) const DRIVE: &[Prop] = &[
    Prop::string("file")
        .required()
        .default_key()
        .format(volume_or_qm_path),
    Prop::string("media").one_of(&["cdrom", "disk"]),
    Prop::boolean("snapshot"),
    Prop::string("cache").one_of(&["none", "writethrough", "writeback", "unsafe", "directsync"]),
    Prop::string("format").one_of(FORMATS),
    Prop::string("size").format(f::disk_size),
    Prop::boolean("backup"),
    Prop::boolean("replicate"),
    Prop::string("rerror").one_of(&["ignore", "report", "stop"]),
    Prop::string("werror").one_of(&["enospc", "ignore", "report", "stop"]),
    Prop::string("aio").one_of(&["native", "threads", "io_uring"]),
    Prop::string("discard").one_of(&["ignore", "on"]),
    Prop::boolean("detect_zeroes"),
    Prop::string("serial").format(urlencoded).max_len(60),
    Prop::boolean("shared"),
    Prop::int("bps"),
    Prop::int("bps_rd"),
    Prop::int("bps_wr"),
    Prop::number("mbps"),
    Prop::number("mbps_rd"),
    Prop::number("mbps_wr"),
    Prop::int("iops"),
    Prop::int("iops_rd"),
    Prop::int("iops_wr"),
    Prop::number("mbps_max"),
    Prop::number("mbps_rd_max"),
    Prop::number("mbps_wr_max"),
    Prop::int("iops_max"),
    Prop::int("iops_rd_max"),
    Prop::int("iops_wr_max"),
    Prop::int("bps_max_length").min(1.0),
    Prop::int("bps_rd_max_length").min(1.0),
    Prop::int("bps_wr_max_length").min(1.0),
    Prop::int("iops_max_length").min(1.0),
    Prop::int("iops_rd_max_length").min(1.0),
    Prop::int("iops_wr_max_length").min(1.0),
    Prop::boolean("iothread"),
    Prop::string("model").format(urlencoded).max_len(120),
    Prop::string("product"),
    Prop::int("queues").min(2.0),
    Prop::boolean("ro"),
    Prop::boolean("scsiblock"),
    Prop::boolean("ssd"),
    Prop::string("vendor"),
    Prop::string("wwn"),
    Prop::string("import-from").format(volume_or_path),
    Prop::string("cyls"),
    Prop::string("heads"),
    Prop::string("secs"),
    Prop::string("trans"),
];

/// `$efidisk_fmt` with `import-from`.
pub(crate) const EFIDISK: &[Prop] = &[
    Prop::string("file")
        .required()
        .default_key()
        .format(volume_or_qm_path),
    Prop::string("format").one_of(FORMATS),
    Prop::string("size").format(f::disk_size),
    Prop::string("efitype").one_of(&["2m", "4m"]),
    Prop::boolean("pre-enrolled-keys"),
    Prop::string("ms-cert").one_of(&["2011", "2023", "2023w", "2023k"]),
    Prop::string("import-from").format(volume_or_path),
];

/// `$tpmstate_fmt` with `import-from`.
pub(crate) const TPMSTATE: &[Prop] = &[
    Prop::string("file")
        .required()
        .default_key()
        .format(volume_or_qm_path),
    Prop::string("format").one_of(&["raw", "qcow2", "vmdk"]),
    Prop::string("size").format(f::disk_size),
    Prop::string("version").one_of(&["v1.2", "v2.0"]),
    Prop::string("import-from").format(volume_or_path),
];

/// `$unused_fmt`.
pub(crate) const UNUSED: &[Prop] = &[
    Prop::string("volume").alias("file", None),
    Prop::string("file")
        .required()
        .default_key()
        .format(f::volume_id),
];

/// `$agent_fmt` (`QemuServer/Agent.pm`).
pub(crate) const AGENT: &[Prop] = &[
    Prop::boolean("enabled").required().default_key(),
    Prop::boolean("fstrim_cloned_disks"),
    Prop::string("freeze-fs-on-backup").alias("freeze-fs", None),
    Prop::string("guest-fsfreeze").alias("freeze-fs", None),
    Prop::boolean("freeze-fs"),
    Prop::string("type").one_of(&["virtio", "isa"]),
];

/// `$memory_fmt` (`QemuServer/Memory.pm`).
pub(crate) const MEMORY: &[Prop] = &[Prop::int("current").required().default_key().min(16.0)];

/// `$vga_fmt` (QemuServer.pm).
pub(crate) const VGA: &[Prop] = &[
    Prop::string("type").default_key().one_of(&[
        "cirrus",
        "qxl",
        "qxl2",
        "qxl3",
        "qxl4",
        "none",
        "serial0",
        "serial1",
        "serial2",
        "serial3",
        "std",
        "virtio",
        "virtio-gl",
        "vmware",
    ]),
    Prop::int("memory").min(4.0).max(512.0),
    Prop::string("clipboard").one_of(&["vnc"]),
];

/// `$boot_fmt` (QemuServer.pm).
pub(crate) const BOOT: &[Prop] = &[
    Prop::string("legacy").default_key().pattern(legacy_boot),
    Prop::string("order").list(boot_device),
];

/// `pve-qemu-machine` (`QemuServer/Machine.pm`).
pub(crate) const MACHINE: &[Prop] = &[
    Prop::string("type")
        .default_key()
        .pattern(machine_type)
        .max_len(40),
    Prop::string("viommu").one_of(&["intel", "virtio"]),
    Prop::int("aw-bits").min(32.0).max(64.0),
    Prop::boolean("enable-s3"),
    Prop::boolean("enable-s4"),
];

/// `pve-vm-cpu-conf`'s keys (`QemuServer/CPUConfig.pm`).
const CPU: &[Prop] = &[
    Prop::string("cputype").default_key(),
    Prop::string("flags"),
    Prop::boolean("hidden"),
    Prop::string("hv-vendor-id"),
    Prop::string("phys-bits"),
    Prop::string("guest-phys-bits"),
];

/// `pve-qm-cicustom`.
pub(crate) const CICUSTOM: &[Prop] = &[
    Prop::string("meta").format(f::volume_id),
    Prop::string("network").format(f::volume_id),
    Prop::string("user").format(f::volume_id),
    Prop::string("vendor").format(f::volume_id),
];

/// `pve-qm-watchdog`.
pub(crate) const WATCHDOG: &[Prop] = &[
    Prop::string("model")
        .default_key()
        .one_of(&["i6300esb", "ib700"]),
    Prop::string("action").one_of(&["reset", "shutdown", "poweroff", "pause", "debug", "none"]),
];

/// `pve-qm-rng`.
pub(crate) const RNG: &[Prop] = &[
    Prop::string("source")
        .default_key()
        .one_of(&["/dev/urandom", "/dev/random", "/dev/hwrng"]),
    Prop::int("max_bytes"),
    Prop::int("period"),
];

/// `$audio_fmt`.
pub(crate) const AUDIO: &[Prop] = &[
    Prop::string("device")
        .required()
        .one_of(&["ich9-intel-hda", "intel-hda", "AC97"]),
    Prop::string("driver").one_of(&["spice", "none"]),
];
