//! The `atlantis.yaml` keys that decide how a PR's commands run rather than which projects it
//! has (Atlantis's `raw/repo_cfg.go` and `raw/project.go`): `automerge`,
//! `delete_source_branch_on_merge`, `emoji_reaction`, `abort_on_execution_order_fail`,
//! `repo_locks` (and the deprecated `repo_locking`), `silence_pr_comments`, and per project
//! `plan_requirements`, `import_requirements`, `execution_order_group` and `depends_on`.
//! Parsed here; merged with the server's rules in `resolve`; `depends_on` is checked across
//! projects in `depends`.

use serde::{Deserialize, Serialize};
use serde_yaml_ng::Value;

use super::Requirement;
use super::repo::{RepoConfigError, Warning, requirements as requirements_list};
use super::server::{Override, RepoPolicy};
use super::yaml::{boolean, child, entries, mapping, text, text_list};
use crate::commands::ProjectName;

/// When atoll takes a project's lock (`repo_locks.mode`, Atlantis 0.28+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockMode {
    /// At plan: a second PR cannot plan the project until the first is merged or unlocked.
    #[default]
    OnPlan,
    /// At apply: plans never lock; the apply takes the lock (and keeps it until merge).
    OnApply,
    /// Never.
    Disabled,
}

impl LockMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OnPlan => "on_plan",
            Self::OnApply => "on_apply",
            Self::Disabled => "disabled",
        }
    }

    fn from_word(word: &str) -> Option<Self> {
        [Self::OnPlan, Self::OnApply, Self::Disabled]
            .into_iter()
            .find(|m| m.as_str() == word)
    }
}

/// How an automerge merges (Atlantis's `--automerge-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeMethod {
    #[default]
    Merge,
    Squash,
    Rebase,
}

impl MergeMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Merge => "merge",
            Self::Squash => "squash",
            Self::Rebase => "rebase",
        }
    }
}

/// The reactions both GitHub and Gitea (its default `[ui] REACTIONS`) accept on a comment.
pub const EMOJI: [&str; 8] = [
    "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
];

/// `emoji_reaction`: one of [`EMOJI`], as the forges' APIs spell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emoji(&'static str);

impl Emoji {
    pub fn parse(word: &str) -> Option<Self> {
        EMOJI.iter().find(|e| **e == word).map(|e| Self(e))
    }

    pub fn as_str(&self) -> &'static str {
        self.0
    }
}

/// `silence_pr_comments`: the commands whose comment is left out when nothing failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Silence {
    pub plan: bool,
    pub apply: bool,
}

/// The top-level keys of this module, as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepoOptions {
    pub automerge: Option<bool>,
    pub delete_source_branch_on_merge: Option<bool>,
    pub emoji_reaction: Option<Emoji>,
    pub abort_on_execution_order_fail: bool,
    pub repo_locks: Option<LockMode>,
    pub silence_pr_comments: Option<Silence>,
}

/// The per-project keys of this module, as written (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WrittenOptions {
    pub plan_requirements: Option<Vec<Requirement>>,
    pub import_requirements: Option<Vec<Requirement>>,
    pub silence_pr_comments: Option<Silence>,
    pub execution_order_group: Option<i64>,
    pub depends_on: Vec<ProjectName>,
    pub delete_source_branch_on_merge: Option<bool>,
    pub repo_locks: Option<LockMode>,
}

/// A project's run options, server rules merged in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProjectOptions {
    /// Checked before a comment `plan` (autoplan skips them, as in Atlantis).
    pub plan_requirements: Vec<Requirement>,
    /// Checked before `import` (kept for that command).
    pub import_requirements: Vec<Requirement>,
    pub silence: Silence,
    /// Projects run in groups by ascending value (default 0).
    pub execution_order_group: i64,
    /// Projects of `atlantis.yaml` that must be applied before this one applies.
    pub depends_on: Vec<ProjectName>,
    pub delete_source_branch_on_merge: bool,
    pub repo_locks: LockMode,
}

/// The repository-wide run options of one PR, server rules merged in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunOptions {
    /// Merge the PR once every project of it is applied.
    pub automerge: bool,
    pub merge_method: MergeMethod,
    /// The reaction on command comments; `None`: the server's (`eyes`).
    pub emoji_reaction: Option<Emoji>,
    /// A failure in one execution order group skips the groups after it.
    pub abort_on_execution_order_fail: bool,
}

impl RunOptions {
    pub(super) fn new(written: Option<&RepoOptions>, policy: &RepoPolicy) -> Self {
        Self {
            automerge: written
                .and_then(|w| w.automerge)
                .unwrap_or(policy.automerge),
            merge_method: policy.automerge_method,
            emoji_reaction: written.and_then(|w| w.emoji_reaction.clone()),
            abort_on_execution_order_fail: written.is_some_and(|w| w.abort_on_execution_order_fail),
        }
    }
}

