//! Ownership markers: the tags atoll writes into every guest it creates or updates. `atoll`
//! says "managed by atoll"; the owner tag `atoll-` + 10 hex digits names the project (its
//! state scope: repository, project directory, workspace) by a short stable hash, whose full
//! identity is the scope in the store. Both are bookkeeping: the plan never shows them, and a
//! guest without them (imported from Terraform) plans no change for their sake. Pure: the
//! lookups in the store are the engine's.

use sha2::{Digest, Sha256};

use crate::store::StateScope;

/// The tag that says a guest is managed by atoll.
pub const MARKER_TAG: &str = "atoll";

/// Hex digits of the scope's hash in an owner tag.
const HASH_LEN: usize = 10;

/// The owner tag of a project's scope: `atoll-` and the first 10 hex digits of SHA-256 over
/// the repository, project directory and workspace, each length-prefixed so no two scopes
/// join to the same text.
pub fn owner_tag(scope: &StateScope) -> String {
    let mut hasher = Sha256::new();
    for part in [&scope.repo, &scope.project_dir, &scope.workspace] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    let hash = hex::encode(hasher.finalize());
    format!("{MARKER_TAG}-{}", &hash[..HASH_LEN])
}

/// Whether `tag` is an owner tag (`atoll-` and 10 lower-case hex digits). A tag of the user's
/// that merely starts with `atoll-` (`atoll-old`) is not.
pub fn is_owner_tag(tag: &str) -> bool {
    tag.strip_prefix("atoll-").is_some_and(|hash| {
        hash.len() == HASH_LEN && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Whether `tag` is one of atoll's markers (`atoll` or an owner tag), in any case.
pub fn is_marker(tag: &str) -> bool {
    let tag = tag.trim().to_ascii_lowercase();
    tag == MARKER_TAG || is_owner_tag(&tag)
}

/// The tags of a PVE `tags` value (`;`, `,` or space separated), trimmed, lower-cased.
fn split(tags: &str) -> impl Iterator<Item = String> + '_ {
    tags.split([';', ',', ' '])
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
}

/// Whether a guest's `tags` carry the `atoll` marker.
pub fn has_marker(tags: Option<&str>) -> bool {
    tags.is_some_and(|tags| split(tags).any(|t| t == MARKER_TAG))
}

/// The owner tags a guest's `tags` carry.
pub fn owner_tags(tags: Option<&str>) -> Vec<String> {
    tags.map(|tags| split(tags).filter(|t| is_owner_tag(t)).collect())
        .unwrap_or_default()
}

/// Adds `markers` to a `tags` value: sorted, without duplicates, `;`-joined, the user's tags
/// kept as written.
pub fn with_markers(tags: &str, markers: &[&str]) -> String {
    let mut all: Vec<String> = tags
        .split([';', ',', ' '])
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .chain(markers.iter().map(|m| (*m).to_owned()))
        .collect();
    all.sort();
    all.dedup();
    all.join(";")
}

/// Whether `live` lacks one of the markers `desired` carries (a guest imported without them):
/// the next update of the guest writes its `tags` too, so they are there from then on.
pub fn lacks_markers(desired: &str, live: Option<&str>) -> bool {
    let have: Vec<String> = live.map(|l| split(l).collect()).unwrap_or_default();
    split(desired)
        .filter(|t| is_marker(t))
        .any(|t| !have.contains(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(repo: &str, dir: &str, workspace: &str) -> StateScope {
        StateScope {
            repo: repo.to_owned(),
            project_dir: dir.to_owned(),
            workspace: workspace.to_owned(),
        }
    }

    #[test]
    fn owner_tag_is_stable_and_a_valid_pve_tag() {
        let tag = owner_tag(&scope("github.com/acme/infra", "envs/prod", "default"));
        assert_eq!(
            tag,
            owner_tag(&scope("github.com/acme/infra", "envs/prod", "default"))
        );
        // pinned: a guest tagged by an older build must still be recognised
        assert_eq!(tag, "atoll-4fde92ce06");
        assert!(is_owner_tag(&tag) && is_marker(&tag));
        assert!(
            tag.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "PVE's pve-tag format: {tag}"
        );
    }

    #[test]
    fn owner_tags_of_different_scopes_differ_even_when_the_parts_join_alike() {
        let tags = [
            owner_tag(&scope("github.com/acme/infra", "envs/prod", "default")),
            owner_tag(&scope("github.com/acme/infra", "envs/dev", "default")),
            owner_tag(&scope("github.com/acme/infra", "envs/prod", "staging")),
            owner_tag(&scope("github.com/acme/infra2", "envs/prod", "default")),
            owner_tag(&scope("github.com/acme/infr", "aenvs/prod", "default")),
            owner_tag(&scope("a", "bc", "")),
            owner_tag(&scope("ab", "c", "")),
        ];
        let distinct: std::collections::BTreeSet<&String> = tags.iter().collect();
        assert_eq!(distinct.len(), tags.len(), "{tags:?}");
    }

    #[test]
    fn markers_are_told_from_the_users_tags() {
        assert!(is_marker("atoll") && is_marker("ATOLL") && is_marker("atoll-0123456789"));
        assert!(!is_marker("atoll-old") && !is_marker("atoll-0123456789a") && !is_marker("web"));
        assert!(has_marker(Some("web;atoll")) && has_marker(Some("db ATOLL")));
        assert!(!has_marker(Some("atoll-old;web")) && !has_marker(None));
        assert_eq!(
            owner_tags(Some("atoll;atoll-0123456789;web")),
            vec!["atoll-0123456789"]
        );
        assert_eq!(
            with_markers("Web;ci", &["atoll", "atoll-0123456789"]),
            "Web;atoll;atoll-0123456789;ci"
        );
        assert!(lacks_markers("atoll;atoll-0123456789;web", Some("web")));
        assert!(lacks_markers("atoll;atoll-0123456789", Some("atoll")));
        assert!(!lacks_markers(
            "atoll;atoll-0123456789;web",
            Some("atoll-0123456789;atoll")
        ));
        assert!(!lacks_markers("web", None));
    }
}
