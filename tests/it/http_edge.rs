//! The HTTP edge against outsiders, over real sockets: security headers on every response,
//! connections that dribble their headers or sit idle are closed, and `/healthz` still answers
//! when dribblers hold every connection the process can open.

use crate::webhook_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use webhook_support::{Delivery, FIXTURE_REPOS, TestServer, fixture, test_yaml};

/// How long a test waits for something that should happen within a timeout of a second or two.
const DEADLINE: Duration = Duration::from_secs(10);

async fn connect(server: &TestServer) -> TcpStream {
    let addr = server.base.trim_start_matches("http://");
    TcpStream::connect(addr).await.expect("connect")
}

/// Waits until the server closes `stream` (EOF or reset), reading and discarding; `false` if
/// it is still open at `deadline`.
async fn closed_by(stream: &mut TcpStream, deadline: Instant) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn every_response_carries_nosniff_and_a_referrer_policy() {
    let server = TestServer::start().await;
    let unsigned = Delivery::github("ping", "d-h", fixture("github/ping.json"))
        .without_header("x-hub-signature-256");
    let signed = Delivery::github("ping", "d-h2", fixture("github/ping.json"));
    let mut responses = Vec::new();
    for path in [
        "/healthz",
        "/readyz",
        "/no-such-page",
        "/login",
        "/static/atoll.css",
        "/events",
    ] {
        let r = server
            .client
            .get(server.url(path))
            .send()
            .await
            .expect("get");
        responses.push((path.to_owned(), r.status(), r.headers().clone()));
    }
    for (name, d) in [("unsigned webhook", unsigned), ("signed webhook", signed)] {
        let mut req = server.client.post(server.url("/events"));
        for (n, v) in &d.headers {
            req = req.header(n.as_str(), v.as_str());
        }
        let r = req.body(d.body.clone()).send().await.expect("post");
        responses.push((name.to_owned(), r.status(), r.headers().clone()));
    }
    for (what, status, headers) in &responses {
        assert_eq!(
            headers
                .get("x-content-type-options")
                .and_then(|v| v.to_str().ok()),
            Some("nosniff"),
            "{what} ({status})"
        );
        assert_eq!(
            headers.get("referrer-policy").and_then(|v| v.to_str().ok()),
            Some("same-origin"),
            "{what} ({status})"
        );
    }
    let statuses: Vec<u16> = responses.iter().map(|r| r.1.as_u16()).collect();
    assert!(
        statuses.contains(&404) && statuses.contains(&401),
        "{statuses:?}"
    );
    server.stop().await;
}

/// Sends one more header byte every 200 ms (never idle, only slow) until the server closes
/// the connection; how long that took, or `None` if it was still open at `deadline`.
async fn dribble_until_closed(mut s: TcpStream, deadline: Instant) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    loop {
        tokio::select! {
            read = s.read(&mut buf) => {
                if matches!(read, Ok(0) | Err(_)) {
                    return Some(started.elapsed());
                }
            }
            _ = tick.tick() => {
                if s.write_all(b"X").await.is_err() {
                    return Some(started.elapsed());
                }
            }
            () = tokio::time::sleep_until(deadline.into()) => return None,
        }
    }
}

#[tokio::test]
async fn a_client_dribbling_its_headers_is_cut_off_after_the_header_read_timeout() {
    let server = TestServer::start_with_env(
        FIXTURE_REPOS,
        "",
        &[("ATOLL_SERVER__HEADER_READ_TIMEOUT_SECS", "1")],
    )
    .await;
    let deadline = Instant::now() + DEADLINE;
    let mut dribblers = Vec::new();
    for _ in 0..5 {
        let mut s = connect(&server).await;
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        dribblers.push(tokio::spawn(dribble_until_closed(s, deadline)));
    }
    for d in dribblers {
        let took = d.await.expect("dribbler");
        let took = took
            .unwrap_or_else(|| panic!("a dribbling connection was still open after {DEADLINE:?}"));
        assert!(took < Duration::from_secs(4), "closed only after {took:?}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_keep_alive_connection_left_idle_is_closed_after_the_idle_timeout() {
    let server = TestServer::start_with_env(
        FIXTURE_REPOS,
        "",
        &[
            ("ATOLL_SERVER__HEADER_READ_TIMEOUT_SECS", "60"),
            ("ATOLL_SERVER__IDLE_TIMEOUT_SECS", "1"),
        ],
    )
    .await;
    let mut s = connect(&server).await;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("write");
    let mut first = [0u8; 12];
    s.read_exact(&mut first).await.expect("response");
    assert_eq!(&first, b"HTTP/1.1 200");
    let started = Instant::now();
    assert!(
        closed_by(&mut s, started + DEADLINE).await,
        "an idle keep-alive connection was still open after {DEADLINE:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    server.stop().await;
}

/// Starts `atoll serve` with at most `fds` open file descriptors; returns it and its address.
fn serve_with_fd_limit(config: &Path, fds: u32) -> (Child, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n {fds} && exec \"$0\" serve --config \"$1\""
        ))
        .arg(env!("CARGO_BIN_EXE_atoll"))
        .arg(config)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atoll serve");
    let stdout = child.stdout.take().expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("atoll listening on ") {
                let _ = tx.send(addr.to_owned());
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("server announced its address in time");
    (child, addr)
}

#[tokio::test(flavor = "multi_thread")]
async fn healthz_answers_while_dribblers_hold_more_connections_than_the_process_has_descriptors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("atoll.yaml");
    // The cap is left at its default (256): far more than 64 descriptors allow.
    std::fs::write(&config, test_yaml(dir.path(), FIXTURE_REPOS, "")).expect("config");
    let (mut child, addr) = serve_with_fd_limit(&config, 64);
    let mut dribblers = Vec::new();
    for _ in 0..70 {
        if let Ok(mut s) = TcpStream::connect(&addr).await {
            let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await;
            dribblers.push(s);
        }
    }
    let client = webhook_support::client();
    let deadline = Instant::now() + DEADLINE;
    let mut answered = 0;
    while answered < 5 && Instant::now() < deadline {
        let health = client
            .get(format!("http://{addr}/healthz"))
            .timeout(Duration::from_secs(2))
            .send()
            .await;
        if health.is_ok_and(|r| r.status() == 200) {
            answered += 1;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(dribblers);
    assert_eq!(
        answered, 5,
        "/healthz did not answer while dribblers held the descriptors"
    );
}
