//! HMAC-SHA256 over the raw request bytes, compared in constant time.

use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

/// Whether `signature_hex` is HMAC-SHA256(`secret`, `body`) in hex (either case).
/// Malformed hex never matches. The comparison is constant-time (`Mac::verify_slice`).
pub(super) fn verify(secret: &SecretString, body: &[u8], signature_hex: &str) -> bool {
    let Ok(expected) = hex::decode(signature_hex.trim()) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.expose_secret().as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

/// HMAC-SHA256(`secret`, `body`) as lowercase hex, as a forge would send it (for tests, benches
/// and the built-in fake forge).
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .expect("HMAC-SHA256 accepts keys of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_documented_test_vector_verifies() {
        let secret = SecretString::from("It's a Secret to Everybody");
        let sig = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert!(verify(&secret, b"Hello, World!", sig));
        assert_eq!(sign("It's a Secret to Everybody", b"Hello, World!"), sig);
    }

    #[test]
    fn signature_over_other_bytes_or_key_is_refused() {
        let secret = SecretString::from("It's a Secret to Everybody");
        let sig = sign("It's a Secret to Everybody", b"Hello, World!");
        assert!(!verify(&secret, b"Hello, World?", &sig));
        assert!(!verify(
            &SecretString::from("other"),
            b"Hello, World!",
            &sig
        ));
        assert!(!verify(&secret, b"Hello, World!", "not hex"));
        assert!(!verify(&secret, b"Hello, World!", &sig[..10]));
        assert!(verify(&secret, b"Hello, World!", &sig.to_uppercase()));
    }
}
