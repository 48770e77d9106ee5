//! Building the octocrab clients for GitHub: settings, personal token or GitHub App auth
//! (octocrab mints and caches installation tokens), the GraphQL base on Enterprise, and
//! octocrab's own errors mapped to [`ForgeError`].

use std::time::Duration;

use octocrab::Octocrab;
use octocrab::models::{AppId, InstallationId};
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

use super::api::ForgeError;
use super::http_errors::{classify, transport};

/// How atoll authenticates to GitHub.
#[derive(Debug, Clone)]
pub enum GithubAuth {
    /// A personal access token (classic or fine-grained).
    Token(SecretString),
    /// A GitHub App installation.
    App {
        app_id: u64,
        /// The App's RSA private key (PEM).
        private_key_pem: SecretString,
        installation_id: u64,
    },
}

/// Settings of the GitHub client.
#[derive(Debug, Clone)]
pub struct GithubApiSettings {
    /// REST base: `https://api.github.com`, or `https://HOST/api/v3` for GitHub Enterprise.
    pub api_url: String,
    pub auth: GithubAuth,
    pub timeout: Duration,
}

/// Why the client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GithubSetupError {
    #[error(
        "github api url {url:?} is not a valid URL; use https://api.github.com or https://HOST/api/v3"
    )]
    BadUrl { url: String },
    #[error(
        "github app private key is not an RSA PEM key ({0}); download the .pem from the App's settings"
    )]
    BadKey(String),
    #[error("building the github client failed: {0}")]
    Client(String),
}

pub(super) fn graphql_base(rest_base: &str) -> String {
    match rest_base.strip_suffix("/v3") {
        Some(enterprise) if enterprise.ends_with("/api") => enterprise.to_owned(),
        _ => rest_base.to_owned(),
    }
}

pub(super) fn build(
    base: &str,
    settings: &GithubApiSettings,
) -> Result<Octocrab, GithubSetupError> {
    let bad_url = || GithubSetupError::BadUrl {
        url: settings.api_url.clone(),
    };
    let uri: http::Uri = base.parse().map_err(|_| bad_url())?;
    if uri.scheme().is_none() || uri.authority().is_none() {
        return Err(bad_url());
    }
    let builder = Octocrab::builder()
        .base_uri(uri)
        .map_err(|_| bad_url())?
        .set_connect_timeout(Some(settings.timeout))
        .set_read_timeout(Some(settings.timeout))
        .set_write_timeout(Some(settings.timeout));
    let client = |e: octocrab::Error| GithubSetupError::Client(describe(&e));
    match &settings.auth {
        GithubAuth::Token(token) => builder
            .personal_token(token.clone())
            .build()
            .map_err(client),
        GithubAuth::App {
            app_id,
            private_key_pem,
            installation_id,
        } => {
            let key =
                octocrab::EncodingKey::from_rsa_pem(private_key_pem.expose_secret().as_bytes())
                    .map_err(|e| GithubSetupError::BadKey(e.to_string()))?;
            let app = builder.app(AppId(*app_id), key).build().map_err(client)?;
            app.installation(InstallationId(*installation_id))
                .map_err(client)
        }
    }
}

/// An error octocrab raised itself: a GitHub error response (e.g. minting an installation
/// token was refused) keeps its status; anything else is a transport failure.
pub(super) fn octo_error(op: &str, e: &octocrab::Error) -> ForgeError {
    match e {
        octocrab::Error::GitHub { source, .. } => {
            let body = json!({ "message": source.message }).to_string();
            let headers = source.headers.clone().unwrap_or_default();
            classify(op, source.status_code, &headers, body.as_bytes())
        }
        other => transport(op, describe(other)),
    }
}

/// An octocrab error without its backtrace or debug internals.
pub(super) fn describe(e: &octocrab::Error) -> String {
    let text = e.to_string();
    text.lines()
        .next()
        .unwrap_or("request failed")
        .chars()
        .take(300)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enterprise_graphql_lives_beside_api_v3() {
        assert_eq!(
            graphql_base("https://ghe.example/api/v3"),
            "https://ghe.example/api"
        );
        assert_eq!(
            graphql_base("https://api.github.com"),
            "https://api.github.com"
        );
        assert_eq!(
            graphql_base("http://127.0.0.1:9/v3"),
            "http://127.0.0.1:9/v3"
        );
    }
}
