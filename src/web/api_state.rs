//! The state part of the API (`/api/state...`), what `atoll plan|apply|state --remote` calls:
//! read a scope's state and versions, take and release the project's lock for a run of the
//! command line (the same lock a pull request takes), and write state only while holding it.
//! The scope comes in query parameters (`repo`, `dir`, `workspace`), validated here as the
//! lock key's names are.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::WebState;
use crate::commands::{RepoDir, Workspace};
use crate::http::AppError;
use crate::locks::{
    Acquisition, Actor, ActorVia, AuditStamp, LockKey, LockOwner, REMOTE_RUN, Release,
};
use crate::proxmox::state::StateHandle;
use crate::store::{ManagedResource, StateScope, VersionMeta, VersionReason};

pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/state", get(list))
        .route("/state/scopes", get(scopes))
        .route("/state/holders", get(holders))
        .route("/state/move", post(move_resources))
        .route("/state/resource", put(put_resource).delete(remove_resource))
        .route("/state/versions", get(versions).post(add_version))
        .route("/state/versions/{n}", get(version))
        .route("/state/lock", post(take_lock))
        .route("/state/lock/{id}", delete(release_lock))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_STATE_BODY))
}

/// The largest state write: one resource row (a VM's attributes, a generated key) or a list of
/// moves. Larger than the dashboard's forms, so a remote apply never loses a row it made.
const MAX_STATE_BODY: usize = 8 * 1024 * 1024;

/// The scope and lock key named by `repo`, `dir` and `workspace`.
fn scope_of(q: &HashMap<String, String>) -> Result<(StateScope, LockKey), AppError> {
    let field = |name: &str| {
        q.get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                AppError::BadRequest(format!(
                    "{name} is missing: send repo (host/owner/repo), dir and workspace"
                ))
            })
    };
    let repo = field("repo")?;
    let dir =
        RepoDir::parse(&field("dir")?).map_err(|e| AppError::BadRequest(format!("dir: {e}")))?;
    let workspace = Workspace::parse(&field("workspace")?)
        .map_err(|e| AppError::BadRequest(format!("workspace: {e}")))?;
    let scope = StateScope {
        repo: repo.clone(),
        project_dir: dir.as_str().to_owned(),
        workspace: workspace.as_str().to_owned(),
    };
    let key = LockKey {
        repo,
        dir,
        workspace,
        project: None,
    };
    Ok((scope, key))
}

/// The remote run's lock named by `lock`, checked against `key`: a write without it is refused.
async fn holding(
    state: &WebState,
    q: &HashMap<String, String>,
    key: &LockKey,
) -> Result<(), AppError> {
    let refused = |why: &str| {
        AppError::Conflict(format!(
            "{why}: state of {key} is written only under the lock a remote run takes \
             (POST /api/state/lock); run atoll apply --remote again"
        ))
    };
    let id = q
        .get("lock")
        .and_then(|id| Uuid::parse_str(id).ok())
        .ok_or_else(|| refused("no lock given"))?;
    let lock = state.store.locks().lock_get(id).await?;
    match lock {
        Some(lock)
            if lock.owner.pr == REMOTE_RUN
                && lock.key.repo == key.repo
                && lock.key.dir == key.dir
                && lock.key.workspace == key.workspace =>
        {
            Ok(())
        }
        Some(_) => Err(refused("that lock is not this project's remote-run lock")),
        None => Err(refused(
            "that lock is not held (it was released or never taken)",
        )),
    }
}

async fn list(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let (scope, _) = scope_of(&q)?;
    let rows = state.store.state().state_list(&scope).await?;
    let rows: Vec<_> = rows.iter().map(ManagedResource::to_wire).collect();
    Ok(Json(json!({ "resources": rows })).into_response())
}

/// Which projects hold a guest with `vm_id` (`?vm_id=N`): a remote plan's ownership check.
async fn holders(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let vm_id: u32 = q
        .get("vm_id")
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| AppError::BadRequest("vm_id is missing or not a number".to_owned()))?;
    let held: Vec<_> = state
        .store
        .state()
        .state_holders(vm_id)
        .await?
        .into_iter()
        .map(|h| {
            json!({
                "repo": h.scope.repo,
                "dir": h.scope.project_dir,
                "workspace": h.scope.workspace,
                "address": h.address,
                "node": h.node,
            })
        })
        .collect();
    Ok(Json(json!({ "holders": held })).into_response())
}

async fn scopes(State(state): State<WebState>) -> Result<Response, AppError> {
    let scopes: Vec<_> = state
        .store
        .state()
        .state_scopes()
        .await?
        .into_iter()
        .map(|s| json!({"repo": s.repo, "dir": s.project_dir, "workspace": s.workspace}))
        .collect();
    Ok(Json(json!({ "scopes": scopes })).into_response())
}

async fn put_resource(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
    Json(body): Json<serde_json::Value>,
) -> Result<Response, AppError> {
    let (scope, key) = scope_of(&q)?;
    holding(&state, &q, &key).await?;
    let row = ManagedResource::from_wire(body)
        .map_err(|e| AppError::BadRequest(format!("the resource row: {e}")))?;
    state.store.state().state_put(&scope, &row).await?;
    Ok(Json(json!({ "ok": true })).into_response())
}

