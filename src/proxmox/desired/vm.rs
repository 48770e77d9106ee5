//! `proxmox_virtual_environment_vm` -> the qemu-server config keys bpg sends for it
//! (`proxmoxtf/resource/vm/vm.go` `vmCreateCustom` and, for a clone, `vmCreateClone`'s one
//! config update), as [`DesiredValue`](crate::proxmox::plan::DesiredValue)s.
//!
//! A new VM gets bpg's defaults for the blocks it leaves out (`cpu`, `memory`, `agent`,
//! `operating_system`); a clone gets only what the configuration sets, and keeps the rest of
//! its template's config. Two keys exist only in the create request: `clone` (the source,
//! `vmid=9000,node=pve,storage=local-lvm,full=1`) and `template` (`1`: converted after
//! create); changing either replaces the VM.

use super::DesiredError;
use super::values::{Config, Marks, Object, bit, block, blocks, num, put, tags};
use crate::proxmox::plan::DesiredValue;

/// bpg's block defaults, sent on create when the block is left out.
const AGENT_DEFAULT: &str = "enabled=0,fstrim_cloned_disks=0,type=virtio";

/// The PVE config of one VM, create-only keys included.
pub(super) fn config(attrs: &Object, address: &str) -> Result<Config, DesiredError> {
    let clone = block(attrs, "clone");
    let new = clone.is_none();
    let mut config = Config::new();
    if let Some(source) = clone {
        put(&mut config, "clone", |m| {
            let mut fields = vec![format!("vmid={}", num(m.number(source.get("vm_id"))?))];
            if let Some(node) = m.text(source.get("node_name")).filter(|n| !n.is_empty()) {
                fields.push(format!("node={node}"));
            }
            if let Some(ds) = m.text(source.get("datastore_id")).filter(|d| !d.is_empty()) {
                fields.push(format!("storage={ds}"));
            }
            fields.push(format!("full={}", bit(m.flag(source.get("full"))?)));
            Some(fields.join(","))
        });
    }
    top_level(&mut config, attrs, new);
    cpu_memory(&mut config, attrs, new);
    devices(&mut config, attrs);
    disks(&mut config, attrs, address)?;
    cloud_init(&mut config, attrs);
    networks(&mut config, attrs);
    if new
        && !config.contains_key("boot")
        && let Some(order) = default_boot(attrs, &config)
    {
        config.insert("boot".to_owned(), DesiredValue::Known(order));
    }
    Ok(config)
}

/// A flag as bpg sends it on create (always) or in a clone's update (only when `send` says
/// the value differs from what the template would have).
fn flag_key(config: &mut Config, attrs: &Object, key: &str, name: &str, new: bool, send: bool) {
    put(config, key, |m| {
        let flag = m.flag(attrs.get(name))?;
        (new || flag == send).then(|| bit(flag).to_owned())
    });
}

fn top_level(config: &mut Config, attrs: &Object, new: bool) {
    flag_key(config, attrs, "acpi", "acpi", new, false);
    flag_key(config, attrs, "protection", "protection", new, true);
    flag_key(config, attrs, "tablet", "tablet_device", new, false);
    flag_key(config, attrs, "onboot", "on_boot", true, true);
    let text_unless = |config: &mut Config, key: &str, name: &str, default: &str| {
        put(config, key, |m| {
            let text = m.text(attrs.get(name))?;
            (new || text != default).then_some(text)
        });
    };
    text_unless(config, "bios", "bios", "seabios");
    text_unless(config, "keyboard", "keyboard_layout", "en-us");
    text_unless(config, "scsihw", "scsi_hardware", "virtio-scsi-pci");
    let non_empty = |config: &mut Config, key: &str, name: &str| {
        put(config, key, |m| {
            m.text(attrs.get(name)).filter(|t| !t.trim().is_empty())
        });
    };
    non_empty(config, "name", "name");
    non_empty(config, "hookscript", "hook_script_file_id");
    non_empty(config, "machine", "machine");
    non_empty(config, "pool", "pool_id");
    put(config, "description", |m| {
        let text = m.text(attrs.get("description"))?;
        let text = text.replace("\r\n", "\n").trim().to_owned();
        (!text.is_empty()).then_some(text)
    });
    // Optional + computed: unset is unknown, and then PVE keeps its own value.
    let mut marks = Marks::default();
    if let Some(hotplug) = marks.text(attrs.get("hotplug")).filter(|h| !h.is_empty()) {
        config.insert("hotplug".to_owned(), marks.finish(hotplug));
    }
    put(config, "tags", |m| Some(tags(m, attrs)));
    put(config, "template", |m| {
        m.flag(attrs.get("template"))?.then(|| "1".to_owned())
    });
    // Optional + computed: unset is unknown, and then the default order (or the template's).
    let mut boot_marks = Marks::default();
    let order = boot_marks.texts(attrs.get("boot_order"));
    if !order.is_empty() {
        let order = format!("order={}", order.join(";"));
        config.insert("boot".to_owned(), boot_marks.finish(order));
    }
    match block(attrs, "operating_system") {
        Some(os) => put(config, "ostype", |m| m.text(os.get("type"))),
        None if new => put(config, "ostype", |_| Some("other".to_owned())),
        None => {}
    }
    match block(attrs, "agent") {
        Some(agent) => put(config, "agent", |m| {
            Some(format!(
                "enabled={},fstrim_cloned_disks={},type={}",
                bit(m.flag(agent.get("enabled"))?),
                bit(m.flag(agent.get("trim"))?),
                m.text(agent.get("type"))?
            ))
        }),
        None if new => put(config, "agent", |_| Some(AGENT_DEFAULT.to_owned())),
        None => {}
    }
}

