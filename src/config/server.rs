//! The `server` section (the listener and what it allows each connection) and the body limits
//! of `webhook` (what an unauthenticated delivery may make the server hold).

use std::net::SocketAddr;
use std::time::Duration;

use super::tree::Reader;
use model::IpNetwork;

const DEFAULT_LISTEN: &str = "127.0.0.1:4141";

/// How often the job log stream (SSE) sends a keep-alive comment.
const LOG_STREAM_KEEP_ALIVE_SECS: u64 = 15;

/// GitHub caps webhook payloads at 25 MB; 25 MiB covers it.
const DEFAULT_MAX_BODY: u64 = 25 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// `server.listen`, default `127.0.0.1:4141`.
    pub listen: SocketAddr,
    /// `server.request_timeout_secs`: longest a request may take before 408.
    pub request_timeout: Duration,
    /// `server.public_url`: the URL users reach atoll at (`https://atoll.example.com`, no
    /// trailing slash). Commit statuses link to `{public_url}/jobs/{id}`; unset, they carry no
    /// link.
    pub public_url: Option<String>,
    /// `server.header_read_timeout_secs`: a request's headers must be complete this long after
    /// the connection opened or the previous response on it ended, or the connection is closed.
    pub header_read_timeout: Duration,
    /// `server.idle_timeout_secs`: a connection on which no byte moves either way while no
    /// request is being handled is closed after this long (a client that stopped reading).
    pub idle_timeout: Duration,
    /// `server.max_connections`: open connections at most; at the cap, a new connection
    /// closes the oldest one that has no request in progress, or is refused.
    pub max_connections: usize,
    /// `server.trusted_proxies`: peers whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<IpNetwork>,
}

/// `webhook.*` limits on request bodies, which are read before their signature is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookBodySettings {
    /// `webhook.max_body_bytes`: larger deliveries get 413 (a `Content-Length` above it before
    /// anything is read).
    pub max_body_bytes: usize,
    /// `webhook.max_concurrent_bodies`: deliveries being read at once; more get 503.
    pub max_concurrent_bodies: usize,
    /// `webhook.max_buffered_bytes`: bytes of all deliveries being read at once; more get 503.
    pub max_buffered_bytes: usize,
}

pub(super) fn server(r: &mut Reader<'_>) -> ServerSettings {
    let text = r.string("server.listen", DEFAULT_LISTEN);
    let listen = text.parse::<SocketAddr>().unwrap_or_else(|_| {
        r.problem(
            "server.listen",
            format!("{text:?} is not an address like 127.0.0.1:4141"),
        );
        SocketAddr::from(([127, 0, 0, 1], 4141))
    });
    let timeout = r.uint("server.request_timeout_secs", 30, 1, 3600);
    let header = r.uint("server.header_read_timeout_secs", 10, 1, 300);
    let idle = r.uint("server.idle_timeout_secs", 60, 1, 3600);
    if idle < LOG_STREAM_KEEP_ALIVE_SECS {
        r.warn(format!(
            "server.idle_timeout_secs is {idle}: a job's log stream sends a keep-alive every \
             {LOG_STREAM_KEEP_ALIVE_SECS} seconds, so a quiet job's stream will be cut and the \
             browser will reconnect"
        ));
    }
    let max_connections = r.uint("server.max_connections", 256, 8, 65_536);
    ServerSettings {
        listen,
        request_timeout: Duration::from_secs(timeout),
        public_url: public_url(r),
        header_read_timeout: Duration::from_secs(header),
        idle_timeout: Duration::from_secs(idle),
        max_connections: usize::try_from(max_connections).unwrap_or(256),
        trusted_proxies: trusted_proxies(r),
    }
}

fn trusted_proxies(r: &mut Reader<'_>) -> Vec<IpNetwork> {
    let mut out = Vec::new();
    for (i, text) in r.strings("server.trusted_proxies").iter().enumerate() {
        match IpNetwork::parse(text) {
            Ok(net) => out.push(net),
            Err(e) => r.problem(&format!("server.trusted_proxies[{i}]"), e),
        }
    }
    out
}

/// `server.public_url`: an absolute http(s) URL without query or fragment; a trailing slash is
/// dropped so links join as `{public_url}/jobs/{id}`.
fn public_url(r: &mut Reader<'_>) -> Option<String> {
    let text = r.opt_string("server.public_url")?;
    let trimmed = text.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed);
    if parsed
        .as_ref()
        .is_ok_and(|u| !u.username().is_empty() || u.password().is_some())
    {
        // Never echo the value: it holds credentials.
        r.problem(
            "server.public_url",
            "must not contain credentials (user:password@); give the URL users open",
        );
        return None;
    }
    let valid = parsed.is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host_str().is_some()
            && u.query().is_none()
            && u.fragment().is_none()
    });
    if !valid {
        r.problem(
            "server.public_url",
            "is not a URL like https://atoll.example.com (http or https, a host, no query or \
             fragment); the value is not repeated here in case it holds a password",
        );
        return None;
    }
    Some(trimmed.to_owned())
}

pub(super) fn webhook_body(r: &mut Reader<'_>) -> WebhookBodySettings {
    let max_body = r.uint("webhook.max_body_bytes", DEFAULT_MAX_BODY, 65_536, 1 << 30);
    let concurrent = r.uint("webhook.max_concurrent_bodies", 256, 1, 4096);
    let buffered = r.uint(
        "webhook.max_buffered_bytes",
        64 * 1024 * 1024,
        65_536,
        1 << 34,
    );
    if buffered < max_body {
        r.problem(
            "webhook.max_buffered_bytes",
            format!(
                "is {buffered}, less than webhook.max_body_bytes ({max_body}): the largest \
                 delivery could never be read; raise it or lower webhook.max_body_bytes"
            ),
        );
    }
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    WebhookBodySettings {
        max_body_bytes: size(max_body),
        max_concurrent_bodies: size(concurrent),
        max_buffered_bytes: size(buffered.max(max_body)),
    }
}

#[cfg(test)]
mod tests {
    fn problems(yaml: &str) -> Vec<String> {
        match super::super::from_sources(yaml, []) {
            Ok(_) => Vec::new(),
            Err(e) => e.problems.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn connection_and_body_limits_have_defaults() {
        let loaded = super::super::from_sources("", []).unwrap_or_else(|e| panic!("{e}"));
        let s = loaded.settings;
        assert_eq!(s.server.header_read_timeout.as_secs(), 10);
        assert_eq!(s.server.idle_timeout.as_secs(), 60);
        assert_eq!(s.server.max_connections, 256);
        assert!(s.server.trusted_proxies.is_empty());
        assert_eq!(s.webhook_body.max_body_bytes, 25 * 1024 * 1024);
        assert_eq!(s.webhook_body.max_concurrent_bodies, 256);
    }

    #[test]
    fn out_of_range_limits_are_problems_by_key_path() {
        let found = problems(
            "server: {header_read_timeout_secs: 0, idle_timeout_secs: 0, max_connections: 1, \
             trusted_proxies: ['10.0.0.0/33', 'proxy.local']}\n\
             webhook: {max_body_bytes: 1048576, max_buffered_bytes: 65536}",
        );
        for key in [
            "server.header_read_timeout_secs: expected",
            "server.idle_timeout_secs: expected",
            "server.max_connections: expected",
            "server.trusted_proxies[0]:",
            "server.trusted_proxies[1]:",
            "webhook.max_buffered_bytes: is 65536",
        ] {
            assert!(found.iter().any(|p| p.starts_with(key)), "{key}: {found:?}");
        }
    }
}
