//! One HTTP exchange with PVE: authentication headers, the per-node concurrency limit, the
//! `{"data": ...}` envelope, error classification and retries of transient failures.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rand::Rng;
use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::auth::TicketCache;
use super::error::{Detail, PveError, classify};
use super::metrics::{EndpointClass, Outcome, ProxmoxMetrics};
use super::settings::{Auth, ClientSettings, RetryPolicy, Tls};

/// A form or query value; secret ones are exposed only while the body is encoded.
#[derive(Debug, Clone)]
pub(crate) enum Param {
    Plain(String),
    Secret(SecretString),
}

impl From<String> for Param {
    fn from(s: String) -> Self {
        Self::Plain(s)
    }
}

/// A request to PVE. `path` is already percent-encoded and starts with `/`.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) method: Method,
    pub(crate) path: String,
    /// The node whose API workers serve the request (for the concurrency limit).
    pub(crate) node: Option<String>,
    pub(crate) params: Vec<(String, Param)>,
    /// Repeating it after an unknown outcome does no harm.
    pub(crate) idempotent: bool,
    /// A file sent as `multipart/form-data` after the params (PVE's upload): name and bytes.
    pub(crate) file: Option<(String, Bytes)>,
}

impl Call {
    pub(crate) fn new(method: Method, path: String, node: Option<&str>) -> Self {
        let idempotent = method == Method::GET;
        Self {
            method,
            path,
            node: node.map(str::to_owned),
            params: Vec::new(),
            idempotent,
            file: None,
        }
    }

    /// Sends the params and then `bytes` as the form's `filename` file field.
    pub(crate) fn file(mut self, name: &str, bytes: Bytes) -> Self {
        self.file = Some((name.to_owned(), bytes));
        self
    }

    pub(crate) fn param(mut self, key: &str, value: impl ToString) -> Self {
        self.params
            .push((key.to_owned(), Param::Plain(value.to_string())));
        self
    }

    pub(crate) fn param_opt(self, key: &str, value: Option<impl ToString>) -> Self {
        match value {
            Some(v) => self.param(key, v),
            None => self,
        }
    }

    pub(crate) fn idempotent(mut self, yes: bool) -> Self {
        self.idempotent = yes;
        self
    }

