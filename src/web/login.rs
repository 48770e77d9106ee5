//! The login form (with its own pre-session CSRF cookie) and logout.

use std::net::{IpAddr, Ipv4Addr};

use axum::Extension;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::WebState;
use super::auth::{self, LOGIN_COOKIE, LoginError, SESSION_COOKIE};
use super::pages::{Fields, SignedIn, context, csrf};
use super::views::page;
use crate::http::{AppError, ClientAddr};

pub(super) async fn login_form(State(state): State<WebState>, headers: HeaderMap) -> Response {
    login_page(&state, &headers, StatusCode::OK, None)
}

fn login_page(
    state: &WebState,
    headers: &HeaderMap,
    status: StatusCode,
    error: Option<&str>,
) -> Response {
    let token = auth::random_token();
    let mut ctx = context(None, "Log in");
    ctx.insert("login_csrf", &token);
    ctx.insert("error", &error);
    let mut r = page(&state.tera, "login.html", &ctx);
    *r.status_mut() = status;
    let cookie = state.auth.set_cookie(headers, LOGIN_COOKIE, &token, 3600);
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

pub(super) async fn login(
    State(state): State<WebState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    Form(form): Fields,
) -> Response {
    // The listener puts the address on every request; without it (a router driven directly),
    // every attempt counts under one unknown address.
    let client = client.map_or(ClientAddr(IpAddr::V4(Ipv4Addr::UNSPECIFIED)), |c| c.0);
    let expected = auth::cookie(&headers, LOGIN_COOKIE).unwrap_or_default();
    let given = form.get("csrf").map(String::as_str).unwrap_or_default();
    if expected.is_empty() || !auth::same(expected, given) {
        return login_page(
            &state,
            &headers,
            StatusCode::FORBIDDEN,
            Some("The login form expired; please try again."),
        );
    }
    let user = form.get("username").map(String::as_str).unwrap_or_default();
    let password = form.get("password").map(String::as_str).unwrap_or_default();
    match state.auth.login(user, password, client).await {
        Ok(id) => {
            let cookie =
                state
                    .auth
                    .set_cookie(&headers, SESSION_COOKIE, &id, state.auth.ttl_secs());
            let mut r = Redirect::to("/locks").into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                r.headers_mut().append(header::SET_COOKIE, v);
            }
            r
        }
        Err(LoginError::Invalid) => login_page(
            &state,
            &headers,
            StatusCode::UNAUTHORIZED,
            Some("Wrong username or password."),
        ),
        Err(LoginError::Throttled) => retry_after(
            login_page(
                &state,
                &headers,
                StatusCode::TOO_MANY_REQUESTS,
                Some("Too many failed logins from your address; wait 15 minutes and try again."),
            ),
            "900",
        ),
        Err(LoginError::Busy) => retry_after(
            login_page(
                &state,
                &headers,
                StatusCode::SERVICE_UNAVAILABLE,
                Some("The server is busy checking other logins; try again in a few seconds."),
            ),
            "5",
        ),
        Err(LoginError::Unavailable) => login_page(
            &state,
            &headers,
            StatusCode::SERVICE_UNAVAILABLE,
            Some("The server could not store your session; try again in a moment."),
        ),
        Err(LoginError::Disabled) => login_page(
            &state,
            &headers,
            StatusCode::SERVICE_UNAVAILABLE,
            Some("The dashboard login is not configured: set web.username and web.password_hash."),
        ),
    }
}

fn retry_after(mut r: Response, secs: &'static str) -> Response {
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static(secs));
    r
}

pub(super) async fn logout(
    State(state): State<WebState>,
    SignedIn(s): SignedIn,
    headers: HeaderMap,
    Form(form): Fields,
) -> Result<Response, AppError> {
    csrf(&s, &form)?;
    state.auth.logout(&headers).await;
    let mut r = Redirect::to("/login").into_response();
    let cookie = state.auth.set_cookie(&headers, SESSION_COOKIE, "", 0);
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    Ok(r)
}
