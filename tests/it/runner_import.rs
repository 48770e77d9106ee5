//! `atlantis import` and `atlantis state rm` through the fake forge and the simulator: off
//! unless the server allows them (and `help` lists only what it allows); with them allowed, a
//! container atoll manages is forgotten by `state rm` (still on the cluster) and taken back by
//! `import`, each changing atoll's state only, discarding the project's saved plan and leaving
//! an audit event; `import_requirements` are checked; bad addresses, an id that names another
//! guest, an address already in state and one not in state get Terraform's errors.

use crate::app_support::{Options, REPO, TestApp};
use crate::support::Container;
use atoll::locks::AuditAction;
use atoll::store::StateScope;
use model::ForgeKind;

const WEB: &str = "proxmox_virtual_environment_container.web";

fn allowing_all() -> Options {
    Options {
        extra: "commands: {allow_commands: [all]}\n".to_owned(),
        ..Options::new(ForgeKind::Github)
    }
}

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

/// Opens a PR with container `web` (VMID 950) and applies it.
async fn applied_pr(w: &TestApp) -> u64 {
    let main = Container::new("web").vm_id(950).hcl();
    let pr = w
        .fake()
        .open_pr(REPO, "alice", "web", &[("envs/dev/main.tf", &main)])
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    w.approve_and_apply(pr).await;
    w.comment_containing(pr, "Apply complete").await;
    assert_eq!(in_state(w).await, [WEB]);
    pr
}

