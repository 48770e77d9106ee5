//! Headers every response carries, whatever route or error produced it: no MIME sniffing, and
//! no `Referer` sent to other sites (dashboard URLs name locks, jobs and pull requests).

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

const HEADERS: [(HeaderName, &str); 2] = [
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "same-origin"),
];

/// The same headers as raw HTTP/1 lines, for responses written without the router.
pub(super) const RAW_HEADERS: &str =
    "x-content-type-options: nosniff\r\nreferrer-policy: same-origin\r\n";

/// Middleware (outermost): adds the headers to the response unless a handler chose its own.
pub(super) async fn add(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    for (name, value) in HEADERS {
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
    response
}
