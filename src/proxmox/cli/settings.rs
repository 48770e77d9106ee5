//! The few settings `atoll plan/apply/state` need, read the way the server reads them: the
//! YAML file given with `--config` (unknown keys ignored), then `ATOLL_*` variables (`__`
//! between levels), then the bpg provider's `PROXMOX_VE_*` variables for the connection.
//! (The server's `config` module is on another branch; this reads the same keys.)

use std::path::{Path, PathBuf};

use secrecy::SecretString;
use serde::Deserialize;

use crate::proxmox::client::{Auth, ClientSettings, Tls};
use crate::proxmox::guard::{GuardPolicy, ProtectSpec};

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    data_dir: Option<String>,
    #[serde(default)]
    store: StoreFile,
    #[serde(default)]
    proxmox: ProxmoxFile,
    #[serde(default)]
    protect: ProtectFile,
}

#[derive(Debug, Default, Deserialize)]
struct StoreFile {
    url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ProxmoxFile {
    endpoint: Option<String>,
    api_token: Option<String>,
    username: Option<String>,
    password: Option<String>,
    insecure: Option<bool>,
    ca_file: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum GuestFile {
    VmId { vm_id: u32 },
    Name { name: String, node: Option<String> },
}

#[derive(Debug, Deserialize)]
struct ProtectFile {
    #[serde(default)]
    guests: Vec<GuestFile>,
    #[serde(default = "yes")]
    discover: bool,
    #[serde(default)]
    local_macs: Vec<String>,
    #[serde(default)]
    allow_live_changes: bool,
}

fn yes() -> bool {
    true
}

impl Default for ProtectFile {
    fn default() -> Self {
        Self {
            guests: Vec::new(),
            discover: true,
            local_macs: Vec::new(),
            allow_live_changes: false,
        }
    }
}

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
}

fn parse_bool(name: &str, value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        other => Err(format!("{name} must be true or false, got '{other}'")),
    }
}

/// Reads the settings; `env` looks up an environment variable.
pub fn load(
    config: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, String> {
    let file: File = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            serde_yaml_ng::from_str(&text).map_err(|e| {
                format!("{}: {e} (check it with atoll check-config)", path.display())
            })?
        }
        None => File::default(),
    };
    let get = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    let data_dir = get("ATOLL_DATA_DIR")
        .or(file.data_dir)
        .unwrap_or_else(|| "./data".to_owned());
    let store_url = get("ATOLL_STORE__URL")
        .or(file.store.url)
        .unwrap_or_else(|| {
            format!(
                "sqlite://{}",
                PathBuf::from(data_dir).join("atoll.db").display()
            )
        });
    let proxmox = proxmox(file.proxmox, &get)?;
    let discover = match get("ATOLL_PROTECT__DISCOVER") {
        Some(v) => parse_bool("ATOLL_PROTECT__DISCOVER", &v)?,
        None => file.protect.discover,
    };
    let allow_live_changes = match get("ATOLL_PROTECT__ALLOW_LIVE_CHANGES") {
        Some(v) => parse_bool("ATOLL_PROTECT__ALLOW_LIVE_CHANGES", &v)?,
        None => file.protect.allow_live_changes,
    };
    let local_macs = match get("ATOLL_PROTECT__LOCAL_MACS") {
        Some(v) => v.split(',').map(|m| m.trim().to_owned()).collect(),
        None => file.protect.local_macs,
    };
    let guests = file
        .protect
        .guests
        .into_iter()
        .map(|g| match g {
            GuestFile::VmId { vm_id } => ProtectSpec::VmId(vm_id),
            GuestFile::Name { name, node } => ProtectSpec::Name { name, node },
        })
        .collect();
    Ok(Settings {
        store_url: SecretString::from(store_url),
        proxmox,
        protect: Protect {
            guests,
            discover,
            local_macs,
            policy: GuardPolicy { allow_live_changes },
        },
    })
}

fn proxmox(
    file: ProxmoxFile,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ClientSettings>, String> {
    let pick = |ours: &str, from_file: Option<String>, bpg: &str| {
        get(ours).or(from_file).or_else(|| get(bpg))
    };
    let Some(endpoint) = pick(
        "ATOLL_PROXMOX__ENDPOINT",
        file.endpoint,
        "PROXMOX_VE_ENDPOINT",
    ) else {
        return Ok(None);
    };
    let token = pick(
        "ATOLL_PROXMOX__API_TOKEN",
        file.api_token,
        "PROXMOX_VE_API_TOKEN",
    );
    let username = pick(
        "ATOLL_PROXMOX__USERNAME",
        file.username,
        "PROXMOX_VE_USERNAME",
    );
    let password = pick(
        "ATOLL_PROXMOX__PASSWORD",
        file.password,
        "PROXMOX_VE_PASSWORD",
    );
    let auth = match (token, username, password) {
        (Some(token), _, _) => Auth::ApiToken(SecretString::from(token)),
        (None, Some(username), Some(password)) => Auth::Password {
            username,
            password: SecretString::from(password),
        },
        _ => {
            return Err(
                "proxmox.endpoint is set but no credentials: set proxmox.api_token \
                        (or PROXMOX_VE_API_TOKEN), or a username and password"
                    .to_owned(),
            );
        }
    };
    let insecure = match get("ATOLL_PROXMOX__INSECURE").or_else(|| get("PROXMOX_VE_INSECURE")) {
        Some(v) => parse_bool("proxmox.insecure", &v)?,
        None => file.insecure.unwrap_or(false),
    };
    let mut settings = ClientSettings::new(endpoint, auth);
    settings.tls = match (insecure, file.ca_file) {
        (true, _) => Tls::Insecure,
        (false, Some(ca)) => Tls::CaFile(PathBuf::from(ca)),
        (false, None) => Tls::SystemRoots,
    };
    Ok(Some(settings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn atoll_variables_win_over_bpg_variables() {
        let env = |name: &str| match name {
            "ATOLL_PROXMOX__ENDPOINT" => Some("https://ours:8006".to_owned()),
            "PROXMOX_VE_ENDPOINT" => Some("https://theirs:8006".to_owned()),
            "PROXMOX_VE_API_TOKEN" => Some("root@pam!t=s".to_owned()),
            "ATOLL_STORE__URL" => Some("sqlite::memory:".to_owned()),
            _ => None,
        };
        let settings = load(None, &env).expect("settings");
        let proxmox = settings.proxmox.expect("proxmox settings");
        assert_eq!(proxmox.endpoint, "https://ours:8006");
        assert_eq!(settings.store_url.expose_secret(), "sqlite::memory:");
        assert!(settings.protect.discover, "discovery is on by default");
    }

    #[test]
    fn endpoint_without_credentials_is_refused_with_the_fix() {
        let env = |name: &str| (name == "PROXMOX_VE_ENDPOINT").then(|| "https://x:8006".to_owned());
        let err = load(None, &env).expect_err("no credentials");
        assert!(err.contains("api_token"), "{err}");
    }
}
