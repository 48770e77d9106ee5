//! Data sources, read at plan from the cluster before the configuration is evaluated for
//! good: the evaluator lists the reads whose arguments are known ([`tfconfig::data`]), this
//! answers them from the one `cluster/resources` listing the refresh already made, and the
//! configuration is evaluated again with the answers until no read is left (a data source whose
//! arguments come from another's answer is read in a later round). It reads nothing itself.

use tfconfig::Known;
use tfconfig::data::{self, ClusterGuest as DataGuest};

use super::EngineError;
use crate::proxmox::client::{ClusterGuest, RunState};
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

/// Every data source instance's answer, by address: the configuration evaluated with `known`
/// and the answers so far, its reads answered from `guests`, round by round. A read that fails
/// (`VM 100 not found on node "pve"`) is the configuration's error, on the data block.
pub(super) fn answer_all(
    input: &tfconfig::Input,
    known: &Known,
    guests: &[DataGuest],
) -> Result<Known, EngineError> {
    let mut answers = Known::new();
    for _ in 0..MAX_ROUNDS {
        let mut with_answers = known.clone();
        with_answers.extend(answers.clone());
        let loaded = tfconfig::load_with_known(input, &with_answers);
        if loaded.has_errors() {
            return Err(EngineError::Config(loaded.render_diagnostics()));
        }
        if loaded.data_reads.is_empty() {
            return Ok(answers);
        }
        let mut failed = Vec::new();
        for read in &loaded.data_reads {
            match data::answer(read, guests) {
                Ok(values) => {
                    answers.insert(read.address.clone(), values);
                }
                Err(e) => failed.push(loaded.sources.render(&read.failed(&e))),
            }
        }
        if !failed.is_empty() {
            return Err(EngineError::Config(failed.join("\n")));
        }
    }
    Err(EngineError::Config(format!(
        "Error: Too many data sources in a chain\n\nThe configuration's data sources were read \
         in {MAX_ROUNDS} rounds, each reading what the one before answered, and reads were left. \
         Read fewer data sources that depend on one another."
    )))
}
