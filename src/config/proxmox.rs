//! The `proxmox` (connection) and `protect` (self-host guard) sections. The connection falls back
//! to the bpg provider's `PROXMOX_VE_*` variables, so a Terraform shell set-up works unchanged.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde_yaml_ng::Value;

use super::tree::{Reader, Tree};

/// bpg provider variable -> our key path. Applied only where the key is not set otherwise.
const BPG_ENV: [(&str, &str); 5] = [
    ("PROXMOX_VE_ENDPOINT", "proxmox.endpoint"),
    ("PROXMOX_VE_API_TOKEN", "proxmox.api_token"),
    ("PROXMOX_VE_USERNAME", "proxmox.username"),
    ("PROXMOX_VE_PASSWORD", "proxmox.password"),
    ("PROXMOX_VE_INSECURE", "proxmox.insecure"),
];

/// How atoll reaches the Proxmox VE API.
#[derive(Debug, Clone)]
pub struct ProxmoxSettings {
    /// Base URL such as `https://pve.example:8006/` (no `/api2/json`).
    pub endpoint: String,
    pub auth: ProxmoxAuth,
    /// Skip TLS verification (self-signed PVE certificates); prefer `ca_file`.
    pub insecure: bool,
    /// PEM bundle to trust in addition to the system roots.
    pub ca_file: Option<PathBuf>,
    /// `proxmox.proxy`: the HTTP(S) proxy to reach the endpoint through. `None`: connect
    /// directly; `HTTP(S)_PROXY` in the environment is never followed.
    pub proxy: Option<String>,
    /// `proxmox.lock_wait_secs`: how long the engine waits for a guest's lock (a running
    /// task) to clear before it reads or changes the guest.
    pub lock_wait: Duration,
    /// `proxmox.ssh`: SSH access to the nodes, for snippets; `None`: snippets are refused.
    pub ssh: Option<super::ssh::SshSettings>,
}

#[derive(Debug, Clone)]
pub enum ProxmoxAuth {
    /// `USER@REALM!TOKENID=SECRET`.
    ApiToken(SecretString),
    /// Ticket login.
    Password {
        username: String,
        password: SecretString,
    },
}

/// The guests atoll refuses to disrupt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectSettings {
    pub guests: Vec<GuestSelector>,
    /// Find atoll's own guest by matching local MAC addresses at start-up.
    pub discover: bool,
    /// MAC addresses to match instead of reading the local interfaces (lowercase `aa:bb:...`).
    pub local_macs: Vec<String>,
    /// Allow `live`/`deferred` changes to protected guests.
    pub allow_live_changes: bool,
}

/// One `protect.guests` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestSelector {
    VmId(u32),
    Name { name: String, node: Option<String> },
}

pub(super) fn apply_bpg_env<'a>(
    tree: &mut Tree,
    env: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    for (name, value) in env {
        if let Some((_, path)) = BPG_ENV.iter().find(|(var, _)| *var == name) {
            tree.fallback(path, name, value);
        }
    }
}

pub(super) fn read_proxmox(r: &mut Reader<'_>) -> Option<ProxmoxSettings> {
    let endpoint = r.opt_string("proxmox.endpoint");
    let token = r.secret("proxmox.api_token");
    let username = r.opt_string("proxmox.username");
    let password = r.secret("proxmox.password");
    let insecure = r.bool("proxmox.insecure", false);
    let ca_file = r.opt_string("proxmox.ca_file").map(PathBuf::from);
    let proxy = r
        .opt_string("proxmox.proxy")
        .map(|proxy| check_proxy(r, &proxy));
    let lock_wait = Duration::from_secs(r.uint("proxmox.lock_wait_secs", 600, 0, 86_400));
    let ssh = super::ssh::read_ssh(r);
    if let Some(path) = ca_file.as_ref().filter(|p| !p.is_file()) {
        r.problem(
            "proxmox.ca_file",
            format!("{} is not a readable file", path.display()),
        );
    }
    let Some(endpoint) = endpoint else {
        if token.is_some() || username.is_some() {
            r.problem(
                "proxmox.endpoint",
                "credentials are set but the endpoint is missing",
            );
        }
        return None;
    };
    let endpoint = check_endpoint(r, &endpoint);
    let auth = match (token, username, password) {
        (Some(token), None, None) => {
            check_token(r, &token);
            ProxmoxAuth::ApiToken(token)
        }
        (None, Some(username), Some(password)) => ProxmoxAuth::Password { username, password },
        (None, Some(_), None) => {
            r.problem(
                "proxmox.password",
                "proxmox.username is set; set its password too",
            );
            return None;
        }
        (None, None, _) => {
            r.problem(
                "proxmox.api_token",
                "set an API token (or username and password)",
            );
            return None;
        }
        (Some(_), _, _) => {
            r.problem(
                "proxmox.api_token",
                "set either an API token or username/password, not both",
            );
            return None;
        }
    };
    Some(ProxmoxSettings {
        endpoint,
        auth,
        insecure,
        ca_file,
        proxy,
        lock_wait,
        ssh,
    })
}

