//! `tls_private_key`, generated as the hashicorp/tls provider does (its
//! `internal/provider/resource_private_key.go` and `common_key.go`): the key for `algorithm`
//! (`RSA` with `rsa_bits`, `ECDSA` with `ecdsa_curve`, `ED25519`), then every computed attribute:
//!
//! - `private_key_pem`: PKCS#1 (`RSA PRIVATE KEY`) for RSA, SEC1 (`EC PRIVATE KEY`) for ECDSA,
//!   PKCS#8 (`PRIVATE KEY`) for ED25519; `private_key_pem_pkcs8`: PKCS#8 for all;
//! - `private_key_openssh`: the OpenSSH format with no passphrase and no comment;
//! - `public_key_pem`: PKIX (`PUBLIC KEY`); `id`: the SHA-1 of its DER, in hex;
//! - `public_key_openssh` (`ssh-ed25519 AAAA…\n`, the authorized-keys line with no comment),
//!   `public_key_fingerprint_md5` (`aa:bb:…`) and `public_key_fingerprint_sha256`
//!   (`SHA256:…`). ECDSA P-224 has no SSH form: these three and `private_key_openssh` are empty,
//!   as the provider leaves them.

use std::collections::BTreeMap;

use md5::{Digest as _, Md5};
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use p256::pkcs8::AssociatedOid as _;
use rand::rngs::OsRng;
use rsa::pkcs1::EncodeRsaPrivateKey as _;
use rsa::pkcs8::{EncodePrivateKey as _, EncodePublicKey as _, LineEnding};
use sec1::der::EncodePem as _;
use sha1::Sha1;
use ssh_key::private::{EcdsaKeypair, Ed25519Keypair, KeypairData, RsaKeypair};
use ssh_key::{HashAlg, PrivateKey};

/// What a key computes, in name order.
pub(crate) const COMPUTED: &[&str] = &[
    "id",
    "private_key_openssh",
    "private_key_pem",
    "private_key_pem_pkcs8",
    "public_key_fingerprint_md5",
    "public_key_fingerprint_sha256",
    "public_key_openssh",
    "public_key_pem",
];

/// The `rsa_bits` atoll generates (`tfconfig::schema::RSA_BITS`, which says why).
const MIN_RSA_BITS: u64 = tfconfig::schema::RSA_BITS.0 as u64;
const MAX_RSA_BITS: u64 = tfconfig::schema::RSA_BITS.1 as u64;

/// What to generate, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeySpec {
    Rsa(usize),
    Ecdsa(Curve),
    Ed25519,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Curve {
    P224,
    P256,
    P384,
    P521,
}

impl KeySpec {
    /// From the resource's arguments (`algorithm`, `rsa_bits` default 2048, `ecdsa_curve`
    /// default `P224`, as the provider's schema has them); why not, in the provider's words.
    pub(crate) fn parse(arguments: &BTreeMap<String, String>) -> Result<Self, String> {
        let algorithm = arguments.get("algorithm").map_or("", String::as_str);
        match algorithm {
            "RSA" => {
                let bits = arguments.get("rsa_bits").map_or("2048", String::as_str);
                let bits: u64 = bits
                    .parse()
                    .map_err(|_| format!("rsa_bits must be a whole number, not {bits:?}"))?;
                if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) {
                    return Err(format!(
                        "rsa_bits must be between {MIN_RSA_BITS} and {MAX_RSA_BITS} (atoll's bound: \
                         larger keys take minutes to generate); 4096 is the usual strong choice"
                    ));
                }
                Ok(Self::Rsa(usize::try_from(bits).unwrap_or(2048)))
            }
            "ECDSA" => match arguments.get("ecdsa_curve").map_or("P224", String::as_str) {
                "P224" => Ok(Self::Ecdsa(Curve::P224)),
                "P256" => Ok(Self::Ecdsa(Curve::P256)),
                "P384" => Ok(Self::Ecdsa(Curve::P384)),
                "P521" => Ok(Self::Ecdsa(Curve::P521)),
                other => Err(format!(
                    "invalid ECDSA curve {other:?}; supported values are: P224, P256, P384, P521"
                )),
            },
            "ED25519" => Ok(Self::Ed25519),
            other => Err(format!(
                "algorithm {other:?} is not supported; use one of RSA, ECDSA, ED25519"
            )),
        }
    }
}