fn cpu_memory(config: &mut Config, attrs: &Object, new: bool) {
    let cpu = block(attrs, "cpu");
    if cpu.is_some() || new {
        let get = |name: &str| cpu.and_then(|c| c.get(name));
        put(config, "cores", |m| {
            Some(num(m.number(get("cores")).unwrap_or(1.0)))
        });
        put(config, "sockets", |m| {
            Some(num(m.number(get("sockets")).unwrap_or(1.0)))
        });
        put(config, "numa", |m| {
            Some(bit(m.flag(get("numa")).unwrap_or(false)).to_owned())
        });
        put(config, "cpu", |m| {
            let kind = m.text(get("type")).unwrap_or_else(|| "qemu64".to_owned());
            let flags = m.texts(get("flags"));
            Some(if flags.is_empty() {
                kind
            } else {
                format!("cputype={kind},flags={}", flags.join(";"))
            })
        });
        put(config, "vcpus", |m| {
            m.number(get("hotplugged")).filter(|n| *n > 0.0).map(num)
        });
        put(config, "cpulimit", |m| {
            m.number(get("limit")).filter(|n| *n > 0.0).map(num)
        });
        put(config, "affinity", |m| {
            m.text(get("affinity")).filter(|a| !a.is_empty())
        });
        let mut marks = Marks::default();
        if let Some(units) = marks.number(get("units")).filter(|u| *u > 0.0) {
            config.insert("cpuunits".to_owned(), marks.finish(num(units)));
        }
    }
    let memory = block(attrs, "memory");
    if memory.is_some() || new {
        let get = |name: &str| memory.and_then(|b| b.get(name));
        put(config, "memory", |m| {
            Some(num(m.number(get("dedicated")).unwrap_or(512.0)))
        });
        put(config, "balloon", |m| {
            Some(num(m.number(get("floating")).unwrap_or(0.0)))
        });
        put(config, "hugepages", |m| {
            m.text(get("hugepages")).filter(|h| !h.is_empty())
        });
        put(config, "keephugepages", |m| {
            m.flag(get("keep_hugepages"))?.then(|| "1".to_owned())
        });
        put(config, "ivshmem", |m| {
            let size = m.number(get("shared")).filter(|s| *s > 0.0)?;
            Some(format!("size={}", num(size)))
        });
    }
}

