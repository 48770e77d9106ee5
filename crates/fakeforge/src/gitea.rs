//! The fake Gitea: REST routes under `/api/v1` (`Authorization: token …`, `page`/`limit`
//! pagination with `X-Total-Count` and `Link`), and the webhook payloads Gitea sends, with its
//! event naming (`pull_request_sync`, `issue_comment` + `pull_request_comment`,
//! `pull_request_review_approved` / `_rejected`).

use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Shared;
use super::gate;
use super::gitea_payloads::{comment_json, pr_json, user};
use super::github::Actor;
use super::state::{FakeStatus, Fault, State as Mem};

type Shr = State<Arc<Shared>>;

/// Gitea's `[api] MAX_RESPONSE_ITEMS` default.
const MAX_RESPONSE_ITEMS: usize = 50;

pub(super) fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/repos/{o}/{r}/pulls/{n}", get(pull))
        .route("/repos/{o}/{r}/pulls/{n}/files", get(files))
        .route("/repos/{o}/{r}/pulls/{n}/reviews", get(reviews))
        .route("/repos/{o}/{r}/pulls/{n}/merge", post(merge_pull))
        .route("/repos/{o}/{r}/issues/{n}/comments", post(create_comment))
        .route(
            "/repos/{o}/{r}/issues/comments/{id}",
            get(get_comment).patch(edit_comment),
        )
        .route("/repos/{o}/{r}/issues/comments/{id}/reactions", post(react))
        .route("/repos/{o}/{r}/statuses/{sha}", post(status))
        .route(
            "/repos/{o}/{r}/collaborators/{user}/permission",
            get(permission),
        )
        .layer(middleware::from_fn_with_state(Arc::clone(&shared), auth));
    Router::new().nest("/api/v1", api).with_state(shared)
}

async fn auth(State(shared): Shr, mut req: Request, next: Next) -> Response {
    match gate(&shared, &req, &["token ", "Bearer "]) {
        Ok(user) => {
            req.extensions_mut().insert(Actor(user));
            next.run(req).await
        }
        Err(response) => *response,
    }
}

fn fault(f: &Fault) -> Response {
    let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        Json(json!({ "message": f.message, "url": "https://gitea.example/api/swagger" })),
    )
        .into_response()
}

fn full(o: &str, r: &str) -> String {
    format!("{o}/{r}")
}

async fn pull(State(shared): Shr, Path((o, r, n)): Path<(String, String, u64)>) -> Response {
    let st = shared.state();
    match st.pr(&full(&o, &r), n) {
        Ok(pr) => Json(pr_json(&shared, &st, &full(&o, &r), pr)).into_response(),
        Err(f) => fault(&f),
    }
}

#[derive(Deserialize)]
struct Paging {
    page: Option<usize>,
    limit: Option<usize>,
}

fn paged(shared: &Shared, path: &str, items: &[Value], q: &Paging) -> Response {
    let limit = q.limit.unwrap_or(30).clamp(1, MAX_RESPONSE_ITEMS);
    let page = q.page.unwrap_or(1).max(1);
    let (slice, more) = Mem::page(items, page, limit);
    let mut headers = HeaderMap::new();
    headers.insert("x-total-count", items.len().into());
    let link = |p: usize, rel: &str| {
        format!(
            "<http://{}/api/v1{path}?limit={limit}&page={p}>; rel=\"{rel}\"",
            shared.addr
        )
    };
    if more {
        let last = items.len().div_ceil(limit);
        if let Ok(v) = format!("{}, {}", link(page + 1, "next"), link(last, "last")).parse() {
            headers.insert("link", v);
        }
    }
    (headers, Json(Value::Array(slice))).into_response()
}

async fn files(
    State(shared): Shr,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Paging>,
) -> Response {
    let items: Vec<Value> = match shared.state().pr(&full(&o, &r), n) {
        Ok(pr) => pr.files.iter().map(|(f, prev)| {
            let status = if prev.is_some() { "renamed" } else { "changed" };
            json!({ "filename": f, "previous_filename": prev.clone().unwrap_or_default(), "status": status, "additions": 1, "deletions": 0, "changes": 1 })
        }).collect(),
        Err(f) => return fault(&f),
    };
    paged(
        &shared,
        &format!("/repos/{o}/{r}/pulls/{n}/files"),
        &items,
        &q,
    )
}

/// GitHub's state words as Gitea spells them.
fn gitea_state(state: &str) -> &'static str {
    match state {
        "APPROVED" => "APPROVED",
        "CHANGES_REQUESTED" => "REQUEST_CHANGES",
        _ => "COMMENT",
    }
}

async fn reviews(
    State(shared): Shr,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Paging>,
) -> Response {
    let full = full(&o, &r);
    let items: Vec<Value> = {
        let st = shared.state();
        match st.pr(&full, n) {
            Ok(pr) => pr.reviews.iter().map(|rv| {
                let official = st.permission(&full, &rv.user).is_ok_and(|p| matches!(p.as_str(), "write" | "admin" | "owner"));
                json!({ "id": rv.id, "user": user(&rv.user), "state": gitea_state(&rv.state), "body": "",
                        "commit_id": rv.commit_id, "stale": rv.stale, "official": official, "dismissed": rv.dismissed })
            }).collect(),
            Err(f) => return fault(&f),
        }
    };
    paged(
        &shared,
        &format!("/repos/{o}/{r}/pulls/{n}/reviews"),
        &items,
        &q,
    )
}

#[derive(Deserialize)]
struct BodyIn {
    body: String,
}

