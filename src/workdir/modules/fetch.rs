//! Fetching one Git module package: the revision resolved to a commit (`git ls-remote`), the
//! package taken from the cache when that commit was fetched before, else fetched one commit
//! deep into a fresh directory, its tree measured before anything is written (`git ls-tree`,
//! read as it streams and stopped at the first entry over the limits), checked out, its `.git`
//! removed and moved into the cache whole (a rename, so a half-fetched package is never seen).
//! Then copied into a directory of its own in the checkout, which nothing the pull request
//! committed can stand in for.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use secrecy::SecretString;
use sha2::{Digest, Sha256};
use tokio::io::AsyncBufReadExt as _;

use super::source::{GitSource, is_commit_id};
use super::{INSTALL_DIR, Installer, ModuleSettings, Refusal};
use crate::workdir::git::GitCommand;

pub(super) struct Fetcher<'a> {
    pub(super) installer: &'a Installer,
    /// The forge's credentials, when this repository may be fetched with them.
    pub(super) auth: Option<&'a SecretString>,
    /// Who the credentials speak for (`host/owner`): a package fetched with them is cached
    /// apart from one fetched without, so an anonymous request never reads a private package.
    pub(super) scope: Option<String>,
}

impl Fetcher<'_> {
    /// The cached package of `git`'s revision, fetched first when it is not cached.
    pub(super) async fn package(&self, git: &GitSource) -> Result<PathBuf, Refusal> {
        let settings = &self.installer.settings;
        std::fs::create_dir_all(&settings.cache_dir)
            .map_err(|e| cache_io("creating a directory", settings, e))?;
        let (commit, fetch_ref) = self.resolve(git).await?;
        let cached =
            settings
                .cache_dir
                .join(package_key(&git.url.text, self.scope.as_deref(), &commit));
        if cached.is_dir() {
            return Ok(cached);
        }
        let scratch = tempfile::Builder::new()
            .prefix("fetch-")
            .tempdir_in(&settings.cache_dir)
            .map_err(|e| cache_io("creating a directory", settings, e))?;
        let work = scratch.path();
        let url = git.url.text.as_str();
        self.git(work, &["init", "--quiet"], "init", url).await?;
        self.git(
            work,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--depth",
                "1",
                "--",
                url,
                &fetch_ref,
            ],
            "fetch",
            url,
        )
        .await?;
        self.measure(work, url).await?;
        self.git(
            work,
            &["checkout", "--quiet", "--detach", "FETCH_HEAD"],
            "checkout",
            url,
        )
        .await?;
        let head = self
            .git(work, &["rev-parse", "HEAD"], "rev-parse", url)
            .await?;
        if head != commit {
            return Err(Refusal::new(
                "Failed to install module",
                format!(
                    "{url} moved while atoll fetched it ({} became {head}); plan again.",
                    short(&commit)
                ),
            ));
        }
        let kept = scratch.keep();
        let (from, to) = (kept.clone(), cached.clone());
        let settled = tokio::task::spawn_blocking(move || settle(&from, &to)).await;
        match settled {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(cache_io("storing the package", settings, e)),
            Err(e) => {
                return Err(cache_io(
                    "storing the package",
                    settings,
                    std::io::Error::other(e.to_string()),
                ));
            }
        }
        tracing::info!(module.url = %url, commit = %commit, "module package fetched");
        Ok(cached)
    }

    /// The commit a revision names, and what to fetch to get it.
    async fn resolve(&self, git: &GitSource) -> Result<(String, String), Refusal> {
        if let Some(r) = git.git_ref.as_deref().filter(|r| is_commit_id(r)) {
            return Ok((r.to_ascii_lowercase(), r.to_owned()));
        }
        let wanted = git.git_ref.as_deref().unwrap_or("HEAD");
        let cache = self.installer.settings.cache_dir.clone();
        let listed = self
            .git(
                &cache,
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
            if let Some(sha) = refs.get(&c).filter(|sha| is_commit_id(sha)) {
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

    /// Refuses a fetched tree over the file or byte limit before it is checked out: `git
    /// ls-tree` is read as it streams and stopped at the first entry past a limit, so a
    /// repository of a billion small files costs a count, not a disk.
    async fn measure(&self, work: &Path, url: &str) -> Result<(), Refusal> {
        let settings = &self.installer.settings;
        let cmd = GitCommand::new(
            &self.installer.git,
            work,
            &["ls-tree", "-r", "-l", "-z", "FETCH_HEAD"],
        );
        let mut child = cmd
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                Refusal::new(
                    "Failed to install module",
                    format!("Reading the tree fetched from {url} failed: {e}."),
                )
            })?;
        let Some(stdout) = child.stdout.take() else {
            return Err(Refusal::new(
                "Failed to install module",
                format!("Reading the tree fetched from {url} failed."),
            ));
        };
        let mut entries = tokio::io::BufReader::new(stdout).split(0);
        let mut budget = Budget::new(settings);
        let reading = async {
            while let Some(entry) = entries.next_segment().await.map_err(|e| e.to_string())? {
                // `<mode> <type> <object> <size>\t<path>`; a submodule's size is `-`.
                let text = String::from_utf8_lossy(&entry);
                let size = text
                    .split('\t')
                    .next()
                    .and_then(|meta| meta.split_whitespace().nth(3))
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0);
                if !budget.take(size) {
                    return Ok(false);
                }
            }
            Ok::<bool, String>(true)
        };
        let within = tokio::time::timeout(settings.fetch_timeout, reading).await;
        let _ = child.kill().await;
        match within {
            Ok(Ok(true)) => Ok(()),
            Ok(Ok(false)) => Err(too_large(settings, url)),
            Ok(Err(e)) => Err(Refusal::new(
                "Failed to install module",
                format!("Reading the tree fetched from {url} failed: {e}."),
            )),
            Err(_) => Err(Refusal::new(
                "Failed to download module",
                format!(
                    "Listing {url} took longer than {} s (modules.fetch_timeout_secs).",
                    settings.fetch_timeout.as_secs()
                ),
            )),
        }
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

/// Removes the checkout's `.git` from a fetched tree and moves it into the cache; another
/// job that cached the same commit first wins.
fn settle(work: &Path, cached: &Path) -> std::io::Result<()> {
    std::fs::remove_dir_all(work.join(".git"))?;
    if std::fs::rename(work, cached).is_err() {
        let _ = std::fs::remove_dir_all(work);
        if !cached.is_dir() {
            return Err(std::io::Error::other(
                "the package could not be moved into the cache",
            ));
        }
    }
    Ok(())
}

fn cache_io(action: &str, settings: &ModuleSettings, e: std::io::Error) -> Refusal {
    Refusal::new(
        "Failed to install module",
        format!(
            "{action} in the module cache ({}) failed: {e}; check the data directory's permissions and free space.",
            settings.cache_dir.display()
        ),
    )
}

/// Copies a cached package into a new directory of its own under the checkout's install
/// directory, and returns that directory. The install directory is made a real directory
/// first (a link the pull request committed in its place is removed, never followed), and
/// the package's directory has an unpredictable name, so nothing committed can stand in for
/// it and parallel plans of one checkout never share one.
pub(super) async fn place(
    package: &Path,
    checkout: &Path,
    settings: &ModuleSettings,
) -> Result<PathBuf, Refusal> {
    let (package, checkout, settings) = (
        package.to_path_buf(),
        checkout.to_path_buf(),
        settings.clone(),
    );
    tokio::task::spawn_blocking(move || place_blocking(&package, &checkout, &settings))
        .await
        .unwrap_or_else(|e| {
            Err(Refusal::new(
                "Failed to install module",
                format!("Copying the module package failed: {e}."),
            ))
        })
}

fn place_blocking(
    package: &Path,
    checkout: &Path,
    settings: &ModuleSettings,
) -> Result<PathBuf, Refusal> {
    let io = |e: std::io::Error| {
        Refusal::new(
            "Failed to install module",
            format!("Copying the module package into the checkout failed: {e}."),
        )
    };
    let root = checkout.canonicalize().map_err(io)?;
    let mut dir = root.clone();
    for part in Path::new(INSTALL_DIR).components() {
        dir.push(part);
        real_dir(&dir).map_err(io)?;
    }
    let name = package
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key: String = name.chars().take(16).collect();
    let target = tempfile::Builder::new()
        .prefix(&format!("{key}-"))
        .tempdir_in(&dir)
        .map_err(io)?
        .keep();
    if !target.canonicalize().map_err(io)?.starts_with(&root) {
        return Err(io(std::io::Error::other(
            "the install directory left the checkout",
        )));
    }
    let mut budget = Budget::new(settings);
    copy_tree(package, &target, &mut budget).map_err(|e| match e {
        CopyError::Io(e) => io(e),
        CopyError::TooLarge => too_large(settings, &name),
    })?;
    Ok(target)
}

/// Makes `path` a real directory: a symbolic link or a file there is removed (never followed).
fn real_dir(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    match std::fs::create_dir(path) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => {
            // Another plan of the same checkout may have made it meanwhile: a directory either way.
            let meta = std::fs::symlink_metadata(path)?;
            if meta.is_dir() {
                Ok(())
            } else {
                Err(std::io::Error::other("not a directory"))
            }
        }
    }
}

