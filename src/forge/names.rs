//! Names that come from outside and become URL path segments and directory names: validated
//! on construction (parse, don't validate).

use std::fmt;

/// A repository on a forge, `owner/name`, validated so that both parts are safe as URL path
/// segments and as directory names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepoName {
    owner: String,
    name: String,
}

impl RepoName {
    /// Validates `owner` and `name`: 1 to 100 characters of `A-Z a-z 0-9 . _ -`, not `.` or `..`.
    pub fn new(owner: &str, name: &str) -> Result<Self, InvalidName> {
        check_segment("repository owner", owner)?;
        check_segment("repository name", name)?;
        Ok(Self {
            owner: owner.to_owned(),
            name: name.to_owned(),
        })
    }

    /// Parses `owner/name`.
    pub fn parse(full_name: &str) -> Result<Self, InvalidName> {
        let (owner, name) = full_name.split_once('/').ok_or_else(|| InvalidName {
            what: "repository",
            value: full_name.chars().take(120).collect(),
            rule: "must be owner/name",
        })?;
        Self::new(owner, name)
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

fn check_segment(what: &'static str, value: &str) -> Result<(), InvalidName> {
    let ok_chars = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let rule = if value.is_empty() || value.len() > 100 {
        Some("must be 1 to 100 characters")
    } else if !ok_chars {
        Some("may contain only letters, digits, '.', '_' and '-'")
    } else if value == "." || value == ".." {
        Some("must not be '.' or '..'")
    } else {
        None
    };
    match rule {
        None => Ok(()),
        Some(rule) => Err(InvalidName {
            what,
            value: value.chars().take(120).collect(),
            rule,
        }),
    }
}

/// A name from outside (a repository, a SHA) that cannot be used safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {value:?}: {rule}")]
pub struct InvalidName {
    pub what: &'static str,
    pub value: String,
    pub rule: &'static str,
}

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommitSha(String);

impl CommitSha {
    pub fn parse(value: &str) -> Result<Self, InvalidName> {
        let ok = matches!(value.len(), 40 | 64) && value.bytes().all(|b| b.is_ascii_hexdigit());
        if ok {
            Ok(Self(value.to_ascii_lowercase()))
        } else {
            Err(InvalidName {
                what: "commit sha",
                value: value.chars().take(120).collect(),
                rule: "must be 40 or 64 hex digits",
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_names_that_could_escape_a_path_are_refused() {
        assert!(RepoName::parse("acme/infra.tf").is_ok());
        assert!(RepoName::parse("acme/.github").is_ok());
        for bad in [
            "acme", "acme/..", "./x", "acme/a/b", "acme/a b", "acme/", "a%2f/x",
        ] {
            assert!(RepoName::parse(bad).is_err(), "{bad} should be refused");
        }
        let long = format!("acme/{}", "x".repeat(101));
        assert!(RepoName::parse(&long).is_err());
    }

    #[test]
    fn commit_sha_must_be_full_hex() {
        assert!(CommitSha::parse(&"a".repeat(40)).is_ok());
        assert!(CommitSha::parse(&"b".repeat(64)).is_ok());
        assert!(CommitSha::parse("abc123").is_err());
        assert!(CommitSha::parse(&format!("-{}", "a".repeat(39))).is_err());
        assert_eq!(
            CommitSha::parse(&"A".repeat(40)).map(|s| s.0),
            Ok("a".repeat(40))
        );
    }
}
