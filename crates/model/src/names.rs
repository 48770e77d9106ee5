//! Validated names that come from comments and from `atlantis.yaml`: a repository-relative
//! directory, a workspace and a project name. Each one refuses anything that could reach outside
//! the checkout or carry control characters, so later code can use them as plain values.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest accepted `-d` value, in bytes.
const MAX_DIR_LEN: usize = 1024;
/// Longest accepted path component, in bytes (the usual file-system limit).
const MAX_COMPONENT_LEN: usize = 255;
/// Longest accepted workspace name, in bytes.
const MAX_WORKSPACE_LEN: usize = 128;
/// Longest accepted project name, in bytes.
const MAX_PROJECT_LEN: usize = 128;

/// Why a directory, workspace or project name was refused. The message names the value (made
/// printable and shortened) and says what is accepted instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{what} is empty; give a value")]
    Empty { what: &'static str },
    #[error("{what} is longer than {max} bytes")]
    TooLong { what: &'static str, max: usize },
    #[error(
        "{what} `{shown}` contains a control or invisible character; use printable characters only"
    )]
    ControlChar { what: &'static str, shown: String },
    #[error("directory `{shown}` is absolute; give a path relative to the repository root")]
    Absolute { shown: String },
    #[error("directory `{shown}` points outside the repository; give a path inside it")]
    Escapes { shown: String },
    #[error(
        "directory `{shown}` contains `{ch}`; glob patterns, `\\`, and a leading `~` or `-` \
         are not accepted: name one directory relative to the repository root"
    )]
    DirChar { shown: String, ch: char },
    #[error(
        "workspace `{shown}` is not a valid name; it must start with a letter or digit and \
         contain only letters, digits, `.`, `_` and `-`, with no `..`"
    )]
    Workspace { shown: String },
    #[error(
        "project name `{shown}` is not a valid name; it must start with a letter or digit and \
         contain only letters, digits, `.`, `_`, `-` and `/` between non-empty parts \
         (no `..` part)"
    )]
    Project { shown: String },
}

/// Control characters, and the invisible and bidirectional formatting characters that can make
/// a name look like another one (`U+200B..U+200F`, `U+202A..U+202E`, `U+2060..U+2069`, `U+FEFF`).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// A value as it may be echoed back in an error: control and hidden characters replaced, at
/// most 64 characters.
pub fn shown(raw: &str) -> String {
    const MAX: usize = 64;
    let mut out: String = raw
        .chars()
        .take(MAX)
        .map(|c| if is_hidden(c) { '\u{fffd}' } else { c })
        .collect();
    if raw.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}

fn check_common(what: &'static str, raw: &str, max: usize) -> Result<(), NameError> {
    if raw.is_empty() {
        return Err(NameError::Empty { what });
    }
    if raw.len() > max {
        return Err(NameError::TooLong { what, max });
    }
    if raw.chars().any(is_hidden) {
        return Err(NameError::ControlChar {
            what,
            shown: shown(raw),
        });
    }
    Ok(())
}

/// A directory inside the repository, relative to its root and normalised: no `.` or empty
/// components, no `..` left, `/` as separator; the root itself is `.`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RepoDir(String);

impl RepoDir {
    /// The repository root, `.`.
    pub fn root() -> Self {
        Self(".".to_owned())
    }

    /// Parses and normalises a repository-relative directory.
    ///
    /// `a/./b/../c/` becomes `a/c`; `/etc`, `../x`, `a/../../x`, globs, `\`, a leading `~` or
    /// `-` (before or after normalising) and control characters are refused.
    pub fn parse(raw: &str) -> Result<Self, NameError> {
        check_common("directory", raw, MAX_DIR_LEN)?;
        if raw.starts_with('/') {
            return Err(NameError::Absolute { shown: shown(raw) });
        }
        if let Some(ch) = raw
            .chars()
            .find(|c| matches!(c, '*' | '?' | '[' | ']' | '\\'))
        {
            return Err(NameError::DirChar {
                shown: shown(raw),
                ch,
            });
        }
        if let Some(ch @ ('~' | '-')) = raw.chars().next() {
            return Err(NameError::DirChar {
                shown: shown(raw),
                ch,
            });
        }
        let mut parts: Vec<&str> = Vec::new();
        for part in raw.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(NameError::Escapes { shown: shown(raw) });
                    }
                }
                _ if part.len() > MAX_COMPONENT_LEN => {
                    return Err(NameError::TooLong {
                        what: "directory component",
                        max: MAX_COMPONENT_LEN,
                    });
                }
                _ => parts.push(part),
            }
        }
        if parts.is_empty() {
            return Ok(Self::root());
        }
        // Normalising can bring a component to the front (`a/../-x`): the rule is for the
        // result, so that a directory never reads as an option.
        if let Some(ch @ ('~' | '-')) = parts[0].chars().next() {
            return Err(NameError::DirChar {
                shown: shown(raw),
                ch,
            });
        }
        Ok(Self(parts.join("/")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the repository root.
    pub fn is_root(&self) -> bool {
        self.0 == "."
    }

    /// True when `self` is `other` or lies below it (`envs/dev` is within `envs` and within `.`).
    pub fn is_within(&self, other: &RepoDir) -> bool {
        other.is_root()
            || self.0 == other.0
            || (self.0.starts_with(&other.0) && self.0.as_bytes().get(other.0.len()) == Some(&b'/'))
    }

    /// The parent directory; `None` for the root.
    pub fn parent(&self) -> Option<RepoDir> {
        if self.is_root() {
            return None;
        }
        Some(match self.0.rsplit_once('/') {
            Some((parent, _)) => Self(parent.to_owned()),
            None => Self::root(),
        })
    }

    /// The path components (`envs/dev` gives `envs`, `dev`; the root gives none).
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|p| *p != ".")
    }
}

