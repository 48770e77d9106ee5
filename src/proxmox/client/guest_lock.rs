//! Waiting for a guest's lock to clear. PVE refuses most operations on a locked guest
//! (`CT 300 is locked (create)`), and the task holding the lock (a create, backup, migration or
//! snapshot) runs on the node whether or not the process that started it still lives: right
//! after `kill -9` of an apply, its create tasks are still running. The wait is bounded by
//! [`TaskPolling::lock_timeout`](super::TaskPolling), logs its progress, and its error names the
//! task that holds the lock.

use std::time::Duration;

use reqwest::Method;
use tokio::time::Instant;

use super::model::TaskSummary;
use super::transport::Call;
use super::{ProxmoxClient, PveError, seg};
use crate::proxmox::types::{GuestKind, NodeName, VmId};

/// How often a wait that goes on is logged again.
const REPORT_EVERY: Duration = Duration::from_secs(10);

impl ProxmoxClient {
    /// The guest's running tasks on `node`, newest first (`GET /nodes/{node}/tasks` with
    /// `vmid` and `source=active`).
    pub async fn guest_tasks(
        &self,
        node: &NodeName,
        vmid: VmId,
    ) -> Result<Vec<TaskSummary>, PveError> {
        let path = format!("/nodes/{}/tasks", seg(node.as_str()));
        let call = Call::new(Method::GET, path, Some(node.as_str()))
            .param("vmid", vmid.get())
            .param("source", "active");
        self.transport.execute(&call).await
    }

    /// Returns as soon as the guest holds no lock. `NotFound` when the guest does not exist
    /// (a failed create removes it); [`PveError::Locked`], naming the running task that holds
    /// the lock, when it is still locked after `lock_timeout`.
    pub async fn wait_unlocked(
        &self,
        node: &NodeName,
        kind: GuestKind,
        vmid: VmId,
    ) -> Result<(), PveError> {
        let started = Instant::now();
        let mut delay = self.polling.first_delay;
        let mut report_at = started;
        loop {
            let status = self.guest_status(node, kind, vmid).await?;
            let Some(lock) = status.lock.filter(|l| !l.is_empty()) else {
                if report_at > started {
                    let waited = started.elapsed().as_secs();
                    tracing::warn!(pve.node = %node, vmid = %vmid, waited_secs = waited, "{} {vmid}: the lock cleared after {waited}s; going on", word(kind));
                }
                return Ok(());
            };
            let waited = started.elapsed();
            if waited >= self.polling.lock_timeout {
                let holder = self.lock_holder(node, vmid).await;
                return Err(PveError::Locked {
                    kind,
                    vmid,
                    node: node.clone(),
                    lock,
                    holder,
                    waited,
                });
            }
            if Instant::now() >= report_at {
                let holder = self.lock_holder(node, vmid).await;
                tracing::warn!(
                    pve.node = %node,
                    vmid = %vmid,
                    lock = %lock,
                    task = holder.as_deref().unwrap_or("none found"),
                    waited_secs = waited.as_secs(),
                    limit_secs = self.polling.lock_timeout.as_secs(),
                    "{} {vmid} is locked ({lock}); waiting for the lock to clear",
                    word(kind)
                );
                report_at += REPORT_EVERY;
            }
            let left = self.polling.lock_timeout.saturating_sub(waited);
            tokio::time::sleep(delay.min(left).max(Duration::from_millis(1))).await;
            delay = (delay * 3 / 2).min(self.polling.max_delay);
        }
    }

    /// The newest running task of the guest, best effort (`None` if none or unreadable).
    async fn lock_holder(&self, node: &NodeName, vmid: VmId) -> Option<String> {
        match self.guest_tasks(node, vmid).await {
            Ok(tasks) => tasks
                .into_iter()
                .find(TaskSummary::is_running)
                .map(|t| t.upid),
            Err(e) => {
                tracing::debug!(pve.node = %node, vmid = %vmid, error = %e, "listing the guest's tasks failed");
                None
            }
        }
    }
}

fn word(kind: GuestKind) -> &'static str {
    match kind {
        GuestKind::Lxc => "CT",
        GuestKind::Qemu => "VM",
    }
}
