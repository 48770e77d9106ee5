//! Steps shared by plan and apply: check out the PR head, resolve its projects, and run the
//! proxmox pipeline for one project.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, anyhow};
use secrecy::SecretString;

use super::{Job, Runner};
use crate::commands::{RepoDir, Workspace};
use crate::config::LimitsSettings;
use crate::forge::{PrState, PullDetails};
use crate::locks::LockKey;
use crate::proxmox::engine::{Engine, Prepared};
use crate::proxmox::state::StateHandle;
use crate::render::pr::Unmet;
use crate::repocfg::{self, Inputs, Project, Resolution, Warning};
use crate::store::StateScope;
use crate::workdir::modules::ForgeHost;
use crate::workdir::{Checkout, PrCheckout};
use model::ForgeKind;
use tfconfig::Input;
use tfconfig::checkout::{self, ReadError};

/// The PR as the forge reports it now, refusing closed ones.
pub(super) async fn open_pull(job: &Job) -> anyhow::Result<PullDetails> {
    let pull = job
        .forge
        .pull_request(&job.name, job.pr.number)
        .await
        .context("reading the pull request")?;
    if pull.state != PrState::Open {
        return Err(anyhow!(
            "pull request #{} is no longer open; reopen it to plan or apply",
            pull.number
        ));
    }
    Ok(pull)
}

/// The forge's credentials for git (kept out of argv and URLs by `workdir`).
async fn git_auth(job: &Job) -> anyhow::Result<Option<SecretString>> {
    job.forge
        .git_auth_header()
        .await
        .context("getting git credentials")
}

/// What `workdir` needs to fetch this PR's head.
fn pr_checkout<'a>(
    job: &'a Job,
    pull: &'a PullDetails,
    auth: Option<&'a SecretString>,
) -> PrCheckout<'a> {
    PrCheckout {
        host: job.host(),
        repo: &job.name,
        number: pull.number,
        clone_url: &pull.clone_url,
        sha: &pull.head_sha,
        auth_header: auth,
    }
}

/// Step "checkout": the PR head in its per-PR directory.
pub(super) async fn checkout(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
) -> anyhow::Result<Checkout> {
    job.step(&format!("checkout {}", pull.head_sha.as_str()))
        .await;
    let auth = git_auth(job).await?;
    let req = pr_checkout(job, pull, auth.as_ref());
    Ok(r.workdir.checkout(&req).await?)
}

/// The `undiverged` requirement: `None` when the PR head contains the base branch's current
/// head (checked with git in the PR's checkout).
pub(super) async fn undiverged(
    r: &Runner,
    job: &Job,
    pull: &PullDetails,
) -> anyhow::Result<Option<Unmet>> {
    job.step(&format!("undiverged: is {} in the head", pull.base_ref))
        .await;
    let auth = git_auth(job).await?;
    let req = pr_checkout(job, pull, auth.as_ref());
    let contains = r
        .workdir
        .contains_base(&req, &pull.base_clone_url, &pull.base_ref)
        .await
        .with_context(|| {
            format!(
                "checking whether the pull request contains {}",
                pull.base_ref
            )
        })?;
    Ok((!contains).then(|| Unmet::Diverged {
        base: pull.base_ref.clone(),
    }))
}

/// Step "select projects": atlantis.yaml (or discovery) against the changed files, for a PR
/// into `base_ref` (the base branch as the forge reports it now: a project's `branch` filter
/// matches it).
pub(super) async fn resolve(
    r: &Runner,
    job: &Job,
    root: &Path,
    base_ref: &str,
) -> anyhow::Result<Resolution> {
    job.step("select projects").await;
    let files = job
        .forge
        .changed_files(&job.name, job.pr.number)
        .await
        .context("listing the changed files")?;
    let mut changed = Vec::new();
    for f in files {
        changed.extend(f.previous_path);
        changed.push(f.path);
    }
    let (co, limits) = (root.to_path_buf(), r.limits);
    let (tree, yaml) = tokio::task::spawn_blocking(move || read_checkout(&co, &limits))
        .await
        .context("listing the checkout")??;
    let inputs = Inputs {
        atlantis_yaml: yaml.as_deref(),
        tree: &tree,
        changed: &changed,
        module_uses: &[],
    };
    let mut resolution = resolve_now(r, job, inputs, base_ref)?;
    let dirs = resolution.discovered_dirs();
    if !dirs.is_empty() {
        let (co, limits) = (root.to_path_buf(), r.limits.tfconfig());
        let named = tokio::task::spawn_blocking(move || cloud_workspaces(&co, dirs, &limits))
            .await
            .context("reading the projects' cloud blocks")?;
        let mut names = BTreeMap::new();
        for (dir, name) in named {
            match Workspace::parse(&name) {
                Ok(workspace) => {
                    names.insert(dir, workspace);
                }
                Err(e) => resolution.warnings.push(Warning {
                    path: format!("{dir} (terraform.cloud.workspaces.name)"),
                    message: format!(
                        "the workspace `{}` is not used: {e}; the project runs in the \
                         default workspace",
                        model::shown_value(&name)
                    ),
                }),
            }
        }
        resolution.use_cloud_workspaces(&names);
    }
    Ok(resolution)
}

