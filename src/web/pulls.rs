//! `GET /pulls/{host}/{owner}/{repo}/{number}`: one pull request as atoll sees it — its current
//! plans (rendered like the plan comment, with restart and blocked badges), its locks and its
//! jobs. Reads through the store's query functions only.

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde::Serialize;

use super::WebState;
use super::pages::{JOBS_SCAN, SignedIn, context};
use super::views::{JobView, LockView, page, short_sha, when};
use crate::http::AppError;
use crate::locks::{LockQuery, PlanQuery, SavedPlan};
use crate::proxmox::plan::{Effect, Plan};

pub(super) fn routes() -> Router<WebState> {
    Router::new().route("/pulls/{*rest}", get(pull))
}

/// The dashboard address of a PR's page; each character outside RFC 3986's unreserved set
/// (other than the `/` between host, owner and name) is percent-encoded, so the templates may
/// print it without HTML escaping (which would turn every `/` into `&#x2F;`).
pub(super) fn pull_path(repo: &str, pr: u64) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~')
        .remove(b'/');
    format!(
        "/pulls/{}/{pr}",
        percent_encoding::utf8_percent_encode(repo, SET)
    )
}

/// `host/owner/repo/number` (decoded) into its repository id and number.
fn parse(rest: &str) -> Option<(&str, u64)> {
    let (repo, number) = rest.trim_end_matches('/').rsplit_once('/')?;
    let number = number.parse::<u64>().ok()?;
    (repo.split('/').count() >= 3 && repo.split('/').all(|s| !s.is_empty()))
        .then_some((repo, number))
}

async fn pull(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    Path(rest): Path<String>,
) -> Result<Response, AppError> {
    let Some((repo, pr)) = parse(&rest) else {
        return Err(AppError::NotFound(
            "Not a pull request: a pull request page is at /pulls/HOST/OWNER/REPO/NUMBER, for \
             example /pulls/github.com/acme/infra/7. Follow the links on the locks and jobs pages."
                .to_owned(),
        ));
    };
    let locks = LockQuery {
        repo: Some(repo.to_owned()),
        pr: Some(pr),
    };
    let plans = PlanQuery {
        repo: repo.to_owned(),
        pr,
        current_only: true,
    };
    let (locks, plans, jobs) = tokio::try_join!(
        state.store.locks().lock_list(&locks),
        state.store.plans().plan_list(&plans),
        state.store.list_jobs(JOBS_SCAN)
    )?;
    let jobs: Vec<JobView> = jobs
        .iter()
        .filter(|j| j.repo == repo && j.pr == Some(pr))
        .map(JobView::from)
        .collect();
    if locks.is_empty() && plans.is_empty() && jobs.is_empty() {
        return Err(AppError::NotFound(format!(
            "Unknown pull request: atoll holds no plans, locks or recent jobs for {repo} #{pr}. \
             Comment `{} plan` on it to plan it.",
            state.executable
        )));
    }
    // A lock's stored summary is the one written when it was taken; the current plan for its
    // key says what it holds now.
    let locks: Vec<LockView> = locks
        .iter()
        .map(|l| {
            let view = LockView::from(l);
            let plan = plans.iter().find(|p| p.key == l.key);
            match plan.and_then(|p| summary_line(&p.rendered)) {
                Some(summary) => view.with_summary(summary),
                None => view,
            }
        })
        .collect();
    let forge_url = locks.iter().find_map(LockView::pr_url);
    let plans: Vec<PlanView> = plans.iter().map(PlanView::from).collect();
    let mut ctx = context(Some(&s), "Pull request");
    ctx.insert("repo", repo);
    ctx.insert("pr", &pr);
    ctx.insert("forge_url", &forge_url);
    ctx.insert("executable", &state.executable);
    ctx.insert("plans", &plans);
    ctx.insert("locks", &locks);
    ctx.insert("jobs", &jobs);
    Ok(page(&state.tera, "pull.html", &ctx))
}

