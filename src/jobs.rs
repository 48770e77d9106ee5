//! The job contract: every job atoll queues, as one typed enum. The webhook intake, the
//! runner's follow-ups and the dashboard build a [`JobSpec`]; the runner reads it back with
//! [`JobSpec::parse`] and matches it exhaustively. The queue stores a job as its kind (a column,
//! which a SQL check limits to [`JobKind::ALL`]) and its payload (JSON) and interprets neither.
//!
//! Payloads keep the flat layout earlier versions wrote (`forge`, `repo`, `pr`, then the kind's
//! own fields), so jobs queued before an upgrade still run after it. A stored job that no longer
//! parses fails with the reason; it is never guessed at.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use uuid::Uuid;

use crate::commands::{Command, Reply, Verb};
use crate::locks::UnlockAnnouncement;
use crate::store::NewJob;
use model::{ForgeKind, RepoId};

/// What a job does, as the queue's `kind` column names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    Autoplan,
    Plan,
    Apply,
    Unlock,
    Cancel,
    Help,
    Version,
    Reply,
    PrClosed,
    ApplyInterrupted,
    ApplyCoalesced,
    JobGaveUp,
    AnnounceUnlock,
    Import,
    StateRm,
    ApprovePolicies,
}

impl JobKind {
    /// Every kind; the migrations' check on `jobs.kind` lists the same names.
    pub const ALL: [JobKind; 16] = [
        Self::Autoplan,
        Self::Plan,
        Self::Apply,
        Self::Unlock,
        Self::Cancel,
        Self::Help,
        Self::Version,
        Self::Reply,
        Self::PrClosed,
        Self::ApplyInterrupted,
        Self::ApplyCoalesced,
        Self::JobGaveUp,
        Self::AnnounceUnlock,
        Self::Import,
        Self::StateRm,
        Self::ApprovePolicies,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Autoplan => "autoplan",
            Self::Plan => "plan",
            Self::Apply => "apply",
            Self::Unlock => "unlock",
            Self::Cancel => "cancel",
            Self::Help => "help",
            Self::Version => "version",
            Self::Reply => "reply",
            Self::PrClosed => "pr_closed",
            Self::ApplyInterrupted => "apply_interrupted",
            Self::ApplyCoalesced => "apply_coalesced",
            Self::JobGaveUp => "job_gave_up",
            Self::AnnounceUnlock => "announce_unlock",
            Self::Import => "import",
            Self::StateRm => "state_rm",
            Self::ApprovePolicies => "approve_policies",
        }
    }

    pub fn parse(kind: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == kind)
    }

    /// The kinds `atlantis cancel` cancels while they are still queued: the commands that
    /// plan, apply or unlock, and the plans a push queues.
    pub const CANCELLABLE: [JobKind; 4] = [Self::Autoplan, Self::Plan, Self::Apply, Self::Unlock];

    /// The kind of the job a comment command becomes.
    pub fn of_verb(verb: Verb) -> Self {
        match verb {
            Verb::Plan => Self::Plan,
            Verb::Apply => Self::Apply,
            Verb::Unlock => Self::Unlock,
            Verb::Cancel => Self::Cancel,
            Verb::Help => Self::Help,
            Verb::Version => Self::Version,
            Verb::Import => Self::Import,
            Verb::StateRm => Self::StateRm,
            Verb::ApprovePolicies => Self::ApprovePolicies,
        }
    }
}

/// The kinds a worker claims even while another job of the same repository runs (the queue's
/// per-repository cap does not hold them back): `cancel` must reach the jobs queued behind a
/// running one, or it could only ever cancel what had already run. It reads and writes only
/// the store and one comment, so it cannot collide with the running job.
pub const UNLIMITED_PER_REPO_KINDS: [&str; 1] = [JobKind::Cancel.as_str()];

