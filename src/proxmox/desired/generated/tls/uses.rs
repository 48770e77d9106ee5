//! What `allowed_uses` names, as the tls provider's `keyUsages` and `extendedKeyUsages` map
//! them onto Go's `x509.KeyUsage` bits and extended key usage OIDs.

use x509_cert::ext::pkix::KeyUsages;

/// `allowed_uses` names and what each sets: a key usage bit, or an extended key usage.
pub(super) enum Use {
    Key(KeyUsages),
    Extended(&'static str),
}

/// The provider's `keyUsages` and `extendedKeyUsages`.
pub(super) fn usage(name: &str) -> Option<Use> {
    use KeyUsages as K;
    Some(match name {
        "digital_signature" => Use::Key(K::DigitalSignature),
        "content_commitment" => Use::Key(K::NonRepudiation),
        "key_encipherment" => Use::Key(K::KeyEncipherment),
        "data_encipherment" => Use::Key(K::DataEncipherment),
        "key_agreement" => Use::Key(K::KeyAgreement),
        "cert_signing" => Use::Key(K::KeyCertSign),
        "crl_signing" => Use::Key(K::CRLSign),
        "encipher_only" => Use::Key(K::EncipherOnly),
        "decipher_only" => Use::Key(K::DecipherOnly),
        "any_extended" => Use::Extended("2.5.29.37.0"),
        "server_auth" => Use::Extended("1.3.6.1.5.5.7.3.1"),
        "client_auth" => Use::Extended("1.3.6.1.5.5.7.3.2"),
        "code_signing" => Use::Extended("1.3.6.1.5.5.7.3.3"),
        "email_protection" => Use::Extended("1.3.6.1.5.5.7.3.4"),
        "ipsec_end_system" => Use::Extended("1.3.6.1.5.5.7.3.5"),
        "ipsec_tunnel" => Use::Extended("1.3.6.1.5.5.7.3.6"),
        "ipsec_user" => Use::Extended("1.3.6.1.5.5.7.3.7"),
        "timestamping" => Use::Extended("1.3.6.1.5.5.7.3.8"),
        "ocsp_signing" => Use::Extended("1.3.6.1.5.5.7.3.9"),
        "microsoft_server_gated_crypto" => Use::Extended("1.3.6.1.4.1.311.10.3.3"),
        "netscape_server_gated_crypto" => Use::Extended("2.16.840.1.113730.4.1"),
        "microsoft_commercial_code_signing" => Use::Extended("1.3.6.1.4.1.311.2.1.22"),
        "microsoft_kernel_code_signing" => Use::Extended("1.3.6.1.4.1.311.61.1.1"),
        _ => return None,
    })
}
