//! The forge-neutral API: [`Forge`] and the values it speaks in. No GitHub or Gitea wire type
//! appears here; each client maps its own responses onto these.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use secrecy::SecretString;

use model::ForgeKind;

use super::names::{CommitSha, RepoName};

/// GitHub's documented comment size limit (characters); Gitea's configurable default too.
pub const DEFAULT_MAX_COMMENT_CHARS: usize = 65_536;

/// Longest commit-status description GitHub accepts (characters).
pub const MAX_STATUS_DESCRIPTION_CHARS: usize = 140;

/// A comment's numeric id (the REST id on both forges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CommentId(pub u64);

impl fmt::Display for CommentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrState {
    Open,
    Closed,
    Merged,
}

/// Whether the forge would let the PR merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mergeable {
    Yes,
    No {
        reason: String,
    },
    /// The forge is still computing it (GitHub `mergeable: null`); ask again shortly.
    Unknown,
}

/// A pull request as the forge's API reports it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullDetails {
    pub number: u64,
    pub state: PrState,
    pub draft: bool,
    pub author: String,
    pub title: String,
    pub head_sha: CommitSha,
    pub head_ref: String,
    pub base_ref: String,
    pub base_sha: CommitSha,
    pub mergeable: Mergeable,
    /// Where to fetch the head commit from (the fork for fork PRs, else the base repository).
    pub clone_url: String,
    /// Where to fetch the base branch from (the base repository; same as `clone_url` unless
    /// the PR comes from a fork).
    pub base_clone_url: String,
    /// The head branch lives in another repository than the base, or its repository is gone
    /// (a deleted fork): its code is not the repository's own.
    pub from_fork: bool,
    /// The head repository's `owner/name` as the forge reports it (`None`: deleted).
    pub head_repo: Option<String>,
}

/// One changed file of a PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    /// The old path of a renamed file (both directories may need a plan).
    pub previous_path: Option<String>,
}

/// The approval decision: who approves the PR now (empty: not approved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Approval {
    pub approved_by: Vec<String>,
}

impl Approval {
    pub fn is_approved(&self) -> bool {
        !self.approved_by.is_empty()
    }
}

/// A commit status state, the four both forges accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusState {
    Pending,
    Success,
    Failure,
    Error,
}

impl StatusState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Success => "success",
            Self::Failure => "failure",
            Self::Error => "error",
        }
    }
}

/// Which command a status reports on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    Plan,
    Apply,
    /// `atlantis/policy_check`, as Atlantis names it.
    PolicyCheck,
}

/// A commit status to set on a SHA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitStatus {
    pub context: String,
    pub state: StatusState,
    pub description: String,
    /// The job page.
    pub target_url: Option<String>,
}

impl CommitStatus {
    /// The aggregate status: context `atlantis/plan` or `atlantis/apply`.
    pub fn aggregate(kind: StatusKind, state: StatusState, description: &str) -> Self {
        Self {
            context: kind_context(kind).to_owned(),
            state,
            description: description.to_owned(),
            target_url: None,
        }
    }

    /// One project's status: context `atlantis/plan: dir/workspace`.
    pub fn project(
        kind: StatusKind,
        dir: &str,
        workspace: &str,
        state: StatusState,
        description: &str,
    ) -> Self {
        Self {
            context: format!("{}: {dir}/{workspace}", kind_context(kind)),
            state,
            description: description.to_owned(),
            target_url: None,
        }
    }

    /// A named project's status: context `atlantis/plan: name` (Atlantis uses the project
    /// name when `atlantis.yaml` gives one).
    pub fn named_project(
        kind: StatusKind,
        name: &str,
        state: StatusState,
        description: &str,
    ) -> Self {
        Self {
            context: format!("{}: {name}", kind_context(kind)),
            state,
            description: description.to_owned(),
            target_url: None,
        }
    }

    pub fn with_target_url(mut self, url: &str) -> Self {
        self.target_url = Some(url.to_owned());
        self
    }

