//! The client's own settings, buildable from the bpg provider's environment names.

use model::{SharedClock, SystemClock};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use super::error::PveError;
use super::metrics::ProxmoxMetrics;

/// How atoll authenticates to Proxmox VE. `Debug` never shows a secret.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `USER@REALM!TOKENID=SECRET`, sent as `Authorization: PVEAPIToken=...`.
    ApiToken(SecretString),
    /// Ticket login (`POST /access/ticket`), renewed before its two-hour lifetime ends.
    Password {
        username: String,
        password: SecretString,
    },
}

/// TLS trust for the Proxmox VE endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    /// The operating system's trust store.
    SystemRoots,
    /// Only the CA certificates in this PEM file (e.g. the cluster's `pve-root-ca.pem`).
    CaFile(PathBuf),
    /// No certificate verification at all (`PROXMOX_VE_INSECURE=true`).
    Insecure,
}

/// Jittered exponential backoff for transient errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total tries, the first included.
    pub attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(4),
        }
    }
}

/// How task completion is polled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskPolling {
    pub first_delay: Duration,
    pub max_delay: Duration,
    /// Give up waiting (the task keeps running) after this long.
    pub timeout: Duration,
    /// How many trailing log lines a failed task reports.
    pub log_tail_lines: usize,
    /// How long to wait for a guest's lock (`lock: create|backup|...`) to clear before reading
    /// or changing the guest; the error then names the task holding it.
    pub lock_timeout: Duration,
}

