//! The module registry protocol (Terraform's `modules.v1`): service discovery at
//! `/.well-known/terraform.json`, the module's version list, and the download request, whose
//! `X-Terraform-Get` header (or `location` field) names the source to fetch. Only registries
//! the server lists are asked; no redirect is followed; every answer is size-bounded.

use std::time::Duration;

use reqwest::StatusCode;
use serde::Deserialize;

use super::Refusal;
use super::source::RegistrySource;
use super::version::{Constraint, Version, newest};

/// Largest registry answer read.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// A registry module resolved to one version and the source address its download names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub(crate) version: String,
    /// The `X-Terraform-Get` value, made absolute against the download URL when relative.
    pub(crate) location: String,
}

/// A registry client: one HTTP client, plain-text HTTP only when the server allows it.
#[derive(Debug, Clone)]
pub(crate) struct Registry {
    http: reqwest::Client,
    plaintext: bool,
}

impl Registry {
    pub(crate) fn new(timeout: Duration, plaintext: bool) -> Result<Self, String> {
        // reqwest is built without a default crypto provider; use ring, as the rest of atoll.
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("atoll/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| e.without_url().to_string())?;
        Ok(Self { http, plaintext })
    }

    /// The version of `module` that `constraint` allows, newest first, and where to fetch it.
    pub(crate) async fn resolve(
        &self,
        module: &RegistrySource,
        written: Option<&str>,
    ) -> Result<Resolved, Refusal> {
        let constraint = match written {
            Some(c) => Some(Constraint::parse(c).ok_or_else(|| Refusal::new("Invalid version constraint", format!("The version constraint {c:?} of module {} is not valid: write versions joined by commas, each after one of = != > < >= <= ~>, like \"~> 1.2\".", module.path())))?),
            None => None,
        };
        let base = self.discover(&module.host).await?;
        let versions_url = format!("{base}{}/versions", module.path());
        let listed: VersionList = self.get_json(&module.host, &versions_url).await?;
        let versions: Vec<Version> = listed
            .modules
            .iter()
            .flat_map(|m| &m.versions)
            .filter_map(|v| Version::parse(&v.version))
            .collect();
        let Some(chosen) = newest(&versions, constraint.as_ref()) else {
            let mut known: Vec<&Version> = versions.iter().collect();
            known.sort();
            let shown: Vec<&str> = known.iter().rev().take(10).map(|v| v.as_str()).collect();
            return Err(Refusal::new(
                "Module version requirements have changed",
                format!(
                    "No version of module {} on {} matches the constraint {}; available: {}.",
                    module.path(),
                    module.host,
                    written.map_or_else(
                        || "(none: the newest release)".to_owned(),
                        |c| format!("{c:?}")
                    ),
                    if shown.is_empty() {
                        "none".to_owned()
                    } else {
                        shown.join(", ")
                    }
                ),
            ));
        };
        let download_url = format!("{base}{}/{}/download", module.path(), chosen.as_str());
        let location = self.download_location(&module.host, &download_url).await?;
        Ok(Resolved {
            version: chosen.as_str().to_owned(),
            location,
        })
    }

    /// The `modules.v1` base URL of `host`, ending with `/`.
    async fn discover(&self, host: &str) -> Result<String, Refusal> {
        let url = format!("{}://{host}/.well-known/terraform.json", self.scheme());
        let services: serde_json::Value = self.get_json(host, &url).await?;
        let Some(modules) = services.get("modules.v1").and_then(|v| v.as_str()) else {
            return Err(unreachable(
                host,
                "its service discovery document (/.well-known/terraform.json) names no modules.v1 service",
            ));
        };
        let joined = join(&url, modules)
            .ok_or_else(|| unreachable(host, "its modules.v1 service address is not a URL"))?;
        let authority = match (joined.host_str(), joined.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_owned(),
            (None, _) => String::new(),
        };
        if joined.scheme() != self.scheme() || !authority.eq_ignore_ascii_case(host) {
            return Err(unreachable(
                host,
                "its modules.v1 service is on another host, which atoll does not follow",
            ));
        }
        let mut base = joined.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        Ok(base)
    }

    async fn download_location(&self, host: &str, url: &str) -> Result<String, Refusal> {
        let response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| unreachable(host, &e.without_url().to_string()))?;
        let status = response.status();
        let header = response
            .headers()
            .get("x-terraform-get")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let location = match (status, header) {
            (StatusCode::NO_CONTENT | StatusCode::OK, Some(h)) => h,
            (StatusCode::OK, None) => {
                let body = read_bounded(response)
                    .await
                    .map_err(|e| unreachable(host, &e))?;
                let answer: DownloadAnswer = serde_json::from_slice(&body).map_err(|_| {
                    unreachable(
                        host,
                        "its download answer has neither an X-Terraform-Get header nor a location",
                    )
                })?;
                answer.location
            }
            (s, _) => {
                return Err(unreachable(
                    host,
                    &format!("its download request answered HTTP {}", s.as_u16()),
                ));
            }
        };
        // Only a path (`/x`, `./x`, `../x`) is relative to the download URL, as in Terraform.
        if !(location.starts_with('/') || location.starts_with("./") || location.starts_with("../"))
        {
            return Ok(location);
        }
        join(url, &location)
            .map(|u| u.to_string())
            .ok_or_else(|| unreachable(host, "its download location is not a source address"))
    }

