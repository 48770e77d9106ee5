//! Shared by the `pve_client*` tests: a scripted HTTP(S) server on port 0 that records every
//! request and answers from a closure, plus client settings with short test delays.
#![allow(
    dead_code,
    unreachable_pub,
    reason = "shared by several test crates, each using a subset"
)]

pub mod sim;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atoll::proxmox::client::{Auth, ClientSettings};
use atoll::proxmox::types::{NodeName, VmId};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: HeaderMap,
    pub body: String,
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub reason: Option<&'static str>,
    pub body: String,
    pub delay: Duration,
}

pub fn ok(data: Value) -> Reply {
    Reply {
        status: 200,
        reason: None,
        body: json!({ "data": data }).to_string(),
        delay: Duration::ZERO,
    }
}

pub fn fail(status: u16, reason: &'static str, body: Value) -> Reply {
    Reply {
        status,
        reason: Some(reason),
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

pub type Script = Arc<dyn Fn(&Seen, usize) -> Reply + Send + Sync>;

#[derive(Clone)]
pub struct Fake {
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub script: Script,
    pub in_flight: Arc<Mutex<HashMap<String, (usize, usize)>>>,
    pub total_in_flight: Arc<AtomicUsize>,
    pub max_total: Arc<AtomicUsize>,
}

impl Fake {
    pub fn new(script: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static) -> Self {
        Self {
            seen: Arc::default(),
            script: Arc::new(script),
            in_flight: Arc::default(),
            total_in_flight: Arc::default(),
            max_total: Arc::default(),
        }
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }

    pub fn count(&self, method: &str, path: &str) -> usize {
        self.requests()
            .iter()
            .filter(|s| s.method == method && s.path == path)
            .count()
    }

    pub fn max_in_flight(&self, node: &str) -> usize {
        self.in_flight
            .lock()
            .expect("lock")
            .get(node)
            .map_or(0, |(_, max)| *max)
    }

    pub fn track(&self, node: &str, delta: isize) {
        let mut map = self.in_flight.lock().expect("lock");
        let entry = map.entry(node.to_owned()).or_default();
        entry.0 = entry.0.saturating_add_signed(delta);
        entry.1 = entry.1.max(entry.0);
    }
}

async fn handle(State(fake): State<Fake>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        headers: parts.headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let node = seen
        .path
        .strip_prefix("/api2/json/nodes/")
        .and_then(|p| p.split('/').next())
        .unwrap_or("")
        .to_owned();
    let index = {
        let mut all = fake.seen.lock().expect("lock");
        all.push(seen.clone());
        all.len() - 1
    };
    let reply = (fake.script)(&seen, index);
    fake.track(&node, 1);
    let now = fake.total_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    fake.max_total.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(reply.delay).await;
    fake.total_in_flight.fetch_sub(1, Ordering::SeqCst);
    fake.track(&node, -1);
    let mut response = Response::new(Body::from(reply.body));
    *response.status_mut() = StatusCode::from_u16(reply.status).expect("status");
    if let Some(reason) = reply.reason {
        let phrase = hyper::ext::ReasonPhrase::try_from(reason.as_bytes()).expect("reason");
        response.extensions_mut().insert(phrase);
    }
    response
}

pub fn router(fake: &Fake) -> Router {
    Router::new().fallback(handle).with_state(fake.clone())
}

pub async fn serve(fake: &Fake) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = router(fake);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

pub fn settings(endpoint: &str, auth: Auth) -> ClientSettings {
    let mut s = ClientSettings::new(endpoint, auth);
    s.retry.base_delay = Duration::from_millis(5);
    s.retry.max_delay = Duration::from_millis(20);
    s.tasks.first_delay = Duration::from_millis(5);
    s.tasks.max_delay = Duration::from_millis(20);
    s.tasks.timeout = Duration::from_secs(10);
    s
}

pub fn token() -> Auth {
    Auth::ApiToken("root@pam!atoll=s3cr3t-token".to_owned().into())
}

pub fn node() -> NodeName {
    "pve".parse().expect("node")
}

pub fn vmid(n: u32) -> VmId {
    VmId::new(n).expect("vmid")
}

pub const UPID: &str = "UPID:pve:0000A1B2:0012C3D4:66F0A2B1:vzcreate:100:root@pam!atoll:";

/// A CA and a `localhost` certificate it signed, as PEM.
pub fn test_pki() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate().expect("ca key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "atoll test CA");
    let ca_cert = ca.self_signed(&ca_key).expect("ca cert");
    let leaf_key = KeyPair::generate().expect("leaf key");
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .expect("leaf params")
        .signed_by(&leaf_key, &ca_cert, &ca_key)
        .expect("leaf cert");
    (ca_cert.pem(), leaf.pem(), leaf_key.serialize_pem())
}

pub async fn serve_tls(fake: &Fake, cert: &str, key: &str) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = axum_server::tls_rustls::RustlsConfig::from_pem(cert.into(), key.into())
        .await
        .expect("tls config");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let app = router(fake);
    tokio::spawn(async move {
        axum_server::from_tcp_rustls(listener, config)
            .serve(app.into_make_service())
            .await
    });
    format!("https://localhost:{port}")
}
