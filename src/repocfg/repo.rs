//! `atlantis.yaml` version 3, the subset atoll runs. The file comes from the PR branch, so it is
//! untrusted: sizes are bounded, names are validated with the `commands` newtypes, and what it
//! may change is limited later by the server rules (`resolve`).

use serde_yaml_ng::Value;

use super::bounded;
use super::depends;
use super::filters::{Autodiscover, AutodiscoverMode, BranchFilter, DirGlob, is_glob};
use super::options::{self, RepoOptions, WrittenOptions};
use super::patterns::PathPatterns;
use super::workflow::{Workflow, check_name, parse_workflows};
use super::yaml::{boolean, child, entries, list, mapping, text, text_list};
use super::{Requirement, RestartPolicy, default_when_modified};
use crate::commands::{ProjectName, RepoDir, Workspace};

/// Largest accepted `atlantis.yaml`, in bytes.
const MAX_LEN: usize = 256 * 1024;
/// Most projects accepted in one `atlantis.yaml`, and most its glob `dir`s may expand to.
pub(super) const MAX_PROJECTS: usize = 500;

/// Top-level keys Atlantis knows and atoll ignores (with a warning).
const UNSUPPORTED_TOP: &[&str] = &["allowed_regexp_prefixes", "policies"];
/// Top-level keys read by `options`.
const OPTION_TOP: &[&str] = &[
    "automerge",
    "delete_source_branch_on_merge",
    "abort_on_execution_order_fail",
    "emoji_reaction",
    "repo_locks",
    "silence_pr_comments",
];
/// Project keys Atlantis knows and atoll ignores (with a warning).
const UNSUPPORTED_PROJECT: &[&str] = &[
    "terraform_distribution",
    "terraform_version",
    "policy_check",
    "custom_policy_check",
];
/// Project keys read by `options`.
const OPTION_PROJECT: &[&str] = &[
    "plan_requirements",
    "import_requirements",
    "execution_order_group",
    "depends_on",
    "delete_source_branch_on_merge",
    "repo_locking",
    "repo_locks",
    "silence_pr_comments",
];

/// Why `atlantis.yaml` cannot be used. Each message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepoConfigError {
    #[error("atlantis.yaml is larger than {max} bytes; shorten it")]
    TooLarge { max: usize },
    #[error(
        "atlantis.yaml expands to more than {max_nodes} values or 4 MiB of text once its YAML \
         aliases are repeated; use fewer aliases (write the shared lists out, or share them \
         less deeply)"
    )]
    TooExpanded { max_nodes: u64 },
    #[error("atlantis.yaml is not valid YAML: {message}; fix the syntax")]
    Syntax { message: String },
    #[error("atlantis.yaml: version: is required; add `version: 3` at the top")]
    MissingVersion,
    #[error(
        "atlantis.yaml version {found} is not supported; atoll reads version 3: set `version: 3` \
         and use the version 3 layout (a `projects` list)"
    )]
    UnsupportedVersion { found: String },
    #[error("atlantis.yaml: unknown key `{path}`; check its spelling (atoll reads version 3 keys)")]
    UnknownKey { path: String },
    #[error("atlantis.yaml: `{path}` {problem}")]
    Invalid { path: String, problem: String },
    #[error(
        "atlantis.yaml: `{path}` sets `{key}`, which the server rules for this repository do not \
         let a repository override; remove it, or ask the operator to add `{key}` to \
         `allowed_overrides`"
    )]
    OverrideRefused { path: String, key: &'static str },
    #[error(
        "atlantis.yaml: `{path}`: repo config not allowed to set 'workflow' key: server-side \
         config needs 'allowed_overrides: [workflow]'; remove it, or ask the operator to allow it \
         for this repository"
    )]
    WorkflowKeyRefused { path: String },
    #[error(
        "atlantis.yaml: `workflows`: repo config not allowed to define custom workflows: \
         server-side config needs 'allow_custom_workflows: true'; remove `workflows:` (and pick \
         a workflow the server defines), or ask the operator to allow custom workflows for this \
         repository"
    )]
    CustomWorkflowsRefused,
    #[error(
        "atlantis.yaml: `{path}`: workflow {name:?} is not defined anywhere; define it under \
         `workflows:`, or name one the server defines{known}"
    )]
    UndefinedWorkflow {
        path: String,
        name: String,
        /// `` (the server defines: `a`, `b`)`` or empty.
        known: String,
    },
    #[error(
        "atlantis.yaml: `{path}`: workflow '{name}' is not allowed for this repo; the server \
         allows {allowed}"
    )]
    WorkflowNotAllowed {
        path: String,
        name: String,
        allowed: String,
    },
}

