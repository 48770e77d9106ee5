//! The operator's server-side repo rules, after Atlantis's `repos.yaml`
//! (reference/atlantis.md 3.2):
//!
//! ```yaml
//! repos:
//!   - id: /.*/                      # exact `host/owner/repo`, or `/regex/` (unanchored, as in Atlantis)
//!     apply_requirements: [approved, mergeable]
//!     import_requirements: [approved]   # before `atlantis import`
//!     allowed_overrides: [apply_requirements, import_requirements, restart]
//!     restart: auto                 # auto | never
//!     manage:
//!       exclude: [infra/atoll]      # directories (globs) the server never plans or applies
//!     plan_requirements: [approved] # checked before a comment `plan` (also import_requirements)
//!     silence_pr_comments: [apply]  # no comment for these commands unless something failed
//!     repo_locks: {mode: on_plan}   # on_plan | on_apply | disabled
//!     automerge: true               # merge once every project is applied (Atlantis's --automerge)
//!     automerge_method: squash      # merge | squash | rebase
//!     parallel_plan: true           # when atlantis.yaml does not say (Atlantis's --parallel-plan)
//!     parallel_apply: true          # likewise (--parallel-apply)
//!     delete_source_branch_on_merge: true
//!     workflow: prod                # the workflow of projects that name none
//!     allowed_workflows: [prod]     # the workflows atlantis.yaml may pick (all when absent)
//!     allow_custom_workflows: false # whether atlantis.yaml may define its own `workflows:`
//! workflows:                        # server-defined workflows, as in atlantis.yaml
//!   prod:
//!     plan:
//!       steps: [init, {plan: {extra_args: [-var-file=prod.tfvars]}}]
//! ```
//!
//! Every rule whose `id` matches applies in order, and a later rule's key replaces an earlier
//! one's (unset keys do not override), except `manage.exclude`, which accumulates: an exclusion
//! is a safety net that no later rule may silently drop. With no matching rule the defaults are:
//! no requirements, no overrides, restart `auto`, nothing excluded, the `default` workflow, no
//! custom workflows.

use std::collections::BTreeMap;

use regex_automata::meta::Regex;
use serde::{Deserialize, Serialize};

use super::options::{LockMode, MergeMethod, Silence};
use super::patterns::{MAX_PATTERNS, PathPatterns};
use super::repo::RepoConfigError;
use super::workflow::{DEFAULT_WORKFLOW, Workflow, parse_workflows};
use super::{Requirement, RestartPolicy};
use crate::commands::RepoDir;

/// A key an `atlantis.yaml` may set only when the server rules allow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Override {
    ApplyRequirements,
    Restart,
    PlanRequirements,
    ImportRequirements,
    SilencePrComments,
    /// `repo_locks`, and the deprecated project key `repo_locking` (Atlantis has a key for
    /// each; atoll reads both as one).
    #[serde(alias = "repo_locking")]
    RepoLocks,
    DeleteSourceBranchOnMerge,
    Workflow,
}

impl Override {
    pub fn key(self) -> &'static str {
        match self {
            Self::ApplyRequirements => "apply_requirements",
            Self::Restart => "restart",
            Self::PlanRequirements => "plan_requirements",
            Self::ImportRequirements => "import_requirements",
            Self::SilencePrComments => "silence_pr_comments",
            Self::RepoLocks => "repo_locks",
            Self::DeleteSourceBranchOnMerge => "delete_source_branch_on_merge",
            Self::Workflow => "workflow",
        }
    }
}

