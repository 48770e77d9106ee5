//! The fake GitHub: REST routes under `/api/v3` (the Enterprise layout), GraphQL
//! `minimizeComment` at `/api/graphql`, App installation tokens, and the webhook payloads
//! GitHub sends (`pull_request`, `issue_comment`, `pull_request_review`).

use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Shared;
use super::github_payloads::{comment_json, pr_json, review_json, user};
use super::state::{FakeStatus, Fault, State as Mem};
use super::{gate, lock};

/// The longest comment body GitHub accepts, in characters.
const DEFAULT_MAX_COMMENT_CHARS: usize = 65_536;

type Shr = State<Arc<Shared>>;

pub(super) fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/repos/{o}/{r}/pulls/{n}", get(pull))
        .route("/repos/{o}/{r}/pulls/{n}/files", get(files))
        .route("/repos/{o}/{r}/pulls/{n}/reviews", get(reviews))
        .route("/repos/{o}/{r}/pulls/{n}/merge", put(merge_pull))
        .route(
            "/repos/{o}/{r}/git/refs/heads/{*branch}",
            delete(delete_ref),
        )
        .route("/repos/{o}/{r}/issues/{n}/comments", post(create_comment))
        .route(
            "/repos/{o}/{r}/issues/comments/{id}",
            get(get_comment).patch(edit_comment).post(edit_comment),
        )
        .route("/repos/{o}/{r}/issues/comments/{id}/reactions", post(react))
        .route("/repos/{o}/{r}/statuses/{sha}", post(status))
        .route(
            "/repos/{o}/{r}/collaborators/{user}/permission",
            get(permission),
        )
        .layer(middleware::from_fn_with_state(Arc::clone(&shared), auth));
    Router::new()
        .nest("/api/v3", api)
        .route(
            "/api/v3/app/installations/{id}/access_tokens",
            post(access_token),
        )
        .route(
            "/api/graphql",
            post(graphql).layer(middleware::from_fn_with_state(Arc::clone(&shared), auth)),
        )
        .with_state(shared)
}

/// Logs the request, applies injected failures, and checks the token (`Bearer` or `token`).
async fn auth(State(shared): Shr, mut req: Request, next: Next) -> Response {
    match gate(&shared, &req, &["Bearer ", "token "]) {
        Ok(user) => {
            req.extensions_mut().insert(Actor(user));
            next.run(req).await
        }
        Err(response) => *response,
    }
}

#[derive(Clone)]
pub(super) struct Actor(pub String);

