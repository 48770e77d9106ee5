//! The settings `atoll plan/apply/state` need, read by the same loader as the server
//! (`crate::config`): the YAML file given with `--config` (optional), then `ATOLL_*` variables,
//! then the bpg provider's `PROXMOX_VE_*` variables for the connection. Only the sections these
//! commands use are kept: the store, the Proxmox connection and the guard.

use std::path::Path;

use secrecy::SecretString;

use crate::config::{self, GuestSelector, ProtectSettings, ProxmoxAuth, ProxmoxSettings};
use crate::proxmox::client::{Auth, ClientSettings, Tls};
use crate::proxmox::guard::{GuardPolicy, ProtectSpec};

/// The guard's settings (`protect`).
#[derive(Debug, Clone)]
pub struct Protect {
    pub guests: Vec<ProtectSpec>,
    pub discover: bool,
    pub local_macs: Vec<String>,
    pub policy: GuardPolicy,
}

/// What the local commands need.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Secret: may hold a database password.
    pub store_url: SecretString,
    pub proxmox: Option<ClientSettings>,
    pub protect: Protect,
    /// The evaluator's limits (`limits:`).
    pub limits: crate::tfconfig::Limits,
}

/// Reads the settings from `config` (if given) and the process environment.
pub fn load(config: Option<&Path>) -> Result<Settings, String> {
    let text = match config {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?
        }
        None => String::new(),
    };
    let env: Vec<(String, String)> = std::env::vars().collect();
    from_sources(&text, env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Reads the settings from YAML text and an explicit environment (tests pass their own).
pub(super) fn from_sources<'a>(
    yaml: &str,
    env: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
) -> Result<Settings, String> {
    let loaded = config::from_sources(yaml, env)
        .map_err(|e| format!("{e}(check the file with atoll check-config)"))?;
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    let settings = loaded.settings;
    Ok(Settings {
        store_url: settings.store.url,
        proxmox: settings.proxmox.map(client_settings),
        protect: protect(settings.protect),
        limits: settings.limits.tfconfig(),
    })
}

/// The client settings for the server's `proxmox` section.
pub fn client_settings(proxmox: ProxmoxSettings) -> ClientSettings {
    let auth = match proxmox.auth {
        ProxmoxAuth::ApiToken(token) => Auth::ApiToken(token),
        ProxmoxAuth::Password { username, password } => Auth::Password { username, password },
    };
    let mut settings = ClientSettings::new(proxmox.endpoint, auth);
    settings.tls = match (proxmox.insecure, proxmox.ca_file) {
        (true, _) => Tls::Insecure,
        (false, Some(ca)) => Tls::CaFile(ca),
        (false, None) => Tls::SystemRoots,
    };
    settings.proxy = proxmox.proxy;
    settings.tasks.lock_timeout = proxmox.lock_wait;
    settings
}

fn protect(protect: ProtectSettings) -> Protect {
    let guests = protect
        .guests
        .into_iter()
        .map(|g| match g {
            GuestSelector::VmId(vm_id) => ProtectSpec::VmId(vm_id),
            GuestSelector::Name { name, node } => ProtectSpec::Name { name, node },
        })
        .collect();
    Protect {
        guests,
        discover: protect.discover,
        local_macs: protect.local_macs,
        policy: GuardPolicy {
            allow_live_changes: protect.allow_live_changes,
        },
    }
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
        let settings = from_sources("", env).expect("settings");
        let proxmox = settings.proxmox.expect("proxmox settings");
        assert_eq!(proxmox.endpoint.trim_end_matches('/'), "https://ours:8006");
        assert_eq!(settings.store_url.expose_secret(), "sqlite::memory:");
        assert!(settings.protect.discover, "discovery is on by default");
    }

    #[test]
    fn endpoint_without_credentials_is_refused_with_the_fix() {
        let env = [("PROXMOX_VE_ENDPOINT", "https://x:8006")];
        let err = from_sources("", env).expect_err("no credentials");
        assert!(err.contains("proxmox"), "{err}");
    }

    #[test]
    fn protected_guests_come_from_the_protect_section() {
        let yaml = "protect:\n  guests:\n    - vm_id: 105\n    - name: gitea\n      node: pve\n  allow_live_changes: true\n";
        let settings = from_sources(yaml, []).expect("settings");
        assert_eq!(settings.protect.guests.len(), 2);
        assert!(settings.protect.policy.allow_live_changes);
    }
}
