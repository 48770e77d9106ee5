//! The hashicorp/tls provider's certificates (`internal/provider/resource_self_signed_cert.go`,
//! `resource_cert_request.go`, `resource_locally_signed_cert.go`), whose values atoll generates
//! and keeps in state. Every argument replaces the certificate when changed (`RequiresReplace`,
//! and `requireReplaceIfStateContainsPEMString` on the PEM inputs) except
//! `early_renewal_hours`, an update in place; the private keys given are sensitive, the
//! certificates made are not.

use super::builders::*;
use super::{AttrSchema, BlockSchema, Check, ResourceSchema};

/// The provider's `supportedKeyUsagesStr()`: every key usage and extended key usage
/// `allowed_uses` accepts, sorted as the provider sorts them.
pub const ALLOWED_USES: &[&str] = &[
    "any_extended",
    "cert_signing",
    "client_auth",
    "code_signing",
    "content_commitment",
    "crl_signing",
    "data_encipherment",
    "decipher_only",
    "digital_signature",
    "email_protection",
    "encipher_only",
    "ipsec_end_system",
    "ipsec_tunnel",
    "ipsec_user",
    "key_agreement",
    "key_encipherment",
    "microsoft_commercial_code_signing",
    "microsoft_kernel_code_signing",
    "microsoft_server_gated_crypto",
    "netscape_server_gated_crypto",
    "ocsp_signing",
    "server_auth",
    "timestamping",
];

/// The longest `validity_period_hours` atoll issues for, a hundred years: the provider takes
/// any positive number, but a certificate's dates end at the year 9999.
pub const MAX_VALIDITY_HOURS: f64 = 876_600.0;

/// The `subject` block (at most one), each of its names replacing the certificate when changed.
fn subject() -> BlockSchema {
    let names = [
        "organization",
        "common_name",
        "organizational_unit",
        "locality",
        "province",
        "country",
        "postal_code",
        "serial_number",
        "email_address",
    ];
    let mut attrs: Vec<AttrSchema> = names.iter().map(|n| fnew(opt(n, s()))).collect();
    attrs.push(fnew(opt("street_address", ls())));
    replacing(block("subject", Some(1), attrs, vec![]))
}

/// `dns_names`, `ip_addresses` and `uris`: what the certificate is for besides its subject.
fn alternative_names() -> Vec<AttrSchema> {
    vec![
        fnew(opt("dns_names", ls())),
        checked(fnew(opt("ip_addresses", ls())), Check::EachNotEmpty),
        checked(fnew(opt("uris", ls())), Check::EachNotEmpty),
    ]
}

/// What every issued certificate has: its validity, its uses, whether it is a CA, and the
/// computed certificate.
fn issued() -> Vec<AttrSchema> {
    vec![
        checked(
            fnew(req("validity_period_hours", n())),
            Check::Between {
                min: 0.0,
                max: MAX_VALIDITY_HOURS,
                why: Some(
                    "atoll's bound: a hundred years, so the certificate's dates stay representable",
                ),
            },
        ),
        checked(
            fnew(req("allowed_uses", ls())),
            Check::EachOneOf(ALLOWED_USES),
        ),
        checked(dn("early_renewal_hours", 0.0), Check::AtLeast(0.0)),
        fnew(db("is_ca_certificate", false)),
        checked(fnew(opt("max_path_length", n())), Check::AtLeast(-1.0)),
        fnew(db("set_subject_key_id", false)),
        ro("cert_pem", s()),
        ro("ready_for_renewal", b()),
        ro("validity_start_time", s()),
        ro("validity_end_time", s()),
        ro("id", s()),
    ]
}

fn generated(type_name: &'static str, attrs: Vec<AttrSchema>) -> ResourceSchema {
    ResourceSchema {
        type_name,
        body: super::BodySchema {
            attrs,
            blocks: vec![subject()],
        },
        generated: true,
    }
}

pub(super) fn tls_self_signed_cert() -> ResourceSchema {
    let mut attrs = vec![
        sens(fnew(req("private_key_pem", s()))),
        fnew(db("set_authority_key_id", false)),
        ro("key_algorithm", s()),
    ];
    attrs.extend(alternative_names());
    attrs.extend(issued());
    generated("tls_self_signed_cert", attrs)
}

