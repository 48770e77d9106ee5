//! Custom workflows: `workflows:` in `atlantis.yaml` or in the server config, picked by a
//! project's `workflow:` or a repo rule's. Pure. The model and its YAML follow Atlantis's
//! `raw/workflow.go`, `raw/stage.go` and `raw/step.go`: stages `plan`, `apply`,
//! `policy_check`, `import` and `state_rm`, each a list of `steps`; a stage left out (or with
//! no `steps`) is Atlantis's default. Steps are the built-ins (`init`, `plan`, `apply`, `show`,
//! `policy_check`, `import`, `state_rm`, each with optional `extra_args`), `env` (a `name` with
//! a static `value`, or a `command`), `run` and `multienv`.
//!
//! Parsing keeps every step as written, bounded, and refuses what Atlantis refuses with the
//! key path. What a workflow means for a project (see [`Workflow::for_project`], in
//! `workflow_steps`) is decided later, per project: a step that needs a shell (`run`,
//! `multienv`, `env` with `command`) refuses only the projects that use the workflow.

use std::collections::BTreeMap;

use serde_yaml_ng::Value;

use super::repo::RepoConfigError;
use super::yaml::{child, entries, list, mapping, text};
use crate::commands::{MAX_EXTRA_WORD_LEN, MAX_EXTRA_WORDS, shown_value};

/// Most workflows one file may define.
pub(crate) const MAX_WORKFLOWS: usize = 100;
/// Most steps in one stage.
pub(crate) const MAX_STEPS: usize = 32;
/// Longest workflow name.
pub(crate) const MAX_NAME_LEN: usize = 128;
/// Longest `env` value.
pub(crate) const MAX_VALUE_LEN: usize = 8 * 1024;
/// The workflow every project uses unless a project or a repo rule names another.
pub const DEFAULT_WORKFLOW: &str = "default";

/// A stage of a workflow: which command runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StageKind {
    Plan,
    Apply,
    PolicyCheck,
    Import,
    StateRm,
}

impl StageKind {
    pub const ALL: [Self; 5] = [
        Self::Plan,
        Self::Apply,
        Self::PolicyCheck,
        Self::Import,
        Self::StateRm,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Apply => "apply",
            Self::PolicyCheck => "policy_check",
            Self::Import => "import",
            Self::StateRm => "state_rm",
        }
    }
}

/// A built-in step: what Atlantis runs as a Terraform command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Init,
    Plan,
    Apply,
    Show,
    PolicyCheck,
    Import,
    StateRm,
}

impl Builtin {
    const ALL: [Self; 7] = [
        Self::Init,
        Self::Plan,
        Self::Apply,
        Self::Show,
        Self::PolicyCheck,
        Self::Import,
        Self::StateRm,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Self::Init => "init",
            Self::Plan => "plan",
            Self::Apply => "apply",
            Self::Show => "show",
            Self::PolicyCheck => "policy_check",
            Self::Import => "import",
            Self::StateRm => "state_rm",
        }
    }

    fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.key() == key)
    }
}

/// A step that would run a shell command on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellStep {
    Run,
    MultiEnv,
    /// `env` with `command`: the variable's value is a command's output.
    EnvCommand {
        name: String,
    },
}

impl ShellStep {
    pub fn key(&self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::MultiEnv => "multienv",
            Self::EnvCommand { .. } => "env",
        }
    }
}

/// One step as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepKind {
    Builtin {
        step: Builtin,
        extra_args: Vec<String>,
    },
    /// `env` with a static `value` (absent is empty, as in Atlantis).
    Env {
        name: String,
        value: String,
    },
    Shell(ShellStep),
}

/// One step and where it is written (`workflows.prod.plan.steps[1]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub path: String,
    pub kind: StepKind,
}

/// A stage's steps as written, and where (`workflows.prod.plan`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    pub path: String,
    pub steps: Vec<Step>,
}

/// One workflow. A stage absent here is Atlantis's default for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workflow {
    pub name: String,
    pub(crate) stages: BTreeMap<StageKind, Stage>,
}

impl Workflow {
    /// Atlantis's default workflow: `init` and `plan`, then `apply`.
    pub fn default_workflow() -> Self {
        Self {
            name: DEFAULT_WORKFLOW.to_owned(),
            stages: BTreeMap::new(),
        }
    }

    /// The stage as written; `None` when it is the default.
    pub fn stage(&self, kind: StageKind) -> Option<&Stage> {
        self.stages.get(&kind)
    }
}

