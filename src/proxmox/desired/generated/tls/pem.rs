//! The PEM a certificate's arguments give, read as the tls provider reads it: the first PEM
//! block (Go's `pem.Decode`), then a private key by its preamble (`RSA PRIVATE KEY`: PKCS#1,
//! `EC PRIVATE KEY`: SEC1, `PRIVATE KEY`: PKCS#8, of RSA, ECDSA P-224 to P-521 or Ed25519),
//! a `CERTIFICATE` or a `CERTIFICATE REQUEST`. Errors are worded as the provider's.

use base64::Engine as _;
use rsa::pkcs1::DecodeRsaPrivateKey as _;
use rsa::pkcs8::{DecodePrivateKey as _, EncodePublicKey as _};
use x509_cert::certificate::Certificate;
use x509_cert::der::Decode as _;
use x509_cert::request::CertReq;
use x509_cert::spki::{ObjectIdentifier, SubjectPublicKeyInfoOwned};

const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
const P224: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.33");
const P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const P521: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.35");

/// A private key a certificate is signed with.
#[derive(Clone)]
pub(crate) enum PrivateKey {
    Rsa(Box<rsa::RsaPrivateKey>),
    P224(p224::SecretKey),
    P256(p256::SecretKey),
    P384(p384::SecretKey),
    P521(p521::SecretKey),
    Ed25519(Box<ed25519_dalek::SigningKey>),
}

/// Never the key itself.
impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrivateKey({})", self.algorithm())
    }
}

impl PrivateKey {
    /// The provider's `key_algorithm`: `RSA`, `ECDSA` or `ED25519`.
    pub(crate) fn algorithm(&self) -> &'static str {
        match self {
            Self::Rsa(_) => "RSA",
            Self::P224(_) | Self::P256(_) | Self::P384(_) | Self::P521(_) => "ECDSA",
            Self::Ed25519(_) => "ED25519",
        }
    }

    /// The public key, as a certificate or request carries it.
    pub(crate) fn public_key_info(&self) -> Result<SubjectPublicKeyInfoOwned, String> {
        let der = match self {
            Self::Rsa(key) => key.to_public_key().to_public_key_der(),
            Self::P224(key) => key.public_key().to_public_key_der(),
            Self::P256(key) => key.public_key().to_public_key_der(),
            Self::P384(key) => key.public_key().to_public_key_der(),
            Self::P521(key) => key.public_key().to_public_key_der(),
            Self::Ed25519(key) => key.verifying_key().to_public_key_der(),
        }
        .map_err(|e| format!("encoding the public key failed: {e}"))?;
        SubjectPublicKeyInfoOwned::from_der(der.as_bytes())
            .map_err(|e| format!("encoding the public key failed: {e}"))
    }
}

/// The first PEM block of `text`: its type and its bytes.
fn first_block(text: &str) -> Option<(&str, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + "-----BEGIN ".len()..];
    let (label, rest) = rest.split_once("-----")?;
    let end = rest.find(&format!("-----END {label}-----"))?;
    let body: String = rest[..end]
        .lines()
        .filter(|line| !line.contains(':'))
        .flat_map(|line| line.chars().filter(|c| !c.is_ascii_whitespace()))
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body)
        .ok()?;
    Some((label, bytes))
}

/// `parsePrivateKeyPEM`: the key for its preamble.
pub(crate) fn private_key(text: &str) -> Result<PrivateKey, String> {
    let (label, der) = first_block(text).ok_or_else(|| {
        format!(
            "failed to decode PEM block: decoded bytes 0, undecoded {}",
            text.len()
        )
    })?;
    let parsed = match label {
        "RSA PRIVATE KEY" => rsa::RsaPrivateKey::from_pkcs1_der(&der)
            .map(|k| PrivateKey::Rsa(Box::new(k)))
            .map_err(|e| e.to_string()),
        "EC PRIVATE KEY" => sec1_key(&der),
        "PRIVATE KEY" => pkcs8_key(&der),
        "PUBLIC KEY" | "CERTIFICATE" | "CERTIFICATE REQUEST" => {
            return Err(format!(
                "unable to determine parser for PEM preamble: {label}"
            ));
        }
        other => return Err(format!("unsupported PEM preamble/type: {other}")),
    };
    parsed.map_err(|e| format!("failed to parse private key given PEM preamble '{label}': {e}"))
}

