//! Dashboard login: server-side sessions kept in the store (so a restart or another replica
//! keeps them; only the SHA-256 of the token is stored), per-session CSRF tokens, and the login
//! itself: the failed-login limits ([`super::login_limits`], counted before any hashing), then
//! the password check ([`super::password`], bounded, and skipped for a name that is not the
//! configured one).

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, header};
use model::SharedClock;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::login_limits::{Limiter, Throttled};
use super::password::PasswordCheck;
use crate::config::WebSettings;
use crate::http::ClientAddr;
use crate::store::{Store, StoredSession};

pub(crate) const SESSION_COOKIE: &str = "atoll_session";
pub(crate) const LOGIN_COOKIE: &str = "atoll_login";

/// A logged-in user.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) user: String,
    pub(crate) csrf: String,
}

/// Why a login was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoginError {
    /// Wrong username or password (never says which).
    Invalid,
    /// Too many failures from this address (for this name, or for any); try again later.
    Throttled,
    /// Every password-check slot stayed taken; try again in a few seconds.
    Busy,
    /// `web.username`/`web.password_hash` are not set.
    Disabled,
    /// The store did not take the new session; try again later.
    Unavailable,
}

#[derive(Debug)]
pub(crate) struct Auth {
    username: Option<String>,
    password: Option<PasswordCheck>,
    ttl: Duration,
    secure_always: bool,
    store: Arc<dyn Store>,
    limiter: Limiter,
    clock: SharedClock,
}