    /// The description cut to [`MAX_STATUS_DESCRIPTION_CHARS`] characters (with an ellipsis).
    pub fn short_description(&self) -> String {
        let d = &self.description;
        if d.chars().count() <= MAX_STATUS_DESCRIPTION_CHARS {
            return d.clone();
        }
        let mut s: String = d.chars().take(MAX_STATUS_DESCRIPTION_CHARS - 1).collect();
        s.push('…');
        s
    }
}

fn kind_context(kind: StatusKind) -> &'static str {
    match kind {
        StatusKind::Plan => "atlantis/plan",
        StatusKind::Apply => "atlantis/apply",
        StatusKind::PolicyCheck => "atlantis/policy_check",
    }
}

/// A reaction on a command comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    Eyes,
    ThumbsUp,
    ThumbsDown,
    Laugh,
    Confused,
    Heart,
    Hooray,
    Rocket,
}

impl Reaction {
    const ALL: [Self; 8] = [
        Self::ThumbsUp,
        Self::ThumbsDown,
        Self::Laugh,
        Self::Confused,
        Self::Heart,
        Self::Hooray,
        Self::Rocket,
        Self::Eyes,
    ];

    /// The content string both forges use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eyes => "eyes",
            Self::ThumbsUp => "+1",
            Self::ThumbsDown => "-1",
            Self::Laugh => "laugh",
            Self::Confused => "confused",
            Self::Heart => "heart",
            Self::Hooray => "hooray",
            Self::Rocket => "rocket",
        }
    }

    /// The reaction a content string names (GitHub's and Gitea's default set).
    pub fn from_content(content: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == content)
    }
}

/// How a pull request is merged (GitHub's `merge_method`, Gitea's `Do`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeStyle {
    Merge,
    Squash,
    Rebase,
}

impl MergeStyle {
    /// The word both forges' APIs take.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Merge => "merge",
            Self::Squash => "squash",
            Self::Rebase => "rebase",
        }
    }
}

/// A merge atoll asks for (automerge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeRequest<'a> {
    pub style: MergeStyle,
    /// The head commit the merge is for: the forge refuses if the branch moved since.
    pub head_sha: &'a CommitSha,
    /// The head branch to delete once merged (never set for a fork's branch).
    pub delete_branch: Option<&'a str>,
}

/// What a merge did besides merging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// Whether the head branch was deleted; `Err` with the forge's reason when deleting failed
    /// after the merge.
    pub branch_deleted: Result<bool, String>,
}

/// A user's access to a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    None,
    Read,
    Write,
    Admin,
}

impl Permission {
    /// Maps a forge's permission word (GitHub `admin/maintain/write/triage/read/none`, Gitea
    /// `owner/admin/write/read/none`). Unknown words get no access.
    pub fn from_word(word: &str) -> Self {
        match word.to_ascii_lowercase().as_str() {
            "admin" | "owner" => Self::Admin,
            "write" | "maintain" | "push" => Self::Write,
            "read" | "triage" | "pull" => Self::Read,
            _ => Self::None,
        }
    }

    /// Applying needs write access.
    pub fn can_apply(self) -> bool {
        self >= Self::Write
    }
}

/// A forge call that failed, by what the caller can do about it. Messages name the operation and
/// never contain a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForgeError {
    #[error(
        "{op}: the forge refused atoll's credentials or permissions ({detail}); check the token and its scopes"
    )]
    Unauthorized { op: String, detail: String },
    #[error("{op}: not found; check that it exists and that atoll's token can see it")]
    NotFound { op: String },
    #[error("{op}: rate limited by the forge; retry after {} s", retry_after.as_secs())]
    RateLimited { op: String, retry_after: Duration },
    #[error("{op}: the forge is unreachable or failing ({detail}); retry later")]
    Transient { op: String, detail: String },
    #[error("{op}: the forge rejected the request: {message}")]
    Rejected { op: String, message: String },
}

/// A forge's API, as atoll uses it. Implementations: GitHub (octocrab), Gitea/Forgejo (reqwest).
#[async_trait]
pub trait Forge: Send + Sync + fmt::Debug {
    fn kind(&self) -> ForgeKind;

    /// Longest comment body the forge accepts, in characters; split longer text first.
    fn max_comment_chars(&self) -> usize;