/// The workspace names of the `cloud` blocks of the discovered projects in `dirs`
/// (`tfconfig::cloud_workspace`), as written.
fn cloud_workspaces(
    root: &Path,
    dirs: Vec<RepoDir>,
    limits: &tfconfig::Limits,
) -> Vec<(RepoDir, String)> {
    dirs.into_iter()
        .filter_map(|dir| {
            let input = Input {
                checkout: root.to_path_buf(),
                project_dir: if dir.is_root() {
                    PathBuf::new()
                } else {
                    PathBuf::from(dir.as_str())
                },
                workspace: Workspace::default().as_str().to_owned(),
                vars: Vec::new(),
                limits: limits.clone(),
                modules: Default::default(),
            };
            tfconfig::cloud_workspace(&input).map(|name| (dir, name))
        })
        .collect()
}

fn resolve_now(
    r: &Runner,
    job: &Job,
    inputs: Inputs<'_>,
    base_ref: &str,
) -> anyhow::Result<Resolution> {
    let policy = r.rules.policy_for(&job.repo());
    Ok(repocfg::resolve_on_base(inputs, Some(base_ref), &policy)?)
}

/// The checkout's files and its `atlantis.yaml` (`None` when there is none), both bounded.
fn read_checkout(
    root: &Path,
    limits: &LimitsSettings,
) -> anyhow::Result<(Vec<String>, Option<String>)> {
    let root = root.canonicalize().context("opening the checkout")?;
    let yaml = repo_config(&root, limits.repo_config_bytes)?;
    let tree = list_tree(&root, limits.checkout_files)?;
    Ok((tree, yaml))
}

/// `atlantis.yaml`, read only as a regular file inside the checkout and through its byte cap;
/// a refusal names the file, why, the limit and its setting.
fn repo_config(root: &Path, limit: u64) -> anyhow::Result<Option<String>> {
    const NAME: &str = "atlantis.yaml";
    const SETTING: &str = "limits.repo_config_bytes";
    let why = match checkout::read_confined_text(root, Path::new(NAME), limit, SETTING) {
        Ok(text) => return Ok(Some(text)),
        // A link to nothing is not "no atlantis.yaml": it would change which projects run.
        Err(ReadError::NotFound) if std::fs::symlink_metadata(root.join(NAME)).is_ok() => {
            "it is a symbolic link to a file that does not exist".to_owned()
        }
        Err(ReadError::NotFound) => return Ok(None),
        Err(e) => e.to_string(),
    };
    Err(anyhow!(
        "{NAME} was not read: {why}. atoll reads {NAME} only as a regular file inside the repository, of at most {} (server setting {SETTING}); commit it as one",
        checkout::size(limit)
    ))
}

