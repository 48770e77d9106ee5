//! What a node's read-only settings endpoints answer: `/etc/resolv.conf` (search domain and up
//! to three name servers), `/etc/hosts` and the time zone, from the scenario or defaults a
//! fresh PVE install would have. The simulator knows no zone rules: a scenario that names a zone
//! gives its UTC offset too.

use serde::Deserialize;
use sha1::{Digest, Sha1};

/// A node's DNS, hosts and time zone, as the scenario writes them (all optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSettingsSpec {
    /// Search domain; default `example.com`.
    #[serde(default)]
    pub search: Option<String>,
    /// Up to three name servers; default `192.0.2.53`.
    #[serde(default)]
    pub dns: Option<Vec<String>>,
    /// The whole `/etc/hosts`; default the installer's lines for the node.
    #[serde(default)]
    pub hosts: Option<String>,
    /// Time zone name; default `UTC`.
    #[serde(default)]
    pub timezone: Option<String>,
    /// The zone's offset from UTC now, in seconds (`3600` for Europe/Berlin in winter).
    #[serde(default)]
    pub utc_offset: i64,
}

/// The settings of one node.
#[derive(Debug, Clone)]
pub(crate) struct NodeSettings {
    pub(crate) search: Option<String>,
    pub(crate) dns: Vec<String>,
    pub(crate) hosts: String,
    pub(crate) timezone: String,
    pub(crate) utc_offset: i64,
}

impl NodeSettings {
    /// The scenario's settings for node `name` (the `index`th node), defaults filled in.
    pub(crate) fn new(name: &str, index: u64, spec: Option<&NodeSettingsSpec>) -> Self {
        let spec = spec.cloned().unwrap_or_default();
        let search = spec.search.or_else(|| Some("example.com".to_owned()));
        let domain = search.clone().unwrap_or_default();
        let hosts = spec.hosts.unwrap_or_else(|| {
            format!(
                "127.0.0.1 localhost.localdomain localhost\n192.0.2.{} {name}.{domain} {name}\n\n\
                 # The following lines are desirable for IPv6 capable hosts\n\n\
                 ::1     ip6-localhost ip6-loopback\nfe00::0 ip6-localnet\n",
                10 + index
            )
        });
        Self {
            search,
            dns: spec
                .dns
                .unwrap_or_else(|| vec!["192.0.2.53".to_owned()])
                .into_iter()
                .take(3)
                .collect(),
            hosts,
            timezone: spec.timezone.unwrap_or_else(|| "UTC".to_owned()),
            utc_offset: spec.utc_offset,
        }
    }

    /// `/etc/hosts`' digest as PVE gives it: the SHA-1 of the file, in hex.
    pub(crate) fn hosts_digest(&self) -> String {
        hex::encode(Sha1::digest(self.hosts.as_bytes()))
    }
}
