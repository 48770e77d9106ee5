//! The scripting API tests use to drive a fake forge: repositories, pull requests, commits,
//! reviews, comments, merges. Every event a real forge would announce is sent as a webhook.

use std::collections::BTreeMap;

use super::state::{FakeReview, Pr, Repo};
use super::{FakeError, FakeForge, git, gitea_payloads as gitea, github_payloads as github, hooks};
use model::ForgeKind;

/// What a reviewer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewAction {
    Approve,
    RequestChanges,
    Comment,
}

/// A webhook: `(X-*-Event, X-Gitea-Event-Type, payload)`.
pub(super) type HookPayload = (String, Option<String>, serde_json::Value);

/// A PR event, for the payload builders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PrEvent<'a> {
    Opened,
    /// New commits; `before` is the old head.
    Pushed {
        before: &'a str,
    },
    Reopened,
    Closed,
}

fn script(msg: impl Into<String>) -> FakeError {
    FakeError::Script(msg.into())
}

impl FakeForge {
    /// Creates `owner/name` with a bare git repository whose `main` holds a README.
    pub async fn create_repo(&self, full: &str) -> Result<String, FakeError> {
        let (owner, name) = full
            .split_once('/')
            .ok_or_else(|| script(format!("repository {full:?} is not owner/name")))?;
        let bare = self
            .shared
            .git_root
            .path()
            .join(owner)
            .join(format!("{name}.git"));
        let sha = git::init_bare(&bare, "main").await?;
        let repo = Repo {
            id: self.shared.state().next_id(),
            bare,
            fork_of: None,
            default_branch: "main".to_owned(),
            default_sha: sha,
            prs: BTreeMap::new(),
            next_number: 1,
        };
        let url = clone_url(&repo);
        self.shared.state().repos.insert(full.to_owned(), repo);
        Ok(url)
    }

    /// The `file://` clone URL of a repository.
    pub fn clone_url(&self, full: &str) -> Result<String, FakeError> {
        let state = self.shared.state();
        state
            .repo(full)
            .map(clone_url)
            .map_err(|f| script(f.message))
    }

    /// Opens a PR from a new branch with one commit writing `files`; sends `opened`.
    pub async fn open_pr(
        &self,
        full: &str,
        author: &str,
        branch: &str,
        files: &[(&str, &str)],
    ) -> Result<u64, FakeError> {
        self.open_pr_from(full, None, author, branch, files, &[])
            .await
    }

    /// [`Self::open_pr`], the commit also adding symbolic links (`(path, target)`).
    pub async fn open_pr_with_links(
        &self,
        full: &str,
        author: &str,
        branch: &str,
        files: &[(&str, &str)],
        links: &[(&str, &str)],
    ) -> Result<u64, FakeError> {
        self.open_pr_from(full, None, author, branch, files, links)
            .await
    }

    /// Opens a PR whose head branch lives in `fork_owner`'s fork of `full` (forked now if it
    /// does not exist yet), as anyone with read access can: the API and the payloads report the
    /// fork as the head repository, and the base repository gets `refs/pull/N/head` as on
    /// GitHub. Sends `opened`.
    pub async fn open_fork_pr(
        &self,
        full: &str,
        fork_owner: &str,
        author: &str,
        branch: &str,
        files: &[(&str, &str)],
    ) -> Result<u64, FakeError> {
        let fork = self.fork(full, fork_owner).await?;
        self.open_pr_from(full, Some(&fork), author, branch, files, &[])
            .await
    }

    /// `owner`'s fork of `full` (`owner/name`), created with the base's branches if missing.
    async fn fork(&self, full: &str, owner: &str) -> Result<String, FakeError> {
        let (_, name) = full
            .split_once('/')
            .ok_or_else(|| script(format!("repository {full:?} is not owner/name")))?;
        let fork = format!("{owner}/{name}");
        let (base_bare, default_sha, exists) = {
            let st = self.shared.state();
            let base = st.repo(full).map_err(|f| script(f.message))?;
            (
                base.bare.clone(),
                base.default_sha.clone(),
                st.repos.contains_key(&fork),
            )
        };
        if exists {
            return Ok(fork);
        }
        let bare = self
            .shared
            .git_root
            .path()
            .join(owner)
            .join(format!("{name}.git"));
        git::init_empty(&bare).await?;
        git::fetch(&bare, &base_bare, "+refs/heads/*:refs/heads/*").await?;
        let repo = Repo {
            id: self.shared.state().next_id(),
            bare,
            fork_of: Some(full.to_owned()),
            default_branch: "main".to_owned(),
            default_sha,
            prs: BTreeMap::new(),
            next_number: 1,
        };
        self.shared.state().repos.insert(fork.clone(), repo);
        Ok(fork)
    }

