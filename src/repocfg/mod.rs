//! Which projects a pull request touches and how each may be run. Pure: takes the text of
//! `atlantis.yaml` (version 3 subset), the server-side repo rules, the list of files in the
//! head checkout and the list of files the PR changes, and returns projects with their
//! workspace, autoplan patterns, apply requirements and restart policy; then selects the
//! projects a parsed comment command targets. It never reads the network, git or the disk.
//!
//! - `RepoConfig::parse`: `atlantis.yaml`; keys atoll does not support become `Warning`s,
//!   unknown keys and bad values become a `RepoConfigError` naming the key path.
//! - `ServerRules`: the operator's `repos:` list (`id` exact or `/regex/`, last match wins per
//!   key; `manage.exclude` accumulates across matches so no rule can undo an exclusion).
//! - `resolve`: both merged (`allowed_overrides` decides what the repository may set) into a
//!   `Resolution` for one PR; without projects in `atlantis.yaml`, projects are discovered from
//!   the changed files with Atlantis's rules (see `discover`).
//! - `select`: a `Command`'s `-p`/`-d`/`-w` (or none) against a `Resolution`.
//! - `filters`: the PR-controlled selectors (`branch`, `autodiscover`, directory globs),
//!   bounded and matched in linear time; `resolve_on_base` applies `branch` to the PR's base.
//!
//! - `workflow`, `workflow_steps`, `workflow_flags`, `workflow_rules`: custom workflows, what
//!   each step means to atoll, and which workflow a project runs under the server's rules.
//!
//! atoll extends both files with one key, `restart: auto | never` (what to do when a change
//! needs a guest restart); a repository may set it per project only where `allowed_overrides`
//! lists `restart`.

mod bounded;
mod depends;
mod discover;
mod filters;
mod options;
mod patterns;
mod repo;
mod resolve;
mod select;
mod server;
mod workflow;
mod workflow_flags;
mod workflow_rules;
mod workflow_steps;
mod yaml;

use serde::{Deserialize, Serialize};

use crate::commands::{Command, ProjectName, RepoDir, Verb, Workspace};

pub use filters::{Autodiscover, AutodiscoverMode, BranchFilter, DirGlob, is_glob};
pub use options::{
    EMOJI, Emoji, LockMode, MergeMethod, ProjectOptions, RepoOptions, RunOptions, Silence,
    WrittenOptions,
};
pub use patterns::PathPatterns;
pub use repo::{RepoConfig, RepoConfigError, RepoProject, Warning};
pub use resolve::{Excluded, Inputs, Resolution, resolve, resolve_on_base};
pub use select::{SelectError, select};
pub use server::{Override, RepoPolicy, ServerRules, ServerRulesError};
pub use workflow::{
    Builtin, DEFAULT_WORKFLOW, ShellStep, Stage, StageKind, Step, StepKind, Workflow,
};
pub use workflow_steps::{POLICY_CHECK_WARNING, ProjectWorkflow, WorkflowRefusal};

/// A condition that must hold before `apply` runs (reference/atlantis.md section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    Approved,
    Mergeable,
    Undiverged,
    /// Every policy set passed or was approved (`policies:`); also enforced without being
    /// listed whenever the server has policy sets, as in Atlantis.
    PoliciesPassed,
}

impl Requirement {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Mergeable => "mergeable",
            Self::Undiverged => "undiverged",
            Self::PoliciesPassed => "policies_passed",
        }
    }

    pub(crate) fn from_word(word: &str) -> Option<Self> {
        [
            Self::Approved,
            Self::Mergeable,
            Self::Undiverged,
            Self::PoliciesPassed,
        ]
        .into_iter()
        .find(|r| r.as_str() == word)
    }
}

/// What atoll does when a change needs a guest restart: restart it during apply (`auto`), or
/// leave the change pending until someone restarts the guest (`never`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartPolicy {
    #[default]
    Auto,
    Never,
}