/// A key or value atoll ignores, to be shown with the plan.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// Where it is, e.g. `projects[1].terraform_version`.
    pub path: String,
    /// One plain sentence.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

fn unsupported(path: String) -> Warning {
    Warning {
        path,
        message: "is not supported by atoll and is ignored".to_owned(),
    }
}

/// `atlantis.yaml`, parsed and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoConfig {
    pub projects: Vec<RepoProject>,
    /// `None` when the file does not say (the server's rule decides).
    pub parallel_plan: Option<bool>,
    pub parallel_apply: Option<bool>,
    /// Top-level `autodiscover`; `None` when absent (mode `auto`, nothing ignored).
    pub autodiscover: Option<Autodiscover>,
    /// `automerge`, `repo_locks`, `emoji_reaction` and the other keys of `options`.
    pub options: RepoOptions,
    /// Top-level `workflows`, by name (used only where the server allows custom workflows).
    pub workflows: std::collections::BTreeMap<String, Workflow>,
    pub warnings: Vec<Warning>,
}

/// One entry of `projects`, as written (server rules not applied yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoProject {
    pub name: Option<ProjectName>,
    pub dir: RepoDir,
    pub workspace: Workspace,
    pub autoplan: bool,
    pub when_modified: PathPatterns,
    /// `None` when the key is absent (the server's value applies).
    pub apply_requirements: Option<Vec<Requirement>>,
    /// `restart: auto|never`, an atoll extension; `None` when absent.
    pub restart: Option<RestartPolicy>,
    /// `branch: /REGEX/`: the project exists only on PRs whose base branch matches.
    pub branch: Option<BranchFilter>,
    /// `dir` written as a glob (`envs/*`): the project stands for every matching directory
    /// holding Terraform files; `dir` is then the repository root and unused.
    pub dir_glob: Option<DirGlob>,
    /// `autoplan.when_modified` as written (relative to `dir`), to rebuild `when_modified`
    /// for each directory a `dir_glob` expands to.
    pub when_modified_written: Vec<String>,
    /// `plan_requirements`, `depends_on` and the other keys of `options`.
    pub options: WrittenOptions,
    /// `workflow: NAME`; `None` when absent (the server's workflow applies).
    pub workflow: Option<String>,
}

impl RepoConfig {
    /// Parses the text of `atlantis.yaml`.
    pub fn parse(source: &str) -> Result<Self, RepoConfigError> {
        if source.len() > MAX_LEN {
            return Err(RepoConfigError::TooLarge { max: MAX_LEN });
        }
        let root = bounded::parse(source).map_err(|e| match e {
            bounded::ReadError::TooExpanded => RepoConfigError::TooExpanded {
                max_nodes: bounded::MAX_NODES,
            },
            bounded::ReadError::Syntax(message) => RepoConfigError::Syntax { message },
        })?;
        if root.is_null() {
            return Err(RepoConfigError::MissingVersion);
        }
        let mut config = Self {
            projects: Vec::new(),
            parallel_plan: None,
            parallel_apply: None,
            autodiscover: None,
            options: RepoOptions::default(),
            workflows: std::collections::BTreeMap::new(),
            warnings: Vec::new(),
        };
        let mut version_seen = false;
        for (key, value) in entries(mapping(&root, "(top level)")?, "(top level)")? {
            if value.is_null() && is_known_top(key) {
                // `key:` with no value is absent, as in Atlantis (`version:` is then missing).
                continue;
            }
            match key {
                "version" => {
                    check_version(value)?;
                    version_seen = true;
                }
                "projects" => config.projects = projects(value, &mut config.warnings)?,
                "parallel_plan" => config.parallel_plan = Some(boolean(value, key)?),
                "parallel_apply" => config.parallel_apply = Some(boolean(value, key)?),
                "autodiscover" => config.autodiscover = Some(autodiscover(value, key)?),
                "policies" => config.warnings.push(Warning {
                    path: key.to_owned(),
                    message: "is ignored: policy sets come from the server's configuration \
                              only (Atlantis ignores this key too), never from a pull request"
                        .to_owned(),
                }),
                _ if options::top_key(&mut config.options, key, value)? => {}
                "workflows" => config.workflows = parse_workflows(value, key)?,
                _ if UNSUPPORTED_TOP.contains(&key) => {
                    config.warnings.push(unsupported(key.to_owned()));
                }
                _ => {
                    return Err(RepoConfigError::UnknownKey {
                        path: key.to_owned(),
                    });
                }
            }
        }
        if !version_seen {
            return Err(RepoConfigError::MissingVersion);
        }
        check_duplicates(&config.projects)?;
        depends::check_depends_on(&config.projects)?;
        Ok(config)
    }
}

