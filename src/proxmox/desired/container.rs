//! `proxmox_virtual_environment_container` -> the PVE config keys it sends
//! (reference/proxmox.md section 2), as [`DesiredValue`]s.
//!
//! A clone (`clone { vm_id }`, bpg's `containerCreateClone`) holds the pseudo key `clone`
//! (`vmid=9000,node=pve,storage=local-lvm,full=1`, sent as the clone request) instead of the
//! create-only keys of a new container (`ostemplate`, `storage`), and keeps its template's root
//! disk: `disk` only grows it (a size other than bpg's default 4).

use super::values::{Config, Marks, Object, bit, block, blocks, num, put, tags};
use super::{CONTAINER, DesiredError};
use crate::proxmox::plan::DesiredValue;

/// bpg's `disk.size` default: a clone keeps its template's size unless another is set.
const DEFAULT_DISK_GB: f64 = 4.0;

/// The PVE config of one container, create-only keys included.
pub(super) fn config(attrs: &Object, address: &str) -> Result<Config, DesiredError> {
    refuse_unsupported(attrs, address)?;
    let clone = block(attrs, "clone");
    let mut config = Config::new();
    if let Some(source) = clone {
        clone_source(&mut config, source);
    }
    top_level(&mut config, attrs, clone.is_none());
    cpu_memory_console(&mut config, attrs);
    features_startup(&mut config, attrs);
    initialization(&mut config, attrs);
    disk(&mut config, attrs, clone.is_none());
    networks(&mut config, attrs);
    refuse_host_managed_slaac(&config, address)?;
    mount_points(&mut config, attrs);
    devices(&mut config, attrs);
    Ok(config)
}

/// pve-container `update_pct_config` (PVE 9.1+): a NIC whose addresses the host manages cannot
/// take IPv6 by SLAAC, unless its link is down; PVE refuses the whole create or update.
fn refuse_host_managed_slaac(config: &Config, address: &str) -> Result<(), DesiredError> {
    for (key, value) in config {
        let (true, DesiredValue::Known(net)) = (key.starts_with("net"), value) else {
            continue;
        };
        let has = |field: &str| net.split(',').any(|f| f == field);
        if has("host-managed=1") && has("ip6=auto") && !has("link_down=1") {
            let index = key.trim_start_matches("net");
            return Err(DesiredError::Invalid {
                address: address.to_owned(),
                why: format!(
                    "network_interface[{index}] is host_managed and initialization.ip_config[{index}] \
                     asks for IPv6 by SLAAC (address = \"auto\"): Proxmox VE refuses it (\"{key}: \
                     SLAAC is not supported for host-managed network configuration.\"); use \
                     \"dhcp\" or a static IPv6 address, or drop host_managed"
                ),
            });
        }
    }
    Ok(())
}

/// A safety net behind the loader, which refuses the same blocks where they are written
/// (`tfconfig::schema::refusal`); and what a clone cannot have: the root password and SSH
/// keys, which Proxmox VE sets only when it creates a container from an OS template.
fn refuse_unsupported(attrs: &Object, address: &str) -> Result<(), DesiredError> {
    let unsupported = |what: &str, why: &str| DesiredError::Unsupported {
        address: address.to_owned(),
        what: what.to_owned(),
        why: why.to_owned(),
    };
    for name in ["idmap"] {
        let Some(why) = tfconfig::schema::refusal(CONTAINER, name) else {
            continue;
        };
        if !blocks(attrs, name).is_empty() {
            return Err(unsupported(name, why));
        }
    }
    let account = block(attrs, "initialization").and_then(|i| block(i, "user_account"));
    if block(attrs, "clone").is_some() && account.is_some() {
        return Err(unsupported(
            "initialization.user_account",
            "Proxmox VE sets a container's root password and SSH keys only when it creates \
             it from an OS template; a clone keeps its template's. Remove user_account, or \
             create the container from operating_system.template_file_id",
        ));
    }
    Ok(())
}