    async fn open_pr_from(
        &self,
        full: &str,
        fork: Option<&str>,
        author: &str,
        branch: &str,
        files: &[(&str, &str)],
        links: &[(&str, &str)],
    ) -> Result<u64, FakeError> {
        let (base_bare, base_sha, base_ref, number) = {
            let mut state = self.shared.state();
            let repo = state
                .repos
                .get_mut(full)
                .ok_or_else(|| script(format!("no repository {full}")))?;
            let number = repo.next_number;
            repo.next_number += 1;
            (
                repo.bare.clone(),
                repo.default_sha.clone(),
                repo.default_branch.clone(),
                number,
            )
        };
        let head_bare = self.head_bare(full, fork)?;
        let head = git::commit_with_links(
            &head_bare,
            Some(&base_sha),
            files,
            links,
            branch,
            &format!("refs/heads/{branch}"),
        )
        .await?;
        publish_head(&base_bare, &head_bare, number, branch, &head).await?;
        let pr = Pr {
            number,
            title: branch.to_owned(),
            author: author.to_owned(),
            head_ref: branch.to_owned(),
            head_sha: head,
            base_ref,
            base_sha,
            open: true,
            merged: false,
            draft: false,
            mergeable: Some(true),
            mergeable_state: "clean".to_owned(),
            files: files
                .iter()
                .chain(links)
                .map(|(p, _)| ((*p).to_owned(), None))
                .collect(),
            reviews: Vec::new(),
            merged_with: None,
            head_repo: fork.map(str::to_owned),
        };
        self.with_repo(full, |repo| {
            repo.prs.insert(number, pr);
            Ok(())
        })?;
        self.send_pr(full, number, PrEvent::Opened).await?;
        Ok(number)
    }

    /// The bare repository a PR's head branch is written to: the fork's, else the base's.
    fn head_bare(&self, full: &str, fork: Option<&str>) -> Result<std::path::PathBuf, FakeError> {
        let st = self.shared.state();
        st.repo(fork.unwrap_or(full))
            .map(|r| r.bare.clone())
            .map_err(|f| script(f.message))
    }

    /// Pushes a commit writing `files` on top of the PR head; sends the sync event.
    pub async fn push(
        &self,
        full: &str,
        pr: u64,
        files: &[(&str, &str)],
    ) -> Result<String, FakeError> {
        self.push_on(full, pr, files, false).await
    }

    /// Force-pushes: the head becomes one new commit on the base writing `files`.
    pub async fn force_push(
        &self,
        full: &str,
        pr: u64,
        files: &[(&str, &str)],
    ) -> Result<String, FakeError> {
        self.push_on(full, pr, files, true).await
    }

    async fn push_on(
        &self,
        full: &str,
        number: u64,
        files: &[(&str, &str)],
        force: bool,
    ) -> Result<String, FakeError> {
        let (bare, parent, branch, before, fork) = self.with_pr(full, number, |repo, pr| {
            let parent = if force {
                pr.base_sha.clone()
            } else {
                pr.head_sha.clone()
            };
            Ok((
                repo.bare.clone(),
                parent,
                pr.head_ref.clone(),
                pr.head_sha.clone(),
                pr.head_repo.clone(),
            ))
        })?;
        let head_bare = self.head_bare(full, fork.as_deref())?;
        let sha = git::commit(
            &head_bare,
            Some(&parent),
            files,
            "push",
            &format!("refs/heads/{branch}"),
        )
        .await?;
        publish_head(&bare, &head_bare, number, &branch, &sha).await?;
        let gitea = self.shared.kind == ForgeKind::Gitea;
        self.with_pr(full, number, |_, pr| {
            pr.head_sha.clone_from(&sha);
            if force {
                pr.files.clear();
            }
            for (path, _) in files {
                if !pr.files.iter().any(|(p, _)| p == path) {
                    pr.files.push(((*path).to_owned(), None));
                }
            }
            // Gitea marks every review made on an older head stale.
            for review in pr
                .reviews
                .iter_mut()
                .filter(|r| gitea && r.commit_id != sha)
            {
                review.stale = true;
            }
            Ok(())
        })?;
        self.send_pr(full, number, PrEvent::Pushed { before: &before })
            .await?;
        Ok(sha)
    }