/// The simple devices: serial ports, display, audio, watchdog, RNG, SMBIOS, startup order,
/// passthrough, NUMA nodes and virtiofs shares.
fn devices(config: &mut Config, attrs: &Object) {
    for (i, serial) in blocks(attrs, "serial_device").into_iter().enumerate() {
        put(config, &format!("serial{i}"), |m| {
            m.text(serial.get("device"))
        });
    }
    if let Some(vga) = block(attrs, "vga") {
        put(config, "vga", |m| {
            let mut fields = Vec::new();
            fields.extend(
                m.text(vga.get("clipboard"))
                    .filter(|c| !c.is_empty())
                    .map(|c| format!("clipboard={c}")),
            );
            fields.extend(
                m.number(vga.get("memory"))
                    .filter(|n| *n > 0.0)
                    .map(|n| format!("memory={}", num(n))),
            );
            fields.extend(
                m.text(vga.get("type"))
                    .filter(|t| !t.is_empty())
                    .map(|t| format!("type={t}")),
            );
            Some(fields.join(","))
        });
    }
    if let Some(audio) = block(attrs, "audio_device") {
        put(config, "audio0", |m| {
            m.flag(audio.get("enabled"))?.then_some(())?;
            Some(format!(
                "device={},driver={}",
                m.text(audio.get("device"))?,
                m.text(audio.get("driver"))?
            ))
        });
    }
    if let Some(watchdog) = block(attrs, "watchdog") {
        put(config, "watchdog", |m| {
            m.flag(watchdog.get("enabled"))?.then_some(())?;
            Some(format!(
                "model={},action={}",
                m.text(watchdog.get("model"))?,
                m.text(watchdog.get("action"))?
            ))
        });
    }
    if let Some(rng) = blocks(attrs, "rng").first() {
        put(config, "rng0", |m| {
            let mut other = Marks::default();
            let max = other.number(rng.get("max_bytes")).unwrap_or(1024.0);
            let period = other.number(rng.get("period")).unwrap_or(1000.0);
            Some(format!(
                "source={},max_bytes={},period={}",
                m.text(rng.get("source"))?,
                num(max),
                num(period)
            ))
        });
    }
    if let Some(smbios) = block(attrs, "smbios") {
        put(config, "smbios1", |m| smbios1(m, smbios));
    }
    if let Some(startup) = block(attrs, "startup") {
        put(config, "startup", |m| {
            let mut fields = Vec::new();
            for (name, field) in [
                ("order", "order"),
                ("up_delay", "up"),
                ("down_delay", "down"),
            ] {
                if let Some(n) = m.number(startup.get(name)).filter(|n| *n >= 0.0) {
                    fields.push(format!("{field}={}", num(n)));
                }
            }
            Some(fields.join(","))
        });
    }
    passthrough(config, attrs);
}

/// `smbios1`: base64-encoded text fields (bpg sends `sku` nowhere, a bug atoll does not copy).
fn smbios1(m: &mut Marks, smbios: &Object) -> Option<String> {
    use base64::Engine as _;
    let mut fields = vec!["base64=1".to_owned()];
    for name in [
        "family",
        "manufacturer",
        "product",
        "serial",
        "sku",
        "version",
    ] {
        if let Some(text) = m.text(smbios.get(name)).filter(|t| !t.is_empty()) {
            let encoded = base64::engine::general_purpose::STANDARD.encode(text);
            fields.push(format!("{name}={encoded}"));
        }
    }
    let mut uuid_marks = Marks::default();
    if let Some(uuid) = uuid_marks
        .text(smbios.get("uuid"))
        .filter(|u| !u.is_empty())
    {
        fields.push(format!("uuid={uuid}"));
    }
    Some(fields.join(","))
}

