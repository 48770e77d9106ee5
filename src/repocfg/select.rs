//! The projects a comment command targets. Rules:
//!
//! - no flags: every project the PR modifies that the server manages (`Resolution::modified`),
//!   whether or not its autoplan is enabled;
//! - `-p NAME`: the `atlantis.yaml` project of that name;
//! - `-d DIR` and/or `-w WORKSPACE`: a missing `-d` means the repository root and a missing
//!   `-w` means `default`, as in Atlantis, except that `-d` alone selects every
//!   `atlantis.yaml` project in that directory, whatever its workspace (add `-w` to narrow it).
//!   A directory `atlantis.yaml` does not list (or any directory without `atlantis.yaml`) is a
//!   project with the server's settings if it holds `.tf` files at the head commit.
//! - an explicit `-w` on a directory `atlantis.yaml` lists only for other workspaces is refused
//!   with the workspaces it is configured for, and one that matches two named projects asks
//!   for `-p`, naming them (Atlantis's `project_command_builder.go` and `valid/repo_cfg.go`).
//!
//! - `-d GLOB` (`*`, `?` or `[`, as in Atlantis): every listed project whose directory matches
//!   (any workspace unless `-w`), else every directory holding `.tf` files that matches.
//!
//! A named project or directory that the server rules exclude is refused, never skipped. So is
//! one `atlantis.yaml` lists only for other base branches (`branch`), and a directory that
//! `autodiscover.ignore_paths` ignores (Atlantis skips the latter silently; atoll says why).
//!
//! Without flags this returns what the PR modifies now; `apply` and `unlock` without flags act
//! on the PR's own plans and locks, which the runner and `locks` keep, not on this list.

use super::Project;
use super::filters::DirGlob;
use super::resolve::{OffBranch, Resolution};
use crate::commands::{Command, ProjectName, RepoDir, Workspace};

/// Why a command's flags select nothing runnable. Each message says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("there is no project named `{name}` in atlantis.yaml; {}", known_names(.known))]
    UnknownProject {
        name: ProjectName,
        known: Vec<ProjectName>,
    },
    #[error(
        "`-p` names a project from atlantis.yaml, and this repository's atlantis.yaml lists no \
         projects; use `-d DIR` instead"
    )]
    NoConfiguredProjects,
    #[error("directory `{dir}` holds no .tf files at this commit; check the path")]
    NoTerraform { dir: RepoDir },
    #[error(
        "project `{name}` has directory `{dir}`, which does not exist at this commit; restore \
         it, or remove the project from atlantis.yaml"
    )]
    DirMissing { name: String, dir: RepoDir },
    #[error(
        "{label} is not managed by this server: the server's repo rules exclude `{pattern}`; \
         run it by hand with `atoll plan --dir {dir}` and `atoll apply --dir {dir}`"
    )]
    NotManaged {
        label: String,
        dir: RepoDir,
        pattern: String,
    },
    #[error(
        "running commands in workspace `{workspace}` is not allowed because this directory is \
         only configured for the following workspaces: {}; use one of them with `-w`, or add \
         a project for `{workspace}` to atlantis.yaml",
        joined(.configured)
    )]
    WorkspaceNotConfigured {
        dir: RepoDir,
        workspace: Workspace,
        configured: Vec<Workspace>,
    },
    #[error(
        "must specify project name: more than one project in atlantis.yaml matches dir `{dir}` \
         workspace `{workspace}`; use `-p` with one of {}",
        joined(.names)
    )]
    Ambiguous {
        dir: RepoDir,
        workspace: Workspace,
        names: Vec<String>,
    },
    #[error(
        "{label} is configured in atlantis.yaml only for base branches matching `{branch}`, and \
         this PR's base branch is `{base}`; it is not planned on this PR (as in Atlantis)"
    )]
    OffBranch {
        label: String,
        branch: String,
        base: String,
    },
    #[error(
        "directory `{dir}` matches `autodiscover.ignore_paths` entry `{pattern}` in \
         atlantis.yaml, so atoll does not plan it; remove the entry, or list the directory under \
         `projects`"
    )]
    Ignored { dir: RepoDir, pattern: String },
    #[error(
        "`-d {pattern}` matches no project directory at this commit; check the pattern (`*` \
         stays inside one directory name, `**` spans several)"
    )]
    NoMatch { pattern: String },
}

