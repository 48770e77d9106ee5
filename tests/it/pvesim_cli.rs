//! `atoll pve-sim` as a process: it prints `listening on ...` once it accepts connections, and
//! writes the CA for clients with `--tls --cert-out`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

struct Sim(Child);

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `atoll pve-sim` on a free port and returns it with the URL it printed.
fn start(extra: &[&str]) -> (Sim, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args(["pve-sim", "--listen", "127.0.0.1:0", "--auth-delay-ms", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .expect("atoll starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let sim = Sim(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("a line on stdout");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("the listening line")
        .to_owned();
    (sim, url)
}

#[tokio::test]
async fn pve_sim_prints_its_url_once_it_accepts_connections() {
    let (_sim, url) = start(&[]);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let res = reqwest::Client::new()
        .get(format!("{url}/api2/json/version"))
        .header("Authorization", "PVEAPIToken=root@pam!atoll=secret")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn pve_sim_tls_writes_a_ca_clients_can_use() {
    let dir = tempfile::tempdir().unwrap();
    let ca_path = dir.path().join("ca.pem");
    let (_sim, url) = start(&["--tls", "--cert-out", ca_path.to_str().unwrap()]);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&ca_path).unwrap()).unwrap();
    let client = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca)
        .build()
        .unwrap();
    let res = client
        .get(format!("{url}/api2/json/version"))
        .header("Authorization", "PVEAPIToken=root@pam!atoll=secret")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[test]
fn pve_sim_refuses_a_broken_scenario_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, "guests:\n  - vmid: 100\n    node: nowhere\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args([
            "pve-sim",
            "--listen",
            "127.0.0.1:0",
            "--scenario",
            path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("guest 100: node 'nowhere' is not declared under nodes"),
        "{stderr}"
    );
}
