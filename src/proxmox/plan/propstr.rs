//! PVE property strings (`name=eth0,bridge=vmbr0,...`): parsing into fields and canonical
//! printing, so two strings that PVE treats as equal compare equal.

use std::collections::BTreeMap;

/// The fields of one property string, keyed by field name (sorted, so printing is canonical).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PropString {
    pub(crate) fields: BTreeMap<String, String>,
}

impl PropString {
    /// Parses `a=1,b=2`; a bare leading item is stored under `default_key` (e.g. `volume` for
    /// `rootfs`, `path` for `devN`, `order` for `startup`). Never fails: PVE validated the string.
    pub(crate) fn parse(text: &str, default_key: Option<&str>) -> Self {
        let mut fields = BTreeMap::new();
        for item in text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            match item.split_once('=') {
                Some((key, value)) => {
                    fields.insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
                }
                None => {
                    let key = default_key.unwrap_or(item);
                    let value = if default_key.is_some() { item } else { "1" };
                    fields.insert(key.to_owned(), value.to_owned());
                }
            }
        }
        Self { fields }
    }

    pub(crate) fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }

    /// Canonical text: fields in alphabetical order, `key=value`.
    pub(crate) fn print(&self) -> String {
        let parts: Vec<String> = self
            .fields
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        parts.join(",")
    }
}

/// Canonical boolean text (`1`/`0`) for PVE's accepted spellings; other text is returned as is.
pub(crate) fn canonical_bool(value: &str) -> String {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => "1".to_owned(),
        "0" | "false" | "no" | "off" => "0".to_owned(),
        _ => value.to_owned(),
    }
}

/// Canonical number text: `2048`, `1.5`, `0.5` (`"1.50"` and `1.5` compare equal).
pub(crate) fn canonical_number(value: &str) -> String {
    match value.trim().parse::<f64>() {
        Ok(number) if number.is_finite() => {
            if number.fract() == 0.0 && number.abs() < 1e15 {
                format!("{}", number as i64)
            } else {
                format!("{number}")
            }
        }
        _ => value.trim().to_owned(),
    }
}

/// Bytes in a PVE disk size (`8G`, `512M`, `1.5T`, bare number = bytes).
pub(crate) fn size_bytes(value: &str) -> Option<u64> {
    let value = value.trim();
    let (number, unit) = match value.char_indices().last() {
        Some((index, c)) if c.is_ascii_alphabetic() => (&value[..index], c.to_ascii_uppercase()),
        _ => (value, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        'T' => 40,
        _ => return None,
    };
    let number: f64 = number.parse().ok()?;
    if !number.is_finite() || number < 0.0 {
        return None;
    }
    Some((number * f64::from(1u32 << 10).powi(shift / 10)) as u64)
}

/// Prints bytes the way PVE's `format_size` does: the largest unit that divides exactly.
pub(crate) fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, 'T'), (30, 'G'), (20, 'M'), (10, 'K')] {
        let scale = 1u64 << shift;
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_keeps_default_key_and_lowercases_field_names() {
        let parsed = PropString::parse("local-lvm:vm-1-disk-0,Size=8G", Some("volume"));
        assert_eq!(parsed.get("volume"), Some("local-lvm:vm-1-disk-0"));
        assert_eq!(parsed.get("size"), Some("8G"));
        assert_eq!(parsed.print(), "size=8G,volume=local-lvm:vm-1-disk-0");
    }

    #[test]
    fn field_order_does_not_change_the_canonical_text() {
        let a = PropString::parse("name=eth0,bridge=vmbr0,ip=dhcp", None);
        let b = PropString::parse("ip=dhcp,bridge=vmbr0,name=eth0", None);
        assert_eq!(a.print(), b.print());
    }

    #[test]
    fn sizes_parse_and_print_like_pve() {
        assert_eq!(size_bytes("8G"), Some(8 << 30));
        assert_eq!(size_bytes("512M"), Some(512 << 20));
        assert_eq!(size_bytes("1.5T"), Some(3 << 39));
        assert_eq!(size_bytes("4096"), Some(4096));
        assert_eq!(size_bytes("8Q"), None);
        assert_eq!(format_size(8 << 30), "8G");
        assert_eq!(format_size(1536 << 20), "1536M");
    }

    #[test]
    fn numbers_and_booleans_have_one_spelling() {
        assert_eq!(canonical_number("1.50"), "1.5");
        assert_eq!(canonical_number("2048"), "2048");
        assert_eq!(canonical_bool("true"), "1");
        assert_eq!(canonical_bool("0"), "0");
    }
}
