//! Where a command's state comes from: this machine's store, or with `--remote` an atoll
//! server's API (taking the project's lock there for plan and apply), and what the command line
//! writes into it besides resources: the state version after an apply.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use secrecy::ExposeSecret;

use super::remote::Remote;
use super::remote_state::RemoteState;
use super::{Opened, ProjectArgs, RemoteArgs, scope, settings};
use crate::proxmox::state::StateHandle;

/// The server of `--remote` and the lock this run took there (none for reads).
#[derive(Debug, Clone)]
pub(super) struct Lease {
    pub(super) api: Arc<Remote>,
    pub(super) lock: Option<uuid::Uuid>,
}

/// Who runs this command, for locks and state versions.
fn actor() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "atoll-cli".to_owned())
}

/// The commit the checkout is at, when it is a git checkout (argv only, no shell).
fn commit_of(dir: &Path) -> Option<String> {
    let checkout = tfconfig::find_checkout(dir);
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&checkout)
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

/// Opens the project's state: this machine's store, or with `--remote` the server's (taking
/// the project's lock there first when `lock`, waiting while a pull request holds it).
pub(super) async fn open_with(
    project: &ProjectArgs,
    remote: &RemoteArgs,
    lock: bool,
) -> anyhow::Result<Opened> {
    let settings = settings::load(project.config.as_deref()).map_err(anyhow::Error::msg)?;
    let Some(api) = Remote::from_args(remote)? else {
        let store = crate::store::connect(settings.store_url.expose_secret())
            .await
            .context("opening the store (store.url)")?;
        let state = StateHandle::new(store, scope(project));
        return Ok(Opened {
            settings,
            state,
            remote: None,
        });
    };
    if project.repo == "local" {
        bail!(
            "--remote needs the repository the server keeps this project's state under: add \
             --repo host/owner/repo (as its pull requests name it, e.g. github.com/acme/infra)"
        );
    }
    let api = Arc::new(api);
    let mut scope = scope(project);
    if scope.project_dir.is_empty() {
        // the server names the root directory as a pull request's lock does
        scope.project_dir = ".".to_owned();
    }
    let lock = if lock {
        let who = format!("{} (atoll --remote)", actor());
        Some(api.take_lock(&scope, &who, remote.lock_timeout).await?)
    } else {
        None
    };
    let store = RemoteState {
        remote: Arc::clone(&api),
        lock,
    };
    Ok(Opened {
        settings,
        state: StateHandle::over(Arc::new(store), scope),
        remote: Some(Lease { api, lock }),
    })
}

/// Writes a state version after an apply: on the server for `--remote`, else in this store.
pub(super) async fn record_version(opened: &Opened, dir: &Path) {
    let reason = if opened.remote.is_some() {
        crate::store::VersionReason::RemoteApply
    } else {
        crate::store::VersionReason::Apply
    };
    record_change(opened, dir, reason).await;
}

/// Writes a state version after a change of state made by `reason` (`atoll state mv|rm`,
/// `atoll state import-terraform`).
pub(super) async fn record_change(
    opened: &Opened,
    dir: &Path,
    reason: crate::store::VersionReason,
) {
    let meta = crate::store::VersionMeta {
        actor: actor(),
        reason,
        job: None,
        commit: commit_of(dir),
    };
    match opened.state.record_version(&meta).await {
        Ok(n) => eprintln!("State version {n} written."),
        Err(e) => eprintln!("Warning: the state version could not be written: {e}"),
    }
}

/// State version `n` of the opened scope, or an error naming the versions there are.
pub(super) async fn shown_version(
    state: &StateHandle,
    n: u32,
) -> anyhow::Result<crate::proxmox::state::ShownVersion> {
    match state.version(n).await? {
        Some(shown) => Ok(shown),
        None => bail!(
            "{} (workspace {}) has no state version {n}; list them with `atoll state versions`",
            state.scope().project_dir,
            state.scope().workspace
        ),
    }
}