fn joined<T: std::fmt::Display>(items: &[T]) -> String {
    let shown: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    shown.join(", ")
}

fn known_names(known: &[ProjectName]) -> String {
    if known.is_empty() {
        return "it lists no named projects".to_owned();
    }
    let names: Vec<String> = known.iter().map(|n| format!("`{n}`")).collect();
    format!("known projects: {}", names.join(", "))
}

/// The projects `command` targets in `resolution`, in `atlantis.yaml` order.
pub fn select(command: &Command, resolution: &Resolution) -> Result<Vec<Project>, SelectError> {
    match (&command.project, &command.dir, &command.workspace) {
        (Some(name), _, _) => by_name(name, resolution).map(|p| vec![p]),
        (None, _, workspace) if command.dir_glob.is_some() => {
            let written = command.dir_glob.as_deref().unwrap_or_default();
            by_glob(written, workspace.as_ref(), resolution)
        }
        (None, None, None) => Ok(resolution.modified.clone()),
        (None, dir, workspace) => {
            let dir = dir.clone().unwrap_or_else(RepoDir::root);
            let workspace = workspace
                .clone()
                .or_else(|| command.dir.is_none().then(Workspace::default));
            by_dir(dir, workspace, resolution)
        }
    }
}

fn by_name(name: &ProjectName, resolution: &Resolution) -> Result<Project, SelectError> {
    if let Some(off) = resolution
        .off_branch
        .iter()
        .find(|o| o.project.name.as_ref() == Some(name))
    {
        return Err(off_branch(off, resolution));
    }
    if !resolution.has_configured_projects() {
        return Err(SelectError::NoConfiguredProjects);
    }
    let Some(project) = resolution
        .configured
        .iter()
        .find(|p| p.name.as_ref() == Some(name))
    else {
        let known = resolution
            .configured
            .iter()
            .filter_map(|p| p.name.clone())
            .collect();
        return Err(SelectError::UnknownProject {
            name: name.clone(),
            known,
        });
    };
    match not_managed(project, resolution).or_else(|| missing(project, resolution)) {
        Some(error) => Err(error),
        None => Ok(project.clone()),
    }
}

/// `workspace: None` means any workspace of a listed project (`-d` alone).
fn by_dir(
    dir: RepoDir,
    workspace: Option<Workspace>,
    resolution: &Resolution,
) -> Result<Vec<Project>, SelectError> {
    let listed: Vec<Project> = resolution
        .configured
        .iter()
        .filter(|p| p.dir == dir && workspace.as_ref().is_none_or(|w| *w == p.workspace))
        .cloned()
        .collect();
    if let Some(workspace) = &workspace {
        check_workspace(&dir, workspace, &listed, resolution)?;
    }
    if !listed.is_empty() {
        if let Some(error) = listed.iter().find_map(|p| missing(p, resolution)) {
            return Err(error);
        }
        return managed(listed, resolution);
    }
    if let Some(off) = resolution.off_branch.iter().find(|o| {
        o.project.dir == dir && workspace.as_ref().is_none_or(|w| *w == o.project.workspace)
    }) {
        return Err(off_branch(off, resolution));
    }
    if let Some(pattern) = resolution
        .discovery
        .as_ref()
        .and_then(|d| d.ignored_by(dir.as_str()))
    {
        return Err(SelectError::Ignored {
            dir,
            pattern: pattern.to_owned(),
        });
    }
    let project = resolution.default_project(dir.clone(), workspace.unwrap_or_default());
    let list = managed(vec![project], resolution)?;
    if !resolution.tf_dirs.contains(&dir) {
        return Err(SelectError::NoTerraform { dir });
    }
    Ok(list)
}

