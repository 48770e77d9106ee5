//! One PR's projects: `atlantis.yaml` (or discovery) merged with the server policy, split into
//! the projects the PR modifies and those the server may not manage.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::discover::{discover, is_config_file, parent_dir};
use super::filters::Autodiscover;
use super::options::{Defaults, RunOptions};
use super::patterns::PathPatterns;
use super::repo::{MAX_PROJECTS, RepoConfig, RepoConfigError, RepoProject, Warning};
use super::server::{Override, RepoPolicy};
use super::{ModuleUse, Project, default_when_modified};
use crate::commands::{RepoDir, Workspace};

/// What `resolve` needs to know about one PR. Paths are relative to the repository root.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The text of `atlantis.yaml` at the head commit, if the file exists.
    pub atlantis_yaml: Option<&'a str>,
    /// Every file in the head commit.
    pub tree: &'a [String],
    /// The files the PR changes, deleted ones included.
    pub changed: &'a [String],
    /// Local module calls in the head commit (from `tfconfig`); empty to plan shared modules'
    /// users only through `when_modified`, as Atlantis does by default.
    pub module_uses: &'a [ModuleUse],
}

/// A project the PR touches that the server rules keep away from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excluded {
    pub project: Project,
    /// The `manage.exclude` pattern that matched.
    pub pattern: String,
}

/// The projects of one PR.
#[derive(Debug, Clone)]
pub struct Resolution {
    /// Projects the PR modifies that the server manages, in `atlantis.yaml` order (or sorted
    /// by directory when discovered). A comment `plan` without flags runs these.
    pub modified: Vec<Project>,
    /// Projects the PR modifies that the server must not touch, to be named in the reply.
    pub excluded: Vec<Excluded>,
    /// Ignored keys and skipped directories, to be shown with the plan.
    pub warnings: Vec<Warning>,
    pub parallel_plan: bool,
    pub parallel_apply: bool,
    /// `automerge`, `emoji_reaction`, `abort_on_execution_order_fail`, server rules merged.
    pub run: RunOptions,
    /// Every project of `atlantis.yaml`, merged; empty when projects are discovered.
    pub(crate) configured: Vec<Project>,
    pub(crate) policy: RepoPolicy,
    /// Directories holding `.tf` / `.tf.json` files in the head commit.
    pub(crate) tf_dirs: BTreeSet<RepoDir>,
    /// Every directory of the head commit.
    pub(crate) existing: HashSet<String>,
    /// Projects of `atlantis.yaml` whose `branch` does not match this PR's base branch: never
    /// planned, and refused by name when a comment targets them.
    pub(crate) off_branch: Vec<OffBranch>,
    /// The PR's base branch, when known.
    pub(crate) base_branch: Option<String>,
    /// `autodiscover` when directories outside `atlantis.yaml` are discovered; `None` when
    /// discovery is off.
    pub(crate) discovery: Option<Autodiscover>,
}

/// A listed project left out because its `branch` regex does not match the base branch.
#[derive(Debug, Clone)]
pub(crate) struct OffBranch {
    pub(crate) project: Project,
    /// The regex as written, e.g. `/^release/`.
    pub(crate) branch: String,
}

impl Resolution {
    /// The modified projects a push plans by itself (`autoplan.enabled`).
    pub fn autoplan(&self) -> impl Iterator<Item = &Project> {
        self.modified.iter().filter(|p| p.autoplan)
    }

    /// True when `atlantis.yaml` lists projects (so `-p` can name them).
    pub fn has_configured_projects(&self) -> bool {
        !self.configured.is_empty()
    }

    /// The directories of the modified projects that were discovered rather than listed in
    /// `atlantis.yaml` (in the `default` workspace): those whose workspace a Terraform Cloud
    /// `cloud` block may name (see [`Resolution::use_cloud_workspaces`]).
    pub fn discovered_dirs(&self) -> Vec<RepoDir> {
        self.modified
            .iter()
            .filter(|p| p.name.is_none() && p.workspace == Workspace::default())
            .filter(|p| !self.configured.iter().any(|c| c.key() == p.key()))
            .map(|p| p.dir.clone())
            .collect()
    }

