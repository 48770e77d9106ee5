//! The names a certificate is for, written as Go writes them: the `subject` block as a
//! distinguished name in `pkix.Name.ToRDNSequence`'s order (C, ST, L, STREET, POSTALCODE, O,
//! OU, CN, SERIALNUMBER, then the e-mail address), each value a PrintableString when it can be
//! one and a UTF8String otherwise; and `dns_names`, `ip_addresses` and `uris` as a subject
//! alternative name extension (critical when the subject is empty, as RFC 5280 asks).

use std::collections::BTreeMap;
use std::net::IpAddr;

use x509_cert::attr::AttributeTypeAndValue;
use x509_cert::der::asn1::{Any, Ia5String, OctetString, SetOfVec};
use x509_cert::der::oid::AssociatedOid;
use x509_cert::der::{Decode as _, Encode as _, Tag};
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::SubjectAltName;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::name::{Name, RdnSequence, RelativeDistinguishedName};
use x509_cert::spki::ObjectIdentifier;

use super::Refusal;

/// The subject's names in Go's order, with their attribute types.
const SUBJECT: [(&str, &str); 9] = [
    ("country", "2.5.4.6"),
    ("province", "2.5.4.8"),
    ("locality", "2.5.4.7"),
    ("street_address", "2.5.4.9"),
    ("postal_code", "2.5.4.17"),
    ("organization", "2.5.4.10"),
    ("organizational_unit", "2.5.4.11"),
    ("common_name", "2.5.4.3"),
    ("serial_number", "2.5.4.5"),
];
const EMAIL_ADDRESS: &str = "1.2.840.113549.1.9.1";
const SUBJECT_ALT_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.17");

/// A stored list argument (`dns_names`, `street_address`) as its strings.
pub(crate) fn strings(arguments: &BTreeMap<String, String>, name: &str) -> Vec<String> {
    let Some(value) = arguments
        .get(name)
        .and_then(|text| tfconfig::Value::from_stored(text).ok())
    else {
        return Vec::new();
    };
    strings_of(&value)
}