    async fn get_json<T: for<'de> Deserialize<'de>>(
        &self,
        host: &str,
        url: &str,
    ) -> Result<T, Refusal> {
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| unreachable(host, &e.without_url().to_string()))?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            return Err(Refusal::new(
                "Module not found",
                format!(
                    "The registry {host} has no such module or service ({}): check the source address.",
                    path_of(url)
                ),
            ));
        }
        if !status.is_success() {
            return Err(unreachable(
                host,
                &format!("it answered HTTP {} for {}", status.as_u16(), path_of(url)),
            ));
        }
        let body = read_bounded(response)
            .await
            .map_err(|e| unreachable(host, &e))?;
        serde_json::from_slice(&body).map_err(|_| {
            unreachable(
                host,
                &format!(
                    "its answer for {} is not the registry protocol's JSON",
                    path_of(url)
                ),
            )
        })
    }

    fn scheme(&self) -> &'static str {
        if self.plaintext { "http" } else { "https" }
    }
}

async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| e.without_url().to_string())?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(format!(
                "its answer is larger than {MAX_ANSWER_BYTES} bytes"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A location as a diagnostic may quote it: no user name or password, no query but `ref`
/// (a registry may answer a signed or tokened address).
pub(crate) fn shown(location: &str) -> String {
    let (main, query) = location.split_once('?').unwrap_or((location, ""));
    let main = match main.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}/{path}")
        }
        None => main.to_owned(),
    };
    let kept: Vec<&str> = query.split('&').filter(|p| p.starts_with("ref=")).collect();
    if kept.is_empty() {
        main
    } else {
        format!("{main}?{}", kept.join("&"))
    }
}

fn join(base: &str, reference: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(base).ok()?.join(reference).ok()
}

fn path_of(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.path().to_owned())
}

fn unreachable(host: &str, why: &str) -> Refusal {
    Refusal::new(
        "Failed to query module registry",
        format!(
            "atoll could not use the module registry {host}: {why}. Check that the registry is up and that the server's modules.registries lists it."
        ),
    )
}

#[derive(Deserialize)]
struct VersionList {
    modules: Vec<ModuleVersions>,
}

#[derive(Deserialize)]
struct ModuleVersions {
    versions: Vec<ListedVersion>,
}

#[derive(Deserialize)]
struct ListedVersion {
    version: String,
}

#[derive(Deserialize)]
struct DownloadAnswer {
    location: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_is_quoted_without_credentials_or_tokens() {
        assert_eq!(
            shown("https://user:s3cret@example.com/m.tar.gz?token=abc&ref=v1"),
            "https://example.com/m.tar.gz?ref=v1"
        );
        assert_eq!(
            shown("git::https://example.com/r.git?ref=v1"),
            "git::https://example.com/r.git?ref=v1"
        );
    }
}
