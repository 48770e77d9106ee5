//! The parameter check in front of a handler (`RESTHandler::handle` validating before the API
//! code runs): path parameters, query and body are merged into one hash and checked against
//! the route's schema (`api_schema`); a failure answers 400 before the handler sees anything.
//! A parameter given in the path and, with another value, in the request is refused
//! (pve-manager `PVE/HTTPServer.pm` `rest_handler`). The body is read once and handed on unchanged.

use axum::body::Body;
use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Params;
use super::params::is_json;
use crate::api_schema::{Schema, lxc, qemu};
use crate::error::ApiError;

/// The largest body the check reads (uploads do not pass through it).
const BODY_LIMIT: usize = 16 << 20;

/// Middleware: checks the request against a fixed schema.
pub(crate) async fn checked(
    State(schema): State<&'static Schema>,
    req: Request,
    next: Next,
) -> Response {
    run(|_| Some(schema), req, next).await
}

/// Middleware for `status/{action}`: the schema depends on the action.
pub(crate) async fn checked_power(req: Request, next: Next) -> Response {
    run(lxc::power, req, next).await
}

/// Middleware for a QEMU guest's `status/{action}`.
pub(crate) async fn checked_qemu_power(req: Request, next: Next) -> Response {
    run(qemu::power, req, next).await
}

async fn run(
    schema_for: impl FnOnce(&str) -> Option<&'static Schema>,
    req: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = req.into_parts();
    let path: Vec<(String, String)> = match RawPathParams::from_request_parts(&mut parts, &()).await
    {
        Ok(raw) => raw
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        Err(e) => return ApiError::die(format!("unable to read path - {e}")).into_response(),
    };
    let action = path
        .iter()
        .find(|(k, _)| k == "action")
        .map_or("", |(_, v)| v.as_str());
    let Some(schema) = schema_for(action) else {
        return next.run(Request::from_parts(parts, body)).await;
    };
    let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(b) => b,
        Err(e) => {
            return ApiError::die(format!("unable to read request body - {e}")).into_response();
        }
    };
    let mut params = match Params::parse(parts.uri.query(), is_json(&parts.headers), &bytes) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    for (key, value) in path.into_iter().filter(|(k, _)| k != "action") {
        if params
            .0
            .get(&key)
            .is_some_and(|vs| vs.iter().any(|v| *v != value))
        {
            let msg = "duplicate parameter (already defined in URI) with conflicting values!";
            return ApiError::param(&key, msg).into_response();
        }
        params.0.insert(key, vec![value]);
    }
    if let Err(e) = schema.validate(&params) {
        return e.into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
