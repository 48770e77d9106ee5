//! Path patterns with `.dockerignore` semantics, as Atlantis uses for `when_modified`:
//! - patterns are relative to a base directory and joined to it (`../modules/**/*.tf` from
//!   `envs/dev` becomes `envs/modules/**/*.tf`); a pattern that leaves the repository is refused;
//! - `*` and `?` stay inside one path component, `**` spans any number of them;
//! - a pattern matches a path or any directory above it (`modules` matches `modules/a/b.tf`);
//! - `!pattern` excludes again; the last pattern that matches decides.

use globset::{GlobBuilder, GlobMatcher};

use crate::commands::RepoDir;

/// Longest accepted pattern, in bytes.
const MAX_PATTERN_LEN: usize = 512;
/// Most patterns accepted in one list.
pub(crate) const MAX_PATTERNS: usize = 64;

/// A compiled list of patterns. Equality compares the patterns as written (after joining).
#[derive(Debug, Clone)]
pub struct PathPatterns {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone)]
struct Rule {
    /// The pattern joined to its base directory, as matched.
    joined: String,
    /// The literal text every match starts with (up to the first glob character): a path that
    /// does not start with it cannot match, nor can any directory above it.
    prefix: String,
    negate: bool,
    matcher: GlobMatcher,
}

impl PartialEq for PathPatterns {
    fn eq(&self, other: &Self) -> bool {
        self.rules.len() == other.rules.len()
            && self
                .rules
                .iter()
                .zip(&other.rules)
                .all(|(a, b)| a.joined == b.joined && a.negate == b.negate)
    }
}

impl Eq for PathPatterns {}

impl PathPatterns {
    /// A list that matches nothing.
    pub(crate) fn empty() -> Self {
        Self { rules: Vec::new() }
    }

    /// Compiles `patterns`, each relative to `base`. The error names the pattern and says why.
    pub(crate) fn new(base: &RepoDir, patterns: &[String]) -> Result<Self, String> {
        if patterns.len() > MAX_PATTERNS {
            return Err(format!("has more than {MAX_PATTERNS} patterns"));
        }
        let rules = patterns
            .iter()
            .map(|p| compile(base, p))
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    /// The patterns as they are matched, relative to the repository root (`!` kept).
    pub fn joined(&self) -> Vec<String> {
        self.rules
            .iter()
            .map(|r| {
                if r.negate {
                    format!("!{}", r.joined)
                } else {
                    r.joined.clone()
                }
            })
            .collect()
    }

    /// True if `path` (relative to the repository root) is selected by the patterns.
    pub fn matches(&self, path: &str) -> bool {
        let path = path.trim_start_matches("./");
        let mut selected = false;
        for rule in &self.rules {
            if rule.negate == selected
                && path.starts_with(&rule.prefix)
                && matches_path_or_parent(&rule.matcher, path)
            {
                selected = !rule.negate;
            }
        }
        selected
    }
}

fn matches_path_or_parent(matcher: &GlobMatcher, path: &str) -> bool {
    if matcher.is_match(path) {
        return true;
    }
    path.char_indices()
        .filter(|(_, c)| *c == '/')
        .any(|(i, _)| matcher.is_match(&path[..i]))
}

fn compile(base: &RepoDir, raw: &str) -> Result<Rule, String> {
    let shown = crate::commands::shown_value(raw);
    if raw.len() > MAX_PATTERN_LEN {
        return Err(format!(
            "pattern `{shown}` is longer than {MAX_PATTERN_LEN} bytes"
        ));
    }
    if raw.chars().any(crate::commands::is_hidden_char) {
        return Err(format!(
            "pattern `{shown}` contains a control or invisible character"
        ));
    }
    let (negate, pattern) = match raw.trim().strip_prefix('!') {
        Some(rest) => (true, rest.trim()),
        None => (false, raw.trim()),
    };
    if pattern.is_empty() {
        return Err("a pattern is empty".to_owned());
    }
    let joined = join(base, pattern)
        .ok_or_else(|| format!("pattern `{shown}` points outside the repository"))?;
    let matcher = GlobBuilder::new(&joined)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("pattern `{shown}` is not a valid glob: {}", e.kind()))?
        .compile_matcher();
    let prefix = literal_prefix(&joined);
    Ok(Rule {
        joined,
        prefix,
        negate,
        matcher,
    })
}

