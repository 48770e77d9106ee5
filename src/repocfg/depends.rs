//! `depends_on` across the projects of one `atlantis.yaml`: every name is a listed project,
//! none names itself, and the dependencies have no cycle (which would hold its projects back
//! forever). Atlantis checks none of this; a typo would otherwise never hold anything back.

use super::repo::{RepoConfigError, RepoProject};
use crate::commands::ProjectName;

fn invalid(path: &str, problem: impl std::fmt::Display) -> RepoConfigError {
    RepoConfigError::Invalid {
        path: path.to_owned(),
        problem: problem.to_string(),
    }
}

/// Every `depends_on` names a project of the file, not itself, and the dependencies have no
/// cycle (which would make each wait for the other forever).
pub(super) fn check_depends_on(projects: &[RepoProject]) -> Result<(), RepoConfigError> {
    let index_of = |name: &ProjectName| projects.iter().position(|p| p.name.as_ref() == Some(name));
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(projects.len());
    for (i, p) in projects.iter().enumerate() {
        let mut out = Vec::new();
        for (j, dep) in p.options.depends_on.iter().enumerate() {
            let at = format!("projects[{i}].depends_on[{j}]");
            let Some(target) = index_of(dep) else {
                let names: Vec<String> = projects
                    .iter()
                    .filter_map(|p| p.name.as_ref().map(|n| format!("`{n}`")))
                    .collect();
                let known = if names.is_empty() {
                    "this atlantis.yaml names no projects; give the project a `name`".to_owned()
                } else {
                    format!("the named projects are {}", names.join(", "))
                };
                return Err(invalid(
                    &at,
                    format!("`{dep}` is not the name of a project in atlantis.yaml; {known}"),
                ));
            };
            if target == i {
                return Err(invalid(&at, "names the project itself; remove it"));
            }
            out.push(target);
        }
        edges.push(out);
    }
    if let Some(cycle) = find_cycle(&edges) {
        let names: Vec<String> = cycle
            .iter()
            .map(|i| {
                projects[*i]
                    .name
                    .as_ref()
                    .map_or_else(|| format!("projects[{i}]"), ToString::to_string)
            })
            .collect();
        let first = cycle.first().copied().unwrap_or(0);
        return Err(invalid(
            &format!("projects[{first}].depends_on"),
            format!(
                "makes a cycle ({} -> {}): no project in it could ever apply; remove one of \
                 these dependencies",
                names.join(" -> "),
                names.first().map_or("", String::as_str)
            ),
        ));
    }
    Ok(())
}

/// A cycle in the graph, as the nodes along it, found by an iterative depth-first search.
fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; edges.len()];
    for start in 0..edges.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // (node, next edge to follow)
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::Open;
        while let Some((node, next)) = stack.last().copied() {
            match edges[node].get(next) {
                Some(&to) => {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    match mark[to] {
                        Mark::New => {
                            mark[to] = Mark::Open;
                            stack.push((to, 0));
                        }
                        Mark::Open => {
                            let from = stack.iter().position(|(n, _)| *n == to).unwrap_or(0);
                            return Some(stack[from..].iter().map(|(n, _)| *n).collect());
                        }
                        Mark::Done => {}
                    }
                }
                None => {
                    mark[node] = Mark::Done;
                    stack.pop();
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found_with_its_members_in_order() {
        assert_eq!(find_cycle(&[vec![1], vec![2], vec![]]), None);
        assert_eq!(
            find_cycle(&[vec![1], vec![2], vec![0]]),
            Some(vec![0, 1, 2])
        );
        assert_eq!(
            find_cycle(&[vec![], vec![2], vec![3], vec![1]]),
            Some(vec![1, 2, 3])
        );
        // A diamond is no cycle.
        assert_eq!(find_cycle(&[vec![1, 2], vec![3], vec![3], vec![]]), None);
    }
}