/// The pull request a job is about, and who asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrJob {
    pub forge: ForgeKind,
    pub repo: RepoId,
    #[serde(rename = "pr")]
    pub number: u64,
    /// The commenter; the PR's author for autoplan; the unlocker for announcements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// A PR was opened, got new commits, was reopened or became ready for review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Autoplan {
    #[serde(flatten)]
    pub pr: PrJob,
    /// `opened`, `updated`, `reopened`, `ready_for_review`.
    pub trigger: String,
    pub head_sha: String,
    pub head_ref: String,
    pub base_ref: String,
}

/// A comment the grammar runs (`atlantis plan`, `apply`, `unlock`, `help`, `version`,
/// `import`, `state rm`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandJob {
    #[serde(flatten)]
    pub pr: PrJob,
    pub comment_id: u64,
    pub command: Command,
}

/// A comment meant for atoll that it answers instead of running (a usage error, help).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyJob {
    #[serde(flatten)]
    pub pr: PrJob,
    pub comment_id: u64,
    pub reply: Reply,
}

/// The PR was merged or closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrClosed {
    #[serde(flatten)]
    pub pr: PrJob,
    pub merged: bool,
    #[serde(default)]
    pub head_sha: String,
}

/// The report of an apply a restart cut short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyInterrupted {
    #[serde(flatten)]
    pub pr: PrJob,
    /// The interrupted apply's command (its flags name what it was applying).
    #[serde(default)]
    pub command: Option<Command>,
    /// The interrupted apply job.
    pub interrupted: Uuid,
}

/// The one answer to identical apply comments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyCoalesced {
    #[serde(flatten)]
    pub pr: PrJob,
    #[serde(default)]
    pub command: Option<Command>,
    pub coalesced: Coalesced,
}

/// The apply identical comments were folded into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coalesced {
    pub job: Uuid,
    /// Still queued or running when the duplicate looked (else: it already applied).
    pub in_flight: bool,
}

/// The report of a job whose worker kept dying.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobGaveUp {
    #[serde(flatten)]
    pub pr: PrJob,
    #[serde(default)]
    pub command: Option<Command>,
    pub gave_up: GaveUp,
}

/// The job given up on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GaveUp {
    pub job: Uuid,
    /// Its kind, as stored (a kind of an older version is still reported).
    pub kind: String,
    /// How many times its worker died under it.
    pub attempts: u32,
}

/// Every job atoll queues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobSpec {
    Autoplan(Autoplan),
    Command(CommandJob),
    Reply(ReplyJob),
    PrClosed(PrClosed),
    ApplyInterrupted(ApplyInterrupted),
    ApplyCoalesced(ApplyCoalesced),
    JobGaveUp(JobGaveUp),
    /// An unlock from the dashboard, to be told on the PR.
    AnnounceUnlock(UnlockAnnouncement),
}

/// Why a stored job cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobSpecError {
    #[error("job kind {0:?} is not one this version of atoll runs; the job is failed, not retried")]
    UnknownKind(String),
    #[error(
        "the payload of this {kind} job is not one this version of atoll reads ({detail}); the \
         job is failed, not retried: comment the command again"
    )]
    Payload { kind: &'static str, detail: String },
}

impl JobSpec {
    pub fn kind(&self) -> JobKind {
        match self {
            Self::Autoplan(_) => JobKind::Autoplan,
            Self::Command(c) => JobKind::of_verb(c.command.verb),
            Self::Reply(_) => JobKind::Reply,
            Self::PrClosed(_) => JobKind::PrClosed,
            Self::ApplyInterrupted(_) => JobKind::ApplyInterrupted,
            Self::ApplyCoalesced(_) => JobKind::ApplyCoalesced,
            Self::JobGaveUp(_) => JobKind::JobGaveUp,
            Self::AnnounceUnlock(_) => JobKind::AnnounceUnlock,
        }
    }