impl RestartPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Never => "never",
        }
    }

    pub(crate) fn from_word(word: &str) -> Option<Self> {
        [Self::Auto, Self::Never]
            .into_iter()
            .find(|r| r.as_str() == word)
    }
}

/// One project as the runner plans and applies it: server rules already merged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The name from `atlantis.yaml`; `None` for a discovered directory.
    pub name: Option<ProjectName>,
    pub dir: RepoDir,
    pub workspace: Workspace,
    /// Whether a push plans it automatically (a comment `plan` runs it regardless).
    pub autoplan: bool,
    /// Files (relative to the repository root) whose change marks the project modified.
    pub when_modified: PathPatterns,
    pub apply_requirements: Vec<Requirement>,
    pub restart: RestartPolicy,
    /// `plan_requirements`, `depends_on`, `repo_locks` and the other run options.
    pub options: ProjectOptions,
    /// The workflow it runs (plan options, `TF_VAR_*` values, warnings), or why it cannot run:
    /// a refused workflow refuses this project only.
    pub workflow: Result<ProjectWorkflow, WorkflowRefusal>,
}

/// What identifies a project within a repository (Atlantis's lock granularity: directory,
/// workspace and project name). Serialisable, for job payloads and lock keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProjectKey {
    pub dir: RepoDir,
    pub workspace: Workspace,
    pub name: Option<ProjectName>,
}

impl ProjectKey {
    /// The command that targets exactly this project: `-p NAME` when it has a name, else
    /// `-d DIR -w WORKSPACE`. With `Command::to_comment` it is the line a reply tells users to
    /// write (e.g. to re-plan once a lock is free).
    pub fn command(&self, verb: Verb) -> Command {
        let mut command = Command::new(verb);
        match &self.name {
            Some(name) => command.project = Some(name.clone()),
            None => {
                command.dir = Some(self.dir.clone());
                command.workspace = Some(self.workspace.clone());
            }
        }
        command
    }
}

impl Project {
    pub fn key(&self) -> ProjectKey {
        ProjectKey {
            dir: self.dir.clone(),
            workspace: self.workspace.clone(),
            name: self.name.clone(),
        }
    }

    /// `name` if it has one, else `dir` and `workspace`: how a reply names the project.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => name.to_string(),
            None => format!("dir: {} workspace: {}", self.dir, self.workspace),
        }
    }
}

/// A local module call: the configuration in `user` has a `module` block whose `source` is the
/// directory `module` (`source = "../modules/lxc"` in `envs/dev` gives `envs/dev` -> `modules/lxc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleUse {
    pub user: RepoDir,
    pub module: RepoDir,
}

/// Atlantis's default `when_modified`, relative to the project directory (its
/// `terraformAutoplanIndicators`): Terraform's files and variables, OpenTofu's `.tofu` files,
/// Terragrunt's file and the provider lock file.
pub(crate) fn default_when_modified() -> Vec<String> {
    [
        "**/*.tf*",
        "**/*.tofu",
        "**/*.tofu.json",
        "**/terragrunt.hcl",
        "**/.terraform.lock.hcl",
    ]
    .map(str::to_owned)
    .to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_when_modified_matches_tofu_and_terragrunt_files_as_atlantis_does() {
        let dir = RepoDir::parse("envs/dev").expect("dir");
        let patterns = PathPatterns::new(&dir, &default_when_modified()).expect("patterns");
        for changed in [
            "envs/dev/main.tf",
            "envs/dev/prod.tfvars",
            "envs/dev/main.tofu",
            "envs/dev/sub/main.tofu.json",
            "envs/dev/terragrunt.hcl",
            "envs/dev/.terraform.lock.hcl",
        ] {
            assert!(patterns.matches(changed), "{changed}");
        }
        for other in ["envs/dev/README.md", "envs/prod/main.tf", "envs/dev/x.hcl"] {
            assert!(!patterns.matches(other), "{other}");
        }
    }
}
