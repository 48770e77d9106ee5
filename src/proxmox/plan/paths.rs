//! The map from PVE config keys and property-string fields back to the bpg attribute paths the
//! user wrote (`cpu.units`, `features.nesting`, `network_interface[0].bridge`;
//! reference/proxmox.md section 2), with the type each attribute has in the bpg schema.

use serde_json::Value as Json;

use super::normalize::{indexed, volume_storage};
use super::propstr::{canonical_bool, size_bytes};

/// How a PVE value is shown as the bpg attribute's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    Number,
    Text,
    /// A list joined by the given separator (`tags` by `;`, `nameserver` by space).
    List(char),
    /// A PVE size shown in whole GB (`disk.size`).
    Gigabytes,
    /// A volume id shown as its storage (`disk.datastore_id`).
    Storage,
}

/// The bpg attribute path and kind for a PVE key and optional property-string field.
pub(crate) fn bpg_path(key: &str, field: Option<&str>) -> (String, Kind) {
    if let Some(i) = indexed(key, "net") {
        return net_path(i, field);
    }
    if let Some(i) = indexed(key, "mp") {
        return volume_path(&format!("mount_point[{i}]"), field);
    }
    if key == "rootfs" {
        return volume_path("disk", field);
    }
    if let Some(i) = indexed(key, "dev") {
        let base = format!("device_passthrough[{i}]");
        return match field {
            None => (base, Kind::Text),
            Some("deny-write") => (format!("{base}.deny_write"), Kind::Bool),
            Some(f @ ("uid" | "gid")) => (format!("{base}.{f}"), Kind::Number),
            Some(f) => (format!("{base}.{f}"), Kind::Text),
        };
    }
    match (key, field) {
        ("features", Some("mount")) => ("features.mount".to_owned(), Kind::List(';')),
        ("features", Some(flag)) => (format!("features.{flag}"), Kind::Bool),
        ("startup", Some(f)) => {
            let name = match f {
                "up" => "up_delay",
                "down" => "down_delay",
                other => other,
            };
            (format!("startup.{name}"), Kind::Number)
        }
        ("clone", Some(f)) => match f {
            "vmid" => ("clone.vm_id".to_owned(), Kind::Number),
            "node" => ("clone.node_name".to_owned(), Kind::Text),
            "storage" => ("clone.datastore_id".to_owned(), Kind::Text),
            "full" => ("clone.full".to_owned(), Kind::Bool),
            other => (format!("clone.{other}"), Kind::Text),
        },
        _ => plain_path(key),
    }
}

fn plain_path(key: &str) -> (String, Kind) {
    let (path, kind) = match key {
        "cores" => ("cpu.cores", Kind::Number),
        "arch" => ("cpu.architecture", Kind::Text),
        "cpulimit" => ("cpu.limit", Kind::Number),
        "cpuunits" => ("cpu.units", Kind::Number),
        "memory" => ("memory.dedicated", Kind::Number),
        "swap" => ("memory.swap", Kind::Number),
        "hostname" => ("initialization.hostname", Kind::Text),
        "nameserver" => ("initialization.dns.servers", Kind::List(' ')),
        "searchdomain" => ("initialization.dns.domain", Kind::Text),
        "entrypoint" => ("initialization.entrypoint", Kind::Text),
        "password" => ("initialization.user_account.password", Kind::Text),
        "ssh-public-keys" => ("initialization.user_account.keys", Kind::List('\n')),
        "ostemplate" => ("operating_system.template_file_id", Kind::Text),
        "ostype" => ("operating_system.type", Kind::Text),
        "console" => ("console.enabled", Kind::Bool),
        "cmode" => ("console.type", Kind::Text),
        "tty" => ("console.tty_count", Kind::Number),
        "env" => ("environment_variables", Kind::List('\0')),
        "onboot" => ("start_on_boot", Kind::Bool),
        "hookscript" => ("hook_script_file_id", Kind::Text),
        "pool" => ("pool_id", Kind::Text),
        "node" => ("node_name", Kind::Text),
        "vmid" => ("vm_id", Kind::Number),
        "tags" => ("tags", Kind::List(';')),
        "protection" | "template" | "unprivileged" | "started" => (key, Kind::Bool),
        _ => (key, Kind::Text),
    };
    (path.to_owned(), kind)
}