    /// The PR job fields, for every kind but the dashboard's unlock announcement.
    pub fn pr(&self) -> Option<&PrJob> {
        match self {
            Self::Autoplan(j) => Some(&j.pr),
            Self::Command(j) => Some(&j.pr),
            Self::Reply(j) => Some(&j.pr),
            Self::PrClosed(j) => Some(&j.pr),
            Self::ApplyInterrupted(j) => Some(&j.pr),
            Self::ApplyCoalesced(j) => Some(&j.pr),
            Self::JobGaveUp(j) => Some(&j.pr),
            Self::AnnounceUnlock(_) => None,
        }
    }

    /// The comment that asked for this job, if one did (to react on).
    pub fn comment_id(&self) -> Option<u64> {
        match self {
            Self::Command(j) => Some(j.comment_id),
            Self::Reply(j) => Some(j.comment_id),
            _ => None,
        }
    }

    /// The command behind this job, if a comment (or a job a comment started) carries one.
    pub fn command(&self) -> Option<&Command> {
        match self {
            Self::Command(j) => Some(&j.command),
            Self::ApplyInterrupted(j) => j.command.as_ref(),
            Self::ApplyCoalesced(j) => j.command.as_ref(),
            Self::JobGaveUp(j) => j.command.as_ref(),
            _ => None,
        }
    }

    /// The payload as stored.
    pub fn payload(&self) -> Json {
        let out = match self {
            Self::Autoplan(j) => serde_json::to_value(j),
            Self::Command(j) => serde_json::to_value(j),
            Self::Reply(j) => serde_json::to_value(j),
            Self::PrClosed(j) => serde_json::to_value(j),
            Self::ApplyInterrupted(j) => serde_json::to_value(j),
            Self::ApplyCoalesced(j) => serde_json::to_value(j),
            Self::JobGaveUp(j) => serde_json::to_value(j),
            Self::AnnounceUnlock(j) => serde_json::to_value(j),
        };
        // Plain data with string keys always serialises.
        out.unwrap_or(Json::Null)
    }

    /// The job to enqueue: its kind, the repository and PR columns, and its payload.
    pub fn to_new_job(&self, dedup_key: Option<String>) -> NewJob {
        let (repo, pr) = match self {
            Self::AnnounceUnlock(note) => (note.lock.key.repo.clone(), note.lock.owner.pr),
            other => match other.pr() {
                Some(pr) => (pr.repo.to_string(), pr.number),
                None => (String::new(), 0),
            },
        };
        NewJob {
            kind: self.kind().as_str().to_owned(),
            repo,
            pr: Some(pr),
            dedup_key,
            payload: self.payload(),
        }
    }

    /// Reads a stored job back.
    pub fn parse(kind: &str, payload: &Json) -> Result<Self, JobSpecError> {
        let known =
            JobKind::parse(kind).ok_or_else(|| JobSpecError::UnknownKind(kind.to_owned()))?;
        Ok(match known {
            JobKind::Autoplan => Self::Autoplan(read(known, payload)?),
            JobKind::Plan
            | JobKind::Apply
            | JobKind::Unlock
            | JobKind::Cancel
            | JobKind::Help
            | JobKind::Version
            | JobKind::Import
            | JobKind::StateRm
            | JobKind::ApprovePolicies => {
                let job: CommandJob = read(known, payload)?;
                if JobKind::of_verb(job.command.verb) != known {
                    return Err(JobSpecError::Payload {
                        kind: known.as_str(),
                        detail: format!("its command is {}", job.command.verb.as_str()),
                    });
                }
                Self::Command(job)
            }
            JobKind::Reply => Self::Reply(read(known, payload)?),
            JobKind::PrClosed => Self::PrClosed(read(known, payload)?),
            JobKind::ApplyInterrupted => Self::ApplyInterrupted(read(known, payload)?),
            JobKind::ApplyCoalesced => Self::ApplyCoalesced(read(known, payload)?),
            JobKind::JobGaveUp => Self::JobGaveUp(read(known, payload)?),
            JobKind::AnnounceUnlock => Self::AnnounceUnlock(read(known, payload)?),
        })
    }
}

