//! The truth-table tests' shared judgement: what the simulator did to a guest during an apply
//! (replaced, left pending for a restart, re-plugged a link, changed the config at once, or
//! nothing), and whether that is what the plan predicted.

use atoll::proxmox::types::{GuestKind, VmId};
use pvesim::GuestEvent;

use super::{Env, node};

/// What the simulator did to one guest during the change apply.
pub fn observe(
    events: &[GuestEvent],
    pending: &[String],
    changed_now: bool,
    replaced: bool,
) -> &'static str {
    if replaced {
        return "replace";
    }
    if !pending.is_empty() {
        return "restart";
    }
    let relinked = events.iter().any(|e| {
        matches!(
            e,
            GuestEvent::LinkRecreated(_) | GuestEvent::LinkReplugged(_)
        )
    });
    if relinked {
        return "link-reset";
    }
    if changed_now { "applied" } else { "nothing" }
}

/// Whether the plan's `predicted` effect is what was `observed`.
pub fn agrees(predicted: &str, observed: &str) -> bool {
    match predicted {
        "live" | "deferred" => observed == "applied",
        other => other == observed,
    }
}

/// Which of `keys` the guest holds pending.
pub async fn pending_keys(env: &Env, kind: GuestKind, id: u32, keys: &[String]) -> Vec<String> {
    let vmid = VmId::new(id).expect("vmid");
    let pending = env
        .client
        .guest_pending(&node(), kind, vmid)
        .await
        .expect("pending");
    pending
        .into_iter()
        .filter(|p| keys.contains(&p.key))
        .filter(|p| p.pending.is_some() || p.delete.is_some_and(|d| d > 0))
        .map(|p| p.key)
        .collect()
}

/// One row of a truth table: an attribute changed on a running or stopped guest under a
/// setting (a VM's `hotplug`; empty for containers), what the plan predicted and what
/// happened.
pub type Row = (&'static str, bool, &'static str, String, &'static str);

/// Prints the table and its agreement; returns the rows that disagree.
pub fn print_table(rows: &[Row]) -> Vec<&Row> {
    println!(
        "\n{:<40} {:<8} {:<28} {:<11} {:<11} agree",
        "attribute", "guest", "setting", "predicted", "observed"
    );
    for (attribute, running, setting, predicted, observed) in rows {
        let power = if *running { "running" } else { "stopped" };
        let ok = if agrees(predicted, observed) {
            "yes"
        } else {
            "NO"
        };
        println!("{attribute:<40} {power:<8} {setting:<28} {predicted:<11} {observed:<11} {ok}");
    }
    let disagree: Vec<&Row> = rows.iter().filter(|r| !agrees(&r.3, r.4)).collect();
    println!("agreement: {}/{}", rows.len() - disagree.len(), rows.len());
    disagree
}
