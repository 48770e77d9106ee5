//! A real third-party client against the simulator: Python's `proxmoxer` (PyPI) drives a
//! container's life over HTTPS, with API-token and with ticket login, and
//! `tests/conformance/proxmoxer_ct.py` checks every answer against PVE's source. The client
//! comes from `target/oracle-venv` (`deploy/test.sh` installs it from
//! `tests/conformance/requirements.txt`); under CI, or when that venv exists, a missing
//! proxmoxer fails the test instead of skipping it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use pvesim::{Scenario, SimOptions, Simulator};

use crate::pvesim_support::{install_crypto, opts};

const TOKEN: &str = "root@pam!atoll=secret";
const PASSWORD: &str = "secret";

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The venv's Python with proxmoxer importable, `None` (skip, loudly) when there is no venv
/// outside CI; panics under CI, and when the venv exists without proxmoxer.
fn proxmoxer_python(workspace: &Path) -> Option<PathBuf> {
    let python = workspace.join("target/oracle-venv/bin/python");
    let fix = "run bash deploy/test.sh, which installs tests/conformance/requirements.txt into \
               target/oracle-venv";
    if !python.exists() {
        assert!(
            !under_ci(),
            "{} is missing under CI: the proxmoxer conformance test cannot run; {fix}",
            python.display()
        );
        eprintln!(
            "SKIPPED: proxmoxer conformance not run: {} is missing; {fix}",
            python.display()
        );
        return None;
    }
    let import = std::process::Command::new(&python)
        .args(["-c", "import proxmoxer, requests"])
        .output()
        .expect("running the venv's python");
    assert!(
        import.status.success(),
        "proxmoxer is not installed in {}: {}; {fix}",
        python.display(),
        String::from_utf8_lossy(&import.stderr)
    );
    Some(python)
}

#[tokio::test]
async fn proxmoxer_drives_a_container_life_and_every_answer_is_as_pve_gives_it() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(python) = proxmoxer_python(workspace) else {
        return;
    };
    install_crypto();
    let options = SimOptions {
        tls: true,
        task_duration: Duration::from_millis(10),
        ..opts()
    };
    let sim = Simulator::start(&Scenario::default(), options)
        .await
        .expect("simulator starts");
    let script = workspace.join("tests/conformance/proxmoxer_ct.py");
    let out = tokio::process::Command::new(&python)
        .arg(&script)
        .args(["--url", &sim.url(), "--token", TOKEN])
        .args(["--user", "root@pam", "--password", PASSWORD])
        .args(["--node", "pve", "--vmid", "900", "--poll", "0.02"])
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), out)
        .await
        .expect("the conformance script finishes within 2 minutes")
        .expect("running the conformance script");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let summary = report
        .lines()
        .find(|l| l.starts_with("proxmoxer: "))
        .unwrap_or("no summary line");
    assert!(
        out.status.success(),
        "proxmoxer and the simulator disagree ({summary}); the report above names each call"
    );
    let counts: Vec<u32> = summary
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        matches!(counts.as_slice(), [calls, agreed] if calls == agreed && *calls > 80),
        "summary {summary:?}: every call of both lives must answer as PVE"
    );
}
