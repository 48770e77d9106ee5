//! Fault injection, changeable at run time: latency per request (optionally per path), a random
//! error rate, `got timeout` config-lock errors, lost responses, failing tasks and offline nodes.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A task failure to inject: the next `times` tasks matching `task_type`/`vmid` fail part-way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFailure {
    /// Task type (`vzcreate`, `vzstart`, ...); `None` matches any.
    pub task_type: Option<String>,
    /// Guest id; `None` matches any.
    pub vmid: Option<u32>,
    /// The error the task ends with (`TASK ERROR: <message>`).
    pub message: String,
    /// How many matching tasks fail.
    pub times: u32,
}

/// The current fault settings.
#[derive(Debug, Clone, Default)]
pub struct FaultSettings {
    /// Added to every request while it holds a worker.
    pub latency: Duration,
    /// Extra latency for requests whose path contains the given text.
    pub path_latency: Vec<(String, Duration)>,
    /// Probability (0..=1) that a request fails with a transient error before it runs.
    pub error_rate: f64,
    /// The next N writes to a guest fail with `can't lock file ... - got timeout`.
    pub lock_timeouts: u32,
    /// The next N writes (non-GET) run, but their response is lost (596 to the client).
    pub lost_responses: u32,
    /// Tasks to fail.
    pub task_failures: Vec<TaskFailure>,
    /// Nodes that do not answer (595 for requests addressed to them).
    pub offline_nodes: BTreeSet<String>,
    /// Error bodies without `message`, as libpve-http-server before 5.2 sent them (the
    /// message is then only in the HTTP status line).
    pub legacy_error_bodies: bool,
    /// The guest the client runs on: a write that drops its network link or stops/reboots it
    /// is carried out, but the client's connection is cut (596) instead of answered.
    pub self_guest: Option<u32>,
    /// How long a new task is unknown to `tasks/{upid}/status|log` (400 `no such task`), as
    /// right after a worker starts on a busy node.
    pub task_visibility_delay: Duration,
    /// How stale `cluster/resources` may be (PVE: about 10 s, from pvestatd broadcasts);
    /// zero answers from the current state.
    pub resources_staleness: Duration,
}

/// A handle to change faults while the simulator runs.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    inner: Arc<Mutex<FaultSettings>>,
}

/// What the request pipeline should do with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Injected {
    None,
    LockTimeout,
    Transient,
    LoseResponse,
}

impl Faults {
    pub(crate) fn new(settings: FaultSettings) -> Self {
        Self {
            inner: Arc::new(Mutex::new(settings)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, FaultSettings> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A copy of the current settings.
    pub fn settings(&self) -> FaultSettings {
        self.lock().clone()
    }

    /// Replaces all settings.
    pub fn set(&self, settings: FaultSettings) {
        *self.lock() = settings;
    }

    /// Sets the latency added to every request.
    pub fn set_latency(&self, latency: Duration) {
        self.lock().latency = latency;
    }

    /// Sets the random transient error rate (0..=1).
    pub fn set_error_rate(&self, rate: f64) {
        self.lock().error_rate = rate.clamp(0.0, 1.0);
    }

    /// Makes the next `n` writes to a guest fail with a config-lock `got timeout`.
    pub fn inject_lock_timeouts(&self, n: u32) {
        self.lock().lock_timeouts = n;
    }

    /// Makes the next `n` writes run but lose their response.
    pub fn lose_responses(&self, n: u32) {
        self.lock().lost_responses = n;
    }

    /// Adds a task failure.
    pub fn fail_tasks(&self, failure: TaskFailure) {
        self.lock().task_failures.push(failure);
    }

    /// Takes a node offline (or back online).
    pub fn set_node_offline(&self, node: &str, offline: bool) {
        let mut s = self.lock();
        if offline {
            s.offline_nodes.insert(node.to_owned());
        } else {
            s.offline_nodes.remove(node);
        }
    }

    /// Switches between the legacy (`{"data":null}`) and current error bodies.
    pub fn set_legacy_error_bodies(&self, legacy: bool) {
        self.lock().legacy_error_bodies = legacy;
    }

    /// Marks the guest the client runs on (see [`FaultSettings::self_guest`]).
    pub fn set_self_guest(&self, vmid: Option<u32>) {
        self.lock().self_guest = vmid;
    }

    /// Sets how long new tasks answer `no such task`.
    pub fn set_task_visibility_delay(&self, delay: Duration) {
        self.lock().task_visibility_delay = delay;
    }

    /// Sets how stale `cluster/resources` answers may be.
    pub fn set_resources_staleness(&self, staleness: Duration) {
        self.lock().resources_staleness = staleness;
    }

    pub(crate) fn resources_staleness(&self) -> Duration {
        self.lock().resources_staleness
    }

    pub(crate) fn task_visibility_delay(&self) -> Duration {
        self.lock().task_visibility_delay
    }

    pub(crate) fn self_guest(&self) -> Option<u32> {
        self.lock().self_guest
    }

    pub(crate) fn legacy_error_bodies(&self) -> bool {
        self.lock().legacy_error_bodies
    }

    pub(crate) fn is_offline(&self, node: &str) -> bool {
        self.lock().offline_nodes.contains(node)
    }

    /// The latency for a request path.
    pub(crate) fn latency_for(&self, path: &str) -> Duration {
        let s = self.lock();
        s.latency
            + s.path_latency
                .iter()
                .filter(|(p, _)| path.contains(p.as_str()))
                .map(|(_, d)| *d)
                .sum::<Duration>()
    }

    /// Decides the fault for one request (consuming one-shot counters). Only writes to a guest
    /// take its config lock, so only they can get `got timeout`.
    pub(crate) fn decide(&self, guest_write: bool, is_write: bool) -> Injected {
        let mut s = self.lock();
        if guest_write && s.lock_timeouts > 0 {
            s.lock_timeouts -= 1;
            return Injected::LockTimeout;
        }
        if is_write && s.lost_responses > 0 {
            s.lost_responses -= 1;
            return Injected::LoseResponse;
        }
        if s.error_rate > 0.0 && rand::random::<f64>() < s.error_rate {
            return if guest_write {
                Injected::LockTimeout
            } else {
                Injected::Transient
            };
        }
        Injected::None
    }

    /// Takes the failure for a task, if one matches.
    pub(crate) fn take_task_failure(&self, task_type: &str, vmid: Option<u32>) -> Option<String> {
        let mut s = self.lock();
        let pos = s.task_failures.iter().position(|f| {
            f.times > 0
                && f.task_type.as_deref().is_none_or(|t| t == task_type)
                && f.vmid.is_none_or(|v| Some(v) == vmid)
        })?;
        let failure = &mut s.task_failures[pos];
        failure.times -= 1;
        let message = failure.message.clone();
        s.task_failures.retain(|f| f.times > 0);
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_timeouts_are_consumed_one_per_request() {
        let f = Faults::default();
        f.inject_lock_timeouts(1);
        assert_eq!(f.decide(true, true), Injected::LockTimeout);
        assert_eq!(f.decide(true, true), Injected::None);
    }

    #[test]
    fn task_failure_matches_type_and_runs_out() {
        let f = Faults::default();
        f.fail_tasks(TaskFailure {
            task_type: Some("vzcreate".to_owned()),
            vmid: None,
            message: "boom".to_owned(),
            times: 1,
        });
        assert_eq!(f.take_task_failure("vzstart", Some(100)), None);
        assert_eq!(
            f.take_task_failure("vzcreate", Some(100)).as_deref(),
            Some("boom")
        );
        assert_eq!(f.take_task_failure("vzcreate", Some(100)), None);
    }
}
