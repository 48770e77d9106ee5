//! PVE property strings and list values, parsed and printed the way PVE prints them
//! (`PVE::JSONSchema::print_property_string`: default key first as a bare value, then required
//! keys, then the rest alphabetically), plus MACs, tags, sizes and `split_list`.

use std::collections::BTreeMap;

use rand::Rng;

/// The keys of a property string, in a sorted map.
pub(crate) type Props = BTreeMap<String, String>;

/// Parses `k=v,k=v`; a bare value is assigned to `default_key`.
pub(crate) fn parse(text: &str, default_key: Option<&str>) -> Result<Props, String> {
    let mut props = Props::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = match part.split_once('=') {
            Some((k, v)) => (k.to_owned(), v.to_owned()),
            None => match default_key {
                Some(dk) if !props.contains_key(dk) => (dk.to_owned(), part.to_owned()),
                _ => {
                    return Err(
                        "value without key, but schema does not define a default key".to_owned(),
                    );
                }
            },
        };
        if props.insert(key.clone(), value).is_some() {
            return Err(format!(
                "duplicate key in comma-separated list property: {key}"
            ));
        }
    }
    Ok(props)
}

/// Prints canonically: default key (bare), required keys, then the rest sorted.
pub(crate) fn print(props: &Props, default_key: Option<&str>, required: &[&str]) -> String {
    let mut parts = Vec::with_capacity(props.len());
    if let Some(dk) = default_key
        && let Some(v) = props.get(dk)
    {
        parts.push(v.clone());
    }
    let rest = |k: &str| Some(k) != default_key;
    for key in required.iter().filter(|k| rest(k)) {
        if let Some(v) = props.get(*key) {
            parts.push(format!("{key}={v}"));
        }
    }
    for (key, v) in props
        .iter()
        .filter(|(k, _)| rest(k) && !required.contains(&k.as_str()))
    {
        parts.push(format!("{key}={v}"));
    }
    parts.join(",")
}

/// `PVE::Tools::split_list`: NUL-separated, or split on `,`, `;` and whitespace.
pub(crate) fn split_list(text: &str) -> Vec<String> {
    if text.contains('\0') {
        return text.split('\0').map(str::to_owned).collect();
    }
    text.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `get_unique_tags` with the default tag style: lower-cased, sorted, deduplicated, `;`-joined.
pub(crate) fn unique_tags(text: &str) -> String {
    let mut tags: Vec<String> = split_list(text).iter().map(|t| t.to_lowercase()).collect();
    tags.sort();
    tags.dedup();
    tags.join(";")
}

/// A random MAC under PVE's default prefix `BC:24:11` (upper case, like `random_ether_addr`).
pub(crate) fn random_mac() -> String {
    let mut rng = rand::thread_rng();
    let tail: [u8; 3] = rng.r#gen();
    format!("BC:24:11:{:02X}:{:02X}:{:02X}", tail[0], tail[1], tail[2])
}

/// Whether `text` is a unicast MAC address (`mac-addr` format).
pub(crate) fn is_mac(text: &str) -> bool {
    let parts: Vec<&str> = text.split(':').collect();
    parts.len() == 6
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
        && u8::from_str_radix(parts[0], 16).is_ok_and(|b| b & 1 == 0)
}

/// `PVE::JSONSchema::format_size` for a size in bytes.
pub(crate) fn format_size(bytes: u64) -> String {
    let units = ["K", "M", "G", "T"];
    let mut value = bytes;
    let mut suffix = "";
    for unit in units {
        if !value.is_multiple_of(1024) || value == 0 {
            break;
        }
        value /= 1024;
        suffix = unit;
    }
    format!("{value}{suffix}")
}

/// `PVE::JSONSchema::parse_size`: `10G`, `512M`, `1.5T`, plain bytes.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let (number, unit) = match text.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => (&text[..i], c.to_ascii_uppercase()),
        _ => (text, 'B'),
    };
    let factor: f64 = match unit {
        'B' => 1.0,
        'K' => 1024.0,
        'M' => 1024.0 * 1024.0,
        'G' => 1024.0 * 1024.0 * 1024.0,
        'T' => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let n: f64 = number.parse().ok().filter(|n: &f64| *n >= 0.0)?;
    Some((n * factor).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_prints_name_first_then_alphabetical() {
        let p = parse(
            "bridge=vmbr0,name=eth0,ip=dhcp,hwaddr=BC:24:11:00:00:01",
            None,
        )
        .unwrap_or_default();
        assert_eq!(
            print(&p, None, &["name"]),
            "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,ip=dhcp"
        );
    }

    #[test]
    fn volume_prints_default_key_bare() {
        let p = parse(
            "mp=/mnt/x,volume=local-lvm:vm-1-disk-1,size=8G",
            Some("volume"),
        )
        .unwrap_or_default();
        assert_eq!(
            print(&p, Some("volume"), &["mp"]),
            "local-lvm:vm-1-disk-1,mp=/mnt/x,size=8G"
        );
    }

    #[test]
    fn tags_are_lowercased_sorted_and_deduplicated() {
        assert_eq!(unique_tags("Web;db,web prod"), "db;prod;web");
    }

    #[test]
    fn sizes_round_trip_through_format_size() {
        assert_eq!(format_size(8 * 1024 * 1024 * 1024), "8G");
        assert_eq!(format_size(512 * 1024 * 1024), "512M");
        assert_eq!(parse_size("10G"), Some(10 * 1024 * 1024 * 1024));
        assert_eq!(parse_size("1.5K"), Some(1536));
    }

    #[test]
    fn generated_macs_use_the_proxmox_prefix() {
        let mac = random_mac();
        assert!(mac.starts_with("BC:24:11:") && is_mac(&mac), "{mac}");
    }
}