/// Every file in the checkout, repository-relative with `/`, `.git` skipped; links are listed,
/// never followed. Refused past `max` files and directories.
fn list_tree(root: &Path, max: usize) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > max {
                return Err(anyhow!(
                    "the checkout has more than {max} files and directories, the most atoll lists to select projects (server setting limits.checkout_files); split the repository or raise the limit"
                ));
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if let Ok(rel) = path.strip_prefix(root) {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The lock key of a project.
pub(super) fn lock_key(job: &Job, p: &Project) -> LockKey {
    LockKey {
        repo: job.repo(),
        dir: p.dir.clone(),
        workspace: p.workspace.clone(),
        project: p.name.clone(),
    }
}

/// The PR's web address (for lock owners and conflict comments).
pub(super) fn pr_url(job: &Job) -> String {
    let path = match job.pr.forge {
        ForgeKind::Github => "pull",
        ForgeKind::Gitea => "pulls",
    };
    format!(
        "https://{}/{}/{}/{path}/{}",
        job.host(),
        job.name.owner(),
        job.name.name(),
        job.pr.number
    )
}

/// A project's state handle and loader input.
pub(super) fn project_io(r: &Runner, job: &Job, root: &Path, p: &Project) -> (StateHandle, Input) {
    let scope = StateScope {
        repo: job.repo(),
        project_dir: p.dir.as_str().to_owned(),
        workspace: p.workspace.as_str().to_owned(),
    };
    let dir = if p.dir.is_root() {
        PathBuf::new()
    } else {
        PathBuf::from(p.dir.as_str())
    };
    let input = Input {
        checkout: root.to_path_buf(),
        project_dir: dir,
        workspace: p.workspace.as_str().to_owned(),
        vars: Vec::new(),
        limits: r.limits.tfconfig(),
        modules: Default::default(),
    };
    (
        StateHandle::new(std::sync::Arc::clone(&r.store), scope),
        input,
    )
}

/// Install the remote modules, then load, refresh, plan and guard one project. `input` gets
/// the installed modules (apply's `settle` loads it again).
pub(super) async fn prepare(
    r: &Runner,
    job: &Job,
    state: &StateHandle,
    input: &mut Input,
    head_sha: &str,
    options: &model::PlanOptions,
) -> anyhow::Result<Prepared> {
    let auth = git_auth(job).await?;
    let forge = ForgeHost {
        host: job.host(),
        owner: job.name.owner(),
        auth_header: auth.as_ref(),
    };
    r.modules.install(input, Some(forge)).await;
    input.vars = crate::proxmox::engine::input_vars(
        &input.checkout,
        &input.project_dir,
        &options.vars,
        input.limits.file_bytes,
    )?;
    let mut prepared = engine(r)?.prepare_with(state, input, options).await?;
    head_sha.clone_into(&mut prepared.plan.source.sha);
    Ok(prepared)
}

/// Most characters of outputs an apply comment shows (GitHub takes 65,536 per comment, and the
/// comment also lists every guest).
const MAX_OUTPUT_CHARS: usize = 16_000;

/// The root module's outputs after an apply, rendered (`name = value` lines, secrets
/// `<sensitive>`), evaluated with the state the apply left and the data sources the plan read; empty when there are none or when
/// they cannot be evaluated (the apply's own result stands; the reason goes to the log).
pub(super) async fn outputs(
    state: &StateHandle,
    input: &Input,
    data: &tfconfig::Known,
) -> (String, String) {
    let evaluated = async {
        let now = state.load().await?;
        let (input, data) = (input.clone(), data.clone());
        let desired = tokio::task::spawn_blocking(move || {
            crate::proxmox::engine::load_desired_with(&input, &now, &data)
        })
        .await??;
        anyhow::Ok((desired.outputs, desired.warnings))
    };
    match evaluated.await {
        Ok((outputs, warnings)) => (
            crate::render::outputs_text_capped(&outputs, MAX_OUTPUT_CHARS),
            crate::render::checks_after_apply(&warnings),
        ),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "outputs after the apply could not be evaluated");
            (String::new(), String::new())
        }
    }
}

/// The engine, or the next step when no Proxmox endpoint is configured.
pub(super) fn engine(r: &Runner) -> anyhow::Result<&Engine> {
    r.engine.as_ref().ok_or_else(|| {
        anyhow!(
            "no Proxmox VE endpoint configured: set proxmox.endpoint and proxmox.api_token in the server config"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        (dir, root)
    }

    fn refusal(root: &Path, limit: u64) -> String {
        match repo_config(root, limit) {
            Ok(yaml) => panic!("read: {yaml:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn atlantis_yaml_is_read_when_it_is_a_regular_file_within_the_cap() {
        let (_dir, root) = checkout();
        assert_eq!(repo_config(&root, 1024).ok(), Some(None));
        std::fs::write(root.join("atlantis.yaml"), "version: 3\n").expect("write");
        assert_eq!(
            repo_config(&root, 1024).ok().flatten().as_deref(),
            Some("version: 3\n")
        );
    }

    #[test]
    fn atlantis_yaml_over_the_cap_fifo_or_dangling_link_is_refused_with_the_setting() {
        let (_dir, root) = checkout();
        std::fs::write(root.join("atlantis.yaml"), "x".repeat(2048)).expect("write");
        let why = refusal(&root, 1024);
        assert!(why.contains("larger than 1 KiB"), "{why}");
        assert!(why.contains("limits.repo_config_bytes"), "{why}");
        std::fs::remove_file(root.join("atlantis.yaml")).expect("rm");
        let fifo = std::process::Command::new("mkfifo")
            .arg(root.join("atlantis.yaml"))
            .status()
            .expect("mkfifo");
        assert!(fifo.success());
        assert!(refusal(&root, 1024).contains("not a regular file"));
        std::fs::remove_file(root.join("atlantis.yaml")).expect("rm");
        std::os::unix::fs::symlink("missing.yaml", root.join("atlantis.yaml")).expect("link");
        assert!(refusal(&root, 1024).contains("does not exist"));
    }

    #[test]
    fn a_checkout_with_more_files_than_the_limit_is_refused() {
        let (_dir, root) = checkout();
        for i in 0..5 {
            std::fs::write(root.join(format!("f{i}")), "").expect("write");
        }
        assert_eq!(list_tree(&root, 10).map(|t| t.len()).ok(), Some(5));
        let why = list_tree(&root, 4).err().map(|e| e.to_string());
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("limits.checkout_files")),
            "{why:?}"
        );
    }
}