/// The warning for a URL that would carry atoll's Proxmox credentials (or the traffic to the
/// proxy) in clear text.
fn warn_if_plain_http(r: &mut Reader<'_>, path: &str, url: &str, what: &str) {
    if url.trim().to_ascii_lowercase().starts_with("http://") {
        let label = r.label(path);
        r.warn(format!(
            "{label}: {url} is plain http://: {what}; use https://"
        ));
    }
}

fn check_proxy(r: &mut Reader<'_>, proxy: &str) -> String {
    let trimmed = proxy.trim().trim_end_matches('/');
    let lower = trimmed.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let host_only = rest.is_some_and(|rest| {
        !rest.is_empty()
            && !rest.contains(['/', '?', '#', '@'])
            && !rest.contains(char::is_whitespace)
    });
    if host_only {
        warn_if_plain_http(
            r,
            "proxmox.proxy",
            trimmed,
            "requests to the proxy are not encrypted (a CONNECT tunnel still protects an https:// endpoint)",
        );
    } else {
        r.problem(
            "proxmox.proxy",
            format!(
                "{proxy:?} is not a proxy URL like http://proxy.example:3128 (no path, no credentials)"
            ),
        );
    }
    trimmed.to_owned()
}

fn check_endpoint(r: &mut Reader<'_>, endpoint: &str) -> String {
    let trimmed = endpoint.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/api2/json").unwrap_or(trimmed);
    let has_host = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .is_some_and(|rest| !rest.is_empty() && !rest.contains(char::is_whitespace));
    if !has_host {
        r.problem(
            "proxmox.endpoint",
            format!("{endpoint:?} is not a URL like https://pve:8006/"),
        );
    } else {
        warn_if_plain_http(
            r,
            "proxmox.endpoint",
            trimmed,
            "the API token (or password) and every response travel unencrypted",
        );
    }
    format!("{trimmed}/")
}

fn check_token(r: &mut Reader<'_>, token: &SecretString) {
    // Shape USER@REALM!TOKENID=SECRET; never echo the value.
    let t = token.expose_secret();
    let ok = t
        .split_once('=')
        .and_then(|(id, secret)| Some((id.split_once('!')?, secret)))
        .is_some_and(|((user, name), secret)| {
            user.contains('@') && !name.is_empty() && !secret.is_empty()
        });
    if !ok {
        r.problem(
            "proxmox.api_token",
            "must look like USER@REALM!TOKENID=SECRET",
        );
    }
}

pub(super) fn read_protect(r: &mut Reader<'_>) -> ProtectSettings {
    let guests = match r.raw("protect.guests") {
        None => Vec::new(),
        Some(Value::Sequence(items)) => {
            let items = items.clone();
            items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| guest(r, i, v))
                .collect()
        }
        Some(_) => {
            r.problem(
                "protect.guests",
                "expected a list of {vm_id: N} or {name: X, node: Y}",
            );
            Vec::new()
        }
    };
    let discover = r.bool("protect.discover", true);
    let mut local_macs = r.strings("protect.local_macs");
    for (i, mac) in local_macs.iter_mut().enumerate() {
        *mac = mac.to_ascii_lowercase();
        let valid = mac.split(':').count() == 6
            && mac
                .split(':')
                .all(|b| b.len() == 2 && b.chars().all(|c| c.is_ascii_hexdigit()));
        if !valid {
            r.problem(
                &format!("protect.local_macs[{i}]"),
                format!("{mac:?} is not a MAC address"),
            );
        }
    }
    let allow_live_changes = r.bool("protect.allow_live_changes", false);
    ProtectSettings {
        guests,
        discover,
        local_macs,
        allow_live_changes,
    }
}

fn guest(r: &mut Reader<'_>, i: usize, v: &Value) -> Option<GuestSelector> {
    let path = format!("protect.guests[{i}]");
    let Some(map) = v.as_mapping() else {
        r.problem(&path, "expected {vm_id: N} or {name: X, node: Y}");
        return None;
    };
    let field = |k: &str| map.get(k).filter(|v| !v.is_null());
    for key in map.keys() {
        if !matches!(key.as_str(), Some("vm_id" | "name" | "node")) {
            r.problem(
                &path,
                format!("unknown key {key:?}; use vm_id, or name with node"),
            );
        }
    }
    match (field("vm_id"), field("name")) {
        (Some(id), None) if field("node").is_none() => {
            match id
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n >= 100)
            {
                Some(n) => Some(GuestSelector::VmId(n)),
                None => {
                    r.problem(&format!("{path}.vm_id"), "must be a VM id of 100 or more");
                    None
                }
            }
        }
        (None, Some(Value::String(name))) if !name.trim().is_empty() => {
            let node = match field("node") {
                None => None,
                Some(Value::String(n)) => Some(n.clone()),
                Some(_) => {
                    r.problem(&format!("{path}.node"), "expected a node name");
                    None
                }
            };
            Some(GuestSelector::Name {
                name: name.clone(),
                node,
            })
        }
        _ => {
            r.problem(&path, "give either vm_id, or name (with an optional node)");
            None
        }
    }
}
