//! Benchmark: load and evaluate a module with 1,000 `for_each` instances of the realistic layout
//! (a container, a download-file and a random_password per entry, so 3,000 resource instances).
//! Prints the median and best wall time and the process's peak memory. Run with
//! `cargo bench --bench tfconfig`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use tfconfig::Input;

const ENTRIES: usize = 1_000;
const RUNS: usize = 15;

fn write_project(root: &Path) -> std::io::Result<()> {
    let env = root.join("environments/dev");
    let module = root.join("modules/lxc");
    std::fs::create_dir_all(&env)?;
    std::fs::create_dir_all(&module)?;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tf/realistic");
    for (from, to) in [
        ("environments/dev/main.tf", "environments/dev/main.tf"),
        (
            "environments/dev/variables.tf",
            "environments/dev/variables.tf",
        ),
        ("modules/lxc/main.tf", "modules/lxc/main.tf"),
        ("modules/lxc/variables.tf", "modules/lxc/variables.tf"),
        ("modules/lxc/outputs.tf", "modules/lxc/outputs.tf"),
        ("files/id_ed25519.pub", "files/id_ed25519.pub"),
    ] {
        if let Some(parent) = root.join(to).parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(fixture.join(from), root.join(to))?;
    }
    let mut tfvars = String::from("proxmox_node = \"pve\"\n\nlxc_configs = {\n");
    for i in 0..ENTRIES {
        let _ = writeln!(
            tfvars,
            "  \"ct-{i:04}\" = {{\n    vm_id    = {}\n    hostname = \"ct{i:04}\"\n    cores    = {}\n    ip       = \"10.{}.{}.10/24\"\n  }}",
            1000 + i,
            1 + i % 4,
            i / 250,
            i % 250
        );
    }
    tfvars.push_str("}\n");
    std::fs::write(env.join("terraform.tfvars"), tfvars)
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_project(dir.path()).expect("write benchmark project");
    let input = Input {
        checkout: dir.path().to_path_buf(),
        project_dir: "environments/dev".into(),
        workspace: "default".into(),
        vars: Vec::new(),
        limits: Default::default(),
        modules: Default::default(),
    };
    let before = peak_rss_kib();

    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut instances = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        let loaded = tfconfig::load(&input);
        times.push(start.elapsed());
        assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
        instances = loaded.resources.len();
    }
    times.sort();
    let median = times[RUNS / 2];
    println!(
        "tfconfig load+evaluate, {ENTRIES} for_each entries ({instances} resource instances), {RUNS} runs"
    );
    println!("  median {:>8.1} ms", median.as_secs_f64() * 1e3);
    println!("  best   {:>8.1} ms", times[0].as_secs_f64() * 1e3);
    println!("  worst  {:>8.1} ms", times[RUNS - 1].as_secs_f64() * 1e3);
    match (before, peak_rss_kib()) {
        (Some(b), Some(a)) => println!(
            "  peak RSS {:.1} MiB (process; {:.1} MiB before the first load)",
            a as f64 / 1024.0,
            b as f64 / 1024.0
        ),
        _ => println!("  peak RSS unavailable (no /proc/self/status)"),
    }
}
