//! `/access/ticket`: password (or ticket) login returning a ticket and a CSRF token.

use axum::response::Response;

use super::{Params, SimState, data};
use crate::error::{ApiError, ApiResult};

/// `POST /access/ticket` with `username`, `password` (and optional `realm`).
pub(crate) async fn ticket(state: SimState, params: Params) -> ApiResult<Response> {
    let sim = state.0;
    let username = params
        .get("username")?
        .ok_or_else(|| ApiError::param("username", "property is missing and it is not optional"))?;
    let password = params
        .get("password")?
        .ok_or_else(|| ApiError::param("password", "property is missing and it is not optional"))?;
    let username = match params.get("realm")? {
        Some(realm) if !username.contains('@') => format!("{username}@{realm}"),
        _ => username.to_owned(),
    };
    let (ticket, csrf) = sim.auth.login(&username, password)?;
    Ok(data(serde_json::json!({
        "username": username, "ticket": ticket, "CSRFPreventionToken": csrf,
        "cap": {}, "clustername": "pve-sim",
    })))
}

/// `GET /access/ticket`: the login form placeholder PVE serves.
pub(crate) async fn ticket_form() -> Response {
    data(serde_json::Value::Null)
}
