//! A `moved` block through a pull request: the plan comment shows the move with nothing to add
//! or destroy, `atlantis apply` renames the container in atoll's state alone (it keeps
//! running), a failing `check` is warned in the plan comment and again in the apply comment,
//! and the next plan is empty.

use std::time::{Duration, Instant};

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use atoll::store::StateScope;
use model::ForgeKind;
use pvesim::GuestEvent;

fn scope() -> StateScope {
    StateScope {
        repo: format!("github.com/{REPO}"),
        project_dir: "envs/dev".to_owned(),
        workspace: "default".to_owned(),
    }
}

async fn in_state(w: &TestApp) -> Vec<String> {
    let rows = w.store.state().state_list(&scope()).await.expect("state");
    rows.into_iter().map(|r| r.address).collect()
}

/// Waits until `n` of atoll's comments on `pr` contain `needle`; returns the last.
async fn nth_comment(w: &TestApp, pr: u64, needle: &str, n: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = w.comments_containing(pr, needle);
        if found.len() >= n {
            return found[n - 1].body.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no comment #{n} containing {needle:?}: {:#?}",
            w.bot_comments(pr)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_block_in_a_pull_request_renames_state_and_never_touches_the_guest() {
    let w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let ct = Container::new("web").vm_id(955).hcl();
    let pr = w
        .open_pr("alice", "web", &[("envs/dev/main.tf", &ct)])
        .await;
    w.comment_containing(pr, "Plan:").await;
    w.approve_and_apply(pr).await;
    w.comment_containing(pr, "Apply complete").await;
    assert_eq!(
        in_state(&w).await,
        ["proxmox_virtual_environment_container.web"]
    );
    let before = w.sim().guest_events(955).len();

    let main = "module \"lxc\" {\n  source = \"./modules/lxc\"\n}\nmoved {\n  from = proxmox_virtual_environment_container.web\n  to   = module.lxc.proxmox_virtual_environment_container.web\n}\n\
        variable \"want\" {\n  default = 1\n}\n\
        check \"want\" {\n  assert {\n    condition     = var.want == 2\n    error_message = \"want is not two\"\n  }\n}\n";
    w.fake()
        .push(
            REPO,
            pr,
            &[
                ("envs/dev/main.tf", main),
                ("envs/dev/modules/lxc/main.tf", &ct),
            ],
        )
        .await
        .expect("push");
    let plan = nth_comment(&w, pr, "Plan:", 2).await;
    assert!(
        plan.contains("# proxmox_virtual_environment_container.web has moved to module.lxc.proxmox_virtual_environment_container.web"),
        "{plan}"
    );
    assert!(
        plan.contains("0 to add, 0 to change, 0 to destroy"),
        "{plan}"
    );
    w.say(pr, "alice", "atlantis apply").await;
    nth_comment(&w, pr, "Apply complete", 2).await;
    assert_eq!(
        in_state(&w).await,
        ["module.lxc.proxmox_virtual_environment_container.web"]
    );
    let events = w.sim().guest_events(955);
    assert!(
        !events[before..]
            .iter()
            .any(|e| matches!(e, GuestEvent::Stopped | GuestEvent::Started)),
        "never stopped: {events:?}"
    );
    w.say(pr, "alice", "atlantis plan -d envs/dev").await;
    let again = nth_comment(&w, pr, "No changes", 1).await;
    assert!(!again.contains("has moved"), "{again}");
}
