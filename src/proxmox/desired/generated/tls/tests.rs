//! The certificates checked by what reads them: the real `openssl` when the machine has it
//! (`x509 -text`, `verify`, `req -verify`), and always RustCrypto's X.509 parser (subject,
//! names, usages, constraints, validity) with an Ed25519 signature verified against its CA.

use std::collections::BTreeMap;
use std::process::Command;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use x509_cert::certificate::Certificate;
use x509_cert::der::{Decode as _, DecodePem as _, Encode as _};
use x509_cert::ext::pkix::{BasicConstraints, SubjectAltName};

use super::key::{Curve, KeySpec, generate};
use super::{cert, request};

fn key(spec: KeySpec) -> String {
    generate(spec).expect("a key")["private_key_pem"].clone()
}

fn stored(value: &tfconfig::Value) -> String {
    value.to_stored().expect("storable")
}

fn list(items: &[&str]) -> String {
    let items = items.iter().map(|s| tfconfig::Value::string(*s)).collect();
    stored(&tfconfig::Value::List(tfconfig::Type::String, items))
}

fn subject(cn: &str) -> String {
    let fields = BTreeMap::from([
        ("common_name".to_owned(), tfconfig::Value::string(cn)),
        ("organization".to_owned(), tfconfig::Value::string("Lab")),
        ("country".to_owned(), tfconfig::Value::string("NZ")),
    ]);
    let block = tfconfig::Value::Object(fields);
    stored(&tfconfig::Value::List(block.ty(), vec![block]))
}

