//! Dashboard pages and their form posts. Every page needs a session (else 303 to `/login`);
//! every post needs the session's CSRF token (else 403).

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde_json::json;
use tera::Context;

use super::auth::{self, Session};
use super::login;
use super::views::{self, JobView, LockView, page};
use super::{WebState, path_id};
use crate::jobs::JobSpec;
use crate::locks::{Actor, ActorVia, AuditStamp, LockQuery, Release, UnlockAnnouncement};
use crate::store::{JobState, StoreError};

pub(super) type Fields = Form<HashMap<String, String>>;

/// How many recent jobs the jobs page reads before filtering.
pub(super) const JOBS_SCAN: u32 = 2_000;
/// Audit events shown under the apply switch.
const AUDIT_SHOWN: u32 = 20;
/// Rows shown on the jobs page.
const JOBS_SHOWN: usize = 200;

pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/locks") }))
        .route("/login", get(login::login_form).post(login::login))
        .route("/logout", axum::routing::post(login::logout))
        .route("/locks", get(locks))
        .route("/locks/{id}/unlock", get(unlock_confirm).post(unlock))
        .route("/jobs", get(jobs))
        .route("/jobs/{id}", get(job))
        .route("/apply", get(apply_page).post(apply_set))
        .route("/protect", get(super::protect::protect))
}

/// The session, or the response to send instead (a redirect to the login).
pub(super) async fn session(
    state: &WebState,
    headers: &HeaderMap,
) -> Result<Session, Box<Response>> {
    state
        .auth
        .session(headers)
        .await
        .ok_or_else(|| Box::new(Redirect::to("/login").into_response()))
}

