//! Shared response handling for both API clients: HTTP status to [`ForgeError`], rate-limit
//! headers, and `Link: rel="next"` detection. Forge bodies are quoted only through their
//! `message` field, shortened; requests never carry the token in anything that is quoted.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, StatusCode};

use super::api::ForgeError;

/// Longest part of a forge's error message quoted in ours.
const MAX_QUOTED: usize = 300;

/// Waiting time when a rate limit gives no hint.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Waits before retrying a GET that failed transiently (then the error is returned).
pub(crate) const GET_RETRY_DELAYS: [Duration; 2] =
    [Duration::from_millis(100), Duration::from_millis(400)];

/// Maps a non-success response to the error the caller can act on.
pub(crate) fn classify(
    op: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> ForgeError {
    let op = op.to_owned();
    let message = quoted_message(status, body);
    match status.as_u16() {
        429 => ForgeError::RateLimited {
            op,
            retry_after: retry_after(headers),
        },
        403 if is_rate_limited(headers, &message) => ForgeError::RateLimited {
            op,
            retry_after: retry_after(headers),
        },
        401 | 403 => ForgeError::Unauthorized {
            op,
            detail: format!("HTTP {}: {message}", status.as_u16()),
        },
        404 | 410 => ForgeError::NotFound { op },
        408 | 500..=599 => ForgeError::Transient {
            op,
            detail: format!("HTTP {}: {message}", status.as_u16()),
        },
        _ => ForgeError::Rejected {
            op,
            message: format!("HTTP {}: {message}", status.as_u16()),
        },
    }
}

/// A transport failure (connect, timeout, broken body): always worth a later retry.
pub(crate) fn transport(op: &str, detail: impl std::fmt::Display) -> ForgeError {
    ForgeError::Transient {
        op: op.to_owned(),
        detail: detail.to_string(),
    }
}

/// A 2xx response whose body is not what the API documents.
pub(crate) fn bad_body(op: &str, err: &serde_json::Error) -> ForgeError {
    ForgeError::Rejected {
        op: op.to_owned(),
        message: format!("unexpected response body: {err}"),
    }
}

fn quoted_message(status: StatusCode, body: &[u8]) -> String {
    let from_json = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned));
    let text =
        from_json.unwrap_or_else(|| status.canonical_reason().unwrap_or("no message").to_owned());
    let mut cut: String = text
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_QUOTED)
        .collect();
    if text.chars().count() > MAX_QUOTED {
        cut.push('…');
    }
    cut
}

fn is_rate_limited(headers: &HeaderMap, message: &str) -> bool {
    let exhausted = headers
        .get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == "0");
    exhausted
        || headers.contains_key("retry-after")
        || message.to_ascii_lowercase().contains("rate limit")
}

/// `Retry-After` seconds, else `X-RateLimit-Reset` (epoch seconds) minus now, else a minute.
fn retry_after(headers: &HeaderMap) -> Duration {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    if let Some(secs) = header("retry-after") {
        return Duration::from_secs(secs);
    }
    if let Some(reset) = header("x-ratelimit-reset") {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        return Duration::from_secs(reset.saturating_sub(now).max(1));
    }
    DEFAULT_RETRY_AFTER
}

/// Whether a `Link` header announces a next page.
pub(crate) fn has_next_page(headers: &HeaderMap) -> bool {
    headers
        .get_all(http::header::LINK)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|link| {
            link.split(';')
                .skip(1)
                .any(|param| matches!(param.trim(), "rel=\"next\"" | "rel=next"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().expect("header value"));
        }
        h
    }

    #[test]
    fn rate_limit_responses_carry_the_wait() {
        let e = classify(
            "op",
            StatusCode::TOO_MANY_REQUESTS,
            &headers(&[("retry-after", "7")]),
            b"",
        );
        assert_eq!(
            e,
            ForgeError::RateLimited {
                op: "op".into(),
                retry_after: Duration::from_secs(7)
            }
        );
        let body = br#"{"message":"API rate limit exceeded for installation"}"#;
        let e = classify("op", StatusCode::FORBIDDEN, &headers(&[]), body);
        assert!(
            matches!(e, ForgeError::RateLimited { retry_after, .. } if retry_after == DEFAULT_RETRY_AFTER)
        );
    }

    #[test]
    fn statuses_map_to_what_the_caller_can_do() {
        let h = headers(&[]);
        assert!(matches!(
            classify("op", StatusCode::UNAUTHORIZED, &h, b""),
            ForgeError::Unauthorized { .. }
        ));
        assert!(matches!(
            classify("op", StatusCode::FORBIDDEN, &h, b"{}"),
            ForgeError::Unauthorized { .. }
        ));
        assert!(matches!(
            classify("op", StatusCode::NOT_FOUND, &h, b""),
            ForgeError::NotFound { .. }
        ));
        assert!(matches!(
            classify("op", StatusCode::BAD_GATEWAY, &h, b""),
            ForgeError::Transient { .. }
        ));
        let e = classify(
            "op",
            StatusCode::UNPROCESSABLE_ENTITY,
            &h,
            br#"{"message":"Body is too long"}"#,
        );
        assert_eq!(
            e.to_string(),
            "op: the forge rejected the request: HTTP 422: Body is too long"
        );
    }

    #[test]
    fn next_page_is_read_from_the_link_header() {
        let h = headers(&[(
            "link",
            "<https://x/y?page=3>; rel=\"next\", <https://x/y?page=9>; rel=\"last\"",
        )]);
        assert!(has_next_page(&h));
        let h = headers(&[(
            "link",
            "<https://x/y?page=1>; rel=\"first\", <https://x/y?page=2>; rel=\"prev\"",
        )]);
        assert!(!has_next_page(&h));
        assert!(!has_next_page(&headers(&[])));
    }
}