fn is_known_top(key: &str) -> bool {
    [
        "version",
        "projects",
        "parallel_plan",
        "parallel_apply",
        "workflows",
    ]
    .contains(&key)
        || UNSUPPORTED_TOP.contains(&key)
        || OPTION_TOP.contains(&key)
}

fn check_version(value: &Value) -> Result<(), RepoConfigError> {
    let found = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => format!("{other:?}"),
    };
    if found.trim() == "3" {
        Ok(())
    } else {
        Err(RepoConfigError::UnsupportedVersion {
            found: crate::commands::shown_value(&found),
        })
    }
}

fn projects(
    value: &Value,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<RepoProject>, RepoConfigError> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let items = list(value, "projects")?;
    if items.len() > MAX_PROJECTS {
        return Err(RepoConfigError::Invalid {
            path: "projects".to_owned(),
            problem: format!("has more than {MAX_PROJECTS} entries"),
        });
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| project(item, &format!("projects[{i}]"), warnings))
        .collect()
}

fn invalid(path: &str, problem: impl std::fmt::Display) -> RepoConfigError {
    RepoConfigError::Invalid {
        path: path.to_owned(),
        problem: problem.to_string(),
    }
}

/// The keys of one project, before defaults.
#[derive(Default)]
struct ProjectKeys {
    name: Option<ProjectName>,
    dir: Option<RepoDir>,
    workspace: Option<Workspace>,
    autoplan: Option<bool>,
    when_modified: Option<Vec<String>>,
    apply_requirements: Option<Vec<Requirement>>,
    restart: Option<RestartPolicy>,
    branch: Option<BranchFilter>,
    dir_glob: Option<DirGlob>,
    options: WrittenOptions,
    workflow: Option<String>,
}

fn project(
    value: &Value,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Result<RepoProject, RepoConfigError> {
    let mut keys = ProjectKeys::default();
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        if value.is_null() && is_known_project(key) {
            // `autoplan:` with no value is absent, as in Atlantis.
            continue;
        }
        match key {
            "name" => {
                keys.name =
                    Some(ProjectName::parse(&text(value, &at)?).map_err(|e| invalid(&at, e))?);
            }
            "dir" => dir(value, &at, &mut keys)?,
            "branch" => {
                let written = text(value, &at)?;
                keys.branch = Some(BranchFilter::parse(&written).map_err(|e| invalid(&at, e))?);
            }
            "workspace" => keys.workspace = workspace(value, &at)?,
            "workflow" => {
                let name = text(value, &at)?;
                check_name(&name, &at)?;
                keys.workflow = Some(name);
            }
            "autoplan" => autoplan(value, &at, &mut keys)?,
            "apply_requirements" => {
                keys.apply_requirements = Some(requirements(value, &at)?);
            }
            "restart" => {
                let word = text(value, &at)?;
                let policy = RestartPolicy::from_word(&word)
                    .ok_or_else(|| invalid(&at, "must be `auto` or `never`"))?;
                keys.restart = Some(policy);
            }
            _ if options::project_key(&mut keys.options, key, value, &at)? => {}
            "terraform_version" if text(value, &at)?.trim().is_empty() => {
                return Err(invalid(
                    &at,
                    "is empty; give a version such as `1.9.0`, or remove it",
                ));
            }
            _ if UNSUPPORTED_PROJECT.contains(&key) => warnings.push(unsupported(at)),
            _ => return Err(RepoConfigError::UnknownKey { path: at }),
        }
    }
    let dir = keys
        .dir
        .ok_or_else(|| invalid(path, "has no `dir`; add `dir: .` for the repository root"))?;
    if keys.dir_glob.is_some() && keys.name.is_some() {
        return Err(invalid(
            &child(path, "name"),
            "cannot be used with a glob in `dir`: the glob stands for several projects, which \
             cannot share one name; remove `name` or write each directory out",
        ));
    }
    let when_modified_written = keys.when_modified.unwrap_or_else(default_when_modified);
    let when_modified = PathPatterns::new(&dir, &when_modified_written)
        .map_err(|e| invalid(&child(path, "autoplan.when_modified"), e))?;
    Ok(RepoProject {
        name: keys.name,
        dir,
        workspace: keys.workspace.unwrap_or_default(),
        autoplan: keys.autoplan.unwrap_or(true),
        when_modified,
        apply_requirements: keys.apply_requirements,
        restart: keys.restart,
        branch: keys.branch,
        dir_glob: keys.dir_glob,
        when_modified_written,
        options: keys.options,
        workflow: keys.workflow,
    })
}

