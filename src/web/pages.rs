//! Dashboard pages and their form posts. Every page needs a session (else 303 to `/login`);
//! every post needs the session's CSRF token (else 403).

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Form, FromRequestParts, Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde_json::json;
use tera::Context;

use super::auth::{self, Session};
use super::login;
use super::views::{self, JobView, LockView, page};
use super::{WebState, path_id};
use crate::http::AppError;
use crate::jobs::JobSpec;
use crate::locks::{Actor, ActorVia, AuditStamp, LockQuery, Release, UnlockAnnouncement};
use crate::store::JobState;

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

/// A signed-in user: a handler that takes one sends everyone else to the login (303).
pub(super) struct SignedIn(pub(super) Session);

impl FromRequestParts<WebState> for SignedIn {
    type Rejection = Redirect;

    async fn from_request_parts(parts: &mut Parts, state: &WebState) -> Result<Self, Redirect> {
        state
            .auth
            .session(&parts.headers)
            .await
            .map(Self)
            .ok_or_else(|| Redirect::to("/login"))
    }
}

/// Refuses a form post whose `csrf` field does not match the session.
pub(super) fn csrf(s: &Session, form: &HashMap<String, String>) -> Result<(), AppError> {
    match form.get("csrf") {
        Some(token) if auth::same(token, &s.csrf) => Ok(()),
        _ => Err(AppError::Forbidden(
            "Form expired: the form's security token is missing or does not match your \
             session. Reload the page and try again."
                .to_owned(),
        )),
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

async fn locks(State(state): State<WebState>, SignedIn(s): SignedIn) -> Result<Response, AppError> {
    let all = LockQuery::default();
    let (locks, switch) = tokio::try_join!(
        state.store.locks().lock_list(&all),
        state.store.audit().apply_switch()
    )?;
    let mut ctx = context(Some(&s), "Locks");
    ctx.insert(
        "locks",
        &locks.iter().map(LockView::from).collect::<Vec<_>>(),
    );
    ctx.insert("applies_enabled", &switch.enabled);
    Ok(page(&state.tera, "locks.html", &ctx))
}

async fn unlock_confirm(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let id = path_id(&id).ok_or_else(no_such_lock)?;
    let lock = state
        .store
        .locks()
        .lock_get(id)
        .await?
        .ok_or_else(no_such_lock)?;
    let mut ctx = context(Some(&s), "Unlock");
    ctx.insert("lock", &LockView::from(&lock));
    Ok(page(&state.tera, "unlock.html", &ctx))
}

fn no_such_lock() -> AppError {
    AppError::NotFound("No such lock: this lock is not held any more.".to_owned())
}

async fn unlock(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
    Form(form): Fields,
) -> Result<Response, AppError> {
    csrf(&s, &form)?;
    let id = path_id(&id).ok_or_else(no_such_lock)?;
    let actor = Actor::new(s.user.clone(), ActorVia::Dashboard);
    let stamp = AuditStamp {
        actor: actor.clone(),
        detail: "unlocked from the dashboard".to_owned(),
    };
    let released = state
        .store
        .locks()
        .lock_release(&Release::Id(id), &stamp)
        .await?;
    for lock in &released {
        let job = JobSpec::AnnounceUnlock(UnlockAnnouncement {
            actor: actor.clone(),
            lock: lock.clone(),
        })
        .to_new_job(None);
        if let Err(e) = state.store.enqueue(job).await {
            // The lock is released and audited; only the PR comment is lost. Say so.
            tracing::error!(error = %e, lock = %lock.key, "could not queue the unlock announcement");
            return Err(AppError::unavailable(
                "Unlocked, not announced: the lock was released and recorded in the audit log, \
                 but the comment on the pull request could not be queued.",
            ));
        }
    }
    if released.is_empty() {
        return Err(no_such_lock());
    }
    Ok(Redirect::to("/locks").into_response())
}

async fn jobs(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    let repo = q.get("repo").map(|r| r.trim()).filter(|r| !r.is_empty());
    let pr = q.get("pr").and_then(|p| p.trim().parse::<u64>().ok());
    let wanted = q.get("state").and_then(|st| JobState::parse(st.trim()));
    let all = state.store.list_jobs(JOBS_SCAN).await?;
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
    Ok(page(&state.tera, "jobs.html", &ctx))
}

async fn job(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let no_such_job = || AppError::NotFound("No such job: no job has this id.".to_owned());
    let id = path_id(&id).ok_or_else(no_such_job)?;
    let (job, log) = tokio::try_join!(state.store.get_job(id), state.store.job_log(id, 0))?;
    let job = job.ok_or_else(no_such_job)?;
    let mut ctx = context(Some(&s), "Job");
    ctx.insert("job", &JobView::from(&job));
    ctx.insert("log", &log);
    ctx.insert("last_seq", &log.last().map_or(0, |l| l.seq));
    Ok(page(&state.tera, "job.html", &ctx))
}

async fn apply_page(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
) -> Result<Response, AppError> {
    let (switch, events) = tokio::try_join!(
        state.store.audit().apply_switch(),
        state.store.audit().audit_list(AUDIT_SHOWN, None)
    )?;
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
    Ok(page(&state.tera, "apply.html", &ctx))
}

async fn apply_set(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    Form(form): Fields,
) -> Result<Response, AppError> {
    csrf(&s, &form)?;
    let enabled = match form.get("enabled").map(String::as_str) {
        Some("true") => true,
        Some("false") => false,
        _ => {
            return Err(AppError::BadRequest(
                "Choose to turn applies on or off.".to_owned(),
            ));
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
    state
        .store
        .audit()
        .set_apply_switch(enabled, &stamp)
        .await?;
    Ok(Redirect::to("/apply").into_response())
}
