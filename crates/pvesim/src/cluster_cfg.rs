//! The cluster's own configuration files and what PVE's handlers check before writing them:
//! `datacenter.cfg` (pve-manager `PVE/API2/Cluster.pm` options, pve-cluster
//! `PVE/DataCenterConfig.pm`), `ha/resources.cfg`, `ha/groups.cfg` and `ha/rules.cfg`
//! (pve-ha-manager `PVE/API2/HA/*.pm`; this is a PVE 9 cluster whose groups have been migrated
//! to rules, so the groups API refuses everything as PVE 9 does), `replication.cfg`
//! (pve-manager `PVE/API2/ReplicationConfig.pm`: the guest, the target and a replicatable
//! volume on ZFS), and `status.cfg` (`PVE/API2/Cluster/MetricServer.pm`, graphite, influxdb and
//! opentelemetry). Each section is its keys as PVE stores them, as text.

use std::collections::BTreeMap;

use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, GuestKind};

/// One section of a section config: its keys as text (with `type`).
pub(crate) type Section = BTreeMap<String, String>;

/// The cluster-wide files, empty on a fresh cluster.
#[derive(Debug, Default)]
pub(crate) struct ClusterConfig {
    /// `datacenter.cfg`, grouped keys as property strings.
    pub(crate) options: Section,
    pub(crate) ha_resources: BTreeMap<String, Section>,
    pub(crate) ha_rules: BTreeMap<String, Section>,
    pub(crate) replication: BTreeMap<String, Section>,
    pub(crate) metrics: BTreeMap<String, Section>,
    /// The next rule's `order`.
    pub(crate) rule_order: u64,
}

/// The groups' answer on a cluster whose groups were migrated to rules.
pub(crate) fn groups_migrated(what: &str) -> ApiError {
    ApiError::die(format!("{what}: ha groups have been migrated to rules"))
}

/// `PVE::HA::Config::parse_sid`: `vm:100`, `ct:100`, or a bare VMID of an existing guest.
pub(crate) fn parse_sid(cluster: &Cluster, sid: &str) -> ApiResult<(String, String, u32)> {
    if let Ok(vmid) = sid.parse::<u32>() {
        let Some(guest) = cluster.guests.get(&vmid) else {
            return Err(ApiError::die(format!(
                "unable to detect SID from VMID - VM/CT {vmid} does not exist"
            )));
        };
        let kind = if guest.kind == GuestKind::Qemu {
            "vm"
        } else {
            "ct"
        };
        return Ok((format!("{kind}:{vmid}"), kind.to_owned(), vmid));
    }
    let parsed = sid
        .split_once(':')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty() && !sid.contains(char::is_whitespace));
    let Some((kind, name)) = parsed else {
        return Err(ApiError::die(format!("unable to parse service id '{sid}'")));
    };
    if kind != "vm" && kind != "ct" {
        return Err(ApiError::param(
            "type",
            format!("value '{kind}' does not have a value in the enumeration 'ct, vm'"),
        ));
    }
    let vmid = name
        .parse::<u32>()
        .ok()
        .filter(|n| (100..=999_999_999).contains(n))
        .ok_or_else(|| ApiError::die(format!("unable to parse service id '{sid}'")))?;
    Ok((sid.to_owned(), kind.to_owned(), vmid))
}

impl Cluster {
    /// `PVEVM/PVECT::exists`: the guest of an HA resource must be on the cluster, of its kind.
    pub(crate) fn ha_guest_exists(&self, kind: &str, vmid: u32) -> ApiResult<()> {
        let Some(guest) = self.guests.get(&vmid) else {
            return Err(ApiError::die(format!(
                "resource '{kind}:{vmid}' does not exist in cluster"
            )));
        };
        let (want, noun) = if kind == "vm" {
            (GuestKind::Qemu, "VM")
        } else {
            (GuestKind::Lxc, "CT")
        };
        if guest.kind != want {
            return Err(ApiError::die(format!(
                "resource '{kind}:{vmid}' - guest with ID {vmid} is not a {noun}"
            )));
        }
        Ok(())
    }

    /// What the HA manager does with a resource's requested state: `started`/`enabled` start
    /// the guest, `stopped`/`disabled` stop it, `ignored` leaves it (at once here; the real
    /// manager acts within a few seconds).
    pub(crate) fn ha_apply_state(&mut self, vmid: u32, state: Option<&str>) {
        let Some(guest) = self.guests.get_mut(&vmid) else {
            return;
        };
        guest.ha_managed = true;
        match state.unwrap_or("started") {
            "started" | "enabled" if !guest.running => {
                guest.running = true;
                guest.started_at = Some(crate::model::now());
            }
            "stopped" | "disabled" if guest.running => {
                guest.running = false;
                guest.started_at = None;
                guest.pid = None;
            }
            _ => {}
        }
    }

    /// A guest destroyed with `purge`: its HA resource, its place in rules (a rule left
    /// without resources goes) and its replication jobs go with it.
    pub(crate) fn purge_cluster_config(&mut self, vmid: u32) {
        let cfg = &mut self.cluster_cfg;
        let sids = [format!("vm:{vmid}"), format!("ct:{vmid}")];
        for sid in &sids {
            cfg.ha_resources.remove(sid);
        }
        purge_rules(&mut cfg.ha_rules, &sids);
        let guest = vmid.to_string();
        cfg.replication
            .retain(|_, job| job.get("guest") != Some(&guest));
    }

    /// `get_replicatable_volumes`: the guest's volumes, each on a storage that replicates
    /// (ZFS); one that does not is refused.
    pub(crate) fn replicatable_volumes(&self, vmid: u32) -> ApiResult<usize> {
        let Some(guest) = self.guests.get(&vmid) else {
            return Ok(0);
        };
        let mut count = 0;
        for ((node, _), storage) in &self.storages {
            if *node != guest.node && !storage.shared {
                continue;
            }
            for (volid, volume) in &storage.volumes {
                if volume.vmid != Some(vmid) {
                    continue;
                }
                if storage.stype != "zfspool" {
                    return Err(ApiError::die(format!(
                        "missing replicate feature on volume '{volid}'"
                    )));
                }
                count += 1;
            }
        }
        Ok(count)
    }
}

/// Removes these resources from every rule; a rule left without resources goes.
pub(crate) fn purge_rules(rules: &mut BTreeMap<String, Section>, sids: &[String]) {
    for rule in rules.values_mut() {
        if let Some(list) = rule.get_mut("resources") {
            let kept: Vec<&str> = list
                .split(',')
                .filter(|s| !sids.iter().any(|sid| sid == s))
                .collect();
            *list = kept.join(",");
        }
    }
    rules.retain(|_, rule| rule.get("resources").is_some_and(|r| !r.is_empty()));
}

/// A comma list as PVE encodes it back: sorted, without duplicates.
pub(crate) fn sorted_list(list: &str) -> String {
    let mut items: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    items.sort_unstable();
    items.dedup();
    items.join(",")
}
