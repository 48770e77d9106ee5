//! What went wrong, in the user's words, and the fix: a client error from reaching or logging
//! in to Proxmox VE turned into a problem and the setting or action that cures it. Pure. It
//! never shows a secret: only the token id (before `=`) or the user name is named.

use crate::proxmox::client::PveError;

/// A failed check: what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub problem: String,
    pub fix: String,
}

impl Failure {
    pub fn new(problem: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

/// Why `endpoint` could not be reached (DNS, refused, timeout, TLS, not a PVE API).
pub(super) fn unreachable(endpoint: &str, error: &PveError) -> Failure {
    let text = error.to_string();
    let lower = text.to_ascii_lowercase();
    if lower.contains("tls handshake failed") {
        let why = text
            .split_once("TLS handshake failed (")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map_or("untrusted", |(why, _)| why);
        return Failure::new(
            format!("TLS: the certificate of {endpoint} does not verify ({why})"),
            "set proxmox.ca_file = <PEM of the PVE CA> (copy /etc/pve/pve-root-ca.pem from a \
             node), or, last resort, proxmox.insecure = true (PROXMOX_VE_INSECURE=true)",
        );
    }
    if lower.contains("dns error") || lower.contains("failed to lookup address") {
        return Failure::new(
            format!("DNS: the host name of {endpoint} does not resolve"),
            "check the host in proxmox.endpoint, or use the node's IP address",
        );
    }
    if lower.contains("connection refused") {
        return Failure::new(
            format!("connection refused by {endpoint}: nothing listens there"),
            "check the port in proxmox.endpoint (Proxmox VE listens on 8006) and that pveproxy \
             runs on the node (systemctl status pveproxy)",
        );
    }
    if lower.contains("timed out") {
        return Failure::new(
            format!("timeout: {endpoint} did not answer"),
            "check the address in proxmox.endpoint and that no firewall drops port 8006 between \
             atoll and the node",
        );
    }
    match error {
        PveError::Settings(message) => Failure::new(
            message.clone(),
            "fix the proxmox section of the config (atoll check-config --config FILE)",
        ),
        PveError::Transient { .. } => Failure::new(
            format!("{endpoint} could not be reached: {text}"),
            "check proxmox.endpoint and the network between atoll and the node",
        ),
        _ => Failure::new(
            format!("{endpoint} answered, but not as the Proxmox VE API does: {text}"),
            "set proxmox.endpoint to https://HOST:8006 (no path)",
        ),
    }
}

/// Why the login (`who`: token id or user name, never the secret) was refused.
pub(super) fn refused_login(who: &str, token: bool, error: &PveError) -> Failure {
    let PveError::Unauthorized(detail) = error else {
        return Failure::new(
            format!("logging in as {who} failed: {error}"),
            "check the endpoint and the credentials in the proxmox section",
        );
    };
    let said = detail.message.trim();
    if token {
        let shape = if looks_like_token_id(who) {
            String::new()
        } else {
            format!(" the token id '{who}' is not of the form user@realm!name;")
        };
        Failure::new(
            format!("401: Proxmox VE refused the API token {who} ({said})"),
            format!(
                "check proxmox.api_token (PROXMOX_VE_API_TOKEN):{shape} the id must be \
                 user@realm!name exactly as Datacenter > Permissions > API Tokens lists it, the \
                 secret after '=' the value shown once when the token was made (make a new \
                 token if it is lost), and the token and its user must exist, be enabled and not \
                 be expired"
            ),
        )
    } else {
        Failure::new(
            format!("401: Proxmox VE refused the login of {who} ({said})"),
            "check proxmox.username (user@realm: root@pam for a Linux user, name@pve for a \
             Proxmox VE user) and proxmox.password, and that the user is enabled and not \
             expired",
        )
    }
}

fn looks_like_token_id(id: &str) -> bool {
    model::access::split_tokenid(id).is_ok()
}

/// The supported range: Proxmox VE 8.x and 9.x.
pub(super) fn version(version: &str) -> Result<Option<String>, Failure> {
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(8 | 9) => Ok(None),
        Some(m) if m > 9 => Ok(Some(format!(
            "Proxmox VE {version} is newer than atoll knows (8.x and 9.x); report what differs"
        ))),
        _ => Err(Failure::new(
            format!("Proxmox VE {version} is older than atoll supports (8.x and 9.x)"),
            "upgrade the cluster to Proxmox VE 8 or 9",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::client::Detail;

    fn transient(message: &str) -> PveError {
        PveError::Transient {
            detail: Detail {
                op: "GET /version".into(),
                message: message.into(),
            },
            maybe_applied: false,
        }
    }

    #[test]
    fn refused_dns_and_timeout_are_each_named() {
        let e = "https://pve:8006";
        let refused = unreachable(
            e,
            &transient("could not connect: tcp connect error: Connection refused (os error 111)"),
        );
        assert!(
            refused.problem.starts_with("connection refused"),
            "{refused:?}"
        );
        let dns = unreachable(
            e,
            &transient("could not connect: dns error: failed to lookup address information"),
        );
        assert!(dns.problem.starts_with("DNS"), "{dns:?}");
        let slow = unreachable(e, &transient("timed out: operation timed out"));
        assert!(slow.problem.starts_with("timeout"), "{slow:?}");
    }

    #[test]
    fn an_untrusted_certificate_names_ca_file_and_insecure() {
        let e = PveError::Settings(
            "GET /version: TLS handshake failed (invalid peer certificate: UnknownIssuer); trust the cluster CA".into(),
        );
        let f = unreachable("https://pve:8006", &e);
        assert!(f.problem.contains("UnknownIssuer"), "{f:?}");
        assert!(f.fix.contains("proxmox.ca_file") && f.fix.contains("proxmox.insecure"));
    }

    #[test]
    fn a_refused_token_names_the_id_form_and_the_secret_without_showing_it() {
        let e = PveError::Unauthorized(Detail {
            op: "GET /version".into(),
            message: "authentication failure".into(),
        });
        let f = refused_login("atoll@pve!doctor", true, &e);
        assert!(f.problem.starts_with("401"), "{f:?}");
        assert!(f.fix.contains("user@realm!name") && f.fix.contains("enabled"));
        let bad = refused_login("atoll-doctor", true, &e);
        assert!(
            bad.fix.contains("'atoll-doctor' is not of the form"),
            "{bad:?}"
        );
    }

    #[test]
    fn versions_before_8_fail_and_8_and_9_pass() {
        assert!(version("7.4-3").is_err());
        assert_eq!(version("8.4.1"), Ok(None));
        assert_eq!(version("9.2.11"), Ok(None));
        assert!(matches!(version("10.0"), Ok(Some(_))));
    }
}
