//! Real git repositories behind the fake forge: one bare repository per fake repository, and
//! commits written with plumbing (`hash-object`, `update-index` on a scratch index,
//! `write-tree`, `commit-tree`, `update-ref`), so no working tree is needed. The clone URL
//! is the bare repository's `file://` path.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::FakeError;

/// Runs git in `git_dir` with a fixed identity and no user or system configuration.
async fn git(
    git_dir: &Path,
    args: &[&str],
    stdin: Option<&[u8]>,
    index: Option<&Path>,
) -> Result<String, FakeError> {
    let mut cmd = Command::new("git");
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_DIR", git_dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Fake Forge")
        .env("GIT_AUTHOR_EMAIL", "fake@forge.invalid")
        .env("GIT_COMMITTER_NAME", "Fake Forge")
        .env("GIT_COMMITTER_EMAIL", "fake@forge.invalid")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| FakeError::Git(format!("starting git: {e}")))?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input)
            .await
            .map_err(|e| FakeError::Git(format!("writing to git: {e}")))?;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|e| FakeError::Git(format!("waiting for git: {e}")))?;
    if !out.status.success() {
        return Err(FakeError::Git(format!(
            "git {} failed: {}",
            args.first().copied().unwrap_or(""),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Creates a bare repository at `path` with one commit on `branch` holding a README.
pub(super) async fn init_bare(path: &Path, branch: &str) -> Result<String, FakeError> {
    init_empty(path).await?;
    commit(
        path,
        None,
        &[("README.md", "fake repository\n")],
        "initial commit",
        &format!("refs/heads/{branch}"),
    )
    .await
}

/// Creates an empty bare repository at `path` that serves any commit it has by SHA.
pub(super) async fn init_empty(path: &Path) -> Result<(), FakeError> {
    tokio::fs::create_dir_all(path)
        .await
        .map_err(|e| FakeError::Git(format!("creating {}: {e}", path.display())))?;
    git(path, &["init", "--bare", "--quiet"], None, None).await?;
    git(
        path,
        &["config", "uploadpack.allowAnySHA1InWant", "true"],
        None,
        None,
    )
    .await
    .map(drop)
}

/// Writes a commit whose tree is `parent`'s tree plus `files` (`(path, content)`; empty content
/// deletes the path), points `reference` at it and returns its SHA.
pub(super) async fn commit(
    git_dir: &Path,
    parent: Option<&str>,
    files: &[(&str, &str)],
    message: &str,
    reference: &str,
) -> Result<String, FakeError> {
    commit_with_links(git_dir, parent, files, &[], message, reference).await
}

/// [`commit`], plus symbolic links (`(path, target)`, git mode 120000): a checkout of the
/// commit has them as real links.
pub(super) async fn commit_with_links(
    git_dir: &Path,
    parent: Option<&str>,
    files: &[(&str, &str)],
    links: &[(&str, &str)],
    message: &str,
    reference: &str,
) -> Result<String, FakeError> {
    let scratch = tempfile::tempdir().map_err(|e| FakeError::Git(format!("scratch dir: {e}")))?;
    let index = scratch.path().join("index");
    if let Some(parent) = parent {
        git(git_dir, &["read-tree", parent], None, Some(&index)).await?;
    }
    let entries: Vec<(&str, &str, &str)> = files
        .iter()
        .map(|(path, content)| (*path, *content, "100644"))
        .chain(
            links
                .iter()
                .map(|(path, target)| (*path, *target, "120000")),
        )
        .collect();
    let mut blob_paths: Vec<PathBuf> = Vec::new();
    for (n, (_, content, _)) in entries.iter().enumerate() {
        let p = scratch.path().join(format!("blob{n}"));
        std::fs::write(&p, content).map_err(|e| FakeError::Git(format!("writing blob: {e}")))?;
        blob_paths.push(p);
    }
    let list: String = blob_paths
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    let hashes = git(
        git_dir,
        &["hash-object", "-w", "--stdin-paths"],
        Some(list.as_bytes()),
        None,
    )
    .await?;
    let mut info = String::new();
    for ((path, content, mode), hash) in entries.iter().zip(hashes.lines()) {
        if content.is_empty() {
            info.push_str(&format!("0 {} 0\t{path}\n", "0".repeat(40)));
        } else {
            info.push_str(&format!("{mode} {hash}\t{path}\n"));
        }
    }
    git(
        git_dir,
        &["update-index", "--add", "--index-info"],
        Some(info.as_bytes()),
        Some(&index),
    )
    .await?;
    let tree = git(git_dir, &["write-tree"], None, Some(&index)).await?;
    let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
    if let Some(parent) = parent {
        args.extend(["-p", parent]);
    }
    let sha = git(git_dir, &args, None, None).await?;
    git(git_dir, &["update-ref", reference, &sha], None, None).await?;
    Ok(sha)
}

/// Fetches `refspec` from the repository at `from` (another bare repository of the fake) into
/// `git_dir`, as a fork's creation or GitHub's `refs/pull/N/head` in the base repository do.
pub(super) async fn fetch(git_dir: &Path, from: &Path, refspec: &str) -> Result<(), FakeError> {
    let url = format!("file://{}", from.display());
    git(
        git_dir,
        &["fetch", "--quiet", "--no-tags", &url, refspec],
        None,
        None,
    )
    .await
    .map(drop)
}

/// Points `reference` at `sha`.
pub(super) async fn set_ref(git_dir: &Path, reference: &str, sha: &str) -> Result<(), FakeError> {
    git(git_dir, &["update-ref", reference, sha], None, None)
        .await
        .map(drop)
}

/// Deletes `reference`; `Ok(false)` when it did not exist.
pub(super) async fn delete_ref(git_dir: &Path, reference: &str) -> Result<bool, FakeError> {
    if git(
        git_dir,
        &["rev-parse", "--verify", "--quiet", reference],
        None,
        None,
    )
    .await
    .is_err()
    {
        return Ok(false);
    }
    git(git_dir, &["update-ref", "-d", reference], None, None).await?;
    Ok(true)
}

/// Whether `reference` exists.
pub(super) async fn ref_exists(git_dir: &Path, reference: &str) -> bool {
    git(
        git_dir,
        &["rev-parse", "--verify", "--quiet", reference],
        None,
        None,
    )
    .await
    .is_ok()
}
