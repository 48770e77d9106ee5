//! `tls_self_signed_cert` and `tls_locally_signed_cert`, issued as the tls provider's
//! `createCertificate` issues them through Go's `x509.CreateCertificate`: a random positive
//! 128-bit serial (the `id`, in decimal), valid from now for `validity_period_hours`, the key
//! usages and extended key usages `allowed_uses` names, basic constraints (critical) saying
//! whether it is a CA, a subject key identifier for a CA or when asked, an authority key
//! identifier (the CA's, when it has one; a self-signed certificate's own when asked), and the
//! subject alternative names. It is ready for renewal once `early_renewal_hours` before its end
//! has come, and is then made anew.

use std::collections::BTreeMap;

use rand::RngCore as _;
use rand::rngs::OsRng;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use x509_cert::certificate::{Certificate, TbsCertificate, Version};
use x509_cert::der::asn1::{BitString, GeneralizedTime, OctetString, UtcTime};
use x509_cert::der::flagset::FlagSet;
use x509_cert::der::pem::LineEnding;
use x509_cert::der::{Encode as _, EncodePem as _};
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectKeyIdentifier,
};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::{ObjectIdentifier, SubjectPublicKeyInfoOwned};
use x509_cert::time::{Time, Validity};

use super::pem::{self, PrivateKey};
use super::uses::{Use, usage};
use super::{Refusal, names, sign};

/// What the arguments ask of any issued certificate.
struct Options {
    hours: i64,
    key_usage: FlagSet<KeyUsages>,
    extended: Vec<ObjectIdentifier>,
    is_ca: bool,
    /// Go writes a path length only when it is positive (0 means none without `MaxPathLenZero`).
    max_path: Option<u8>,
    subject_key_id: bool,
    authority_key_id: bool,
}

fn number(arguments: &BTreeMap<String, String>, name: &str) -> Option<i64> {
    let n: f64 = arguments.get(name)?.trim().parse().ok()?;
    (n.fract() == 0.0 && n.abs() < 1e15).then_some(n as i64)
}

fn flag(arguments: &BTreeMap<String, String>, name: &str) -> bool {
    arguments.get(name).is_some_and(|v| v == "true")
}

fn options(arguments: &BTreeMap<String, String>) -> Result<Options, Refusal> {
    let mut key_usage = FlagSet::<KeyUsages>::default();
    let mut extended = Vec::new();
    for name in names::strings(arguments, "allowed_uses") {
        match usage(&name) {
            Some(Use::Key(bit)) => key_usage |= bit,
            Some(Use::Extended(oid)) => extended.push(ObjectIdentifier::new_unwrap(oid)),
            None => {
                return Err(Refusal::new(
                    "Invalid Attribute Value Match",
                    format!("allowed_uses {name:?} is not one of the tls provider's uses"),
                ));
            }
        }
    }
    let is_ca = flag(arguments, "is_ca_certificate");
    let max_path = number(arguments, "max_path_length")
        .filter(|n| is_ca && *n > 0)
        .map(|n| u8::try_from(n).unwrap_or(u8::MAX));
    Ok(Options {
        hours: number(arguments, "validity_period_hours").unwrap_or(0),
        key_usage,
        extended,
        is_ca,
        max_path,
        subject_key_id: is_ca || flag(arguments, "set_subject_key_id"),
        authority_key_id: flag(arguments, "set_authority_key_id"),
    })
}

/// A certificate's known arguments, checked as generation will use them.
pub(super) fn check(
    resource_type: &str,
    arguments: &BTreeMap<String, String>,
) -> Result<(), Refusal> {
    let options = options(arguments)?;
    if resource_type == "tls_self_signed_cert" {
        let subject = names::subject(arguments)?;
        names::alternative_names(arguments)?;
        if options.is_ca && subject.0.is_empty() {
            return Err(no_ca_subject());
        }
        if options.authority_key_id && !options.subject_key_id {
            return Err(no_authority_key_id());
        }
        if let Some(text) = arguments.get("private_key_pem") {
            pem::private_key(text)
                .map_err(|e| Refusal::new("Failed to parse private key PEM", e))?;
        }
        return Ok(());
    }
    if let Some(text) = arguments.get("cert_request_pem") {
        request(text)?;
    }
    let key = arguments
        .get("ca_private_key_pem")
        .map(|t| ca_key(t))
        .transpose()?;
    let cert = arguments
        .get("ca_cert_pem")
        .map(|t| ca_cert(t))
        .transpose()?;
    if let (Some(key), Some(cert)) = (key, cert) {
        matching(&key, &cert)?;
    }
    Ok(())
}

fn no_ca_subject() -> Refusal {
    Refusal::new(
        "Invalid Certificate Subject",
        "Must contain at least one Distinguished Name when creating Certificate Authority (CA)",
    )
}