fn strings_of(value: &tfconfig::Value) -> Vec<String> {
    match value.unmark().0 {
        tfconfig::Value::List(_, items)
        | tfconfig::Value::Set(_, items)
        | tfconfig::Value::Tuple(items) => items
            .iter()
            .filter_map(|item| match item.unmark().0 {
                tfconfig::Value::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The `subject` block's distinguished name (empty when there is none).
pub(crate) fn subject(arguments: &BTreeMap<String, String>) -> Result<Name, Refusal> {
    let block = arguments
        .get("subject")
        .and_then(|text| tfconfig::Value::from_stored(text).ok());
    let fields = match block.as_ref().map(|b| b.unmark().0) {
        Some(tfconfig::Value::List(_, items) | tfconfig::Value::Tuple(items)) => {
            items.first().map(|first| first.unmark().0.clone())
        }
        _ => None,
    };
    let mut rdns = Vec::new();
    let Some(fields) = fields else {
        return Ok(RdnSequence(rdns));
    };
    for (name, oid) in SUBJECT {
        let values = match fields.get_attr(name).map(|v| v.unmark().0) {
            Some(tfconfig::Value::String(s)) => vec![s.clone()],
            Some(list @ tfconfig::Value::List(..)) => strings_of(list),
            _ => continue,
        };
        if values.is_empty() {
            continue;
        }
        let atvs = values
            .iter()
            .map(|v| attribute(oid, v, directory_string(v)))
            .collect::<Result<Vec<_>, _>>()?;
        rdns.push(rdn(atvs)?);
    }
    if let Some(tfconfig::Value::String(email)) =
        fields.get_attr("email_address").map(|v| v.unmark().0)
    {
        rdns.push(rdn(vec![attribute(EMAIL_ADDRESS, email, Tag::Ia5String)?])?);
    }
    Ok(RdnSequence(rdns))
}

/// PrintableString when every character may be one (Go's `isPrintable`, with `*`), else
/// UTF8String.
fn directory_string(value: &str) -> Tag {
    let printable = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" '()+,-./:=?*".contains(&b));
    if printable {
        Tag::PrintableString
    } else {
        Tag::Utf8String
    }
}

fn attribute(oid: &str, value: &str, tag: Tag) -> Result<AttributeTypeAndValue, Refusal> {
    let invalid = |e: x509_cert::der::Error| {
        Refusal::new("Invalid Certificate Subject", format!("{value:?}: {e}"))
    };
    if tag == Tag::Ia5String && !value.is_ascii() {
        return Err(Refusal::new(
            "Invalid Certificate Subject",
            format!("the email_address {value:?} is not ASCII"),
        ));
    }
    Ok(AttributeTypeAndValue {
        oid: ObjectIdentifier::new(oid).map_err(|e| invalid(e.into()))?,
        value: Any::new(tag, value.as_bytes()).map_err(invalid)?,
    })
}

fn rdn(atvs: Vec<AttributeTypeAndValue>) -> Result<RelativeDistinguishedName, Refusal> {
    SetOfVec::try_from(atvs)
        .map(RelativeDistinguishedName)
        .map_err(|e| Refusal::new("Invalid Certificate Subject", e.to_string()))
}

/// The alternative names the arguments give, in Go's order: DNS names, IP addresses, URIs.
pub(crate) fn alternative_names(
    arguments: &BTreeMap<String, String>,
) -> Result<Vec<GeneralName>, Refusal> {
    let mut names = Vec::new();
    for dns in strings(arguments, "dns_names") {
        let name = Ia5String::new(&dns).map_err(|_| {
            Refusal::new(
                "Error creating certificate",
                format!("x509: {dns:?} cannot be encoded as an IA5String"),
            )
        })?;
        names.push(GeneralName::DnsName(name));
    }
    for text in strings(arguments, "ip_addresses") {
        let ip: IpAddr = text
            .parse()
            .map_err(|_| Refusal::new("Invalid IP address", format!("Failed to parse {text:?}")))?;
        // Go writes an IPv4 address (and an IPv4-mapped IPv6 one) in its four bytes.
        let bytes = match ip {
            IpAddr::V4(v4) => v4.octets().to_vec(),
            IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map_or_else(|| v6.octets().to_vec(), |v4| v4.octets().to_vec()),
        };
        let octets = OctetString::new(bytes)
            .map_err(|e| Refusal::new("Invalid IP address", e.to_string()))?;
        names.push(GeneralName::IpAddress(octets));
    }
    for uri in strings(arguments, "uris") {
        let invalid = || {
            Refusal::new(
                "Invalid URI",
                format!("Failed to parse {uri:?}: net/url: invalid control character in URL"),
            )
        };
        if uri.chars().any(char::is_control) {
            return Err(invalid());
        }
        let name = Ia5String::new(&uri).map_err(|_| {
            Refusal::new(
                "Error creating certificate",
                format!("x509: {uri:?} cannot be encoded as an IA5String"),
            )
        })?;
        names.push(GeneralName::UniformResourceIdentifier(name));
    }
    Ok(names)
}

/// The subject alternative name extension, if there are names; critical when the subject is
/// empty.
pub(crate) fn alt_name_extension(
    names: Vec<GeneralName>,
    subject: &Name,
    critical_when_no_subject: bool,
) -> Result<Option<Extension>, String> {
    if names.is_empty() {
        return Ok(None);
    }
    let value = SubjectAltName(names)
        .to_der()
        .map_err(|e| format!("encoding the alternative names failed: {e}"))?;
    Ok(Some(Extension {
        extn_id: SUBJECT_ALT_NAME,
        critical: critical_when_no_subject && subject.0.is_empty(),
        extn_value: OctetString::new(value)
            .map_err(|e| format!("encoding the alternative names failed: {e}"))?,
    }))
}

/// A certificate request's alternative names that Go copies into the certificate: DNS names,
/// IP addresses and URIs, in that order.
pub(crate) fn requested_names(request: &x509_cert::request::CertReq) -> Vec<GeneralName> {
    let requested: Vec<GeneralName> = request
        .info
        .attributes
        .iter()
        .filter(|a| a.oid == <x509_cert::request::ExtensionReq as AssociatedOid>::OID)
        .flat_map(|a| a.values.iter())
        .filter_map(|v| Vec::<Extension>::from_der(&v.to_der().ok()?).ok())
        .flatten()
        .filter(|e| e.extn_id == SUBJECT_ALT_NAME)
        .filter_map(|e| SubjectAltName::from_der(e.extn_value.as_bytes()).ok())
        .flat_map(|san| san.0)
        .collect();
    let kind = |n: &GeneralName| match n {
        GeneralName::DnsName(_) => Some(0),
        GeneralName::IpAddress(_) => Some(1),
        GeneralName::UniformResourceIdentifier(_) => Some(2),
        _ => None,
    };
    let mut kept: Vec<GeneralName> = requested
        .into_iter()
        .filter(|n| kind(n).is_some())
        .collect();
    kept.sort_by_key(kind);
    kept
}
