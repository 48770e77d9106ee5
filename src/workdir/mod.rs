//! Per-PR git checkouts under the data directory: `workdirs/<host>/<owner>/<name>/pr-<n>`.
//! Fetches the exact head SHA of a PR (reusing the directory on new commits, surviving
//! force-pushes), checks it out detached and cleans it; removes it when the PR closes.
//!
//! Real git through `tokio::process::Command` with argv only; never a shell. It must not put
//! credentials in argv, a URL, a log or an error: the forge's `Authorization` header reaches git
//! only through `GIT_CONFIG_*` environment variables. Names are validated before they become
//! paths.

mod git;
pub mod modules;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use secrecy::SecretString;

use crate::forge::{CommitSha, InvalidName, RepoName};
use git::GitCommand;

/// Why a checkout failed, with the next step.
#[derive(Debug, thiserror::Error)]
pub enum WorkdirError {
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    #[error("invalid forge host {0:?}: use letters, digits, '.', '-' and an optional :port")]
    BadHost(String),
    #[error(
        "invalid base branch name {0:?}: git refuses it, or it could be read as an option or refspec"
    )]
    BadBranch(String),
    #[error("invalid pull request number 0: numbers start at 1")]
    BadNumber,
    #[error(
        "refusing to fetch from a clone URL that is not plain https://, http:// or file:// without credentials"
    )]
    BadUrl,
    #[error("git {step} failed: {detail}")]
    Git { step: &'static str, detail: String },
    #[error(
        "commit {sha} is not on the forge (force-pushed away?); plan again on the current head"
    )]
    ShaMissing { sha: CommitSha },
    #[error("{action} {}: {source}; check the data directory's permissions and free space", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What to check out.
#[derive(Debug, Clone, Copy)]
pub struct PrCheckout<'a> {
    /// The forge host, as in atoll's repository ids (`github.com`, `gitea.example.com:3000`).
    pub host: &'a str,
    pub repo: &'a RepoName,
    pub number: u64,
    pub clone_url: &'a str,
    pub sha: &'a CommitSha,
    /// From [`crate::forge::Forge::git_auth_header`].
    pub auth_header: Option<&'a SecretString>,
}

/// A ready checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub path: PathBuf,
    pub sha: CommitSha,
    /// Whether an existing directory was reused.
    pub reused: bool,
}

/// The per-PR checkout directories.
#[derive(Debug)]
pub struct Workdir {
    root: PathBuf,
    git: PathBuf,
    /// One lock per directory: two jobs never run git in the same checkout at once.
    busy: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

impl Workdir {
    /// Checkouts live in `<data_dir>/workdirs`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            root: data_dir.join("workdirs"),
            git: PathBuf::from("git"),
            busy: Mutex::new(HashMap::new()),
        }
    }

    /// Uses another git executable (tests use a wrapper that records its arguments).
    pub fn with_git_program(mut self, program: &Path) -> Self {
        program.clone_into(&mut self.git);
        self
    }

    /// The directory of a PR's checkout, after validating every name that goes into it.
    pub fn dir_for(
        &self,
        host: &str,
        repo: &RepoName,
        number: u64,
    ) -> Result<PathBuf, WorkdirError> {
        check_host(host)?;
        if number == 0 {
            return Err(WorkdirError::BadNumber);
        }
        Ok(self
            .root
            .join(host)
            .join(repo.owner())
            .join(repo.name())
            .join(format!("pr-{number}")))
    }

    /// Fetches `sha` and checks it out, detached and clean.
    pub async fn checkout(&self, req: &PrCheckout<'_>) -> Result<Checkout, WorkdirError> {
        let dir = self.dir_for(req.host, req.repo, req.number)?;
        check_url(req.clone_url)?;
        let lock = self.lock_for(&dir);
        let _held = lock.lock().await;
        let reused = dir.join(".git").is_dir();
        if !reused {
            self.init(&dir).await?;
        }
        self.fetch(&dir, req).await?;
        let sha = req.sha.as_str();
        self.git(&dir, &["checkout", "--quiet", "--force", "--detach", sha])
            .run("checkout")
            .await?;
        self.git(&dir, &["clean", "-ffdxq"]).run("clean").await?;
        let head = self
            .git(&dir, &["rev-parse", "HEAD"])
            .run("rev-parse")
            .await?;
        if head != sha {
            return Err(WorkdirError::Git {
                step: "checkout",
                detail: format!("HEAD is {head}, expected {sha}"),
            });
        }
        tracing::info!(repo = %req.repo, pr.number = req.number, sha = sha, reused, "checked out pull request head");
        Ok(Checkout {
            path: dir,
            sha: req.sha.clone(),
            reused,
        })
    }

    /// Atlantis's `undiverged`: whether the PR head contains the base branch's current head.
    /// Fetches `base_ref` from `base_url` into the PR's checkout (made by [`Workdir::checkout`])
    /// and asks git whether it is an ancestor of `req.sha`.
    pub async fn contains_base(
        &self,
        req: &PrCheckout<'_>,
        base_url: &str,
        base_ref: &str,
    ) -> Result<bool, WorkdirError> {
        let dir = self.dir_for(req.host, req.repo, req.number)?;
        check_url(base_url)?;
        check_branch(base_ref)?;
        let lock = self.lock_for(&dir);
        let _held = lock.lock().await;
        let refspec = format!("+refs/heads/{base_ref}:refs/atoll/base");
        self.git(
            &dir,
            &["fetch", "--no-tags", "--quiet", "--", base_url, &refspec],
        )
        .with_auth_header(req.auth_header)
        .run("fetch base")
        .await?;
        self.git(
            &dir,
            &[
                "merge-base",
                "--is-ancestor",
                "refs/atoll/base",
                req.sha.as_str(),
            ],
        )
        .answer("merge-base")
        .await
    }

    /// Deletes a PR's checkout; `false` when there was none.
    pub async fn remove(
        &self,
        host: &str,
        repo: &RepoName,
        number: u64,
    ) -> Result<bool, WorkdirError> {
        let dir = self.dir_for(host, repo, number)?;
        let lock = self.lock_for(&dir);
        let _held = lock.lock().await;
        let removed = match tokio::fs::remove_dir_all(&dir).await {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(source) => return Err(io("removing", &dir, source)),
        };
        if let Ok(mut busy) = self.busy.lock() {
            busy.remove(&dir);
        }
        Ok(removed)
    }

    async fn init(&self, dir: &Path) -> Result<(), WorkdirError> {
        // A directory without .git is debris from an interrupted run: start it afresh.
        if dir.exists() {
            tokio::fs::remove_dir_all(dir)
                .await
                .map_err(|e| io("clearing", dir, e))?;
        }
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|e| io("creating", dir, e))?;
        self.git(dir, &["init", "--quiet"])
            .run("init")
            .await
            .map(drop)
    }

    /// Fetches the SHA itself; forges that refuse unadvertised SHAs get the PR ref instead.
    async fn fetch(&self, dir: &Path, req: &PrCheckout<'_>) -> Result<(), WorkdirError> {
        let sha = req.sha.as_str();
        let by_sha = self
            .git(
                dir,
                &["fetch", "--no-tags", "--quiet", "--", req.clone_url, sha],
            )
            .with_auth_header(req.auth_header)
            .run("fetch")
            .await;
        if by_sha.is_ok() {
            return Ok(());
        }
        let refspec = format!("+refs/pull/{}/head:refs/atoll/pr-head", req.number);
        self.git(
            dir,
            &[
                "fetch",
                "--no-tags",
                "--quiet",
                "--",
                req.clone_url,
                &refspec,
            ],
        )
        .with_auth_header(req.auth_header)
        .run("fetch")
        .await?;
        let object = format!("{sha}^{{commit}}");
        self.git(dir, &["cat-file", "-e", &object])
            .run("cat-file")
            .await
            .map_err(|_| WorkdirError::ShaMissing {
                sha: req.sha.clone(),
            })
            .map(drop)
    }

    fn git(&self, dir: &Path, args: &[&str]) -> GitCommand {
        GitCommand::new(&self.git, dir, args)
    }

    fn lock_for(&self, dir: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let mut busy = self
            .busy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(busy.entry(dir.to_owned()).or_default())
    }
}