fn sec1_key(der: &[u8]) -> Result<PrivateKey, String> {
    let key = sec1::EcPrivateKey::from_der(der).map_err(|e| e.to_string())?;
    let curve = key
        .parameters
        .and_then(|p| p.named_curve())
        .ok_or("x509: failed to parse EC private key: no named curve")?;
    Ok(match curve {
        P224 => PrivateKey::P224(p224::SecretKey::from_sec1_der(der).map_err(|e| e.to_string())?),
        P256 => PrivateKey::P256(p256::SecretKey::from_sec1_der(der).map_err(|e| e.to_string())?),
        P384 => PrivateKey::P384(p384::SecretKey::from_sec1_der(der).map_err(|e| e.to_string())?),
        P521 => PrivateKey::P521(p521::SecretKey::from_sec1_der(der).map_err(|e| e.to_string())?),
        other => return Err(format!("x509: unknown elliptic curve {other}")),
    })
}

fn pkcs8_key(der: &[u8]) -> Result<PrivateKey, String> {
    let info = rsa::pkcs8::PrivateKeyInfo::try_from(der).map_err(|e| e.to_string())?;
    let e = |e: rsa::pkcs8::Error| e.to_string();
    let curve = || info.algorithm.parameters_oid().ok();
    Ok(match info.algorithm.oid {
        RSA_ENCRYPTION => PrivateKey::Rsa(Box::new(
            rsa::RsaPrivateKey::from_pkcs8_der(der).map_err(e)?,
        )),
        ED25519 => PrivateKey::Ed25519(Box::new(
            ed25519_dalek::SigningKey::from_pkcs8_der(der).map_err(e)?,
        )),
        EC_PUBLIC_KEY => match curve() {
            Some(P224) => PrivateKey::P224(p224::SecretKey::from_pkcs8_der(der).map_err(e)?),
            Some(P256) => PrivateKey::P256(p256::SecretKey::from_pkcs8_der(der).map_err(e)?),
            Some(P384) => PrivateKey::P384(p384::SecretKey::from_pkcs8_der(der).map_err(e)?),
            Some(P521) => PrivateKey::P521(p521::SecretKey::from_pkcs8_der(der).map_err(e)?),
            _ => return Err("x509: unsupported elliptic curve".to_owned()),
        },
        other => {
            return Err(format!(
                "x509: PKCS#8 wrapping contained private key with unknown algorithm: {other}"
            ));
        }
    })
}

/// The block of `text` of the type `want` (the provider's `decodePEM`).
fn block_of(text: &str, want: &str) -> Result<Vec<u8>, String> {
    let (label, der) = first_block(text)
        .ok_or_else(|| format!("failed to decode PEM of expected type {want:?} from bytes"))?;
    if label != want {
        return Err(format!(
            "invalid PEM type - expected {want:?}, got {label:?}"
        ));
    }
    Ok(der)
}

/// `parseCertificate`: the one certificate of a `CERTIFICATE` block.
pub(crate) fn certificate(text: &str) -> Result<Certificate, String> {
    let der = block_of(text, "CERTIFICATE")?;
    Certificate::from_der(&der).map_err(|e| format!("failed to parse certificate: {e}"))
}

/// `parseCertificateRequest`: a `CERTIFICATE REQUEST` block.
pub(crate) fn request(text: &str) -> Result<CertReq, String> {
    let der = block_of(text, "CERTIFICATE REQUEST")?;
    CertReq::from_der(&der).map_err(|e| format!("failed to parse certificate request: {e}"))
}
