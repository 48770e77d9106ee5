//! The operator's `policies:` section, as Atlantis's server-side `repos.yaml` has it:
//!
//! ```yaml
//! policies:
//!   conftest_version: 0.46.0      # accepted and ignored: atoll evaluates Rego itself
//!   owners: {users: [alice]}      # may approve any failing set
//!   approve_count: 1              # approvals a failing set needs (default 1)
//!   policy_sets:
//!     - name: guests
//!       path: /etc/atoll/policies/guests   # a directory of .rego files on the server
//!       source: local
//!       owners: {users: [bob]}
//!       approve_count: 1
//!       prevent_self_approve: true
//! ```
//!
//! Owner names compare case-insensitively, as in Atlantis. `owners.teams` is refused: atoll's
//! forge clients do not read team membership, and an owner list that silently matched no one
//! would make every failure unapprovable.

use std::path::PathBuf;

use serde::Deserialize;

/// Most policy sets in `policies.policy_sets`.
const MAX_SETS: usize = 32;
/// Most users in one `owners.users` list.
const MAX_OWNERS: usize = 200;
/// Longest policy set name.
const MAX_NAME: usize = 64;

/// Why `policies:` cannot be used; each message names the key and what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct SettingsError {
    pub path: String,
    pub problem: String,
}

fn problem(path: impl Into<String>, problem: impl Into<String>) -> SettingsError {
    SettingsError {
        path: path.into(),
        problem: problem.into(),
    }
}

/// Users allowed to approve failing policy sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owners {
    pub users: Vec<String>,
}

impl Owners {
    /// `user` is listed (case-insensitively, as Atlantis compares).
    pub fn contains(&self, user: &str) -> bool {
        self.users.iter().any(|u| u.eq_ignore_ascii_case(user))
    }
}

/// One policy set: a directory of `.rego` files on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySet {
    pub name: String,
    pub path: PathBuf,
    pub owners: Owners,
    pub approve_count: u32,
    pub prevent_self_approve: bool,
}

/// `policies:`, validated. No sets: no policy check runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicySettings {
    /// Owners of every set.
    pub owners: Owners,
    pub sets: Vec<PolicySet>,
    /// Sentences about keys accepted but ignored (`conftest_version`), for start-up warnings.
    pub notes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicies {
    conftest_version: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    owners: RawOwners,
    approve_count: Option<i64>,
    #[serde(default)]
    sticky_policy_approvals: bool,
    policy_item_regex: Option<String>,
    #[serde(default)]
    policy_sets: Vec<RawSet>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOwners {
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    teams: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSet {
    name: Option<String>,
    path: Option<String>,
    source: Option<String>,
    #[serde(default)]
    owners: RawOwners,
    approve_count: Option<i64>,
    sticky_policy_approvals: Option<bool>,
    policy_item_regex: Option<String>,
    #[serde(default)]
    prevent_self_approve: bool,
}

impl PolicySettings {
    /// Reads the `policies:` section.
    pub fn from_value(value: &serde_yaml_ng::Value) -> Result<Self, SettingsError> {
        let raw: RawPolicies = serde_yaml_ng::from_value(value.clone())
            .map_err(|e| problem("policies", e.to_string()))?;
        let mut notes = Vec::new();
        if raw.conftest_version.is_some() {
            notes.push(
                "policies.conftest_version is ignored: atoll evaluates Rego itself (regorus), \
                 no conftest binary is run"
                    .to_owned(),
            );
        }
        unsupported_approval_keys(
            "policies",
            raw.sticky_policy_approvals,
            &raw.policy_item_regex,
        )?;
        let owners = owners("policies.owners", raw.owners)?;
        let default_count = approve_count("policies.approve_count", raw.approve_count, 1)?;
        if raw.policy_sets.is_empty() {
            return Err(problem(
                "policies.policy_sets",
                "cannot be empty; declare the policy sets to enforce, or remove `policies:`",
            ));
        }
        if raw.policy_sets.len() > MAX_SETS {
            return Err(problem(
                "policies.policy_sets",
                format!("has more than {MAX_SETS} sets; merge some"),
            ));
        }
        let mut sets: Vec<PolicySet> = Vec::new();
        for (i, set) in raw.policy_sets.into_iter().enumerate() {
            let set = policy_set(&format!("policies.policy_sets[{i}]"), set, default_count)?;
            if sets.iter().any(|s| s.name == set.name) {
                return Err(problem(
                    format!("policies.policy_sets[{i}].name"),
                    format!("`{}` is used twice; give each set its own name", set.name),
                ));
            }
            sets.push(set);
        }
        Ok(Self {
            owners,
            sets,
            notes,
        })
    }

    /// Any policy set configured: every plan is checked.
    pub fn enabled(&self) -> bool {
        !self.sets.is_empty()
    }

    pub fn set(&self, name: &str) -> Option<&PolicySet> {
        self.sets.iter().find(|s| s.name == name)
    }
}

fn unsupported_approval_keys(
    at: &str,
    sticky: bool,
    item_regex: &Option<String>,
) -> Result<(), SettingsError> {
    if sticky {
        return Err(problem(
            format!("{at}.sticky_policy_approvals"),
            "is not supported by atoll: a new plan always needs new approvals; remove it",
        ));
    }
    if item_regex.is_some() {
        return Err(problem(
            format!("{at}.policy_item_regex"),
            "is not supported by atoll: an approval covers the whole failing set; remove it",
        ));
    }
    Ok(())
}

fn policy_set(at: &str, raw: RawSet, default_count: u32) -> Result<PolicySet, SettingsError> {
    let name = raw
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| problem(format!("{at}.name"), "is required"))?;
    if name.len() > MAX_NAME
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(problem(
            format!("{at}.name"),
            format!(
                "must be at most {MAX_NAME} letters, digits, `-`, `_` or `.` (it is shown in \
                 comments and typed after --policy-set)"
            ),
        ));
    }
    let path = raw.path.filter(|p| !p.trim().is_empty()).ok_or_else(|| {
        problem(
            format!("{at}.path"),
            "is required: a directory of .rego files",
        )
    })?;
    match raw.source.as_deref().map(str::trim) {
        None | Some("" | "local") => {}
        Some("github") => {
            return Err(problem(
                format!("{at}.source"),
                "`github` is not supported by atoll (it would fetch policies over the \
                 network at check time); copy the policies to the server and use `local`",
            ));
        }
        Some(other) => {
            return Err(problem(
                format!("{at}.source"),
                format!(
                    "`{}` is not a source; use `local`",
                    crate::commands::shown_value(other)
                ),
            ));
        }
    }
    unsupported_approval_keys(
        at,
        raw.sticky_policy_approvals.unwrap_or(false),
        &raw.policy_item_regex,
    )?;
    Ok(PolicySet {
        name,
        path: PathBuf::from(path),
        owners: owners(&format!("{at}.owners"), raw.owners)?,
        approve_count: approve_count(
            &format!("{at}.approve_count"),
            raw.approve_count,
            default_count,
        )?,
        prevent_self_approve: raw.prevent_self_approve,
    })
}

