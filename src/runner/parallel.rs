//! A command's projects, one after another or, when `atlantis.yaml` sets `parallel_plan` /
//! `parallel_apply`, a few at a time. Either way the results come back in project order, so
//! comments list projects in a stable order whichever finished first.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use futures::stream::{self, StreamExt as _};
use tokio::sync::watch;

/// At most this many projects of one command run at once (each one talks to Proxmox and the
/// forge; a small bound keeps a big PR from flooding either).
pub(super) const MAX_PARALLEL: usize = 3;

/// Runs `work` (one future per project, not yet started), concurrently (bounded) when
/// `parallel`; results in the order of `work`.
///
/// Taking the futures already made, rather than a closure, keeps their lifetimes concrete:
/// a closure over borrowed items makes the job future's `Send` bound unprovable.
pub(super) async fn in_order<Fut: Future>(work: Vec<Fut>, parallel: bool) -> Vec<Fut::Output> {
    let width = if parallel { MAX_PARALLEL } else { 1 };
    stream::iter(work).buffered(width).collect().await
}

/// Like [`in_order`] for fallible work: the first error stops the rest. One after another,
/// nothing after it starts; in parallel, what already started runs to its end (an apply is
/// never cut off half-way), nothing new starts, and the first error in order is returned.
pub(super) async fn try_in_order<Fut, T>(work: Vec<Fut>, parallel: bool) -> anyhow::Result<Vec<T>>
where
    Fut: Future<Output = anyhow::Result<T>>,
{
    if !parallel {
        let mut out = Vec::new();
        for one in work {
            out.push(one.await?);
        }
        return Ok(out);
    }
    let failed = AtomicBool::new(false);
    let guarded = work
        .into_iter()
        .map(|one| {
            let failed = &failed;
            async move {
                // `buffered` polls a future for the first time when it starts it.
                if failed.load(Ordering::SeqCst) {
                    return None;
                }
                let result = one.await;
                if result.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                Some(result)
            }
        })
        .collect();
    in_order(guarded, true)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Lets concurrent projects take one step in project order: posting their apply comment, so
/// the PR lists them in order whichever got there first. A project's turn ends when its
/// [`Turn`] is dropped, whether it took the step or returned before it.
#[derive(Debug)]
pub(super) struct Turns {
    ended: Mutex<Vec<bool>>,
    /// The first project whose turn has not ended.
    next: watch::Sender<usize>,
}

impl Turns {
    pub(super) fn new(projects: usize) -> Self {
        Self {
            ended: Mutex::new(vec![false; projects]),
            next: watch::Sender::new(0),
        }
    }

    /// Project `index`'s turn; take it with [`Turn::wait`] before the ordered step.
    pub(super) fn turn(&self, index: usize) -> Turn<'_> {
        Turn { turns: self, index }
    }

    fn end(&self, index: usize) {
        let mut ended = self.ended.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = ended.get_mut(index) {
            *slot = true;
        }
        let next = ended.iter().position(|e| !e).unwrap_or(ended.len());
        self.next.send_replace(next);
    }
}

/// One project's place in [`Turns`]; ends its turn when dropped.
#[derive(Debug)]
pub(super) struct Turn<'a> {
    turns: &'a Turns,
    index: usize,
}

impl Turn<'_> {
    /// Waits until every project before this one has ended its turn.
    pub(super) async fn wait(&self) {
        let mut next = self.turns.next.subscribe();
        // The sender lives in `turns`, which outlives this borrow: the wait cannot fail.
        let _ = next.wait_for(|n| *n >= self.index).await;
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.turns.end(self.index);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Runs items that finish in reverse order; returns the results and the peak concurrency.
    async fn run(parallel: bool) -> (Vec<u64>, usize) {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let work = [40u64, 20, 1, 30, 10].map(|ms| {
            let (running, peak) = (&running, &peak);
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                ms
            }
        });
        let out = in_order(work.into(), parallel).await;
        (out, peak.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn parallel_work_is_bounded_and_results_keep_item_order() {
        let (out, peak) = run(true).await;
        assert_eq!(out, vec![40, 20, 1, 30, 10]);
        assert_eq!(peak, MAX_PARALLEL);
    }

    #[tokio::test]
    async fn sequential_work_runs_one_at_a_time() {
        let (out, peak) = run(false).await;
        assert_eq!(out, vec![40, 20, 1, 30, 10]);
        assert_eq!(peak, 1);
    }

    #[tokio::test]
    async fn after_an_error_nothing_new_starts_and_what_started_finishes() {
        // In parallel, 1 to 3 start together; 2 fails first, 1 and 3 finish, 4 to 6 never start.
        for (parallel, expected_runs) in [(false, 2), (true, 3)] {
            let runs = AtomicUsize::new(0);
            let work = [1u64, 2, 3, 4, 5, 6].map(|n| {
                let runs = &runs;
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(if n == 2 { 10 } else { 30 })).await;
                    if n == 2 {
                        anyhow::bail!("project {n} failed")
                    }
                    Ok(n)
                }
            });
            let result = try_in_order(work.into(), parallel).await;
            assert_eq!(
                result.map_err(|e| e.to_string()),
                Err("project 2 failed".to_owned())
            );
            assert_eq!(
                runs.load(Ordering::SeqCst),
                expected_runs,
                "parallel={parallel}"
            );
        }
    }

    #[tokio::test]
    async fn turns_go_in_order_and_a_project_that_returns_early_passes_its_turn() {
        let turns = Turns::new(3);
        let order = Mutex::new(Vec::new());
        let work = [(0usize, 30u64, true), (1, 0, false), (2, 0, true)].map(|(i, ms, posts)| {
            let (turns, order) = (&turns, &order);
            async move {
                let turn = turns.turn(i);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                if posts {
                    turn.wait().await;
                    order.lock().unwrap_or_else(PoisonError::into_inner).push(i);
                }
            }
        });
        in_order(work.into(), true).await;
        assert_eq!(
            *order.lock().unwrap_or_else(PoisonError::into_inner),
            vec![0, 2]
        );
    }
}
