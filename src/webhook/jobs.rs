//! Which job, if any, a normalised event becomes. Pure: no I/O.
//!
//! - PR opened / new commits / reopened / ready for review -> `autoplan`, at most once per
//!   (forge, repo, PR, head SHA);
//! - PR closed (merged or not) -> `pr_closed`, at most once per signed payload (a replay of a
//!   captured close under new delivery ids is the same close; a real second close, after a
//!   reopen, carries new `closed_at`/`updated_at` times and so other bytes);
//! - a new PR comment the grammar runs -> a job named after the command's verb (`plan`,
//!   `apply`, ...), a comment it answers -> `reply`; either at most once per comment id;
//! - everything else -> no job, with the reason.

use sha2::{Digest, Sha256};

use crate::commands::{self, Grammar, Parsed};
use crate::config::WebhookSettings;
use crate::forge::{ForgeEvent, PrAction, PullRequest, RepoRef};
use crate::jobs::{Autoplan, CommandJob, JobSpec, PrClosed, PrJob, ReplyJob};
use crate::store::NewJob;
use model::{ForgeKind, RepoId};

pub(super) struct Context<'a> {
    pub(super) forge: ForgeKind,
    pub(super) policy: WebhookSettings,
    pub(super) grammar: &'a Grammar,
    pub(super) bot_user: Option<&'a str>,
    /// The delivery's verified bytes, which name a close uniquely.
    pub(super) signed_body: &'a [u8],
}

#[derive(Debug)]
pub(super) enum Decision {
    Job(NewJob),
    NoJob(String),
    /// The event names a repository atoll cannot key (not `host/owner/name`).
    Invalid(String),
}

pub(super) fn decide(ctx: &Context<'_>, event: &ForgeEvent) -> Decision {
    match event {
        ForgeEvent::Ping => Decision::NoJob("pong".to_owned()),
        ForgeEvent::Ignored { reason, .. } => Decision::NoJob(reason.clone()),
        ForgeEvent::Review { .. } => {
            Decision::NoJob("reviews are checked when apply runs; no job needed".to_owned())
        }
        ForgeEvent::PullRequest { repo, pr, action } => pull_request(ctx, repo, pr, *action),
        ForgeEvent::Comment {
            repo,
            pr_number,
            comment_id,
            author,
            body,
        } => {
            let c = CommentRef {
                repo,
                pr: *pr_number,
                id: *comment_id,
                author,
            };
            comment(ctx, &c, body)
        }
    }
}

fn pull_request(ctx: &Context<'_>, repo: &RepoRef, pr: &PullRequest, action: PrAction) -> Decision {
    let forge = ctx.forge.as_str();
    let about = match pr_job(ctx, repo, pr.number, &pr.author) {
        Ok(about) => about,
        Err(e) => return Decision::Invalid(e),
    };
    if let PrAction::Closed { merged } = action {
        let spec = JobSpec::PrClosed(PrClosed {
            pr: PrJob {
                author: None,
                ..about
            },
            merged,
            head_sha: pr.head_sha.clone(),
        });
        // Closing twice must release locks twice (a PR can be reopened in between), but the
        // same close replayed must not queue again.
        let key = format!(
            "pr_closed:{forge}:{repo}:{}:{}",
            pr.number,
            hex::encode(Sha256::digest(ctx.signed_body))
        );
        return Decision::Job(spec.to_new_job(Some(key)));
    }
    if pr.draft && !ctx.policy.allow_draft_prs {
        return Decision::NoJob(
            "draft pull request; set webhook.allow_draft_prs to plan drafts".to_owned(),
        );
    }
    if pr.from_fork && !ctx.policy.allow_fork_prs {
        return Decision::NoJob(
            "pull request from a fork; set webhook.allow_fork_prs to plan forks".to_owned(),
        );
    }
    let trigger = match action {
        PrAction::Opened => "opened",
        PrAction::Updated => "updated",
        PrAction::Reopened => "reopened",
        PrAction::ReadyForReview => "ready_for_review",
        PrAction::Closed { .. } => "closed",
    };
    let spec = JobSpec::Autoplan(Autoplan {
        pr: about,
        trigger: trigger.to_owned(),
        head_sha: pr.head_sha.clone(),
        head_ref: pr.head_ref.clone(),
        base_ref: pr.base_ref.clone(),
    });
    let key = format!("autoplan:{forge}:{repo}:{}:{}", pr.number, pr.head_sha);
    Decision::Job(spec.to_new_job(Some(key)))
}

/// The PR job fields, or why the event's repository cannot be keyed.
fn pr_job(ctx: &Context<'_>, repo: &RepoRef, number: u64, author: &str) -> Result<PrJob, String> {
    let id = RepoId::new(&repo.host, &repo.owner, &repo.name).map_err(|e| e.to_string())?;
    Ok(PrJob {
        forge: ctx.forge,
        repo: id,
        number,
        author: Some(author.to_owned()),
    })
}

struct CommentRef<'a> {
    repo: &'a RepoRef,
    pr: u64,
    id: u64,
    author: &'a str,
}