fn no_authority_key_id() -> Refusal {
    Refusal::new(
        "Invalid Certificate Authority",
        "Could not determine Authority Key Identifier (set set_subject_key_id or is_ca_certificate, so there is one)",
    )
}

fn request(text: &str) -> Result<x509_cert::request::CertReq, Refusal> {
    pem::request(text).map_err(|e| Refusal::new("Failed to parse certificate request PEM", e))
}

fn ca_key(text: &str) -> Result<PrivateKey, Refusal> {
    pem::private_key(text).map_err(|e| Refusal::new("Failed to parse CA private key PEM", e))
}

fn ca_cert(text: &str) -> Result<Certificate, Refusal> {
    pem::certificate(text).map_err(|e| Refusal::new("Failed to parse CA certificate PEM", e))
}

/// Go's `CreateCertificate` refuses a CA key that is not the CA certificate's.
fn matching(key: &PrivateKey, cert: &Certificate) -> Result<(), Refusal> {
    let failed = |e: String| Refusal::new("Failed to create certificate", e);
    let ours = key.public_key_info().map_err(failed)?.to_der();
    let theirs = cert.tbs_certificate.subject_public_key_info.to_der();
    match (ours, theirs) {
        (Ok(a), Ok(b)) if a == b => Ok(()),
        _ => Err(failed(
            "x509: provided PrivateKey doesn't match parent's PublicKey (ca_private_key_pem \
             is not the key of ca_cert_pem)"
                .to_owned(),
        )),
    }
}

/// `tls_self_signed_cert`.
pub(super) fn self_signed(
    arguments: &BTreeMap<String, String>,
    now: OffsetDateTime,
) -> Result<BTreeMap<String, String>, Refusal> {
    check("tls_self_signed_cert", arguments)?;
    let text = arguments.get("private_key_pem").map_or("", String::as_str);
    let key =
        pem::private_key(text).map_err(|e| Refusal::new("Failed to parse private key PEM", e))?;
    let subject = names::subject(arguments)?;
    let public_key = key
        .public_key_info()
        .map_err(|e| Refusal::new("Failed to get public key from private key", e))?;
    let options = options(arguments)?;
    let own_id = sign::subject_key_id(&public_key);
    let issued = Issue {
        issuer: subject.clone(),
        subject,
        public_key,
        names: names::alternative_names(arguments)?,
        issuer_key: &key,
        authority_key_id: options.authority_key_id.then_some(own_id),
    };
    let mut values = issue(issued, &options, now)?;
    values.insert("key_algorithm".to_owned(), key.algorithm().to_owned());
    Ok(values)
}

/// `tls_locally_signed_cert`: the request's subject, names and key, issued by the CA.
pub(super) fn locally_signed(
    arguments: &BTreeMap<String, String>,
    now: OffsetDateTime,
) -> Result<BTreeMap<String, String>, Refusal> {
    check("tls_locally_signed_cert", arguments)?;
    let text = |name: &str| arguments.get(name).map_or("", String::as_str);
    let request = request(text("cert_request_pem"))?;
    let key = ca_key(text("ca_private_key_pem"))?;
    let ca = ca_cert(text("ca_cert_pem"))?;
    matching(&key, &ca)?;
    let options = options(arguments)?;
    let subject = request.info.subject.clone();
    if options.is_ca && subject.0.is_empty() {
        return Err(no_ca_subject());
    }
    let authority_key_id = ca
        .tbs_certificate
        .get::<SubjectKeyIdentifier>()
        .ok()
        .flatten()
        .map(|(_, id)| id.0.as_bytes().to_vec());
    let issued = Issue {
        subject,
        names: names::requested_names(&request),
        public_key: request.info.public_key,
        issuer: ca.tbs_certificate.subject,
        issuer_key: &key,
        authority_key_id,
    };
    let mut values = issue(issued, &options, now)?;
    values.insert("ca_key_algorithm".to_owned(), key.algorithm().to_owned());
    Ok(values)
}

/// One certificate to issue.
struct Issue<'a> {
    subject: Name,
    public_key: SubjectPublicKeyInfoOwned,
    names: Vec<GeneralName>,
    issuer: Name,
    issuer_key: &'a PrivateKey,
    authority_key_id: Option<Vec<u8>>,
}

