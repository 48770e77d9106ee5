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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repocfg::ServerRules;

    const SERVER: &str = r#"
repos:
  - id: /.*/
    allowed_overrides: [workflow]
  - id: example.com/acme/custom
    allow_custom_workflows: true
    allowed_workflows: [prod]
  - id: example.com/acme/picked
    workflow: prod
workflows:
  prod:
    plan:
      steps: [init, {plan: {extra_args: [-var-file=prod.tfvars]}}]
"#;

    fn policy(repo: &str) -> RepoPolicy {
        ServerRules::from_yaml(SERVER)
            .expect("rules")
            .policy_for(repo)
    }

    fn checked(yaml: &str, repo: &str) -> Result<(), String> {
        let config = RepoConfig::parse(yaml).expect("parses");
        check(&config, &policy(repo)).map_err(|e| e.to_string())
    }

    #[test]
    fn the_server_decides_what_atlantis_yaml_may_say_about_workflows_in_atlantis_words() {
        let own = "version: 3\nprojects:\n- {dir: ., workflow: mine}\nworkflows: {mine: ~}\n";
        let refused = checked(own, "example.com/acme/web").expect_err("no custom workflows");
        assert!(
            refused.contains("repo config not allowed to define custom workflows: server-side config needs 'allow_custom_workflows: true'"),
            "{refused}"
        );
        assert_eq!(checked(own, "example.com/acme/custom"), Ok(()));
        let undefined = checked(
            "version: 3\nprojects:\n- {dir: ., workflow: nope}\n",
            "example.com/acme/web",
        )
        .expect_err("undefined");
        assert!(
            undefined.contains("`projects[0].workflow`: workflow \"nope\" is not defined anywhere"),
            "{undefined}"
        );
        assert!(undefined.contains("(`prod`)"), "{undefined}");
        let other = "version: 3\nprojects:\n- {dir: ., workflow: other}\nworkflows: {other: ~}\n";
        assert_eq!(checked(other, "example.com/acme/custom"), Ok(()));
        let mut no_override = policy("example.com/acme/web");
        no_override.allowed_overrides.clear();
        let config = RepoConfig::parse("version: 3\nprojects:\n- {dir: ., workflow: prod}\n")
            .expect("parses");
        let key = check(&config, &no_override)
            .expect_err("workflow key")
            .to_string();
        assert!(
            key.contains("repo config not allowed to set 'workflow' key: server-side config needs 'allowed_overrides: [workflow]'"),
            "{key}"
        );
    }

    #[test]
    fn allowed_workflows_limit_the_server_workflows_a_project_may_pick() {
        let rules = "repos:\n  - id: /.*/\n    allowed_overrides: [workflow]\n    \
                     allowed_workflows: [prod]\nworkflows:\n  prod: ~\n  dev: ~\n";
        let policy = ServerRules::from_yaml(rules)
            .expect("rules")
            .policy_for("a/b/c");
        let config = RepoConfig::parse("version: 3\nprojects:\n- {dir: ., workflow: dev}\n")
            .expect("parses");
        let refused = check(&config, &policy)
            .expect_err("not allowed")
            .to_string();
        assert!(
            refused.contains("workflow 'dev' is not allowed for this repo"),
            "{refused}"
        );
    }

    #[test]
    fn a_project_naming_none_runs_the_rule_workflow_else_default() {
        let picked =
            pick(None, &BTreeMap::new(), &policy("example.com/acme/picked")).expect("runs");
        assert_eq!(picked.name, "prod");
        assert_eq!(picked.options.vars.len(), 1);
        let plain = pick(None, &BTreeMap::new(), &policy("example.com/acme/web")).expect("runs");
        assert_eq!(plain, ProjectWorkflow::default_workflow());
    }

    #[test]
    fn server_rules_naming_an_undefined_workflow_are_refused() {
        let err = ServerRules::from_yaml("repos:\n  - id: /.*/\n    workflow: nope\n")
            .expect_err("undefined");
        assert!(
            err.to_string()
                .contains("repos[0].workflow: workflow \"nope\" is not defined"),
            "{err}"
        );
        let bad = ServerRules::from_yaml("workflows:\n  w:\n    plan:\n      steps: [bogus]\n")
            .expect_err("bad step");
        assert!(
            bad.to_string().contains("workflows.w.plan.steps[0]"),
            "{bad}"
        );
    }
}