    /// As Atlantis's `DetermineWorkspaceFromHCL`: a discovered project whose configuration has
    /// `terraform { cloud { workspaces { name = "prod" } } }` runs in that workspace, for its
    /// plans, locks and state. `names` maps directories to the workspace their block names
    /// (validated as every workspace is); a listed project keeps its `workspace`.
    pub fn use_cloud_workspaces(&mut self, names: &BTreeMap<RepoDir, Workspace>) {
        let discovered = self.discovered_dirs();
        for project in &mut self.modified {
            if discovered.contains(&project.dir)
                && let Some(workspace) = names.get(&project.dir)
            {
                project.workspace = workspace.clone();
            }
        }
    }

    /// A project for `dir`/`workspace` with the server's settings, as used for discovered
    /// directories and for `-d` on a directory `atlantis.yaml` does not list.
    pub(crate) fn default_project(&self, dir: RepoDir, workspace: Workspace) -> Project {
        default_project(&self.policy, dir, workspace)
    }

    /// Every project of `atlantis.yaml` on this base branch, merged (for `depends_on`).
    pub fn configured(&self) -> &[Project] {
        &self.configured
    }
}

fn default_project(policy: &RepoPolicy, dir: RepoDir, workspace: Workspace) -> Project {
    // The default patterns are constants and the directory is escaped: this cannot fail.
    let when_modified =
        PathPatterns::new(&dir, &default_when_modified()).unwrap_or_else(|_| PathPatterns::empty());
    Project {
        name: None,
        dir,
        workspace,
        autoplan: true,
        when_modified,
        apply_requirements: policy.apply_requirements.clone(),
        restart: policy.restart,
        options: Defaults::server(policy).unlisted(policy),
        workflow: super::workflow_rules::pick(None, &Default::default(), policy),
    }
}

/// Resolves the projects of one PR under `policy` (see `ServerRules::policy_for`), with no
/// base branch known: every project's `branch` filter passes, as in Atlantis.
pub fn resolve(inputs: Inputs<'_>, policy: &RepoPolicy) -> Result<Resolution, RepoConfigError> {
    resolve_on_base(inputs, None, policy)
}

/// Resolves the projects of a PR into `base_branch`: a project whose `branch` regex does not
/// match it is left out (listed in the warnings, refused by name when a comment targets it).
///
/// Autodiscovery (see `filters`): with `mode: auto` it runs when `atlantis.yaml` lists no
/// projects, counted as written (before the `branch` filter: a repository whose projects are
/// all meant for another branch plans nothing, rather than its directories with the server's
/// defaults, which Atlantis would do). Discovered directories never include a listed
/// project's directory, on any branch, nor one matched by `ignore_paths`.
pub fn resolve_on_base(
    inputs: Inputs<'_>,
    base_branch: Option<&str>,
    policy: &RepoPolicy,
) -> Result<Resolution, RepoConfigError> {
    let config = inputs.atlantis_yaml.map(RepoConfig::parse).transpose()?;
    let (tf_dirs, mut warnings) = scan_tree(inputs.tree);
    let existing = existing_dirs(inputs.tree);
    let (parallel_plan, parallel_apply) = config
        .as_ref()
        .map_or((None, None), |c| (c.parallel_plan, c.parallel_apply));
    let parallel_plan = parallel_plan.unwrap_or(policy.parallel_plan);
    let parallel_apply = parallel_apply.unwrap_or(policy.parallel_apply);
    let listed_count = config.as_ref().map_or(0, |c| c.projects.len());
    let autodiscover = config
        .as_ref()
        .and_then(|c| c.autodiscover.clone())
        .unwrap_or_default();
    let run = RunOptions::new(config.as_ref().map(|c| &c.options), policy);
    let mut defaults = Defaults::server(policy);
    let (configured, off_branch) = match config {
        Some(config) => {
            warnings.extend(config.warnings.iter().cloned());
            defaults = Defaults::new(&config.options, policy, &mut warnings);
            let listing = Listing {
                base_branch,
                tf_dirs: &tf_dirs,
                policy,
                defaults: &defaults,
                workflows: &config.workflows,
            };
            // The keys a project may not override are refused first, then what the file
            // says about workflows (Atlantis's order).
            let listed = listing.projects(config.projects.clone(), &mut warnings)?;
            super::workflow_rules::check(&config, policy)?;
            listed
        }
        None => (Vec::new(), Vec::new()),
    };
    let mut touched: Vec<Project> = configured
        .iter()
        .filter(|p| existing.contains(p.dir.as_str()))
        .filter(|p| inputs.changed.iter().any(|f| p.when_modified.matches(f)))
        .cloned()
        .collect();
    let discovery = autodiscover.enabled(listed_count).then_some(autodiscover);
    if let Some(discovery) = &discovery {
        let listed_dirs: HashSet<&RepoDir> = configured
            .iter()
            .chain(off_branch.iter().map(|o| &o.project))
            .map(|p| &p.dir)
            .collect();
        let found = discover(inputs.changed, &tf_dirs, &existing, inputs.module_uses);
        touched.extend(
            found
                .into_iter()
                .filter(|dir| !listed_dirs.contains(dir))
                .filter(|dir| discovery.ignored_by(dir.as_str()).is_none())
                .map(|dir| {
                    let mut project = default_project(policy, dir, Workspace::default());
                    // atlantis.yaml's top-level defaults hold for the directories it discovers.
                    project.options = defaults.unlisted(policy);
                    project
                }),
        );
    }
    let (modified, excluded) = split_excluded(touched, policy);
    Ok(Resolution {
        modified,
        excluded,
        warnings,
        parallel_plan,
        parallel_apply,
        run,
        configured,
        policy: policy.clone(),
        tf_dirs,
        existing,
        off_branch,
        base_branch: base_branch.map(str::to_owned),
        discovery,
    })
}

