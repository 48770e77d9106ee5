//! The claim loop, one task per running job (with its heartbeat), the reaper, and shutdown.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinError, JoinHandle, JoinSet};
use tracing::Instrument;
use uuid::Uuid;

use super::context::JobContext;
use super::{JobHandler, QueueSettings, ShutdownReport};
use crate::store::{Job, JobSignal, JobState, Pruned, Reaped, Store, StoreError};

const SHUTDOWN_DURING_APPLY: &str = "the server shut down while this job was applying and the \
     grace period ended; the change may be partly made and is not retried: check the guests, \
     then comment `atlantis plan` again";
const FINISH_RETRIES: u32 = 3;

/// A running pool. Dropping it without [`QueueHandle::shutdown`] also stops claiming, but then
/// nobody waits for the jobs.
#[derive(Debug)]
pub struct QueueHandle {
    shutdown: watch::Sender<bool>,
    claim_loop: JoinHandle<ShutdownReport>,
    reaper: JoinHandle<()>,
}

impl QueueHandle {
    /// Stops claiming, lets running jobs finish within the grace period, then gives back what
    /// is left: `running` jobs to the queue, `applying` jobs to `interrupted`.
    pub async fn shutdown(self) -> ShutdownReport {
        self.shutdown.send_replace(true);
        let report = match self.claim_loop.await {
            Ok(report) => report,
            Err(err) => {
                tracing::error!(error = %err, "queue: the claim loop died");
                ShutdownReport::default()
            }
        };
        if let Err(err) = self.reaper.await {
            tracing::error!(error = %err, "queue: the reaper died");
        }
        report
    }
}

struct Shared {
    store: Arc<dyn Store>,
    settings: QueueSettings,
    worker: Arc<str>,
    handlers: BTreeMap<String, Arc<dyn JobHandler>>,
    reaped: Option<mpsc::UnboundedSender<Reaped>>,
    /// Jobs this pool holds, so shutdown can give back the ones it had to abort.
    inflight: Mutex<HashSet<Uuid>>,
}

impl Shared {
    fn inflight(&self) -> std::sync::MutexGuard<'_, HashSet<Uuid>> {
        self.inflight.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Aborts a task when the job that owns it ends, however it ends.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub(super) fn start(
    store: Arc<dyn Store>,
    settings: QueueSettings,
    handlers: BTreeMap<String, Arc<dyn JobHandler>>,
    reaped: Option<mpsc::UnboundedSender<Reaped>>,
) -> QueueHandle {
    let (shutdown, stop) = watch::channel(false);
    let shared = Arc::new(Shared {
        store,
        worker: Arc::from(settings.worker.as_str()),
        settings,
        handlers,
        reaped,
        inflight: Mutex::new(HashSet::new()),
    });
    if let Some(retention) = shared.settings.retention {
        // Ends with the stop signal; nothing waits for it (a pass is a few bounded deletes).
        tokio::spawn(prune_loop(Arc::clone(&shared), retention, stop.clone()));
    }
    QueueHandle {
        shutdown,
        reaper: tokio::spawn(reap_loop(shared.clone(), stop.clone())),
        claim_loop: tokio::spawn(claim_loop(shared, stop)),
    }
}

fn stopping(stop: &watch::Receiver<bool>) -> bool {
    *stop.borrow() || stop.has_changed().is_err()
}

/// Waits for the store's signal; a closed signal never fires again (polling still runs).
async fn signalled(signal: &mut JobSignal) {
    if signal.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn claim_loop(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) -> ShutdownReport {
    let kinds: Vec<&str> = shared.handlers.keys().map(String::as_str).collect();
    let settings = &shared.settings;
    let slots = usize::try_from(settings.limits.global).unwrap_or(usize::MAX);
    let mut signal = shared.store.job_signal();
    let mut running = JoinSet::new();
    while !stopping(&stop) {
        while running.try_join_next().is_some() {}
        // Mark the signal seen before claiming, so work queued during the claim wakes the next
        // wait; with every slot busy, a finishing job wakes it instead.
        signal.borrow_and_update();
        if running.len() < slots {
            let claimed = shared
                .store
                .claim(&shared.worker, &kinds, settings.lease, settings.limits)
                .await;
            match claimed {
                Ok(Some(job)) => {
                    running.spawn(run_job(shared.clone(), job, stop.clone()));
                    continue;
                }
                Ok(None) => {}
                Err(err) => tracing::warn!(error = %err, "queue: claiming a job failed"),
            }
        }
        tokio::select! {
            _ = stop.changed() => {}
            () = signalled(&mut signal) => {}
            Some(_) = running.join_next(), if !running.is_empty() => {}
            () = tokio::time::sleep(settings.poll_interval) => {}
        }
    }
    drain(&shared, running).await
}

async fn drain(shared: &Shared, mut running: JoinSet<()>) -> ShutdownReport {
    let mut report = ShutdownReport::default();
    let grace = tokio::time::sleep(shared.settings.shutdown_grace);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            joined = running.join_next() => match joined {
                Some(_) => report.finished += 1,
                None => break,
            },
            () = &mut grace => break,
        }
    }
    running.shutdown().await;
    let leftover: Vec<Uuid> = shared.inflight().drain().collect();
    for job in leftover {
        give_back(shared, job, &mut report).await;
    }
    report
}

