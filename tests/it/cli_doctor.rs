//! `atoll doctor` through the built binary against the simulator: a token missing one privilege
//! on one storage is told exactly that, a good token passes, an unreachable endpoint and a
//! self-signed certificate are named with their fixes, and a wrong secret is explained without
//! being shown.

use std::process::Output;

use pvesim::{Scenario, SimOptions, Simulator};

use crate::pve_client_support::sim::fast_options;

/// A token whose user is Administrator but which, separated, holds everything atoll needs
/// except `Datastore.AllocateSpace` on `local-lvm` (it has it on `local`).
const LIMITED: &str = r#"
tokens:
  "root@pam!atoll": secret
  "atoll@pve!doctor": doctor-secret-4f1e
roles:
  AtollNoSpace: [VM.Audit, VM.Allocate, VM.Config.CPU, VM.Config.Memory, VM.Config.Disk,
                 VM.Config.Network, VM.Config.Options, VM.PowerMgmt, Datastore.Audit,
                 Sys.Audit, SDN.Use]
acl:
  - {path: /, role: Administrator, user: "atoll@pve"}
  - {path: /, role: AtollNoSpace, token: "atoll@pve!doctor"}
  - {path: /storage/local, role: PVEDatastoreUser, token: "atoll@pve!doctor"}
privsep_tokens: ["atoll@pve!doctor"]
"#;

/// atoll's own container, found by the MAC the config names as local.
const OWN_GUEST: &str = r#"
guests:
  - vmid: 100
    status: running
    config:
      hostname: atoll
      rootfs: local-lvm:4
      net0: name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:D0:C1,ip=dhcp
"#;

async fn sim(yaml: &str, tls: bool) -> Simulator {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let scenario: Scenario = serde_yaml_ng::from_str(yaml).expect("scenario");
    let opts = SimOptions {
        tls,
        ..fast_options()
    };
    Simulator::start(&scenario, opts).await.expect("simulator")
}

/// Runs `atoll doctor --config` with `config` written to a file (and `files` beside it).
async fn doctor(config: String, files: Vec<(&'static str, String)>) -> (Output, String) {
    tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write file");
        }
        let config = config.replace("{dir}", &dir.path().display().to_string());
        let path = dir.path().join("atoll.yaml");
        std::fs::write(&path, config).expect("write config");
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_atoll"));
        command.args(["doctor", "--config"]).arg(&path);
        for (key, _) in std::env::vars() {
            if key.starts_with("PROXMOX_VE_") || key.starts_with("ATOLL_") {
                command.env_remove(key);
            }
        }
        let out = command.output().expect("run atoll doctor");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out, text)
    })
    .await
    .expect("doctor thread")
}

fn config(endpoint: &str, token: &str, extra: &str) -> String {
    format!(
        "proxmox:\n  endpoint: {endpoint}\n  api_token: \"{token}\"\n{extra}protect:\n  discover: false\n"
    )
}

fn failed_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains("FAILED")).collect()
}

#[tokio::test]
async fn a_token_missing_allocate_space_on_one_storage_is_told_that_privilege_and_path() {
    let sim = sim(LIMITED, false).await;
    let token = "atoll@pve!doctor=doctor-secret-4f1e";
    let (out, text) = doctor(config(&sim.url(), token, ""), vec![]).await;
    assert_eq!(out.status.code(), Some(1), "{text}");
    let failed = failed_lines(&text);
    assert_eq!(failed.len(), 1, "{text}");
    assert!(
        failed[0].contains("missing Datastore.AllocateSpace on /storage/local-lvm"),
        "{text}"
    );
    assert!(
        text.contains("pveum acl modify /storage/local-lvm --tokens 'atoll@pve!doctor' --roles PVEDatastoreUser"),
        "{text}"
    );
    assert!(
        text.contains("ok      login: API token as atoll@pve!doctor"),
        "{text}"
    );
    assert!(
        !text.contains("doctor-secret-4f1e"),
        "secret shown:\n{text}"
    );
}