/// Comments `atlantis plan -d envs/dev` and returns the plan comment that answers it.
async fn plan_again(w: &TestApp, pr: u64) -> String {
    let before = w.bot_comments(pr).len();
    say(w, pr, "atlantis plan -d envs/dev").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let answer = w
            .bot_comments(pr)
            .into_iter()
            .skip(before)
            .find(|c| c.body.contains("envs/dev"));
        if let Some(comment) = answer {
            return comment.body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no plan: {:#?}",
            w.bot_comments(pr)
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn say(w: &TestApp, pr: u64, text: &str) {
    w.fake()
        .comment(REPO, pr, "alice", text)
        .await
        .expect("comment");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_rm_forgets_and_import_takes_back_a_container_without_touching_the_cluster() {
    let mut w = TestApp::start(allowing_all()).await;
    let pr = applied_pr(&w).await;

    say(&w, pr, &format!("atlantis state rm {WEB} -d envs/dev")).await;
    let removed = w.comment_containing(pr, "State rm complete").await;
    assert!(
        removed.body.contains(&format!("Removed {WEB}\n")),
        "{}",
        removed.body
    );
    assert!(
        removed
            .body
            .contains("Successfully removed 1 resource instance(s)."),
        "{}",
        removed.body
    );
    assert!(
        removed.body.contains("nothing on the cluster changed"),
        "{}",
        removed.body
    );
    assert!(in_state(&w).await.is_empty());
    let guests = w.pve().cluster_guests().await.expect("guests");
    assert_eq!(guests.len(), 1, "the container stays on the cluster");

    // The guest carries atoll's tag and the configuration still declares its vm_id: the next
    // plan adopts it again, with nothing to create.
    let replanned = plan_again(&w, pr).await;
    assert!(replanned.contains("No changes"), "{replanned}");
    assert!(!replanned.contains("will be created"), "{replanned}");
    assert!(in_state(&w).await.is_empty(), "a plan writes no state");

    // Without atoll's tag the guest is someone else's: the plan would create it anew (and the
    // apply fail on its VMID), so it is imported back below.
    let id = atoll::proxmox::types::VmId::new(950).expect("id");
    let node: atoll::proxmox::types::NodeName = "pve".parse().expect("node");
    let untag = atoll::proxmox::client::ConfigChange {
        set: [("tags".to_owned(), "theirs".to_owned())].into(),
        ..Default::default()
    };
    w.pve()
        .guest_update_config(&node, atoll::proxmox::types::GuestKind::Lxc, id, &untag)
        .await
        .expect("removing atoll's tag");
    let unmanaged = plan_again(&w, pr).await;
    assert!(unmanaged.contains("Plan: 1 to add"), "{unmanaged}");

    // Not in state any more: Terraform's error, and nothing else changes.
    say(&w, pr, &format!("atlantis state rm {WEB} -d envs/dev")).await;
    let missing = w.comment_containing(pr, "State rm Error").await;
    assert!(
        missing.body.contains("No matching objects found"),
        "{}",
        missing.body
    );

    // Another guest's id than the configuration declares: the import block's error.
    say(
        &w,
        pr,
        &format!("atlantis import {WEB} pve/951 -d envs/dev"),
    )
    .await;
    let wrong = w.comment_containing(pr, "Import Error").await;
    assert!(
        wrong
            .body
            .contains("Import id does not match the configuration"),
        "{}",
        wrong.body
    );
    assert!(in_state(&w).await.is_empty());

    // An address the configuration does not declare: Terraform's import error.
    say(
        &w,
        pr,
        "atlantis import proxmox_virtual_environment_container.db pve/950 -d envs/dev",
    )
    .await;
    let undeclared = w
        .comment_containing(pr, "does not exist in the configuration")
        .await;
    assert!(
        undeclared
            .body
            .contains("resource \"proxmox_virtual_environment_container\" \"db\""),
        "{}",
        undeclared.body
    );

    // A comment's words reach the reply only inside its code block, never the next step.
    say(
        &w,
        pr,
        "atlantis import 'proxmox_virtual_environment_container.web[\"<img src=x> @admins\"]' pve/950 -d envs/dev",
    )
    .await;
    let odd = w.comment_containing(pr, "<img src=x>").await;
    assert!(!odd.body.contains("@admins"), "{}", odd.body);
    let next = odd
        .body
        .lines()
        .find(|l| l.starts_with("Fix the cause"))
        .unwrap_or_else(|| panic!("{}", odd.body));
    assert_eq!(next, "Fix the cause, then comment `atoll import` again.");
    say(
        &w,
        pr,
        &format!("atlantis import {WEB} pve/950 -d envs/dev"),
    )
    .await;
    let imported = w.comment_containing(pr, "Import complete").await;
    assert!(
        imported.body.contains("stands for CT 950 on node pve"),
        "{}",
        imported.body
    );
    assert!(
        imported.body.contains("`atoll plan -d envs/dev`"),
        "{}",
        imported.body
    );
    assert_eq!(in_state(&w).await, [WEB]);
    // The plan made before the import (`1 to add`) is no longer the PR's plan to apply.
    assert!(
        imported
            .body
            .contains("The saved plan of this project was discarded."),
        "{}",
        imported.body
    );
    let query = atoll::locks::PlanQuery {
        repo: format!("github.com/{REPO}"),
        pr,
        current_only: true,
    };
    let current = w.store.plans().plan_list(&query).await.expect("plans");
    assert!(current.is_empty(), "{current:?}");

    // Already in state: Terraform's error.
    say(
        &w,
        pr,
        &format!("atlantis import {WEB} pve/950 -d envs/dev"),
    )
    .await;
    let managed = w.comment_containing(pr, "already managing").await;
    assert!(
        managed.body.contains(&format!("atlantis state rm {WEB}")),
        "{}",
        managed.body
    );

    // After the import the plan changes only what differs: atoll's tag, in place.
    let plan = plan_again(&w, pr).await;
    assert!(
        plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    assert!(plan.contains("tags"), "{plan}");

    let events = w.store.audit().audit_list(50, None).await.expect("audit");
    let ours: Vec<_> = events
        .iter()
        .filter(|e| matches!(e.action, AuditAction::Import | AuditAction::StateRm))
        .collect();
    assert_eq!(ours.len(), 2, "{events:#?}");
    assert!(ours.iter().all(|e| e.actor.name == "alice"), "{ours:#?}");
    assert!(
        ours.iter()
            .any(|e| e.action == AuditAction::Import && e.detail.contains("pve/950")),
        "{ours:#?}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_and_state_rm_are_refused_unless_the_server_allows_them_and_help_lists_only_the_allowed()
 {
    let mut w = TestApp::start(Options::new(ForgeKind::Github)).await;
    let main = Container::new("web").vm_id(950).hcl();
    let pr = w
        .fake()
        .open_pr(REPO, "alice", "web", &[("envs/dev/main.tf", &main)])
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    say(&w, pr, &format!("atlantis import {WEB} pve/950")).await;
    let refused = w
        .comment_containing(pr, "`import` is not allowed on this server")
        .await;
    assert!(
        refused
            .body
            .contains("(commands.allow_commands): plan, apply, unlock, cancel, help, version, approve_policies."),
        "{}",
        refused.body
    );
    say(&w, pr, &format!("atlantis state rm {WEB}")).await;
    w.comment_containing(pr, "`state` is not allowed on this server")
        .await;
    say(&w, pr, "atlantis help").await;
    let help = w.comment_containing(pr, "Commands:").await;
    assert!(help.body.contains("atoll plan"), "{}", help.body);
    assert!(!help.body.contains("import"), "{}", help.body);
    assert!(!help.body.contains("state rm"), "{}", help.body);
    let jobs = w.store.list_jobs(100).await.expect("jobs");
    assert!(
        jobs.iter()
            .all(|j| j.kind != "import" && j.kind != "state_rm"),
        "a refused command queues no job: {jobs:?}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_waits_for_import_requirements_and_bad_addresses_and_ids_are_refused_by_the_parser()
{
    let mut w = TestApp::start(Options {
        requirements: "[]\n    import_requirements: [approved]",
        ..allowing_all()
    })
    .await;
    let main = Container::new("web").vm_id(950).hcl();
    let pr = w
        .fake()
        .open_pr(REPO, "alice", "web", &[("envs/dev/main.tf", &main)])
        .await
        .expect("pr");
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    say(&w, pr, &format!("atlantis import {WEB} pve/950")).await;
    let unmet = w.comment_containing(pr, "Import Failed").await;
    assert!(unmet.body.contains("import requirements"), "{}", unmet.body);
    assert!(unmet.body.contains("`approved`"), "{}", unmet.body);
    assert!(in_state(&w).await.is_empty());

    say(&w, pr, "atlantis import web pve/950").await;
    w.comment_containing(pr, "`web` is not a resource address")
        .await;
    say(&w, pr, &format!("atlantis import {WEB}")).await;
    w.comment_containing(pr, "`import` takes exactly ADDRESS and ID; got 1")
        .await;
    say(&w, pr, "atlantis state mv a.b c.d").await;
    w.comment_containing(pr, "invalid subcommand `mv`").await;
    w.stop().await;
}