fn passthrough(config: &mut Config, attrs: &Object) {
    for pci in blocks(attrs, "hostpci") {
        let Some(slot) = Marks::default().text(pci.get("device")) else {
            continue;
        };
        put(config, &slot, |m| {
            let mut fields = Vec::new();
            fields.extend(m.text(pci.get("id")).map(|id| format!("host={id}")));
            fields.extend(m.text(pci.get("mapping")).map(|id| format!("mapping={id}")));
            fields.extend(m.text(pci.get("mdev")).map(|v| format!("mdev={v}")));
            fields.push(format!(
                "pcie={}",
                bit(m.flag(pci.get("pcie")).unwrap_or(false))
            ));
            fields.push(format!(
                "rombar={}",
                bit(m.flag(pci.get("rombar")).unwrap_or(true))
            ));
            fields.extend(m.text(pci.get("rom_file")).map(|v| format!("romfile={v}")));
            fields.push(format!(
                "x-vga={}",
                bit(m.flag(pci.get("xvga")).unwrap_or(false))
            ));
            Some(fields.join(","))
        });
    }
    for (i, usb) in blocks(attrs, "usb").into_iter().enumerate() {
        put(config, &format!("usb{i}"), |m| {
            let mut fields = Vec::new();
            fields.extend(m.text(usb.get("host")).map(|h| format!("host={h}")));
            fields.extend(m.text(usb.get("mapping")).map(|h| format!("mapping={h}")));
            fields.push(format!(
                "usb3={}",
                bit(m.flag(usb.get("usb3")).unwrap_or(false))
            ));
            Some(fields.join(","))
        });
    }
    for numa in blocks(attrs, "numa") {
        let Some(slot) = Marks::default().text(numa.get("device")) else {
            continue;
        };
        put(config, &slot, |m| {
            let mut fields = vec![format!("cpus={}", m.text(numa.get("cpus"))?)];
            fields.extend(
                m.text(numa.get("hostnodes"))
                    .map(|h| format!("hostnodes={h}")),
            );
            fields.push(format!("memory={}", num(m.number(numa.get("memory"))?)));
            fields.extend(m.text(numa.get("policy")).map(|p| format!("policy={p}")));
            Some(fields.join(","))
        });
    }
    for (i, share) in blocks(attrs, "virtiofs").into_iter().enumerate() {
        put(config, &format!("virtiofs{i}"), |m| {
            let acl = m.flag(share.get("expose_acl"))?;
            let mut fields = vec![
                format!("dirid={}", m.text(share.get("mapping"))?),
                format!("cache={}", m.text(share.get("cache"))?),
                format!("direct-io={}", bit(m.flag(share.get("direct_io"))?)),
                format!("expose-acl={}", bit(acl)),
            ];
            if !acl {
                fields.push(format!(
                    "expose-xattr={}",
                    bit(m.flag(share.get("expose_xattr"))?)
                ));
            }
            Some(fields.join(","))
        });
    }
}

fn disks(config: &mut Config, attrs: &Object, address: &str) -> Result<(), DesiredError> {
    for disk in blocks(attrs, "disk") {
        let Some(interface) = Marks::default().text(disk.get("interface")) else {
            return Err(super::must_know(address, "disk.interface"));
        };
        if config.contains_key(&interface) {
            return Err(DesiredError::Invalid {
                address: address.to_owned(),
                why: format!("two disks use interface {interface}; give each its own"),
            });
        }
        put(config, &interface, |m| drive(m, disk, &interface));
    }
    if let Some(efi) = block(attrs, "efi_disk") {
        put(config, "efidisk0", |m| {
            let mut value = format!(
                "{}:1,efitype={},pre-enrolled-keys={}",
                m.text(efi.get("datastore_id"))?,
                m.text(efi.get("type"))?.to_ascii_lowercase(),
                bit(m.flag(efi.get("pre_enrolled_keys"))?)
            );
            let mut format_marks = Marks::default();
            if let Some(format) = format_marks.text(efi.get("file_format")) {
                value.push_str(&format!(",format={format}"));
            }
            Some(value)
        });
    }
    if let Some(tpm) = block(attrs, "tpm_state") {
        put(config, "tpmstate0", |m| {
            Some(format!(
                "{}:1,version={}",
                m.text(tpm.get("datastore_id"))?,
                m.text(tpm.get("version"))?.to_ascii_lowercase()
            ))
        });
    }
    if let Some(cdrom) = block(attrs, "cdrom") {
        let interface = Marks::default()
            .text(cdrom.get("interface"))
            .unwrap_or_else(|| "ide3".to_owned());
        put(config, &interface, |m| {
            let file = m.text(cdrom.get("file_id")).filter(|f| !f.is_empty());
            Some(format!(
                "{},media=cdrom",
                file.as_deref().unwrap_or("cdrom")
            ))
        });
    }
    Ok(())
}