/// Why the server rules cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerRulesError {
    #[error("repo rules are not valid: {message}")]
    Syntax { message: String },
    #[error("repos[{index}].id `{id}` is not a valid regular expression: {message}")]
    BadRegex {
        index: usize,
        id: String,
        message: String,
    },
    #[error("repos[{index}].id is empty; give `host/owner/repo` or `/regex/`")]
    EmptyId { index: usize },
    #[error("repos[{index}].manage.exclude: {message}")]
    BadExclude { index: usize, message: String },
    #[error("{message}")]
    BadWorkflow { message: String },
    #[error(
        "repos[{index}].{key}: workflow {name:?} is not defined; define it under the top-level \
         `workflows:` or use `default`"
    )]
    UndefinedWorkflow {
        index: usize,
        key: &'static str,
        name: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    #[serde(default)]
    repos: Vec<RawRule>,
    #[serde(default)]
    workflows: Option<serde_yaml_ng::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    apply_requirements: Option<Vec<Requirement>>,
    allowed_overrides: Option<Vec<Override>>,
    restart: Option<RestartPolicy>,
    manage: Option<RawManage>,
    plan_requirements: Option<Vec<Requirement>>,
    import_requirements: Option<Vec<Requirement>>,
    silence_pr_comments: Option<Vec<SilenceWord>>,
    repo_locks: Option<RawRepoLocks>,
    delete_source_branch_on_merge: Option<bool>,
    automerge: Option<bool>,
    automerge_method: Option<MergeMethod>,
    parallel_plan: Option<bool>,
    parallel_apply: Option<bool>,
    workflow: Option<String>,
    allowed_workflows: Option<Vec<String>>,
    allow_custom_workflows: Option<bool>,
}

