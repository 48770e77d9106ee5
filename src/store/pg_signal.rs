//! Wake-ups between PostgreSQL replicas: a `LISTEN` task turns notifications into changes of the
//! store's [`JobSignal`], and a notifier task sends them.
//!
//! `NOTIFY` inside a job's transaction would serialise every such commit on PostgreSQL's global
//! notify lock, fsync included (a few hundred commits a second). Instead, writers only ask for a
//! notification after they commit; the notifier coalesces the asks into one `NOTIFY` at a time,
//! sent without waiting for its own fsync (it carries no data: a lost one costs a poll interval).

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgListener, PgPool};
use tokio::sync::{Notify, watch};
use tokio::task::AbortHandle;

use super::{JobSignal, StoreError};

/// The `NOTIFY` channel that announces claimable work.
const CHANNEL: &str = "atoll_jobs";
/// Wait before re-opening a lost `LISTEN` connection.
const RELISTEN_BACKOFF: Duration = Duration::from_secs(1);

/// Both tasks; they stop when this is dropped.
#[derive(Debug)]
pub(super) struct PgSignal {
    signal: watch::Sender<u64>,
    asks: Arc<Notify>,
    tasks: [AbortHandle; 2],
}

impl Drop for PgSignal {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl PgSignal {
    /// Starts listening before returning, so no notification sent after this is missed.
    pub(super) async fn start(pool: &PgPool) -> Result<Self, StoreError> {
        let signal = watch::Sender::new(0);
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen(CHANNEL).await?;
        let asks = Arc::new(Notify::new());
        let listen = tokio::spawn(listen(listener, pool.clone(), signal.clone()));
        let notify = tokio::spawn(notifier(pool.clone(), asks.clone()));
        Ok(Self {
            signal,
            asks,
            tasks: [listen.abort_handle(), notify.abort_handle()],
        })
    }

    /// Call after committing a change that may let a job be claimed: wakes this process at
    /// once and the other replicas through `NOTIFY`.
    pub(super) fn announce(&self) {
        bump(&self.signal);
        self.asks.notify_one();
    }

    pub(super) fn subscribe(&self) -> JobSignal {
        self.signal.subscribe()
    }
}

fn bump(signal: &watch::Sender<u64>) {
    signal.send_modify(|n| *n = n.wrapping_add(1));
}

/// One `NOTIFY` per batch of asks (a `Notify` permit holds any number of them).
async fn notifier(pool: PgPool, asks: Arc<Notify>) {
    loop {
        asks.notified().await;
        let sent =
            sqlx::query("SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')")
                .bind(CHANNEL)
                .execute(&pool)
                .await;
        if let Err(err) = sent {
            tracing::warn!(error = %err, "store: NOTIFY failed; other replicas will poll");
        }
    }
}

/// Turns notifications into signal changes; a lost connection is re-opened, and counted as a
/// change because notifications may have been missed meanwhile.
async fn listen(mut listener: PgListener, pool: PgPool, signal: watch::Sender<u64>) {
    loop {
        match listener.try_recv().await {
            Ok(Some(_)) => bump(&signal),
            Ok(None) => bump(&signal), // reconnects and re-listens on the next call
            Err(err) => {
                tracing::warn!(error = %err, "store: lost the postgres LISTEN connection; retrying");
                bump(&signal);
                tokio::time::sleep(RELISTEN_BACKOFF).await;
                match PgListener::connect_with(&pool).await {
                    Ok(mut fresh) => {
                        if fresh.listen(CHANNEL).await.is_ok() {
                            listener = fresh;
                        }
                    }
                    Err(err) => tracing::warn!(error = %err, "store: re-opening LISTEN failed"),
                }
            }
        }
    }
}
