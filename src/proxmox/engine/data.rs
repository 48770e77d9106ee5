//! Data sources, read at plan from the cluster before the configuration is evaluated for
//! good: the evaluator lists the reads whose arguments are known ([`tfconfig::data`]) and
//! what each needs from Proxmox VE; this reads each of those once (the guest data sources are
//! answered from the `cluster/resources` listing the refresh already made), answers the reads,
//! and evaluates the configuration again with the answers until no read is left (a data source
//! whose arguments come from another's answer is read in a later round). A configuration
//! without data sources costs no request.

use std::collections::BTreeSet;
use std::sync::Arc;

use tfconfig::Known;
use tfconfig::data::{self, ClusterGuest as DataGuest, Facts, Query};

use super::EngineError;
use crate::proxmox::client::{ClusterGuest, ClusterRead, ProxmoxApi, RunState};
use crate::proxmox::types::GuestKind;

/// Most rounds of reading and evaluating again: each round answers at least one read, and a
/// chain of data sources this long is a configuration gone wrong.
const MAX_ROUNDS: usize = 64;

/// The cluster's guests as bpg's data sources see them.
pub(super) fn guests(cluster: &[ClusterGuest]) -> Vec<DataGuest> {
    cluster
        .iter()
        .map(|g| DataGuest {
            vm_id: g.vmid.get(),
            node: g.node.to_string(),
            qemu: g.kind == GuestKind::Qemu,
            name: g.name.clone(),
            tags: g.tags.clone(),
            template: g.template,
            // A paused VM is `running` in PVE's status, as bpg reads it.
            status: match g.status {
                RunState::Running | RunState::Paused => "running",
                RunState::Stopped => "stopped",
                RunState::Unknown => "unknown",
            }
            .to_owned(),
        })
        .collect()
}

/// What one evaluation of the configuration left to do.
enum Round {
    /// No read is left: the answers are complete.
    Done,
    /// These requests must be read before the listed reads can be answered.
    Read(BTreeSet<Query>),
    /// Every listed read answered, by address.
    Answered(Known),
}

/// Every data source instance's answer, by address: the configuration evaluated with `known`
/// and the answers so far, what its reads need read from the cluster, and its reads answered,
/// round by round. A read that fails (`VM 100 not found on node "pve"`) is the configuration's
/// error, on the data block.
pub(super) async fn answer_all(
    api: &dyn ProxmoxApi,
    input: &tfconfig::Input,
    known: &Known,
    guests: Vec<DataGuest>,
) -> Result<Known, EngineError> {
    let mut facts = Arc::new(Facts {
        guests,
        readings: Default::default(),
    });
    let mut answers = Known::new();
    for _ in 0..MAX_ROUNDS {
        let mut with_answers = known.clone();
        with_answers.extend(answers.clone());
        let (input, seen) = (input.clone(), Arc::clone(&facts));
        let round = tokio::task::spawn_blocking(move || evaluate(&input, &with_answers, &seen))
            .await
            .map_err(|e| EngineError::Interrupted(e.to_string()))??;
        match round {
            Round::Done => return Ok(answers),
            Round::Read(queries) => {
                let read = read_all(api, queries).await;
                Arc::make_mut(&mut facts).readings.extend(read);
            }
            Round::Answered(found) => answers.extend(found),
        }
    }
    Err(EngineError::Config(format!(
        "Error: Too many data sources in a chain\n\nThe configuration's data sources were read \
         in {MAX_ROUNDS} rounds, each reading what the one before answered, and reads were left. \
         Read fewer data sources that depend on one another."
    )))
}

/// One evaluation: the reads left, what they need that `facts` lacks, or their answers.
fn evaluate(input: &tfconfig::Input, known: &Known, facts: &Facts) -> Result<Round, EngineError> {
    let loaded = tfconfig::load_with_known(input, known);
    if loaded.has_errors() {
        return Err(EngineError::Config(loaded.render_diagnostics()));
    }
    if loaded.data_reads.is_empty() {
        return Ok(Round::Done);
    }
    let missing: BTreeSet<Query> = loaded
        .data_reads
        .iter()
        .flat_map(data::queries)
        .filter(|q| !facts.readings.contains_key(q))
        .collect();
    if !missing.is_empty() {
        return Ok(Round::Read(missing));
    }
    let mut answers = Known::new();
    let mut failed = Vec::new();
    for read in &loaded.data_reads {
        match data::answer(read, facts) {
            Ok(values) => {
                answers.insert(read.address.clone(), values);
            }
            Err(e) => failed.push(loaded.sources.render(&read.failed(&e))),
        }
    }
    if !failed.is_empty() {
        return Err(EngineError::Config(failed.join("\n")));
    }
    Ok(Round::Answered(answers))
}

/// Reads every request at once; a failed one keeps PVE's message for the read that needs it.
async fn read_all(
    api: &dyn ProxmoxApi,
    queries: BTreeSet<Query>,
) -> Vec<(Query, Result<serde_json::Value, String>)> {
    let reads = queries.into_iter().map(|query| async move {
        let answer = api
            .cluster_read(&request(&query))
            .await
            .map_err(|e| e.to_string());
        (query, answer)
    });
    futures::future::join_all(reads).await
}

/// The client's request for a query.
fn request(query: &Query) -> ClusterRead {
    match query.clone() {
        Query::Version => ClusterRead::Version,
        Query::Nodes => ClusterRead::Nodes,
        Query::NodeStatus { node } => ClusterRead::NodeStatus { node },
        Query::Dns { node } => ClusterRead::Dns { node },
        Query::Hosts { node } => ClusterRead::Hosts { node },
        Query::Time { node } => ClusterRead::Time { node },
        Query::Storages {
            node,
            content,
            storage,
            target,
        } => ClusterRead::Storages {
            node,
            content,
            storage,
            target,
        },
        Query::Content {
            node,
            storage,
            content,
        } => ClusterRead::Content {
            node,
            storage,
            content,
        },
        Query::Pools => ClusterRead::Pools,
        Query::Pool { pool } => ClusterRead::Pool { pool },
        Query::HaGroups => ClusterRead::HaGroups { group: None },
        Query::HaGroup { group } => ClusterRead::HaGroups { group: Some(group) },
        Query::HaResources { kind } => ClusterRead::HaResources { kind },
        Query::HaResource { sid } => ClusterRead::HaResource { sid },
        Query::Replications => ClusterRead::Replications { id: None },
        Query::Replication { id } => ClusterRead::Replications { id: Some(id) },
        Query::MetricServer { id } => ClusterRead::MetricServer { id },
        Query::SdnZone { zone } => ClusterRead::SdnZone { zone },
        Query::SdnZones { zone_type } => ClusterRead::SdnZones { zone_type },
        Query::SdnVnet { vnet } => ClusterRead::SdnVnet { vnet },
        Query::SdnVnets => ClusterRead::SdnVnets,
        Query::SdnSubnets { vnet } => ClusterRead::SdnSubnets { vnet },
        Query::Users => ClusterRead::Users,
        Query::User { user } => ClusterRead::User { user },
        Query::Groups => ClusterRead::Groups,
        Query::Group { group } => ClusterRead::Group { group },
        Query::Roles => ClusterRead::Roles,
        Query::Role { role } => ClusterRead::Role { role },
        Query::Acl => ClusterRead::Acl,
    }
}
