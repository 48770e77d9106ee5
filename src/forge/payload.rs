//! Wire shapes both forges' webhook payloads share (GitHub's and Gitea's pull-request objects
//! use the same field names for what atoll reads): lenient structs, unknown fields ignored.

use serde::Deserialize;

#[derive(Deserialize)]
pub(super) struct Repo {
    pub(super) full_name: String,
    pub(super) html_url: String,
}

#[derive(Deserialize)]
pub(super) struct User {
    pub(super) login: String,
}

#[derive(Deserialize)]
pub(super) struct BranchRepo {
    pub(super) full_name: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Branch {
    #[serde(rename = "ref")]
    pub(super) name: String,
    pub(super) sha: String,
    /// `null` when the fork was deleted.
    pub(super) repo: Option<BranchRepo>,
}

pub(super) fn name_of(b: &Branch) -> Option<&str> {
    b.repo.as_ref()?.full_name.as_deref()
}

#[derive(Deserialize)]
pub(super) struct Pr {
    pub(super) number: u64,
    pub(super) draft: Option<bool>,
    pub(super) merged: Option<bool>,
    pub(super) head: Branch,
    pub(super) base: Branch,
    pub(super) user: Option<User>,
}