    pub(crate) fn op(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// One semaphore per node, created on first use.
#[derive(Debug)]
struct NodeLimits {
    per_node: usize,
    map: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl NodeLimits {
    async fn acquire(&self, node: &str) -> Result<OwnedSemaphorePermit, PveError> {
        let semaphore = {
            let mut map = self
                .map
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            map.entry(node.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_node)))
                .clone()
        };
        semaphore.acquire_owned().await.map_err(|_| {
            PveError::Settings(format!("request limiter for node '{node}' was closed"))
        })
    }
}

#[derive(Debug)]
pub(crate) struct Transport {
    http: reqwest::Client,
    base: String,
    auth: Auth,
    retry: RetryPolicy,
    limits: NodeLimits,
    tickets: TicketCache,
    metrics: Arc<ProxmoxMetrics>,
}

impl Transport {
    pub(crate) fn new(settings: &ClientSettings) -> Result<Self, PveError> {
        settings.validate()?;
        // reqwest is built without a default crypto provider: install ring once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.request_timeout)
            .pool_max_idle_per_host(settings.node_concurrency.max(8))
            .user_agent(concat!("atoll/", env!("CARGO_PKG_VERSION")));
        builder = match &settings.tls {
            Tls::SystemRoots => builder.tls_built_in_native_certs(true),
            Tls::Insecure => builder.danger_accept_invalid_certs(true),
            Tls::CaFile(path) => {
                let pem = std::fs::read(path).map_err(|e| {
                    PveError::Settings(format!("reading CA file {}: {e}", path.display()))
                })?;
                let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                    PveError::Settings(format!("CA file {} is not PEM: {e}", path.display()))
                })?;
                if certs.is_empty() {
                    return Err(PveError::Settings(format!(
                        "CA file {} holds no certificate",
                        path.display()
                    )));
                }
                certs
                    .into_iter()
                    .fold(builder.tls_built_in_root_certs(false), |b, c| {
                        b.add_root_certificate(c)
                    })
            }
        };
        // Only a configured proxy: following HTTP(S)_PROXY from the environment could send
        // the token to whoever set it, in clear over an http:// proxy.
        builder = match &settings.proxy {
            None => builder.no_proxy(),
            Some(url) => builder.proxy(reqwest::Proxy::all(url.as_str()).map_err(|e| {
                PveError::Settings(format!("proxy '{url}' is not a proxy URL: {e}"))
            })?),
        };
        let http = builder
            .build()
            .map_err(|e| PveError::Settings(format!("building the HTTP client: {e}")))?;
        Ok(Self {
            http,
            base: settings.api_base()?,
            auth: settings.auth.clone(),
            retry: settings.retry,
            limits: NodeLimits {
                per_node: settings.node_concurrency,
                map: Mutex::default(),
            },
            tickets: TicketCache::new(settings.ticket_renew_after, settings.clock.clone()),
            metrics: Arc::clone(&settings.metrics),
        })
    }

    /// Sends `call`, retrying transient failures where that is safe, and decodes `data`.
    pub(crate) async fn execute<T: DeserializeOwned>(&self, call: &Call) -> Result<T, PveError> {
        let body = self.execute_raw(call).await?;
        decode(call, &body)
    }

    /// Sends `call` and returns PVE's whole answer: `data` and what PVE sets beside it (the
    /// network listing's `changes`).
    pub(crate) async fn execute_body(&self, call: &Call) -> Result<serde_json::Value, PveError> {
        let body = self.execute_raw(call).await?;
        serde_json::from_slice(&body).map_err(|e| {
            PveError::Protocol(Detail {
                op: call.op(),
                message: format!("decoding the response: {e}"),
            })
        })
    }

    async fn execute_raw(&self, call: &Call) -> Result<Bytes, PveError> {
        let mut attempt = 0;
        let mut relogged = false;
        loop {
            attempt += 1;
            match self.send_authenticated(call).await {
                Ok(v) => return Ok(v),
                Err(PveError::Unauthorized(detail))
                    if !relogged
                        && matches!(self.auth, Auth::Password { .. })
                        && !detail.op.ends_with("/access/ticket") =>
                {
                    // The ticket may have expired server-side: log in again once (but a refused
                    // login is final; PVE answers each failed login after a 3 s delay).
                    relogged = true;
                    self.tickets.invalidate().await;
                }
                Err(e) if e.is_transient() && attempt < self.retry.attempts => {
                    if !(call.idempotent || e.is_retry_safe_for_writes()) {
                        return Err(e);
                    }
                    tracing::debug!(op = %call.op(), attempt, error = %e, "retrying transient proxmox error");
                    tokio::time::sleep(backoff(&self.retry, attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Who the requests authenticate as: the token id before its `=SECRET`, or the user.
    pub(super) fn caller(&self) -> String {
        match &self.auth {
            Auth::ApiToken(token) => {
                let token = token.expose_secret();
                token.split_once('=').map_or("", |(id, _)| id).to_owned()
            }
            Auth::Password { username, .. } => username.clone(),
        }
    }

    async fn send_authenticated(&self, call: &Call) -> Result<Bytes, PveError> {
        let mut headers = HeaderMap::new();
        match &self.auth {
            Auth::ApiToken(token) => {
                let value = format!("PVEAPIToken={}", token.expose_secret());
                headers.insert(reqwest::header::AUTHORIZATION, sensitive(&value, call)?);
            }
            Auth::Password { username, password } => {
                let ticket = self.tickets.get(self, username, password).await?;
                let cookie = format!("PVEAuthCookie={}", ticket.cookie.expose_secret());
                headers.insert(reqwest::header::COOKIE, sensitive(&cookie, call)?);
                if call.method != Method::GET {
                    headers.insert(
                        "CSRFPreventionToken",
                        sensitive(ticket.csrf.expose_secret(), call)?,
                    );
                }
            }
        }
        self.send(call, headers).await
    }

    /// One exchange, no retries; `headers` carry the authentication.
    pub(crate) async fn send(&self, call: &Call, headers: HeaderMap) -> Result<Bytes, PveError> {
        let node_key = call.node.as_deref().unwrap_or("");
        let _permit = self.limits.acquire(node_key).await?;
        let url = format!("{}{}", self.base, call.path);
        let pairs: Vec<(&str, &str)> = call
            .params
            .iter()
            .map(|(k, v)| match v {
                Param::Plain(s) => (k.as_str(), s.as_str()),
                Param::Secret(s) => (k.as_str(), s.expose_secret()),
            })
            .collect();
        let mut request = self.http.request(call.method.clone(), url).headers(headers);
        request = if call.method == Method::GET || call.method == Method::DELETE {
            request.query(&pairs)
        } else if let Some((name, bytes)) = &call.file {
            let boundary = format!("atoll-{:032x}", rand::random::<u128>());
            request
                .header(
                    reqwest::header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(multipart(&boundary, &pairs, name, bytes))
        } else {
            request.form(&pairs)
        };
        let class = EndpointClass::of(&call.method, &call.path);
        let started = std::time::Instant::now();
        let response = request.send().await.map_err(|e| {
            self.metrics
                .record(class, Outcome::Transport, started.elapsed());
            transport_error(call, &e)
        })?;
        let status = response.status();
        let reason = response
            .extensions()
            .get::<hyper::ext::ReasonPhrase>()
            .and_then(|r| std::str::from_utf8(r.as_bytes()).ok().map(str::to_owned))
            .or_else(|| status.canonical_reason().map(str::to_owned));
        let body = response.bytes().await.map_err(|e| {
            self.metrics
                .record(class, Outcome::Transport, started.elapsed());
            transport_error(call, &e)
        })?;
        self.metrics.record(
            class,
            Outcome::of_status(status.as_u16()),
            started.elapsed(),
        );
        if !status.is_success() {
            return Err(classify(
                &call.op(),
                status.as_u16(),
                reason.as_deref(),
                &body,
            ));
        }
        Ok(body)
    }
}

/// A `multipart/form-data` body: the params, then the file as field `filename` (PVE reads the
/// file last).
fn multipart(boundary: &str, pairs: &[(&str, &str)], name: &str, bytes: &[u8]) -> Vec<u8> {
    let quoted = |s: &str| s.replace(['"', '\r', '\n'], "_");
    let mut body = Vec::with_capacity(bytes.len() + 512);
    for (key, value) in pairs {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"\r\n\r\n{value}\r\n",
                quoted(key)
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"{}\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            quoted(name)
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    body
}

/// PVE's success envelope.
#[derive(Deserialize)]
struct Envelope<T> {
    data: T,
}

/// Decodes `{"data": ...}` straight into `T` (no intermediate JSON tree).
pub(crate) fn decode<T: DeserializeOwned>(call: &Call, body: &[u8]) -> Result<T, PveError> {
    serde_json::from_slice::<Envelope<T>>(body)
        .map(|e| e.data)
        .map_err(|e| {
            PveError::Protocol(Detail {
                op: call.op(),
                message: format!("decoding the response: {e}"),
            })
        })
}

fn sensitive(value: &str, call: &Call) -> Result<HeaderValue, PveError> {
    let mut header = HeaderValue::from_str(value).map_err(|_| {
        PveError::Settings(format!(
            "{}: credentials contain characters not allowed in a header",
            call.op()
        ))
    })?;
    header.set_sensitive(true);
    Ok(header)
}

/// The TLS error somewhere in `e`'s source chain, if any.
fn tls_cause(e: &reqwest::Error) -> Option<String> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cause {
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        // io::Error's `source` skips the error it wraps; step into it instead.
        cause = match err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => err.source(),
        };
    }
    None
}

/// Errors before a status arrived. Only a refused connection is known not to have been applied;
/// an untrusted certificate is a settings problem, not worth retrying.
fn transport_error(call: &Call, e: &reqwest::Error) -> PveError {
    if let Some(tls) = tls_cause(e) {
        return PveError::Settings(format!(
            "{}: TLS handshake failed ({tls}); trust the cluster CA with a CA file, or set PROXMOX_VE_INSECURE=true",
            call.op()
        ));
    }
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "connection failed"
    };
    // The whole chain: "client error (Connect)" alone does not say refused, DNS or timeout.
    let mut source = String::new();
    let mut cause = std::error::Error::source(e);
    while let Some(err) = cause {
        let text = err.to_string();
        if !source.ends_with(&text) {
            source.push_str(": ");
            source.push_str(&text);
        }
        cause = err.source();
    }
    let detail = Detail {
        op: call.op(),
        message: format!("{what}{source}"),
    };
    let maybe_applied = !e.is_connect();
    PveError::Transient {
        detail,
        maybe_applied,
    }
}

/// Jittered backoff: a random delay between half and all of `base * 2^(attempt-1)`, capped.
pub(crate) fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let cap = policy
        .base_delay
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(policy.max_delay);
    let millis = u64::try_from(cap.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(rand::thread_rng().gen_range(millis / 2..=millis.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_stays_under_the_cap() {
        let policy = RetryPolicy {
            attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
        };
        for _ in 0..50 {
            let first = backoff(&policy, 1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            assert!(backoff(&policy, 9) <= Duration::from_millis(350));
        }
    }
}