/// `<16 hex digits of the SHA-256 of URL and credential scope>-<commit>`: one directory per
/// repository, commit and credentials.
fn package_key(url: &str, scope: Option<&str>, commit: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(url.as_bytes());
    hasher.update([0]);
    hasher.update(scope.unwrap_or_default().as_bytes());
    let digest = hex::encode(hasher.finalize());
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
    fn a_package_is_keyed_by_repository_credentials_and_commit() {
        let a = package_key("https://x/a.git", None, &"1".repeat(40));
        assert_ne!(a, package_key("https://x/b.git", None, &"1".repeat(40)));
        assert_ne!(a, package_key("https://x/a.git", None, &"2".repeat(40)));
        assert_ne!(
            a,
            package_key("https://x/a.git", Some("x/org"), &"1".repeat(40))
        );
        assert!(a.ends_with(&"1".repeat(40)));
    }

    #[test]
    fn scheme_plaintext_is_http_and_git() {
        assert!(Scheme::Git.plaintext() && Scheme::Http.plaintext());
        assert!(!Scheme::Https.plaintext() && !Scheme::Ssh.plaintext());
    }

    #[cfg(unix)]
    #[test]
    fn a_committed_link_in_place_of_the_install_directory_is_removed_never_followed() {
        let outside = tempfile::tempdir().expect("tmp");
        std::fs::write(outside.path().join("keep"), "x").expect("write");
        let checkout = tempfile::tempdir().expect("tmp");
        std::os::unix::fs::symlink(outside.path(), checkout.path().join(".atoll")).expect("link");
        let package = tempfile::tempdir().expect("tmp");
        std::fs::write(package.path().join("main.tf"), "# module").expect("write");
        let settings = ModuleSettings::defaults(checkout.path());
        let placed = place_blocking(package.path(), checkout.path(), &settings).expect("placed");
        assert!(placed.starts_with(checkout.path().canonicalize().expect("canonical")));
        assert!(placed.join("main.tf").is_file());
        assert_eq!(
            std::fs::read_dir(outside.path()).expect("dir").count(),
            1,
            "nothing written outside"
        );
        let again = place_blocking(package.path(), checkout.path(), &settings).expect("placed");
        assert_ne!(placed, again, "each install has a directory of its own");
    }
}
