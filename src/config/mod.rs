//! The settings tree: built-in defaults, then the YAML file, then `ATOLL_*` environment variables
//! (`__` separates nesting levels; lists are comma-separated). Every secret can also come from a
//! file named by the same key with `_file` appended. Read at start-up only: nothing else in the
//! crate reads files or the environment for settings.
//!
//! Loading reports every problem with its key path (and the variable that set it), never just
//! the first one, so `atoll check-config` can list them all.

mod limits;
mod proxmox;
mod sections;
mod server;
mod ssh;
mod terraform_state;
mod tree;
mod web;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::SecretString;

pub use limits::LimitsSettings;
pub use proxmox::{GuestSelector, ProtectSettings, ProxmoxAuth, ProxmoxSettings};
pub use server::{ServerSettings, WebhookBodySettings};
pub use ssh::SshSettings;
pub use terraform_state::{S3Settings, TerraformStateSettings};
pub use web::{ApiSettings, WebSettings};

/// The whole settings tree. Components receive their own section, never all of it.
#[derive(Debug, Clone)]
pub struct Settings {
    pub server: ServerSettings,
    pub data_dir: PathBuf,
    pub store: StoreSettings,
    pub github: ForgeSettings,
    pub gitea: ForgeSettings,
    /// `host/owner/repo` glob patterns; a leading `!` excludes.
    pub repo_allowlist: Vec<String>,
    /// `repos`: server-side repo rules (apply requirements, overrides, restart, which
    /// directories the server manages), as in `repocfg::ServerRules`.
    pub repo_rules: crate::repocfg::ServerRules,
    /// `policies`: the policy sets every plan is checked against, and who may approve a
    /// failing one (`policies::PolicySettings`); none configured by default.
    pub policies: crate::policies::PolicySettings,
    pub webhook: WebhookSettings,
    /// `webhook.max_body_bytes` and the other limits on deliveries being read.
    pub webhook_body: WebhookBodySettings,
    pub commands: CommandSettings,
    pub proxmox: Option<ProxmoxSettings>,
    pub protect: ProtectSettings,
    pub queue: QueueSettings,
    pub log: LogSettings,
    pub web: WebSettings,
    pub api: ApiSettings,
    /// `limits`: what one pull request may make atoll read and evaluate.
    pub limits: LimitsSettings,
    /// `modules`: the hosts and registries remote module sources may come from.
    pub modules: crate::workdir::modules::ModuleSettings,
    /// `terraform_state`: where `import-terraform --from-backend` may read Terraform's state.
    pub terraform_state: TerraformStateSettings,
}

#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// `sqlite://PATH` or `postgres://...`; default `sqlite://<data_dir>/atoll.db`.
    pub url: SecretString,
}

/// One forge's webhook settings (`github.*`, `gitea.*`; Forgejo uses the Gitea section).
#[derive(Debug, Clone)]
pub struct ForgeSettings {
    pub enabled: bool,
    pub webhook_secret: Option<SecretString>,
    /// The bot account atoll comments as: `@<bot_user>` is accepted as a command name, and
    /// comments by this user never run commands.
    pub bot_user: Option<String>,
    /// `<forge>.api_url`: GitHub's REST base (default `https://api.github.com`; GitHub
    /// Enterprise `https://HOST/api/v3`), Gitea's site root (required to comment on Gitea).
    pub api_url: Option<String>,
    /// `<forge>.token` / `<forge>.token_file`: the token atoll comments and fetches with.
    pub token: Option<SecretString>,
    /// `github.app_id`, `github.app_private_key(_file)`, `github.installation_id`: GitHub App
    /// auth instead of `token` (GitHub only).
    pub app: Option<GithubAppSettings>,
    /// `gitea.max_comment_chars`: comments longer than this are split into several (Gitea
    /// has no built-in limit; default GitHub's 65,536). GitHub's limit is fixed.
    pub max_comment_chars: usize,
}