/// The top-level defaults for every listed project: what the file sets where the server rules
/// let it (a key they do not let it set is ignored with a warning, as Atlantis ignores it),
/// else the server's.
#[derive(Debug, Clone)]
pub(super) struct Defaults {
    silence: Silence,
    repo_locks: LockMode,
    delete_source_branch_on_merge: bool,
}

impl Defaults {
    pub(super) fn new(
        written: &RepoOptions,
        policy: &RepoPolicy,
        warnings: &mut Vec<Warning>,
    ) -> Self {
        let mut allowed = |set: bool, key: Override| {
            if set && !policy.allows(key) {
                warnings.push(Warning {
                    path: key.key().to_owned(),
                    message: format!(
                        "is ignored: the server rules for this repository do not let it \
                         override `{}`; ask the operator to add it to `allowed_overrides`",
                        key.key()
                    ),
                });
                return false;
            }
            set
        };
        let silence = match written.silence_pr_comments {
            Some(own) if allowed(true, Override::SilencePrComments) => own,
            _ => policy.silence,
        };
        let repo_locks = match written.repo_locks {
            Some(own) if allowed(true, Override::RepoLocks) => own,
            _ => policy.repo_locks,
        };
        let delete_source_branch_on_merge = match written.delete_source_branch_on_merge {
            Some(own) if allowed(true, Override::DeleteSourceBranchOnMerge) => own,
            _ => policy.delete_source_branch_on_merge,
        };
        Self {
            silence,
            repo_locks,
            delete_source_branch_on_merge,
        }
    }

    /// The server's, for a repository without `atlantis.yaml` and for discovered projects.
    pub(super) fn server(policy: &RepoPolicy) -> Self {
        Self {
            silence: policy.silence,
            repo_locks: policy.repo_locks,
            delete_source_branch_on_merge: policy.delete_source_branch_on_merge,
        }
    }

    /// A project the file does not list.
    pub(super) fn unlisted(&self, policy: &RepoPolicy) -> ProjectOptions {
        ProjectOptions {
            plan_requirements: policy.plan_requirements.clone(),
            import_requirements: policy.import_requirements.clone(),
            silence: self.silence,
            execution_order_group: 0,
            depends_on: Vec::new(),
            delete_source_branch_on_merge: self.delete_source_branch_on_merge,
            repo_locks: self.repo_locks,
        }
    }

    /// A listed project: its own keys where the server rules let it set them (else an error
    /// naming the key, as Atlantis refuses them), then the defaults.
    pub(super) fn merge(
        &self,
        written: WrittenOptions,
        index: usize,
        policy: &RepoPolicy,
    ) -> Result<ProjectOptions, RepoConfigError> {
        let check = |set: bool, key: Override| {
            if set && !policy.allows(key) {
                Err(RepoConfigError::OverrideRefused {
                    path: format!("projects[{index}].{}", key.key()),
                    key: key.key(),
                })
            } else {
                Ok(())
            }
        };
        check(
            written.plan_requirements.is_some(),
            Override::PlanRequirements,
        )?;
        check(
            written.import_requirements.is_some(),
            Override::ImportRequirements,
        )?;
        check(
            written.silence_pr_comments.is_some(),
            Override::SilencePrComments,
        )?;
        check(written.repo_locks.is_some(), Override::RepoLocks)?;
        check(
            written.delete_source_branch_on_merge.is_some(),
            Override::DeleteSourceBranchOnMerge,
        )?;
        let base = self.unlisted(policy);
        Ok(ProjectOptions {
            plan_requirements: written.plan_requirements.unwrap_or(base.plan_requirements),
            import_requirements: written
                .import_requirements
                .unwrap_or(base.import_requirements),
            silence: written.silence_pr_comments.unwrap_or(base.silence),
            execution_order_group: written.execution_order_group.unwrap_or(0),
            depends_on: written.depends_on,
            delete_source_branch_on_merge: written
                .delete_source_branch_on_merge
                .unwrap_or(base.delete_source_branch_on_merge),
            repo_locks: written.repo_locks.unwrap_or(base.repo_locks),
        })
    }
}

