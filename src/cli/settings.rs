//! The settings `atoll plan/apply/state` need, read by the same loader as the server
//! (`crate::config`) and converted by the engine's own conversions: the YAML file given with `--config` (optional), then `ATOLL_*` variables,
//! then the bpg provider's `PROXMOX_VE_*` variables for the connection. Only the sections these
//! commands use are kept: the store, the Proxmox connection and the guard.

use std::path::Path;

use secrecy::SecretString;

use crate::config;
use crate::proxmox::client::ClientSettings;
use crate::proxmox::engine::Protect;

/// What the local commands need.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Secret: may hold a database password.
    pub store_url: SecretString,
    pub proxmox: Option<ClientSettings>,
    pub protect: Protect,
    /// The evaluator's limits (`limits:`).
    pub limits: tfconfig::Limits,
    /// Where remote module sources may come from (`modules:`).
    pub modules: crate::workdir::modules::ModuleSettings,
    /// SSH access to the nodes, for snippets (`proxmox.ssh`).
    pub sftp: Option<crate::proxmox::sftp::SftpSettings>,
    /// Where Terraform's state may be read from (`terraform_state:`).
    pub terraform_state: config::TerraformStateSettings,
}

/// Reads the settings from `config` (if given) and the process environment, logging the
/// loader's warnings.
pub fn load(config: Option<&Path>) -> Result<Settings, String> {
    load_with(config, true)
}

/// [`load`]; `warn` false keeps the loader's warnings (about the server: forges, public URL)
/// out of a command that uses none of it (`atoll validate`).
pub(super) fn load_with(config: Option<&Path>, warn: bool) -> Result<Settings, String> {
    let text = match config {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?
        }
        None => String::new(),
    };
    let env: Vec<(String, String)> = std::env::vars().collect();
    from_sources(
        &text,
        env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        warn,
    )
}

/// Reads the settings from YAML text and an explicit environment (tests pass their own).
pub(super) fn from_sources<'a>(
    yaml: &str,
    env: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
    warn: bool,
) -> Result<Settings, String> {
    let loaded = config::from_sources(yaml, env)
        .map_err(|e| format!("{e}(check the file with atoll check-config)"))?;
    for warning in loaded.warnings.iter().filter(|_| warn) {
        tracing::warn!("{warning}");
    }
    let settings = loaded.settings;
    Ok(Settings {
        store_url: settings.store.url,
        proxmox: settings.proxmox.as_ref().map(ClientSettings::from),
        sftp: settings
            .proxmox
            .as_ref()
            .and_then(|p| p.ssh.as_ref())
            .map(Into::into),
        protect: Protect::from(&settings.protect),
        limits: settings.limits.tfconfig(),
        modules: settings.modules,
        terraform_state: settings.terraform_state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn atoll_variables_win_over_bpg_variables() {
        let env = [
            ("ATOLL_PROXMOX__ENDPOINT", "https://ours:8006"),
            ("PROXMOX_VE_ENDPOINT", "https://theirs:8006"),
            ("PROXMOX_VE_API_TOKEN", "root@pam!t=s"),
            ("ATOLL_STORE__URL", "sqlite::memory:"),
        ];
        let settings = from_sources("", env, true).expect("settings");
        let proxmox = settings.proxmox.expect("proxmox settings");
        assert_eq!(proxmox.endpoint.trim_end_matches('/'), "https://ours:8006");
        assert_eq!(settings.store_url.expose_secret(), "sqlite::memory:");
        assert!(settings.protect.discover, "discovery is on by default");
    }

    #[test]
    fn endpoint_without_credentials_is_refused_with_the_fix() {
        let env = [("PROXMOX_VE_ENDPOINT", "https://x:8006")];
        let err = from_sources("", env, true).expect_err("no credentials");
        assert!(err.contains("proxmox"), "{err}");
    }

    #[test]
    fn protected_guests_come_from_the_protect_section() {
        let yaml = "protect:\n  guests:\n    - vm_id: 105\n    - name: gitea\n      node: pve\n  allow_live_changes: true\n";
        let settings = from_sources(yaml, [], true).expect("settings");
        assert_eq!(settings.protect.guests.len(), 2);
        assert!(settings.protect.policy.allow_live_changes);
    }
}