/// A GitHub App installation atoll acts as.
#[derive(Debug, Clone)]
pub struct GithubAppSettings {
    pub app_id: u64,
    /// The App's RSA private key (PEM).
    pub private_key: SecretString,
    pub installation_id: u64,
}

/// What the webhook accepts beyond signature and allowlist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookSettings {
    pub allow_draft_prs: bool,
    pub allow_fork_prs: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSettings {
    /// Accepted in comments besides `atlantis` (default `atoll`).
    pub executable_name: String,
    /// `commands.unlock_requires`: who may comment `atlantis unlock`; any one of these
    /// suffices (default `[write, author]`).
    pub unlock_requires: Vec<UnlockRole>,
    /// `commands.max_reply_comments`: the most comments one reply is split into; the rest is
    /// cut with a note linking the job log (default 4).
    pub max_reply_comments: usize,
    /// `commands.allow_commands`: the commands the server runs (Atlantis's default
    /// `version, plan, apply, unlock, approve_policies`; `all` for every one).
    pub allow_commands: crate::commands::AllowedCommands,
}

/// Who may release a pull request's locks with `atlantis unlock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnlockRole {
    /// Write (or maintain, admin) access to the repository, as apply needs.
    Write,
    /// The pull request's author.
    Author,
    /// Anyone who can comment on the pull request (not recommended: a read-only user could
    /// release locks and discard plans).
    Anyone,
}

impl UnlockRole {
    /// The word used in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Author => "author",
            Self::Anyone => "anyone",
        }
    }
}

/// Job queue settings: leases, caps and the shutdown grace period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    pub lease: Duration,
    pub heartbeat: Duration,
    pub max_running: u32,
    pub max_running_per_repo: u32,
    pub shutdown_grace: Duration,
    /// Finished jobs (with their logs) and delivery records older than this are deleted;
    /// `None` keeps them forever.
    pub retention: Option<Duration>,
    /// `queue.max_attempts`: how many times a job is started while its worker keeps dying
    /// (lease expired while running) before it is failed and its pull request told.
    pub max_attempts: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// `tracing` filter directives, e.g. `info` or `atoll=debug,info`; `RUST_LOG` overrides it.
    pub level: String,
    pub format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// One thing wrong with the configuration, with the key path it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every problem found while loading; never empty.
#[derive(Debug, Clone, thiserror::Error)]
pub struct ConfigError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "{n} problem{} in the configuration:",
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        Ok(())
    }
}

/// A loaded configuration plus warnings that do not stop the server.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub settings: Settings,
    pub warnings: Vec<String>,
}

/// Loads `path` with the process environment applied.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        problems: vec![Problem::new(
            "(file)",
            format!(
                "cannot read {}: {e}; pass an existing file with --config",
                path.display()
            ),
        )],
    })?;
    let env: Vec<(String, String)> = std::env::vars().collect();
    from_sources(&text, env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Loads from YAML text and an explicit environment (tests pass their own).
pub fn from_sources<'a>(
    yaml: &str,
    env: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
) -> Result<Loaded, ConfigError> {
    let mut tree = tree::Tree::from_yaml(yaml).map_err(|p| ConfigError { problems: vec![p] })?;
    tree.apply_env(env.clone());
    proxmox::apply_bpg_env(&mut tree, env);
    let mut reader = tree::Reader::new(&tree);
    let settings = sections::read(&mut reader);
    reader.report_unknown_keys();
    if reader.problems.is_empty() {
        let mut warnings = reader.warnings;
        warnings.extend(
            tree.stray_env
                .iter()
                .map(|v| format!("{v}: ignored, not a valid ATOLL_ key name")),
        );
        Ok(Loaded { settings, warnings })
    } else {
        Err(ConfigError {
            problems: reader.problems,
        })
    }
}

/// Every key path the loader understands (`server.listen`, `github.webhook_secret`, ...), for
/// checking that `config.example.yaml` documents them all.
pub fn known_keys() -> Vec<String> {
    let tree = tree::Tree::default();
    let mut reader = tree::Reader::new(&tree);
    let _ = sections::read(&mut reader);
    reader.known_keys()
}
