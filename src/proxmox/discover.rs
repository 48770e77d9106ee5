//! Self-discovery: which guest is atoll running on? The local MAC addresses are matched against
//! every running guest's `net<N>` MAC (LXC `hwaddr=`, QEMU `<model>=`); exactly one matching
//! guest is an answer, zero or several are refused with the reason. The matching is pure
//! ([`match_guests`]); [`discover_self`] does the I/O around it. It never guesses by name.

use std::path::{Path, PathBuf};

use futures::{StreamExt, TryStreamExt, stream};
use serde::Serialize;

use super::client::{ClusterGuest, GuestConfig, ProxmoxApi, PveError, RunState};
use super::types::{GuestKind, Mac, NodeName, VmId, qemu_net_mac};

/// A guest and the MACs its configuration declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuestMacs {
    pub kind: GuestKind,
    pub vmid: VmId,
    pub node: NodeName,
    pub name: Option<String>,
    pub macs: Vec<Mac>,
}

/// The guest atoll runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelfGuest {
    pub kind: GuestKind,
    pub vmid: VmId,
    pub node: NodeName,
    pub name: Option<String>,
    /// The local MACs that matched.
    pub matched: Vec<Mac>,
}

/// Why no single guest was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
pub enum NoMatch {
    #[error(
        "no usable local MAC address (only loopback or zero addresses); set the MACs in the config or pin the guest"
    )]
    NoLocalMacs,
    #[error(
        "none of the {checked} running guests has one of the local MACs ({}); atoll may run outside this cluster: pin the guest in the config if it does not",
        join_macs(.local)
    )]
    NoGuest { local: Vec<Mac>, checked: usize },
    #[error("{} guests share local MACs ({}); refusing to guess: pin the guest in the config", .candidates.len(), describe(.candidates))]
    Ambiguous { candidates: Vec<SelfGuest> },
}

fn join_macs(macs: &[Mac]) -> String {
    macs.iter()
        .map(Mac::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe(candidates: &[SelfGuest]) -> String {
    let names: Vec<String> = candidates
        .iter()
        .map(|c| format!("{} {} on {}", c.kind, c.vmid, c.node))
        .collect();
    names.join(", ")
}

/// Pure: the one guest whose MACs intersect `local`.
pub fn match_guests(local: &[Mac], guests: &[GuestMacs]) -> Result<SelfGuest, NoMatch> {
    if local.is_empty() {
        return Err(NoMatch::NoLocalMacs);
    }
    let mut candidates: Vec<SelfGuest> = guests
        .iter()
        .filter_map(|g| {
            let mut matched: Vec<Mac> = g
                .macs
                .iter()
                .copied()
                .filter(|m| local.contains(m))
                .collect();
            matched.sort();
            matched.dedup();
            (!matched.is_empty()).then(|| SelfGuest {
                kind: g.kind,
                vmid: g.vmid,
                node: g.node.clone(),
                name: g.name.clone(),
                matched,
            })
        })
        .collect();
    match candidates.len() {
        1 => Ok(candidates.remove(0)),
        0 => Err(NoMatch::NoGuest {
            local: local.to_vec(),
            checked: guests.len(),
        }),
        _ => Err(NoMatch::Ambiguous { candidates }),
    }
}

/// MACs from `<dir>/*/address`, skipping loopback, zero and unparsable (non-Ethernet) ones.
pub fn read_local_macs(dir: &Path) -> std::io::Result<Vec<Mac>> {
    let mut macs = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == "lo" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path().join("address")) else {
            continue;
        };
        if let Ok(mac) = text.trim().parse::<Mac>()
            && !mac.is_zero()
            && !macs.contains(&mac)
        {
            macs.push(mac);
        }
    }
    macs.sort();
    Ok(macs)
}

/// The MACs a guest config declares. Lenient: an interface whose MAC cannot be read is skipped
/// (with a warning), so one odd guest cannot break discovery for all.
pub fn config_macs(kind: GuestKind, config: &GuestConfig) -> Vec<Mac> {
    let mut macs = Vec::new();
    for (index, value) in config.net_values() {
        let parsed = match kind {
            GuestKind::Lxc => value
                .split(',')
                .find_map(|p| p.strip_prefix("hwaddr="))
                .map(str::parse::<Mac>)
                .transpose(),
            GuestKind::Qemu => qemu_net_mac(value),
        };
        match parsed {
            Ok(mac) => macs.extend(mac),
            Err(e) => tracing::warn!(net = index, error = %e, "skipping unreadable guest MAC"),
        }
    }
    macs
}

/// Where the local MACs come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalMacs {
    /// Read `/sys/class/net/*/address` (or another directory, for tests).
    Sysfs(PathBuf),
    /// A fixed list (config override, tests).
    Fixed(Vec<Mac>),
}

impl Default for LocalMacs {
    fn default() -> Self {
        Self::Sysfs(PathBuf::from("/sys/class/net"))
    }
}