/// What the store keeps instead of a session token: its SHA-256, hex.
pub(crate) fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Only tokens this module could have issued are looked up (64 hex digits).
fn plausible(token: &str) -> bool {
    token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Whether two names are equal, in time that depends on neither (not even their lengths).
fn same_name(a: &str, b: &str) -> bool {
    bool::from(Sha256::digest(a.as_bytes()).ct_eq(&Sha256::digest(b.as_bytes())))
}

/// The value of cookie `name` in the request.
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

impl Auth {
    pub(crate) fn new(settings: &WebSettings, store: Arc<dyn Store>, clock: SharedClock) -> Self {
        Self {
            username: settings.username.clone(),
            password: settings
                .password_hash
                .as_ref()
                .map(|h| PasswordCheck::new(h, settings.max_concurrent_password_checks)),
            ttl: Duration::from_secs(settings.session_ttl_secs),
            secure_always: settings.secure_cookies,
            store,
            limiter: Limiter::new(settings, clock.clone()),
            clock,
        }
    }

    /// A `Set-Cookie` value: `HttpOnly`, `SameSite=Strict`, `Path=/`, `Secure` under TLS.
    pub(crate) fn set_cookie(
        &self,
        headers: &HeaderMap,
        name: &str,
        value: &str,
        max_age: u64,
    ) -> String {
        let tls = self.secure_always
            || headers
                .get("x-forwarded-proto")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|p| p.eq_ignore_ascii_case("https"));
        let secure = if tls { "; Secure" } else { "" };
        format!("{name}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
    }

    pub(crate) fn ttl_secs(&self) -> u64 {
        self.ttl.as_secs()
    }

    /// The live session named by the request's cookie. A store error counts as no session
    /// (the user is sent to the login, which says if the store is down).
    pub(crate) async fn session(&self, headers: &HeaderMap) -> Option<Session> {
        let token = cookie(headers, SESSION_COOKIE).filter(|t| plausible(t))?;
        match self
            .store
            .sessions()
            .session_get(&token_hash(token), self.clock.now())
            .await
        {
            // A session of a user the configuration no longer names (renamed, or logins turned
            // off) ends here, even though it is still stored.
            Ok(found) => found
                .filter(|s| self.username.as_deref() == Some(s.username.as_str()))
                .map(|s| Session {
                    user: s.username,
                    csrf: s.csrf,
                }),
            Err(e) => {
                tracing::warn!(error = %e, "dashboard: reading the session failed");
                None
            }
        }
    }

    /// Deletes the request's session from the store.
    pub(crate) async fn logout(&self, headers: &HeaderMap) {
        let Some(token) = cookie(headers, SESSION_COOKIE).filter(|t| plausible(t)) else {
            return;
        };
        if let Err(e) = self
            .store
            .sessions()
            .session_delete(&token_hash(token))
            .await
        {
            tracing::warn!(error = %e, "dashboard: deleting the session at logout failed");
        }
    }

    /// Argon2 checks run since start (for `/metrics`).
    pub(crate) fn password_checks(&self) -> u64 {
        self.password.as_ref().map_or(0, PasswordCheck::checks)
    }

    /// Checks the credentials of an attempt from `client`; on success returns a new session
    /// token. The attempt is counted against the limits before anything is checked.
    pub(crate) async fn login(
        &self,
        user: &str,
        password: &str,
        client: ClientAddr,
    ) -> Result<String, LoginError> {
        let (Some(expected_user), Some(check)) = (&self.username, &self.password) else {
            return Err(LoginError::Disabled);
        };
        let attempt = self
            .limiter
            .reserve(client.limit_key(), user)
            .map_err(|which| {
                let why = match which {
                    Throttled::User => "this user name from this address",
                    Throttled::Address => "this address",
                };
                tracing::info!(%client, "dashboard: login refused: too many failures for {why}");
                LoginError::Throttled
            })?;
        let matched = if same_name(user, expected_user) {
            match check.verify(password).await {
                Ok(matched) => matched,
                Err(_busy) => {
                    attempt.unchecked();
                    return Err(LoginError::Busy);
                }
            }
        } else {
            check.imitate().await;
            false
        };
        if !matched {
            tracing::info!(%client, "dashboard: failed login");
            return Err(LoginError::Invalid);
        }
        attempt.succeeded();
        self.open_session(expected_user).await
    }

    async fn open_session(&self, user: &str) -> Result<String, LoginError> {
        let token = random_token();
        let now = self.clock.now();
        let sessions = self.store.sessions();
        if let Err(e) = sessions.session_purge(now).await {
            tracing::warn!(error = %e, "dashboard: purging expired sessions failed");
        }
        let stored = StoredSession {
            token_hash: token_hash(&token),
            username: user.to_owned(),
            csrf: random_token(),
            expires_at: now + self.ttl,
        };
        sessions.session_create(&stored).await.map_err(|e| {
            tracing::warn!(error = %e, "dashboard: storing the new session failed");
            LoginError::Unavailable
        })?;
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::super::password::hash_password;
    use super::*;
    use argon2::password_hash::SaltString;
    use argon2::{Argon2, PasswordHasher};
    use secrecy::SecretString;

    const HERE: ClientAddr = ClientAddr(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));

    fn settings(password: &str) -> WebSettings {
        let salt = SaltString::encode_b64(b"atoll-test-salt!").unwrap_or_else(|e| panic!("{e}"));
        let hash = Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_string();
        WebSettings {
            username: Some("ops".to_owned()),
            password_hash: Some(SecretString::from(hash)),
            secure_cookies: false,
            session_ttl_secs: 60,
            max_failed_logins: 3,
            max_failed_logins_per_address: 20,
            max_failed_logins_per_user: 100,
            max_concurrent_password_checks: 2,
        }
    }

    fn with_cookie(id: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            format!("x=1; {SESSION_COOKIE}={id}")
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        );
        h
    }

    async fn auth(settings: &WebSettings) -> (Auth, tempfile::TempDir) {
        auth_at(settings, model::SystemClock::shared()).await
    }

    async fn auth_at(settings: &WebSettings, clock: SharedClock) -> (Auth, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let url = format!("sqlite://{}", dir.path().join("atoll.db").display());
        let store = crate::store::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        (Auth::new(settings, store, clock), dir)
    }

    #[tokio::test]
    async fn a_session_ends_when_its_ttl_has_passed() {
        let hand = model::ManualClock::new();
        let (auth, _dir) = auth_at(&settings("s3cret"), hand.shared()).await;
        let token = auth
            .login("ops", "s3cret", HERE)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        hand.advance(Duration::from_secs(59));
        assert!(auth.session(&with_cookie(&token)).await.is_some());
        hand.advance(Duration::from_secs(1));
        assert!(auth.session(&with_cookie(&token)).await.is_none());
    }

    #[tokio::test]
    async fn right_password_opens_a_session_and_wrong_one_does_not() {
        let (auth, _dir) = auth(&settings("s3cret")).await;
        assert_eq!(
            auth.login("ops", "nope", HERE).await,
            Err(LoginError::Invalid)
        );
        assert_eq!(
            auth.login("root", "s3cret", HERE).await,
            Err(LoginError::Invalid)
        );
        let id = auth
            .login("ops", "s3cret", HERE)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        let session = auth.session(&with_cookie(&id)).await.map(|s| s.user);
        assert_eq!(session.as_deref(), Some("ops"));
        assert!(auth.session(&with_cookie("forged")).await.is_none());
        assert!(auth.session(&with_cookie(&"0".repeat(64))).await.is_none());
    }

    #[tokio::test]
    async fn the_store_keeps_only_the_hash_and_logout_deletes_it() {
        let (auth, _dir) = auth(&settings("s3cret")).await;
        let token = auth
            .login("ops", "s3cret", HERE)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        let now = time::OffsetDateTime::now_utc();
        let store = auth.store.sessions();
        let by_token = store.session_get(&token, now).await;
        assert!(matches!(by_token, Ok(None)), "{by_token:?}");
        let stored = store
            .session_get(&token_hash(&token), now)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("no stored session"));
        assert_eq!(stored.token_hash, token_hash(&token));
        auth.logout(&with_cookie(&token)).await;
        assert!(auth.session(&with_cookie(&token)).await.is_none());
        let gone = store.session_get(&token_hash(&token), now).await;
        assert!(matches!(gone, Ok(None)), "{gone:?}");
    }

    #[tokio::test]
    async fn repeated_failures_throttle_even_the_right_password() {
        let (auth, _dir) = auth(&settings("s3cret")).await;
        for _ in 0..3 {
            assert_eq!(
                auth.login("ops", "bad", HERE).await,
                Err(LoginError::Invalid)
            );
        }
        assert_eq!(
            auth.login("ops", "s3cret", HERE).await,
            Err(LoginError::Throttled)
        );
    }

    #[tokio::test]
    async fn login_is_refused_when_no_credentials_are_configured() {
        let mut s = settings("x");
        s.password_hash = None;
        let (auth, _dir) = auth(&s).await;
        assert_eq!(
            auth.login("ops", "x", HERE).await,
            Err(LoginError::Disabled)
        );
    }

    #[tokio::test]
    async fn hash_password_output_verifies_at_login() {
        let hash = hash_password("pw").unwrap_or_else(|e| panic!("{e}"));
        assert!(hash.starts_with("$argon2id$"));
        let mut s = settings("other");
        s.password_hash = Some(SecretString::from(hash));
        let (auth, _dir) = auth(&s).await;
        assert!(auth.login("ops", "pw", HERE).await.is_ok());
    }

    #[tokio::test]
    async fn cookies_are_http_only_strict_and_secure_behind_tls() {
        let (auth, _dir) = auth(&settings("x")).await;
        let plain = auth.set_cookie(&HeaderMap::new(), SESSION_COOKIE, "v", 60);
        assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Strict"));
        assert!(!plain.contains("Secure"));
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-proto",
            "https".parse().unwrap_or_else(|e| panic!("{e}")),
        );
        assert!(
            auth.set_cookie(&h, SESSION_COOKIE, "v", 60)
                .ends_with("; Secure")
        );
    }
}
