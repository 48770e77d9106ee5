//! Identifiers checked at the edge: guest ids, node names, storage ids, guest kinds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::PropertyError;

/// A guest id: 100..=999999999 (`PVE::JSONSchema::pve_verify_vmid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VmId(u32);

impl VmId {
    pub const MIN: u32 = 100;
    pub const MAX: u32 = 999_999_999;

    pub fn new(id: u32) -> Result<Self, PropertyError> {
        if (Self::MIN..=Self::MAX).contains(&id) {
            Ok(Self(id))
        } else {
            Err(PropertyError::new(
                "vmid",
                format!("{id} is outside {}..={}", Self::MIN, Self::MAX),
            ))
        }
    }

    pub const fn get(self) -> u32 {
        self.0
    }
}

impl FromStr for VmId {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad =
            || PropertyError::new("vmid", format!("'{s}' is not a guest id (100..999999999)"));
        if s.starts_with('0') || s.starts_with('+') {
            return Err(bad());
        }
        Self::new(s.parse().map_err(|_| bad())?)
    }
}

impl fmt::Display for VmId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for VmId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0)
    }
}

impl<'de> Deserialize<'de> for VmId {
    /// Accepts a number or a numeric string (PVE returns either, e.g. for `nextid`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(u64),
            Str(String),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Num(n) => n.to_string(),
            Raw::Str(s) => s,
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

macro_rules! checked_name {
    ($(#[$doc:meta])* $name:ident, $what:literal, $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = PropertyError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let check: fn(&[u8]) -> bool = $check;
                if check(s.as_bytes()) {
                    Ok(Self(s.to_owned()))
                } else {
                    Err(PropertyError::new($what, format!("'{s}' is not a valid {}", $what)))
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

checked_name!(
    /// A node name (`pve_verify_node_name`): letters, digits and inner hyphens.
    NodeName,
    "node name",
    |b| {
        !b.is_empty()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    }
);

checked_name!(
    /// A storage id (`parse_id` for `pve-storage-id`): `[a-z][a-z0-9\-_.]*[a-z0-9]`, any case.
    StorageId,
    "storage id",
    |b| {
        b.len() >= 2
            && b[0].is_ascii_alphabetic()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
    }
);

/// Which kind of guest a vmid belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuestKind {
    Lxc,
    Qemu,
}

impl GuestKind {
    /// The path segment under `/nodes/{node}/`.
    pub const fn path(self) -> &'static str {
        match self {
            Self::Lxc => "lxc",
            Self::Qemu => "qemu",
        }
    }

    /// How Proxmox VE names a guest of this kind in its messages: `CT 100`, `VM 100`.
    pub const fn noun(self) -> &'static str {
        match self {
            Self::Lxc => "CT",
            Self::Qemu => "VM",
        }
    }
}

impl fmt::Display for GuestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vmid_accepts_pve_range_only() {
        assert_eq!("100".parse::<VmId>().expect("test value").get(), 100);
        assert_eq!(
            "999999999".parse::<VmId>().expect("test value").get(),
            999_999_999
        );
        for bad in ["99", "0100", "1000000000", "-5", "+100", "abc", ""] {
            assert!(bad.parse::<VmId>().is_err(), "{bad}");
        }
        let v: VmId = serde_json::from_str("\"123\"").expect("test value");
        assert_eq!(v.get(), 123);
        let v: VmId = serde_json::from_str("123").expect("test value");
        assert_eq!(serde_json::to_string(&v).expect("test value"), "123");
    }

    #[test]
    fn node_and_storage_names_are_checked() {
        assert!("pve-1".parse::<NodeName>().is_ok());
        assert!("-pve".parse::<NodeName>().is_err());
        assert!("pve/../x".parse::<NodeName>().is_err());
        assert!("local-lvm".parse::<StorageId>().is_ok());
        assert!("1local".parse::<StorageId>().is_err());
        assert!("local/x".parse::<StorageId>().is_err());
    }
}
