//! [`AppError`]: every error a handler returns, mapped to a status and a short JSON message.
//! 5xx are logged once here and never expose internals.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::BodyError;
use crate::webhook::WebhookError;

/// What `Retry-After` says when the server is too busy to read a delivery (seconds).
const BUSY_RETRY_AFTER: &str = "5";

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Webhook(#[from] WebhookError),
    #[error(transparent)]
    Body(#[from] BodyError),
}

impl AppError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Webhook(e) => match e {
                WebhookError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
                WebhookError::UnknownForge
                | WebhookError::MissingHeader(_)
                | WebhookError::BadHeader(_)
                | WebhookError::InvalidPayload(_) => StatusCode::BAD_REQUEST,
                WebhookError::ForgeDisabled(_) => StatusCode::NOT_FOUND,
                WebhookError::MissingSignature | WebhookError::BadSignature => {
                    StatusCode::UNAUTHORIZED
                }
                WebhookError::RepoNotAllowed(_) => StatusCode::FORBIDDEN,
                WebhookError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
            },
            Self::Body(e) => match e {
                BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                BodyError::Busy => StatusCode::SERVICE_UNAVAILABLE,
                BodyError::BadLength | BodyError::Read(_) => StatusCode::BAD_REQUEST,
            },
        }
    }

    /// The message for the response; internals of 5xx stay in the log.
    fn message(&self, status: StatusCode) -> String {
        match self {
            Self::Body(BodyError::Busy) => {
                tracing::warn!(error = %self, "delivery refused: body budget full");
                self.to_string()
            }
            _ if status.is_server_error() => {
                tracing::error!(error = %self, "request failed");
                match self {
                    Self::Webhook(WebhookError::Store(_)) => {
                        "the server could not store this delivery; redeliver it later".to_owned()
                    }
                    _ => "internal error; the server log has details under this X-Request-Id"
                        .to_owned(),
                }
            }
            _ => {
                tracing::info!(status = status.as_u16(), error = %self, "request refused");
                self.to_string()
            }
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = self.message(status);
        let body = match super::request_id() {
            Some(id) => json!({ "error": message, "request_id": id }),
            None => json!({ "error": message }),
        };
        let mut response = (status, Json(body)).into_response();
        if matches!(self, Self::Body(BodyError::Busy)) {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(BUSY_RETRY_AFTER),
            );
        }
        response
    }
}
