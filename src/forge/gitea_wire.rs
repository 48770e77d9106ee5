//! Gitea/Forgejo REST response shapes, lenient (older Gitea and Forgejo drift in optional
//! fields), and their mapping onto the forge-neutral types.

use serde::Deserialize;

use super::api::{ChangedFile, ForgeError, Mergeable, PrState, PullDetails};
use super::names::CommitSha;
use super::reviews::{ReviewRecord, Verdict};

/// The marker that opens a folded comment; a comment starting with it is already hidden.
const SUPERSEDED_OPEN: &str = "<details><summary>Superseded";

#[derive(Deserialize)]
pub(super) struct User {
    pub login: String,
}

#[derive(Deserialize)]
pub(super) struct BranchRepo {
    pub clone_url: Option<String>,
    #[serde(default)]
    pub full_name: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Branch {
    #[serde(rename = "ref")]
    pub name: String,
    pub sha: String,
    pub repo: Option<BranchRepo>,
}

#[derive(Deserialize)]
pub(super) struct Pull {
    pub number: u64,
    pub state: String,
    pub title: Option<String>,
    pub draft: Option<bool>,
    pub merged: Option<bool>,
    pub mergeable: Option<bool>,
    pub user: Option<User>,
    pub head: Branch,
    pub base: Branch,
}

impl Pull {
    pub(super) fn into_details(self, op: &str) -> Result<PullDetails, ForgeError> {
        let rejected = |message: String| ForgeError::Rejected {
            op: op.to_owned(),
            message,
        };
        let sha = |s: &str| CommitSha::parse(s).map_err(|e| rejected(e.to_string()));
        let draft = self.draft.unwrap_or(false);
        let state = match (self.state.as_str(), self.merged.unwrap_or(false)) {
            (_, true) => PrState::Merged,
            ("open", _) => PrState::Open,
            _ => PrState::Closed,
        };
        let mergeable = match (draft, self.mergeable) {
            (true, _) => Mergeable::No {
                reason: "the pull request is a draft (work in progress)".to_owned(),
            },
            (false, Some(true)) => Mergeable::Yes,
            // Gitea reports false while its conflict check runs, too: it has no "unknown".
            (false, _) => Mergeable::No {
                reason: "Gitea reports it cannot be merged (conflicts, or a conflict check still running)"
                    .to_owned(),
            },
        };
        let full_name = |b: &Branch| b.repo.as_ref().and_then(|r| r.full_name.clone());
        let (head_repo, base_repo) = (full_name(&self.head), full_name(&self.base));
        let base_clone_url = [&self.base.repo, &self.head.repo]
            .into_iter()
            .flatten()
            .find_map(|r| r.clone_url.clone());
        let clone_url = [&self.head.repo, &self.base.repo]
            .into_iter()
            .flatten()
            .find_map(|r| r.clone_url.clone())
            .ok_or_else(|| rejected("the pull request has no clone URL".to_owned()))?;
        Ok(PullDetails {
            number: self.number,
            state,
            draft,
            author: self.user.map(|u| u.login).unwrap_or_default(),
            title: self.title.unwrap_or_default(),
            head_sha: sha(&self.head.sha)?,
            head_ref: self.head.name,
            base_ref: self.base.name,
            base_sha: sha(&self.base.sha)?,
            mergeable,
            base_clone_url: base_clone_url.unwrap_or_else(|| clone_url.clone()),
            clone_url,
            from_fork: super::is_fork(head_repo.as_deref(), base_repo.as_deref()),
            head_repo,
        })
    }
}

#[derive(Deserialize)]
pub(super) struct File {
    pub filename: String,
    pub previous_filename: Option<String>,
}

impl File {
    pub(super) fn into_changed(self) -> ChangedFile {
        ChangedFile {
            path: self.filename,
            previous_path: self.previous_filename.filter(|p| !p.is_empty()),
        }
    }
}

#[derive(Deserialize)]
pub(super) struct Review {
    pub id: u64,
    pub state: String,
    pub user: Option<User>,
    #[serde(default)]
    pub dismissed: bool,
    #[serde(default)]
    pub stale: bool,
    /// Absent on very old versions: then the reviewer's permission decides.
    pub official: Option<bool>,
}

impl Review {
    pub(super) fn into_record(self) -> ReviewRecord {
        let verdict = match self.state.to_ascii_uppercase().as_str() {
            "APPROVED" => Verdict::Approved,
            "REQUEST_CHANGES" => Verdict::ChangesRequested,
            _ => Verdict::Neutral,
        };
        ReviewRecord {
            id: self.id,
            user: self.user.map(|u| u.login).unwrap_or_default(),
            verdict,
            dismissed: self.dismissed,
            stale: self.stale,
            official: self.official,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct Comment {
    pub id: u64,
    pub body: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct PermissionBody {
    pub permission: String,
}

/// The body folded into a collapsed "Superseded" block, or `None` when it already is one.
pub(super) fn superseded(summary: &str, body: &str) -> Option<String> {
    if body.starts_with(SUPERSEDED_OPEN) {
        return None;
    }
    let summary: String = summary
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| match c {
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '&' => "&amp;".to_owned(),
            c => c.to_string(),
        })
        .collect();
    Some(format!(
        "{SUPERSEDED_OPEN}: {summary}</summary>\n\n{body}\n\n</details>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superseded_comment_is_folded_once_with_an_escaped_summary() {
        let folded = superseded("plan <b>", "old plan").expect("not yet folded");
        assert_eq!(
            folded,
            "<details><summary>Superseded: plan &lt;b&gt;</summary>\n\nold plan\n\n</details>"
        );
        assert_eq!(superseded("plan", &folded), None);
    }
}
