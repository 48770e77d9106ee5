//! One git invocation: argv only (never a shell), a cleared environment, no user or system
//! configuration, no hooks, no prompts. Credentials travel only as an `http.extraHeader` in
//! `GIT_CONFIG_*` environment variables, never in argv or a URL.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use secrecy::{ExposeSecret, SecretString};
use tokio::process::Command;

use super::WorkdirError;

/// Longest stderr excerpt kept in an error.
const MAX_STDERR: usize = 2000;

/// A git command under construction, inspectable before it runs.
#[derive(Debug)]
pub(crate) struct GitCommand {
    program: PathBuf,
    dir: PathBuf,
    args: Vec<OsString>,
    /// `(key, value)` pairs passed as `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`.
    config: Vec<(String, SecretString)>,
}

impl GitCommand {
    pub(crate) fn new(program: &Path, dir: &Path, args: &[&str]) -> Self {
        Self {
            program: program.to_owned(),
            dir: dir.to_owned(),
            args: args.iter().map(OsString::from).collect(),
            config: vec![
                ("core.hooksPath".to_owned(), SecretString::from("/dev/null")),
                ("core.fsmonitor".to_owned(), SecretString::from("false")),
                ("protocol.ext.allow".to_owned(), SecretString::from("never")),
                (
                    "advice.detachedHead".to_owned(),
                    SecretString::from("false"),
                ),
            ],
        }
    }

    /// Sends `Authorization: <value>` with every HTTP request of this command.
    pub(crate) fn with_auth_header(mut self, value: Option<&SecretString>) -> Self {
        if let Some(value) = value {
            let header = format!("Authorization: {}", value.expose_secret());
            self.config
                .push(("http.extraHeader".to_owned(), SecretString::from(header)));
        }
        self
    }

    /// Sets a git configuration value for this command only (`GIT_CONFIG_*`).
    pub(crate) fn with_config(mut self, key: &str, value: &str) -> Self {
        self.config
            .push((key.to_owned(), SecretString::from(value.to_owned())));
        self
    }

    /// The arguments git will get (for inspection: they never hold a credential).
    #[cfg(test)]
    pub(crate) fn argv(&self) -> &[OsString] {
        &self.args
    }

    /// The environment git will get, values exposed (only to git itself and to tests).
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".to_owned(), "/nonexistent".to_owned()),
            ("LC_ALL".to_owned(), "C".to_owned()),
            ("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned()),
            ("GIT_ASKPASS".to_owned(), "/bin/false".to_owned()),
            ("GIT_CONFIG_NOSYSTEM".to_owned(), "1".to_owned()),
            ("GIT_CONFIG_GLOBAL".to_owned(), "/dev/null".to_owned()),
            ("GIT_CONFIG_COUNT".to_owned(), self.config.len().to_string()),
        ];
        for (n, (key, value)) in self.config.iter().enumerate() {
            env.push((format!("GIT_CONFIG_KEY_{n}"), key.clone()));
            env.push((
                format!("GIT_CONFIG_VALUE_{n}"),
                value.expose_secret().to_owned(),
            ));
        }
        env
    }

    /// The command with this argv and environment only (no shell, nothing inherited), for a
    /// caller that reads its output as it streams.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .current_dir(&self.dir)
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Starts git with this argv and environment only (no shell, nothing inherited) and waits.
    async fn output(&self, step: &'static str) -> Result<std::process::Output, WorkdirError> {
        self.command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .await
            .map_err(|e| WorkdirError::Git {
                step,
                detail: format!("could not start git ({}): {e}", self.program.display()),
            })
    }

    /// Runs it; stdout on success. Errors name `step` and quote stderr with secrets removed.
    pub(crate) async fn run(&self, step: &'static str) -> Result<String, WorkdirError> {
        let out = self.output(step).await?;
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(WorkdirError::Git {
            step,
            detail: self.redact(stderr.trim()),
        })
    }

    /// Runs a yes/no command (`merge-base --is-ancestor`): exit 0 is yes, 1 is no, anything
    /// else an error naming `step`.
    pub(crate) async fn answer(&self, step: &'static str) -> Result<bool, WorkdirError> {
        let out = self.output(step).await?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(WorkdirError::Git {
                step,
                detail: self.redact(String::from_utf8_lossy(&out.stderr).trim()),
            }),
        }
    }

    /// Removes every configured secret value (and its base64 credential part) from `text`.
    fn redact(&self, text: &str) -> String {
        let mut text: String = text.chars().take(MAX_STDERR).collect();
        for (key, value) in &self.config {
            if key != "http.extraHeader" {
                continue;
            }
            let header = value.expose_secret();
            let mut needles = vec![header.to_owned()];
            if let Some((_, credential)) = header.rsplit_once(' ') {
                needles.push(credential.to_owned());
            }
            for needle in needles.iter().filter(|n| n.len() >= 4) {
                text = text.replace(needle.as_str(), "[redacted]");
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_to_the_environment_not_argv() {
        let secret = SecretString::from("Basic c2VjcmV0LXRva2Vu");
        let cmd = GitCommand::new(
            Path::new("git"),
            Path::new("/tmp"),
            &["fetch", "--no-tags", "https://example/x.git"],
        )
        .with_auth_header(Some(&secret));
        assert!(
            cmd.argv()
                .iter()
                .all(|a| !a.to_string_lossy().contains("c2VjcmV0"))
        );
        let env = cmd.env();
        let find = |k: &str| env.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        let n = env
            .iter()
            .find(|(_, v)| v == "http.extraHeader")
            .map(|(k, _)| k.trim_start_matches("GIT_CONFIG_KEY_").to_owned());
        let n = n.expect("extraHeader configured");
        assert_eq!(
            find(&format!("GIT_CONFIG_VALUE_{n}")).as_deref(),
            Some("Authorization: Basic c2VjcmV0LXRva2Vu")
        );
        assert_eq!(find("GIT_TERMINAL_PROMPT").as_deref(), Some("0"));
        assert!(env.iter().any(|(_, v)| v == "core.hooksPath"));
    }

    #[test]
    fn stderr_is_redacted() {
        let secret = SecretString::from("Basic c2VjcmV0LXRva2Vu");
        let cmd = GitCommand::new(Path::new("git"), Path::new("/tmp"), &["fetch"])
            .with_auth_header(Some(&secret));
        let shown = cmd.redact(
            "fatal: header Authorization: Basic c2VjcmV0LXRva2Vu refused; c2VjcmV0LXRva2Vu",
        );
        assert!(!shown.contains("c2VjcmV0"), "{shown}");
    }
}