/// Finds the guest atoll runs on. `Ok(Err(reason))` when there is no single answer; `Err` when
/// Proxmox VE or the local interfaces could not be read (fail closed).
pub async fn discover_self(
    api: &dyn ProxmoxApi,
    local: &LocalMacs,
) -> Result<Result<SelfGuest, NoMatch>, PveError> {
    let local = match local {
        LocalMacs::Fixed(macs) => macs.clone(),
        LocalMacs::Sysfs(dir) => read_local_macs(dir).map_err(|e| {
            PveError::Settings(format!(
                "reading local MAC addresses from {}: {e}",
                dir.display()
            ))
        })?,
    };
    if local.is_empty() {
        return Ok(Err(NoMatch::NoLocalMacs));
    }
    let running: Vec<ClusterGuest> = api
        .cluster_guests()
        .await?
        .into_iter()
        .filter(|g| g.status == RunState::Running)
        .collect();
    let guests: Vec<GuestMacs> = stream::iter(running)
        .map(|g| async move {
            match api.guest_config(&g.node, g.kind, g.vmid, true).await {
                Ok(config) => Ok(Some(GuestMacs {
                    macs: config_macs(g.kind, &config),
                    kind: g.kind,
                    vmid: g.vmid,
                    node: g.node,
                    name: g.name,
                })),
                // Deleted since the listing: not us.
                Err(PveError::NotFound(_)) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .buffer_unordered(16)
        .try_filter_map(|g| async move { Ok(g) })
        .try_collect()
        .await?;
    Ok(match_guests(&local, &guests))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(s: &str) -> Mac {
        s.parse().expect("test value")
    }

    fn guest(kind: GuestKind, vmid: u32, macs: &[&str]) -> GuestMacs {
        GuestMacs {
            kind,
            vmid: VmId::new(vmid).expect("test value"),
            node: "pve".parse().expect("test value"),
            name: None,
            macs: macs.iter().map(|m| mac(m)).collect(),
        }
    }

    #[test]
    fn exactly_one_matching_guest_is_the_answer() {
        let guests = [
            guest(GuestKind::Lxc, 100, &["BC:24:11:00:00:01"]),
            guest(
                GuestKind::Lxc,
                101,
                &["BC:24:11:00:00:02", "BC:24:11:00:00:03"],
            ),
        ];
        let local = [
            mac("bc:24:11:00:00:02"),
            mac("bc:24:11:00:00:03"),
            mac("02:42:ac:11:00:02"),
        ];
        let found = match_guests(&local, &guests).expect("test value");
        assert_eq!(found.vmid.get(), 101);
        assert_eq!(found.matched.len(), 2);
    }

    #[test]
    fn two_matching_guests_are_refused_with_both_named() {
        let guests = [
            guest(GuestKind::Lxc, 100, &["BC:24:11:00:00:01"]),
            guest(GuestKind::Qemu, 200, &["BC:24:11:00:00:01"]),
        ];
        let err =
            match_guests(&[mac("BC:24:11:00:00:01")], &guests).expect_err("should be refused");
        assert!(matches!(&err, NoMatch::Ambiguous { candidates } if candidates.len() == 2));
        let text = err.to_string();
        assert!(
            text.contains("lxc 100 on pve") && text.contains("qemu 200 on pve"),
            "{text}"
        );
    }

    #[test]
    fn no_match_and_no_local_macs_say_why() {
        let guests = [guest(GuestKind::Lxc, 100, &["BC:24:11:00:00:01"])];
        let err =
            match_guests(&[mac("BC:24:11:00:00:09")], &guests).expect_err("should be refused");
        assert!(matches!(err, NoMatch::NoGuest { checked: 1, .. }));
        assert_eq!(
            match_guests(&[], &guests).expect_err("should be refused"),
            NoMatch::NoLocalMacs
        );
    }

    #[test]
    fn config_macs_reads_lxc_hwaddr_and_qemu_model_and_skips_junk() {
        let config: GuestConfig = serde_json::from_value(serde_json::json!({
            "net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:5E:7A:01,type=veth",
            "net1": "name=eth1,bridge=vmbr0,hwaddr=zz",
            "net2": "name=eth2,bridge=vmbr1",
            "memory": 512,
        }))
        .expect("test value");
        assert_eq!(
            config_macs(GuestKind::Lxc, &config),
            [mac("BC:24:11:5E:7A:01")]
        );
        let vm: GuestConfig = serde_json::from_value(serde_json::json!({
            "net0": "virtio=BC:24:11:AA:BB:CC,bridge=vmbr0", "digest": "abc"
        }))
        .expect("test value");
        assert_eq!(
            config_macs(GuestKind::Qemu, &vm),
            [mac("BC:24:11:AA:BB:CC")]
        );
    }

    #[test]
    fn local_macs_skip_loopback_zero_and_non_ethernet() {
        let dir = tempfile::tempdir().expect("test value");
        for (name, addr) in [
            ("lo", "00:00:00:00:00:00"),
            ("eth0", "bc:24:11:5e:7a:01\n"),
            ("dummy", "00:00:00:00:00:00\n"),
            (
                "ib0",
                "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:6b:11\n",
            ),
            ("eth1", "BC:24:11:5E:7A:01\n"),
        ] {
            std::fs::create_dir(dir.path().join(name)).expect("test value");
            std::fs::write(dir.path().join(name).join("address"), addr).expect("test value");
        }
        assert_eq!(
            read_local_macs(dir.path()).expect("test value"),
            [mac("BC:24:11:5E:7A:01")]
        );
    }
}