impl Default for TaskPolling {
    fn default() -> Self {
        Self {
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            timeout: Duration::from_secs(30 * 60),
            log_tail_lines: 20,
            lock_timeout: Duration::from_secs(10 * 60),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// `https://HOST:8006` (a trailing `/` or `/api2/json` is accepted).
    pub endpoint: String,
    pub auth: Auth,
    pub tls: Tls,
    pub connect_timeout: Duration,
    /// Per request; PVE's own proxy gives up after 30 s on synchronous calls.
    pub request_timeout: Duration,
    /// Concurrent requests per node (PVE runs three API workers per daemon).
    pub node_concurrency: usize,
    pub retry: RetryPolicy,
    pub tasks: TaskPolling,
    /// Renew a ticket once it is this old (tickets live two hours).
    pub ticket_renew_after: Duration,
    /// The HTTP(S) proxy to connect through (`http://HOST:PORT`). `None` connects directly:
    /// the client never follows `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` from the environment.
    pub proxy: Option<String>,
    /// Where requests are counted; [`ProxmoxMetrics::process`] unless set.
    pub metrics: Arc<ProxmoxMetrics>,
    /// What ticket ages are measured with; the system's unless set.
    pub clock: SharedClock,
}

impl ClientSettings {
    pub fn new(endpoint: impl Into<String>, auth: Auth) -> Self {
        Self {
            endpoint: endpoint.into(),
            auth,
            tls: Tls::SystemRoots,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            node_concurrency: 3,
            retry: RetryPolicy::default(),
            tasks: TaskPolling::default(),
            ticket_renew_after: Duration::from_secs(90 * 60),
            proxy: None,
            metrics: ProxmoxMetrics::process(),
            clock: SystemClock::shared(),
        }
    }

    /// Reads `PROXMOX_VE_ENDPOINT`, `PROXMOX_VE_API_TOKEN` or `PROXMOX_VE_USERNAME` +
    /// `PROXMOX_VE_PASSWORD`, and `PROXMOX_VE_INSECURE` through `lookup`.
    pub fn from_env_with(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, PveError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let endpoint = get("PROXMOX_VE_ENDPOINT").ok_or_else(|| {
            PveError::Settings("PROXMOX_VE_ENDPOINT is not set; set it to https://HOST:8006".into())
        })?;
        let auth = match (get("PROXMOX_VE_API_TOKEN"), get("PROXMOX_VE_USERNAME")) {
            (Some(token), _) => Auth::ApiToken(SecretString::from(token)),
            (None, Some(username)) => {
                let password = get("PROXMOX_VE_PASSWORD").ok_or_else(|| {
                    PveError::Settings(
                        "PROXMOX_VE_USERNAME is set but PROXMOX_VE_PASSWORD is not".into(),
                    )
                })?;
                Auth::Password {
                    username,
                    password: SecretString::from(password),
                }
            }
            (None, None) => {
                return Err(PveError::Settings(
                    "set PROXMOX_VE_API_TOKEN (USER@REALM!ID=SECRET) or PROXMOX_VE_USERNAME and PROXMOX_VE_PASSWORD".into(),
                ));
            }
        };
        let mut settings = Self::new(endpoint, auth);
        let insecure = match get("PROXMOX_VE_INSECURE") {
            None => false,
            Some(flag) => parse_go_bool(&flag).ok_or_else(|| {
                PveError::Settings(format!(
                    "PROXMOX_VE_INSECURE must be true or false, got '{flag}'"
                ))
            })?,
        };
        if insecure {
            settings.tls = Tls::Insecure;
        }
        settings.validate()?;
        Ok(settings)
    }

    /// [`Self::from_env_with`] over the process environment.
    pub fn from_env() -> Result<Self, PveError> {
        Self::from_env_with(|name| std::env::var(name).ok())
    }

    /// The API base, `https://HOST:PORT/api2/json`.
    pub(crate) fn api_base(&self) -> Result<String, PveError> {
        let trimmed = self.endpoint.trim().trim_end_matches('/');
        let trimmed = trimmed.strip_suffix("/api2/json").unwrap_or(trimmed);
        let rest = trimmed
            .strip_prefix("https://")
            .or_else(|| trimmed.strip_prefix("http://"))
            .ok_or_else(|| {
                PveError::Settings(format!("endpoint '{trimmed}' must start with https://"))
            })?;
        if rest.is_empty() || rest.contains(['/', '?', '#', '@', ' ']) {
            return Err(PveError::Settings(format!(
                "endpoint '{trimmed}' must be https://HOST[:PORT] with no path"
            )));
        }
        Ok(format!("{trimmed}/api2/json"))
    }

    pub(crate) fn validate(&self) -> Result<(), PveError> {
        self.api_base()?;
        if self.node_concurrency == 0 {
            return Err(PveError::Settings(
                "node_concurrency must be at least 1".into(),
            ));
        }
        if let Auth::Password { username, .. } = &self.auth
            && !username.contains('@')
        {
            return Err(PveError::Settings(format!(
                "username '{username}' needs a realm, e.g. {username}@pam"
            )));
        }
        if let Auth::ApiToken(token) = &self.auth {
            let t = token.expose_secret();
            let shape_ok = t.split_once('=').is_some_and(|(id, secret)| {
                id.contains('@') && id.contains('!') && !secret.is_empty()
            });
            if !shape_ok {
                // Never echo the token itself.
                return Err(PveError::Settings(
                    "the API token must look like USER@REALM!TOKENID=SECRET".into(),
                ));
            }
        }
        Ok(())
    }
}

/// Go's `strconv.ParseBool`, which the bpg provider uses for `PROXMOX_VE_INSECURE`.
fn parse_go_bool(s: &str) -> Option<bool> {
    match s.trim() {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn bpg_environment_with_token_builds_settings() {
        let s = ClientSettings::from_env_with(env(&[
            ("PROXMOX_VE_ENDPOINT", "https://10.0.0.2:8006/"),
            ("PROXMOX_VE_API_TOKEN", "root@pam!atoll=00000000-1111"),
            ("PROXMOX_VE_INSECURE", "true"),
        ]))
        .expect("test value");
        assert_eq!(
            s.api_base().expect("test value"),
            "https://10.0.0.2:8006/api2/json"
        );
        assert_eq!(s.tls, Tls::Insecure);
        assert_eq!(s.node_concurrency, 3);
        let debug = format!("{s:?}");
        assert!(!debug.contains("00000000-1111"), "token leaked in {debug}");
    }

    #[test]
    fn bpg_environment_with_username_needs_password_and_never_leaks_it() {
        let missing = ClientSettings::from_env_with(env(&[
            ("PROXMOX_VE_ENDPOINT", "https://pve:8006"),
            ("PROXMOX_VE_USERNAME", "root@pam"),
        ]));
        assert!(
            missing
                .expect_err("should be refused")
                .to_string()
                .contains("PROXMOX_VE_PASSWORD")
        );
        let s = ClientSettings::from_env_with(env(&[
            ("PROXMOX_VE_ENDPOINT", "https://pve:8006/api2/json"),
            ("PROXMOX_VE_USERNAME", "root@pam"),
            ("PROXMOX_VE_PASSWORD", "hunter22"),
        ]))
        .expect("test value");
        assert!(!format!("{s:?}").contains("hunter22"));
        assert_eq!(
            s.api_base().expect("test value"),
            "https://pve:8006/api2/json"
        );
    }

    #[test]
    fn bad_settings_say_what_to_fix_without_echoing_secrets() {
        let no_endpoint =
            ClientSettings::from_env_with(env(&[("PROXMOX_VE_API_TOKEN", "a@b!c=d")]));
        assert!(
            no_endpoint
                .expect_err("should be refused")
                .to_string()
                .contains("PROXMOX_VE_ENDPOINT")
        );
        let bad_token = ClientSettings::from_env_with(env(&[
            ("PROXMOX_VE_ENDPOINT", "https://pve:8006"),
            ("PROXMOX_VE_API_TOKEN", "justasecretvalue"),
        ]))
        .expect_err("should be refused")
        .to_string();
        assert!(
            bad_token.contains("USER@REALM!TOKENID=SECRET")
                && !bad_token.contains("justasecretvalue")
        );
        let bad_flag = ClientSettings::from_env_with(env(&[
            ("PROXMOX_VE_ENDPOINT", "https://pve:8006"),
            ("PROXMOX_VE_API_TOKEN", "a@b!c=d"),
            ("PROXMOX_VE_INSECURE", "maybe"),
        ]));
        assert!(bad_flag.is_err());
        let no_realm = Auth::Password {
            username: "root".into(),
            password: "pw".to_owned().into(),
        };
        let err = ClientSettings::new("https://pve:8006", no_realm)
            .validate()
            .expect_err("realm");
        assert!(err.to_string().contains("root@pam"), "{err}");
        let path = ClientSettings::new("https://pve:8006/other", Auth::ApiToken("a@b!c=d".into()));
        assert!(path.validate().is_err());
        let scheme = ClientSettings::new("pve:8006", Auth::ApiToken("a@b!c=d".into()));
        assert!(scheme.validate().is_err());
    }
}