pub(super) fn fault(f: &Fault) -> Response {
    let status = StatusCode::from_u16(f.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        Json(json!({ "message": f.message, "documentation_url": "https://docs.github.com/rest" })),
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
    per_page: Option<usize>,
    page: Option<usize>,
}

/// One page of `items` with GitHub's `Link` header.
fn paged(shared: &Shared, path: &str, items: &[Value], q: &Paging) -> Response {
    let per_page = q.per_page.unwrap_or(30).clamp(1, 100);
    let page = q.page.unwrap_or(1).max(1);
    let (slice, more) = Mem::page(items, page, per_page);
    let mut headers = HeaderMap::new();
    let last = items.len().div_ceil(per_page).max(1);
    let link = |p: usize, rel: &str| {
        format!(
            "<http://{}/api/v3{path}?per_page={per_page}&page={p}>; rel=\"{rel}\"",
            shared.addr
        )
    };
    let mut links = Vec::new();
    if more {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
        links.push(link(page - 1, "prev"));
    }
    if !links.is_empty()
        && let Ok(v) = links.join(", ").parse()
    {
        headers.insert("link", v);
    }
    (headers, Json(Value::Array(slice))).into_response()
}

async fn files(
    State(shared): Shr,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Paging>,
) -> Response {
    let items: Vec<Value> = match shared.state().pr(&full(&o, &r), n) {
        Ok(pr) => pr.files.iter().take(3000).map(|(f, prev)| {
            let status = if prev.is_some() { "renamed" } else { "modified" };
            json!({ "filename": f, "previous_filename": prev, "status": status, "additions": 1, "deletions": 0, "changes": 1 })
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

async fn reviews(
    State(shared): Shr,
    Path((o, r, n)): Path<(String, String, u64)>,
    Query(q): Query<Paging>,
) -> Response {
    let items: Vec<Value> = match shared.state().pr(&full(&o, &r), n) {
        Ok(pr) => pr.reviews.iter().map(review_json).collect(),
        Err(f) => return fault(&f),
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

fn too_long(body: &str) -> Option<Response> {
    (body.chars().count() > DEFAULT_MAX_COMMENT_CHARS).then(|| {
        let msg = format!("Body is too long (maximum is {DEFAULT_MAX_COMMENT_CHARS} characters)");
        (StatusCode::UNPROCESSABLE_ENTITY, Json(json!({ "message": "Validation Failed", "errors": [{ "resource": "IssueComment", "code": "unprocessable", "field": "data", "message": msg }] }))).into_response()
    })
}

async fn create_comment(
    State(shared): Shr,
    Extension(Actor(actor)): Extension<Actor>,
    Path((o, r, n)): Path<(String, String, u64)>,
    Json(b): Json<BodyIn>,
) -> Response {
    if let Some(resp) = too_long(&b.body) {
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
    if let Some(resp) = too_long(&b.body) {
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

const REACTIONS: [&str; 8] = [
    "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
];

async fn react(
    State(shared): Shr,
    Extension(Actor(actor)): Extension<Actor>,
    Path((o, r, id)): Path<(String, String, u64)>,
    Json(b): Json<ReactionIn>,
) -> Response {
    if !REACTIONS.contains(&b.content.as_str()) {
        return fault(&Fault::new(
            422,
            format!("content {:?} is not a valid reaction", b.content),
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
                Json(json!({ "id": id, "content": b.content, "user": user(&actor) })),
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
    let description = b.description.unwrap_or_default();
    if description.chars().count() > 140 {
        return fault(&Fault::new(
            422,
            "description is too long (maximum is 140 characters)",
        ));
    }
    let s = FakeStatus {
        sha,
        context: b.context.unwrap_or_else(|| "default".into()),
        state: b.state,
        description,
        target_url: b.target_url,
    };
    let body = json!({ "state": s.state, "context": s.context, "description": s.description, "target_url": s.target_url });
    match shared.state().add_status(&full(&o, &r), s) {
        Ok(()) => (StatusCode::CREATED, Json(body)).into_response(),
        Err(f) => fault(&f),
    }
}

async fn permission(
    State(shared): Shr,
    Path((o, r, login)): Path<(String, String, String)>,
) -> Response {
    match shared.state().permission(&full(&o, &r), &login) {
        Ok(p) => {
            let word = if p == "maintain" {
                "write"
            } else if p == "triage" {
                "read"
            } else {
                p.as_str()
            };
            Json(json!({ "permission": word, "role_name": p, "user": user(&login) }))
                .into_response()
        }
        Err(f) => fault(&f),
    }
}

#[derive(Deserialize)]
struct GraphqlIn {
    query: String,
    #[serde(default)]
    variables: Value,
}

async fn graphql(State(shared): Shr, Json(b): Json<GraphqlIn>) -> Response {
    let Some(id) = b.variables.get("id").and_then(Value::as_str) else {
        return Json(json!({ "errors": [{ "message": "variable $id is required" }] }))
            .into_response();
    };
    if !b.query.contains("minimizeComment") {
        return Json(json!({ "errors": [{ "message": "the fake serves only minimizeComment" }] }))
            .into_response();
    }
    let classifier = [
        "OUTDATED",
        "SPAM",
        "ABUSE",
        "OFF_TOPIC",
        "DUPLICATE",
        "RESOLVED",
    ]
    .into_iter()
    .find(|c| b.query.contains(&format!("classifier: {c}")))
    .unwrap_or("OUTDATED");
    match shared.state().minimize(id, classifier) {
        Ok(()) => Json(json!({ "data": { "minimizeComment": { "minimizedComment": { "isMinimized": true } } } })).into_response(),
        Err(f) => Json(json!({ "data": null, "errors": [{ "type": "NOT_FOUND", "message": f.message }] })).into_response(),
    }
}

async fn access_token(State(shared): Shr, Path(id): Path<u64>, headers: HeaderMap) -> Response {
    let jwt = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let app = lock(&shared.app).clone();
    let Some((app_id, installation, pem)) = app else {
        return fault(&Fault::new(
            401,
            "GitHub App auth is not enabled on this fake",
        ));
    };
    if id != installation {
        return fault(&Fault::new(404, "installation not found"));
    }
    if let Err(msg) = super::jwt::verify(jwt, app_id, &pem) {
        return fault(&Fault::new(401, msg));
    }
    let token = format!("ghs_fake{}", uuid::Uuid::new_v4().simple());
    {
        let mut st = shared.state();
        st.minted_tokens += 1;
        st.tokens.insert(token.clone());
        st.token_users
            .insert(token.clone(), "atoll[bot]".to_owned());
    }
    let expires = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
    let expires = expires
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    (
        StatusCode::CREATED,
        Json(
            json!({ "token": token, "expires_at": expires, "permissions": { "issues": "write" } }),
        ),
    )
        .into_response()
}

#[derive(Deserialize)]
struct MergeIn {
    merge_method: Option<String>,
    sha: Option<String>,
}

/// `PUT /repos/{o}/{r}/pulls/{n}/merge`, with GitHub's answers: 200 merged, 405 not
/// mergeable, 409 head moved, 422 an unknown `merge_method`.
async fn merge_pull(
    State(shared): Shr,
    Path((o, r, n)): Path<(String, String, u64)>,
    Json(b): Json<MergeIn>,
) -> Response {
    let ask = super::merge::MergeAsk {
        method: b.merge_method.unwrap_or_else(|| "merge".to_owned()),
        sha: b.sha,
        delete_branch: false,
    };
    match super::merge::merge(&shared, &full(&o, &r), n, &ask).await {
        Ok(sha) => Json(json!({
            "sha": sha, "merged": true, "message": "Pull Request successfully merged"
        }))
        .into_response(),
        Err(refusal) => fault(&match refusal {
            super::merge::Refusal::Missing(f) => f,
            super::merge::Refusal::NotMergeable => Fault::new(405, "Pull Request is not mergeable"),
            super::merge::Refusal::HeadMoved => Fault::new(
                409,
                "Head branch was modified. Review and try the merge again.",
            ),
            super::merge::Refusal::BadMethod => Fault::new(
                422,
                "Invalid request.\n\nmerge_method is not a valid value.",
            ),
        }),
    }
}

/// `DELETE /repos/{o}/{r}/git/refs/heads/{branch}`: 204, or 422 when there is no such branch.
async fn delete_ref(
    State(shared): Shr,
    Path((o, r, branch)): Path<(String, String, String)>,
) -> Response {
    let bare = match shared.state().repo(&full(&o, &r)) {
        Ok(repo) => repo.bare.clone(),
        Err(f) => return fault(&f),
    };
    match super::git::delete_ref(&bare, &format!("refs/heads/{branch}")).await {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => fault(&Fault::new(422, "Reference does not exist")),
        Err(e) => fault(&Fault::new(500, e.to_string())),
    }
}
