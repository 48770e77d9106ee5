//! Fetching one Git module package: the revision resolved to a commit (`git ls-remote`), the
//! package taken from the cache when that commit was fetched before, else fetched one commit
//! deep into a fresh directory, its size checked, its `.git` removed and moved into the cache
//! whole (a rename, so a half-fetched package is never seen). Then copied into the checkout.

use std::path::{Path, PathBuf};

use secrecy::SecretString;
use sha2::{Digest, Sha256};

use super::source::{GitSource, is_commit_id};
use super::{INSTALL_DIR, Installer, ModuleSettings, Refusal};
use crate::workdir::git::GitCommand;

pub(super) struct Fetcher<'a> {
    pub(super) installer: &'a Installer,
    pub(super) auth: Option<&'a SecretString>,
}

impl Fetcher<'_> {
    /// The cached package of `git`'s revision, fetched first when it is not cached.
    pub(super) async fn package(&self, git: &GitSource) -> Result<PathBuf, Refusal> {
        let (commit, fetch_ref) = self.resolve(git).await?;
        let settings = &self.installer.settings;
        let cached = settings.cache_dir.join(package_key(&git.url.text, &commit));
        if cached.is_dir() {
            return Ok(cached);
        }
        let io = |action: &str, e: std::io::Error| {
            Refusal::new(
                "Failed to install module",
                format!(
                    "{action} in the module cache ({}) failed: {e}; check the data directory's permissions and free space.",
                    settings.cache_dir.display()
                ),
            )
        };
        std::fs::create_dir_all(&settings.cache_dir).map_err(|e| io("creating a directory", e))?;
        let scratch = tempfile::Builder::new()
            .prefix("fetch-")
            .tempdir_in(&settings.cache_dir)
            .map_err(|e| io("creating a directory", e))?;
        let work = scratch.path();
        self.git(work, &["init", "--quiet"], "init", &git.url.text)
            .await?;
        self.git(
            work,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--depth",
                "1",
                "--",
                &git.url.text,
                &fetch_ref,
            ],
            "fetch",
            &git.url.text,
        )
        .await?;
        self.git(
            work,
            &["checkout", "--quiet", "--detach", "FETCH_HEAD"],
            "checkout",
            &git.url.text,
        )
        .await?;
        let head = self
            .git(work, &["rev-parse", "HEAD"], "rev-parse", &git.url.text)
            .await?;
        if head != commit {
            return Err(Refusal::new(
                "Failed to install module",
                format!(
                    "{} moved while atoll fetched it ({} became {head}); plan again.",
                    git.url.text,
                    short(&commit)
                ),
            ));
        }
        std::fs::remove_dir_all(work.join(".git")).map_err(|e| io("removing .git", e))?;
        check_size(work, settings, &git.url.text)?;
        let kept = scratch.keep();
        if std::fs::rename(&kept, &cached).is_err() {
            // Another job cached the same commit first: keep theirs.
            let _ = std::fs::remove_dir_all(&kept);
            if !cached.is_dir() {
                return Err(Refusal::new(
                    "Failed to install module",
                    format!(
                        "the module cache ({}) could not be written.",
                        settings.cache_dir.display()
                    ),
                ));
            }
        }
        tracing::info!(module.url = %git.url.text, commit = %commit, "module package fetched");
        Ok(cached)
    }

    /// The commit a revision names, and what to fetch to get it.
    async fn resolve(&self, git: &GitSource) -> Result<(String, String), Refusal> {
        if let Some(r) = git.git_ref.as_deref().filter(|r| is_commit_id(r)) {
            return Ok((r.to_ascii_lowercase(), r.to_owned()));
        }
        let wanted = git.git_ref.as_deref().unwrap_or("HEAD");
        let listed = self
            .git(
                &self.installer.settings.cache_dir_or_tmp(),
                &["ls-remote", "--", &git.url.text, wanted],
                "ls-remote",
                &git.url.text,
            )
            .await?;
        let mut refs = std::collections::BTreeMap::new();
        for line in listed.lines() {
            if let Some((sha, name)) = line.split_once('\t') {
                refs.insert(name.trim().to_owned(), sha.trim().to_owned());
            }
        }
        let candidates = if wanted == "HEAD" {
            vec!["HEAD".to_owned()]
        } else {
            vec![
                format!("refs/tags/{wanted}^{{}}"),
                format!("refs/tags/{wanted}"),
                format!("refs/heads/{wanted}"),
                wanted.to_owned(),
            ]
        };
        for c in candidates {
            if let Some(sha) = refs.get(&c) {
                let fetch = c.trim_end_matches("^{}").to_owned();
                return Ok((sha.to_ascii_lowercase(), fetch));
            }
        }
        Err(Refusal::new(
            "Module not found",
            format!(
                "{} has no branch or tag named {wanted:?}; a commit is named by its full 40-character id.",
                git.url.text
            ),
        ))
    }

    /// Runs git with the installer's fetch rules; stdout, or a refusal naming the repository.
    async fn git(
        &self,
        dir: &Path,
        args: &[&str],
        step: &'static str,
        url: &str,
    ) -> Result<String, Refusal> {
        let settings = &self.installer.settings;
        let mut cmd = GitCommand::new(&self.installer.git, dir, args)
            .with_auth_header(self.auth)
            .with_config("protocol.allow", "never")
            .with_config("protocol.https.allow", "always")
            .with_config("protocol.ssh.allow", "always")
            .with_config("http.followRedirects", "false")
            .with_config("core.sshCommand", "ssh -o BatchMode=yes");
        if settings.allow_plaintext {
            cmd = cmd
                .with_config("protocol.http.allow", "always")
                .with_config("protocol.git.allow", "always");
        }
        match tokio::time::timeout(settings.fetch_timeout, cmd.run(step)).await {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(e)) => Err(Refusal::new(
                "Failed to download module",
                format!(
                    "Fetching {url} failed: {e}. Check the address, the revision and that the server can reach the host."
                ),
            )),
            Err(_) => Err(Refusal::new(
                "Failed to download module",
                format!(
                    "Fetching {url} took longer than {} s (modules.fetch_timeout_secs).",
                    settings.fetch_timeout.as_secs()
                ),
            )),
        }
    }
}

