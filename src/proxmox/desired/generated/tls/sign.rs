//! Signing as Go's crypto/x509 signs a certificate or request with each kind of key: RSA with
//! PKCS#1 v1.5 and SHA-256, ECDSA with SHA-256 (P-224 and P-256), SHA-384 (P-384) or SHA-512
//! (P-521), the signature DER-encoded, and Ed25519 over the message itself; and the subject key
//! identifier the tls provider computes (`generateSubjectKeyID`).

use p256::ecdsa::signature::hazmat::PrehashSigner as _;
use rand::rngs::OsRng;
use sha1::Sha1;
use sha2::{Digest as _, Sha256, Sha384, Sha512};
use x509_cert::der::Encode as _;
use x509_cert::der::asn1::{Any, UintRef};
use x509_cert::spki::{AlgorithmIdentifierOwned, ObjectIdentifier, SubjectPublicKeyInfoOwned};

use super::pem::PrivateKey;

const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const ECDSA_WITH_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const ECDSA_WITH_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const ECDSA_WITH_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.4");
const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");

/// The signature algorithm Go chooses for the key.
pub(crate) fn algorithm(key: &PrivateKey) -> AlgorithmIdentifierOwned {
    let (oid, parameters) = match key {
        // RSA's parameters are an explicit NULL.
        PrivateKey::Rsa(_) => (SHA256_WITH_RSA, Some(Any::null())),
        PrivateKey::P224(_) | PrivateKey::P256(_) => (ECDSA_WITH_SHA256, None),
        PrivateKey::P384(_) => (ECDSA_WITH_SHA384, None),
        PrivateKey::P521(_) => (ECDSA_WITH_SHA512, None),
        PrivateKey::Ed25519(_) => (ED25519, None),
    };
    AlgorithmIdentifierOwned { oid, parameters }
}

/// One curve's signature over a prehashed message, DER-encoded.
macro_rules! ecdsa {
    ($curve:ident, $key:expr, $digest:expr) => {{
        let signer = $curve::ecdsa::SigningKey::from($key);
        let signature: $curve::ecdsa::Signature = signer
            .sign_prehash(&$digest)
            .map_err(|e| format!("signing failed: {e}"))?;
        let (r, s) = signature.split_bytes();
        der_signature(&r, &s)?
    }};
}

/// ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }, the form Go writes.
fn der_signature(r: &[u8], s: &[u8]) -> Result<Vec<u8>, String> {
    let encode = |e: x509_cert::der::Error| format!("encoding the signature failed: {e}");
    [
        UintRef::new(r).map_err(encode)?,
        UintRef::new(s).map_err(encode)?,
    ]
    .to_der()
    .map_err(encode)
}

/// The signature of `message` (a TBSCertificate or CertificationRequestInfo, DER).
pub(crate) fn sign(key: &PrivateKey, message: &[u8]) -> Result<Vec<u8>, String> {
    Ok(match key {
        PrivateKey::Rsa(key) => key
            .sign_with_rng(
                &mut OsRng,
                rsa::Pkcs1v15Sign::new::<Sha256>(),
                &Sha256::digest(message),
            )
            .map_err(|e| format!("signing failed: {e}"))?,
        PrivateKey::P224(key) => ecdsa!(p224, key, Sha256::digest(message)),
        PrivateKey::P256(key) => ecdsa!(p256, key, Sha256::digest(message)),
        PrivateKey::P384(key) => ecdsa!(p384, key, Sha384::digest(message)),
        PrivateKey::P521(key) => {
            let signer = p521::ecdsa::SigningKey::from_bytes(&key.to_bytes())
                .map_err(|e| format!("signing failed: {e}"))?;
            let signature: p521::ecdsa::Signature = signer
                .sign_prehash(&Sha512::digest(message))
                .map_err(|e| format!("signing failed: {e}"))?;
            let (r, s) = signature.split_bytes();
            der_signature(&r, &s)?
        }
        PrivateKey::Ed25519(key) => {
            use ed25519_dalek::Signer as _;
            key.sign(message).to_bytes().to_vec()
        }
    })
}

/// The provider's `generateSubjectKeyID`: the SHA-1 of the public key as Go marshals it, which
/// is the key bits a SubjectPublicKeyInfo holds for RSA (PKCS#1) and ECDSA (the uncompressed
/// point), and an OCTET STRING of the 32 bytes for Ed25519.
pub(crate) fn subject_key_id(public: &SubjectPublicKeyInfoOwned) -> Vec<u8> {
    let bits = public.subject_public_key.raw_bytes();
    let marshalled = if public.algorithm.oid == ED25519 {
        let mut octets = vec![0x04, u8::try_from(bits.len()).unwrap_or(0)];
        octets.extend_from_slice(bits);
        octets
    } else {
        bits.to_vec()
    };
    Sha1::digest(marshalled).to_vec()
}
