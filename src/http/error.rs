//! [`AppError`]: every error a handler returns, mapped to a status and a short JSON message.
//! 5xx are logged once here and never expose internals.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::webhook::WebhookError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Webhook(#[from] WebhookError),
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
                WebhookError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            },
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = if status.is_server_error() {
            tracing::error!(error = %self, "request failed");
            match self {
                Self::Webhook(WebhookError::Store(_)) => {
                    "the server could not store this delivery; redeliver it later".to_owned()
                }
                Self::Webhook(_) => {
                    "internal error; the server log has details under this X-Request-Id".to_owned()
                }
            }
        } else {
            tracing::info!(status = status.as_u16(), error = %self, "request refused");
            self.to_string()
        };
        let body = match super::request_id() {
            Some(id) => json!({ "error": message, "request_id": id }),
            None => json!({ "error": message }),
        };
        (status, Json(body)).into_response()
    }
}