/// After the grace period: a `running` job goes back to the queue, an `applying` one is
/// interrupted (a half-made change must not be retried blindly).
async fn give_back(shared: &Shared, job: Uuid, report: &mut ShutdownReport) {
    let store = &shared.store;
    let worker = &*shared.worker;
    match store.transition(job, worker, JobState::Queued, None).await {
        Ok(true) => {
            tracing::info!(job.id = %job, "queue: gave a running job back at shutdown");
            return report.released.push(job);
        }
        Ok(false) => {}
        Err(err) => tracing::warn!(job.id = %job, error = %err, "queue: giving a job back failed"),
    }
    let interrupted = store
        .transition(
            job,
            worker,
            JobState::Interrupted,
            Some(SHUTDOWN_DURING_APPLY),
        )
        .await;
    match interrupted {
        Ok(true) => {
            tracing::warn!(job.id = %job, "queue: interrupted an applying job at shutdown");
            report.interrupted.push(job);
        }
        Ok(false) => {}
        Err(err) => tracing::warn!(job.id = %job, error = %err, "queue: interrupting a job failed"),
    }
}

async fn run_job(shared: Arc<Shared>, job: Job, stop: watch::Receiver<bool>) {
    let id = job.id;
    shared.inflight().insert(id);
    let span =
        tracing::info_span!("job", job.id = %id, job.kind = %job.kind, job.attempt = job.attempts);
    execute(&shared, job, stop).instrument(span).await;
    shared.inflight().remove(&id);
}

async fn execute(shared: &Arc<Shared>, job: Job, stop: watch::Receiver<bool>) {
    let id = job.id;
    let started = std::time::Instant::now();
    let Some(handler) = shared.handlers.get(&job.kind).cloned() else {
        let error = format!("no handler for job kind `{}`", job.kind);
        return finish(shared, id, JobState::Failed, Some(&error)).await;
    };
    let (lost_tx, lost_rx) = watch::channel(false);
    let beat = tokio::spawn(heartbeat(shared.clone(), id, lost_tx));
    let _beat = AbortOnDrop(beat.abort_handle());
    let kind = job.kind.clone();
    let ctx = JobContext::new(
        job,
        shared.store.clone(),
        shared.worker.clone(),
        stop,
        lost_rx,
    );
    let task = tokio::spawn(async move { handler.run(ctx).await }.in_current_span());
    let _task = AbortOnDrop(task.abort_handle());
    let (state, error) = outcome(task.await);
    if let Some(error) = &error {
        tracing::warn!(error = %error, "queue: job failed");
    }
    finish(shared, id, state, error.as_deref()).await;
    shared
        .settings
        .metrics
        .record(&kind, state, started.elapsed().as_secs_f64());
}