/// Reads a top-level key of this module; `false` when `key` is not one.
pub(super) fn top_key(
    options: &mut RepoOptions,
    key: &str,
    value: &Value,
) -> Result<bool, RepoConfigError> {
    match key {
        "automerge" => options.automerge = Some(boolean(value, key)?),
        "delete_source_branch_on_merge" => {
            options.delete_source_branch_on_merge = Some(boolean(value, key)?);
        }
        "abort_on_execution_order_fail" => {
            options.abort_on_execution_order_fail = boolean(value, key)?;
        }
        "emoji_reaction" => options.emoji_reaction = emoji(value, key)?,
        "repo_locks" => options.repo_locks = Some(repo_locks(value, key)?),
        "silence_pr_comments" => options.silence_pr_comments = Some(silence(value, key)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Reads a project key of this module; `false` when `key` is not one.
pub(super) fn project_key(
    options: &mut WrittenOptions,
    key: &str,
    value: &Value,
    at: &str,
) -> Result<bool, RepoConfigError> {
    match key {
        "plan_requirements" => {
            options.plan_requirements = Some(requirements_list(value, at)?);
        }
        "import_requirements" => {
            options.import_requirements = Some(requirements_list(value, at)?);
        }
        "silence_pr_comments" => options.silence_pr_comments = Some(silence(value, at)?),
        "execution_order_group" => options.execution_order_group = Some(group(value, at)?),
        "depends_on" => options.depends_on = depends_on(value, at)?,
        "delete_source_branch_on_merge" => {
            options.delete_source_branch_on_merge = Some(boolean(value, at)?);
        }
        "repo_locks" => options.repo_locks = Some(repo_locks(value, at)?),
        // Deprecated: `true` is the default mode, `false` is `disabled` (Atlantis's merge).
        "repo_locking" => {
            let on = boolean(value, at)?;
            options.repo_locks = Some(if on {
                LockMode::OnPlan
            } else {
                LockMode::Disabled
            });
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn invalid(path: &str, problem: impl std::fmt::Display) -> RepoConfigError {
    RepoConfigError::Invalid {
        path: path.to_owned(),
        problem: problem.to_string(),
    }
}

/// `emoji_reaction: eyes`; an empty value is absent (the server's reaction).
fn emoji(value: &Value, at: &str) -> Result<Option<Emoji>, RepoConfigError> {
    let word = text(value, at)?;
    if word.trim().is_empty() {
        return Ok(None);
    }
    Emoji::parse(word.trim()).map(Some).ok_or_else(|| {
        let shown = crate::commands::shown_value(&word);
        invalid(
            at,
            format!(
                "`{shown}` is not a reaction both GitHub and Gitea accept; use one of {}",
                EMOJI
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

/// `repo_locks: {mode: on_plan | on_apply | disabled}`.
fn repo_locks(value: &Value, path: &str) -> Result<LockMode, RepoConfigError> {
    let mut mode = LockMode::default();
    for (key, value) in entries(mapping(value, path)?, path)? {
        let at = child(path, key);
        match key {
            "mode" => {
                let word = text(value, &at)?;
                mode = LockMode::from_word(&word)
                    .ok_or_else(|| invalid(&at, "must be `on_plan`, `on_apply` or `disabled`"))?;
            }
            _ => return Err(RepoConfigError::UnknownKey { path: at }),
        }
    }
    Ok(mode)
}

/// `silence_pr_comments: [plan, apply]`.
fn silence(value: &Value, at: &str) -> Result<Silence, RepoConfigError> {
    let mut out = Silence::default();
    for (i, word) in text_list(value, at)?.into_iter().enumerate() {
        match word.as_str() {
            "plan" => out.plan = true,
            "apply" => out.apply = true,
            other => {
                let shown = crate::commands::shown_value(other);
                return Err(invalid(
                    &format!("{at}[{i}]"),
                    format!(
                        "`{shown}` is not a command whose comment can be silenced; use `plan` or `apply`"
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// `execution_order_group: 1`: a whole number.
fn group(value: &Value, at: &str) -> Result<i64, RepoConfigError> {
    value
        .as_i64()
        .ok_or_else(|| invalid(at, "must be a whole number, such as `0` or `2`"))
}

/// `depends_on: [name, ...]`: project names, each once.
fn depends_on(value: &Value, at: &str) -> Result<Vec<ProjectName>, RepoConfigError> {
    let words = text_list(value, at)?;
    if words.len() > super::repo::MAX_PROJECTS {
        return Err(invalid(
            at,
            format!("has more than {} entries", super::repo::MAX_PROJECTS),
        ));
    }
    let mut out: Vec<ProjectName> = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let name = ProjectName::parse(word).map_err(|e| invalid(&format!("{at}[{i}]"), e))?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emoji_names_are_the_forges_own() {
        assert_eq!(Emoji::parse("eyes").map(|e| e.as_str()), Some("eyes"));
        assert_eq!(Emoji::parse("+1").map(|e| e.as_str()), Some("+1"));
        assert!(Emoji::parse("thumbsup").is_none());
    }
}
