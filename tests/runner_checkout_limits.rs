//! Black-box: what a PR's checkout can make the server read is bounded. The server runs in this
//! process (its own runtime), so this binary's peak memory is the server's.

#[path = "it/app_support/mod.rs"]
mod app_support;
#[allow(dead_code, reason = "each test binary uses part of the bombs")]
mod bombs;
#[allow(unused_imports, reason = "each test binary uses part of the support")]
#[path = "it/support/mod.rs"]
mod support;

use app_support::{Options, REPO, TestApp};
use model::ForgeKind;
use support::Container;

fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atlantis_yaml_symlink_to_dev_zero_is_refused_without_reading_it() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak (clear_refs)");
    let before = peak_kib();
    let bomb = bombs::atlantis_yaml_to_dev_zero();
    let pr = w
        .fake()
        .open_pr_with_links(REPO, "alice", "zero", &bomb.file_refs(), &bomb.link_refs())
        .await
        .expect("open pr");
    let refused = w.comment_containing(pr, "atlantis.yaml was not read").await;
    for needed in [
        "Plan Error",
        "symbolic link that leads outside the repository checkout",
        "256 KiB",
        "limits.repo_config_bytes",
    ] {
        assert!(refused.body.contains(needed), "{needed}: {}", refused.body);
    }
    let grown_mib = peak_kib().saturating_sub(before) / 1024;
    assert!(grown_mib < 100, "the server grew by {grown_mib} MiB");

    // The server keeps answering: the next pull request is planned.
    let next = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("open pr");
    w.comment_containing(next, "Plan:").await;
    w.stop().await;
}