/// One `disk` block as a drive: `local-lvm:8,...` to allocate (with `import-from` to fill it
/// from an image), or `local-lvm:vm-100-disk-1,...` to attach an existing volume.
fn drive(m: &mut Marks, disk: &Object, interface: &str) -> Option<String> {
    let datastore = m.text(disk.get("datastore_id"))?;
    let size = m.number(disk.get("size"))?;
    let mut path_marks = Marks::default();
    let existing = path_marks
        .text(disk.get("path_in_datastore"))
        .filter(|p| !p.is_empty());
    let mut fields = vec![match existing {
        Some(path) => format!("{datastore}:{path}"),
        None => format!("{datastore}:{}", num(size)),
    }];
    if let Some(image) = m.text(disk.get("import_from")).filter(|i| !i.is_empty()) {
        fields.push(format!("import-from={image}"));
    }
    let mut format_marks = Marks::default();
    if let Some(format) = format_marks.text(disk.get("file_format")) {
        fields.push(format!("format={format}"));
    }
    fields.push(format!("aio={}", m.text(disk.get("aio"))?));
    fields.push(format!("backup={}", bit(m.flag(disk.get("backup"))?)));
    if !interface.starts_with("ide") && !interface.starts_with("sata") {
        fields.push(format!("iothread={}", bit(m.flag(disk.get("iothread"))?)));
    }
    if let Some(queues) = m.number(disk.get("queues")).filter(|q| *q > 0.0) {
        fields.push(format!("queues={}", num(queues)));
    }
    if let Some(serial) = m.text(disk.get("serial")).filter(|s| !s.is_empty()) {
        fields.push(format!("serial={serial}"));
    }
    if !interface.starts_with("virtio") {
        fields.push(format!("ssd={}", bit(m.flag(disk.get("ssd"))?)));
    }
    fields.push(format!("discard={}", m.text(disk.get("discard"))?));
    fields.push(format!("cache={}", m.text(disk.get("cache"))?));
    if let Some(speed) = block(disk, "speed") {
        for (name, field) in [
            ("iops_read", "iops_rd"),
            ("iops_read_burstable", "iops_rd_max"),
            ("iops_write", "iops_wr"),
            ("iops_write_burstable", "iops_wr_max"),
            ("read", "mbps_rd"),
            ("read_burstable", "mbps_rd_max"),
            ("write", "mbps_wr"),
            ("write_burstable", "mbps_wr_max"),
        ] {
            if let Some(n) = m.number(speed.get(name)).filter(|n| *n > 0.0) {
                fields.push(format!("{field}={}", num(n)));
            }
        }
    }
    fields.push(format!("replicate={}", bit(m.flag(disk.get("replicate"))?)));
    Some(fields.join(","))
}

/// `initialization`: the cloud-init drive and its keys (qemu-server `PVE::QemuServer::Cloudinit`).
fn cloud_init(config: &mut Config, attrs: &Object) {
    let Some(init) = block(attrs, "initialization") else {
        return;
    };
    let interface = Marks::default()
        .text(init.get("interface"))
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| "ide2".to_owned());
    put(config, &interface, |m| {
        let mut value = format!("{}:cloudinit", m.text(init.get("datastore_id"))?);
        if let Some(format) = Marks::default().text(init.get("file_format")) {
            value.push_str(&format!(",format={format}"));
        }
        Some(value)
    });
    for (i, ip) in blocks(init, "ip_config").into_iter().enumerate() {
        put(config, &format!("ipconfig{i}"), |m| {
            let mut fields = Vec::new();
            for (family, addr, gw) in [("ipv4", "ip", "gw"), ("ipv6", "ip6", "gw6")] {
                let Some(family) = block(ip, family) else {
                    continue;
                };
                if let Some(g) = m.text(family.get("gateway")).filter(|g| !g.is_empty()) {
                    fields.push(format!("{gw}={g}"));
                }
                if let Some(a) = m.text(family.get("address")).filter(|a| !a.is_empty()) {
                    fields.push(format!("{addr}={a}"));
                }
            }
            (!fields.is_empty()).then(|| fields.join(","))
        });
    }
    if let Some(dns) = block(init, "dns") {
        put(config, "searchdomain", |m| {
            m.text(dns.get("domain")).filter(|d| !d.is_empty())
        });
        put(config, "nameserver", |m| {
            let servers = m.texts(dns.get("servers"));
            (!servers.is_empty()).then(|| servers.join(" "))
        });
    }
    if let Some(account) = block(init, "user_account") {
        put(config, "ciuser", |m| {
            m.text(account.get("username")).filter(|u| !u.is_empty())
        });
        put(config, "cipassword", |m| {
            m.text(account.get("password")).filter(|p| !p.is_empty())
        });
        put(config, "sshkeys", |m| {
            let keys = m.texts(account.get("keys"));
            (!keys.is_empty()).then(|| url_encode(&keys.join("\n")))
        });
    }
    put(config, "cicustom", |m| {
        let mut fields = Vec::new();
        for (name, part) in [
            ("meta_data_file_id", "meta"),
            ("network_data_file_id", "network"),
            ("user_data_file_id", "user"),
            ("vendor_data_file_id", "vendor"),
        ] {
            let mut own = Marks::default();
            if let Some(id) = own.text(init.get(name)).filter(|i| !i.is_empty()) {
                m.sensitive |= own.sensitive;
                fields.push(format!("{part}={id}"));
            }
        }
        (!fields.is_empty()).then(|| fields.join(","))
    });
    let mut type_marks = Marks::default();
    if let Some(kind) = type_marks.text(init.get("type")).filter(|t| !t.is_empty()) {
        config.insert("citype".to_owned(), type_marks.finish(kind));
    }
    let mut upgrade_marks = Marks::default();
    if let Some(upgrade) = upgrade_marks.flag(init.get("upgrade")) {
        config.insert(
            "ciupgrade".to_owned(),
            upgrade_marks.finish(bit(upgrade).to_owned()),
        );
    }
}

