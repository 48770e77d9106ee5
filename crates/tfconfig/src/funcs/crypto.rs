//! `rsadecrypt` (PKCS#1 v1.5 with a PEM or OpenSSH private key, as Go's
//! `ssh.ParseRawPrivateKey` reads it) and `bcrypt` (a salted hash, new on every call).

use base64::Engine as _;
use rsa::pkcs1::DecodeRsaPrivateKey as _;
use rsa::pkcs8::DecodePrivateKey as _;

use super::{FnError, FnResult, string_arg, strings::strict};
use crate::value::Value;

pub(super) fn call(name: &str, args: &[Value]) -> Option<FnResult> {
    Some(match name {
        "rsadecrypt" => rsadecrypt(args),
        "bcrypt" => bcrypt(args),
        _ => return None,
    })
}

/// The cost Go's `bcrypt.GenerateFromPassword` uses below its minimum, 4.
const DEFAULT_COST: f64 = 10.0;

/// The highest cost atoll computes. Each step doubles the work (cost 12 takes a quarter of a
/// second, 31 would take days), and a configuration can call bcrypt once per instance.
const MAX_COST: f64 = 12.0;

/// `bcrypt(str, cost)`: a `$2a$` hash with a random salt, as Go's x/crypto writes it, so every
/// call gives a different (equally valid) hash.
fn bcrypt(args: &[Value]) -> FnResult {
    if args.len() > 2 {
        return Err(FnError::Call(
            "bcrypt() takes no more than two arguments".into(),
        ));
    }
    let password = string_arg(args, 0)?;
    let cost = match args.get(1) {
        None => DEFAULT_COST,
        Some(_) => super::num_arg(args, 1)?,
    };
    if cost.fract() != 0.0 {
        return Err(FnError::Arg(1, "value must be a whole number".into()));
    }
    if password.len() > 72 {
        return Err(FnError::Call(
            "error occured generating password bcrypt: password length exceeds 72 bytes".into(),
        ));
    }
    let cost = if cost < 4.0 { DEFAULT_COST } else { cost };
    if cost > 31.0 {
        return Err(FnError::Call(format!(
            "error occured generating password crypto/bcrypt: cost {cost} is outside allowed range (4,31)"
        )));
    }
    if cost > MAX_COST {
        return Err(FnError::Arg(
            1,
            format!(
                "atoll computes bcrypt costs up to {MAX_COST}: each step doubles the work, and a plan must not spend minutes hashing; hash the password outside the configuration and pass the hash in"
            ),
        ));
    }
    let salt: [u8; 16] = rand::random();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a whole number between 4 and MAX_COST"
    )]
    let cost = cost as u32;
    let parts = ::bcrypt::hash_with_salt(password.as_bytes(), cost, salt)
        .map_err(|e| FnError::Call(format!("error occured generating password {e}")))?;
    Ok(Value::String(
        parts.format_for_version(::bcrypt::Version::TwoA),
    ))
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

#[cfg(test)]
mod tests {
    use super::bcrypt;
    use crate::value::Value;

    /// Test vectors of Openwall's crypt_blowfish (the reference `$2a$` implementation).
    #[test]
    fn the_bcrypt_crate_agrees_with_openwalls_vectors() {
        for (password, hash) in [
            (
                "U*U",
                "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
            ),
            (
                "U*U*",
                "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK",
            ),
            (
                "U*U*U",
                "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a",
            ),
            (
                "",
                "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy",
            ),
        ] {
            assert!(
                ::bcrypt::verify(password, hash).expect("a valid hash"),
                "{password:?}"
            );
        }
    }

    #[test]
    fn bcrypt_hashes_verify_and_take_a_new_salt_each_call() {
        let call = |cost: f64| {
            let args = [Value::string("correct horse"), Value::Number(cost)];
            match bcrypt(&args) {
                Ok(Value::String(h)) => h,
                other => panic!("bcrypt: {other:?}"),
            }
        };
        let (a, b) = (call(4.0), call(4.0));
        assert!(a.starts_with("$2a$04$") && a.len() == 60, "{a}");
        assert_ne!(a, b, "the salt is random");
        for h in [&a, &b] {
            assert!(::bcrypt::verify("correct horse", h).expect("a valid hash"));
            assert!(!::bcrypt::verify("wrong horse", h).expect("a valid hash"));
        }
        // Below the minimum, Go uses its default cost.
        assert!(call(1.0).starts_with("$2a$10$"));
        assert!(bcrypt(&[Value::string("x"), Value::Number(32.0)]).is_err());
        assert!(bcrypt(&[Value::string("x"), Value::Number(4.5)]).is_err());
    }
}
