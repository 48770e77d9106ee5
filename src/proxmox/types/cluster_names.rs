//! The cluster-wide objects' names as PVE checks them (HA resource ids, `pve-configid`,
//! replication job ids) and what sets these kinds apart from the firewall's: which are
//! settings, which are collection objects, which keys only a create may set.

use super::ObjectKind;

/// `pve-configid`: `[a-z][a-z0-9_-]+`, case-insensitive (pve-common's `$CONFIGID_RE`).
pub(super) fn config_id(b: &[u8]) -> bool {
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_".contains(c))
}

/// An HA resource id as bpg and `pve-ha-resource-id` take it: `vm:<vmid>` or `ct:<vmid>`.
pub(super) fn ha_sid(b: &[u8]) -> bool {
    let text = String::from_utf8_lossy(b);
    text.split_once(':')
        .is_some_and(|(kind, id)| matches!(kind, "vm" | "ct") && vmid(id))
}

/// A replication job id: `<vmid>-<job number>` (guest-common's `parse_replication_job_id`).
pub(super) fn job_id(b: &[u8]) -> bool {
    let text = String::from_utf8_lossy(b);
    text.split_once('-').is_some_and(|(guest, num)| {
        vmid(guest) && !num.is_empty() && num.len() <= 9 && num.bytes().all(|c| c.is_ascii_digit())
    })
}

fn vmid(text: &str) -> bool {
    !text.starts_with('0')
        && text
            .parse::<u32>()
            .is_ok_and(|n| (100..=999_999_999).contains(&n))
}

impl ObjectKind {
    /// The cluster's own settings that always exist (datacenter options, a node's hosts).
    pub(super) fn is_cluster_setting(self) -> bool {
        matches!(self, Self::ClusterOptions | Self::NodeHosts)
    }

    /// The cluster's own configuration: its settings and its collection objects.
    pub fn is_cluster_family(self) -> bool {
        self.is_cluster_setting() || self.is_cluster_object()
    }

    /// HA resources, groups and rules, replication jobs and metric servers: named objects
    /// in a cluster-wide section config, created by `POST`, read from their listing.
    pub fn is_cluster_object(self) -> bool {
        matches!(
            self,
            Self::HaResource
                | Self::HaGroup
                | Self::HaRule
                | Self::Replication
                | Self::MetricServer
        )
    }

    /// Keys PVE takes only at create (the section's `type`, a replication job's target): a
    /// change to one replaces the object, and an update never sends them.
    pub fn create_only(self) -> &'static [&'static str] {
        match self {
            Self::HaRule | Self::MetricServer => &["type"],
            Self::Replication => &["type", "target"],
            _ => &[],
        }
    }

    /// Keys no longer set are deleted (`delete=`) rather than left as they are: the
    /// datacenter options and the cluster objects, whose PVE update takes `delete`.
    pub fn deletes_unset(self) -> bool {
        self == Self::ClusterOptions || self.is_cluster_object()
    }

    /// Created by a `POST` to the object's own path, not to its collection with its name as
    /// a parameter (PVE's metric servers).
    pub fn created_at_own_path(self) -> bool {
        self == Self::MetricServer
    }

    /// Changed by a `POST` of the whole setting with the digest PVE gave when it was read
    /// (`/etc/hosts`), rather than by a `PUT` of the changed keys.
    pub fn written_whole(self) -> bool {
        self == Self::NodeHosts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_object_names_are_checked_as_pve_checks_them() {
        assert!(ha_sid(b"vm:100"));
        assert!(ha_sid(b"ct:999999999"));
        assert!(!ha_sid(b"vm:99"));
        assert!(!ha_sid(b"qemu:100"));
        assert!(!ha_sid(b"100"));
        assert!(job_id(b"100-0"));
        assert!(!job_id(b"100-"));
        assert!(!job_id(b"100"));
        assert!(!job_id(b"100-a"));
        assert!(config_id(b"influx-1"));
        assert!(!config_id(b"1influx"));
        assert!(!config_id(b"a/b"));
    }

    #[test]
    fn cluster_objects_know_their_paths_and_bpgs_import_ids() {
        use super::super::{ObjectId, Scope};
        let sid =
            ObjectId::new(ObjectKind::HaResource, Scope::Cluster, Some("vm:100")).expect("sid");
        assert_eq!(sid.path(), "/cluster/ha/resources/vm:100");
        assert_eq!(sid.import_id().as_deref(), Some("vm:100"));
        assert!(ObjectId::new(ObjectKind::HaResource, Scope::Cluster, Some("vm:1")).is_err());
        let job =
            ObjectId::new(ObjectKind::Replication, Scope::Cluster, Some("100-0")).expect("id");
        assert_eq!(
            job.collection(),
            Some(("/cluster/replication".to_owned(), "id"))
        );
        assert_eq!(job.import_id().as_deref(), Some("100-0"));
        let options = ObjectId::new(ObjectKind::ClusterOptions, Scope::Cluster, None).expect("ok");
        assert_eq!(options.import_id().as_deref(), Some("cluster"));
        assert!(options.is_setting());
        let node = "pve".parse().expect("node");
        let hosts = ObjectId::new(ObjectKind::NodeHosts, Scope::Node { node }, None).expect("ok");
        assert_eq!(hosts.path(), "/nodes/pve/hosts");
        assert_eq!(hosts.import_id().as_deref(), Some("pve"));
        let server =
            ObjectId::new(ObjectKind::MetricServer, Scope::Cluster, Some("influx")).expect("id");
        assert_eq!(server.path(), "/cluster/metrics/server/influx");
        assert_eq!(server.describe(), "metric server influx");
    }
}
