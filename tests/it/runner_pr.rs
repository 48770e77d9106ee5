//! The PR workflow end to end, black-box, for GitHub and Gitea: the fake forge sends signed webhooks to a real atoll
//! server (SQLite in a temp dir, the runner registered), which checks out real git, plans
//! against the Proxmox simulator and comments back through the forge's API client.

use std::time::{Duration, Instant};

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use fakeforge::ReviewAction;
use model::ForgeKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_opened_pr_is_planned_apply_waits_for_approval_then_runs() {
    opened_pr_is_planned_apply_waits_for_approval_then_runs(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_opened_pr_is_planned_apply_waits_for_approval_then_runs() {
    opened_pr_is_planned_apply_waits_for_approval_then_runs(ForgeKind::Gitea).await;
}

async fn opened_pr_is_planned_apply_waits_for_approval_then_runs(kind: ForgeKind) {
    let mut w = TestApp::start(Options::new(kind)).await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "web",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("open pr");
    let plan = w.comment_containing(pr, "Plan:").await;
    assert!(plan.body.contains("dir: envs/dev"), "{}", plan.body);
    assert!(
        plan.body.contains("atoll apply -d envs/dev"),
        "{}",
        plan.body
    );
    // The aggregate status is set after the comment: wait for the job to end.
    w.finished_jobs("autoplan").await;
    let sha = w.fake().head_sha(REPO, pr).expect("sha");
    let statuses = w.fake().statuses(REPO, &sha);
    assert!(
        statuses
            .iter()
            .any(|s| s.context == "atlantis/plan" && s.state == "success"),
        "{statuses:?}"
    );

    w.fake().set_permission(REPO, "alice", "write");
    w.fake()
        .comment(REPO, pr, "alice", "atlantis apply")
        .await
        .expect("comment");
    let refused = w.comment_containing(pr, "Apply Failed").await;
    assert!(refused.body.contains("`approved`"), "{}", refused.body);

    // On Gitea only reviews by users with write access are official.
    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .review(REPO, pr, "bob", ReviewAction::Approve)
        .await
        .expect("approve");
    w.fake()
        .comment(REPO, pr, "alice", "atlantis apply")
        .await
        .expect("comment");
    let applied = w.comment_containing(pr, "Apply complete").await;
    assert!(applied.body.contains("web"), "{}", applied.body);
    assert!(applied.body.contains("done:"), "{}", applied.body);
    assert!(
        !applied.history.is_empty(),
        "apply comment was edited with progress"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_second_pr_on_the_same_dir_gets_a_lock_conflict_until_the_first_merges() {
    second_pr_on_the_same_dir_gets_a_lock_conflict_until_the_first_merges(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_second_pr_on_the_same_dir_gets_a_lock_conflict_until_the_first_merges() {
    second_pr_on_the_same_dir_gets_a_lock_conflict_until_the_first_merges(ForgeKind::Gitea).await;
}

async fn second_pr_on_the_same_dir_gets_a_lock_conflict_until_the_first_merges(kind: ForgeKind) {
    let mut w = TestApp::start(Options::new(kind)).await;
    let first = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "a",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr 1");
    w.comment_containing(first, "Plan:").await;
    let second = w
        .fake()
        .open_pr(
            REPO,
            "carol",
            "b",
            &[("envs/dev/main.tf", &Container::new("web").cores(3).hcl())],
        )
        .await
        .expect("pr 2");
    let conflict = w.comment_containing(second, "locked by pull request").await;
    assert!(
        conflict.body.contains(&format!("#{first}")),
        "{}",
        conflict.body
    );
    assert!(
        conflict.body.contains("`atoll plan -d envs/dev`"),
        "{}",
        conflict.body
    );
    w.fake().merge(REPO, first).await.expect("merge");
    w.comment_containing(first, "Locks released").await;
    w.fake()
        .comment(REPO, second, "carol", "atlantis plan -d envs/dev")
        .await
        .expect("replan");
    w.comment_containing(second, "Plan:").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_unlock_with_dir_releases_only_that_lock() {
    unlock_with_dir_releases_only_that_lock(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_unlock_with_dir_releases_only_that_lock() {
    unlock_with_dir_releases_only_that_lock(ForgeKind::Gitea).await;
}

async fn unlock_with_dir_releases_only_that_lock(kind: ForgeKind) {
    let mut w = TestApp::start(Options::new(kind)).await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "two",
            &[
                ("envs/x/main.tf", &Container::new("x").cores(1).hcl()),
                ("envs/y/main.tf", &Container::new("y").cores(1).hcl()),
            ],
        )
        .await
        .expect("pr");
    w.comment_containing(pr, "Ran Plan for 2 projects").await;
    w.fake()
        .comment(REPO, pr, "alice", "atlantis unlock -d envs/x")
        .await
        .expect("unlock");
    let reply = w.comment_containing(pr, "Released 1 lock").await;
    assert!(reply.body.contains("envs/x"), "{}", reply.body);
    assert!(!reply.body.contains("envs/y"), "{}", reply.body);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_apply_after_a_new_commit_is_refused_as_stale() {
    apply_after_a_new_commit_is_refused_as_stale(ForgeKind::Github).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_apply_after_a_new_commit_is_refused_as_stale() {
    apply_after_a_new_commit_is_refused_as_stale(ForgeKind::Gitea).await;
}

async fn apply_after_a_new_commit_is_refused_as_stale(kind: ForgeKind) {
    let mut w = TestApp::start(Options::new(kind)).await;
    let yaml = "version: 3\nprojects:\n  - dir: envs/dev\n    autoplan:\n      enabled: false\n";
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "stale",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").cores(2).hcl()),
            ],
        )
        .await
        .expect("pr");
    w.fake()
        .comment(REPO, pr, "alice", "atlantis plan -d envs/dev")
        .await
        .expect("plan");
    w.comment_containing(pr, "Plan:").await;
    w.fake()
        .push(
            REPO,
            pr,
            &[("envs/dev/main.tf", &Container::new("web").cores(4).hcl())],
        )
        .await
        .expect("push");
    w.approve_and_apply(pr).await;
    let stale = w.comment_containing(pr, "the plan is stale").await;
    assert!(
        stale.body.contains("new commits were pushed"),
        "{}",
        stale.body
    );
    assert!(stale.body.contains("plan -d envs/dev"), "{}", stale.body);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitea_pr_closed_without_merging_releases_its_locks() {
    let mut w = TestApp::start(Options::new(ForgeKind::Gitea)).await;
    let first = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "a",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr 1");
    w.comment_containing(first, "Plan:").await;
    w.fake().close(REPO, first).await.expect("close");
    w.comment_containing(first, "Locks released").await;
    let second = w
        .fake()
        .open_pr(
            REPO,
            "carol",
            "b",
            &[("envs/dev/main.tf", &Container::new("web").cores(3).hcl())],
        )
        .await
        .expect("pr 2");
    let plan = w.comment_containing(second, "Plan:").await;
    assert!(!plan.body.contains("locked by"), "{}", plan.body);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_escape_and_shell_words_in_flags_are_refused_without_a_plan() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let yaml = "version: 3\nprojects:\n  - dir: envs/dev\n    autoplan:\n      enabled: false\n";
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "evil",
            &[
                ("atlantis.yaml", yaml),
                ("envs/dev/main.tf", &Container::new("web").cores(2).hcl()),
            ],
        )
        .await
        .expect("pr");
    for bad in ["atlantis plan -d ../../etc", "atlantis plan -w 'a;id'"] {
        w.fake()
            .comment(REPO, pr, "alice", bad)
            .await
            .expect("comment");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let replies: Vec<_> = w
            .fake()
            .comments(REPO, pr)
            .into_iter()
            .filter(|c| c.author == "atoll-bot")
            .collect();
        if replies.len() >= 2 {
            assert!(
                replies.iter().all(|c| !c.body.contains("Plan:")),
                "{replies:#?}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "{replies:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let locks = w
        .observer()
        .await
        .locks()
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("locks");
    assert!(locks.is_empty(), "no plan ran, so no lock: {locks:?}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_new_plan_hides_the_superseded_plan_comment() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "re",
            &[("envs/dev/main.tf", &Container::new("web").cores(2).hcl())],
        )
        .await
        .expect("pr");
    let first = w.comment_containing(pr, "cores        = 2").await;
    w.fake()
        .push(
            REPO,
            pr,
            &[("envs/dev/main.tf", &Container::new("web").cores(3).hcl())],
        )
        .await
        .expect("push");
    w.comment_containing(pr, "cores        = 3").await;
    w.comment_hidden(pr, first.id, "old plan comment not hidden")
        .await;
    w.stop().await;
}

/// Sets `cores` of the PR's only container on the simulator, as someone might by hand; returns
/// its VMID.
async fn set_cores_behind_atolls_back(w: &TestApp, cores: u32) -> u32 {
    use atoll::proxmox::client::ConfigChange;
    let pve = w.pve();
    let guests = pve.cluster_guests().await.expect("cluster guests");
    let [guest] = guests.as_slice() else {
        panic!("expected one guest, found {guests:?}");
    };
    let change = ConfigChange {
        set: [("cores".to_owned(), cores.to_string())]
            .into_iter()
            .collect(),
        ..ConfigChange::default()
    };
    pve.guest_update_config(
        &guest.node,
        atoll::proxmox::types::GuestKind::Lxc,
        guest.vmid,
        &change,
    )
    .await
    .expect("changing the guest");
    guest.vmid.get()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_is_refused_naming_the_change_when_the_guest_changed_on_the_cluster_since_the_plan() {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let tf = |cores| [("envs/dev/main.tf", Container::new("web").cores(cores).hcl())];
    let files = tf(1);
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let pr = w
        .fake()
        .open_pr(REPO, "alice", "web", &files)
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    w.approve_and_apply(pr).await;
    w.comment_containing(pr, "Apply complete").await;
    let files = tf(2);
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    w.fake().push(REPO, pr, &files).await.expect("push");
    w.comment_containing(pr, "1 to change").await;
    let vmid = set_cores_behind_atolls_back(&w, 6).await;
    w.fake()
        .comment(REPO, pr, "alice", "atlantis apply")
        .await
        .expect("apply");
    let stale = w
        .comment_containing(pr, "the cluster changed since this plan")
        .await;
    assert!(
        stale
            .body
            .contains(&format!("CT {vmid} \\(cores 1 -&gt; 6\\)")),
        "{}",
        stale.body
    );
    assert!(stale.body.contains("plan -d envs/dev"), "{}", stale.body);
    let config = w
        .pve()
        .guest_config(
            &"pve".parse().expect("node"),
            atoll::proxmox::types::GuestKind::Lxc,
            atoll::proxmox::types::VmId::new(vmid).expect("vmid"),
            true,
        )
        .await
        .expect("config");
    assert_eq!(config.get("cores").as_deref(), Some("6"), "not overwritten");
    w.stop().await;
}
