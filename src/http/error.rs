//! [`AppError`]: every error a route returns (the webhook, the API, the dashboard), by what the
//! client can do about it. It answers as a short JSON message; the dashboard's layer shows the
//! same message as its styled page (see `web::error_pages`). 5xx are logged once (an
//! `Unavailable` where it is made, with its details) and never expose internals.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::BodyError;
use crate::store::StoreError;
use crate::webhook::WebhookError;

/// What `Retry-After` says when the server is too busy to read a delivery (seconds).
const BUSY_RETRY_AFTER: &str = "5";

/// A refused or failed request. The text of every variant but [`AppError::Internal`] is shown
/// to the client, so it must say what to do and must not hold internals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    TooManyRequests(String),
    /// Try again later; `retry_after` (seconds) becomes the `Retry-After` header.
    #[error("{message}")]
    Unavailable {
        message: String,
        retry_after: Option<&'static str>,
    },
    /// A bug or a broken dependency: the text goes to the log only.
    #[error("{0}")]
    Internal(String),
}

/// What the dashboard's error page shows, carried on the JSON response as an extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownError {
    pub title: &'static str,
    pub message: String,
}

impl AppError {
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::Unavailable {
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The page title the dashboard shows above the message.
    fn title(&self) -> &'static str {
        match self {
            Self::BadRequest(_) | Self::TooLarge(_) | Self::UnsupportedMediaType(_) => {
                "Bad request"
            }
            Self::Unauthorized(_) => "Not signed in",
            Self::Forbidden(_) => "Not allowed",
            Self::NotFound(_) => "Not found",
            Self::Conflict(_) => "Conflict",
            Self::TooManyRequests(_) => "Too many attempts",
            Self::Unavailable { .. } => "Unavailable",
            Self::Internal(_) => "Internal error",
        }
    }

    /// The message for the client; internals stay in the log.
    fn message(&self) -> String {
        let status = self.status();
        match self {
            Self::Internal(_) => {
                tracing::error!(error = %self, "request failed");
                "internal error; the server log has details under this X-Request-Id".to_owned()
            }
            // Logged where it was made, with the details the client does not see.
            Self::Unavailable { .. } => self.to_string(),
            _ => {
                tracing::info!(status = status.as_u16(), error = %self, "request refused");
                self.to_string()
            }
        }
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(_) => {
                Self::NotFound("That item does not exist (any more).".to_owned())
            }
            StoreError::Conflict(_) => Self::Conflict(
                "Someone changed this at the same moment; reload and try again.".to_owned(),
            ),
            StoreError::Unavailable(_) | StoreError::Internal(_) | StoreError::Config(_) => {
                // The store's own words may name hosts or tables: they go to the log only.
                tracing::warn!(error = %e, "store error");
                Self::unavailable(
                    "the store did not answer; try again in a moment (details are in the server log)",
                )
            }
        }
    }
}

impl From<WebhookError> for AppError {
    fn from(e: WebhookError) -> Self {
        let text = e.to_string();
        match e {
            WebhookError::UnsupportedMediaType => Self::UnsupportedMediaType(text),
            WebhookError::UnknownForge
            | WebhookError::MissingHeader(_)
            | WebhookError::BadHeader(_)
            | WebhookError::InvalidPayload(_) => Self::BadRequest(text),
            WebhookError::ForgeDisabled(_) => Self::NotFound(text),
            WebhookError::MissingSignature | WebhookError::BadSignature => Self::Unauthorized(text),
            WebhookError::RepoNotAllowed(_) => Self::Forbidden(text),
            WebhookError::Store(_) => {
                tracing::error!(error = %text, "delivery not stored");
                Self::unavailable("the server could not store this delivery; redeliver it later")
            }
        }
    }
}

impl From<BodyError> for AppError {
    fn from(e: BodyError) -> Self {
        let text = e.to_string();
        match e {
            BodyError::TooLarge { .. } => Self::TooLarge(text),
            BodyError::Busy => {
                tracing::warn!("delivery refused: body budget full");
                Self::Unavailable {
                    message: text,
                    retry_after: Some(BUSY_RETRY_AFTER),
                }
            }
            BodyError::BadLength | BodyError::Read(_) => Self::BadRequest(text),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = self.message();
        let body = match super::request_id() {
            Some(id) => json!({ "error": message, "request_id": id }),
            None => json!({ "error": message }),
        };
        let mut response = (status, Json(body)).into_response();
        if let Self::Unavailable {
            retry_after: Some(seconds),
            ..
        } = &self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static(seconds));
        }
        response.extensions_mut().insert(ShownError {
            title: self.title(),
            message,
        });
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_store_failure_answers_503_without_the_stores_words_for_json_and_pages_alike() {
        let err = AppError::from(StoreError::Unavailable(
            "connection refused (db.internal:5432)".to_owned(),
        ));
        let response = err.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let shown = response.extensions().get::<ShownError>().cloned();
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("body");
        let body = String::from_utf8_lossy(&body);
        assert!(body.contains("try again in a moment"), "{body}");
        assert!(!body.contains("db.internal"), "internals leaked: {body}");
        let shown = shown.expect("the dashboard's page text rides along");
        assert_eq!(shown.title, "Unavailable");
        assert!(!shown.message.contains("db.internal"));
    }

    #[test]
    fn every_kind_of_refusal_has_its_status() {
        let cases = [
            (AppError::BadRequest(String::new()), 400),
            (AppError::Unauthorized(String::new()), 401),
            (AppError::Forbidden(String::new()), 403),
            (AppError::NotFound(String::new()), 404),
            (AppError::Conflict(String::new()), 409),
            (AppError::TooLarge(String::new()), 413),
            (AppError::UnsupportedMediaType(String::new()), 415),
            (AppError::TooManyRequests(String::new()), 429),
            (AppError::unavailable(""), 503),
            (AppError::Internal(String::new()), 500),
        ];
        for (err, status) in cases {
            assert_eq!(err.status().as_u16(), status, "{err:?}");
        }
    }
}
