//! `atoll demo --exit` plays its whole script (plan, approve, apply, then a PR on the
//! protected guest that must be blocked) and exits 0; it fails if any step does not happen.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn demo_script_plays_to_the_end_and_blocks_the_protected_guest() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atoll"))
        .args(["demo", "--exit"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start atoll demo");
    let deadline = Instant::now() + Duration::from_secs(300);
    while child.try_wait().expect("poll atoll demo").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("atoll demo --exit did not finish within 300 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("atoll demo output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("Apply complete"), "{stdout}");
    // the incident, played: a live change and a restart on atoll's own VM, both blocked
    assert!(stdout.contains("(applied live, no restart)"), "{stdout}");
    assert!(
        stdout.contains("atoll refuses to restart (for serial_device[0].device)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("updated VM 201 and restarted it"),
        "{stdout}"
    );
}