fn outcome(joined: Result<anyhow::Result<()>, JoinError>) -> (JobState, Option<String>) {
    match joined {
        Ok(Ok(())) => (JobState::Succeeded, None),
        Ok(Err(err)) => (JobState::Failed, Some(format!("{err:#}"))),
        Err(err) if err.is_panic() => (
            JobState::Failed,
            Some("the job handler panicked; see the server log".to_owned()),
        ),
        Err(_) => (JobState::Failed, Some("the job was aborted".to_owned())),
    }
}

/// Records the outcome, retrying a store that is briefly unavailable while the lease holds.
async fn finish(shared: &Shared, job: Uuid, state: JobState, error: Option<&str>) {
    for attempt in 1..=FINISH_RETRIES {
        match shared
            .store
            .transition(job, &shared.worker, state, error)
            .await
        {
            Ok(true) => return,
            Ok(false) => {
                return tracing::warn!(
                    job.state = state.as_str(),
                    "queue: job ended after this worker lost it; its outcome is not recorded"
                );
            }
            Err(err @ StoreError::Unavailable(_)) if attempt < FINISH_RETRIES => {
                tracing::warn!(error = %err, attempt, "queue: recording the outcome failed; retrying");
                tokio::time::sleep(Duration::from_millis(200) * attempt).await;
            }
            Err(err) => {
                return tracing::error!(error = %err, "queue: recording the outcome failed");
            }
        }
    }
}

/// Renews the lease until aborted; tells the handler when the lease is gone.
async fn heartbeat(shared: Arc<Shared>, job: Uuid, lost: watch::Sender<bool>) {
    let settings = &shared.settings;
    let mut ticks = tokio::time::interval(settings.heartbeat);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await; // the first tick is immediate; the claim has just set the lease
    loop {
        ticks.tick().await;
        match shared
            .store
            .heartbeat(job, &shared.worker, settings.lease)
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("queue: lost the lease; asking the handler to stop");
                lost.send_replace(true);
                return std::future::pending().await;
            }
            Err(err) => tracing::warn!(error = %err, "queue: renewing the lease failed; retrying"),
        }
    }
}

async fn reap_loop(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    loop {
        match shared.store.reap(shared.settings.max_attempts).await {
            Ok(reaped) => {
                for job in &reaped.interrupted {
                    tracing::warn!(job.id = %job, "queue: lease expired while applying; interrupted");
                }
                for job in &reaped.failed {
                    tracing::warn!(job.id = %job, "queue: its worker died under it too often; failed");
                }
                for job in &reaped.requeued {
                    tracing::info!(job.id = %job, "queue: lease expired while running; requeued");
                }
                if let Some(reports) = &shared.reaped
                    && reaped != Reaped::default()
                {
                    // A closed receiver means nobody asks any more; that is not an error.
                    let _ = reports.send(reaped);
                }
            }
            Err(err) => tracing::warn!(error = %err, "queue: reaping expired leases failed"),
        }
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            () = tokio::time::sleep(shared.settings.reap_interval) => {}
        }
    }
}

/// Retention: deletes finished jobs and delivery records older than `retention`, in bounded
/// batches, at start and then every [`super::PRUNE_INTERVAL`].
async fn prune_loop(shared: Arc<Shared>, retention: Duration, mut stop: watch::Receiver<bool>) {
    loop {
        let mut total = Pruned::default();
        loop {
            match shared.store.prune(retention).await {
                Ok(pruned) => {
                    total.deliveries += pruned.deliveries;
                    total.jobs += pruned.jobs;
                    if !pruned.full() || stopping(&stop) {
                        break;
                    }
                }
                Err(err) => {
                    tracing::warn!(error = %err, "queue: deleting old jobs and deliveries failed; trying again next hour");
                    break;
                }
            }
        }
        if total != Pruned::default() {
            tracing::info!(
                jobs = total.jobs,
                deliveries = total.deliveries,
                "queue: deleted finished jobs and delivery records past the retention period"
            );
        }
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            () = tokio::time::sleep(super::PRUNE_INTERVAL) => {}
        }
    }
}
