//! Builds a [`Runner`] from the server settings: one forge client per enabled forge, the
//! engine over the app's one Proxmox client, the guard settings and the repo rules.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::Runner;
use crate::config::{ForgeSettings, Settings};
use crate::forge::{Forge, GiteaApi, GiteaApiSettings, GithubApi, GithubApiSettings, GithubAuth};
use crate::proxmox::ProxmoxApi;
use crate::proxmox::engine::{Engine, Protect};
use crate::store::Store;
use crate::workdir::Workdir;
use crate::workdir::modules::Installer;

const GITHUB_API: &str = "https://api.github.com";
const FORGE_TIMEOUT: Duration = Duration::from_secs(30);

impl Runner {
    /// The runner for `settings`, sharing the app's `store` and Proxmox VE client (`None`: no
    /// `proxmox` section). A forge enabled without API settings gets a start-up warning; its
    /// jobs then fail with a comment-less error naming the keys to set.
    pub fn from_settings(
        settings: &Settings,
        store: Arc<dyn Store>,
        proxmox: Option<Arc<dyn ProxmoxApi>>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            github: github(&settings.github)?,
            gitea: gitea(&settings.gitea)?,
            store,
            workdir: Workdir::new(&settings.data_dir),
            rules: settings.repo_rules.clone(),
            engine: proxmox.map(|api| {
                let ssh = settings.proxmox.as_ref().and_then(|p| p.ssh.as_ref());
                Engine::new(api, Protect::from(&settings.protect)).with_sftp(ssh.map(Into::into))
            }),
            executable: settings.commands.executable_name.clone(),
            public_url: settings.server.public_url.clone(),
            policy: super::Policy {
                allow_fork_prs: settings.webhook.allow_fork_prs,
                unlock_requires: settings.commands.unlock_requires.clone(),
                max_reply_comments: settings.commands.max_reply_comments,
                allow_commands: settings.commands.allow_commands.clone(),
            },
            limits: settings.limits,
            policies: Arc::new(settings.policies.clone()),
            modules: Installer::new(settings.modules.clone())
                .map_err(anyhow::Error::msg)
                .context("building the module installer (modules:)")?,
        })
    }
}

fn github(f: &ForgeSettings) -> anyhow::Result<Option<Arc<dyn Forge>>> {
    if !f.enabled {
        return Ok(None);
    }
    let auth = match (&f.app, &f.token) {
        (Some(app), _) => GithubAuth::App {
            app_id: app.app_id,
            private_key_pem: app.private_key.clone(),
            installation_id: app.installation_id,
        },
        (None, Some(token)) => GithubAuth::Token(token.clone()),
        (None, None) => {
            tracing::warn!(
                "github is enabled but neither github.token nor the GitHub App keys are set: PR jobs from GitHub will fail until one is"
            );
            return Ok(None);
        }
    };
    let api = GithubApi::new(&GithubApiSettings {
        api_url: f.api_url.clone().unwrap_or_else(|| GITHUB_API.to_owned()),
        auth,
        timeout: FORGE_TIMEOUT,
    })
    .context("building the GitHub client (github.api_url)")?;
    Ok(Some(Arc::new(api)))
}

fn gitea(f: &ForgeSettings) -> anyhow::Result<Option<Arc<dyn Forge>>> {
    if !f.enabled {
        return Ok(None);
    }
    let (Some(url), Some(token)) = (f.api_url.clone(), f.token.clone()) else {
        tracing::warn!(
            "gitea is enabled but gitea.api_url or gitea.token is not set: PR jobs from Gitea will fail until both are"
        );
        return Ok(None);
    };
    let mut settings = GiteaApiSettings::new(&url, token);
    settings.max_comment_chars = f.max_comment_chars;
    let api = GiteaApi::new(&settings).context("building the Gitea client (gitea.api_url)")?;
    Ok(Some(Arc::new(api)))
}
