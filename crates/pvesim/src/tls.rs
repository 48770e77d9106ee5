//! A throw-away CA and a server certificate for `--tls` (rustls with the ring provider), so
//! clients can trust the simulator through a CA file, as they would a real PVE node's CA.

use std::net::SocketAddr;
use std::sync::Arc;

use axum_server::tls_rustls::RustlsConfig;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

/// Builds the server TLS config; returns it with the CA certificate PEM.
pub(crate) fn server_config(addr: SocketAddr) -> anyhow::Result<(RustlsConfig, String)> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "pve-sim CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key)?;

    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if !addr.ip().is_unspecified() {
        names.push(addr.ip().to_string());
    }
    names.dedup();
    let leaf_key = KeyPair::generate()?;
    let mut leaf_params = CertificateParams::new(names)?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "pve-sim");
    let leaf = leaf_params.signed_by(&leaf_key, &ca_cert, &ca_key)?;

    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca_cert.der().clone()], key)?;
    let mut config = config;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((RustlsConfig::from_config(Arc::new(config)), ca_cert.pem()))
}
