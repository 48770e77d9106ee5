//! Three Atlantis selectors that come from the PR itself and are therefore untrusted: the
//! project `branch` regex, `autodiscover` (`mode`, `ignore_paths`) and glob patterns naming
//! directories (a project `dir` or a comment's `-d`). Every one is bounded in size and matched
//! in linear time (`regex-automata` and `globset` never backtrack).
//!
//! Semantics follow runatlantis/atlantis (commit 078d0a82, read for this module):
//! - `branch` (`server/core/config/raw/project.go`, `parser_validator.go`): `/REGEX/`, searched
//!   (not anchored) in the PR's base branch; a project whose regex does not match is dropped.
//! - `autodiscover` (`raw/autodiscover.go`, `valid/autodiscover.go`, `valid/repo_cfg.go`):
//!   `mode` is `auto` (the default: discover only when `atlantis.yaml` lists no projects),
//!   `enabled` or `disabled`; `ignore_paths` are doublestar globs matched against a whole
//!   directory path, none may begin with `/`.
//! - directory globs (`raw.ContainsGlobPattern`): a value with `*`, `?` or `[` is a glob;
//!   `*` stays inside one path component and `**` spans any number of them.
//!
//! Deliberate differences from Atlantis (each safer):
//! - `mode: auto` counts the projects `atlantis.yaml` lists as written, before the `branch`
//!   filter, and a listed directory is never discovered on any branch: Atlantis would plan the
//!   directories of projects meant for another branch with the server's defaults.
//! - `-d DIR` on a directory `ignore_paths` ignores is refused with the pattern named; Atlantis
//!   skips it without a word.
//! - `-d GLOB` alone selects every workspace of matching listed projects (atoll's rule for
//!   `-d`); with no listed match it selects matching directories holding `.tf` files, where
//!   Atlantis would plan the glob text as a directory. Only `plan` and `apply` take a glob.
//! - A project `dir` glob match that another listed project already has (same directory and
//!   workspace) is left to that project instead of failing the whole file.

use globset::{GlobBuilder, GlobMatcher};
use regex_automata::meta::Regex;

/// Longest accepted `branch` value, in bytes.
const MAX_BRANCH_LEN: usize = 256;
/// Compiled size limit of one `branch` regex, in bytes.
const MAX_REGEX_SIZE: usize = 256 * 1024;
/// Longest accepted directory glob, in bytes.
const MAX_GLOB_LEN: usize = 256;
/// Most `ignore_paths` entries.
const MAX_IGNORE_PATHS: usize = 64;

/// A project's `branch: /REGEX/`.
#[derive(Debug, Clone)]
pub struct BranchFilter {
    /// As written, slashes included, for replies.
    written: String,
    regex: Regex,
}

impl PartialEq for BranchFilter {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

impl Eq for BranchFilter {}

impl BranchFilter {
    /// Parses `/REGEX/`; the error says what to write instead.
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        let shown = crate::commands::shown_value(raw);
        if raw.len() > MAX_BRANCH_LEN {
            return Err(format!("is longer than {MAX_BRANCH_LEN} bytes"));
        }
        let inner = raw
            .strip_prefix('/')
            .and_then(|r| r.strip_suffix('/'))
            .ok_or_else(|| format!("`{shown}` must begin and end with a slash, e.g. `/^main$/`"))?;
        let regex = Regex::builder()
            .configure(
                Regex::config()
                    .nfa_size_limit(Some(MAX_REGEX_SIZE))
                    .hybrid_cache_capacity(MAX_REGEX_SIZE),
            )
            .syntax(regex_automata::util::syntax::Config::new().nest_limit(32))
            .build(inner)
            .map_err(|e| format!("`{shown}` is not a valid regular expression: {e}"))?;
        Ok(Self {
            written: raw.to_owned(),
            regex,
        })
    }

    /// True when the regex matches somewhere in `branch` (Go's `MatchString`).
    pub fn matches(&self, branch: &str) -> bool {
        self.regex.is_match(branch)
    }

    /// The value as written in `atlantis.yaml`, e.g. `/^release\//`.
    pub fn as_str(&self) -> &str {
        &self.written
    }
}

/// `autodiscover.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutodiscoverMode {
    /// Discover only when `atlantis.yaml` lists no projects.
    #[default]
    Auto,
    Enabled,
    Disabled,
}

impl AutodiscoverMode {
    pub(crate) fn from_word(word: &str) -> Option<Self> {
        match word {
            "auto" => Some(Self::Auto),
            "enabled" => Some(Self::Enabled),
            "disabled" => Some(Self::Disabled),
            _ => None,
        }
    }
}

/// Top-level `autodiscover`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Autodiscover {
    pub mode: AutodiscoverMode,
    pub ignore_paths: Vec<DirGlob>,
}

impl Autodiscover {
    /// Whether directories are discovered, given how many projects `atlantis.yaml` lists.
    pub fn enabled(&self, listed_projects: usize) -> bool {
        match self.mode {
            AutodiscoverMode::Auto => listed_projects == 0,
            AutodiscoverMode::Enabled => true,
            AutodiscoverMode::Disabled => false,
        }
    }

    /// The first `ignore_paths` entry matching `dir`, as written.
    pub fn ignored_by(&self, dir: &str) -> Option<&str> {
        self.ignore_paths
            .iter()
            .find(|glob| glob.matches(dir))
            .map(DirGlob::as_str)
    }

