//! The Proxmox client follows a proxy only when `proxmox.proxy` names one: `HTTP_PROXY`,
//! `HTTPS_PROXY` and `ALL_PROXY` in the environment are never followed (they would send the API
//! token to whoever set them). An `http://` endpoint or proxy gets a warning.

use crate::engine_support;

use std::sync::{Arc, Mutex};

use engine_support::{Env, text};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A listener that records the first line of every request it gets and answers 502.
struct Trap {
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Trap {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut head = vec![0u8; 4096];
                let n = socket.read(&mut head).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&head[..n]);
                let line = text.lines().next().unwrap_or("(nothing)").to_owned();
                record.lock().expect("trap log").push(line);
                let reply =
                    "HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        Self { url, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().expect("trap log").clone()
    }
}

const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_variables_in_the_environment_are_never_followed() {
    let trap = Trap::start().await;
    let mut env = Env::start().await;
    for name in PROXY_VARIABLES {
        env.extra_env.push((name.to_owned(), trap.url.clone()));
    }
    env.write_tf("");
    let out = env.atoll(&["plan"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(trap.seen(), Vec::<String>::new(), "the proxy was contacted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_proxy_is_followed_and_plain_http_is_warned_about() {
    let trap = Trap::start().await;
    let mut env = Env::start().await;
    env.write_config(&format!(
        "protect:\n  discover: false\nproxmox:\n  proxy: {}\n",
        trap.url
    ));
    env.write_tf("");
    let out = env.atoll(&["plan"]).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "the proxy answers 502: {}",
        text(&out)
    );
    let seen = trap.seen();
    let sim = env.sim.url();
    assert!(
        seen.iter()
            .any(|line| line.contains(&format!("{sim}/api2/json/"))),
        "requests go through the configured proxy: {seen:?}"
    );
    let said = text(&out);
    assert!(
        said.contains("proxmox.proxy")
            && said.contains("proxmox.endpoint (from PROXMOX_VE_ENDPOINT)"),
        "{said}"
    );
    let check = env
        .command(&["check-config"])
        .output()
        .await
        .expect("check-config");
    let said = text(&check);
    assert!(check.status.success(), "{said}");
    assert!(
        said.contains("warning: proxmox.endpoint (from PROXMOX_VE_ENDPOINT)")
            && said.contains("is plain http://"),
        "{said}"
    );
}
