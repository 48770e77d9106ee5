//! The `web` (dashboard login) and `api` (bearer token) sections.

use secrecy::{ExposeSecret, SecretString};

use super::tree::Reader;

/// Dashboard login. The dashboard refuses every login while `username` or `password_hash` is
/// unset.
#[derive(Debug, Clone)]
pub struct WebSettings {
    pub username: Option<String>,
    /// An Argon2 hash in PHC form (`$argon2id$v=19$...`).
    pub password_hash: Option<SecretString>,
    /// Always mark the session cookie `Secure` (set when a TLS proxy fronts atoll; requests
    /// carrying `X-Forwarded-Proto: https` get it regardless).
    pub secure_cookies: bool,
    /// How long a session lasts without a new login.
    pub session_ttl_secs: u64,
    /// `web.max_failed_logins`: failed logins for one user name from one client address in
    /// 15 minutes; further attempts from that address for that name get 429.
    pub max_failed_logins: u64,
    /// `web.max_failed_logins_per_address`: failed logins from one client address (any user
    /// name) in 15 minutes; further attempts from that address get 429.
    pub max_failed_logins_per_address: u64,
    /// `web.max_failed_logins_per_user`: failed logins for one user name from all addresses in
    /// 15 minutes; past it, only addresses with no failure for that name may still try it.
    pub max_failed_logins_per_user: u64,
    /// `web.max_concurrent_password_checks`: Argon2 checks running at once (each takes the
    /// hash's memory, about 19 MiB with the defaults); more wait briefly, then get 503.
    pub max_concurrent_password_checks: usize,
}

/// The JSON API's bearer token; without one every `/api` request is 401.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    pub token: Option<SecretString>,
}

pub(super) fn read_web(r: &mut Reader<'_>) -> WebSettings {
    let username = r.opt_string("web.username").map(|u| u.trim().to_owned());
    if username
        .as_ref()
        .is_some_and(|u| u.is_empty() || u.chars().any(char::is_control))
    {
        r.problem(
            "web.username",
            "must be a non-empty name without control characters",
        );
    }
    let password_hash = r.secret("web.password_hash");
    if let Some(hash) = &password_hash
        && (argon2::PasswordHash::new(hash.expose_secret().trim()).is_err()
            || !hash.expose_secret().trim().starts_with("$argon2"))
    {
        // Never echo the value: it is a secret.
        r.problem(
            "web.password_hash",
            "is not an Argon2 hash in PHC form ($argon2id$v=19$...); create one with \
                 `argon2` or any Argon2 tool",
        );
    }
    if username.is_some() != password_hash.is_some() && !r.has_problem_at("web.password_hash") {
        r.problem(
            "web.username",
            "set both web.username and web.password_hash (or web.password_hash_file), or neither",
        );
    }
    WebSettings {
        username,
        password_hash,
        secure_cookies: r.bool("web.secure_cookies", false),
        session_ttl_secs: r.uint("web.session_ttl_secs", 8 * 3600, 60, 30 * 24 * 3600),
        max_failed_logins: r.uint("web.max_failed_logins", 5, 1, 1000),
        max_failed_logins_per_address: r.uint("web.max_failed_logins_per_address", 20, 1, 10_000),
        max_failed_logins_per_user: r.uint("web.max_failed_logins_per_user", 100, 1, 100_000),
        max_concurrent_password_checks: usize::try_from(r.uint(
            "web.max_concurrent_password_checks",
            2,
            1,
            64,
        ))
        .unwrap_or(2),
    }
}

pub(super) fn read_api(r: &mut Reader<'_>) -> ApiSettings {
    let token = r.secret("api.token");
    if token.as_ref().is_some_and(|t| t.expose_secret().len() < 16) {
        r.problem(
            "api.token",
            "is shorter than 16 characters; use a long random token",
        );
    }
    ApiSettings { token }
}

#[cfg(test)]
mod tests {
    fn problems(yaml: &str) -> Vec<String> {
        match super::super::from_sources(yaml, []) {
            Ok(_) => Vec::new(),
            Err(e) => e.problems.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn a_password_hash_that_is_not_argon2_phc_is_refused_without_echoing_it() {
        let found = problems("web: {username: ops, password_hash: hunter2-plaintext}");
        assert!(
            found
                .iter()
                .any(|p| p.starts_with("web.password_hash: is not an Argon2 hash")),
            "{found:?}"
        );
        assert!(!found.iter().any(|p| p.contains("hunter2")), "{found:?}");
    }

    #[test]
    fn username_without_hash_and_short_api_token_are_problems() {
        let found = problems("web: {username: ops}\napi: {token: short}");
        assert!(
            found
                .iter()
                .any(|p| p.starts_with("web.username: set both")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|p| p.starts_with("api.token: is shorter")),
            "{found:?}"
        );
    }
}