/// How much key generation one project may ask of one apply, in RSA-2048 keys (about 50 ms
/// each on one core; an RSA-8192 key costs 256 of them).
pub(crate) const BUDGET: u64 = 1024;

impl KeySpec {
    /// This key's generation time in RSA-2048 keys, at least one (ECDSA and ED25519 keys take
    /// far less, but each still counts, so the budget bounds how many keys too).
    pub(crate) fn cost(self) -> u64 {
        match self {
            Self::Rsa(bits) => (bits as u64 / 1024).pow(4) / 16,
            Self::Ecdsa(_) | Self::Ed25519 => 0,
        }
        .max(1)
    }
}

/// The PEM forms and the SSH key pair of one generated key.
struct Encoded {
    private_pem: String,
    private_pkcs8: String,
    public_der: Vec<u8>,
    public_pem: String,
    /// `None` for P-224, which SSH does not know.
    ssh: Option<PrivateKey>,
}

/// Generates the key and every computed attribute.
pub(crate) fn generate(spec: KeySpec) -> Result<BTreeMap<String, String>, String> {
    let encoded = match spec {
        KeySpec::Rsa(bits) => rsa_key(bits),
        KeySpec::Ecdsa(curve) => ecdsa_key(curve),
        KeySpec::Ed25519 => ed25519_key(),
    }
    .map_err(|e| format!("generating the key failed: {e}"))?;
    let mut values = BTreeMap::from([
        ("private_key_pem".to_owned(), encoded.private_pem),
        ("private_key_pem_pkcs8".to_owned(), encoded.private_pkcs8),
        ("public_key_pem".to_owned(), encoded.public_pem),
        ("id".to_owned(), state_id(&encoded.public_der)),
    ]);
    let (mut private_openssh, mut public_openssh, mut md5, mut sha256) =
        (String::new(), String::new(), String::new(), String::new());
    if let Some(key) = &encoded.ssh {
        private_openssh = key
            .to_openssh(ssh_key::LineEnding::LF)
            .map_err(|e| format!("encoding the OpenSSH private key failed: {e}"))?
            .to_string();
        let public = key.public_key();
        public_openssh = format!(
            "{}\n",
            public
                .to_openssh()
                .map_err(|e| format!("encoding the OpenSSH public key failed: {e}"))?
        );
        let wire = public
            .to_bytes()
            .map_err(|e| format!("encoding the SSH public key failed: {e}"))?;
        md5 = Md5::digest(&wire)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":");
        sha256 = public.fingerprint(HashAlg::Sha256).to_string();
    }
    values.insert("private_key_openssh".to_owned(), private_openssh);
    values.insert("public_key_openssh".to_owned(), public_openssh);
    values.insert("public_key_fingerprint_md5".to_owned(), md5);
    values.insert("public_key_fingerprint_sha256".to_owned(), sha256);
    Ok(values)
}

/// The provider's `hashForState`: hex SHA-1 of the value with surrounding whitespace trimmed
/// (Go's `strings.TrimSpace`, here over the DER bytes as the provider passes them: ASCII
/// spaces, and the Unicode spaces a valid UTF-8 sequence at either end may spell, such as
/// U+0085 or U+00A0; a byte that is not valid UTF-8 is never a space).
pub(crate) fn state_id(der: &[u8]) -> String {
    let mut start = 0;
    while let Some((c, len)) = first_char(&der[start..]) {
        if !c.is_whitespace() {
            break;
        }
        start += len;
    }
    let mut end = der.len();
    while end > start {
        match last_char(&der[start..end]) {
            Some((c, len)) if c.is_whitespace() => end -= len,
            _ => break,
        }
    }
    hex::encode(Sha1::digest(&der[start..end]))
}