    /// Checks the `ignore_paths` list (Atlantis's rules plus atoll's bounds).
    pub(crate) fn ignore_paths(patterns: &[String]) -> Result<Vec<DirGlob>, String> {
        if patterns.len() > MAX_IGNORE_PATHS {
            return Err(format!("has more than {MAX_IGNORE_PATHS} patterns"));
        }
        patterns
            .iter()
            .map(|p| {
                if p.starts_with('/') {
                    let shown = crate::commands::shown_value(p);
                    return Err(format!(
                        "pattern `{shown}` must not begin with a slash: paths are relative to the repository root"
                    ));
                }
                DirGlob::parse(p)
            })
            .collect()
    }
}

/// True when `text` is a glob rather than a literal directory (Atlantis's test).
pub fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// A glob naming repository directories, e.g. `envs/*` or `stacks/**/prod`.
#[derive(Debug, Clone)]
pub struct DirGlob {
    written: String,
    matcher: GlobMatcher,
    /// For a pattern ending in `/**`, the pattern without it: doublestar (Atlantis's matcher)
    /// lets `a/**` match `a` itself, which `globset` does not.
    itself: Option<GlobMatcher>,
}

impl PartialEq for DirGlob {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

impl Eq for DirGlob {}

impl DirGlob {
    /// Parses a glob relative to the repository root; a leading `./` or `/` is dropped (as
    /// Atlantis does for `-d`), `..` is refused.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let shown = crate::commands::shown_value(raw);
        if raw.len() > MAX_GLOB_LEN {
            return Err(format!(
                "pattern `{shown}` is longer than {MAX_GLOB_LEN} bytes"
            ));
        }
        if raw.chars().any(crate::commands::is_hidden_char) || raw.contains('\\') {
            return Err(format!(
                "pattern `{shown}` contains a backslash, a control or an invisible character"
            ));
        }
        let text = raw.trim_start_matches("./").trim_start_matches('/');
        if text.is_empty() {
            return Err("a pattern is empty".to_owned());
        }
        if text.split('/').any(|part| part == "..") {
            return Err(format!("pattern `{shown}` may not use `..`"));
        }
        let compile = |glob: &str| {
            GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| format!("pattern `{shown}` is not a valid glob: {}", e.kind()))
        };
        let matcher = compile(text)?;
        let itself = match text.strip_suffix("/**") {
            Some(parent) if !parent.is_empty() => Some(compile(parent)?),
            _ => None,
        };
        Ok(Self {
            written: text.to_owned(),
            matcher,
            itself,
        })
    }

    /// A glob that matches no directory (a NUL character, which no directory name holds).
    pub fn nothing() -> Self {
        let matcher = GlobBuilder::new("\u{0}")
            .build()
            .map(|g| g.compile_matcher())
            .unwrap_or_else(|_| unreachable_glob());
        Self {
            written: String::new(),
            matcher,
            itself: None,
        }
    }

    /// True when the whole directory path `dir` (repository-relative, `.` for the root) matches.
    pub fn matches(&self, dir: &str) -> bool {
        self.matcher.is_match(dir) || self.itself.as_ref().is_some_and(|m| m.is_match(dir))
    }

    pub fn as_str(&self) -> &str {
        &self.written
    }
}

/// Only reached if `globset` refused a one-character literal, which it does not.
fn unreachable_glob() -> GlobMatcher {
    globset::Glob::new("\u{0}\u{0}")
        .map(|g| g.compile_matcher())
        .unwrap_or_else(|e| panic!("globset refused a literal: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_regex_needs_slashes_and_searches_the_branch_unanchored() {
        let filter = BranchFilter::parse("/main/").expect("valid");
        assert!(filter.matches("main"));
        assert!(filter.matches("not-main-either"));
        assert!(!filter.matches("release"));
        assert!(BranchFilter::parse("main").is_err());
        assert!(BranchFilter::parse("/(/").is_err());
    }

    #[test]
    fn a_branch_regex_too_large_to_compile_within_the_limit_is_refused() {
        assert!(BranchFilter::parse("/(a{1000}){1000}/").is_err());
    }

    #[test]
    fn a_trailing_double_star_matches_the_directory_itself_as_doublestar_does() {
        // doublestar's own table: {"a/**", "a", true, ...}
        let glob = DirGlob::parse("scratch/**").expect("valid");
        for dir in ["scratch", "scratch/a", "scratch/a/b"] {
            assert!(glob.matches(dir), "{dir}");
        }
        assert!(!glob.matches("scratchy"));
        assert!(!glob.matches("other/scratch"));
        assert!(DirGlob::parse("env*/**").expect("valid").matches("envs"));
        assert!(DirGlob::parse("**").expect("valid").matches("a/b"));
    }

    #[test]
    fn dir_globs_keep_single_stars_inside_one_component() {
        let glob = DirGlob::parse("envs/*").expect("valid");
        assert!(glob.matches("envs/dev"));
        assert!(!glob.matches("envs/dev/sub"));
        let deep = DirGlob::parse("./stacks/**/prod").expect("valid");
        assert!(deep.matches("stacks/a/b/prod"));
        assert!(DirGlob::parse("envs/../x*").is_err());
        assert!(DirGlob::parse("envs/[").is_err());
    }

    #[test]
    fn ignore_paths_may_not_begin_with_a_slash() {
        assert!(Autodiscover::ignore_paths(&["/modules/*".to_owned()]).is_err());
        assert!(Autodiscover::ignore_paths(&["modules/**".to_owned()]).is_ok());
    }

    #[test]
    fn auto_mode_discovers_only_without_listed_projects() {
        let auto = Autodiscover::default();
        assert!(auto.enabled(0));
        assert!(!auto.enabled(2));
        let on = Autodiscover {
            mode: AutodiscoverMode::Enabled,
            ignore_paths: Vec::new(),
        };
        assert!(on.enabled(2));
    }
}