    /// Submits a review on the current head; sends the review event. Returns the review id.
    pub async fn review(
        &self,
        full: &str,
        pr: u64,
        user: &str,
        action: ReviewAction,
    ) -> Result<u64, FakeError> {
        let id = self.shared.state().next_id();
        let state = match action {
            ReviewAction::Approve => "APPROVED",
            ReviewAction::RequestChanges => "CHANGES_REQUESTED",
            ReviewAction::Comment => "COMMENTED",
        };
        let review = self.with_pr(full, pr, |_, p| {
            let review = FakeReview {
                id,
                user: user.to_owned(),
                state: state.to_owned(),
                commit_id: p.head_sha.clone(),
                dismissed: false,
                stale: false,
            };
            p.reviews.push(review.clone());
            Ok(review)
        })?;
        let (event, kind, payload) = {
            let st = self.shared.state();
            match self.shared.kind {
                ForgeKind::Github => github::review_event(&self.shared, &st, full, pr, &review),
                ForgeKind::Gitea => gitea::review_event(&self.shared, &st, full, pr, &review),
            }
            .map_err(|f| script(f.message))?
        };
        hooks::deliver(&self.shared, &event, kind.as_deref(), &payload).await?;
        Ok(id)
    }

    /// Dismisses a review (GitHub: its state becomes `DISMISSED`; Gitea: `dismissed` is set).
    pub fn dismiss_review(&self, full: &str, pr: u64, review_id: u64) -> Result<(), FakeError> {
        let github = self.shared.kind == ForgeKind::Github;
        self.with_pr(full, pr, |_, p| {
            let r = p
                .reviews
                .iter_mut()
                .find(|r| r.id == review_id)
                .ok_or_else(|| script(format!("no review {review_id} on {full}#{pr}")))?;
            r.dismissed = true;
            if github {
                r.state = "DISMISSED".to_owned();
            }
            Ok(())
        })
    }

    /// A user comments on the PR; sends the comment event. Returns the comment id.
    pub async fn comment(
        &self,
        full: &str,
        pr: u64,
        author: &str,
        body: &str,
    ) -> Result<u64, FakeError> {
        let (comment, event) = {
            let mut st = self.shared.state();
            let comment = st
                .add_comment(full, pr, author, body)
                .map_err(|f| script(f.message))?;
            let event = match self.shared.kind {
                ForgeKind::Github => github::comment_event(&self.shared, &st, full, &comment),
                ForgeKind::Gitea => gitea::comment_event(&self.shared, &st, full, &comment),
            }
            .map_err(|f| script(f.message))?;
            (comment, event)
        };
        let (name, kind, payload) = event;
        hooks::deliver(&self.shared, &name, kind.as_deref(), &payload).await?;
        Ok(comment.id)
    }

    /// Merges the PR into its base; sends `closed` with `merged: true`.
    pub async fn merge(&self, full: &str, pr: u64) -> Result<(), FakeError> {
        let (bare, base_ref, head) = self.with_pr(full, pr, |repo, p| {
            if !p.open {
                return Err(script(format!("{full}#{pr} is not open")));
            }
            p.open = false;
            p.merged = true;
            Ok((repo.bare.clone(), p.base_ref.clone(), p.head_sha.clone()))
        })?;
        git::set_ref(&bare, &format!("refs/heads/{base_ref}"), &head).await?;
        self.with_repo(full, |repo| {
            repo.default_sha.clone_from(&head);
            Ok(())
        })?;
        self.send_pr(full, pr, PrEvent::Closed).await
    }