fn read<T: DeserializeOwned>(kind: JobKind, payload: &Json) -> Result<T, JobSpecError> {
    T::deserialize(payload).map_err(|e| JobSpecError::Payload {
        kind: kind.as_str(),
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pr() -> PrJob {
        PrJob {
            forge: ForgeKind::Github,
            repo: "github.com/acme/infra".parse().expect("repo id"),
            number: 7,
            author: Some("alice".to_owned()),
        }
    }

    #[test]
    fn every_kind_has_one_name() {
        for kind in JobKind::ALL {
            assert_eq!(JobKind::parse(kind.as_str()), Some(kind));
        }
        let names: std::collections::BTreeSet<&str> =
            JobKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), JobKind::ALL.len());
    }

    #[test]
    fn specs_round_trip_through_kind_and_payload() {
        let specs = [
            JobSpec::Autoplan(Autoplan {
                pr: pr(),
                trigger: "opened".to_owned(),
                head_sha: "abc".to_owned(),
                head_ref: "feature".to_owned(),
                base_ref: "main".to_owned(),
            }),
            JobSpec::Command(CommandJob {
                pr: pr(),
                comment_id: 9,
                command: Command::new(Verb::Apply),
            }),
            JobSpec::PrClosed(PrClosed {
                pr: pr(),
                merged: true,
                head_sha: "abc".to_owned(),
            }),
            JobSpec::ApplyInterrupted(ApplyInterrupted {
                pr: pr(),
                command: Some(Command::new(Verb::Apply)),
                interrupted: Uuid::nil(),
            }),
        ];
        for spec in specs {
            let job = spec.to_new_job(None);
            assert_eq!(job.repo, "github.com/acme/infra");
            assert_eq!(job.pr, Some(7));
            let back = JobSpec::parse(&job.kind, &job.payload).expect("parses");
            assert_eq!(back, spec);
        }
    }

    /// The layout earlier versions wrote: an apply comment's job.
    #[test]
    fn payloads_of_earlier_versions_still_parse() {
        let stored = json!({
            "forge": "gitea", "repo": "git.example.org/acme/infra", "pr": 3,
            "comment_id": 11, "author": "bob",
            "command": serde_json::to_value(Command::new(Verb::Plan)).expect("command"),
        });
        let spec = JobSpec::parse("plan", &stored).expect("parses");
        assert_eq!(spec.kind(), JobKind::Plan);
        assert_eq!(spec.comment_id(), Some(11));
        let pr = spec.pr().expect("pr");
        assert_eq!(
            (pr.forge, pr.number, pr.repo.host()),
            (ForgeKind::Gitea, 3, "git.example.org")
        );
        assert_eq!(spec.payload(), stored);
    }

    #[test]
    fn jobs_that_no_longer_parse_say_why() {
        let err = JobSpec::parse("terraform_apply", &json!({})).expect_err("unknown kind");
        assert!(
            err.to_string()
                .contains("not one this version of atoll runs"),
            "{err}"
        );
        let err = JobSpec::parse("autoplan", &json!({"forge": "github"})).expect_err("no repo");
        assert!(err.to_string().contains("autoplan job"), "{err}");
        let bad_repo = json!({"forge": "github", "repo": "acme", "pr": 1, "comment_id": 1,
            "command": serde_json::to_value(Command::new(Verb::Apply)).expect("command")});
        let err = JobSpec::parse("apply", &bad_repo).expect_err("bad repo id");
        assert!(err.to_string().contains("host/owner/name"), "{err}");
        let wrong_verb = json!({"forge": "github", "repo": "github.com/a/b", "pr": 1,
            "comment_id": 1, "command": serde_json::to_value(Command::new(Verb::Plan)).expect("c")});
        let err = JobSpec::parse("apply", &wrong_verb).expect_err("kind and verb differ");
        assert!(err.to_string().contains("its command is plan"), "{err}");
    }
}
