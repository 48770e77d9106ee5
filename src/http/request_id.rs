//! Request ids: every response carries `x-request-id`, taken from the request when it is a sane
//! token (so a proxy's id survives), generated otherwise. The id is on the request span (so it
//! is on every log line of the request) and readable by handlers through [`current`], so the
//! errors users see can name it.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use uuid::Uuid;

pub(super) const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest id accepted from a client.
const MAX_LEN: usize = 128;

tokio::task_local! {
    static CURRENT: String;
}

/// The id of the request being handled, if called from inside one.
pub fn current() -> Option<String> {
    CURRENT.try_with(Clone::clone).ok()
}

/// A client's id is kept only if it is 1 to 128 characters of `A-Z a-z 0-9 - _ . :`.
pub(super) fn sane(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// Middleware (outermost): settles the id, puts it on the request for the inner layers (the
/// trace span reads it from there), runs the request with it and copies it to the response.
pub(super) async fn assign(mut req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| sane(v))
        .map(str::to_owned);
    let id = given.unwrap_or_else(|| Uuid::new_v4().to_string());
    // `sane` ids and UUIDs are valid header values.
    let value = HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("invalid"));
    req.headers_mut().insert(REQUEST_ID, value.clone());
    let mut response = CURRENT.scope(id, next.run(req)).await;
    response.headers_mut().insert(REQUEST_ID, value);
    response
}

#[cfg(test)]
mod tests {
    use super::sane;

    #[test]
    fn only_short_plain_tokens_are_kept() {
        assert!(sane("abc-123_x.y:z"));
        assert!(sane(&"a".repeat(128)));
        assert!(!sane(""));
        assert!(!sane(&"a".repeat(129)));
        assert!(!sane("a b"));
        assert!(!sane("x\"><script>"));
        assert!(!sane("ä"));
    }
}