/// A 422 when a size limit is set and `body` exceeds it.
fn too_long(shared: &Shared, body: &str) -> Option<Response> {
    let max = shared.state().max_comment_chars?;
    (body.chars().count() > max).then(|| {
        fault(&Fault::new(
            422,
            format!("comment is longer than {max} characters"),
        ))
    })
}

async fn create_comment(
    State(shared): Shr,
    Extension(Actor(actor)): Extension<Actor>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Json(b): Json<BodyIn>,
) -> Response {
    if let Some(resp) = too_long(&shared, &b.body) {
        return resp;
    }
    let full = full(&o, &r);
    let made = shared.state().add_comment(&full, n, &actor, &b.body);
    match made {
        Ok(c) => (StatusCode::CREATED, Json(comment_json(&shared, &full, &c))).into_response(),
        Err(f) => fault(&f),
    }
}

async fn get_comment(
    State(shared): Shr,
    Path((o, r, id)): Path<(String, String, u64)>,
) -> Response {
    let full = full(&o, &r);
    let found = shared.state().comment_mut(&full, id).map(|c| c.clone());
    match found {
        Ok(c) => Json(comment_json(&shared, &full, &c)).into_response(),
        Err(f) => fault(&f),
    }
}

async fn edit_comment(
    State(shared): Shr,
    Path((o, r, id)): Path<(String, String, u64)>,
    Json(b): Json<BodyIn>,
) -> Response {
    if let Some(resp) = too_long(&shared, &b.body) {
        return resp;
    }
    let full = full(&o, &r);
    let edited = shared.state().edit_comment(&full, id, &b.body);
    match edited {
        Ok(c) => Json(comment_json(&shared, &full, &c)).into_response(),
        Err(f) => fault(&f),
    }
}

#[derive(Deserialize)]
struct ReactionIn {
    content: String,
}

/// Gitea's default `[ui] REACTIONS`.
const REACTIONS: [&str; 8] = [
    "+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes",
];

async fn react(
    State(shared): Shr,
    Extension(Actor(actor)): Extension<Actor>,
    Path((o, r, id)): Path<(String, String, u64)>,
    Json(b): Json<ReactionIn>,
) -> Response {
    if !REACTIONS.contains(&b.content.as_str()) {
        return fault(&Fault::new(
            403,
            format!("'{}' is not an allowed reaction", b.content),
        ));
    }
    let added = shared.state().react(&full(&o, &r), id, &actor, &b.content);
    match added {
        Ok(new) => {
            let code = if new {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            (
                code,
                Json(json!({ "user": user(&actor), "content": b.content })),
            )
                .into_response()
        }
        Err(f) => fault(&f),
    }
}

#[derive(Deserialize)]
struct StatusIn {
    state: String,
    context: Option<String>,
    description: Option<String>,
    target_url: Option<String>,
}

async fn status(
    State(shared): Shr,
    Path((o, r, sha)): Path<(String, String, String)>,
    Json(b): Json<StatusIn>,
) -> Response {
    let target_url = b.target_url.filter(|u| !u.is_empty());
    let s = FakeStatus {
        sha,
        context: b.context.unwrap_or_default(),
        state: b.state,
        description: b.description.unwrap_or_default(),
        target_url,
    };
    let body = json!({ "status": s.state, "context": s.context, "description": s.description, "target_url": s.target_url });
    match shared.state().add_status(&full(&o, &r), s) {
        Ok(()) => (StatusCode::CREATED, Json(body)).into_response(),
        Err(f) => fault(&f),
    }
}

/// Like Gitea: only a site or repository admin may read another user's permission.
async fn permission(
    State(shared): Shr,
    Extension(Actor(actor)): Extension<Actor>,
    Path((o, r, login)): Path<(String, String, String)>,
) -> Response {
    let full = full(&o, &r);
    let st = shared.state();
    let actor_is_admin = st
        .permission(&full, &actor)
        .is_ok_and(|p| matches!(p.as_str(), "admin" | "owner"));
    if !actor_is_admin && actor != login {
        return fault(&Fault::new(
            403,
            "Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own",
        ));
    }
    match st.permission(&full, &login) {
        Ok(p) => {
            Json(json!({ "permission": p, "role_name": p, "user": user(&login) })).into_response()
        }
        Err(f) => fault(&f),
    }
}

#[derive(Deserialize)]
struct MergeIn {
    #[serde(rename = "Do")]
    method: String,
    head_commit_id: Option<String>,
    #[serde(default)]
    delete_branch_after_merge: bool,
}

/// `POST /repos/{o}/{r}/pulls/{n}/merge`, with Gitea's answers (`routers/api/v1/repo/pull.go`
/// `MergePullRequest`): 200 with no body, 405 not mergeable, 409 head moved, 422 an unknown
/// `Do`. `delete_branch_after_merge` deletes the head branch.
async fn merge_pull(
    State(shared): Shr,
    Path((o, r, n)): Path<(String, String, u64)>,
    Json(b): Json<MergeIn>,
) -> Response {
    let ask = super::merge::MergeAsk {
        method: b.method,
        sha: b.head_commit_id.filter(|s| !s.is_empty()),
        delete_branch: b.delete_branch_after_merge,
    };
    match super::merge::merge(&shared, &full(&o, &r), n, &ask).await {
        Ok(_) => StatusCode::OK.into_response(),
        Err(refusal) => fault(&match refusal {
            super::merge::Refusal::Missing(f) => f,
            super::merge::Refusal::NotMergeable => Fault::new(405, "Please try again later"),
            super::merge::Refusal::HeadMoved => {
                Fault::new(409, "head out of date: the pull request has new commits")
            }
            super::merge::Refusal::BadMethod => {
                Fault::new(422, "[Do]: Must be a valid merge style")
            }
        }),
    }
}