/// What listing the projects of `atlantis.yaml` needs besides them.
struct Listing<'a> {
    base_branch: Option<&'a str>,
    tf_dirs: &'a BTreeSet<RepoDir>,
    policy: &'a RepoPolicy,
    defaults: &'a Defaults,
    /// The file's own `workflows:`.
    workflows: &'a std::collections::BTreeMap<String, super::workflow::Workflow>,
}

impl Listing<'_> {
    /// The projects of `atlantis.yaml`, globs expanded and server rules merged, split into those
    /// on `base_branch` and those for other branches (each of which gets a warning).
    fn projects(
        &self,
        projects: Vec<RepoProject>,
        warnings: &mut Vec<Warning>,
    ) -> Result<(Vec<Project>, Vec<OffBranch>), RepoConfigError> {
        let (base_branch, tf_dirs, policy) = (self.base_branch, self.tf_dirs, self.policy);
        let mut configured: Vec<Project> = Vec::new();
        let mut off_branch = Vec::new();
        // (dir, workspace) of the projects so far on this branch: a glob match leaves them alone
        let mut taken: HashSet<(RepoDir, Workspace)> = HashSet::new();
        for (index, project) in projects.into_iter().enumerate() {
            let off = off_branch_regex(&project, base_branch);
            let budget = MAX_PROJECTS.saturating_sub(configured.len() + off_branch.len());
            let expanded = expand(project, tf_dirs, &taken, budget);
            if expanded.len() > budget {
                return Err(RepoConfigError::Invalid {
                    path: format!("projects[{index}].dir"),
                    problem: format!(
                        "with the glob `dir`s up to it, atlantis.yaml would have more than \
                     {MAX_PROJECTS} projects; narrow the pattern or list the directories"
                    ),
                });
            }
            for expanded in expanded {
                let merged = merge(expanded, index, policy, self.defaults, self.workflows)?;
                match &off {
                    Some(branch) => off_branch.push(OffBranch {
                        project: merged,
                        branch: branch.clone(),
                    }),
                    None => {
                        taken.insert((merged.dir.clone(), merged.workspace.clone()));
                        configured.push(merged);
                    }
                }
            }
            if let (Some(branch), Some(base)) = (&off, base_branch) {
                warnings.push(off_branch_warning(index, branch, base));
            }
        }
        Ok((configured, off_branch))
    }
}

/// The project's `branch` as written when it does not match `base_branch`.
fn off_branch_regex(project: &RepoProject, base_branch: Option<&str>) -> Option<String> {
    let (filter, base) = (project.branch.as_ref()?, base_branch?);
    (!filter.matches(base)).then(|| filter.as_str().to_owned())
}

fn off_branch_warning(index: usize, branch: &str, base: &str) -> Warning {
    Warning {
        path: format!("projects[{index}]"),
        message: format!(
            "is only for base branches matching `{branch}`; this PR's base branch is `{}`, so \
             it is not planned",
            crate::commands::shown_value(base)
        ),
    }
}