pub(super) fn tls_cert_request() -> ResourceSchema {
    let mut attrs = vec![
        sens(fnew(req("private_key_pem", s()))),
        ro("key_algorithm", s()),
        ro("cert_request_pem", s()),
        ro("id", s()),
    ];
    attrs.extend(alternative_names());
    generated("tls_cert_request", attrs)
}

/// The locally signed certificate has no `subject` of its own (it is the request's); the
/// schema keeps the block list empty for it.
pub(super) fn tls_locally_signed_cert() -> ResourceSchema {
    let mut attrs = vec![
        fnew(req("cert_request_pem", s())),
        sens(fnew(req("ca_private_key_pem", s()))),
        fnew(req("ca_cert_pem", s())),
        ro("ca_key_algorithm", s()),
    ];
    attrs.extend(issued());
    let mut schema = generated("tls_locally_signed_cert", attrs);
    schema.body.blocks.clear();
    schema
}

#[cfg(test)]
mod tests {
    use crate::value::Value;

    fn load(tf: &str) -> crate::Loaded {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("main.tf"), tf).expect("main.tf");
        crate::load_with_known(
            &crate::Input {
                checkout: dir.path().to_path_buf(),
                project_dir: ".".into(),
                workspace: "default".to_owned(),
                vars: Vec::new(),
                limits: crate::Limits::default(),
                modules: Default::default(),
            },
            &crate::Known::new(),
        )
    }

    const CA: &str = r#"
resource "tls_private_key" "ca" {
  algorithm = "ED25519"
}
resource "tls_self_signed_cert" "ca" {
  private_key_pem       = tls_private_key.ca.private_key_pem
  validity_period_hours = 48
  allowed_uses          = ["cert_signing", "crl_signing"]
  is_ca_certificate     = true
  subject {
    common_name  = "Lab CA"
    organization = "Lab"
  }
}
"#;

    #[test]
    fn a_certificate_plans_its_defaults_and_a_sensitive_unknown_key() {
        let loaded = load(CA);
        assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
        let cert = &loaded.resources[1].attributes;
        let get = |name: &str| cert.get_attr(name).expect(name).clone();
        assert_eq!(get("early_renewal_hours"), Value::Number(0.0));
        assert_eq!(get("set_subject_key_id"), Value::Bool(false));
        assert_eq!(get("set_authority_key_id"), Value::Bool(false));
        assert!(get("max_path_length").is_null());
        assert!(get("private_key_pem").contains_sensitive());
        assert!(get("private_key_pem").contains_unknown());
        assert!(get("cert_pem").is_unknown() && !get("cert_pem").contains_sensitive());
        let subject = get("subject");
        let cn = subject.unmark().0.clone();
        assert!(format!("{cn:?}").contains("Lab CA"), "{cn:?}");
    }

    #[test]
    fn an_unknown_allowed_use_is_an_error_on_its_line_in_validate() {
        let tf = CA.replace(r#""crl_signing"]"#, r#""crl_signing", "signing"]"#);
        let text = load(&tf).render_diagnostics();
        assert!(
            text.contains("Error: Invalid Attribute Value Match"),
            "{text}"
        );
        assert!(text.contains("on main.tf line 8"), "{text}");
        assert!(
            text.contains("allowed_uses[2] value must be one of"),
            "{text}"
        );
        assert!(text.contains(r#"got: "signing""#), "{text}");
    }

    #[test]
    fn an_empty_ip_address_two_subjects_and_a_negative_validity_are_refused() {
        let tf = CA
            .replace(
                "is_ca_certificate     = true",
                "is_ca_certificate     = true\n  ip_addresses = [\"\"]",
            )
            .replace("= 48", "= -1")
            .replace("subject {", "subject {\n  }\n  subject {");
        let text = load(&tf).render_diagnostics();
        assert!(
            text.contains("ip_addresses[0] string length must be at least 1"),
            "{text}"
        );
        assert!(
            text.contains("validity_period_hours value must be"),
            "{text}"
        );
        assert!(text.contains("subject"), "{text}");
    }
}
