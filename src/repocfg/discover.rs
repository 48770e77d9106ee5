//! Projects without `atlantis.yaml`: Atlantis's autoplan rules (reference/atlantis.md 2.2, and
//! `server/events/project_finder.go` in runatlantis/atlantis), restated:
//!
//! 1. Keep the changed files that are Terraform files: `*.tf`, `*.tf.json`, `*.tfvars`,
//!    `*.tfvars.json`, `.terraform.lock.hcl` (state files `terraform.tfstate*` never count).
//! 2. Each file's directory is a project directory, except:
//!    - a directory named `env` stands for its parent (`stack/env/dev.tfvars` plans `stack`);
//!    - a directory with a `modules` component stands for the directory above the first
//!      `modules` (`stack/modules/x/main.tf` plans `stack`), but only if that directory itself
//!      holds `.tf` files in the head commit; a shared top-level `modules/` therefore plans
//!      nothing (Atlantis cannot know which projects use it, and neither can this rule).
//!      Atlantis splits on the text `modules/`, which also cuts `mymodules/`; here only a
//!      whole `modules` component counts.
//! 3. Like Atlantis's `--autoplan-modules`: when the caller passes the local module calls of the
//!    head commit (`ModuleUse`, from `module "x" { source = "../modules/x" }`), a changed
//!    module directory also plans every project directory that uses it, directly or through
//!    other modules. A project directory here is one that rule 2 maps to itself (no `modules`
//!    component, not named `env`). With no module calls given, this rule adds nothing.
//! 4. Directories that no longer exist in the head commit (all files deleted) are dropped.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::ModuleUse;
use crate::commands::RepoDir;

/// True for files whose change can alter a plan.
pub(crate) fn is_terraform_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.contains("terraform.tfstate") {
        return false;
    }
    name == ".terraform.lock.hcl"
        || [
            ".tf",
            ".tf.json",
            ".tofu",
            ".tofu.json",
            ".tfvars",
            ".tfvars.json",
        ]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// True for files Terraform or OpenTofu loads as configuration (`*.tf`, `*.tf.json`, `*.tofu`,
/// `*.tofu.json`).
pub(crate) fn is_config_file(path: &str) -> bool {
    [".tf", ".tf.json", ".tofu", ".tofu.json"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

/// The directory of a repository-relative file path, if atoll accepts its name.
pub(crate) fn parent_dir(path: &str) -> Option<RepoDir> {
    match path.trim_start_matches("./").rsplit_once('/') {
        Some((dir, _)) => RepoDir::parse(dir).ok(),
        None => Some(RepoDir::root()),
    }
}

/// The project directory a changed Terraform file stands for, by the rules above.
fn project_dir(file: &str, tf_dirs: &BTreeSet<RepoDir>) -> Option<RepoDir> {
    let dir = parent_dir(file)?;
    if dir.components().last() == Some("env") {
        return dir.parent();
    }
    let parts: Vec<&str> = dir.components().collect();
    match parts.iter().position(|part| *part == "modules") {
        Some(at) => {
            let above = if at == 0 {
                RepoDir::root()
            } else {
                RepoDir::parse(&parts[..at].join("/")).ok()?
            };
            tf_dirs.contains(&above).then_some(above)
        }
        None => Some(dir),
    }
}

/// The project directories the changed files stand for, sorted and without duplicates.
pub(crate) fn discover(
    changed: &[String],
    tf_dirs: &BTreeSet<RepoDir>,
    existing: &HashSet<String>,
    module_uses: &[ModuleUse],
) -> Vec<RepoDir> {
    let changed: Vec<&String> = changed
        .iter()
        .filter(|file| is_terraform_file(file))
        .collect();
    let mut dirs: BTreeSet<RepoDir> = changed
        .iter()
        .filter_map(|file| project_dir(file, tf_dirs))
        .collect();
    if !module_uses.is_empty() {
        let modules: BTreeSet<RepoDir> = changed.iter().filter_map(|f| parent_dir(f)).collect();
        dirs.extend(
            users_of(&modules, module_uses)
                .into_iter()
                .filter(|dir| is_project_root(dir) && tf_dirs.contains(dir)),
        );
    }
    dirs.into_iter()
        .filter(|dir| existing.contains(dir.as_str()))
        .collect()
}

/// A directory rule 2 maps to itself.
fn is_project_root(dir: &RepoDir) -> bool {
    dir.components().last() != Some("env") && dir.components().all(|part| part != "modules")
}

/// Every directory that uses one of `modules`, directly or through other modules.
fn users_of(modules: &BTreeSet<RepoDir>, uses: &[ModuleUse]) -> BTreeSet<RepoDir> {
    let mut callers: BTreeMap<&RepoDir, Vec<&RepoDir>> = BTreeMap::new();
    for edge in uses {
        callers.entry(&edge.module).or_default().push(&edge.user);
    }
    let mut seen: BTreeSet<RepoDir> = BTreeSet::new();
    let mut queue: Vec<&RepoDir> = modules.iter().collect();
    while let Some(module) = queue.pop() {
        for user in callers.get(module).into_iter().flatten() {
            if seen.insert((*user).clone()) {
                queue.push(user);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terraform_files_are_recognised_and_state_files_are_not() {
        for yes in [
            "main.tf",
            "a/b.tf.json",
            "x.tfvars",
            "e/dev.tfvars.json",
            "s/.terraform.lock.hcl",
        ] {
            assert!(is_terraform_file(yes), "{yes}");
        }
        for no in [
            "README.md",
            "terraform.tfstate",
            "a/terraform.tfstate.backup",
            "main.tf.bak",
            "tf",
        ] {
            assert!(!is_terraform_file(no), "{no}");
        }
    }
}