/// Renames addresses (`{"moves": [["from", "to"], ...]}`) in one transaction, under the lock.
async fn move_resources(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
    Json(body): Json<serde_json::Value>,
) -> Result<Response, AppError> {
    let (scope, key) = scope_of(&q)?;
    holding(&state, &q, &key).await?;
    let moves: Vec<(String, String)> = serde_json::from_value(body["moves"].clone())
        .map_err(|e| AppError::BadRequest(format!("moves: {e}; send [[from, to], ...]")))?;
    state.store.state().state_move(&scope, &moves).await?;
    Ok(Json(json!({ "ok": true })).into_response())
}

async fn remove_resource(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let (scope, key) = scope_of(&q)?;
    holding(&state, &q, &key).await?;
    let address = q
        .get("address")
        .ok_or_else(|| AppError::BadRequest("address is missing".to_owned()))?;
    let removed = state.store.state().state_remove(&scope, address).await?;
    Ok(Json(json!({ "removed": removed })).into_response())
}

async fn versions(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let (scope, _) = scope_of(&q)?;
    let versions = state.store.state().state_versions(&scope).await?;
    Ok(Json(json!({ "versions": versions })).into_response())
}

async fn version(
    State(state): State<WebState>,
    Path(n): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let (scope, _) = scope_of(&q)?;
    let no_such = || {
        AppError::NotFound(format!(
            "{} ({}) has no state version {n}; list them with atoll state versions",
            scope.project_dir, scope.workspace
        ))
    };
    let n: u32 = n.parse().map_err(|_| no_such())?;
    let version = state
        .store
        .state()
        .state_version(&scope, n)
        .await?
        .ok_or_else(no_such)?;
    Ok(Json(json!({ "version": version })).into_response())
}

#[derive(Debug, Deserialize)]
struct NewVersion {
    actor: String,
    commit: Option<String>,
}

/// A remote apply ended: the server snapshots its own rows (the client's word is only who
/// and from which commit).
async fn add_version(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
    Json(body): Json<NewVersion>,
) -> Result<Response, AppError> {
    let (scope, key) = scope_of(&q)?;
    holding(&state, &q, &key).await?;
    let meta = VersionMeta {
        actor: short(&body.actor),
        reason: VersionReason::RemoteApply,
        job: None,
        commit: body.commit.as_deref().map(short),
    };
    let handle = StateHandle::new(state.store.clone(), scope);
    let version = handle
        .record_version(&meta)
        .await
        .map_err(|e| AppError::Internal(e.to_string()))?;
    Ok(Json(json!({ "version": version })).into_response())
}

fn short(text: &str) -> String {
    text.chars().take(200).collect()
}

#[derive(Debug, Deserialize)]
struct TakeLock {
    repo: String,
    dir: String,
    workspace: String,
    actor: String,
}

/// Takes the project's lock for a remote run: 200 with the lock, or 409 with the locks in the
/// way (who holds them), so the client can say who and wait.
async fn take_lock(
    State(state): State<WebState>,
    Json(body): Json<TakeLock>,
) -> Result<Response, AppError> {
    let q = HashMap::from([
        ("repo".to_owned(), body.repo),
        ("dir".to_owned(), body.dir),
        ("workspace".to_owned(), body.workspace),
    ]);
    let (_, key) = scope_of(&q)?;
    let actor = short(&body.actor);
    let owner = LockOwner {
        pr: REMOTE_RUN,
        pr_url: String::new(),
        head_sha: String::new(),
        user: actor,
        job: None,
        summary: "held by a run of atoll --remote".to_owned(),
        forge: None,
    };
    match state
        .store
        .locks()
        .lock_acquire_remote(&key, &owner)
        .await?
    {
        Acquisition::Granted(locks) => Ok(Json(json!({ "lock": locks.first() })).into_response()),
        Acquisition::Conflict(held) => Ok((
            axum::http::StatusCode::CONFLICT,
            Json(json!({ "error": format!("{key} is locked"), "held_by": held })),
        )
            .into_response()),
    }
}

async fn release_lock(
    State(state): State<WebState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let no_such = || AppError::NotFound("no remote-run lock has this id".to_owned());
    let id = super::path_id(&id).ok_or_else(no_such)?;
    let lock = state
        .store
        .locks()
        .lock_get(id)
        .await?
        .ok_or_else(no_such)?;
    if lock.owner.pr != REMOTE_RUN {
        return Err(AppError::Conflict(format!(
            "{} is held by pull request #{}, not by a remote run; unlock it from the dashboard",
            lock.key, lock.owner.pr
        )));
    }
    let stamp = AuditStamp {
        actor: Actor::new(lock.owner.user.clone(), ActorVia::Api),
        detail: "remote run ended".to_owned(),
    };
    state
        .store
        .locks()
        .lock_release(&Release::Id(id), &stamp)
        .await?;
    Ok(Json(json!({ "released": true })).into_response())
}