fn invalid(path: &str, problem: impl std::fmt::Display) -> RepoConfigError {
    RepoConfigError::Invalid {
        path: path.to_owned(),
        problem: problem.to_string(),
    }
}

/// `workflows:` (at `path`): name -> workflow. Null is none.
pub(crate) fn parse_workflows(
    value: &Value,
    path: &str,
) -> Result<BTreeMap<String, Workflow>, RepoConfigError> {
    let mut out = BTreeMap::new();
    if value.is_null() {
        return Ok(out);
    }
    let items = entries(mapping(value, path)?, path)?;
    if items.len() > MAX_WORKFLOWS {
        return Err(invalid(
            path,
            format!("defines more than {MAX_WORKFLOWS} workflows"),
        ));
    }
    for (name, value) in items {
        let at = child(path, name);
        check_name(name, &at)?;
        out.insert(name.to_owned(), workflow(name, value, &at)?);
    }
    Ok(out)
}

/// A workflow name (a key of `workflows:` or the value of `workflow:`).
pub(crate) fn check_name(name: &str, path: &str) -> Result<(), RepoConfigError> {
    if name.trim().is_empty() {
        return Err(invalid(path, "names no workflow; give a workflow name"));
    }
    if name.len() > MAX_NAME_LEN || name.chars().any(char::is_control) {
        return Err(invalid(
            path,
            format!(
                "`{}` is not a workflow name atoll accepts: at most {MAX_NAME_LEN} characters, no control characters",
                shown_value(name)
            ),
        ));
    }
    Ok(())
}

fn workflow(name: &str, value: &Value, path: &str) -> Result<Workflow, RepoConfigError> {
    let mut out = Workflow {
        name: name.to_owned(),
        stages: BTreeMap::new(),
    };
    if value.is_null() {
        return Ok(out);
    }
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        let Some(kind) = StageKind::ALL.into_iter().find(|k| k.key() == key) else {
            return Err(RepoConfigError::UnknownKey { path: at });
        };
        if let Some(stage) = stage(value, &at)? {
            out.stages.insert(kind, stage);
        }
    }
    Ok(out)
}

/// A stage; `None` when it has no `steps` (Atlantis then uses its default stage).
fn stage(value: &Value, path: &str) -> Result<Option<Stage>, RepoConfigError> {
    if value.is_null() {
        return Ok(None);
    }
    let mut steps = None;
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        if key != "steps" {
            return Err(RepoConfigError::UnknownKey { path: at });
        }
        if value.is_null() {
            continue;
        }
        let items = list(value, &at)?;
        if items.len() > MAX_STEPS {
            return Err(invalid(&at, format!("has more than {MAX_STEPS} steps")));
        }
        let parsed = items
            .iter()
            .enumerate()
            .map(|(i, item)| step(item, &format!("{at}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        steps = Some(parsed);
    }
    Ok(steps.map(|steps| Stage {
        path: path.to_owned(),
        steps,
    }))
}

fn step(value: &Value, path: &str) -> Result<Step, RepoConfigError> {
    let kind = match value {
        Value::String(word) => bare_step(word, path)?,
        Value::Mapping(map) => {
            let items = entries(map, path)?;
            let [(key, args)] = items.as_slice() else {
                let mut keys: Vec<&str> = items.iter().map(|(k, _)| *k).collect();
                keys.sort_unstable();
                return Err(invalid(
                    path,
                    format!(
                        "step element can only contain a single key, found {}: {}",
                        keys.len(),
                        keys.join(",")
                    ),
                ));
            };
            keyed_step(key, args, path)?
        }
        _ => {
            return Err(invalid(
                path,
                "must be a step name (`init`, `plan`, ...) or a mapping such as `plan: {extra_args: [...]}`",
            ));
        }
    };
    Ok(Step {
        path: path.to_owned(),
        kind,
    })
}

/// `- init`: a built-in step with no arguments.
fn bare_step(word: &str, path: &str) -> Result<StepKind, RepoConfigError> {
    match Builtin::from_key(word) {
        Some(step) => Ok(StepKind::Builtin {
            step,
            extra_args: Vec::new(),
        }),
        None if word == "env" || word == "multienv" => Err(invalid(
            path,
            format!("`{word}` needs its settings: write `- env: {{name: NAME, value: VALUE}}`"),
        )),
        None => Err(invalid(
            path,
            format!(
                "{:?} is not a valid step type, maybe you omitted the 'run' key",
                shown_value(word)
            ),
        )),
    }
}

fn keyed_step(key: &str, args: &Value, path: &str) -> Result<StepKind, RepoConfigError> {
    let at = child(path, key);
    if let Some(step) = Builtin::from_key(key) {
        return Ok(StepKind::Builtin {
            step,
            extra_args: extra_args(args, &at, key)?,
        });
    }
    match key {
        "env" => env_step(args, &at),
        "run" => command_step(args, &at, key, &["command", "output", "shell", "shellArgs"])
            .map(|()| StepKind::Shell(ShellStep::Run)),
        "multienv" => command_step(args, &at, key, &["command", "output", "shell", "shellArgs"])
            .map(|()| StepKind::Shell(ShellStep::MultiEnv)),
        _ => Err(invalid(
            path,
            format!("{:?} is not a valid step type", shown_value(key)),
        )),
    }
}

/// A built-in step's settings: nothing, or `extra_args` only.
fn extra_args(value: &Value, path: &str, step: &str) -> Result<Vec<String>, RepoConfigError> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        if key != "extra_args" {
            return Err(invalid(
                &at,
                format!(
                    "built-in steps only support a single extra_args key, found {:?} in step {step}",
                    shown_value(key)
                ),
            ));
        }
        if value.is_null() {
            continue;
        }
        let items = list(value, &at)?;
        if items.len() > MAX_EXTRA_WORDS {
            return Err(invalid(
                &at,
                format!("has more than {MAX_EXTRA_WORDS} arguments"),
            ));
        }
        for (i, item) in items.iter().enumerate() {
            let word = text(item, &format!("{at}[{i}]"))?;
            if word.len() > MAX_EXTRA_WORD_LEN {
                return Err(invalid(
                    &format!("{at}[{i}]"),
                    format!("is longer than {MAX_EXTRA_WORD_LEN} characters"),
                ));
            }
            out.push(word);
        }
    }
    Ok(out)
}

