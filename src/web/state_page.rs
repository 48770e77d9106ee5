//! The dashboard's state pages: `/state` lists every scope atoll keeps state for (repository,
//! project directory, workspace), and `/state/project?repo=…&dir=…&workspace=…` shows one:
//! its resources and its state versions (who, when, which job, which commit). Generated values
//! and sensitive attributes are never read here: only addresses, types and placements.

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Query, State};
use axum::response::Response;
use axum::routing::get;
use serde::Serialize;

use super::WebState;
use super::pages::{SignedIn, context};
use super::views::page;
use crate::http::AppError;
use crate::store::StateScope;

pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/state", get(scopes))
        .route("/state/project", get(project))
}

/// `/state/project?…` for a scope, every value percent-encoded (safe to print unescaped).
fn project_path(scope: &StateScope) -> String {
    let enc = |v: &str| {
        percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    format!(
        "/state/project?repo={}&amp;dir={}&amp;workspace={}",
        enc(&scope.repo),
        enc(&scope.project_dir),
        enc(&scope.workspace)
    )
}

#[derive(Serialize)]
struct ScopeView {
    repo: String,
    dir: String,
    workspace: String,
    page: String,
}

async fn scopes(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
) -> Result<Response, AppError> {
    let scopes = state.store.state().state_scopes().await?;
    let views: Vec<ScopeView> = scopes
        .iter()
        .map(|scope| ScopeView {
            page: project_path(scope),
            repo: scope.repo.clone(),
            dir: scope.project_dir.clone(),
            workspace: scope.workspace.clone(),
        })
        .collect();
    let mut ctx = context(Some(&s), "State");
    ctx.insert("scopes", &views);
    Ok(page(&state.tera, "state.html", &ctx))
}

#[derive(Serialize)]
struct ResourceView {
    address: String,
    resource_type: String,
    place: String,
}

#[derive(Serialize)]
struct VersionView {
    version: u32,
    created: String,
    reason: &'static str,
    actor: String,
    job: Option<String>,
    commit: Option<String>,
    resources: u32,
}

async fn project(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let field = |name: &str| {
        q.get(name).cloned().ok_or_else(|| {
            AppError::BadRequest(format!(
                "{name} is missing: open a project from the State page"
            ))
        })
    };
    let scope = StateScope {
        repo: field("repo")?,
        project_dir: field("dir")?,
        workspace: field("workspace")?,
    };
    let (rows, versions) = tokio::try_join!(
        state.store.state().state_list(&scope),
        state.store.state().state_versions(&scope)
    )?;
    let resources: Vec<ResourceView> = rows
        .iter()
        .map(|row| ResourceView {
            address: row.address.clone(),
            resource_type: row.resource_type.clone(),
            place: match (row.vm_id, &row.volid) {
                (Some(id), _) => format!("{} / {id}", row.node),
                (None, Some(volid)) => volid.clone(),
                (None, None) if row.node.is_empty() => "generated".to_owned(),
                (None, None) => row.node.clone(),
            },
        })
        .collect();
    let versions: Vec<VersionView> = versions
        .iter()
        .map(|v| VersionView {
            version: v.version,
            created: super::views::when(v.created_at),
            reason: v.meta.reason.as_str(),
            actor: v.meta.actor.clone(),
            job: v.meta.job.map(|j| j.to_string()),
            commit: v.meta.commit.clone(),
            resources: v.resources,
        })
        .collect();
    let mut ctx = context(Some(&s), "State");
    ctx.insert("repo", &scope.repo);
    ctx.insert("dir", &scope.project_dir);
    ctx.insert("workspace", &scope.workspace);
    ctx.insert("resources", &resources);
    ctx.insert("versions", &versions);
    Ok(page(&state.tera, "state_project.html", &ctx))
}
