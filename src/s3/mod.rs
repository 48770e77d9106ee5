//! Reading one object from an S3-compatible service (AWS S3, Garage, MinIO, Ceph RGW): what
//! `atoll state import-terraform --from-backend` needs to read Terraform's state where its
//! `backend "s3"` keeps it. GetObject only, signed with SigV4 ([`sigv4`]), path-style or
//! virtual-host style, the body bounded, every failure named with S3's own error code and
//! message and never with a credential. [`backend`] turns a project's backend block and the
//! server's `terraform_state.s3` settings into the one object to read.

pub mod backend;
pub mod sigv4;

use std::time::Duration;

use secrecy::SecretString;

/// The object to read, resolved: the endpoint is one the settings allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub endpoint: reqwest::Url,
    pub bucket: String,
    pub key: String,
    pub region: String,
    pub path_style: bool,
}

impl Location {
    /// The request URL and the `Host` header as signed (port only when not the default).
    pub fn url(&self) -> Result<(reqwest::Url, String), S3Error> {
        let base = self.endpoint.path().trim_end_matches('/');
        let key = sigv4::uri_encode(&self.key, true);
        let mut url = self.endpoint.clone();
        let path = if self.path_style {
            format!("{base}/{}/{key}", sigv4::uri_encode(&self.bucket, false))
        } else {
            let host = self.endpoint.host_str().unwrap_or_default();
            url.set_host(Some(&format!("{}.{host}", self.bucket)))
                .map_err(|e| S3Error::Address(format!("bucket {:?}: {e}", self.bucket)))?;
            format!("{base}/{key}")
        };
        url.set_path(&path);
        url.set_query(None);
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        Ok((url, host))
    }

    /// `s3://bucket/key at endpoint`, for messages.
    pub fn describe(&self) -> String {
        format!("s3://{}/{} at {}", self.bucket, self.key, self.endpoint)
    }
}

/// The key pair requests are signed with (from the server's settings, never a repository).
#[derive(Clone)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: SecretString,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"[redacted]")
            .finish()
    }
}

/// Why the object could not be read.
#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    #[error("cannot address the object: {0}")]
    Address(String),
    #[error("cannot reach {what}: {detail}; check terraform_state.s3.endpoints and the network")]
    Unreachable { what: String, detail: String },
    #[error("S3 refused to read {what}: HTTP {status}, {code}: {message}{hint}")]
    Refused {
        what: String,
        status: u16,
        code: String,
        message: String,
        hint: &'static str,
    },
    #[error(
        "{what} is larger than {limit} bytes; atoll reads what `terraform state pull` prints for one project"
    )]
    TooLarge { what: String, limit: usize },
}

