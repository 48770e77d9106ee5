//! The dashboard login under attack, over real HTTP from several loopback addresses: attempts
//! are counted before the password is checked (so parallel guesses cannot pass the limit), the
//! limit is per address (so the admin still logs in from elsewhere), and a made-up user name
//! is never hashed.

use crate::web_support;

use std::net::IpAddr;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::COOKIE;
use web_support::{TestApp, cookie_value, hidden_csrf, start};

/// A client whose connections come from `from` (any 127.x.y.z works on loopback).
fn client_from(from: &str) -> reqwest::Client {
    let ip: IpAddr = from.parse().expect("address");
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(ip)
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
}

/// One login attempt from `from`: fetches the form (for its CSRF cookie), posts it.
async fn attempt(s: &TestApp, from: &str, user: &str, password: &str) -> StatusCode {
    let http = client_from(from);
    let form = http.get(s.url("/login")).send().await.expect("login form");
    let login_cookie = cookie_value(&form, "atoll_login").expect("login cookie");
    let csrf = hidden_csrf(&form.text().await.expect("form body"));
    http.post(s.url("/login"))
        .header(COOKIE, format!("atoll_login={login_cookie}"))
        .form(&[
            ("csrf", csrf.as_str()),
            ("username", user),
            ("password", password),
        ])
        .send()
        .await
        .expect("login post")
        .status()
}

async fn password_checks(s: &TestApp) -> u64 {
    let text = s
        .http
        .get(s.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics body");
    text.lines()
        .find_map(|l| l.strip_prefix("atoll_dashboard_password_checks_total "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no password check counter in /metrics:\n{text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn parallel_wrong_passwords_are_counted_before_any_is_checked() {
    // The test server allows 3 failed logins per user name and address.
    let s = start().await;
    let attempts = (0..40).map(|_| attempt(&s, "127.0.0.1", "ops", "wrong"));
    let statuses = futures::future::join_all(attempts).await;
    let checked = statuses
        .iter()
        .filter(|st| **st == StatusCode::UNAUTHORIZED)
        .count();
    let throttled = statuses
        .iter()
        .filter(|st| **st == StatusCode::TOO_MANY_REQUESTS)
        .count();
    assert_eq!((checked, throttled), (3, 37), "{statuses:?}");
    assert!(password_checks(&s).await <= 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_passwords_for_the_admin_from_one_address_do_not_lock_the_admin_out_elsewhere() {
    let s = start().await;
    for _ in 0..5 {
        let status = attempt(&s, "127.0.0.2", "ops", "wrong").await;
        assert!(
            matches!(
                status,
                StatusCode::UNAUTHORIZED | StatusCode::TOO_MANY_REQUESTS
            ),
            "{status}"
        );
    }
    assert_eq!(
        attempt(&s, "127.0.0.2", "ops", "correct horse").await,
        StatusCode::TOO_MANY_REQUESTS,
        "the guessing address is stopped"
    );
    assert_eq!(
        attempt(&s, "127.0.0.1", "ops", "correct horse").await,
        StatusCode::SEE_OTHER,
        "the admin, from another address, logs in"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn made_up_user_names_are_refused_without_hashing_a_password() {
    let s = start().await;
    let attempts = (0..30).map(|i| {
        let from = format!("127.0.1.{}", 1 + i % 10);
        let user = format!("nobody{i}");
        let s = &s;
        async move { attempt(s, &from, &user, "guess").await }
    });
    let statuses = futures::future::join_all(attempts).await;
    assert!(
        statuses.iter().all(|st| *st == StatusCode::UNAUTHORIZED),
        "{statuses:?}"
    );
    // At most one check, to time what a real one costs.
    let checks = password_checks(&s).await;
    assert!(
        checks <= 1,
        "{checks} Argon2 checks for names that do not exist"
    );
}