/// The session of a form post whose `csrf` field matches it.
pub(super) async fn checked(
    state: &WebState,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<Session, Box<Response>> {
    let s = session(state, headers).await?;
    match form.get("csrf") {
        Some(token) if auth::same(token, &s.csrf) => Ok(s),
        _ => Err(Box::new(message(
            state,
            StatusCode::FORBIDDEN,
            "Form expired",
            "The form's security token is missing or does not match your session. Reload the page and try again.",
            Some(&s),
        ))),
    }
}

pub(super) fn context(s: Option<&Session>, title: &str) -> Context {
    let mut ctx = Context::new();
    ctx.insert("title", title);
    ctx.insert("user", &s.map(|s| s.user.clone()));
    ctx.insert("csrf", &s.map(|s| s.csrf.clone()));
    ctx.insert("request_id", &crate::http::request_id());
    ctx
}

pub(super) fn message(
    state: &WebState,
    status: StatusCode,
    title: &str,
    text: &str,
    s: Option<&Session>,
) -> Response {
    let mut ctx = context(s, title);
    ctx.insert("message", text);
    let mut r = page(&state.tera, "message.html", &ctx);
    *r.status_mut() = status;
    r
}

pub(super) fn store_down(state: &WebState, e: &StoreError, s: &Session) -> Response {
    tracing::warn!(error = %e, "dashboard: store error");
    let (status, text) = match e {
        StoreError::NotFound(_) => (
            StatusCode::NOT_FOUND,
            "That item does not exist (any more).",
        ),
        _ => (
            StatusCode::SERVICE_UNAVAILABLE,
            "The store did not answer; try again in a moment. Details are in the server log.",
        ),
    };
    message(state, status, "Unavailable", text, Some(s))
}

async fn locks(State(state): State<WebState>, headers: HeaderMap) -> Response {
    let s = match session(&state, &headers).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let all = LockQuery::default();
    let (locks, switch) = match tokio::try_join!(
        state.store.locks().lock_list(&all),
        state.store.audit().apply_switch()
    ) {
        Ok(v) => v,
        Err(e) => return store_down(&state, &e, &s),
    };
    let mut ctx = context(Some(&s), "Locks");
    ctx.insert(
        "locks",
        &locks.iter().map(LockView::from).collect::<Vec<_>>(),
    );
    ctx.insert("applies_enabled", &switch.enabled);
    page(&state.tera, "locks.html", &ctx)
}

async fn unlock_confirm(
    State(state): State<WebState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let s = match session(&state, &headers).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let Some(id) = path_id(&id) else {
        return no_such_lock(&state, &s);
    };
    match state.store.locks().lock_get(id).await {
        Ok(Some(lock)) => {
            let mut ctx = context(Some(&s), "Unlock");
            ctx.insert("lock", &LockView::from(&lock));
            page(&state.tera, "unlock.html", &ctx)
        }
        Ok(None) => no_such_lock(&state, &s),
        Err(e) => store_down(&state, &e, &s),
    }
}

fn no_such_lock(state: &WebState, s: &Session) -> Response {
    message(
        state,
        StatusCode::NOT_FOUND,
        "No such lock",
        "This lock is not held any more.",
        Some(s),
    )
}

async fn unlock(
    State(state): State<WebState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Fields,
) -> Response {
    let s = match checked(&state, &headers, &form).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let Some(id) = path_id(&id) else {
        return no_such_lock(&state, &s);
    };
    let actor = Actor::new(s.user.clone(), ActorVia::Dashboard);
    let stamp = AuditStamp {
        actor: actor.clone(),
        detail: "unlocked from the dashboard".to_owned(),
    };
    let released = match state
        .store
        .locks()
        .lock_release(&Release::Id(id), &stamp)
        .await
    {
        Ok(r) => r,
        Err(e) => return store_down(&state, &e, &s),
    };
    for lock in &released {
        let job = JobSpec::AnnounceUnlock(UnlockAnnouncement {
            actor: actor.clone(),
            lock: lock.clone(),
        })
        .to_new_job(None);
        if let Err(e) = state.store.enqueue(job).await {
            // The lock is released and audited; only the PR comment is lost. Say so.
            tracing::error!(error = %e, lock = %lock.key, "could not queue the unlock announcement");
            return message(
                &state,
                StatusCode::SERVICE_UNAVAILABLE,
                "Unlocked, not announced",
                "The lock was released and recorded in the audit log, but the comment on the pull request could not be queued.",
                Some(&s),
            );
        }
    }
    if released.is_empty() {
        return message(
            &state,
            StatusCode::NOT_FOUND,
            "No such lock",
            "This lock is not held any more.",
            Some(&s),
        );
    }
    Redirect::to("/locks").into_response()
}

async fn jobs(
    State(state): State<WebState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let s = match session(&state, &headers).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let repo = q.get("repo").map(|r| r.trim()).filter(|r| !r.is_empty());
    let pr = q.get("pr").and_then(|p| p.trim().parse::<u64>().ok());
    let wanted = q.get("state").and_then(|st| JobState::parse(st.trim()));
    let all = match state.store.list_jobs(JOBS_SCAN).await {
        Ok(j) => j,
        Err(e) => return store_down(&state, &e, &s),
    };
    let shown: Vec<JobView> = all
        .iter()
        .filter(|j| repo.is_none_or(|r| j.repo == r))
        .filter(|j| pr.is_none_or(|p| j.pr == Some(p)))
        .filter(|j| wanted.is_none_or(|w| j.state == w))
        .take(JOBS_SHOWN)
        .map(JobView::from)
        .collect();
    let mut ctx = context(Some(&s), "Jobs");
    ctx.insert("jobs", &shown);
    ctx.insert("f_repo", &repo.unwrap_or_default());
    ctx.insert("f_pr", &pr);
    ctx.insert("f_state", &wanted.map(|w| w.as_str()));
    ctx.insert(
        "states",
        &[
            "queued",
            "running",
            "applying",
            "succeeded",
            "failed",
            "interrupted",
            "cancelled",
        ],
    );
    page(&state.tera, "jobs.html", &ctx)
}

async fn job(
    State(state): State<WebState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let s = match session(&state, &headers).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let no_such_job = || {
        message(
            &state,
            StatusCode::NOT_FOUND,
            "No such job",
            "No job has this id.",
            Some(&s),
        )
    };
    let Some(id) = path_id(&id) else {
        return no_such_job();
    };
    let (job, log) = match tokio::try_join!(state.store.get_job(id), state.store.job_log(id, 0)) {
        Ok((Some(job), log)) => (job, log),
        Ok((None, _)) => return no_such_job(),
        Err(e) => return store_down(&state, &e, &s),
    };
    let mut ctx = context(Some(&s), "Job");
    ctx.insert("job", &JobView::from(&job));
    ctx.insert("log", &log);
    ctx.insert("last_seq", &log.last().map_or(0, |l| l.seq));
    page(&state.tera, "job.html", &ctx)
}

async fn apply_page(State(state): State<WebState>, headers: HeaderMap) -> Response {
    let s = match session(&state, &headers).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let (switch, events) = match tokio::try_join!(
        state.store.audit().apply_switch(),
        state.store.audit().audit_list(AUDIT_SHOWN, None)
    ) {
        Ok(v) => v,
        Err(e) => return store_down(&state, &e, &s),
    };
    let events: Vec<serde_json::Value> = events
        .iter()
        .map(|e| {
            json!({
                "at": views::when(e.at),
                "actor": e.actor.name,
                "via": e.actor.via.as_str(),
                "action": e.action.as_str().replace('_', " "),
                "target": e.target,
                "detail": e.detail,
            })
        })
        .collect();
    let mut ctx = context(Some(&s), "Apply switch");
    ctx.insert("enabled", &switch.enabled);
    ctx.insert(
        "changed_by",
        &switch
            .changed_by
            .as_ref()
            .map(|a| format!("{} (via {})", a.name, a.via.as_str())),
    );
    ctx.insert("changed_at", &switch.changed_at.map(views::when));
    ctx.insert("reason", &switch.reason);
    ctx.insert("events", &events);
    page(&state.tera, "apply.html", &ctx)
}

async fn apply_set(
    State(state): State<WebState>,
    headers: HeaderMap,
    Form(form): Fields,
) -> Response {
    let s = match checked(&state, &headers, &form).await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let enabled = match form.get("enabled").map(String::as_str) {
        Some("true") => true,
        Some("false") => false,
        _ => {
            return message(
                &state,
                StatusCode::BAD_REQUEST,
                "Bad request",
                "Choose to turn applies on or off.",
                Some(&s),
            );
        }
    };
    let reason = form
        .get("reason")
        .map(|r| r.trim())
        .filter(|r| !r.is_empty())
        .unwrap_or("no reason given");
    let stamp = AuditStamp {
        actor: Actor::new(s.user.clone(), ActorVia::Dashboard),
        detail: reason.chars().take(500).collect(),
    };
    match state.store.audit().set_apply_switch(enabled, &stamp).await {
        Ok(_) => Redirect::to("/apply").into_response(),
        Err(e) => store_down(&state, &e, &s),
    }
}
