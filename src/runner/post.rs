//! Posting comments and statuses: bodies split at the forge's limit and cut to
//! `commands.max_reply_comments` comments (the rest goes to the job's log, and a note linking
//! it ends the last comment); a failed post is logged to the job and returned, never silently
//! dropped.

use anyhow::Context as _;

use super::Job;
use crate::forge::{CommentId, CommitSha, CommitStatus};
use crate::render::comment::{Capped, split_capped};
use crate::render::notice::{self, JobRef};

/// The most of a cut reply's remainder written to the job's log, in characters.
const LOG_OMITTED_MAX: usize = 1 << 20;
/// Characters per log line when the remainder is logged.
const LOG_CHUNK: usize = 8_192;

impl Job {
    /// Posts `body` as one or more comments (split at the forge limit); returns the first id.
    pub(crate) async fn comment(&self, body: &str) -> anyhow::Result<CommentId> {
        let ids = self.comment_parts(body).await?;
        ids.first().copied().context("nothing to post")
    }

    /// Posts `body` split at the forge limit, at most `max_parts` comments; returns every
    /// part's id, in order.
    async fn comment_parts(&self, body: &str) -> anyhow::Result<Vec<CommentId>> {
        let parts = self.capped(body, self.max_parts, true).await;
        let mut ids = Vec::with_capacity(parts.len());
        for part in &parts {
            let id = self
                .forge
                .create_comment(&self.name, self.pr.number, part)
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
            .plans()
            .plan_comments_replace(&self.repo(), self.pr.number, &raw)
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

    /// Replaces a comment's body (apply progress); cut to one comment, with the note, if it
    /// grew too long (the job's log has every guest's progress line).
    pub(crate) async fn edit(&self, id: CommentId, body: &str) -> anyhow::Result<()> {
        let parts = self.capped(body, 1, false).await;
        let first = parts.first().map_or(body, String::as_str);
        self.forge
            .edit_comment(&self.name, id, first)
            .await
            .context("editing the PR comment")
    }

    /// `body` split at the forge's limit into at most `max_parts` comments; when cut, the note
    /// marks where text was left out and (`log_rest`) that text is written to the job's log.
    async fn capped(&self, body: &str, max_parts: usize, log_rest: bool) -> Vec<String> {
        let id = self.ctx.job().id.to_string();
        let job = JobRef {
            id: &id,
            link: self.page.as_deref(),
        };
        let reserve = notice::reply_truncated(max_parts, usize::MAX, usize::MAX, job)
            .chars()
            .count();
        let Capped {
            mut parts,
            total,
            omitted,
            cut_after,
        } = split_capped(body, self.forge.max_comment_chars(), max_parts, reserve);
        if total <= parts.len() {
            return parts;
        }
        let omitted_chars = omitted.chars().count();
        self.step(&format!(
            "reply cut to {} of {total} comments ({omitted_chars} characters left out)",
            parts.len()
        ))
        .await;
        if log_rest {
            self.log_omitted(&omitted).await;
        }
        let note = notice::reply_truncated(parts.len(), total, omitted_chars, job);
        if let Some(part) = parts.get_mut(cut_after) {
            part.push_str(&note);
        }
        parts
    }

    /// Writes what a cut reply left out to the job's log, in chunks, up to a bound.
    async fn log_omitted(&self, omitted: &str) {
        let mut written = 0usize;
        let mut rest = omitted;
        while !rest.is_empty() {
            if written >= LOG_OMITTED_MAX {
                let left = rest.chars().count();
                self.step(&format!("(reply: {left} more characters not kept)"))
                    .await;
                return;
            }
            let cut = rest
                .char_indices()
                .nth(LOG_CHUNK)
                .map_or(rest.len(), |(at, _)| at);
            let (chunk, tail) = rest.split_at(cut);
            self.step(&format!("reply: {chunk}")).await;
            written += LOG_CHUNK;
            rest = tail;
        }
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