/// The rule keys of `repocfg::options` (Atlantis's server-side `repos.yaml` keys and its
/// `--automerge`/`--automerge-method` flags).
#[derive(Debug, Clone, Default)]
struct RuleOptions {
    plan_requirements: Option<Vec<Requirement>>,
    import_requirements: Option<Vec<Requirement>>,
    silence_pr_comments: Option<Vec<SilenceWord>>,
    repo_locks: Option<RawRepoLocks>,
    delete_source_branch_on_merge: Option<bool>,
    automerge: Option<bool>,
    automerge_method: Option<MergeMethod>,
    parallel_plan: Option<bool>,
    parallel_apply: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SilenceWord {
    Plan,
    Apply,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepoLocks {
    mode: LockMode,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManage {
    #[serde(default)]
    exclude: Vec<String>,
}

/// The rules, compiled. Deserialises from the `repos:` mapping, refusing unknown keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(try_from = "RawRules")]
pub struct ServerRules {
    rules: Vec<Rule>,
    /// The top-level `workflows:`.
    workflows: BTreeMap<String, Workflow>,
}

#[derive(Debug, Clone)]
struct Rule {
    id: IdPattern,
    apply_requirements: Option<Vec<Requirement>>,
    allowed_overrides: Option<Vec<Override>>,
    restart: Option<RestartPolicy>,
    exclude: Vec<String>,
    options: RuleOptions,
    workflow: Option<String>,
    allowed_workflows: Option<Vec<String>>,
    allow_custom_workflows: Option<bool>,
}

#[derive(Debug, Clone)]
enum IdPattern {
    Exact(String),
    Regex(Box<Regex>),
}

impl IdPattern {
    fn matches(&self, repo_id: &str) -> bool {
        match self {
            Self::Exact(id) => id.eq_ignore_ascii_case(repo_id),
            Self::Regex(regex) => regex.is_match(repo_id),
        }
    }
}

impl TryFrom<RawRules> for ServerRules {
    type Error = ServerRulesError;

    fn try_from(raw: RawRules) -> Result<Self, Self::Error> {
        let workflows = match &raw.workflows {
            Some(value) => parse_workflows(value, "workflows").map_err(workflow_error)?,
            None => BTreeMap::new(),
        };
        let rules: Vec<Rule> = raw
            .repos
            .into_iter()
            .enumerate()
            .map(|(i, r)| compile(i, r))
            .collect::<Result<_, _>>()?;
        for (index, rule) in rules.iter().enumerate() {
            let named = rule.workflow.iter().map(|n| ("workflow", n)).chain(
                rule.allowed_workflows
                    .iter()
                    .flatten()
                    .map(|n| ("allowed_workflows", n)),
            );
            for (key, name) in named {
                if name != DEFAULT_WORKFLOW && !workflows.contains_key(name) {
                    return Err(ServerRulesError::UndefinedWorkflow {
                        index,
                        key,
                        name: name.clone(),
                    });
                }
            }
        }
        Ok(Self { rules, workflows })
    }
}

/// A problem in the server's `workflows:`, named by its key path.
fn workflow_error(e: RepoConfigError) -> ServerRulesError {
    let message = match e {
        RepoConfigError::Invalid { path, problem } => format!("{path}: {problem}"),
        RepoConfigError::UnknownKey { path } => format!("{path}: unknown key"),
        other => other.to_string(),
    };
    ServerRulesError::BadWorkflow { message }
}

fn compile(index: usize, raw: RawRule) -> Result<Rule, ServerRulesError> {
    let id = raw.id.trim();
    let id = match id.strip_prefix('/').and_then(|rest| rest.strip_suffix('/')) {
        Some(pattern) => IdPattern::Regex(Box::new(Regex::new(pattern).map_err(|e| {
            ServerRulesError::BadRegex {
                index,
                id: id.to_owned(),
                message: e.to_string(),
            }
        })?)),
        None if id.is_empty() => return Err(ServerRulesError::EmptyId { index }),
        None => IdPattern::Exact(id.to_owned()),
    };
    let exclude = raw.manage.map(|m| m.exclude).unwrap_or_default();
    if exclude.len() > MAX_PATTERNS {
        let message = format!("has more than {MAX_PATTERNS} patterns");
        return Err(ServerRulesError::BadExclude { index, message });
    }
    PathPatterns::new(&RepoDir::root(), &exclude)
        .map_err(|message| ServerRulesError::BadExclude { index, message })?;
    Ok(Rule {
        id,
        apply_requirements: raw.apply_requirements,
        allowed_overrides: raw.allowed_overrides,
        restart: raw.restart,
        exclude,
        options: RuleOptions {
            plan_requirements: raw.plan_requirements,
            import_requirements: raw.import_requirements,
            silence_pr_comments: raw.silence_pr_comments,
            repo_locks: raw.repo_locks,
            delete_source_branch_on_merge: raw.delete_source_branch_on_merge,
            automerge: raw.automerge,
            automerge_method: raw.automerge_method,
            parallel_plan: raw.parallel_plan,
            parallel_apply: raw.parallel_apply,
        },
        workflow: raw.workflow,
        allowed_workflows: raw.allowed_workflows,
        allow_custom_workflows: raw.allow_custom_workflows,
    })
}

impl ServerRules {
    /// Parses a YAML document with a top-level `repos:` list.
    pub fn from_yaml(source: &str) -> Result<Self, ServerRulesError> {
        let raw: RawRules =
            serde_yaml_ng::from_str(source).map_err(|e| ServerRulesError::Syntax {
                message: e.to_string(),
            })?;
        Self::try_from(raw)
    }

    /// The policy for one repository (`host/owner/repo`).
    pub fn policy_for(&self, repo_id: &str) -> RepoPolicy {
        let mut policy = RepoPolicy::default();
        let mut exclude = Vec::new();
        for rule in self.rules.iter().filter(|rule| rule.id.matches(repo_id)) {
            if let Some(reqs) = &rule.apply_requirements {
                policy.apply_requirements.clone_from(reqs);
            }
            if let Some(overrides) = &rule.allowed_overrides {
                policy.allowed_overrides.clone_from(overrides);
            }
            if let Some(restart) = rule.restart {
                policy.restart = restart;
            }
            if let Some(name) = &rule.workflow {
                policy.workflow = Some(name.clone());
            }
            if let Some(names) = &rule.allowed_workflows {
                policy.allowed_workflows = Some(names.clone());
            }
            if let Some(allow) = rule.allow_custom_workflows {
                policy.allow_custom_workflows = allow;
            }
            exclude.extend(rule.exclude.iter().cloned());
            rule.options.apply_to(&mut policy);
        }
        // Each list compiled on its own in `compile`; together they may exceed the per-list
        // cap, so build the union without it.
        policy.exclude = exclude
            .iter()
            .filter_map(|p| PathPatterns::new(&RepoDir::root(), std::slice::from_ref(p)).ok())
            .collect();
        policy.exclude_raw = exclude;
        policy.workflows.clone_from(&self.workflows);
        policy
    }
}

/// The server's settings for one repository.
#[derive(Debug, Clone, Default)]
pub struct RepoPolicy {
    pub apply_requirements: Vec<Requirement>,
    pub allowed_overrides: Vec<Override>,
    pub restart: RestartPolicy,
    pub plan_requirements: Vec<Requirement>,
    pub import_requirements: Vec<Requirement>,
    pub silence: Silence,
    pub repo_locks: LockMode,
    pub delete_source_branch_on_merge: bool,
    /// Merge a PR once all its projects are applied (a repository's `automerge` overrides it).
    pub automerge: bool,
    pub automerge_method: MergeMethod,
    /// Plan (apply) a PR's projects concurrently when `atlantis.yaml` does not say (Atlantis's
    /// `--parallel-plan`, `--parallel-apply`).
    pub parallel_plan: bool,
    pub parallel_apply: bool,
    exclude: Vec<PathPatterns>,
    exclude_raw: Vec<String>,
    /// The rule's `workflow:`, the workflow of projects that name none (`None`: `default`).
    pub workflow: Option<String>,
    /// `allowed_workflows:`: the workflows `atlantis.yaml` may pick; `None` allows any.
    pub allowed_workflows: Option<Vec<String>>,
    /// `allow_custom_workflows:`: whether `atlantis.yaml` may define `workflows:`.
    pub allow_custom_workflows: bool,
    /// The server's `workflows:`.
    pub(crate) workflows: BTreeMap<String, Workflow>,
}

impl RuleOptions {
    /// A later rule's key replaces an earlier one's; unset keys leave it.
    fn apply_to(&self, policy: &mut RepoPolicy) {
        if let Some(reqs) = &self.plan_requirements {
            policy.plan_requirements.clone_from(reqs);
        }
        if let Some(reqs) = &self.import_requirements {
            policy.import_requirements.clone_from(reqs);
        }
        if let Some(words) = &self.silence_pr_comments {
            policy.silence = Silence {
                plan: words.iter().any(|w| matches!(w, SilenceWord::Plan)),
                apply: words.iter().any(|w| matches!(w, SilenceWord::Apply)),
            };
        }
        if let Some(locks) = self.repo_locks {
            policy.repo_locks = locks.mode;
        }
        if let Some(delete) = self.delete_source_branch_on_merge {
            policy.delete_source_branch_on_merge = delete;
        }
        if let Some(parallel) = self.parallel_plan {
            policy.parallel_plan = parallel;
        }
        if let Some(parallel) = self.parallel_apply {
            policy.parallel_apply = parallel;
        }
        if let Some(automerge) = self.automerge {
            policy.automerge = automerge;
        }
        if let Some(method) = self.automerge_method {
            policy.automerge_method = method;
        }
    }
}

impl RepoPolicy {
    pub fn allows(&self, key: Override) -> bool {
        self.allowed_overrides.contains(&key)
    }

    /// The `manage.exclude` pattern that keeps `dir` away from the server, if any. A pattern
    /// matching a directory excludes everything below it too.
    pub fn excluded_by(&self, dir: &RepoDir) -> Option<&str> {
        self.exclude
            .iter()
            .zip(&self.exclude_raw)
            .find(|(patterns, _)| patterns.matches(dir.as_str()))
            .map(|(_, raw)| raw.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = r#"
repos:
  - id: /.*/
    apply_requirements: [approved]
    manage: {exclude: [infra/atoll]}
  - id: git.example.lan/infra/pve
    apply_requirements: [approved, mergeable]
    allowed_overrides: [restart]
    manage: {exclude: ["bootstrap/**"]}
  - id: /example\.lan\/infra\//
    restart: never
"#;

    fn dir(raw: &str) -> RepoDir {
        RepoDir::parse(raw).expect("valid dir")
    }

    #[test]
    fn last_matching_rule_wins_per_key_and_unset_keys_do_not_override() {
        let rules = ServerRules::from_yaml(RULES).expect("valid rules");
        let policy = rules.policy_for("git.example.lan/infra/pve");
        assert_eq!(
            policy.apply_requirements,
            [Requirement::Approved, Requirement::Mergeable]
        );
        assert_eq!(policy.allowed_overrides, [Override::Restart]);
        assert_eq!(policy.restart, RestartPolicy::Never);
        let other = rules.policy_for("github.com/acme/web");
        assert_eq!(other.apply_requirements, [Requirement::Approved]);
        assert!(other.allowed_overrides.is_empty());
        assert_eq!(other.restart, RestartPolicy::Auto);
    }

    #[test]
    fn exact_ids_match_case_insensitively() {
        let rules = ServerRules::from_yaml(RULES).expect("valid rules");
        assert_eq!(
            rules
                .policy_for("Git.Example.LAN/Infra/PVE")
                .allowed_overrides,
            [Override::Restart]
        );
    }

    #[test]
    fn exclusions_accumulate_across_matching_rules_and_cover_subdirectories() {
        let rules = ServerRules::from_yaml(RULES).expect("valid rules");
        let policy = rules.policy_for("git.example.lan/infra/pve");
        assert_eq!(policy.excluded_by(&dir("infra/atoll")), Some("infra/atoll"));
        assert_eq!(
            policy.excluded_by(&dir("infra/atoll/sub")),
            Some("infra/atoll")
        );
        assert_eq!(
            policy.excluded_by(&dir("bootstrap/x")),
            Some("bootstrap/**")
        );
        assert_eq!(policy.excluded_by(&dir("infra/atoll-dev")), None);
        assert_eq!(
            rules
                .policy_for("github.com/a/b")
                .excluded_by(&dir("bootstrap/x")),
            None
        );
    }

    #[test]
    fn rules_deserialise_inside_a_larger_settings_file() {
        #[derive(Debug, serde::Deserialize)]
        struct Settings {
            repo_rules: ServerRules,
        }
        let yaml = "repo_rules:\n  repos:\n    - id: a/b/c\n      restart: never\n";
        let settings: Settings = serde_yaml_ng::from_str(yaml).expect("nested rules parse");
        assert_eq!(
            settings.repo_rules.policy_for("a/b/c").restart,
            RestartPolicy::Never
        );
        let bad = "repo_rules:\n  repos:\n    - id: /a(/\n";
        let err = serde_yaml_ng::from_str::<Settings>(bad).expect_err("bad regex refused");
        assert!(err.to_string().contains("repos[0].id"), "{err}");
    }

    #[test]
    fn unknown_keys_bad_regex_and_bad_values_are_refused() {
        let unknown = ServerRules::from_yaml("repos:\n  - id: x\n    workflows: custom\n");
        assert!(
            matches!(unknown, Err(ServerRulesError::Syntax { ref message }) if message.contains("workflows"))
        );
        assert!(matches!(
            ServerRules::from_yaml("repos:\n  - id: /a(/\n"),
            Err(ServerRulesError::BadRegex { .. })
        ));
        assert!(ServerRules::from_yaml("repos:\n  - id: x\n    restart: sometimes\n").is_err());
        assert!(
            ServerRules::from_yaml("repos:\n  - id: x\n    allowed_overrides: [policies]\n")
                .is_err()
        );
        assert!(matches!(
            ServerRules::from_yaml("repos:\n  - id: ''\n"),
            Err(ServerRulesError::EmptyId { index: 0 })
        ));
    }
}