/// `project`, or for a glob `dir` one project per matching directory holding Terraform files
/// (sorted), each with `when_modified` relative to its own directory. A match whose directory
/// and workspace already belong to an earlier project (`taken`) is left to that project. At
/// most `budget + 1` come back, so a pattern the PR writes costs no more than the projects it
/// may have (the caller refuses more than `budget`).
fn expand(
    project: RepoProject,
    tf_dirs: &BTreeSet<RepoDir>,
    taken: &HashSet<(RepoDir, Workspace)>,
    budget: usize,
) -> Vec<RepoProject> {
    let Some(glob) = project.dir_glob.clone() else {
        return vec![project];
    };
    tf_dirs
        .iter()
        .filter(|dir| glob.matches(dir.as_str()))
        .filter(|dir| !taken.contains(&((*dir).clone(), project.workspace.clone())))
        .take(budget.saturating_add(1))
        .filter_map(|dir| {
            let when_modified = PathPatterns::new(dir, &project.when_modified_written).ok()?;
            Some(RepoProject {
                dir: dir.clone(),
                dir_glob: None,
                when_modified,
                ..project.clone()
            })
        })
        .collect()
}

/// A repository project with the server's settings where the repository did not set them (or
/// may not: that is an error naming the key).
fn merge(
    project: RepoProject,
    index: usize,
    policy: &RepoPolicy,
    defaults: &Defaults,
    workflows: &std::collections::BTreeMap<String, super::workflow::Workflow>,
) -> Result<Project, RepoConfigError> {
    let refused = |key: Override| RepoConfigError::OverrideRefused {
        path: format!("projects[{index}].{}", key.key()),
        key: key.key(),
    };
    let apply_requirements = match project.apply_requirements {
        Some(_) if !policy.allows(Override::ApplyRequirements) => {
            return Err(refused(Override::ApplyRequirements));
        }
        Some(own) => own,
        None => policy.apply_requirements.clone(),
    };
    let restart = match project.restart {
        Some(_) if !policy.allows(Override::Restart) => return Err(refused(Override::Restart)),
        Some(own) => own,
        None => policy.restart,
    };
    Ok(Project {
        name: project.name,
        dir: project.dir,
        workspace: project.workspace,
        autoplan: project.autoplan,
        when_modified: project.when_modified,
        apply_requirements,
        restart,
        options: defaults.merge(project.options, index, policy)?,
        workflow: super::workflow_rules::pick(project.workflow.as_deref(), workflows, policy),
    })
}

fn split_excluded(projects: Vec<Project>, policy: &RepoPolicy) -> (Vec<Project>, Vec<Excluded>) {
    let mut managed = Vec::new();
    let mut excluded = Vec::new();
    for project in projects {
        match policy.excluded_by(&project.dir) {
            Some(pattern) => excluded.push(Excluded {
                pattern: pattern.to_owned(),
                project,
            }),
            None => managed.push(project),
        }
    }
    (managed, excluded)
}

/// Directories with Terraform configuration, and a warning for each one whose name atoll
/// refuses (it is skipped, not silently dropped).
fn scan_tree(tree: &[String]) -> (BTreeSet<RepoDir>, Vec<Warning>) {
    let mut dirs = BTreeSet::new();
    let mut refused = BTreeSet::new();
    for file in tree.iter().filter(|f| is_config_file(f)) {
        match parent_dir(file) {
            Some(dir) => {
                dirs.insert(dir);
            }
            None => {
                refused.insert(file.rsplit_once('/').map_or("", |(d, _)| d).to_owned());
            }
        }
    }
    const SHOWN: usize = 20;
    let mut warnings: Vec<Warning> = refused
        .iter()
        .take(SHOWN)
        .map(|dir| Warning {
            path: crate::commands::shown_value(dir),
            message: "holds Terraform files but atoll does not accept this directory name; it is \
                      skipped"
                .to_owned(),
        })
        .collect();
    if refused.len() > SHOWN {
        warnings.push(Warning {
            path: "(repository)".to_owned(),
            message: format!(
                "{} more directories with refused names are skipped",
                refused.len() - SHOWN
            ),
        });
    }
    (dirs, warnings)
}

/// Every directory that exists in the head commit (`.` included), as normalised text.
fn existing_dirs(tree: &[String]) -> HashSet<String> {
    let mut dirs = HashSet::from([".".to_owned()]);
    for file in tree {
        let mut dir = parent_dir(file);
        while let Some(current) = dir {
            if !dirs.insert(current.as_str().to_owned()) {
                break;
            }
            dir = current.parent();
        }
    }
    dirs
}
