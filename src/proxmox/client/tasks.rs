//! Task status and log, waiting for a task with backoff and a deadline, and the create that
//! survives a lost response without creating twice.

use std::time::Duration;

use reqwest::Method;
use tokio::time::Instant;
use tracing::Instrument;

use super::model::{GuestCreate, TaskLogLine, TaskOutcome, TaskStatus};
use super::transport::Call;
use super::{ConflictKind, Detail, ProxmoxClient, PveError, seg};
use crate::proxmox::types::{GuestKind, NodeName, Upid, VmId};

/// What [`ProxmoxClient::guest_create_and_wait`] observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOutcome {
    /// The create task finished.
    Created(TaskOutcome),
    /// The response to the create was lost, but the container exists and its create lock is
    /// gone: the create went through once. Its task id is unknown.
    Recovered,
}

fn task_path(upid: &Upid, leaf: &str) -> String {
    format!(
        "/nodes/{}/tasks/{}/{leaf}",
        seg(upid.node().as_str()),
        seg(upid.as_str())
    )
}

fn is_ok_exit(status: &str) -> bool {
    status == "OK"
        || status
            .strip_prefix("WARNINGS: ")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

impl ProxmoxClient {
    pub async fn task_status(&self, upid: &Upid) -> Result<TaskStatus, PveError> {
        let call = Call::new(
            Method::GET,
            task_path(upid, "status"),
            Some(upid.node().as_str()),
        );
        self.transport.execute(&call).await
    }

    pub async fn task_log(
        &self,
        upid: &Upid,
        start: u64,
        limit: u64,
    ) -> Result<Vec<TaskLogLine>, PveError> {
        let call = Call::new(
            Method::GET,
            task_path(upid, "log"),
            Some(upid.node().as_str()),
        )
        .param("start", start)
        .param("limit", limit);
        self.transport.execute(&call).await
    }

    /// The last `lines` lines of a task's log (best effort: empty if the log cannot be read).
    async fn task_log_tail(&self, upid: &Upid, lines: usize) -> Vec<String> {
        let mut start = 0u64;
        let mut tail: Vec<String> = Vec::new();
        // Pages of 500 until a short page; bounded so a runaway log cannot keep us here.
        for _ in 0..200 {
            let Ok(page) = self.task_log(upid, start, 500).await else {
                break;
            };
            let count = page.len() as u64;
            tail.extend(page.into_iter().map(|l| l.t));
            if tail.len() > lines {
                tail.drain(..tail.len() - lines);
            }
            if count < 500 {
                break;
            }
            start += count;
        }
        tail
    }

    /// Polls the task until it stops (backoff from `first_delay` to `max_delay`, deadline
    /// `timeout`). A failed task yields `PveError::Task` with its exit status and log tail.
    pub async fn wait_task(&self, upid: &Upid) -> Result<TaskOutcome, PveError> {
        let span = tracing::info_span!("pve.task", pve.node = %upid.node(), pve.upid = %upid);
        self.poll_task(upid).instrument(span).await
    }

    async fn poll_task(&self, upid: &Upid) -> Result<TaskOutcome, PveError> {
        let started = Instant::now();
        let mut delay = self.polling.first_delay;
        let mut unknown_tries = 0;
        loop {
            match self.task_status(upid).await {
                Ok(status) if status.status == "stopped" => {
                    let exit = status
                        .exitstatus
                        .unwrap_or_else(|| "unexpected status".into());
                    if is_ok_exit(&exit) {
                        return Ok(TaskOutcome {
                            upid: upid.clone(),
                            exitstatus: exit,
                        });
                    }
                    let log_tail = self.task_log_tail(upid, self.polling.log_tail_lines).await;
                    tracing::warn!(exitstatus = %exit, "proxmox task failed");
                    return Err(PveError::Task {
                        upid: upid.to_string(),
                        exitstatus: exit,
                        log_tail,
                    });
                }
                Ok(_) => {}
                // PVE may not know a task for a moment right after it was started.
                Err(PveError::Validation { errors, .. })
                    if errors
                        .get("upid")
                        .is_some_and(|m| m.contains("no such task"))
                        && unknown_tries < 5 =>
                {
                    unknown_tries += 1;
                }
                Err(e) => return Err(e),
            }
            if started.elapsed() >= self.polling.timeout {
                return Err(PveError::TaskTimeout {
                    upid: upid.to_string(),
                    waited: started.elapsed(),
                });
            }
            tokio::time::sleep(delay.min(self.polling.timeout.saturating_sub(started.elapsed())))
                .await;
            delay = (delay * 3 / 2).min(self.polling.max_delay);
        }
    }

    /// Creates a container and waits for the create task. If the response to the create is lost
    /// (a timeout or reset after sending), it never re-sends blindly: it first checks whether the
    /// container exists, then waits for its `create` lock to clear.
    pub async fn guest_create_and_wait(
        &self,
        node: &NodeName,
        kind: GuestKind,
        req: &GuestCreate,
    ) -> Result<CreateOutcome, PveError> {
        let mut resent = false;
        loop {
            let error = match self.guest_create(node, kind, req).await {
                Ok(upid) => return self.wait_task(&upid).await.map(CreateOutcome::Created),
                Err(e) => e,
            };
            let lost = matches!(
                error,
                PveError::Transient {
                    maybe_applied: true,
                    ..
                }
            );
            let raced = resent
                && matches!(
                    error,
                    PveError::Conflict {
                        kind: ConflictKind::AlreadyExists,
                        ..
                    }
                );
            if !(lost || raced) {
                return Err(error);
            }
            tracing::warn!(pve.node = %node, vmid = %req.vmid, error = %error, "create response lost; checking whether the container exists");
            match self.guest_status(node, GuestKind::Lxc, req.vmid).await {
                Ok(_) => return self.wait_create_lock_cleared(node, req.vmid).await,
                // Not there: the request never took effect. The id is explicit, so sending it
                // again cannot make a second container (PVE refuses a taken id).
                Err(PveError::NotFound(_)) if !resent => resent = true,
                Err(PveError::NotFound(_)) => return Err(error),
                Err(other) => return Err(other),
            }
        }
    }

    async fn wait_create_lock_cleared(
        &self,
        node: &NodeName,
        vmid: VmId,
    ) -> Result<CreateOutcome, PveError> {
        let started = Instant::now();
        let mut delay = self.polling.first_delay;
        loop {
            match self.guest_status(node, GuestKind::Lxc, vmid).await {
                Ok(status) if status.lock.as_deref() != Some("create") => {
                    return Ok(CreateOutcome::Recovered);
                }
                Ok(_) => {}
                Err(PveError::NotFound(detail)) => {
                    // PVE removes a container whose create task failed.
                    return Err(PveError::Task {
                        upid: format!("(unknown: create of CT {vmid} on node {node})"),
                        exitstatus: format!(
                            "container disappeared while being created ({})",
                            detail.message
                        ),
                        log_tail: Vec::new(),
                    });
                }
                Err(e) => return Err(e),
            }
            if started.elapsed() >= self.polling.timeout {
                return Err(PveError::Transient {
                    detail: Detail {
                        op: format!("create of CT {vmid} on node {node}"),
                        message: format!("still locked (create) after {:?}", started.elapsed()),
                    },
                    maybe_applied: true,
                });
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 3 / 2)
                .min(self.polling.max_delay)
                .max(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_and_warnings_exit_statuses_are_success() {
        assert!(is_ok_exit("OK"));
        assert!(is_ok_exit("WARNINGS: 2"));
        assert!(!is_ok_exit("WARNINGS: "));
        assert!(!is_ok_exit("unexpected status"));
        assert!(!is_ok_exit("command 'lvcreate' failed: exit code 5"));
    }
}
