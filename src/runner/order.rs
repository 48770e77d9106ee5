//! The order a command runs its projects in: by `execution_order_group` (ascending, stable so
//! atlantis.yaml's order stays within a group), and for apply, dependencies (`depends_on`)
//! before the projects that need them when both apply in one command.

use crate::repocfg::Project;

/// Sorts projects by execution order group, keeping their order within a group.
pub(super) fn by_group(projects: &mut [Project]) {
    projects.sort_by_key(|p| p.options.execution_order_group);
}

/// Consecutive runs of projects of one group (`projects` sorted with [`by_group`]).
pub(super) fn groups(projects: &[Project]) -> Vec<&[Project]> {
    projects
        .chunk_by(|a, b| a.options.execution_order_group == b.options.execution_order_group)
        .collect()
}

/// Why later groups are skipped, naming the projects that failed.
pub(super) fn abort_reason(failed: &[String]) -> String {
    format!(
        "not run because {} failed in an earlier execution order group and atlantis.yaml sets \
         abort_on_execution_order_fail: true",
        failed.join(", ")
    )
}

/// The wave of each project within one apply: 0 for a project none of whose dependencies is
/// in `projects`, else one more than its deepest dependency there. Dependencies have no cycle
/// (`repocfg` refuses them); the depth is bounded by the number of projects regardless.
pub(super) fn waves(projects: &[&Project]) -> Vec<usize> {
    let mut wave = vec![0usize; projects.len()];
    // Relax at most n times: each pass settles one more level of the dependency chains.
    for _ in 0..projects.len() {
        let mut changed = false;
        for (i, p) in projects.iter().enumerate() {
            let deepest = p
                .options
                .depends_on
                .iter()
                .filter_map(|dep| projects.iter().position(|q| q.name.as_ref() == Some(dep)))
                .map(|j| wave[j] + 1)
                .max()
                .unwrap_or(0);
            if deepest > wave[i] && deepest <= projects.len() {
                wave[i] = deepest;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    wave
}
