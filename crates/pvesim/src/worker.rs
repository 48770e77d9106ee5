//! Running worker tasks: a task is registered at once (UPID returned), its body runs after the
//! configured task duration under the cluster lock, and injected failures end it part-way.

use std::sync::Arc;

use super::model::Cluster;
use super::server::Sim;
use super::tasks::Exit;

/// The body of a task: writes log lines; `fail` is an injected error to end with part-way
/// (the body cleans up what it did). Returns the number of warnings, or the error.
pub(crate) type TaskBody =
    Box<dyn FnOnce(&mut Cluster, &mut Vec<String>, Option<String>) -> Result<u32, String> + Send>;

/// Starts `body` as the task `upid` (already registered by `Cluster::new_task`).
pub(crate) fn spawn(
    sim: &Arc<Sim>,
    upid: String,
    task_type: &str,
    vmid: Option<u32>,
    body: TaskBody,
) {
    let fail = sim.faults.take_task_failure(task_type, vmid);
    let hidden_for = sim.faults.task_visibility_delay();
    if let Some(task) = sim.cluster().tasks.get_mut(&upid) {
        task.visible_at = std::time::Instant::now() + hidden_for;
    }
    let sim = sim.clone();
    let delay = sim.opts.task_duration;
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let mut cluster = sim.cluster();
        let mut log = Vec::new();
        let result = body(&mut cluster, &mut log, fail);
        if let Some(task) = cluster.tasks.get_mut(&upid) {
            task.log.extend(log);
            task.finish(match result {
                Ok(0) => Exit::Ok,
                Ok(n) => Exit::Warnings(n),
                Err(e) => Exit::Error(e),
            });
        }
    });
}
