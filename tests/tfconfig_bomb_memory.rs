//! Peak memory of the evaluator under issue 11's bombs, measured in this process: each test
//! resets the peak (`/proc/self/clear_refs`), loads one bomb and reads `VmHWM`. The tests hold
//! one lock, so no other test of this binary allocates while a peak is measured.

#[allow(dead_code, reason = "each test binary uses part of the bombs")]
mod bombs;

use std::sync::Mutex;
use std::time::Instant;

use tfconfig::{Input, Limits};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// Loads `bomb` and returns the peak memory it added (MiB) and its rendered diagnostics.
fn peak_mib(bomb: &bombs::Bomb) -> (u64, String) {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().expect("tempdir");
    bomb.write(dir.path());
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak (clear_refs)");
    let before = status_kib("VmHWM:");
    let started = Instant::now();
    let loaded = tfconfig::load(&Input {
        checkout: dir.path().to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".into(),
        vars: Vec::new(),
        limits: Limits::default(),
        modules: Default::default(),
    });
    let text = loaded.render_diagnostics();
    drop(loaded);
    let peak = status_kib("VmHWM:").saturating_sub(before) / 1024;
    eprintln!("peak +{peak} MiB in {:?}", started.elapsed());
    (peak, text)
}

#[test]
fn module_fan_out_bomb_ends_in_well_under_50_mb() {
    let (peak, text) = peak_mib(&bombs::module_fan_out());
    assert!(text.contains("Too many module calls"), "{text}");
    assert!(peak < 30, "the fan-out bomb took {peak} MiB");
}

#[test]
fn nested_module_for_each_bomb_ends_in_well_under_50_mb() {
    let (peak, text) = peak_mib(&bombs::nested_module_for_each());
    assert!(text.contains("Too many module calls"), "{text}");
    assert!(peak < 50, "the nested for_each bomb took {peak} MiB");
}

#[test]
fn formatlist_bomb_stays_under_the_evaluation_memory_ceiling() {
    let (peak, text) = peak_mib(&bombs::formatlist_of_padded_strings());
    assert!(text.contains("Evaluation limit reached"), "{text}");
    let ceiling = Limits::default().eval_memory_bytes / (1024 * 1024);
    assert!(
        peak < ceiling + 32,
        "the formatlist bomb took {peak} MiB (ceiling {ceiling} MiB)"
    );
}

#[test]
fn tf_file_linked_to_dev_zero_is_refused_without_reading_it() {
    let (peak, text) = peak_mib(&bombs::tf_file_to_dev_zero());
    assert!(text.contains("symbolic link"), "{text}");
    assert!(peak < 20, "the /dev/zero link took {peak} MiB");
}