    async fn pull_request(&self, repo: &RepoName, number: u64) -> Result<PullDetails, ForgeError>;

    /// Every changed file, all pages followed.
    async fn changed_files(
        &self,
        repo: &RepoName,
        number: u64,
    ) -> Result<Vec<ChangedFile>, ForgeError>;

    /// Who approves the PR now: reviewers with write access (never `author`, the PR's author)
    /// whose latest deciding review approves, with the forge's dismissal and staleness rules
    /// applied.
    async fn approval(
        &self,
        repo: &RepoName,
        number: u64,
        author: &str,
    ) -> Result<Approval, ForgeError>;

    /// Posts a comment; a body over [`Forge::max_comment_chars`] is refused before sending.
    async fn create_comment(
        &self,
        repo: &RepoName,
        number: u64,
        body: &str,
    ) -> Result<CommentId, ForgeError>;

    async fn edit_comment(
        &self,
        repo: &RepoName,
        comment: CommentId,
        body: &str,
    ) -> Result<(), ForgeError>;

    /// Hides a superseded comment (GitHub: minimised as outdated; Gitea: folded into a
    /// `<details>` block titled "Superseded: {summary}").
    async fn hide_comment(
        &self,
        repo: &RepoName,
        comment: CommentId,
        summary: &str,
    ) -> Result<(), ForgeError>;

    async fn set_status(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        status: &CommitStatus,
    ) -> Result<(), ForgeError>;

    async fn react(
        &self,
        repo: &RepoName,
        comment: CommentId,
        reaction: Reaction,
    ) -> Result<(), ForgeError>;

    async fn permission(&self, repo: &RepoName, user: &str) -> Result<Permission, ForgeError>;

    /// Merges the pull request (automerge). A forge's refusal (not mergeable, head moved) is
    /// `Rejected` with the forge's own message.
    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: u64,
        request: &MergeRequest<'_>,
    ) -> Result<Merged, ForgeError>;

    /// The `Authorization` header value git should send when fetching (a fresh installation
    /// token for GitHub Apps). `None`: fetch without credentials.
    async fn git_auth_header(&self) -> Result<Option<SecretString>, ForgeError>;
}

/// Refuses a comment body over `max` characters before it is sent.
pub(crate) fn check_comment_size(op: &str, body: &str, max: usize) -> Result<(), ForgeError> {
    let len = body.chars().count();
    if len > max {
        return Err(ForgeError::Rejected {
            op: op.to_owned(),
            message: format!(
                "comment is {len} characters and the forge accepts at most {max}; split it into several comments"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_contexts_follow_atlantis_names() {
        let s = CommitStatus::project(
            StatusKind::Plan,
            "envs/a",
            "default",
            StatusState::Pending,
            "",
        );
        assert_eq!(s.context, "atlantis/plan: envs/a/default");
        let s = CommitStatus::aggregate(StatusKind::Apply, StatusState::Success, "");
        assert_eq!(s.context, "atlantis/apply");
        let s = CommitStatus::named_project(StatusKind::Apply, "dev", StatusState::Success, "");
        assert_eq!(s.context, "atlantis/apply: dev");
    }

    #[test]
    fn long_status_description_is_cut_to_140_characters() {
        let s = CommitStatus::aggregate(StatusKind::Plan, StatusState::Failure, &"é".repeat(300));
        assert_eq!(s.short_description().chars().count(), 140);
        assert!(s.short_description().ends_with('…'));
    }

    #[test]
    fn write_or_admin_may_apply() {
        assert!(Permission::from_word("maintain").can_apply());
        assert!(Permission::from_word("owner").can_apply());
        assert!(!Permission::from_word("triage").can_apply());
        assert!(!Permission::from_word("bogus").can_apply());
    }

    #[test]
    fn comment_over_the_limit_is_refused_with_a_next_step() {
        assert!(check_comment_size("c", &"x".repeat(10), 10).is_ok());
        let err = check_comment_size("c", &"é".repeat(11), 10).expect_err("over the limit");
        assert!(err.to_string().contains("split it"));
    }
}
