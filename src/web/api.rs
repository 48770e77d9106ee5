//! The JSON read API under `/api`, behind `Authorization: Bearer <api.token>` (compared in
//! constant time). Every path under `/api`, known or not, answers 401 without the token.

use std::collections::HashMap;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use secrecy::ExposeSecret;
use serde_json::json;

use super::WebState;
use super::auth::same;
use crate::http::AppError;
use crate::locks::LockQuery;
use crate::store::JobState;

const MAX_JOBS: u32 = 1_000;

pub(super) fn routes(state: WebState) -> Router<WebState> {
    Router::new()
        .route("/locks", get(locks))
        .route("/jobs", get(jobs))
        .route("/jobs/{id}", get(job))
        .route("/plans/{id}", get(plan))
        .merge(super::api_state::routes())
        .fallback(|| async { AppError::NotFound("no such API endpoint".to_owned()) })
        .layer(middleware::from_fn_with_state(state, bearer))
}

async fn bearer(State(state): State<WebState>, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let ok = match (&state.api_token, given) {
        (Some(token), Some(given)) => same(given.trim(), token.expose_secret()),
        _ => false,
    };
    if !ok {
        let why = if state.api_token.is_some() {
            "send Authorization: Bearer <api.token>"
        } else {
            "the API is closed: set api.token (or api.token_file) in the configuration"
        };
        let mut r = AppError::Unauthorized(why.to_owned()).into_response();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return r;
    }
    next.run(req).await
}

async fn locks(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let query = LockQuery {
        repo: q.get("repo").cloned(),
        pr: q.get("pr").and_then(|p| p.parse().ok()),
    };
    let locks = state.store.locks().lock_list(&query).await?;
    Ok(Json(json!({ "locks": locks })).into_response())
}

async fn jobs(
    State(state): State<WebState>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let wanted = match q.get("state") {
        Some(s) => match JobState::parse(s) {
            Some(st) => Some(st),
            None => {
                return Err(AppError::BadRequest(
                    "state must be one of queued, running, applying, succeeded, failed, \
                     interrupted, cancelled"
                        .to_owned(),
                ));
            }
        },
        None => None,
    };
    let pr = q.get("pr").and_then(|p| p.parse::<u64>().ok());
    let limit = q
        .get("limit")
        .and_then(|l| l.parse::<u32>().ok())
        .unwrap_or(100)
        .clamp(1, MAX_JOBS);
    let jobs: Vec<_> = state
        .store
        .list_jobs(MAX_JOBS)
        .await?
        .into_iter()
        .filter(|j| q.get("repo").is_none_or(|r| &j.repo == r))
        .filter(|j| pr.is_none_or(|p| j.pr == Some(p)))
        .filter(|j| wanted.is_none_or(|w| j.state == w))
        .take(limit as usize)
        .collect();
    Ok(Json(json!({ "jobs": jobs })).into_response())
}

async fn job(State(state): State<WebState>, Path(id): Path<String>) -> Result<Response, AppError> {
    let no_such_job = || AppError::NotFound("no job has this id".to_owned());
    let id = super::path_id(&id).ok_or_else(no_such_job)?;
    let (job, log) = tokio::try_join!(state.store.get_job(id), state.store.job_log(id, 0))?;
    let job = job.ok_or_else(no_such_job)?;
    Ok(Json(json!({ "job": job, "log": log })).into_response())
}

async fn plan(State(state): State<WebState>, Path(id): Path<String>) -> Result<Response, AppError> {
    let no_such_plan = || AppError::NotFound("no plan has this id".to_owned());
    let id = super::path_id(&id).ok_or_else(no_such_plan)?;
    let plan = state
        .store
        .plans()
        .plan_get(id)
        .await?
        .ok_or_else(no_such_plan)?;
    Ok(Json(json!({
            "id": plan.id,
            "repo": plan.key.repo,
            "dir": plan.key.dir.to_string(),
            "workspace": plan.key.workspace.to_string(),
            "pr": plan.pr,
            "job": plan.job,
            "superseded": plan.superseded_at.is_some(),
        "plan": plan.document,
    }))
    .into_response())
}