fn args(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn now() -> OffsetDateTime {
    OffsetDateTime::parse("2026-03-01T12:00:00Z", &Rfc3339).expect("time")
}

/// A CA for `ca_key`, a request for `leaf_key`, and the leaf the CA signs: their values.
fn chain(ca_key: &str, leaf_key: &str) -> [BTreeMap<String, String>; 3] {
    let ca = cert::self_signed(
        &args(&[
            ("private_key_pem", ca_key.to_owned()),
            ("subject", subject("Lab CA")),
            ("validity_period_hours", "48".to_owned()),
            ("allowed_uses", list(&["cert_signing", "crl_signing"])),
            ("is_ca_certificate", "true".to_owned()),
        ]),
        now(),
    )
    .expect("the CA");
    let csr = request::generate(&args(&[
        ("private_key_pem", leaf_key.to_owned()),
        ("subject", subject("app.lab")),
        ("dns_names", list(&["app.lab", "*.app.lab"])),
        ("ip_addresses", list(&["10.0.0.5", "fd00::5"])),
        ("uris", list(&["spiffe://lab/app"])),
    ]))
    .expect("the request");
    let leaf = cert::locally_signed(
        &args(&[
            ("cert_request_pem", csr["cert_request_pem"].clone()),
            ("ca_private_key_pem", ca_key.to_owned()),
            ("ca_cert_pem", ca["cert_pem"].clone()),
            ("validity_period_hours", "24".to_owned()),
            (
                "allowed_uses",
                list(&["digital_signature", "key_encipherment", "server_auth"]),
            ),
        ]),
        now(),
    )
    .expect("the leaf");
    [ca, csr, leaf]
}

fn openssl(args: &[&str]) -> Option<String> {
    let out = Command::new("openssl").args(args).output().ok()?;
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn every_key_type_signs_a_chain_that_openssl_verifies() {
    let specs = [
        (KeySpec::Ed25519, "ED25519"),
        (KeySpec::Ecdsa(Curve::P224), "ecdsa-with-SHA256"),
        (KeySpec::Ecdsa(Curve::P256), "ecdsa-with-SHA256"),
        (KeySpec::Ecdsa(Curve::P384), "ecdsa-with-SHA384"),
        (KeySpec::Ecdsa(Curve::P521), "ecdsa-with-SHA512"),
        (KeySpec::Rsa(2048), "sha256WithRSAEncryption"),
    ];
    let leaf_key = key(KeySpec::Ecdsa(Curve::P256));
    for (spec, algorithm) in specs {
        let [ca, csr, leaf] = chain(&key(spec), &leaf_key);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = |name: &str| dir.path().join(name).display().to_string();
        std::fs::write(path("ca.pem"), &ca["cert_pem"]).expect("ca.pem");
        std::fs::write(path("leaf.pem"), &leaf["cert_pem"]).expect("leaf.pem");
        std::fs::write(path("csr.pem"), &csr["cert_request_pem"]).expect("csr.pem");
        // Verified at an hour into its validity, whatever the machine's clock says.
        let at = (now().unix_timestamp() + 3600).to_string();
        let verify = [
            "verify",
            "-attime",
            &at,
            "-CAfile",
            &path("ca.pem"),
            &path("leaf.pem"),
        ];
        let Some(verified) = openssl(&verify) else {
            return;
        };
        assert!(verified.trim().ends_with(": OK"), "{spec:?}: {verified}");
        openssl(&["req", "-verify", "-noout", "-in", &path("csr.pem")]);
        let text =
            openssl(&["x509", "-noout", "-text", "-in", &path("leaf.pem")]).expect("openssl ran");
        for want in [
            &format!("Signature Algorithm: {algorithm}"),
            "Issuer: C = NZ, O = Lab, CN = Lab CA",
            "Subject: C = NZ, O = Lab, CN = app.lab",
            "DNS:app.lab, DNS:*.app.lab, IP Address:10.0.0.5, IP Address:FD00:0:0:0:0:0:0:5, URI:spiffe://lab/app",
            "Digital Signature, Key Encipherment",
            "TLS Web Server Authentication",
            "CA:FALSE",
            "Not Before: Mar  1 12:00:00 2026 GMT",
            "Not After : Mar  2 12:00:00 2026 GMT",
            "X509v3 Authority Key Identifier",
        ] {
            assert!(text.contains(want), "{spec:?}: {want} in {text}");
        }
        let ca_text =
            openssl(&["x509", "-noout", "-text", "-in", &path("ca.pem")]).expect("openssl ran");
        for want in [
            "CA:TRUE",
            "Certificate Sign, CRL Sign",
            "Subject Key Identifier",
        ] {
            assert!(ca_text.contains(want), "{spec:?}: {want} in {ca_text}");
        }
        let serial =
            openssl(&["x509", "-noout", "-serial", "-in", &path("leaf.pem")]).expect("openssl ran");
        let hex = serial.trim().trim_start_matches("serial=");
        let id: u128 = leaf["id"].parse().expect("a decimal serial");
        assert_eq!(u128::from_str_radix(hex, 16).expect("hex"), id);
    }
}

#[test]
fn the_rust_parser_reads_what_was_asked_and_the_ca_signature_holds() {
    let ca_key = key(KeySpec::Ed25519);
    let [ca, csr, leaf] = chain(&ca_key, &key(KeySpec::Ed25519));
    assert_eq!(ca["key_algorithm"], "ED25519");
    assert_eq!(csr["key_algorithm"], "ED25519");
    assert_eq!(leaf["ca_key_algorithm"], "ED25519");
    assert_eq!(leaf["validity_start_time"], "2026-03-01T12:00:00Z");
    assert_eq!(leaf["validity_end_time"], "2026-03-02T12:00:00Z");
    assert_eq!(leaf["ready_for_renewal"], "false");
    assert_eq!(csr["id"].len(), 40);
    let ca = Certificate::from_pem(ca["cert_pem"].as_bytes()).expect("CA parses");
    let leaf = Certificate::from_pem(leaf["cert_pem"].as_bytes()).expect("leaf parses");
    let (critical, constraints) = ca
        .tbs_certificate
        .get::<BasicConstraints>()
        .expect("decodes")
        .expect("present");
    assert!(critical && constraints.ca);
    assert_eq!(leaf.tbs_certificate.issuer, ca.tbs_certificate.subject);
    let (_, names) = leaf
        .tbs_certificate
        .get::<SubjectAltName>()
        .expect("decodes")
        .expect("present");
    assert_eq!(names.0.len(), 5);
    // The leaf's signature verifies with the CA's Ed25519 key.
    let public = ca
        .tbs_certificate
        .subject_public_key_info
        .subject_public_key
        .raw_bytes();
    let public: [u8; 32] = public.try_into().expect("32 bytes");
    let verifying = ed25519_dalek::VerifyingKey::from_bytes(&public).expect("a key");
    let signature =
        ed25519_dalek::Signature::from_slice(leaf.signature.raw_bytes()).expect("64 bytes");
    let tbs = leaf.tbs_certificate.to_der().expect("encodes");
    verifying
        .verify_strict(&tbs, &signature)
        .expect("the CA signed it");
    assert!(Certificate::from_der(&tbs).is_err());
}

#[test]
fn unusable_inputs_are_refused_with_the_providers_summary() {
    let ca_key = key(KeySpec::Ed25519);
    let [ca, csr, _] = chain(&ca_key, &key(KeySpec::Ed25519));
    let other_key = key(KeySpec::Ecdsa(Curve::P256));
    let locally = |pairs: &[(&str, String)]| {
        let mut a = args(&[
            ("cert_request_pem", csr["cert_request_pem"].clone()),
            ("ca_private_key_pem", ca_key.clone()),
            ("ca_cert_pem", ca["cert_pem"].clone()),
            ("validity_period_hours", "1".to_owned()),
            ("allowed_uses", list(&["server_auth"])),
        ]);
        a.extend(args(pairs));
        cert::check("tls_locally_signed_cert", &a).map_err(|r| r.summary)
    };
    assert_eq!(locally(&[]), Ok(()));
    assert_eq!(
        locally(&[("ca_private_key_pem", other_key.clone())]),
        Err("Failed to create certificate")
    );
    assert_eq!(
        locally(&[("ca_private_key_pem", "not a key".to_owned())]),
        Err("Failed to parse CA private key PEM")
    );
    assert_eq!(
        locally(&[("ca_cert_pem", csr["cert_request_pem"].clone())]),
        Err("Failed to parse CA certificate PEM")
    );
    assert_eq!(
        locally(&[("cert_request_pem", ca["cert_pem"].clone())]),
        Err("Failed to parse certificate request PEM")
    );
    let self_signed = |pairs: &[(&str, String)]| {
        let mut a = args(&[
            ("private_key_pem", other_key.clone()),
            ("validity_period_hours", "1".to_owned()),
            ("allowed_uses", list(&["server_auth"])),
        ]);
        a.extend(args(pairs));
        cert::check("tls_self_signed_cert", &a).map_err(|r| r.summary)
    };
    assert_eq!(self_signed(&[]), Ok(()));
    assert_eq!(
        self_signed(&[("is_ca_certificate", "true".to_owned())]),
        Err("Invalid Certificate Subject")
    );
    assert_eq!(
        self_signed(&[("set_authority_key_id", "true".to_owned())]),
        Err("Invalid Certificate Authority")
    );
    assert_eq!(
        self_signed(&[("ip_addresses", list(&["10.0.0.300"]))]),
        Err("Invalid IP address")
    );
    assert_eq!(
        self_signed(&[("private_key_pem", ca["cert_pem"].clone())]),
        Err("Failed to parse private key PEM")
    );
}

#[test]
fn a_certificate_is_due_once_its_early_renewal_time_has_come() {
    let values = BTreeMap::from([("validity_end_time", "2026-03-02T12:00:00Z")]);
    let early = |hours: &str| args(&[("early_renewal_hours", hours.to_owned())]);
    let at = |t: &str| OffsetDateTime::parse(t, &Rfc3339).expect("time");
    assert!(cert::due(&values, &early("0"), at("2026-03-02T11:59:59Z")).is_none());
    assert!(cert::due(&values, &early("0"), at("2026-03-02T12:00:00Z")).is_some());
    let why = cert::due(&values, &early("2"), at("2026-03-02T10:00:00Z")).expect("due");
    assert!(why.contains("ready for renewal"), "{why}");
    assert!(cert::due(&values, &early("2"), at("2026-03-02T09:59:59Z")).is_none());
}

#[test]
fn every_use_the_schema_accepts_is_one_the_certificate_writes() {
    for name in tfconfig::schema::ALLOWED_USES {
        let a = args(&[
            ("allowed_uses", list(&[name])),
            ("validity_period_hours", "1".to_owned()),
        ]);
        assert!(cert::check("tls_locally_signed_cert", &a).is_ok(), "{name}");
    }
}
