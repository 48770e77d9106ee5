//! Webhook bodies are read before their signature can be checked, so the server bounds what
//! outsiders can make it hold: a declared length over the limit is refused before anything is
//! read, and past the concurrent or total budget a delivery gets 503 with `Retry-After` at
//! once, not a place in a queue. The budget comes back when the holders go away.

use crate::webhook_support;

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use webhook_support::{Delivery, FIXTURE_REPOS, TestServer, fixture};

const DEADLINE: Duration = Duration::from_secs(15);

/// Opens a connection and sends the headers of a signed-looking GitHub delivery declaring
/// `declared` bytes, then `sent` bytes of it; the rest never comes.
async fn hold(server: &TestServer, declared: usize, sent: usize) -> TcpStream {
    let addr = server.base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /events HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n\
         x-github-event: issue_comment\r\nx-github-delivery: hold\r\n\
         x-hub-signature-256: sha256={}\r\ncontent-length: {declared}\r\n\r\n",
        "ab".repeat(32)
    );
    s.write_all(head.as_bytes()).await.expect("headers");
    s.write_all(&vec![b' '; sent])
        .await
        .expect("part of the body");
    s
}

/// The status line's code of the first response on `s`, read within the deadline.
async fn status_of(s: &mut TcpStream) -> Option<u16> {
    let mut buf = [0u8; 12];
    tokio::time::timeout(DEADLINE, s.read_exact(&mut buf))
        .await
        .ok()?
        .ok()?;
    std::str::from_utf8(&buf[9..12]).ok()?.parse().ok()
}

fn ping(id: &str) -> Delivery {
    Delivery::github("ping", id, fixture("github/ping.json"))
}

/// Sends pings until one gets `want` or the deadline passes; the last response's status and
/// headers.
async fn ping_until(server: &TestServer, want: u16) -> (u16, reqwest::header::HeaderMap, Duration) {
    let deadline = Instant::now() + DEADLINE;
    let mut n = 0;
    loop {
        n += 1;
        let d = ping(&format!("p-{n}"));
        let mut req = server.client.post(server.url("/events"));
        for (k, v) in &d.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let started = Instant::now();
        let r = req
            .timeout(Duration::from_secs(5))
            .body(d.body.clone())
            .send()
            .await
            .expect("ping");
        let took = started.elapsed();
        let status = r.status().as_u16();
        if status == want || Instant::now() >= deadline {
            return (status, r.headers().clone(), took);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_413_before_the_body_is_sent() {
    let server = TestServer::start().await;
    // Over the 25 MiB default; not one byte of the body is sent.
    let mut s = hold(&server, 30 * 1024 * 1024, 0).await;
    assert_eq!(status_of(&mut s).await, Some(413));
    assert!(server.jobs().await.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn the_41st_large_body_is_refused_at_once_and_the_budget_comes_back() {
    let server = TestServer::start_with_env(
        FIXTURE_REPOS,
        "",
        &[
            ("ATOLL_WEBHOOK__MAX_BODY_BYTES", "1048576"),
            ("ATOLL_WEBHOOK__MAX_CONCURRENT_BODIES", "40"),
        ],
    )
    .await;
    let mut holders = Vec::new();
    for _ in 0..40 {
        holders.push(hold(&server, 1_000_000, 200_000).await);
    }
    let (status, headers, took) = ping_until(&server, 503).await;
    assert_eq!(status, 503, "the 41st delivery was not refused");
    assert!(headers.contains_key("retry-after"), "{headers:?}");
    assert!(took < Duration::from_secs(2), "refusal took {took:?}");
    drop(holders);
    let (status, _, _) = ping_until(&server, 200).await;
    assert_eq!(
        status, 200,
        "the budget did not come back after the holders left"
    );
    server.stop().await;
}

#[tokio::test]
async fn bodies_past_the_total_byte_budget_are_refused_until_it_frees_up() {
    let server = TestServer::start_with_env(
        FIXTURE_REPOS,
        "",
        &[
            ("ATOLL_WEBHOOK__MAX_BODY_BYTES", "1048576"),
            ("ATOLL_WEBHOOK__MAX_BUFFERED_BYTES", "4194304"),
        ],
    )
    .await;
    // Four bodies of 1 MiB, each nearly all sent: the 4 MiB budget is spent.
    let mut holders = Vec::new();
    for _ in 0..4 {
        holders.push(hold(&server, 1_048_576, 1_048_000).await);
    }
    let (status, headers, _) = ping_until(&server, 503).await;
    assert_eq!(
        status, 503,
        "a delivery past the byte budget was not refused"
    );
    assert!(headers.contains_key("retry-after"), "{headers:?}");
    drop(holders);
    let (status, _, _) = ping_until(&server, 200).await;
    assert_eq!(status, 200, "the byte budget did not come back");
    server.stop().await;
}