fn io(action: &'static str, path: &Path, source: std::io::Error) -> WorkdirError {
    WorkdirError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

fn check_host(host: &str) -> Result<(), WorkdirError> {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 253
        && !name.starts_with(['.', '-'])
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'));
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    if name_ok && port_ok {
        Ok(())
    } else {
        Err(WorkdirError::BadHost(host.chars().take(100).collect()))
    }
}

/// A branch name as git accepts it in a refspec, with nothing an option or a refspec could
/// read differently (no leading '-', ':', '..', spaces, control or glob characters).
fn check_branch(name: &str) -> Result<(), WorkdirError> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && !name.starts_with(['-', '/', '.'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && !name
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || ":?*[\\^~".contains(c));
    if ok {
        Ok(())
    } else {
        Err(WorkdirError::BadBranch(name.chars().take(100).collect()))
    }
}

fn check_url(url: &str) -> Result<(), WorkdirError> {
    let rest = ["https://", "http://", "file://"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme))
        .ok_or(WorkdirError::BadUrl)?;
    let authority = rest.split('/').next().unwrap_or("");
    let bad_chars = url.chars().any(|c| c.is_control() || c.is_whitespace());
    if authority.contains('@') || bad_chars {
        return Err(WorkdirError::BadUrl);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_numbers_are_validated_before_becoming_paths() {
        let wd = Workdir::new(Path::new("/data"));
        let repo = RepoName::parse("acme/infra").expect("valid");
        let dir = wd
            .dir_for("gitea.example.com:3000", &repo, 7)
            .expect("valid");
        assert_eq!(
            dir,
            Path::new("/data/workdirs/gitea.example.com:3000/acme/infra/pr-7")
        );
        for host in ["..", "a/b", "", "-x", "h:", "h:99999x", "a..b"] {
            assert!(wd.dir_for(host, &repo, 7).is_err(), "{host}");
        }
        assert!(matches!(
            wd.dir_for("github.com", &repo, 0),
            Err(WorkdirError::BadNumber)
        ));
    }

    #[test]
    fn base_branch_names_that_git_or_a_refspec_would_misread_are_refused() {
        for ok in ["main", "release/1.2", "feature_x-y"] {
            assert!(check_branch(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "-x", "a:b", "a..b", "a b", "a*", "/a", "a/", "a.lock", "a@{1}", "a\\b", "a~1",
        ] {
            assert!(check_branch(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn clone_urls_with_credentials_or_odd_schemes_are_refused() {
        assert!(check_url("https://github.com/acme/infra.git").is_ok());
        assert!(check_url("file:///tmp/x.git").is_ok());
        for url in [
            "https://tok@github.com/a/b",
            "ext::sh -c id",
            "-uhttps://x",
            "ssh://git@x/y",
            "https://x/a b",
        ] {
            assert!(check_url(url).is_err(), "{url}");
        }
    }
}