/// A parsed endpoint URL: http or https, a host, no query, no credentials.
pub fn endpoint_url(text: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(text.trim())
        .map_err(|e| format!("{text:?} is not a URL ({e}); write it as http(s)://HOST[:PORT]"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(format!(
            "{text:?} is not an http(s) URL with a host; write it as http(s)://HOST[:PORT]"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() {
        return Err(
            "an endpoint URL carries no credentials and no query; credentials go in \
             terraform_state.s3.access_key_id and secret_access_key"
                .to_owned(),
        );
    }
    Ok(url)
}

/// Whether `s` can be a signing region (AWS's `us-east-1`, Garage's `garage`, ...).
pub fn valid_region(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// How long one read may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const TIMEOUT: Duration = Duration::from_secs(120);

/// Reads the object at `at` (at most `limit` bytes), signed with `creds` (anonymous without).
pub async fn get_object(
    at: &Location,
    creds: Option<&Credentials>,
    limit: usize,
) -> Result<Vec<u8>, S3Error> {
    let what = at.describe();
    let (url, host) = at.url()?;
    let amz_date = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .map_err(|e| S3Error::Address(format!("formatting the date: {e}")))?;
    // reqwest is built without a default crypto provider; use ring, as the rest of atoll.
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .user_agent(concat!("atoll/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| S3Error::Unreachable {
            what: what.clone(),
            detail: e.to_string(),
        })?;
    let mut request = client
        .get(url.clone())
        .header("x-amz-date", &amz_date)
        .header("x-amz-content-sha256", sigv4::EMPTY_SHA256);
    if let Some(creds) = creds {
        let headers = [
            ("host", host.as_str()),
            ("x-amz-content-sha256", sigv4::EMPTY_SHA256),
            ("x-amz-date", amz_date.as_str()),
        ];
        let req = sigv4::Request {
            method: "GET",
            path: url.path(),
            query: &[],
            headers: &headers,
            payload_sha256: sigv4::EMPTY_SHA256,
        };
        let scope = sigv4::Scope {
            amz_date: &amz_date,
            region: &at.region,
            service: "s3",
        };
        let signer = sigv4::Credentials {
            access_key_id: &creds.access_key_id,
            secret_access_key: &creds.secret_access_key,
        };
        request = request.header("authorization", sigv4::authorization(&req, &signer, &scope));
    }
    let unreachable = |e: reqwest::Error| S3Error::Unreachable {
        what: what.clone(),
        detail: without_url(&e),
    };
    let mut response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    if status.is_success() && response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(S3Error::TooLarge { what, limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        if body.len() + chunk.len() > limit {
            if status.is_success() {
                return Err(S3Error::TooLarge { what, limit });
            }
            break;
        }
        body.extend_from_slice(&chunk);
    }
    if status.is_success() {
        return Ok(body);
    }
    let text = String::from_utf8_lossy(&body);
    let code = xml_text(&text, "Code").unwrap_or_else(|| {
        status
            .canonical_reason()
            .unwrap_or("no error code")
            .to_owned()
    });
    let message = xml_text(&text, "Message").unwrap_or_else(|| "(no message)".to_owned());
    let hint = match (status.as_u16(), code.as_str()) {
        (_, "NoSuchKey") => {
            "; check the backend block's key (and workspace_key_prefix and --workspace)"
        }
        (_, "NoSuchBucket") => "; check the backend block's bucket",
        (_, "SignatureDoesNotMatch") => "; check terraform_state.s3.secret_access_key (and region)",
        (_, "InvalidAccessKeyId") => "; check terraform_state.s3.access_key_id",
        (403, _) => "; check the key pair in terraform_state.s3 and that it may read this object",
        (301 | 307, _) => "; the bucket lives elsewhere: check the region and use_path_style",
        _ => "",
    };
    let message = if hint.is_empty() {
        message
    } else {
        message.trim_end_matches('.').to_owned()
    };
    Err(S3Error::Refused {
        what,
        status: status.as_u16(),
        code,
        message,
        hint,
    })
}

/// A transport error's text without the URL (which is in the message already).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text
            .replace(&format!(" ({url})"), "")
            .replace(url.as_str(), "the endpoint");
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// The text of the first `<tag>` element of S3's error XML, entities decoded, bounded.
fn xml_text(xml: &str, tag: &str) -> Option<String> {
    let start = xml.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = start + xml[start..].find(&format!("</{tag}>"))?;
    let text: String = xml[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
        .chars()
        .filter(|c| !c.is_control())
        .take(500)
        .collect();
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(endpoint: &str, path_style: bool) -> Location {
        Location {
            endpoint: endpoint_url(endpoint).expect("url"),
            bucket: "tfstate".to_owned(),
            key: "env:/prod/infra/terraform.tfstate".to_owned(),
            region: "us-east-1".to_owned(),
            path_style,
        }
    }

    #[test]
    fn path_style_and_virtual_host_style_address_the_object() {
        let (url, host) = at("http://127.0.0.1:9000", true).url().expect("url");
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9000/tfstate/env%3A/prod/infra/terraform.tfstate"
        );
        assert_eq!(host, "127.0.0.1:9000");
        let (url, host) = at("https://s3.eu-west-1.amazonaws.com/", false)
            .url()
            .expect("url");
        assert_eq!(
            url.as_str(),
            "https://tfstate.s3.eu-west-1.amazonaws.com/env%3A/prod/infra/terraform.tfstate"
        );
        assert_eq!(host, "tfstate.s3.eu-west-1.amazonaws.com");
    }

    #[test]
    fn s3_error_xml_gives_its_code_and_message() {
        let xml = "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The specified \
                   key does not exist.</Message><Key>a&amp;b</Key></Error>";
        assert_eq!(xml_text(xml, "Code").as_deref(), Some("NoSuchKey"));
        assert_eq!(
            xml_text(xml, "Message").as_deref(),
            Some("The specified key does not exist.")
        );
        assert_eq!(xml_text(xml, "Key").as_deref(), Some("a&b"));
        assert_eq!(xml_text("not xml", "Code"), None);
    }

    #[test]
    fn endpoints_are_http_urls_without_credentials() {
        assert!(endpoint_url("http://minio:9000").is_ok());
        assert!(endpoint_url("minio:9000").is_err());
        assert!(endpoint_url("ftp://minio").is_err());
        let err = endpoint_url("http://user:pw@minio:9000").expect_err("credentials");
        assert!(!err.contains("pw"), "{err}");
    }
}
