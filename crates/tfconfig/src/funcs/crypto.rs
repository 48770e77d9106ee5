//! `rsadecrypt` (PKCS#1 v1.5 with a PEM or OpenSSH private key, as Go's
//! `ssh.ParseRawPrivateKey` reads it) and `bcrypt` (a salted hash, new on every call).

use base64::Engine as _;
use rsa::pkcs1::DecodeRsaPrivateKey as _;
use rsa::pkcs8::DecodePrivateKey as _;

use super::{FnError, FnResult, strings::strict};
use crate::value::Value;

pub(super) fn call(name: &str, args: &[Value]) -> Option<FnResult> {
    Some(match name {
        "rsadecrypt" => rsadecrypt(args),
        _ => return None,
    })
}

fn rsadecrypt(args: &[Value]) -> FnResult {
    let encoded = strict(args, 0)?;
    let ciphertext = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| {
            FnError::Arg(
                0,
                format!("failed to decode input {encoded:?}: cipher text must be base64-encoded"),
            )
        })?;
    let key = private_key(strict(args, 1)?).map_err(|e| FnError::Arg(1, e))?;
    let plain = key
        .decrypt(rsa::Pkcs1v15Encrypt, &ciphertext)
        .map_err(|_| FnError::Call("failed to decrypt: crypto/rsa: decryption error".into()))?;
    Ok(Value::String(String::from_utf8_lossy(&plain).into_owned()))
}

/// The first PEM block of `text`: its label and the whole block's text.
fn pem_block(text: &str) -> Option<(&str, &str)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + "-----BEGIN ".len()..];
    let label = &rest[..rest.find("-----")?];
    let end_marker = format!("-----END {label}-----");
    let end = text[start..].find(&end_marker)? + start + end_marker.len();
    Some((label, &text[start..end]))
}

/// The block's DER: its base64 body, headers (`Proc-Type: ...`) refused as Go refuses an
/// encrypted key without a passphrase.
fn pem_der(block: &str) -> Result<Vec<u8>, String> {
    let mut lines = block.lines().map(str::trim);
    lines.next();
    let mut body = String::new();
    for line in lines.filter(|l| !l.starts_with("-----END")) {
        if line.contains(':') {
            return Err(
                "invalid private key: ssh: this private key is passphrase protected".into(),
            );
        }
        body.push_str(line);
    }
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| "invalid private key: ssh: no key found".into())
}

/// An RSA private key in any form Go's `ssh.ParseRawPrivateKey` reads: PKCS#1 (`RSA PRIVATE
/// KEY`), PKCS#8 (`PRIVATE KEY`) or OpenSSH's own format.
fn private_key(text: &str) -> Result<rsa::RsaPrivateKey, String> {
    let (label, block) = pem_block(text).ok_or("invalid private key: ssh: no key found")?;
    let asn1 =
        |e: &dyn std::fmt::Display| format!("invalid ASN1 data in the given private key: {e}");
    match label {
        "RSA PRIVATE KEY" => {
            rsa::RsaPrivateKey::from_pkcs1_der(&pem_der(block)?).map_err(|e| asn1(&e))
        }
        "PRIVATE KEY" => {
            let der = pem_der(block)?;
            rsa::RsaPrivateKey::from_pkcs8_der(&der).map_err(|_| {
                "invalid private key type: the PKCS#8 key is not an RSA key".to_owned()
            })
        }
        "OPENSSH PRIVATE KEY" => {
            let key = ssh_key::PrivateKey::from_openssh(block)
                .map_err(|e| format!("invalid private key: ssh: {e}"))?;
            if key.is_encrypted() {
                return Err(
                    "invalid private key: ssh: this private key is passphrase protected".into(),
                );
            }
            match key.key_data() {
                ssh_key::private::KeypairData::Rsa(pair) => {
                    openssh_rsa(pair).map_err(|e| format!("invalid private key: ssh: {e}"))
                }
                _ => Err("invalid private key type: the OpenSSH key is not an RSA key".into()),
            }
        }
        "EC PRIVATE KEY" | "DSA PRIVATE KEY" => Err(format!(
            "invalid private key type: a {label} is not an RSA key"
        )),
        other => Err(format!(
            "invalid private key: ssh: unsupported key type {other:?}"
        )),
    }
}

/// The RSA key of an OpenSSH key pair. (ssh-key 0.6's own conversion passes `p` twice, where
/// `p` and `q` belong, and so fails on every key.)
fn openssh_rsa(pair: &ssh_key::private::RsaKeypair) -> Result<rsa::RsaPrivateKey, ssh_key::Error> {
    let int = rsa::BigUint::try_from;
    Ok(rsa::RsaPrivateKey::from_components(
        int(&pair.public.n)?,
        int(&pair.public.e)?,
        int(&pair.private.d)?,
        vec![int(&pair.private.p)?, int(&pair.private.q)?],
    )?)
}
