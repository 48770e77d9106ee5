//! Short notices about how atoll handled a command rather than its result: refusals (a fork's
//! pull request, an unlock without permission), the note that ends a truncated reply, the one
//! answer to a burst of identical apply comments, and the report of a job whose worker kept
//! dying. Each is a template under `templates/comments/`.

use serde::Serialize;

use super::template::render;

/// A job's dashboard page (`{public_url}/jobs/{id}`, when the URL is configured) and its id.
#[derive(Debug, Clone, Copy)]
pub struct JobRef<'a> {
    pub id: &'a str,
    pub link: Option<&'a str>,
}

/// The refusal of a plan or apply (`verb`: `Plan`, `Apply`) on a fork's pull request, with the
/// setting that would allow it. `head_repo` is the fork's `owner/name` (`None`: deleted).
pub fn fork_refused(verb: &str, head_repo: Option<&str>) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        verb: &'a str,
        head_repo: Option<&'a str>,
    }
    render("fork_refused.md", &View { verb, head_repo })
}

/// The refusal of `atlantis unlock`: `needs` is atoll's own text naming who may.
pub fn unlock_no_permission(executable: &str, user: &str, needs: &str) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        user: &'a str,
        needs: &'a str,
    }
    render(
        "unlock_no_permission.md",
        &View {
            executable,
            user,
            needs,
        },
    )
}

/// `atlantis cancel` by someone who may not (`commands.unlock_requires` decides both).
pub fn cancel_no_permission(executable: &str, user: &str, needs: &str) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        user: &'a str,
        needs: &'a str,
    }
    render(
        "cancel_no_permission.md",
        &View {
            executable,
            user,
            needs,
        },
    )
}

/// The note that ends the last comment of a reply cut to `shown` of `total` comments.
pub fn reply_truncated(
    shown: usize,
    total: usize,
    omitted_chars: usize,
    job: JobRef<'_>,
) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        shown: usize,
        total: usize,
        omitted_chars: usize,
        job: &'a str,
        link: Option<&'a str>,
    }
    render(
        "reply_truncated.md",
        &View {
            shown,
            total,
            omitted_chars,
            job: job.id,
            link: job.link,
        },
    )
}

/// The one answer to identical `atlantis apply` comments: the apply `job` they duplicate is
/// still queued or running (`in_flight`), or it already applied these plans.
pub fn apply_coalesced(executable: &str, job: JobRef<'_>, in_flight: bool) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        job: &'a str,
        link: Option<&'a str>,
        in_flight: bool,
    }
    render(
        "apply_coalesced.md",
        &View {
            executable,
            job: job.id,
            link: job.link,
            in_flight,
        },
    )
}

/// The report of a job (`what`: `Plan`, `Apply`, `Unlock`) failed after its worker died
/// `attempts` times; `verb` is the command that tries again.
pub fn job_gave_up(
    executable: &str,
    what: &str,
    verb: &str,
    attempts: u32,
    job: JobRef<'_>,
) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        executable: &'a str,
        what: &'a str,
        verb: &'a str,
        attempts: u32,
        job: &'a str,
        link: Option<&'a str>,
    }
    render(
        "job_gave_up.md",
        &View {
            executable,
            what,
            verb,
            attempts,
            job: job.id,
            link: job.link,
        },
    )
}
