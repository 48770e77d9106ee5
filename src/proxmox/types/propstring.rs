//! The generic half of PVE's property strings (`key=value,key=value`), following
//! `PVE::JSONSchema::parse_property_string` / `print_property_string`: a value without `=` belongs
//! to the format's default key; duplicate keys and empty values are errors; printing puts the
//! default key first (value only), then required keys, then the rest alphabetically.

use std::collections::BTreeMap;
use std::fmt;

use super::PropertyError;

/// The raw key/value pairs of one property string, keys sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RawProps {
    what: &'static str,
    map: BTreeMap<String, String>,
}

impl RawProps {
    /// Splits `input` like PVE does. `default_key` is the key of a bare value, if the format has
    /// one.
    pub(crate) fn parse(
        what: &'static str,
        input: &str,
        default_key: Option<&str>,
    ) -> Result<Self, PropertyError> {
        let mut map = BTreeMap::new();
        for part in input.split(',') {
            if part.trim().is_empty() {
                continue;
            }
            let (key, value) = match part.split_once('=') {
                Some((k, v)) if !k.is_empty() && !v.is_empty() => (k, v),
                Some(_) => {
                    return Err(PropertyError::new(
                        what,
                        format!("'{part}' is missing a key or a value"),
                    ));
                }
                None => match default_key {
                    Some(k) => (k, part),
                    None => {
                        return Err(PropertyError::new(
                            what,
                            format!("'{part}' has no key and this format has no default key"),
                        ));
                    }
                },
            };
            if map.insert(key.to_owned(), value.to_owned()).is_some() {
                return Err(PropertyError::new(what, format!("duplicate key '{key}'")));
            }
        }
        Ok(Self { what, map })
    }

    /// Removes and returns a string value.
    pub(crate) fn take(&mut self, key: &str) -> Option<String> {
        self.map.remove(key)
    }

    /// Removes a required string value.
    pub(crate) fn take_required(&mut self, key: &str) -> Result<String, PropertyError> {
        self.take(key)
            .ok_or_else(|| PropertyError::new(self.what, format!("missing required key '{key}'")))
    }

    /// Removes a boolean (`1|on|yes|true`, `0|off|no|false`, case-insensitive).
    pub(crate) fn take_bool(&mut self, key: &str) -> Result<Option<bool>, PropertyError> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        match v.to_ascii_lowercase().as_str() {
            "1" | "on" | "yes" | "true" => Ok(Some(true)),
            "0" | "off" | "no" | "false" => Ok(Some(false)),
            _ => Err(PropertyError::new(
                self.what,
                format!("'{key}' must be a boolean (0 or 1), got '{v}'"),
            )),
        }
    }

    /// Removes an unsigned integer within `min..=max`.
    pub(crate) fn take_uint(
        &mut self,
        key: &str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, PropertyError> {
        let Some(v) = self.take(key) else {
            return Ok(None);
        };
        match v.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(PropertyError::new(
                self.what,
                format!("'{key}' must be an integer between {min} and {max}, got '{v}'"),
            )),
        }
    }

    /// Fails if any key was not consumed (PVE formats reject unknown keys).
    pub(crate) fn finish(self) -> Result<(), PropertyError> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(k) => Err(PropertyError::new(self.what, format!("unknown key '{k}'"))),
        }
    }
}

/// Builds the canonical text of a property string.
#[derive(Debug, Default)]
pub(crate) struct PropPrinter {
    default: Option<String>,
    required: Vec<(&'static str, String)>,
    rest: BTreeMap<&'static str, String>,
}

impl PropPrinter {
    pub(crate) fn default_value(mut self, value: impl fmt::Display) -> Self {
        self.default = Some(value.to_string());
        self
    }

    pub(crate) fn required(mut self, key: &'static str, value: impl fmt::Display) -> Self {
        self.required.push((key, value.to_string()));
        self
    }

    pub(crate) fn opt(mut self, key: &'static str, value: Option<impl fmt::Display>) -> Self {
        if let Some(v) = value {
            self.rest.insert(key, v.to_string());
        }
        self
    }

    pub(crate) fn opt_bool(self, key: &'static str, value: Option<bool>) -> Self {
        self.opt(key, value.map(u8::from))
    }

    pub(crate) fn opt_list(self, key: &'static str, values: &[String]) -> Self {
        let joined = (!values.is_empty()).then(|| values.join(";"));
        self.opt(key, joined)
    }

