//! Embedded templates and the small serialisable views the pages render.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use time::OffsetDateTime;

use crate::locks::Lock;
use crate::store::Job;

const TEMPLATES: [(&str, &str); 12] = [
    ("base.html", include_str!("../../templates/web/base.html")),
    ("login.html", include_str!("../../templates/web/login.html")),
    ("locks.html", include_str!("../../templates/web/locks.html")),
    (
        "unlock.html",
        include_str!("../../templates/web/unlock.html"),
    ),
    ("jobs.html", include_str!("../../templates/web/jobs.html")),
    ("job.html", include_str!("../../templates/web/job.html")),
    ("pull.html", include_str!("../../templates/web/pull.html")),
    ("apply.html", include_str!("../../templates/web/apply.html")),
    (
        "protect.html",
        include_str!("../../templates/web/protect.html"),
    ),
    (
        "message.html",
        include_str!("../../templates/web/message.html"),
    ),
    ("state.html", include_str!("../../templates/web/state.html")),
    (
        "state_project.html",
        include_str!("../../templates/web/state_project.html"),
    ),
];

/// Parses the embedded templates (every name ends in `.html`, so tera autoescapes them).
pub(super) fn templates() -> anyhow::Result<tera::Tera> {
    let mut tera = tera::Tera::default();
    tera.add_raw_templates(TEMPLATES)?;
    Ok(tera)
}

/// Renders `name` as an HTML page with a strict content security policy.
pub(super) fn page(tera: &tera::Tera, name: &str, ctx: &tera::Context) -> Response {
    match tera.render(name, ctx) {
        Ok(html) => html_response(StatusCode::OK, html),
        Err(e) => {
            tracing::error!(template = name, error = ?e, "rendering a dashboard page");
            let id = crate::http::request_id().unwrap_or_default();
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("page rendering failed; see the server log under request id {id}\n"),
            )
                .into_response()
        }
    }
}

pub(super) fn html_response(status: StatusCode, html: String) -> Response {
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
                ),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        html,
    )
        .into_response()
}

/// `2026-11-30 09:56 UTC`.
pub(super) fn when(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute()
    )
}

#[derive(Debug, Serialize)]
pub(super) struct LockView {
    id: String,
    repo: String,
    dir: String,
    workspace: String,
    project: Option<String>,
    pr: u64,
    pr_url: Option<String>,
    /// This PR's dashboard page.
    pr_page: String,
    user: String,
    since: String,
    planned: String,
    summary: String,
}

impl From<&Lock> for LockView {
    fn from(l: &Lock) -> Self {
        Self {
            id: l.id.to_string(),
            repo: l.key.repo.clone(),
            dir: l.key.dir.to_string(),
            workspace: l.key.workspace.to_string(),
            project: l.key.project.as_ref().map(ToString::to_string),
            pr: l.owner.pr,
            pr_url: safe_url(&l.owner.pr_url),
            pr_page: super::pulls::pull_path(&l.key.repo, l.owner.pr),
            user: l.owner.user.clone(),
            since: when(l.locked_at),
            planned: when(l.planned_at),
            summary: l.owner.summary.clone(),
        }
    }
}

impl LockView {
    /// The PR on its forge, when the stored link is a web link.
    pub(super) fn pr_url(&self) -> Option<String> {
        self.pr_url.clone()
    }

    /// The same lock with another plan summary line.
    pub(super) fn with_summary(self, summary: String) -> Self {
        Self { summary, ..self }
    }
}

/// The first 8 characters of a commit id.
pub(super) fn short_sha(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

/// Only `http(s)` links are rendered (a `javascript:` URL would survive HTML escaping).
fn safe_url(url: &str) -> Option<String> {
    (url.starts_with("https://") || url.starts_with("http://")).then(|| url.to_owned())
}

#[derive(Debug, Serialize)]
pub(super) struct JobView {
    id: String,
    kind: String,
    repo: String,
    pr: Option<u64>,
    /// The PR's dashboard page, for jobs about a PR.
    pr_page: Option<String>,
    state: &'static str,
    terminal: bool,
    created: String,
    attempts: u32,
    error: Option<String>,
    progress: Option<ProgressView>,
}

/// An apply's progress bar: guests finished of total.
#[derive(Debug, Serialize)]
pub(super) struct ProgressView {
    done: u32,
    total: u32,
    percent: u32,
}

impl From<&Job> for JobView {
    fn from(j: &Job) -> Self {
        Self {
            id: j.id.to_string(),
            kind: j.kind.clone(),
            repo: j.repo.clone(),
            pr: j.pr,
            pr_page: j.pr.map(|pr| super::pulls::pull_path(&j.repo, pr)),
            state: j.state.as_str(),
            terminal: j.state.is_terminal(),
            created: when(j.created_at),
            attempts: j.attempts,
            error: j.error.clone(),
            progress: j.progress.map(|p| ProgressView {
                done: p.done(),
                total: p.total(),
                percent: p.percent(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_templates_parse_and_escape_markup() {
        let tera = templates().unwrap_or_else(|e| panic!("{e:?}"));
        let mut ctx = tera::Context::new();
        ctx.insert("title", "x");
        ctx.insert("message", "<script>alert(1)</script>");
        ctx.insert("user", &None::<String>);
        let html = tera
            .render("message.html", &ctx)
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;&#x2F;script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script>alert"));
    }

    #[test]
    fn only_http_links_are_kept() {
        assert_eq!(safe_url("javascript:alert(1)"), None);
        assert!(safe_url("https://github.com/a/b/pull/1").is_some());
    }
}