/// The unescaped text of `glob` before its first special character.
fn literal_prefix(glob: &str) -> String {
    let mut out = String::new();
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' | '[' | '{' => break,
            '\\' => match chars.next() {
                Some(next) => out.push(next),
                None => break,
            },
            _ => out.push(c),
        }
    }
    out
}

/// `base/pattern` with `.` and `..` components resolved; `None` if it leaves the repository.
/// The base directory's own characters are escaped, so a directory named `a{b,c}` is literal.
fn join(base: &RepoDir, pattern: &str) -> Option<String> {
    let escaped: Vec<String> = base.components().map(escape).collect();
    let mut parts: Vec<&str> = escaped.iter().map(String::as_str).collect();
    for part in pattern.trim_start_matches('/').split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    if parts.is_empty() {
        // The repository root itself: everything in it.
        return Some("**".to_owned());
    }
    Some(parts.join("/"))
}

/// `text` with glob syntax escaped (`RepoDir` already refuses `*`, `?`, `[`, `]` and `\\`).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '{' | '}' | '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(base: &str, list: &[&str]) -> PathPatterns {
        let base = RepoDir::parse(base).expect("valid base");
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        PathPatterns::new(&base, &list).expect("valid patterns")
    }

    #[test]
    fn default_patterns_match_terraform_files_below_the_project() {
        let p = patterns("envs/dev", &["**/*.tf*", "**/.terraform.lock.hcl"]);
        assert!(p.matches("envs/dev/main.tf"));
        assert!(p.matches("envs/dev/sub/vars.tfvars"));
        assert!(p.matches("envs/dev/.terraform.lock.hcl"));
        assert!(!p.matches("envs/dev/README.md"));
        assert!(!p.matches("envs/prod/main.tf"));
        assert!(!p.matches("envs/development/main.tf"));
    }

    #[test]
    fn parent_relative_patterns_are_joined_to_the_project_dir() {
        let p = patterns("envs/dev", &["*.tf", "../../modules/**/*.tf"]);
        assert_eq!(p.joined(), ["envs/dev/*.tf", "modules/**/*.tf"]);
        assert!(p.matches("modules/lxc/main.tf"));
        assert!(!p.matches("envs/dev/sub/x.tf"), "* must not cross /");
    }

    #[test]
    fn directory_pattern_matches_files_below_it_and_negation_wins_last() {
        let p = patterns(".", &["modules", "!modules/legacy"]);
        assert!(p.matches("modules/a/b.tf"));
        assert!(!p.matches("modules/legacy/x.tf"));
    }

    #[test]
    fn literal_prefix_stops_at_the_first_glob_character_and_unescapes() {
        assert_eq!(literal_prefix("envs/dev/**/*.tf"), "envs/dev/");
        assert_eq!(literal_prefix(r"a\{b/*.tf"), "a{b/");
        assert_eq!(literal_prefix("modules"), "modules");
        assert_eq!(literal_prefix("*.tf"), "");
    }

    #[test]
    fn a_pattern_naming_the_base_directory_matches_everything_below_it() {
        assert!(patterns("envs/dev", &["."]).matches("envs/dev/a/b.tf"));
        assert!(patterns(".", &["."]).matches("a/b.tf"));
        assert!(patterns("envs", &[".."]).matches("x.tf"));
        assert!(!patterns("envs/dev", &["."]).matches("envs/prod/a.tf"));
    }

    #[test]
    fn base_directory_is_matched_literally() {
        let p = patterns("a{b,c}", &["*.tf"]);
        assert!(p.matches("a{b,c}/main.tf"));
        assert!(!p.matches("ab/main.tf"));
    }

    #[test]
    fn patterns_leaving_the_repository_are_refused() {
        let base = RepoDir::parse("envs").expect("valid base");
        let err = PathPatterns::new(&base, &["../../x".to_owned()]).expect_err("must refuse");
        assert!(err.contains("outside the repository"), "{err}");
        assert!(PathPatterns::new(&base, &["a[".to_owned()]).is_err());
    }
}