impl fmt::Display for RepoDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for RepoDir {
    type Error = NameError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl TryFrom<&str> for RepoDir {
    type Error = NameError;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        Self::parse(raw)
    }
}

impl From<RepoDir> for String {
    fn from(dir: RepoDir) -> Self {
        dir.0
    }
}

/// A Terraform workspace name: `^[0-9A-Za-z][0-9A-Za-z._-]*$` without `..` (Atlantis refuses
/// it too: `comment_parser.go`), at most 128 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Workspace(String);

impl Workspace {
    /// Terraform's `default` workspace.
    pub fn default_workspace() -> Self {
        Self("default".to_owned())
    }

    pub fn parse(raw: &str) -> Result<Self, NameError> {
        check_common("workspace", raw, MAX_WORKSPACE_LEN)?;
        let mut chars = raw.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
        let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if first_ok && rest_ok && !raw.contains("..") {
            Ok(Self(raw.to_owned()))
        } else {
            Err(NameError::Workspace { shown: shown(raw) })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Workspace {
    fn default() -> Self {
        Self::default_workspace()
    }
}

impl fmt::Display for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Workspace {
    type Error = NameError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl TryFrom<&str> for Workspace {
    type Error = NameError;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        Self::parse(raw)
    }
}

impl From<Workspace> for String {
    fn from(ws: Workspace) -> Self {
        ws.0
    }
}

/// A project name from `atlantis.yaml`, as used by `-p`: parts of `[0-9A-Za-z._-]` starting
/// with a letter or digit, joined by single `/` (Atlantis users often name projects
/// `prod/network`), at most 128 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ProjectName(String);

impl ProjectName {
    pub fn parse(raw: &str) -> Result<Self, NameError> {
        check_common("project name", raw, MAX_PROJECT_LEN)?;
        let part_ok = |part: &str| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        if raw.split('/').all(part_ok) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(NameError::Project { shown: shown(raw) })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for ProjectName {
    type Error = NameError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl TryFrom<&str> for ProjectName {
    type Error = NameError;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        Self::parse(raw)
    }
}

impl From<ProjectName> for String {
    fn from(name: ProjectName) -> Self {
        name.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_is_normalised() {
        for (raw, want) in [
            ("envs/dev", "envs/dev"),
            ("./envs//dev/", "envs/dev"),
            ("envs/x/../dev", "envs/dev"),
            (".", "."),
            ("./", "."),
            ("a/..", "."),
        ] {
            assert_eq!(
                RepoDir::parse(raw).map(|d| d.0),
                Ok(want.to_owned()),
                "{raw}"
            );
        }
    }

    #[test]
    fn dir_refuses_escapes_absolute_and_odd_characters() {
        for raw in [
            "../x",
            "a/../../x",
            "..",
            "/etc",
            "",
            "a\0b",
            "a\nb",
            "*",
            "a/b?",
            "~/x",
            "a\\b",
            "-rf",
            "a\u{202e}b",
            // Found by the comment fuzzer: normalising brought `--pvatlas` to the front, and
            // `-d --pvatlas` printed back did not parse again.
            "ennv/./../--pvatlas",
            "a/../~x",
        ] {
            assert!(RepoDir::parse(raw).is_err(), "{raw:?} accepted");
        }
    }

    #[test]
    fn dir_within_and_parent() {
        let dev = RepoDir::parse("envs/dev").expect("valid");
        let envs = RepoDir::parse("envs").expect("valid");
        let env = RepoDir::parse("env").expect("valid");
        assert!(dev.is_within(&envs));
        assert!(dev.is_within(&RepoDir::root()));
        assert!(!dev.is_within(&env));
        assert!(!envs.is_within(&dev));
        assert_eq!(dev.parent(), Some(envs.clone()));
        assert_eq!(envs.parent(), Some(RepoDir::root()));
        assert_eq!(RepoDir::root().parent(), None);
    }

    #[test]
    fn workspace_follows_atlantis_pattern() {
        for ok in ["default", "prod", "a.b_c-d", "9lives"] {
            assert!(Workspace::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-x", ".x", "a;id", "a/b", "a b", "$(id)", "~x", "é"] {
            assert!(Workspace::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(Workspace::parse(&"a".repeat(129)).is_err());
    }

    #[test]
    fn project_names_allow_slashes_between_parts() {
        for ok in ["web", "prod/network", "a.b-c_d"] {
            assert!(ProjectName::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "/x", "x/", "a//b", "a/../b", "../a", "a b", "a;b", "-a"] {
            assert!(ProjectName::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn names_round_trip_through_serde_and_refuse_bad_values() {
        let dir: RepoDir = serde_json::from_str("\"./a/b/\"").expect("valid");
        assert_eq!(serde_json::to_string(&dir).ok().as_deref(), Some("\"a/b\""));
        assert!(serde_json::from_str::<RepoDir>("\"../etc\"").is_err());
        assert!(serde_json::from_str::<Workspace>("\"a;id\"").is_err());
    }
}