fn is_known_project(key: &str) -> bool {
    [
        "name",
        "dir",
        "workspace",
        "autoplan",
        "apply_requirements",
        "restart",
        "branch",
        "workflow",
    ]
    .contains(&key)
        || UNSUPPORTED_PROJECT.contains(&key)
        || OPTION_PROJECT.contains(&key)
}

/// `workspace: ""` is `default`, as in Atlantis (raw/project.go `ToValid`).
fn workspace(value: &Value, at: &str) -> Result<Option<Workspace>, RepoConfigError> {
    let word = text(value, at)?;
    if word.is_empty() {
        return Ok(None);
    }
    Workspace::parse(&word)
        .map(Some)
        .map_err(|e| invalid(at, e))
}

/// Top-level `autodiscover: {mode, ignore_paths}`.
fn autodiscover(value: &Value, path: &str) -> Result<Autodiscover, RepoConfigError> {
    let mut out = Autodiscover::default();
    if value.is_null() {
        return Ok(out);
    }
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        match key {
            "mode" => {
                let word = text(value, &at)?;
                out.mode = AutodiscoverMode::from_word(&word)
                    .ok_or_else(|| invalid(&at, "must be `auto`, `enabled` or `disabled`"))?;
            }
            "ignore_paths" => {
                let patterns = text_list(value, &at)?;
                out.ignore_paths =
                    Autodiscover::ignore_paths(&patterns).map_err(|e| invalid(&at, e))?;
            }
            _ => return Err(RepoConfigError::UnknownKey { path: at }),
        }
    }
    Ok(out)
}

/// `dir`: a directory, or a glob (`envs/*`) standing for every matching directory.
fn dir(value: &Value, path: &str, keys: &mut ProjectKeys) -> Result<(), RepoConfigError> {
    let written = text(value, path)?;
    if is_glob(&written) {
        keys.dir_glob = Some(DirGlob::parse(&written).map_err(|e| invalid(path, e))?);
        keys.dir = Some(RepoDir::root());
    } else {
        keys.dir = Some(RepoDir::parse(&written).map_err(|e| invalid(path, e))?);
    }
    Ok(())
}

fn autoplan(value: &Value, path: &str, keys: &mut ProjectKeys) -> Result<(), RepoConfigError> {
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        if value.is_null() && (key == "enabled" || key == "when_modified") {
            continue;
        }
        match key {
            "enabled" => keys.autoplan = Some(boolean(value, &at)?),
            "when_modified" => keys.when_modified = Some(when_modified(value, &at)?),
            _ => return Err(RepoConfigError::UnknownKey { path: at }),
        }
    }
    Ok(())
}

/// An empty pattern is the project directory itself (Atlantis joins it to `dir`, which then
/// matches every file below it), written here as `**`.
fn when_modified(value: &Value, at: &str) -> Result<Vec<String>, RepoConfigError> {
    let patterns = text_list(value, at)?;
    Ok(patterns
        .into_iter()
        .map(|p| {
            if p.trim().is_empty() {
                "**".to_owned()
            } else {
                p
            }
        })
        .collect())
}

pub(super) fn requirements(value: &Value, path: &str) -> Result<Vec<Requirement>, RepoConfigError> {
    let mut out = Vec::new();
    for (i, word) in text_list(value, path)?.into_iter().enumerate() {
        match Requirement::from_word(&word) {
            Some(req) if !out.contains(&req) => out.push(req),
            Some(_) => {}
            None => {
                let shown = crate::commands::shown_value(&word);
                return Err(invalid(
                    &format!("{path}[{i}]"),
                    format!(
                        "`{shown}` is not a requirement; use `approved`, `mergeable`, `undiverged` or \
                         `policies_passed`"
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Names are unique; projects sharing a directory and workspace must all be named (Atlantis's
/// rule, so `-p` can tell them apart).
fn check_duplicates(projects: &[RepoProject]) -> Result<(), RepoConfigError> {
    for (i, a) in projects.iter().enumerate() {
        for (j, b) in projects.iter().enumerate().skip(i + 1) {
            if a.name.is_some() && a.name == b.name {
                return Err(invalid(
                    &format!("projects[{j}].name"),
                    format!("repeats the name of projects[{i}]; give each project its own name"),
                ));
            }
            if a.dir == b.dir
                && a.dir_glob.is_none()
                && b.dir_glob.is_none()
                && a.workspace == b.workspace
                && (a.name.is_none() || b.name.is_none())
            {
                return Err(invalid(
                    &format!("projects[{j}]"),
                    format!(
                        "has the same dir and workspace as projects[{i}]; give both a `name` so `-p` can tell them apart"
                    ),
                ));
            }
        }
    }
    Ok(())
}