impl ModuleSettings {
    /// A directory git can run in before the cache exists.
    fn cache_dir_or_tmp(&self) -> PathBuf {
        if self.cache_dir.is_dir() {
            self.cache_dir.clone()
        } else {
            std::env::temp_dir()
        }
    }
}

/// Copies a cached package into the checkout's install directory; the copy's path.
pub(super) fn place(
    package: &Path,
    checkout: &Path,
    settings: &ModuleSettings,
) -> Result<PathBuf, Refusal> {
    let name = package
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let target = checkout.join(INSTALL_DIR).join(&name);
    let io = |e: std::io::Error| {
        Refusal::new(
            "Failed to install module",
            format!(
                "Copying the module package into the checkout ({}) failed: {e}.",
                target.display()
            ),
        )
    };
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(io)?;
    }
    let mut budget = Budget::new(settings);
    copy_tree(package, &target, &mut budget).map_err(|e| match e {
        CopyError::Io(e) => io(e),
        CopyError::TooLarge => too_large(settings, &name),
    })?;
    Ok(target)
}

/// `<16 hex digits of the URL's SHA-256>-<commit>`: one directory per repository and commit.
fn package_key(url: &str, commit: &str) -> String {
    let digest = hex::encode(Sha256::digest(url.as_bytes()));
    format!("{}-{commit}", &digest[..16])
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

struct Budget {
    files: usize,
    bytes: u64,
}

impl Budget {
    fn new(settings: &ModuleSettings) -> Self {
        Self {
            files: settings.max_files,
            bytes: settings.max_bytes,
        }
    }

    fn take(&mut self, bytes: u64) -> bool {
        if self.files == 0 || bytes > self.bytes {
            return false;
        }
        self.files -= 1;
        self.bytes -= bytes;
        true
    }
}

enum CopyError {
    Io(std::io::Error),
    TooLarge,
}

impl From<std::io::Error> for CopyError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

fn too_large(settings: &ModuleSettings, what: &str) -> Refusal {
    Refusal::new(
        "Module package too large",
        format!(
            "The module package {what} has more than {} files or {} bytes (modules.max_files, modules.max_bytes).",
            settings.max_files, settings.max_bytes
        ),
    )
}

/// Refuses a fetched tree over the file or byte limit.
fn check_size(dir: &Path, settings: &ModuleSettings, url: &str) -> Result<(), Refusal> {
    fn walk(dir: &Path, budget: &mut Budget) -> Result<(), CopyError> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(&entry.path(), budget)?;
            } else if !budget.take(entry.metadata()?.len()) {
                return Err(CopyError::TooLarge);
            }
        }
        Ok(())
    }
    walk(dir, &mut Budget::new(settings)).map_err(|e| match e {
        CopyError::TooLarge => too_large(settings, url),
        CopyError::Io(e) => Refusal::new(
            "Failed to install module",
            format!("Reading the package fetched from {url} failed: {e}."),
        ),
    })
}

/// Copies regular files and directories; symbolic links are left out (a module package's
/// links could lead anywhere on the server).
fn copy_tree(from: &Path, to: &Path, budget: &mut Budget) -> Result<(), CopyError> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target, budget)?;
        } else if kind.is_file() {
            if !budget.take(entry.metadata()?.len()) {
                return Err(CopyError::TooLarge);
            }
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workdir::modules::source::Scheme;

    #[test]
    fn a_package_is_keyed_by_repository_and_commit() {
        let a = package_key("https://x/a.git", &"1".repeat(40));
        assert_ne!(a, package_key("https://x/b.git", &"1".repeat(40)));
        assert_ne!(a, package_key("https://x/a.git", &"2".repeat(40)));
        assert!(a.ends_with(&"1".repeat(40)));
    }

    #[test]
    fn scheme_plaintext_is_http_and_git() {
        assert!(Scheme::Git.plaintext() && Scheme::Http.plaintext());
        assert!(!Scheme::Https.plaintext() && !Scheme::Ssh.plaintext());
    }
}