/// The character a valid UTF-8 sequence at the start of `bytes` spells, and its length.
fn first_char(bytes: &[u8]) -> Option<(char, usize)> {
    (1..=bytes.len().min(4)).find_map(|n| {
        let c = std::str::from_utf8(&bytes[..n]).ok()?.chars().next()?;
        Some((c, n))
    })
}

/// The character a valid UTF-8 sequence at the end of `bytes` spells, and its length.
fn last_char(bytes: &[u8]) -> Option<(char, usize)> {
    (1..=bytes.len().min(4)).find_map(|n| {
        let mut chars = std::str::from_utf8(&bytes[bytes.len() - n..]).ok()?.chars();
        let c = chars.next()?;
        chars.next().is_none().then_some((c, n))
    })
}

type Failure = Box<dyn std::error::Error>;

fn rsa_key(bits: usize) -> Result<Encoded, Failure> {
    let key = rsa::RsaPrivateKey::new(&mut OsRng, bits)?;
    let public_der = key.to_public_key().to_public_key_der()?.into_vec();
    Ok(Encoded {
        private_pem: key.to_pkcs1_pem(LineEnding::LF)?.to_string(),
        private_pkcs8: key.to_pkcs8_pem(LineEnding::LF)?.to_string(),
        public_pem: key.to_public_key().to_public_key_pem(LineEnding::LF)?,
        public_der,
        ssh: Some(PrivateKey::new(
            KeypairData::Rsa(RsaKeypair::try_from(key)?),
            "",
        )?),
    })
}

fn ed25519_key() -> Result<Encoded, Failure> {
    let key = ed25519_dalek::SigningKey::generate(&mut OsRng);
    // PKCS#8 v1 (the seed alone), as Go's `x509.MarshalPKCS8PrivateKey` writes it and every
    // OpenSSL reads it; the v2 form with the public key is not.
    let seed = ed25519_dalek::pkcs8::KeypairBytes {
        secret_key: key.to_bytes(),
        public_key: None,
    };
    let pkcs8 = seed.to_pkcs8_pem(LineEnding::LF)?.to_string();
    let public = key.verifying_key();
    Ok(Encoded {
        private_pem: pkcs8.clone(),
        private_pkcs8: pkcs8,
        public_pem: public.to_public_key_pem(LineEnding::LF)?,
        public_der: public.to_public_key_der()?.into_vec(),
        ssh: Some(PrivateKey::new(
            KeypairData::Ed25519(Ed25519Keypair::from(key)),
            "",
        )?),
    })
}

/// One curve's key and its PEM forms, with the key and its public point for an SSH form. The
/// SEC1 form names its curve, as Go's `x509.MarshalECPrivateKey` writes it (OpenSSL needs it).
macro_rules! ecdsa_pem {
    ($curve:ident, $name:ident) => {{
        let key = $curve::SecretKey::random(&mut OsRng);
        let public = key.public_key();
        let secret = key.to_bytes();
        let point = public.to_encoded_point(false);
        let sec1_pem = sec1::EcPrivateKey {
            private_key: &secret,
            parameters: Some(sec1::EcParameters::NamedCurve($curve::$name::OID)),
            public_key: Some(point.as_bytes()),
        }
        .to_pem(LineEnding::LF)?;
        let encoded = Encoded {
            private_pem: sec1_pem.to_string(),
            private_pkcs8: key.to_pkcs8_pem(LineEnding::LF)?.to_string(),
            public_pem: public.to_public_key_pem(LineEnding::LF)?,
            public_der: public.to_public_key_der()?.into_vec(),
            ssh: None,
        };
        (encoded, key, point)
    }};
}