fn comment(ctx: &Context<'_>, c: &CommentRef<'_>, body: &str) -> Decision {
    if ctx
        .bot_user
        .is_some_and(|bot| bot.eq_ignore_ascii_case(c.author))
    {
        return Decision::NoJob("comment by atoll's own bot user".to_owned());
    }
    let about = match pr_job(ctx, c.repo, c.pr, c.author) {
        Ok(about) => about,
        Err(e) => return Decision::Invalid(e),
    };
    let spec = match commands::parse(body, ctx.grammar) {
        Parsed::Ignore => return Decision::NoJob("comment is not a command".to_owned()),
        Parsed::Reply(reply) => JobSpec::Reply(ReplyJob {
            pr: about,
            comment_id: c.id,
            reply,
        }),
        Parsed::Run(command) => JobSpec::Command(CommandJob {
            pr: about,
            comment_id: c.id,
            command,
        }),
    };
    let forge = ctx.forge.as_str();
    let key = format!("comment:{forge}:{}:{}", c.repo, c.id);
    Decision::Job(spec.to_new_job(Some(key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> RepoRef {
        RepoRef {
            host: "github.com".into(),
            owner: "acme".into(),
            name: "infra".into(),
        }
    }

    fn pr(draft: bool, from_fork: bool) -> PullRequest {
        PullRequest {
            number: 7,
            head_sha: "abc123".into(),
            head_ref: "feature".into(),
            base_ref: "main".into(),
            author: "alice".into(),
            draft,
            from_fork,
        }
    }

    fn decide_with(policy: WebhookSettings, event: &ForgeEvent) -> Decision {
        let grammar = Grammar::new("atoll", Some("atoll-bot"));
        let ctx = Context {
            forge: ForgeKind::Github,
            policy,
            grammar: &grammar,
            bot_user: Some("atoll-bot"),
            signed_body: b"{\"action\":\"closed\"}",
        };
        decide(&ctx, event)
    }

    const STRICT: WebhookSettings = WebhookSettings {
        allow_draft_prs: false,
        allow_fork_prs: false,
    };

    fn opened(draft: bool, fork: bool) -> ForgeEvent {
        ForgeEvent::PullRequest {
            repo: repo(),
            pr: pr(draft, fork),
            action: PrAction::Opened,
        }
    }

    fn comment(author: &str, body: &str) -> ForgeEvent {
        ForgeEvent::Comment {
            repo: repo(),
            pr_number: 7,
            comment_id: 99,
            author: author.into(),
            body: body.into(),
        }
    }

    #[test]
    fn fork_pull_request_is_ignored_unless_allowed() {
        assert!(
            matches!(decide_with(STRICT, &opened(false, true)), Decision::NoJob(r) if r.contains("fork"))
        );
        let open = WebhookSettings {
            allow_fork_prs: true,
            ..STRICT
        };
        assert!(
            matches!(decide_with(open, &opened(false, true)), Decision::Job(j) if j.kind == "autoplan")
        );
    }

    #[test]
    fn autoplan_dedup_key_names_forge_repo_pr_and_head_sha() {
        let Decision::Job(job) = decide_with(STRICT, &opened(false, false)) else {
            panic!("expected a job");
        };
        assert_eq!(
            job.dedup_key.as_deref(),
            Some("autoplan:github:github.com/acme/infra:7:abc123")
        );
    }

    #[test]
    fn closing_a_draft_or_fork_still_releases_locks() {
        let event = ForgeEvent::PullRequest {
            repo: repo(),
            pr: pr(true, true),
            action: PrAction::Closed { merged: false },
        };
        let Decision::Job(job) = decide_with(STRICT, &event) else {
            panic!("expected a job")
        };
        assert_eq!(job.kind, "pr_closed");
        assert_eq!(job.payload["merged"], false);
        let key = job.dedup_key.unwrap_or_default();
        assert!(
            key.starts_with("pr_closed:github:github.com/acme/infra:7:"),
            "{key}"
        );
    }

    #[test]
    fn comment_by_the_bot_user_is_ignored_case_insensitively() {
        assert!(matches!(
            decide_with(STRICT, &comment("Atoll-Bot", "atlantis plan")),
            Decision::NoJob(_)
        ));
    }

    #[test]
    fn wrong_command_becomes_a_reply_job_keyed_by_comment_id() {
        let Decision::Job(job) = decide_with(STRICT, &comment("bob", "atlantis plna")) else {
            panic!("expected a reply job");
        };
        assert_eq!(job.kind, "reply");
        assert_eq!(
            job.dedup_key.as_deref(),
            Some("comment:github:github.com/acme/infra:99")
        );
        assert!(job.payload["reply"].is_object(), "{}", job.payload);
    }

    #[test]
    fn apply_with_a_workspace_becomes_an_apply_job() {
        let Decision::Job(job) =
            decide_with(STRICT, &comment("bob", "@atoll-bot apply -w staging"))
        else {
            panic!("expected a job");
        };
        assert_eq!(job.kind, "apply");
        assert_eq!(job.payload["command"]["workspace"], "staging");
    }

    #[test]
    fn ordinary_comment_is_not_a_command() {
        assert!(
            matches!(decide_with(STRICT, &comment("bob", "looks good to me")), Decision::NoJob(r) if r.contains("not a command"))
        );
    }
}
