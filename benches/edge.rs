//! Memory of `atoll serve` under the outsider loads of issue 11's findings 6 and 7, each in a
//! fresh server process: resident memory before, peak (`VmHWM`) and resident after.
//!
//! - `bodies`: 40 connections each send 23 MB of a declared 24 MB unsigned webhook body and
//!   hold it;
//! - `names`: 60 parallel logins with made-up user names, from 60 loopback addresses;
//! - `guesses`: 60 parallel wrong passwords for the real user name, from 60 addresses.
//!
//! Run: `cargo bench --bench edge` (the binary under test is `ATOLL_BIN` if set, so the same
//! loads can be run against another build). Prints numbers; asserts nothing.

use std::io::{BufRead, BufReader};
use std::net::IpAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const PASSWORD: &str = "bench password";

struct Server {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let hash = atoll::web::hash_password(PASSWORD).expect("hash");
    let yaml = format!(
        "server: {{listen: '127.0.0.1:0'}}\ndata_dir: {:?}\n\
         github: {{enabled: true, webhook_secret: bench-secret}}\n\
         repo_allowlist: ['github.com/*/*']\n\
         web: {{username: ops, password_hash: {hash:?}}}\nlog: {{level: error}}\n",
        dir.path().display().to_string()
    );
    let config = dir.path().join("atoll.yaml");
    std::fs::write(&config, yaml).expect("config");
    let bin = std::env::var("ATOLL_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_atoll").to_owned());
    let mut child = Command::new(bin)
        .args(["serve", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn atoll serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut addr = String::new();
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if let Some(a) = line.strip_prefix("atoll listening on ") {
            addr = a.to_owned();
            break;
        }
    }
    assert!(!addr.is_empty(), "server did not announce its address");
    Server {
        child,
        addr,
        _dir: dir,
    }
}

/// `VmRSS` and `VmHWM` of the process, in MiB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

async fn bodies(s: &Server) {
    let mut held = Vec::new();
    for _ in 0..40 {
        let mut c = TcpStream::connect(&s.addr).await.expect("connect");
        let head = format!(
            "POST /events HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n\
             x-github-event: issue_comment\r\nx-github-delivery: d\r\n\
             x-hub-signature-256: sha256={}\r\ncontent-length: 24000000\r\n\r\n",
            "ab".repeat(32)
        );
        let _ = c.write_all(head.as_bytes()).await;
        held.push(c);
    }
    let chunk = vec![b' '; 1_000_000];
    let sends = held.iter_mut().map(|c| async {
        for _ in 0..23 {
            if tokio::time::timeout(Duration::from_secs(5), c.write_all(&chunk))
                .await
                .is_err()
            {
                break;
            }
        }
    });
    futures::future::join_all(sends).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
}

async fn logins(s: &Server, user_of: impl Fn(usize) -> String) {
    let attempts = (0..60).map(|i| {
        let user = user_of(i);
        let from: IpAddr = format!("127.0.3.{}", i + 1).parse().expect("ip");
        async move { login(&s.addr, from, &user).await }
    });
    futures::future::join_all(attempts).await;
}

/// Fetches the form (for its CSRF cookie) like a browser, then posts a wrong password.
async fn login(addr: &str, from: IpAddr, user: &str) {
    let http = reqwest::Client::builder()
        .local_address(from)
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    let base = format!("http://{addr}");
    let Ok(form) = http.get(format!("{base}/login")).send().await else {
        return;
    };
    let cookie = form
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| v.strip_prefix("atoll_login="))
        .map(|v| v.split(';').next().unwrap_or("").to_owned())
        .unwrap_or_default();
    let html = form.text().await.unwrap_or_default();
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("")
        .to_owned();
    let _ = http
        .post(format!("{base}/login"))
        .header("cookie", format!("atoll_login={cookie}"))
        .form(&[
            ("csrf", csrf.as_str()),
            ("username", user),
            ("password", "wrong"),
        ])
        .send()
        .await;
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    println!("load      rss_before_mib  peak_mib  rss_after_mib  seconds");
    for load in ["bodies", "names", "guesses"] {
        let s = start();
        let pid = s.child.id();
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(500)).await });
        let (before, _) = memory(pid);
        let started = Instant::now();
        rt.block_on(async {
            match load {
                "bodies" => bodies(&s).await,
                "names" => logins(&s, |i| format!("nobody{i}")).await,
                _ => logins(&s, |_| "ops".to_owned()).await,
            }
        });
        let took = started.elapsed().as_secs_f64();
        rt.block_on(async { tokio::time::sleep(Duration::from_secs(1)).await });
        let (after, peak) = memory(pid);
        println!("{load:<9} {before:>14} {peak:>9} {after:>14} {took:>8.1}");
    }
}
