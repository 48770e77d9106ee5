//! Verifies a GitHub App JWT the way GitHub does: RS256 signed by the App's key, `iss` = the
//! App id, not expired, and valid for at most ten minutes.

use octocrab::jsonwebtoken::{Algorithm, DecodingKey, Validation, decode};
use serde_json::Value;

/// Longest lifetime GitHub accepts (10 minutes), plus the minute of clock drift octocrab
/// back-dates `iat` by.
const MAX_LIFETIME_SECS: i64 = 11 * 60;

pub(super) fn verify(jwt: &str, app_id: u64, public_key_pem: &str) -> Result<(), String> {
    let key = DecodingKey::from_rsa_pem(public_key_pem.as_bytes())
        .map_err(|e| format!("the fake's App public key is unusable: {e}"))?;
    let mut validation = Validation::new(Algorithm::RS256);
    // `iss` is checked below: octocrab sends it as a number, which the library does not read.
    validation.set_required_spec_claims(&["exp"]);
    let data = decode::<Value>(jwt, &key, &validation)
        .map_err(|e| format!("A JSON web token could not be decoded: {e}"))?;
    let claims = data.claims;
    let iss_ok = match &claims["iss"] {
        Value::Number(n) => n.as_u64() == Some(app_id),
        Value::String(s) => s == &app_id.to_string(),
        _ => false,
    };
    if !iss_ok {
        return Err("'Issuer' claim ('iss') must be the App id".to_owned());
    }
    let lifetime = claims["exp"].as_i64().unwrap_or(0) - claims["iat"].as_i64().unwrap_or(0);
    if lifetime > MAX_LIFETIME_SECS {
        return Err("'Expiration time' claim ('exp') is too far in the future".to_owned());
    }
    Ok(())
}
