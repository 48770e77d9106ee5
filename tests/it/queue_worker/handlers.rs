//! Job kinds for the tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use atoll::queue::{JobContext, JobHandler, StopReason};
use tokio::sync::{Semaphore, mpsc};

/// Logs the payload's `lines`, then fails with `fail`, panics on `panic`, or succeeds.
#[derive(Debug)]
pub(crate) struct Scripted;

#[async_trait]
impl JobHandler for Scripted {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
        let payload = ctx.job().payload.clone();
        for line in payload["lines"].as_array().into_iter().flatten() {
            ctx.log(line.as_str().unwrap_or("?")).await?;
        }
        if let Some(reason) = payload["fail"].as_str() {
            anyhow::bail!("plan of envs/dev failed: {reason}");
        }
        assert!(payload["panic"].as_bool() != Some(true), "handler bug");
        Ok(())
    }
}

/// Holds every job until a permit is released, recording how many run at once.
#[derive(Debug, Clone)]
pub(crate) struct Gate(Arc<GateState>);

#[derive(Debug)]
pub(crate) struct GateState {
    release: Semaphore,
    counts: Mutex<Counts>,
}

impl Default for Gate {
    fn default() -> Self {
        Self(Arc::new(GateState {
            release: Semaphore::new(0),
            counts: Mutex::default(),
        }))
    }
}

#[derive(Debug, Default)]
struct Counts {
    now: HashMap<String, usize>,
    max_total: usize,
    max_per_repo: usize,
}

impl Gate {
    pub(crate) fn release(&self, jobs: usize) {
        self.0.release.add_permits(jobs);
    }

    /// `(running now, most at once, most at once in one repository)`.
    pub(crate) fn counts(&self) -> (usize, usize, usize) {
        let c = self.0.counts.lock().expect("counts");
        (c.now.values().sum(), c.max_total, c.max_per_repo)
    }

    fn enter(&self, repo: &str) {
        let mut c = self.0.counts.lock().expect("counts");
        let here = c.now.entry(repo.to_owned()).or_default();
        *here += 1;
        let here = *here;
        let total = c.now.values().sum();
        c.max_per_repo = c.max_per_repo.max(here);
        c.max_total = c.max_total.max(total);
    }

    fn leave(&self, repo: &str) {
        let mut c = self.0.counts.lock().expect("counts");
        if let Some(n) = c.now.get_mut(repo) {
            *n -= 1;
        }
    }
}

#[async_trait]
impl JobHandler for Gate {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
        let repo = ctx.job().repo.clone();
        self.enter(&repo);
        self.0.release.acquire().await?.forget();
        self.leave(&repo);
        Ok(())
    }
}

/// Waits for the stop signal and reports its reason; on a second attempt, succeeds at once.
#[derive(Debug)]
pub(crate) struct UntilStopped(pub(crate) mpsc::UnboundedSender<StopReason>);

#[async_trait]
impl JobHandler for UntilStopped {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
        if ctx.job().attempts > 1 {
            return Ok(());
        }
        ctx.log("working").await?;
        let reason = ctx.stopped().await;
        ctx.log(&format!("stopping: {reason:?}")).await?;
        self.0.send(reason)?;
        Ok(())
    }
}

/// Never finishes on its own; with `apply` set it first marks the job applying.
#[derive(Debug)]
pub(crate) struct Stubborn {
    pub(crate) apply: bool,
}

#[async_trait]
impl JobHandler for Stubborn {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
        if self.apply {
            ctx.begin_apply().await?;
        }
        ctx.log("started").await?;
        std::future::pending::<()>().await;
        Ok(())
    }
}
