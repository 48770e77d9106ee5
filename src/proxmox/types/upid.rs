//! Task ids: `UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:` (`PVE::UPID::decode`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{NodeName, PropertyError};

/// A parsed task id. The original text is kept: it is what PVE expects back in task URLs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Upid {
    raw: String,
    node: NodeName,
    pid: u32,
    pstart: u64,
    starttime: u32,
    task_type: String,
    id: String,
    user: String,
}

impl Upid {
    /// The node the task runs on; its status and log are queried there.
    pub fn node(&self) -> &NodeName {
        &self.node
    }
    pub fn pid(&self) -> u32 {
        self.pid
    }
    pub fn pstart(&self) -> u64 {
        self.pstart
    }
    /// Unix seconds.
    pub fn starttime(&self) -> u32 {
        self.starttime
    }
    /// `vzcreate`, `vzstart`, `download`, ...
    pub fn task_type(&self) -> &str {
        &self.task_type
    }
    /// Usually the vmid (may be empty).
    pub fn id(&self) -> &str {
        &self.id
    }
    /// `user@realm` or `user@realm!tokenid`.
    pub fn user(&self) -> &str {
        &self.user
    }
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

fn hex_field<T: TryFrom<u64>>(s: &str, min: usize, max: usize) -> Option<T> {
    let ok = (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| u64::from_str_radix(s, 16).ok())
        .flatten()
        .and_then(|v| T::try_from(v).ok())
}

fn text_field(s: &str, allow_empty: bool) -> Option<String> {
    let ok = (allow_empty || !s.is_empty()) && !s.chars().any(|c| c == '/' || c.is_whitespace());
    ok.then(|| s.to_owned())
}

impl FromStr for Upid {
    type Err = PropertyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || PropertyError::new("upid", format!("'{s}' is not a task id (UPID:...)"));
        let body = s.strip_prefix("UPID:").and_then(|b| b.strip_suffix(':'));
        let fields: Vec<&str> = body.ok_or_else(bad)?.split(':').collect();
        let [node, pid, pstart, start, task_type, id, user] = fields[..] else {
            return Err(bad());
        };
        Ok(Self {
            raw: s.to_owned(),
            node: node.parse().map_err(|_| bad())?,
            pid: hex_field(pid, 8, 8).ok_or_else(bad)?,
            pstart: hex_field(pstart, 8, 9).ok_or_else(bad)?,
            starttime: hex_field(start, 8, 8).ok_or_else(bad)?,
            task_type: text_field(task_type, false).ok_or_else(bad)?,
            id: text_field(id, true).ok_or_else(bad)?,
            user: text_field(user, false).ok_or_else(bad)?,
        })
    }
}

impl fmt::Display for Upid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl Serialize for Upid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.raw)
    }
}

impl<'de> Deserialize<'de> for Upid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upid_fields_decode_like_pve() {
        let text = "UPID:pve1:0000A1B2:0012C3D4:66F0A2B1:vzcreate:123:root@pam!atlantis:";
        let upid: Upid = text.parse().expect("test value");
        assert_eq!(upid.node().as_str(), "pve1");
        assert_eq!(upid.pid(), 0xA1B2);
        assert_eq!(upid.pstart(), 0x12C3D4);
        assert_eq!(upid.starttime(), 0x66F0A2B1);
        assert_eq!(upid.task_type(), "vzcreate");
        assert_eq!(upid.id(), "123");
        assert_eq!(upid.user(), "root@pam!atlantis");
        assert_eq!(upid.to_string(), text);
    }

    #[test]
    fn upid_accepts_nine_digit_pstart_and_empty_id() {
        let upid: Upid = "UPID:n:00000001:1000000AB:66F0A2B1:download::root@pam:"
            .parse()
            .expect("test value");
        assert_eq!(upid.pstart(), 0x1_0000_00AB);
        assert_eq!(upid.id(), "");
    }

    #[test]
    fn malformed_upids_are_refused() {
        for bad in [
            "",
            "UPID:pve1:0000A1B2:0012C3D4:66F0A2B1:vzcreate:123:root@pam",
            "UPID:pve1:A1B2:0012C3D4:66F0A2B1:vzcreate:123:root@pam:",
            "UPID:pve1:0000A1B2:0012C3D4:66F0A2B1::123:root@pam:",
            "UPID:pve1:0000A1B2:0012C3D4:66F0A2B1:vz/create:123:root@pam:",
            "UPID:-pve:0000A1B2:0012C3D4:66F0A2B1:vzcreate:123:root@pam:",
            "UPID:pve1:0000A1B2:0012C3D4:66F0A2B1:vzcreate:123:root@pam:extra:",
        ] {
            assert!(bad.parse::<Upid>().is_err(), "{bad}");
        }
    }
}