fn net_path(index: u32, field: Option<&str>) -> (String, Kind) {
    let nic = format!("network_interface[{index}]");
    let ip = format!("initialization.ip_config[{index}]");
    match field {
        None => (nic, Kind::Text),
        Some("ip") => (format!("{ip}.ipv4.address"), Kind::Text),
        Some("gw") => (format!("{ip}.ipv4.gateway"), Kind::Text),
        Some("ip6") => (format!("{ip}.ipv6.address"), Kind::Text),
        Some("gw6") => (format!("{ip}.ipv6.gateway"), Kind::Text),
        Some("hwaddr") => (format!("{nic}.mac_address"), Kind::Text),
        Some("rate") => (format!("{nic}.rate_limit"), Kind::Number),
        Some("tag") => (format!("{nic}.vlan_id"), Kind::Number),
        Some("mtu") => (format!("{nic}.mtu"), Kind::Number),
        Some("firewall") => (format!("{nic}.firewall"), Kind::Bool),
        Some("host-managed") => (format!("{nic}.host_managed"), Kind::Bool),
        Some("link_down") => (format!("{nic}.link_down"), Kind::Bool),
        Some(other) => (format!("{nic}.{other}"), Kind::Text),
    }
}

fn volume_path(base: &str, field: Option<&str>) -> (String, Kind) {
    let is_disk = base == "disk";
    let (name, kind) = match field {
        None => return (base.to_owned(), Kind::Text),
        Some("volume") if is_disk => ("datastore_id", Kind::Storage),
        Some("volume") => ("volume", Kind::Text),
        Some("size") if is_disk => ("size", Kind::Gigabytes),
        Some("size") => ("size", Kind::Text),
        Some("mp") => ("path", Kind::Text),
        Some("ro") => ("read_only", Kind::Bool),
        Some("mountoptions") => ("mount_options", Kind::List(';')),
        Some(f @ ("acl" | "backup" | "quota" | "replicate" | "shared")) => (f, Kind::Bool),
        Some(other) => (other, Kind::Text),
    };
    (format!("{base}.{name}"), kind)
}

/// A PVE value as the JSON value of the bpg attribute.
pub(crate) fn typed(kind: Kind, raw: &str) -> Json {
    match kind {
        Kind::Bool => Json::Bool(canonical_bool(raw) == "1"),
        Kind::Number => number(raw),
        Kind::Text => Json::String(raw.to_owned()),
        Kind::List(separator) => Json::Array(
            raw.split(separator)
                .filter(|item| !item.is_empty())
                .map(|item| Json::String(item.to_owned()))
                .collect(),
        ),
        Kind::Gigabytes => match size_bytes(raw) {
            Some(bytes) if bytes % (1 << 30) == 0 => Json::from(bytes >> 30),
            Some(bytes) => Json::from(bytes as f64 / f64::from(1u32 << 30)),
            None => Json::String(raw.to_owned()),
        },
        Kind::Storage => Json::String(volume_storage(raw).unwrap_or(raw).to_owned()),
    }
}

fn number(raw: &str) -> Json {
    if let Ok(int) = raw.trim().parse::<i64>() {
        return Json::from(int);
    }
    match raw.trim().parse::<f64>() {
        Ok(float) => serde_json::Number::from_f64(float)
            .map_or_else(|| Json::String(raw.to_owned()), Json::Number),
        Err(_) => Json::String(raw.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pve_keys_map_to_the_bpg_paths_users_write() {
        assert_eq!(bpg_path("cpuunits", None).0, "cpu.units");
        assert_eq!(bpg_path("features", Some("nesting")).0, "features.nesting");
        assert_eq!(
            bpg_path("net0", Some("bridge")).0,
            "network_interface[0].bridge"
        );
        assert_eq!(
            bpg_path("net1", Some("ip")).0,
            "initialization.ip_config[1].ipv4.address"
        );
        assert_eq!(bpg_path("rootfs", Some("volume")).0, "disk.datastore_id");
        assert_eq!(bpg_path("mp2", Some("mp")).0, "mount_point[2].path");
    }

    #[test]
    fn values_are_typed_like_the_bpg_schema() {
        assert_eq!(typed(Kind::Bool, "1"), Json::Bool(true));
        assert_eq!(typed(Kind::Number, "1.5"), serde_json::json!(1.5));
        assert_eq!(typed(Kind::Gigabytes, "8G"), serde_json::json!(8));
        assert_eq!(
            typed(Kind::Storage, "local-lvm:vm-1-disk-0"),
            serde_json::json!("local-lvm")
        );
        assert_eq!(typed(Kind::List(';'), "a;b"), serde_json::json!(["a", "b"]));
    }
}