fn owners(at: &str, raw: RawOwners) -> Result<Owners, SettingsError> {
    if !raw.teams.is_empty() {
        return Err(problem(
            format!("{at}.teams"),
            "is not supported by atoll yet (its forge clients do not read team membership); \
             list the owners under `users`",
        ));
    }
    if raw.users.len() > MAX_OWNERS {
        return Err(problem(
            format!("{at}.users"),
            format!("has more than {MAX_OWNERS} users"),
        ));
    }
    let users: Vec<String> = raw
        .users
        .into_iter()
        .map(|u| u.trim().trim_start_matches('@').to_owned())
        .filter(|u| !u.is_empty())
        .collect();
    Ok(Owners { users })
}

/// Atlantis turns zero and negative counts into the default; so does atoll.
fn approve_count(at: &str, raw: Option<i64>, default: u32) -> Result<u32, SettingsError> {
    match raw {
        None => Ok(default),
        Some(n) if n <= 0 => Ok(default),
        Some(n) if n > 100 => Err(problem(at, "is more than 100")),
        Some(n) => Ok(u32::try_from(n).unwrap_or(default)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<PolicySettings, SettingsError> {
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).expect("yaml");
        PolicySettings::from_value(&value)
    }

    #[test]
    fn atlantis_policies_section_is_read_with_defaults() {
        let s = parse(
            "conftest_version: 0.46.0\nowners: {users: [Alice]}\npolicy_sets:\n  \
             - {name: guests, path: /etc/p, source: local, owners: {users: [bob]}, prevent_self_approve: true}\n  \
             - {name: storage, path: /etc/q, approve_count: 2}\n",
        )
        .expect("valid");
        assert_eq!(s.sets.len(), 2);
        assert!(s.owners.contains("alice"));
        assert_eq!(s.sets[0].approve_count, 1);
        assert!(s.sets[0].prevent_self_approve);
        assert!(s.sets[0].owners.contains("BOB"));
        assert_eq!(s.sets[1].approve_count, 2);
        assert_eq!(s.notes.len(), 1, "conftest_version is noted as ignored");
    }

    #[test]
    fn bad_sections_are_refused_naming_the_key() {
        let cases = [
            ("policy_sets: []\n", "policies.policy_sets"),
            (
                "policy_sets:\n  - {path: /p}\n",
                "policies.policy_sets[0].name",
            ),
            (
                "policy_sets:\n  - {name: a}\n",
                "policies.policy_sets[0].path",
            ),
            (
                "policy_sets:\n  - {name: a, path: /p, source: github}\n",
                "policies.policy_sets[0].source",
            ),
            (
                "policy_sets:\n  - {name: 'a b', path: /p}\n",
                "policies.policy_sets[0].name",
            ),
            (
                "owners: {teams: [ops]}\npolicy_sets:\n  - {name: a, path: /p}\n",
                "policies.owners.teams",
            ),
            (
                "policy_sets:\n  - {name: a, path: /p}\n  - {name: a, path: /q}\n",
                "policies.policy_sets[1].name",
            ),
            (
                "sticky_policy_approvals: true\npolicy_sets:\n  - {name: a, path: /p}\n",
                "policies.sticky_policy_approvals",
            ),
        ];
        for (yaml, path) in cases {
            let err = parse(yaml).expect_err(yaml);
            assert_eq!(err.path, path, "{yaml}: {err}");
        }
        let unknown =
            parse("policy_sets:\n  - {name: a, path: /p, paths: x}\n").expect_err("unknown");
        assert!(unknown.problem.contains("paths"), "{unknown}");
    }
}
