//! GitHub REST response shapes, lenient (`Option` for anything that may be null or absent),
//! and their mapping onto the forge-neutral types.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::api::{ChangedFile, ForgeError, Mergeable, PrState, PullDetails};
use super::names::CommitSha;
use super::reviews::{ReviewRecord, Verdict};

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
    #[serde(default)]
    pub title: Option<String>,
    pub draft: Option<bool>,
    pub merged: Option<bool>,
    pub mergeable: Option<bool>,
    pub mergeable_state: Option<String>,
    pub user: Option<User>,
    pub head: Branch,
    pub base: Branch,
}

impl Pull {
    pub(super) fn into_details(self, op: &str) -> Result<PullDetails, ForgeError> {
        let sha = |s: &str| {
            CommitSha::parse(s).map_err(|e| ForgeError::Rejected {
                op: op.to_owned(),
                message: e.to_string(),
            })
        };
        let draft = self.draft.unwrap_or(false);
        let state = match (self.state.as_str(), self.merged.unwrap_or(false)) {
            (_, true) => PrState::Merged,
            ("open", _) => PrState::Open,
            _ => PrState::Closed,
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
            .ok_or_else(|| ForgeError::Rejected {
                op: op.to_owned(),
                message: "the pull request has no clone URL (head and base repository missing)"
                    .to_owned(),
            })?;
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
            mergeable: mergeable(draft, self.mergeable, self.mergeable_state.as_deref()),
            base_clone_url: base_clone_url.unwrap_or_else(|| clone_url.clone()),
            clone_url,
            from_fork: super::is_fork(head_repo.as_deref(), base_repo.as_deref()),
            head_repo,
        })
    }
}

/// Atlantis's rule: mergeable iff not a draft and `mergeable_state` is clean, unstable or
/// has_hooks; `mergeable: null` means GitHub is still computing.
fn mergeable(draft: bool, flag: Option<bool>, state: Option<&str>) -> Mergeable {
    let no = |reason: &str| Mergeable::No {
        reason: reason.to_owned(),
    };
    if draft {
        return no("the pull request is a draft");
    }
    match (flag, state) {
        (None, _) | (Some(true), None | Some("unknown")) => Mergeable::Unknown,
        (Some(false), _) | (_, Some("dirty")) => no("it has conflicts with the base branch"),
        (Some(true), Some("clean" | "unstable" | "has_hooks")) => Mergeable::Yes,
        (Some(true), Some("blocked")) => {
            no("branch protection blocks merging (required reviews or status checks)")
        }
        (Some(true), Some("behind")) => no("the head branch is behind the base branch"),
        (Some(true), Some("draft")) => no("the pull request is a draft"),
        (Some(true), Some(other)) => Mergeable::No {
            reason: format!("GitHub reports mergeable_state {other:?}"),
        },
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
            previous_path: self.previous_filename,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct Review {
    pub id: u64,
    pub state: String,
    pub user: Option<User>,
}

impl Review {
    pub(super) fn into_record(self) -> ReviewRecord {
        let verdict = match self.state.to_ascii_uppercase().as_str() {
            "APPROVED" => Verdict::Approved,
            "CHANGES_REQUESTED" => Verdict::ChangesRequested,
            "DISMISSED" => Verdict::Dismissed,
            _ => Verdict::Neutral,
        };
        ReviewRecord {
            id: self.id,
            user: self.user.map(|u| u.login).unwrap_or_default(),
            verdict,
            dismissed: false,
            stale: false,
            // GitHub lets anyone who can read the repository approve: the client checks each
            // approver's permission.
            official: None,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct Comment {
    pub id: u64,
    pub node_id: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct PermissionBody {
    pub permission: String,
}

#[derive(Deserialize)]
struct GraphqlReply {
    #[serde(default)]
    errors: Vec<GraphqlError>,
}

#[derive(Deserialize)]
struct GraphqlError {
    message: String,
}

/// A GraphQL reply is a 200 even when it failed: read its `errors`.
pub(super) fn check_graphql(op: &str, body: &[u8]) -> Result<(), ForgeError> {
    let reply: GraphqlReply =
        serde_json::from_slice(body).map_err(|e| super::http_errors::bad_body(op, &e))?;
    match reply.errors.first() {
        None => Ok(()),
        Some(first) => Err(ForgeError::Rejected {
            op: op.to_owned(),
            message: first.message.chars().take(300).collect(),
        }),
    }
}

/// A user name as one URL path segment.
pub(super) fn path_segment(value: &str) -> String {
    utf8_percent_encode(value, NON_ALPHANUMERIC).to_string()
}

/// `Basic base64(user:token)`, the header git sends for HTTPS token auth.
pub(crate) fn basic_auth(user: &str, token: &SecretString) -> SecretString {
    let pair = format!("{user}:{}", token.expose_secret());
    SecretString::from(format!("Basic {}", STANDARD.encode(pair)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mergeability_follows_atlantis_states() {
        assert_eq!(mergeable(false, None, None), Mergeable::Unknown);
        assert_eq!(
            mergeable(false, Some(true), Some("unknown")),
            Mergeable::Unknown
        );
        assert_eq!(mergeable(false, Some(true), Some("clean")), Mergeable::Yes);
        assert_eq!(
            mergeable(false, Some(true), Some("unstable")),
            Mergeable::Yes
        );
        assert!(matches!(
            mergeable(false, Some(false), Some("dirty")),
            Mergeable::No { .. }
        ));
        assert!(
            matches!(mergeable(false, Some(true), Some("blocked")), Mergeable::No { reason } if reason.contains("protection"))
        );
        assert!(
            matches!(mergeable(true, Some(true), Some("clean")), Mergeable::No { reason } if reason.contains("draft"))
        );
    }

    #[test]
    fn bot_logins_are_escaped_as_one_segment() {
        assert_eq!(path_segment("atoll[bot]"), "atoll%5Bbot%5D");
        assert_eq!(path_segment("../x"), "%2E%2E%2Fx");
    }
}