#[tokio::test]
async fn a_good_token_on_atolls_own_guest_exits_0() {
    let sim = sim(OWN_GUEST, true).await;
    let ca = sim.ca_pem().expect("ca").to_owned();
    let yaml = format!(
        "proxmox:\n  endpoint: {}\n  api_token: \"root@pam!atoll=secret\"\n  \
         ca_file: {{dir}}/ca.pem\nprotect:\n  local_macs: ['bc:24:11:00:d0:c1']\n",
        sim.url()
    );
    let (out, text) = doctor(yaml, vec![("ca.pem", ca)]).await;
    assert!(out.status.success(), "{text}");
    assert!(failed_lines(&text).is_empty(), "{text}");
    assert!(!text.contains("  warn    "), "{text}");
    for line in [
        "ok      reach:",
        "ok      login: API token as root@pam!atoll accepted",
        "ok      version: Proxmox VE 9.",
        "ok      privileges: everything atoll needs is granted",
        "ok      discovery: atoll runs in lxc 100",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
}

#[tokio::test]
async fn a_wrong_token_secret_names_the_401_and_what_to_check_without_showing_it() {
    let sim = sim("{}", false).await;
    let token = "root@pam!atoll=not-the-secret-91c2";
    let (out, text) = doctor(config(&sim.url(), token, ""), vec![]).await;
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAILED  login: 401: Proxmox VE refused the API token root@pam!atoll"),
        "{text}"
    );
    assert!(
        text.contains("user@realm!name") && text.contains("enabled"),
        "{text}"
    );
    assert!(
        !text.contains("not-the-secret-91c2"),
        "secret shown:\n{text}"
    );
}

#[tokio::test]
async fn an_endpoint_nobody_listens_on_is_named_a_refused_connection() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let endpoint = format!("https://127.0.0.1:{port}");
    let (out, text) = doctor(config(&endpoint, "root@pam!atoll=secret", ""), vec![]).await;
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAILED  reach: connection refused"), "{text}");
    assert!(text.contains("8006"), "{text}");
    assert!(
        !text.contains("login:"),
        "nothing after an unreachable endpoint:\n{text}"
    );
}

#[tokio::test]
async fn a_self_signed_certificate_names_ca_file_and_insecure_and_the_ca_file_cures_it() {
    let sim = sim("{}", true).await;
    let token = "root@pam!atoll=secret";
    let (out, text) = doctor(config(&sim.url(), token, ""), vec![]).await;
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAILED  reach: TLS: the certificate of"),
        "{text}"
    );
    assert!(
        text.contains("proxmox.ca_file = <PEM of the PVE CA>")
            && text.contains("proxmox.insecure = true"),
        "{text}"
    );

    let ca = sim.ca_pem().expect("ca").to_owned();
    let with_ca = config(&sim.url(), token, "  ca_file: {dir}/pve-root-ca.pem\n");
    let (out, text) = doctor(with_ca, vec![("pve-root-ca.pem", ca)]).await;
    assert!(out.status.success(), "{text}");
    assert!(text.contains("pve-root-ca.pem"), "{text}");
}

#[tokio::test]
async fn a_ticket_login_is_checked_and_a_wrong_password_is_explained_without_showing_it() {
    let sim = sim("users:\n  \"root@pam\": right-pw-77\n", false).await;
    let yaml = |password: &str| {
        format!(
            "proxmox:\n  endpoint: {}\n  username: root@pam\n  password: {password}\nprotect:\n  discover: false\n",
            sim.url()
        )
    };
    let (out, text) = doctor(yaml("right-pw-77"), vec![]).await;
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("ok      login: ticket login as root@pam accepted"),
        "{text}"
    );
    let (out, text) = doctor(yaml("wrong-pw-13"), vec![]).await;
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAILED  login: 401: Proxmox VE refused the login of root@pam"),
        "{text}"
    );
    assert!(text.contains("proxmox.password"), "{text}");
    assert!(
        !text.contains("wrong-pw-13") && !text.contains("right-pw-77"),
        "{text}"
    );
}
