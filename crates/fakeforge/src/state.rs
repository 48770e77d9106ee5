//! The fake forge's memory: repositories, pull requests, comments (with edit history, minimized
//! flags and reactions), reviews, statuses, permissions and tokens. Plain data; the HTTP
//! handlers and the scripting API both go through these methods.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;

/// A request failure the fake answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fault {
    pub status: u16,
    pub message: String,
}

impl Fault {
    pub(super) fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    fn not_found(what: &str) -> Self {
        Self::new(404, format!("{what} not found"))
    }
}

/// A failure to inject into the next API request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFailure {
    pub status: u16,
    pub retry_after: Option<u64>,
    pub message: String,
}

/// A comment as the fake stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeComment {
    pub id: u64,
    pub pr: u64,
    pub author: String,
    pub body: String,
    /// Earlier bodies, oldest first.
    pub history: Vec<String>,
    /// GitHub `minimizeComment` classifier, once minimized.
    pub minimized: Option<String>,
    /// `(user, content)`.
    pub reactions: Vec<(String, String)>,
}

/// A review as the fake stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeReview {
    pub id: u64,
    pub user: String,
    /// GitHub's upper-case state words (`APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`,
    /// `DISMISSED`); the Gitea view maps them.
    pub state: String,
    pub commit_id: String,
    pub dismissed: bool,
    pub stale: bool,
}

/// A commit status as the fake stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeStatus {
    pub sha: String,
    pub context: String,
    pub state: String,
    pub description: String,
    pub target_url: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) struct Pr {
    pub number: u64,
    pub title: String,
    pub author: String,
    pub head_ref: String,
    pub head_sha: String,
    pub base_ref: String,
    pub base_sha: String,
    pub open: bool,
    pub merged: bool,
    pub draft: bool,
    pub mergeable: Option<bool>,
    pub mergeable_state: String,
    /// `(filename, previous_filename)`.
    pub files: Vec<(String, Option<String>)>,
    pub reviews: Vec<FakeReview>,
    /// The fork (`owner/name`) the head branch lives in; `None`: the base repository.
    pub head_repo: Option<String>,
    /// The method of a merge made through the API (`merge`, `squash`, `rebase`).
    pub merged_with: Option<String>,
}

#[derive(Debug)]
pub(super) struct Repo {
    /// The repository id both forges put in payloads (`repository.id`, Gitea `repo_id`).
    pub id: u64,
    pub bare: PathBuf,
    /// The repository this one was forked from (`owner/name`).
    pub fork_of: Option<String>,
    pub default_branch: String,
    /// The default branch's head commit.
    pub default_sha: String,
    pub prs: BTreeMap<u64, Pr>,
    pub next_number: u64,
}

#[derive(Debug, Default)]
pub(super) struct State {
    next_id: u64,
    pub repos: BTreeMap<String, Repo>,
    pub comments: BTreeMap<u64, (String, FakeComment)>,
    pub statuses: Vec<(String, FakeStatus)>,
    /// `(repo, user) -> permission word`.
    pub permissions: HashMap<(String, String), String>,
    pub tokens: HashSet<String>,
    /// Whose token each one is (the comment author for API writes).
    pub token_users: HashMap<String, String>,
    pub minted_tokens: u32,
    /// The fake Gitea's comment size limit (`set_max_comment_chars`); `None`: unlimited.
    pub max_comment_chars: Option<usize>,
    pub failures: VecDeque<InjectedFailure>,
    /// `METHOD path?query`, every API request in arrival order.
    pub requests: Vec<String>,
}

impl State {
    pub(super) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(super) fn repo(&self, full: &str) -> Result<&Repo, Fault> {
        self.repos
            .get(full)
            .ok_or_else(|| Fault::not_found("repository"))
    }

    pub(super) fn pr(&self, full: &str, number: u64) -> Result<&Pr, Fault> {
        self.repo(full)?
            .prs
            .get(&number)
            .ok_or_else(|| Fault::not_found("pull request"))
    }

    pub(super) fn add_comment(
        &mut self,
        full: &str,
        pr: u64,
        author: &str,
        body: &str,
    ) -> Result<FakeComment, Fault> {
        self.pr(full, pr)?;
        let id = self.next_id();
        let comment = FakeComment {
            id,
            pr,
            author: author.to_owned(),
            body: body.to_owned(),
            history: Vec::new(),
            minimized: None,
            reactions: Vec::new(),
        };
        self.comments.insert(id, (full.to_owned(), comment.clone()));
        Ok(comment)
    }

    pub(super) fn comment_mut(&mut self, full: &str, id: u64) -> Result<&mut FakeComment, Fault> {
        match self.comments.get_mut(&id) {
            Some((repo, c)) if repo == full => Ok(c),
            _ => Err(Fault::not_found("comment")),
        }
    }

    pub(super) fn edit_comment(
        &mut self,
        full: &str,
        id: u64,
        body: &str,
    ) -> Result<FakeComment, Fault> {
        let c = self.comment_mut(full, id)?;
        let old = std::mem::replace(&mut c.body, body.to_owned());
        c.history.push(old);
        Ok(c.clone())
    }

    /// GitHub's node id for a comment.
    pub(super) fn node_id(id: u64) -> String {
        format!("IC_fake{id}")
    }

    pub(super) fn minimize(&mut self, node_id: &str, classifier: &str) -> Result<(), Fault> {
        let id = node_id
            .strip_prefix("IC_fake")
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| {
                Fault::new(
                    200,
                    format!("Could not resolve to a node with the global id of '{node_id}'"),
                )
            })?;
        let (_, c) = self.comments.get_mut(&id).ok_or_else(|| {
            Fault::new(
                200,
                format!("Could not resolve to a node with the global id of '{node_id}'"),
            )
        })?;
        c.minimized = Some(classifier.to_owned());
        Ok(())
    }

    /// Adds a reaction; `false` when that user already reacted with it.
    pub(super) fn react(
        &mut self,
        full: &str,
        id: u64,
        user: &str,
        content: &str,
    ) -> Result<bool, Fault> {
        let c = self.comment_mut(full, id)?;
        let pair = (user.to_owned(), content.to_owned());
        if c.reactions.contains(&pair) {
            return Ok(false);
        }
        c.reactions.push(pair);
        Ok(true)
    }

    pub(super) fn add_status(&mut self, full: &str, status: FakeStatus) -> Result<(), Fault> {
        self.repo(full)?;
        if !matches!(
            status.state.as_str(),
            "pending" | "success" | "failure" | "error"
        ) {
            return Err(Fault::new(
                422,
                format!("state {:?} is not valid", status.state),
            ));
        }
        self.statuses.push((full.to_owned(), status));
        Ok(())
    }

    pub(super) fn permission(&self, full: &str, user: &str) -> Result<String, Fault> {
        self.repo(full)?;
        Ok(self
            .permissions
            .get(&(full.to_owned(), user.to_owned()))
            .cloned()
            .unwrap_or_else(|| "read".to_owned()))
    }

    /// Applies the paging of a list: 1-based `page`, `per_page` items.
    pub(super) fn page<T: Clone>(items: &[T], page: usize, per_page: usize) -> (Vec<T>, bool) {
        let start = page.saturating_sub(1).saturating_mul(per_page);
        let slice: Vec<T> = items.iter().skip(start).take(per_page).cloned().collect();
        let more = start.saturating_add(per_page) < items.len();
        (slice, more)
    }
}