    pub(crate) fn finish(mut self) -> String {
        self.required.sort();
        let parts = self
            .default
            .into_iter()
            .chain(self.required.into_iter().map(|(k, v)| format!("{k}={v}")))
            .chain(self.rest.into_iter().map(|(k, v)| format!("{k}={v}")));
        parts.collect::<Vec<_>>().join(",")
    }
}

/// Splits a `;`-separated list (mount options, fs types, trunks), dropping empty items.
pub(crate) fn split_list(value: Option<String>) -> Vec<String> {
    value
        .map(|v| {
            v.split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A disk size in bytes, parsed and printed like PVE's `parse_size` / `format_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DiskSize(u64);

impl DiskSize {
    pub const fn from_bytes(bytes: u64) -> Self {
        Self(bytes)
    }

    pub const fn from_gib(gib: u64) -> Self {
        Self(gib << 30)
    }

    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// `\d+(\.\d+)?[KMGT]?` (also `KiB`..`TiB`); a bare number is bytes.
    pub fn parse(input: &str) -> Result<Self, PropertyError> {
        let bad = || PropertyError::new("disk size", format!("'{input}' is not a size like 8G"));
        let core = input.strip_suffix("iB").unwrap_or(input);
        let (number, shift) = match core.char_indices().last() {
            Some((i, 'K')) => (&core[..i], 10),
            Some((i, 'M')) => (&core[..i], 20),
            Some((i, 'G')) => (&core[..i], 30),
            Some((i, 'T')) => (&core[..i], 40),
            Some(_) if core.len() == input.len() => (input, 0),
            _ => return Err(bad()),
        };
        let (int, frac) = number.split_once('.').unwrap_or((number, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || (number.contains('.') && !digits(frac)) {
            return Err(bad());
        }
        let whole: u64 = int.parse().map_err(|_| bad())?;
        let mut bytes = whole
            .checked_shl(shift)
            .filter(|b| b >> shift == whole)
            .ok_or_else(bad)?;
        if !frac.is_empty() {
            // int(fraction * unit), as Perl does; precise enough for the digits people write.
            let f: f64 = format!("0.{frac}").parse().map_err(|_| bad())?;
            bytes = bytes.saturating_add((f * (1u64 << shift) as f64) as u64);
        }
        Ok(Self(bytes))
    }
}

impl fmt::Display for DiskSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut value = self.0;
        for unit in ["", "K", "M", "G"] {
            if !value.is_multiple_of(1024) || value == 0 {
                return write!(f, "{value}{unit}");
            }
            value /= 1024;
        }
        write!(f, "{value}T")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_value_goes_to_default_key_and_duplicates_are_refused() {
        let mut p = RawProps::parse("t", "local:8,size=8G", Some("volume")).expect("test value");
        assert_eq!(p.take("volume").as_deref(), Some("local:8"));
        assert!(RawProps::parse("t", "a=1,a=2", None).is_err());
        assert!(RawProps::parse("t", "x,y", Some("volume")).is_err());
        assert!(RawProps::parse("t", "x", None).is_err());
        assert!(RawProps::parse("t", "a=", None).is_err());
    }

    #[test]
    fn disk_sizes_follow_pve_parse_and_format() {
        assert_eq!(DiskSize::parse("8G").expect("test value").bytes(), 8 << 30);
        assert_eq!(
            DiskSize::parse("512M").expect("test value").to_string(),
            "512M"
        );
        assert_eq!(
            DiskSize::parse("1.5G").expect("test value").to_string(),
            "1536M"
        );
        assert_eq!(
            DiskSize::parse("2048").expect("test value").to_string(),
            "2K"
        );
        assert_eq!(
            DiskSize::parse("1000").expect("test value").to_string(),
            "1000"
        );
        assert_eq!(
            DiskSize::parse("4GiB").expect("test value").to_string(),
            "4G"
        );
        assert_eq!(
            DiskSize::parse("1024G").expect("test value").to_string(),
            "1T"
        );
        assert_eq!(DiskSize::from_bytes(0).to_string(), "0");
        for bad in ["", "G", "8X", "-1G", "1.G", "8 G", "99999999999999999999T"] {
            assert!(DiskSize::parse(bad).is_err(), "{bad} should be refused");
        }
    }
}