/// The clone request's source, as the `clone` pseudo key.
fn clone_source(config: &mut Config, source: &Object) {
    put(config, "clone", |m| {
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

fn top_level(config: &mut Config, attrs: &Object, new: bool) {
    put(config, "description", |m| {
        let text = m.text(attrs.get("description"))?;
        Some(text.replace("\r\n", "\n").trim().to_owned())
    });
    put(config, "hookscript", |m| {
        m.text(attrs.get("hook_script_file_id"))
    });
    put(config, "pool", |m| {
        m.text(attrs.get("pool_id")).filter(|p| !p.is_empty())
    });
    put(config, "protection", |m| {
        m.flag(attrs.get("protection")).map(|f| bit(f).to_owned())
    });
    put(config, "onboot", |m| {
        m.flag(attrs.get("start_on_boot"))
            .map(|f| bit(f).to_owned())
    });
    put(config, "template", |m| {
        m.flag(attrs.get("template")).map(|f| bit(f).to_owned())
    });
    // a clone inherits its template's; bpg's default (false) must not ask to replace it
    put(config, "unprivileged", |m| {
        let flag = m.flag(attrs.get("unprivileged"))?;
        (new || flag).then(|| bit(flag).to_owned())
    });
    put(config, "tags", |m| Some(tags(m, attrs)));
    put(config, "env", |m| {
        let vars = m.text_map(attrs.get("environment_variables"));
        let pairs: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
        Some(pairs.join("\0"))
    });
    if let Some(os) = block(attrs, "operating_system") {
        if new {
            put(config, "ostemplate", |m| m.text(os.get("template_file_id")));
        }
        put(config, "ostype", |m| m.text(os.get("type")));
    }
}

fn cpu_memory_console(config: &mut Config, attrs: &Object) {
    if let Some(cpu) = block(attrs, "cpu") {
        put(config, "arch", |m| m.text(cpu.get("architecture")));
        put(config, "cores", |m| m.number(cpu.get("cores")).map(num));
        put(config, "cpulimit", |m| m.number(cpu.get("limit")).map(num));
        // Optional + computed: unset is unknown here, and then PVE keeps its own value.
        let mut marks = Marks::default();
        if let Some(units) = marks.number(cpu.get("units")).filter(|u| *u > 0.0) {
            config.insert("cpuunits".to_owned(), marks.finish(num(units)));
        }
    }
    if let Some(memory) = block(attrs, "memory") {
        put(config, "memory", |m| {
            m.number(memory.get("dedicated")).map(num)
        });
        put(config, "swap", |m| m.number(memory.get("swap")).map(num));
    }
    if let Some(console) = block(attrs, "console") {
        put(config, "console", |m| {
            m.flag(console.get("enabled")).map(|f| bit(f).to_owned())
        });
        put(config, "cmode", |m| m.text(console.get("type")));
        put(config, "tty", |m| {
            m.number(console.get("tty_count")).map(num)
        });
    }
}

fn features_startup(config: &mut Config, attrs: &Object) {
    if let Some(features) = block(attrs, "features") {
        put(config, "features", |m| {
            let mut fields = Vec::new();
            for flag in ["fuse", "keyctl", "mknod"] {
                if m.flag(features.get(flag)) == Some(true) {
                    fields.push(format!("{flag}=1"));
                }
            }
            let mounts = m.texts(features.get("mount"));
            if !mounts.is_empty() {
                fields.push(format!("mount={}", mounts.join(";")));
            }
            if m.flag(features.get("nesting")) == Some(true) {
                fields.push("nesting=1".to_owned());
            }
            Some(fields.join(","))
        });
    }
    put(config, "startup", |m| {
        let Some(startup) = block(attrs, "startup") else {
            return Some(String::new());
        };
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

fn initialization(config: &mut Config, attrs: &Object) {
    let Some(init) = block(attrs, "initialization") else {
        return;
    };
    put(config, "hostname", |m| {
        m.text(init.get("hostname")).filter(|h| !h.is_empty())
    });
    put(config, "entrypoint", |m| {
        m.text(init.get("entrypoint")).filter(|e| !e.is_empty())
    });
    if let Some(dns) = block(init, "dns") {
        put(config, "searchdomain", |m| m.text(dns.get("domain")));
        put(config, "nameserver", |m| {
            let mut servers = m.texts(dns.get("servers"));
            if servers.is_empty() {
                servers.extend(m.text(dns.get("server")).filter(|s| !s.is_empty()));
            }
            Some(servers.join(" "))
        });
    }
    if let Some(account) = block(init, "user_account") {
        put(config, "ssh-public-keys", |m| {
            let keys = m.texts(account.get("keys"));
            (!keys.is_empty()).then(|| keys.join("\n"))
        });
        put(config, "password", |m| {
            m.text(account.get("password")).filter(|p| !p.is_empty())
        });
    }
}

fn disk(config: &mut Config, attrs: &Object, new: bool) {
    let Some(disk) = block(attrs, "disk") else {
        return;
    };
    if new {
        put(config, "storage", |m| m.text(disk.get("datastore_id")));
    }
    put(config, "rootfs", |m| {
        let size = m.number(disk.get("size"))?;
        let mut value = if new {
            format!("{}:{}", m.text(disk.get("datastore_id"))?, num(size))
        } else if size != DEFAULT_DISK_GB {
            // the cloned volume, grown: `normalize_desired` puts the live volume in
            format!("size={}G", num(size))
        } else {
            String::new()
        };
        volume_flags(m, disk, &mut value, &[("acl", "acl"), ("quota", "quota")]);
        // bpg sends `replicate` only when set; off, PVE's default (replicate) stays
        if m.flag(disk.get("replicate")) == Some(true) {
            value.push_str(",replicate=1");
        }
        let value = value.trim_start_matches(',').to_owned();
        (!value.is_empty()).then_some(value)
    });
}

/// Appends `,field=1` for each true flag and `,mountoptions=a;b` when set.
fn volume_flags(m: &mut Marks, block: &Object, value: &mut String, flags: &[(&str, &str)]) {
    for (name, field) in flags {
        if m.flag(block.get(*name)) == Some(true) {
            value.push_str(&format!(",{field}=1"));
        }
    }
    let options = m.texts(block.get("mount_options"));
    if !options.is_empty() {
        value.push_str(&format!(",mountoptions={}", options.join(";")));
    }
}

fn networks(config: &mut Config, attrs: &Object) {
    let ip_configs = block(attrs, "initialization")
        .map(|init| blocks(init, "ip_config"))
        .unwrap_or_default();
    for (i, nic) in blocks(attrs, "network_interface").into_iter().enumerate() {
        let mut marks = Marks::default();
        if marks.flag(nic.get("enabled")) == Some(false) {
            continue;
        }
        put(config, &format!("net{i}"), |m| {
            let mut fields = vec![format!("name={}", m.text(nic.get("name"))?)];
            fields.extend(m.text(nic.get("bridge")).map(|b| format!("bridge={b}")));
            if m.flag(nic.get("firewall")) == Some(true) {
                fields.push("firewall=1".to_owned());
            }
            if m.flag(nic.get("host_managed")) == Some(true) {
                fields.push("host-managed=1".to_owned());
            }
            // Optional + computed: unknown means "not set", and PVE keeps or makes one.
            let mut mac_marks = Marks::default();
            if let Some(mac) = mac_marks
                .text(nic.get("mac_address"))
                .filter(|s| !s.is_empty())
            {
                fields.push(format!("hwaddr={mac}"));
            }
            for (name, field) in [("mtu", "mtu"), ("rate_limit", "rate"), ("vlan_id", "tag")] {
                if let Some(n) = m.number(nic.get(name)).filter(|n| *n > 0.0) {
                    fields.push(format!("{field}={}", num(n)));
                }
            }
            if let Some(ip) = ip_configs.get(i) {
                ip_fields(m, ip, &mut fields);
            }
            Some(fields.join(","))
        });
    }
}

fn ip_fields(m: &mut Marks, ip: &Object, fields: &mut Vec<String>) {
    for (family, addr_key, gw_key) in [("ipv4", "ip", "gw"), ("ipv6", "ip6", "gw6")] {
        let Some(family) = block(ip, family) else {
            continue;
        };
        if let Some(address) = m.text(family.get("address")).filter(|a| !a.is_empty()) {
            fields.push(format!("{addr_key}={address}"));
        }
        if let Some(gateway) = m.text(family.get("gateway")).filter(|g| !g.is_empty()) {
            fields.push(format!("{gw_key}={gateway}"));
        }
    }
}

fn mount_points(config: &mut Config, attrs: &Object) {
    for (i, mp) in blocks(attrs, "mount_point").into_iter().enumerate() {
        put(config, &format!("mp{i}"), |m| {
            let volume = m.text(mp.get("volume"))?;
            let size = m.text(mp.get("size")).filter(|s| !s.is_empty());
            let is_storage = !volume.starts_with('/') && !volume.contains(':');
            let mut value = match (&size, is_storage) {
                (Some(size), true) => format!("{volume}:{}", gigabytes(size)),
                (Some(size), false) => format!("{volume},size={size}"),
                (None, _) => volume,
            };
            value.push_str(&format!(",mp={}", m.text(mp.get("path"))?));
            let flags = [
                ("acl", "acl"),
                ("backup", "backup"),
                ("quota", "quota"),
                ("read_only", "ro"),
                ("shared", "shared"),
            ];
            volume_flags(m, mp, &mut value, &flags);
            if m.flag(mp.get("replicate")) == Some(false) {
                value.push_str(",replicate=0");
            }
            Some(value)
        });
    }
}

/// `10G` -> `10`, `512M` -> `0.5`: bpg sizes to the GB count PVE allocates.
fn gigabytes(size: &str) -> String {
    let size = size.trim();
    let (number, unit) = size.split_at(size.len().saturating_sub(1));
    let scale = match unit {
        "T" => 1024.0,
        "G" => 1.0,
        "M" => 1.0 / 1024.0,
        _ => return size.to_owned(),
    };
    number
        .parse::<f64>()
        .map_or_else(|_| size.to_owned(), |n| num(n * scale))
}

fn devices(config: &mut Config, attrs: &Object) {
    for (i, dev) in blocks(attrs, "device_passthrough").into_iter().enumerate() {
        put(config, &format!("dev{i}"), |m| {
            let mut fields = vec![m.text(dev.get("path"))?];
            if m.flag(dev.get("deny_write")) == Some(true) {
                fields.push("deny-write=1".to_owned());
            }
            for id in ["gid", "uid"] {
                if let Some(n) = m.number(dev.get(id)) {
                    fields.push(format!("{id}={}", num(n)));
                }
            }
            fields.extend(m.text(dev.get("mode")).map(|mode| format!("mode={mode}")));
            Some(fields.join(","))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::gigabytes;

    #[test]
    fn mount_point_sizes_become_allocation_gigabytes() {
        assert_eq!(gigabytes("10G"), "10");
        assert_eq!(gigabytes("1T"), "1024");
        assert_eq!(gigabytes("512M"), "0.5");
    }
}
