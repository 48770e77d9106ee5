//! PVE's error responses: the message in the HTTP status line, `{"data":null,"message":...}`
//! bodies (libpve-http-server >= 5.2), and `errors` per parameter for validation failures.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// An error the simulated API answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) status: u16,
    pub(crate) message: String,
    pub(crate) errors: Option<BTreeMap<String, String>>,
}

impl ApiError {
    /// A plain `die "msg\n"` in a PVE handler: HTTP 500 with the message.
    pub(crate) fn die(message: impl Into<String>) -> Self {
        Self {
            status: 500,
            message: message.into(),
            errors: None,
        }
    }

    /// `raise_param_exc`: HTTP 400 `Parameter verification failed.` with per-key errors.
    pub(crate) fn params(errors: BTreeMap<String, String>) -> Self {
        Self {
            status: 400,
            message: "Parameter verification failed.".to_owned(),
            errors: Some(errors),
        }
    }

    /// One parameter error.
    pub(crate) fn param(key: &str, message: impl Into<String>) -> Self {
        Self::params(BTreeMap::from([(key.to_owned(), message.into())]))
    }

    pub(crate) fn unauthorized(message: &str) -> Self {
        Self {
            status: 401,
            message: message.to_owned(),
            errors: None,
        }
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: 403,
            message: message.into(),
            errors: None,
        }
    }

    pub(crate) fn not_implemented(method: &str, path: &str) -> Self {
        Self {
            status: 501,
            message: format!("Method '{method} {path}' not implemented"),
            errors: None,
        }
    }

    /// A pseudo-status from pveproxy when it cannot reach the target node (595/596).
    pub(crate) fn proxy(status: u16, message: &str) -> Self {
        Self {
            status,
            message: message.to_owned(),
            errors: None,
        }
    }
}

/// The first line of a message, as PVE puts it in the status line.
fn status_line(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    first.chars().filter(|c| !c.is_control()).collect()
}

impl ApiError {
    /// The response; `legacy` leaves out `message` (libpve-http-server before 5.2).
    pub(crate) fn render(&self, legacy: bool) -> Response {
        let mut body = serde_json::json!({ "data": null });
        if !legacy {
            body["message"] = serde_json::json!(format!("{}\n", self.message));
        }
        if let Some(errors) = &self.errors {
            body["errors"] = serde_json::json!(errors);
        }
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(body)).into_response();
        if let Ok(reason) =
            hyper::ext::ReasonPhrase::try_from(status_line(&self.message).into_bytes())
        {
            response.extensions_mut().insert(reason);
        }
        response.extensions_mut().insert(self.clone());
        response
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.render(false)
    }
}

/// Result type of the simulator's handlers and engines.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_line_is_first_line_of_message() {
        assert_eq!(
            status_line("CT is locked (create)\nmore"),
            "CT is locked (create)"
        );
    }
}