fn issue(
    issue: Issue<'_>,
    options: &Options,
    now: OffsetDateTime,
) -> Result<BTreeMap<String, String>, Refusal> {
    let failed = |e: String| Refusal::new("Failed to create certificate", e);
    let encode = |e: x509_cert::der::Error| failed(e.to_string());
    let mut serial = [0u8; 16];
    OsRng.fill_bytes(&mut serial);
    let end = now
        .checked_add(time::Duration::hours(options.hours))
        .ok_or_else(|| failed("validity_period_hours is too large".to_owned()))?;
    let extensions = extensions(&issue, options).map_err(failed)?;
    let tbs = TbsCertificate {
        version: Version::V3,
        serial_number: SerialNumber::new(&serial).map_err(encode)?,
        signature: sign::algorithm(issue.issuer_key),
        issuer: issue.issuer,
        validity: Validity {
            not_before: asn1_time(now).map_err(failed)?,
            not_after: asn1_time(end).map_err(failed)?,
        },
        subject: issue.subject,
        subject_public_key_info: issue.public_key,
        issuer_unique_id: None,
        subject_unique_id: None,
        extensions: Some(extensions),
    };
    let signature = sign::sign(issue.issuer_key, &tbs.to_der().map_err(encode)?).map_err(failed)?;
    let cert = Certificate {
        signature_algorithm: tbs.signature.clone(),
        tbs_certificate: tbs,
        signature: BitString::from_bytes(&signature).map_err(encode)?,
    };
    let rfc3339 = |t: OffsetDateTime| t.format(&Rfc3339).map_err(|e| failed(e.to_string()));
    Ok(BTreeMap::from([
        (
            "cert_pem".to_owned(),
            cert.to_pem(LineEnding::LF).map_err(encode)?,
        ),
        ("id".to_owned(), u128::from_be_bytes(serial).to_string()),
        ("ready_for_renewal".to_owned(), "false".to_owned()),
        ("validity_start_time".to_owned(), rfc3339(now)?),
        ("validity_end_time".to_owned(), rfc3339(end)?),
    ]))
}

/// UTCTime until 2049, GeneralizedTime after, as RFC 5280 and Go have it.
fn asn1_time(at: OffsetDateTime) -> Result<Time, String> {
    let since = std::time::Duration::from_secs(
        u64::try_from(at.unix_timestamp()).map_err(|e| e.to_string())?,
    );
    if at.year() < 2050 {
        UtcTime::from_unix_duration(since).map(Time::UtcTime)
    } else {
        GeneralizedTime::from_unix_duration(since).map(Time::GeneralTime)
    }
    .map_err(|e| e.to_string())
}

fn extension(
    oid: ObjectIdentifier,
    critical: bool,
    value: &impl x509_cert::der::Encode,
) -> Result<Extension, String> {
    let der = value.to_der().map_err(|e| e.to_string())?;
    Ok(Extension {
        extn_id: oid,
        critical,
        extn_value: OctetString::new(der).map_err(|e| e.to_string())?,
    })
}

/// Go's `buildCertExtensions` order: key usage, extended key usage, basic constraints, subject
/// key identifier, authority key identifier, alternative names.
fn extensions(issue: &Issue<'_>, options: &Options) -> Result<Vec<Extension>, String> {
    use x509_cert::der::oid::AssociatedOid;
    let mut out = Vec::new();
    if !options.key_usage.is_empty() {
        out.push(extension(
            KeyUsage::OID,
            true,
            &KeyUsage(options.key_usage),
        )?);
    }
    if !options.extended.is_empty() {
        let eku = ExtendedKeyUsage(options.extended.clone());
        out.push(extension(ExtendedKeyUsage::OID, false, &eku)?);
    }
    let constraints = BasicConstraints {
        ca: options.is_ca,
        path_len_constraint: options.max_path,
    };
    out.push(extension(BasicConstraints::OID, true, &constraints)?);
    if options.subject_key_id {
        let id =
            OctetString::new(sign::subject_key_id(&issue.public_key)).map_err(|e| e.to_string())?;
        out.push(extension(
            SubjectKeyIdentifier::OID,
            false,
            &SubjectKeyIdentifier(id),
        )?);
    }
    if let Some(id) = &issue.authority_key_id {
        let akid = AuthorityKeyIdentifier {
            key_identifier: Some(OctetString::new(id.clone()).map_err(|e| e.to_string())?),
            authority_cert_issuer: None,
            authority_cert_serial_number: None,
        };
        out.push(extension(AuthorityKeyIdentifier::OID, false, &akid)?);
    }
    out.extend(names::alt_name_extension(
        issue.names.clone(),
        &issue.subject,
        true,
    )?);
    Ok(out)
}

/// Why a stored certificate is ready for renewal at `now`: `early_renewal_hours` before the
/// end of its validity has come (the provider's `modifyPlanIfCertificateReadyForRenewal`).
pub(super) fn due(
    values: &BTreeMap<&str, &str>,
    arguments: &BTreeMap<String, String>,
    now: OffsetDateTime,
) -> Option<String> {
    let text = values.get("validity_end_time")?;
    let end = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    let early = number(arguments, "early_renewal_hours").unwrap_or(0);
    let renewal = end.checked_sub(time::Duration::hours(early))?;
    (now >= renewal).then(|| {
        format!(
            "it is ready for renewal: its validity ends at {text} and early_renewal_hours is \
             {early}, so the tls provider makes it anew"
        )
    })
}
