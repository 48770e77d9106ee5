//! The Proxmox VE client over TLS: a CA file is trusted, an unknown certificate is refused as a
//! settings problem (never retried), and the explicit insecure switch accepts anything.

use crate::pve_client_support;

use atoll::proxmox::client::{ProxmoxClient, PveError, Tls};
use pve_client_support::*;
use serde_json::json;

#[tokio::test]
async fn tls_with_a_ca_file_is_trusted_and_unknown_certificates_are_refused() {
    let (ca, cert, key) = test_pki();
    let fake = Fake::new(|_, _| ok(json!({"version": "9.2.1"})));
    let endpoint = serve_tls(&fake, &cert, &key).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_file = dir.path().join("pve-root-ca.pem");
    std::fs::write(&ca_file, ca).expect("write ca");

    let mut trusted = settings(&endpoint, token());
    trusted.tls = Tls::CaFile(ca_file);
    let version = ProxmoxClient::new(&trusted)
        .expect("client")
        .version()
        .await
        .expect("version");
    assert_eq!(version.version, "9.2.1");

    let mut system = settings(&endpoint, token());
    system.retry.attempts = 1;
    let err = ProxmoxClient::new(&system)
        .expect("client")
        .version()
        .await
        .expect_err("untrusted");
    assert!(
        matches!(&err, PveError::Settings(m) if m.contains("TLS handshake failed")),
        "{err:?}"
    );
    assert_eq!(
        fake.count("GET", "/api2/json/version"),
        1,
        "nothing reached the server untrusted"
    );

    let mut insecure = settings(&endpoint, token());
    insecure.tls = Tls::Insecure;
    ProxmoxClient::new(&insecure)
        .expect("client")
        .version()
        .await
        .expect("insecure accepted");
}

#[test]
fn a_missing_or_empty_ca_file_is_a_settings_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = settings("https://pve:8006", token());
    s.tls = Tls::CaFile(dir.path().join("absent.pem"));
    let err = ProxmoxClient::new(&s).expect_err("absent");
    assert!(err.to_string().contains("absent.pem"), "{err}");
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").expect("write");
    s.tls = Tls::CaFile(empty);
    assert!(matches!(ProxmoxClient::new(&s), Err(PveError::Settings(_))));
}