/// `env: {name, value}` or `env: {name, command, shell, shellArgs}`.
fn env_step(value: &Value, path: &str) -> Result<StepKind, RepoConfigError> {
    let mut name = None;
    let mut value_text = None;
    let mut command = false;
    let mut shell = false;
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        match key {
            "name" => name = Some(text(value, &at)?),
            "value" => value_text = Some(text(value, &at)?),
            "command" => command = true,
            "shell" | "shellArgs" => shell = true,
            _ => {
                return Err(invalid(
                    &at,
                    "env steps only support keys \"name\", \"value\", \"command\", \"shell\" and \"shellArgs\"",
                ));
            }
        }
    }
    let name = name.ok_or_else(|| invalid(path, "env steps must have a \"name\" key set"))?;
    let name_at = child(path, "name");
    if !is_env_name(&name) {
        return Err(invalid(
            &name_at,
            format!(
                "`{}` is not an environment variable name: letters, digits and `_`, not starting with a digit, at most {MAX_NAME_LEN} characters",
                shown_value(&name)
            ),
        ));
    }
    if command && value_text.is_some() {
        return Err(invalid(
            path,
            "env steps only support one of the \"value\" or \"command\" keys, found both",
        ));
    }
    if shell && !command {
        return Err(invalid(
            path,
            "workflow steps only support \"shell\" key in combination with \"command\" key",
        ));
    }
    if command {
        return Ok(StepKind::Shell(ShellStep::EnvCommand { name }));
    }
    let value = value_text.unwrap_or_default();
    if value.len() > MAX_VALUE_LEN {
        return Err(invalid(
            &child(path, "value"),
            format!("is longer than {MAX_VALUE_LEN} characters"),
        ));
    }
    Ok(StepKind::Env { name, value })
}

fn is_env_name(name: &str) -> bool {
    name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `run: COMMAND` or `run: {command, ...}` (and `multienv`): checked for shape only, since
/// atoll never runs it.
fn command_step(
    value: &Value,
    path: &str,
    step: &str,
    keys: &[&str],
) -> Result<(), RepoConfigError> {
    match value {
        Value::String(_) => Ok(()),
        Value::Mapping(map) => {
            let mut has_command = false;
            for (key, value) in entries(map, path)? {
                if !keys.contains(&key) {
                    return Err(invalid(
                        &child(path, key),
                        format!(
                            "{step:?} steps only support keys \"command\", \"output\", \"shell\" and \"shellArgs\""
                        ),
                    ));
                }
                has_command |= key == "command" && value.is_string();
            }
            if has_command {
                Ok(())
            } else {
                Err(invalid(
                    path,
                    format!("{step:?} step must have a \"command\" key set"),
                ))
            }
        }
        _ => Err(invalid(path, format!("{step:?} step must have a command"))),
    }
}

#[cfg(test)]
#[path = "workflow_tests.rs"]
mod tests;
