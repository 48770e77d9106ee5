//! Posting comments and statuses: bodies split at the forge's limit; a failed post is logged
//! to the job and returned, never silently dropped.

use anyhow::Context as _;

use super::Job;
use crate::forge::{CommentId, CommitSha, CommitStatus};
use crate::render::comment::split;

impl Job {
    /// Posts `body` as one or more comments (split at the forge limit); returns the first id.
    pub(crate) async fn comment(&self, body: &str) -> anyhow::Result<CommentId> {
        let ids = self.comment_parts(body).await?;
        ids.first().copied().context("nothing to post")
    }

    /// Posts `body` split at the forge limit; returns every part's id, in order.
    async fn comment_parts(&self, body: &str) -> anyhow::Result<Vec<CommentId>> {
        let parts = split(body, self.forge.max_comment_chars());
        let mut ids = Vec::with_capacity(parts.len());
        for part in &parts {
            let id = self
                .forge
                .create_comment(&self.name, self.payload.pr, part)
                .await
                .context("posting the PR comment")?;
            ids.push(id);
        }
        Ok(ids)
    }

    /// Posts a plan comment and hides this PR's previous plan comments (superseded), which the
    /// store remembers across restarts. A failure to record or hide is logged to the job; the
    /// new plan is posted regardless.
    pub(crate) async fn plan_comment(
        &self,
        runner: &super::Runner,
        body: &str,
    ) -> anyhow::Result<CommentId> {
        let ids = self.comment_parts(body).await?;
        let first = ids.first().copied().context("nothing to post")?;
        let raw: Vec<u64> = ids.iter().map(|id| id.0).collect();
        let previous = match runner
            .store
            .plan_comments_replace(&self.payload.repo, self.payload.pr, &raw)
            .await
        {
            Ok(previous) => previous,
            Err(e) => {
                self.step(&format!("recording the plan comment failed: {e}"))
                    .await;
                Vec::new()
            }
        };
        for old in previous.into_iter().map(CommentId) {
            if let Err(e) = self
                .forge
                .hide_comment(&self.name, old, "an older plan")
                .await
            {
                self.step(&format!("hiding superseded plan comment {old} failed: {e}"))
                    .await;
            }
        }
        Ok(first)
    }

    /// Replaces a comment's body (apply progress); the first part only if it grew too long.
    pub(crate) async fn edit(&self, id: CommentId, body: &str) -> anyhow::Result<()> {
        let parts = split(body, self.forge.max_comment_chars());
        let first = parts.first().map_or(body, String::as_str);
        self.forge
            .edit_comment(&self.name, id, first)
            .await
            .context("editing the PR comment")
    }

    /// Sets a commit status linking to this job's page (when `server.public_url` is set); a
    /// failure is logged, not fatal (the comment carries the result).
    pub(crate) async fn status(&self, sha: &CommitSha, status: &CommitStatus) {
        let mut status = status.clone();
        if status.target_url.is_none() {
            status.target_url.clone_from(&self.page);
        }
        if let Err(e) = self.forge.set_status(&self.name, sha, &status).await {
            self.step(&format!("setting status {} failed: {e}", status.context))
                .await;
        }
    }
}