    /// Closes the PR without merging; sends `closed` with `merged: false`.
    pub async fn close(&self, full: &str, pr: u64) -> Result<(), FakeError> {
        self.with_pr(full, pr, |_, p| {
            p.open = false;
            Ok(())
        })?;
        self.send_pr(full, pr, PrEvent::Closed).await
    }

    /// Reopens a closed, unmerged PR; sends `reopened`.
    pub async fn reopen(&self, full: &str, pr: u64) -> Result<(), FakeError> {
        self.with_pr(full, pr, |_, p| {
            if p.merged {
                return Err(script(format!("{full}#{pr} is merged")));
            }
            p.open = true;
            Ok(())
        })?;
        self.send_pr(full, pr, PrEvent::Reopened).await
    }

    /// Sets what the API reports as mergeability (`None`: still computing, GitHub only).
    pub fn set_mergeable(
        &self,
        full: &str,
        pr: u64,
        mergeable: Option<bool>,
        state: &str,
    ) -> Result<(), FakeError> {
        self.with_pr(full, pr, |_, p| {
            p.mergeable = mergeable;
            state.clone_into(&mut p.mergeable_state);
            Ok(())
        })
    }

    /// Marks the PR as a draft or ready (no webhook: tests of the API view).
    pub fn set_draft(&self, full: &str, pr: u64, draft: bool) -> Result<(), FakeError> {
        self.with_pr(full, pr, |_, p| {
            p.draft = draft;
            Ok(())
        })
    }

    /// Replaces the changed-file list (`(path, previous_path)`), e.g. to script renames.
    pub fn set_files(
        &self,
        full: &str,
        pr: u64,
        files: Vec<(String, Option<String>)>,
    ) -> Result<(), FakeError> {
        self.with_pr(full, pr, |_, p| {
            p.files = files;
            Ok(())
        })
    }

    /// The PR's current head commit.
    pub fn head_sha(&self, full: &str, pr: u64) -> Result<String, FakeError> {
        self.with_pr(full, pr, |_, p| Ok(p.head_sha.clone()))
    }

    async fn send_pr(&self, full: &str, pr: u64, event: PrEvent<'_>) -> Result<(), FakeError> {
        let (name, kind, payload) = {
            let st = self.shared.state();
            match self.shared.kind {
                ForgeKind::Github => github::pr_event(&self.shared, &st, full, pr, event),
                ForgeKind::Gitea => gitea::pr_event(&self.shared, &st, full, pr, event),
            }
            .map_err(|f| script(f.message))?
        };
        hooks::deliver(&self.shared, &name, kind.as_deref(), &payload)
            .await
            .map(drop)
    }

    fn with_repo<T>(
        &self,
        full: &str,
        f: impl FnOnce(&mut Repo) -> Result<T, FakeError>,
    ) -> Result<T, FakeError> {
        let mut st = self.shared.state();
        let repo = st
            .repos
            .get_mut(full)
            .ok_or_else(|| script(format!("no repository {full}")))?;
        f(repo)
    }

    fn with_pr<T>(
        &self,
        full: &str,
        pr: u64,
        f: impl FnOnce(&Repo, &mut Pr) -> Result<T, FakeError>,
    ) -> Result<T, FakeError> {
        self.with_repo(full, |repo| {
            let mut p = repo
                .prs
                .get(&pr)
                .cloned()
                .ok_or_else(|| script(format!("no pull request {full}#{pr}")))?;
            let out = f(repo, &mut p)?;
            repo.prs.insert(pr, p);
            Ok(out)
        })
    }
}

/// Points the base repository's `refs/pull/N/head` at the PR head, fetching it from the fork
/// first when the head lives there.
async fn publish_head(
    base: &std::path::Path,
    head: &std::path::Path,
    number: u64,
    branch: &str,
    sha: &str,
) -> Result<(), FakeError> {
    let pull_ref = format!("refs/pull/{number}/head");
    if base == head {
        return git::set_ref(base, &pull_ref, sha).await;
    }
    git::fetch(base, head, &format!("+refs/heads/{branch}:{pull_ref}")).await
}

pub(super) fn clone_url(repo: &Repo) -> String {
    format!("file://{}", repo.bare.display())
}