/// One current plan, laid out like its PR comment.
#[derive(Debug, Serialize)]
struct PlanView {
    label: String,
    flags: String,
    created: String,
    head_sha: String,
    job: Option<String>,
    /// The plan's last `Plan: ...` / `No changes.` line.
    summary: Option<String>,
    lines: Vec<PlanLine>,
    changes: bool,
    restart: usize,
    blocked: usize,
    /// `(address, reason)` of each refused change.
    blocked_by: Vec<(String, String)>,
    /// Addresses of the guests this plan restarts.
    restarts: Vec<String>,
}

/// A line of plan text with its diff class (`add`, `del`, `chg`, `note`, `sum` or empty).
#[derive(Debug, Serialize)]
struct PlanLine {
    class: &'static str,
    text: String,
}

/// The last `Plan: ...` / `No changes.` line of a rendered plan.
fn summary_line(rendered: &str) -> Option<String> {
    rendered
        .lines()
        .rev()
        .find(|l| line_class(l) == "sum")
        .map(|l| l.trim().to_owned())
}

fn line_class(line: &str) -> &'static str {
    let t = line.trim_start();
    match t.chars().next() {
        Some('+') => "add",
        Some('-') => "del",
        Some('~') => "chg",
        Some('#') => "note",
        _ if t.starts_with("Plan:") || t.starts_with("No changes.") => "sum",
        _ => "",
    }
}

impl From<&SavedPlan> for PlanView {
    fn from(p: &SavedPlan) -> Self {
        let label = match &p.key.project {
            Some(name) => name.to_string(),
            None => format!("dir: {} workspace: {}", p.key.dir, p.key.workspace),
        };
        let doc = serde_json::from_value::<Plan>(p.document.clone()).ok();
        let (changes, restart, blocked) = doc.as_ref().map_or((false, 0, 0), |d| {
            let s = &d.summary;
            (s.add + s.change + s.destroy > 0, s.restart, s.blocked)
        });
        let resources = || doc.iter().flat_map(|d| d.resource_changes.iter());
        let blocked_by = resources()
            .filter_map(|c| Some((c.address.clone(), c.blocked.as_ref()?.reason.clone())))
            .collect();
        let restarts = resources()
            .filter(|c| c.disruption == Some(Effect::Restart))
            .map(|c| c.address.clone())
            .collect();
        Self {
            label,
            flags: p.key.plan_flags(),
            created: when(p.created_at),
            head_sha: short_sha(&p.source.sha).to_owned(),
            job: p.job.map(|j| j.to_string()),
            summary: summary_line(&p.rendered),
            lines: p
                .rendered
                .trim_start_matches('\n')
                .lines()
                .map(|l| PlanLine {
                    class: line_class(l),
                    text: l.to_owned(),
                })
                .collect(),
            changes,
            restart,
            blocked,
            blocked_by,
            restarts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_paths_round_trip_and_encode_markup() {
        assert_eq!(
            pull_path("github.com/acme/infra", 7),
            "/pulls/github.com/acme/infra/7"
        );
        // The templates print it unescaped (`| safe`): nothing HTML-significant may survive.
        let evil = pull_path("github.com/acme/<b>x\"'&", 9);
        assert!(!evil.contains(['<', '>', '"', '\'', '&']), "{evil}");
        assert_eq!(
            parse("github.com/acme/infra/7"),
            Some(("github.com/acme/infra", 7))
        );
        assert_eq!(parse("github.com/acme/infra"), None);
        assert_eq!(parse("acme/infra/7"), None);
        assert_eq!(parse("github.com//infra/7"), None);
    }

    #[test]
    fn plan_lines_are_classed_like_a_diff() {
        assert_eq!(line_class("  + cores = 2"), "add");
        assert_eq!(line_class("  ~ resource \"x\" {"), "chg");
        assert_eq!(line_class("  # (guest will be restarted: cores)"), "note");
        assert_eq!(
            line_class("Plan: 1 to add, 0 to change, 0 to destroy."),
            "sum"
        );
        assert_eq!(line_class("    }"), "");
    }
}