/// An explicit `-w` must pick exactly one listed project in a listed directory: a directory
/// `atlantis.yaml` lists only for other workspaces is refused (planning it with the server's
/// defaults would drop the repository's requirements), and two named projects need `-p`.
fn check_workspace(
    dir: &RepoDir,
    workspace: &Workspace,
    listed: &[Project],
    resolution: &Resolution,
) -> Result<(), SelectError> {
    if listed.len() > 1 {
        return Err(SelectError::Ambiguous {
            dir: dir.clone(),
            workspace: workspace.clone(),
            names: listed.iter().map(Project::label).collect(),
        });
    }
    if !listed.is_empty() {
        return Ok(());
    }
    let mut configured: Vec<Workspace> = Vec::new();
    for project in resolution.configured.iter().filter(|p| p.dir == *dir) {
        if !configured.contains(&project.workspace) {
            configured.push(project.workspace.clone());
        }
    }
    if configured.is_empty() {
        return Ok(());
    }
    Err(SelectError::WorkspaceNotConfigured {
        dir: dir.clone(),
        workspace: workspace.clone(),
        configured,
    })
}

/// `-d GLOB`: the listed projects whose directory matches (any workspace unless `-w`), else
/// every directory holding Terraform files that matches, that no project lists on another
/// branch and that `autodiscover.ignore_paths` does not ignore.
fn by_glob(
    written: &str,
    workspace: Option<&Workspace>,
    resolution: &Resolution,
) -> Result<Vec<Project>, SelectError> {
    let no_match = || SelectError::NoMatch {
        pattern: crate::commands::shown_value(written),
    };
    let glob = DirGlob::parse(written).map_err(|_| no_match())?;
    let fits =
        |p: &Project| glob.matches(p.dir.as_str()) && workspace.is_none_or(|w| *w == p.workspace);
    let listed: Vec<Project> = resolution
        .configured
        .iter()
        .filter(|p| fits(p))
        .cloned()
        .collect();
    if !listed.is_empty() {
        if let Some(error) = listed.iter().find_map(|p| missing(p, resolution)) {
            return Err(error);
        }
        return managed(listed, resolution);
    }
    let taken = |dir: &RepoDir| resolution.off_branch.iter().any(|o| o.project.dir == *dir);
    let ignored = |dir: &RepoDir| {
        resolution
            .discovery
            .as_ref()
            .is_some_and(|d| d.ignored_by(dir.as_str()).is_some())
    };
    let found: Vec<Project> = resolution
        .tf_dirs
        .iter()
        .filter(|dir| glob.matches(dir.as_str()) && !taken(dir) && !ignored(dir))
        .map(|dir| {
            let workspace = workspace.cloned().unwrap_or_default();
            resolution.default_project(dir.clone(), workspace)
        })
        .collect();
    if found.is_empty() {
        return Err(no_match());
    }
    managed(found, resolution)
}

/// `projects` if the server manages all of them; otherwise the first exclusion as an error.
fn managed(projects: Vec<Project>, resolution: &Resolution) -> Result<Vec<Project>, SelectError> {
    match projects.iter().find_map(|p| not_managed(p, resolution)) {
        Some(error) => Err(error),
        None => Ok(projects),
    }
}

/// A listed project whose directory the PR deleted: planning it would plan an empty
/// configuration (everything destroyed), so it is refused rather than guessed.
fn missing(project: &Project, resolution: &Resolution) -> Option<SelectError> {
    (!resolution.existing.contains(project.dir.as_str())).then(|| SelectError::DirMissing {
        name: project.label(),
        dir: project.dir.clone(),
    })
}

fn off_branch(off: &OffBranch, resolution: &Resolution) -> SelectError {
    SelectError::OffBranch {
        label: label(&off.project),
        branch: off.branch.clone(),
        base: crate::commands::shown_value(resolution.base_branch.as_deref().unwrap_or("")),
    }
}

fn label(project: &Project) -> String {
    match &project.name {
        Some(name) => format!("project `{name}`"),
        None => format!("directory `{}`", project.dir),
    }
}

fn not_managed(project: &Project, resolution: &Resolution) -> Option<SelectError> {
    let pattern = resolution.policy.excluded_by(&project.dir)?;
    Some(SelectError::NotManaged {
        label: label(project),
        dir: project.dir.clone(),
        pattern: pattern.to_owned(),
    })
}
