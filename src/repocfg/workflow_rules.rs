//! Which workflow a project runs, under the server's rules (Atlantis's `ValidateRepoCfg` and
//! `MergeProjectCfg` in `valid/global_cfg.go`): a project's `workflow:` needs
//! `allowed_overrides: [workflow]`, `workflows:` in `atlantis.yaml` needs
//! `allow_custom_workflows: true`, a named workflow must be defined in one of the two files
//! (and be among `allowed_workflows` when the server lists them); a project that names none
//! runs the repo rule's `workflow`, else `default`.

use std::collections::BTreeMap;

use super::repo::{RepoConfig, RepoConfigError};
use super::server::{Override, RepoPolicy};
use super::workflow::{DEFAULT_WORKFLOW, Workflow};
use super::workflow_steps::{ProjectWorkflow, WorkflowRefusal};

/// Refuses `config` where Atlantis refuses it under `policy`, with Atlantis's words.
pub(crate) fn check(config: &RepoConfig, policy: &RepoPolicy) -> Result<(), RepoConfigError> {
    let named =
        || {
            config.projects.iter().enumerate().filter_map(|(i, p)| {
                Some((format!("projects[{i}].workflow"), p.workflow.as_ref()?))
            })
        };
    if let Some((path, _)) = named().next()
        && !policy.allows(Override::Workflow)
    {
        return Err(RepoConfigError::WorkflowKeyRefused { path });
    }
    if !config.workflows.is_empty() && !policy.allow_custom_workflows {
        return Err(RepoConfigError::CustomWorkflowsRefused);
    }
    for (path, name) in named() {
        if !config.workflows.contains_key(name) && !policy.workflows.contains_key(name) {
            let known: Vec<String> = policy.workflows.keys().map(|k| format!("`{k}`")).collect();
            let known = if known.is_empty() {
                String::new()
            } else {
                format!(" ({})", known.join(", "))
            };
            return Err(RepoConfigError::UndefinedWorkflow {
                path,
                name: name.clone(),
                known,
            });
        }
        let Some(allowed) = policy.allowed_workflows.as_ref().filter(|a| !a.is_empty()) else {
            continue;
        };
        let own = policy.allow_custom_workflows && config.workflows.contains_key(name);
        if !own && !allowed.contains(name) {
            let allowed = allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(RepoConfigError::WorkflowNotAllowed {
                path,
                name: name.clone(),
                allowed,
            });
        }
    }
    Ok(())
}

/// The workflow a project runs: the one it names (the repository's own first, where custom
/// workflows are allowed, then the server's), else the repo rule's, else `default`; as the
/// project runs it, or why it cannot. Assumes [`check`] passed.
pub(crate) fn pick(
    named: Option<&str>,
    own: &BTreeMap<String, Workflow>,
    policy: &RepoPolicy,
) -> Result<ProjectWorkflow, WorkflowRefusal> {
    let from_repo = named
        .filter(|_| policy.allow_custom_workflows)
        .and_then(|name| own.get(name));
    let name = named
        .or(policy.workflow.as_deref())
        .unwrap_or(DEFAULT_WORKFLOW);
    match from_repo.or_else(|| policy.workflows.get(name)) {
        Some(workflow) => workflow.for_project(),
        None if name == DEFAULT_WORKFLOW => Ok(ProjectWorkflow::default_workflow()),
        None => Err(WorkflowRefusal {
            workflow: name.to_owned(),
            path: "workflow".to_owned(),
            problem: format!("names workflow {name:?}, which is not defined anywhere"),
        }),
    }
}

impl RepoConfig {
    /// Refuses the file where the server's rules for the repository refuse it (today: what
    /// it may say about workflows), as `resolve` does before anything is planned.
    pub fn check_against(&self, policy: &RepoPolicy) -> Result<(), RepoConfigError> {
        check(self, policy)
    }
}