/// [`ecdsa_pem`] with the SSH key pair; `$name` is both the curve type and ssh-key's
/// `EcdsaKeypair` variant.
macro_rules! ecdsa_with_ssh {
    ($curve:ident, $name:ident) => {{
        let (mut encoded, key, point) = ecdsa_pem!($curve, $name);
        let pair = EcdsaKeypair::$name {
            public: point,
            private: key.into(),
        };
        encoded.ssh = Some(PrivateKey::new(KeypairData::Ecdsa(pair), "")?);
        encoded
    }};
}

fn ecdsa_key(curve: Curve) -> Result<Encoded, Failure> {
    Ok(match curve {
        // P-224 has no SSH form.
        Curve::P224 => ecdsa_pem!(p224, NistP224).0,
        Curve::P256 => ecdsa_with_ssh!(p256, NistP256),
        Curve::P384 => ecdsa_with_ssh!(p384, NistP384),
        Curve::P521 => ecdsa_with_ssh!(p521, NistP521),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::desired::generated::test_args as args;

    #[test]
    fn the_providers_defaults_apply_rsa_2048_and_ecdsa_p224() {
        assert_eq!(
            KeySpec::parse(&args(&[("algorithm", "RSA")])),
            Ok(KeySpec::Rsa(2048))
        );
        assert_eq!(
            KeySpec::parse(&args(&[("algorithm", "ECDSA")])),
            Ok(KeySpec::Ecdsa(Curve::P224))
        );
        assert!(KeySpec::parse(&args(&[("algorithm", "rsa")])).is_err());
        assert!(KeySpec::parse(&args(&[("algorithm", "RSA"), ("rsa_bits", "1023")])).is_err());
    }

    #[test]
    fn p224_has_no_ssh_forms_and_p521_has_them() {
        let p224 = generate(KeySpec::Ecdsa(Curve::P224)).expect("p224");
        for ssh in [
            "private_key_openssh",
            "public_key_openssh",
            "public_key_fingerprint_md5",
            "public_key_fingerprint_sha256",
        ] {
            assert_eq!(p224[ssh], "", "{ssh}");
        }
        assert!(p224["private_key_pem"].starts_with("-----BEGIN EC PRIVATE KEY-----\n"));
        assert!(p224["public_key_pem"].starts_with("-----BEGIN PUBLIC KEY-----\n"));
        assert_eq!(p224["id"].len(), 40);
        let p521 = generate(KeySpec::Ecdsa(Curve::P521)).expect("p521");
        assert!(p521["public_key_openssh"].starts_with("ecdsa-sha2-nistp521 "));
        assert!(p521["public_key_fingerprint_sha256"].starts_with("SHA256:"));
        assert_eq!(p521["public_key_fingerprint_md5"].split(':').count(), 16);
        assert!(p521["private_key_openssh"].starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n"));
    }

    #[test]
    fn rsa_costs_grow_with_the_fourth_power_of_the_size() {
        assert_eq!(KeySpec::Rsa(2048).cost(), 1);
        assert_eq!(KeySpec::Rsa(4096).cost(), 16);
        assert_eq!(KeySpec::Rsa(8192).cost(), 256);
        assert_eq!(KeySpec::Ed25519.cost(), 1);
    }

    #[test]
    fn the_state_id_trims_as_go_trims_space() {
        assert_eq!(state_id(b" \tkey\n"), state_id(b"key"));
        assert_ne!(state_id(b"key\x01"), state_id(b"key"));
        // U+00A0 and U+0085 as UTF-8 are spaces to Go; a lone 0xA0 byte is not.
        assert_eq!(state_id(b"key\xc2\xa0"), state_id(b"key"));
        assert_eq!(state_id(b"\xc2\x85key"), state_id(b"key"));
        assert_ne!(state_id(b"key\xa0"), state_id(b"key"));
    }
}
