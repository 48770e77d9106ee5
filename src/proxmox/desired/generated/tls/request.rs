//! `tls_cert_request`, made as the tls provider makes it with Go's
//! `x509.CreateCertificateRequest`: a PKCS#10 request for the key's public key, with the
//! `subject` and, in an extension request attribute, the alternative names (not critical);
//! `id` is the SHA-1 of its DER in hex (the provider's `hashForState`).

use std::collections::BTreeMap;

use x509_cert::attr::Attribute;
use x509_cert::der::asn1::{BitString, SetOfVec};
use x509_cert::der::pem::LineEnding;
use x509_cert::der::{Encode as _, EncodePem as _};
use x509_cert::request::{CertReq, CertReqInfo, ExtensionReq, Version};

use super::{Refusal, key, names, pem, sign};

/// The request's known arguments, checked as generation will use them.
pub(super) fn check(arguments: &BTreeMap<String, String>) -> Result<(), Refusal> {
    names::subject(arguments)?;
    names::alternative_names(arguments)?;
    if let Some(text) = arguments.get("private_key_pem") {
        pem::private_key(text).map_err(|e| Refusal::new("Failed to parse private key PEM", e))?;
    }
    Ok(())
}

/// Makes the request and its computed attributes.
pub(super) fn generate(
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, Refusal> {
    check(arguments)?;
    let failed = |e: String| Refusal::new("Error creating certificate request", e);
    let encode = |e: x509_cert::der::Error| failed(e.to_string());
    let text = arguments.get("private_key_pem").map_or("", String::as_str);
    let key =
        pem::private_key(text).map_err(|e| Refusal::new("Failed to parse private key PEM", e))?;
    let subject = names::subject(arguments)?;
    let mut attributes = SetOfVec::new();
    if let Some(san) =
        names::alt_name_extension(names::alternative_names(arguments)?, &subject, false)
            .map_err(failed)?
    {
        let requested = Attribute::try_from(ExtensionReq(vec![san])).map_err(encode)?;
        attributes.insert(requested).map_err(encode)?;
    }
    let info = CertReqInfo {
        version: Version::V1,
        subject,
        public_key: key.public_key_info().map_err(failed)?,
        attributes,
    };
    let signature = sign::sign(&key, &info.to_der().map_err(encode)?).map_err(failed)?;
    let request = CertReq {
        info,
        algorithm: sign::algorithm(&key),
        signature: BitString::from_bytes(&signature).map_err(encode)?,
    };
    let der = request.to_der().map_err(encode)?;
    Ok(BTreeMap::from([
        (
            "cert_request_pem".to_owned(),
            request.to_pem(LineEnding::LF).map_err(encode)?,
        ),
        ("id".to_owned(), key::state_id(&der)),
        ("key_algorithm".to_owned(), key.algorithm().to_owned()),
    ]))
}
