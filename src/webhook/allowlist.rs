//! Which repositories may use this server: `host/owner/repo` globs, `!` to exclude.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Compiled allowlist. A repository is allowed when it matches an include pattern and no
/// exclude pattern. Matching ignores case (forge names are case-insensitive) and `*` may span
/// `/`, as in Atlantis (`*` alone allows everything).
#[derive(Debug, Clone)]
pub struct RepoAllowlist {
    include: GlobSet,
    exclude: GlobSet,
}

impl RepoAllowlist {
    /// Compiles the patterns; the error names the pattern that is not a valid glob.
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        for pattern in patterns {
            let (target, glob) = match pattern.strip_prefix('!') {
                Some(rest) => (&mut exclude, rest),
                None => (&mut include, pattern.as_str()),
            };
            let glob = GlobBuilder::new(glob)
                .case_insensitive(true)
                .build()
                .map_err(|e| format!("repo_allowlist pattern {pattern:?}: {e}"))?;
            target.add(glob);
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| format!("repo_allowlist: {e}"));
        Ok(Self {
            include: build(include)?,
            exclude: build(exclude)?,
        })
    }

    /// Whether `host/owner/repo` may use this server.
    pub fn allows(&self, repo: &str) -> bool {
        self.include.is_match(repo) && !self.exclude.is_match(repo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(patterns: &[&str]) -> RepoAllowlist {
        let owned: Vec<String> = patterns.iter().map(|s| (*s).to_owned()).collect();
        RepoAllowlist::new(&owned).expect("valid patterns")
    }

    #[test]
    fn owner_glob_allows_that_owners_repos_only() {
        let a = list(&["github.com/acme/*"]);
        assert!(a.allows("github.com/acme/infra"));
        assert!(a.allows("github.com/ACME/Infra"));
        assert!(!a.allows("github.com/other/infra"));
        assert!(!a.allows("gitea.example/acme/infra"));
    }

    #[test]
    fn exclusion_wins_over_inclusion() {
        let a = list(&["*", "!github.com/acme/secret-*"]);
        assert!(a.allows("git.example:3000/x/y"));
        assert!(!a.allows("github.com/acme/secret-infra"));
    }

    #[test]
    fn empty_list_allows_nothing() {
        assert!(!list(&[]).allows("github.com/acme/infra"));
    }

    #[test]
    fn invalid_glob_is_reported_with_the_pattern() {
        let err = RepoAllowlist::new(&["github.com/[acme".to_owned()]).expect_err("invalid glob");
        assert!(err.contains("github.com/[acme"), "{err}");
    }
}