/// PVE's `sshkeys` is URL-encoded (qemu-server `uri_unescape`s it to validate): Go's
/// `url.QueryEscape` with spaces as `%20`, as bpg sends it.
fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3 / 2);
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char);
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn networks(config: &mut Config, attrs: &Object) {
    for (i, nic) in blocks(attrs, "network_device").into_iter().enumerate() {
        if Marks::default().flag(nic.get("enabled")) == Some(false) {
            continue;
        }
        put(config, &format!("net{i}"), |m| {
            let model = m.text(nic.get("model"))?;
            // Optional + computed: unknown means "not set", and PVE makes one.
            let mac = Marks::default()
                .text(nic.get("mac_address"))
                .filter(|s| !s.is_empty());
            let mut fields = vec![match mac {
                Some(mac) => format!("{model}={}", mac.to_ascii_uppercase()),
                None => model,
            }];
            fields.extend(
                m.text(nic.get("bridge"))
                    .filter(|b| !b.is_empty())
                    .map(|b| format!("bridge={b}")),
            );
            fields.push(format!("firewall={}", bit(m.flag(nic.get("firewall"))?)));
            if m.flag(nic.get("disconnected")) == Some(true) {
                fields.push("link_down=1".to_owned());
            }
            for (name, field) in [
                ("queues", "queues"),
                ("rate_limit", "rate"),
                ("vlan_id", "tag"),
                ("mtu", "mtu"),
            ] {
                if let Some(n) = m.number(nic.get(name)).filter(|n| *n > 0.0) {
                    fields.push(format!("{field}={}", num(n)));
                }
            }
            fields.extend(
                m.text(nic.get("trunks"))
                    .filter(|t| !t.is_empty())
                    .map(|t| format!("trunks={t}")),
            );
            Some(fields.join(","))
        });
    }
}

/// bpg's boot order when `boot_order` is unset: the CD-ROM, the first disk of each bus, then
/// the first NIC (only devices the VM has: qemu-server refuses an order naming others).
fn default_boot(attrs: &Object, config: &Config) -> Option<String> {
    let mut order = Vec::new();
    if let Some(cdrom) = block(attrs, "cdrom") {
        order.push(
            Marks::default()
                .text(cdrom.get("interface"))
                .unwrap_or_else(|| "ide3".to_owned()),
        );
    }
    for disk in ["ide0", "sata0", "scsi0", "virtio0"] {
        if blocks(attrs, "disk")
            .iter()
            .any(|d| Marks::default().text(d.get("interface")).as_deref() == Some(disk))
        {
            order.push(disk.to_owned());
        }
    }
    if config.contains_key("net0") {
        order.push("net0".to_owned());
    }
    (!order.is_empty()).then(|| format!("order={}", order.join(";")))
}

#[cfg(test)]
mod tests {
    use super::url_encode;

    #[test]
    fn ssh_keys_are_url_encoded_like_go_query_escape_with_spaces_as_percent_20() {
        assert_eq!(
            url_encode("ssh-ed25519 AAAA+b/c= me@host\nx"),
            "ssh-ed25519%20AAAA%2Bb%2Fc%3D%20me%40host%0Ax"
        );
    }
}
