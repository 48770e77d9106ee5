//! What the queue's reaper found, turned into reports on pull requests: an apply interrupted
//! by a crash (`interrupted`) and a job whose worker kept dying under it (`gave_up`). The jobs
//! already in the store are offered at start-up, then each one the reaper reports; every
//! report is enqueued with a dedup key, so a job is reported once however often it is offered.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{gave_up, interrupted};
use crate::store::{JobState, Reaped, Store};

/// How many jobs of each state the start-up scan offers (newest first).
const SCAN_LIMIT: u32 = 1000;

/// Starts following reaped jobs: the channel to hand the queue, and the task reading it.
pub(super) fn start(store: Arc<dyn Store>) -> Option<mpsc::UnboundedSender<Reaped>> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("no async runtime: reaped jobs will not be reported on their PRs");
        return None;
    };
    let (tx, rx) = mpsc::unbounded_channel();
    runtime.spawn(follow(store, rx));
    Some(tx)
}

/// Offers every interrupted apply and given-up job in the store now, then each one the reaper
/// reports, until the queue stops (its sender is dropped).
async fn follow(store: Arc<dyn Store>, mut reaped: mpsc::UnboundedReceiver<Reaped>) {
    for state in [JobState::Interrupted, JobState::Failed] {
        match store.list_jobs_in_state(state, SCAN_LIMIT).await {
            Ok(jobs) => {
                for job in jobs {
                    offer(&*store, &job).await;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, state = state.as_str(), "cannot list jobs to report them");
            }
        }
    }
    while let Some(pass) = reaped.recv().await {
        for id in pass.interrupted.into_iter().chain(pass.failed) {
            match store.get_job(id).await {
                Ok(Some(job)) => offer(&*store, &job).await,
                Ok(None) => {}
                Err(e) => tracing::warn!(job.id = %id, error = %e, "cannot read a reaped job"),
            }
        }
    }
}

async fn offer(store: &dyn Store, job: &crate::store::Job) {
    match job.state {
        JobState::Interrupted => interrupted::offer(store, job).await,
        JobState::Failed if job.worker_kept_dying() => gave_up::offer(store, job).await,
        _ => {}
    }
}
