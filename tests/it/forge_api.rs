//! Every `Forge` operation against the fake GitHub and the fake Gitea, over HTTP.

use crate::forge_support;

use atoll::forge::{
    CommentId, CommitSha, CommitStatus, Forge, ForgeError, GiteaApi, GiteaApiSettings,
    MergeRequest, MergeStyle, Mergeable, Permission, PrState, Reaction, StatusKind, StatusState,
};
use fakeforge::{FAKE_TOKEN, ReviewAction};
use forge_support::{REPO, setup};
use model::ForgeKind;

per_forge!(
    pull_request_reports_head_base_author_and_clone_url,
    mergeability_is_tri_state_and_draft_blocks_it,
    changed_files_follow_every_page,
    approval_counts_until_dismissed,
    changes_requested_after_approval_by_the_same_reviewer_revokes_it,
    approval_after_a_new_commit_follows_forge_semantics,
    comment_is_created_edited_and_hidden,
    comment_over_the_limit_is_refused_before_sending,
    statuses_carry_context_description_and_job_link,
    reaction_lands_on_the_command_comment,
    permission_decides_who_may_apply,
    merged_and_closed_states_are_reported,
    approval_by_a_reviewer_without_write_access_does_not_count,
    fork_pull_request_names_the_fork_as_its_head_repository,
    merge_is_refused_for_a_moved_head_then_merges_and_deletes_the_branch,
);

async fn pull_request_reports_head_base_author_and_clone_url(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "cores-4", &[("envs/dev/main.tf", "x")])
        .await
        .expect("pr");
    let pr = s.forge.pull_request(&s.repo, n).await.expect("get pr");
    assert_eq!(pr.number, n);
    assert_eq!(pr.author, "alice");
    assert_eq!(pr.head_ref, "cores-4");
    assert_eq!(pr.base_ref, "main");
    assert_eq!(pr.state, PrState::Open);
    assert_eq!(pr.head_sha.as_str(), s.fake.head_sha(REPO, n).expect("sha"));
    assert_ne!(pr.head_sha, pr.base_sha);
    assert_eq!(pr.clone_url, s.fake.clone_url(REPO).expect("url"));
    assert_eq!(
        pr.base_clone_url, pr.clone_url,
        "not a fork: one repository"
    );
    assert_eq!(pr.mergeable, Mergeable::Yes);
    assert!(!pr.from_fork);
    assert_eq!(pr.head_repo.as_deref(), Some(REPO));
}

async fn fork_pull_request_names_the_fork_as_its_head_repository(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_fork_pr(REPO, "mallory", "mallory", "evil", &[("a.tf", "x")])
        .await
        .expect("fork pr");
    let pr = s.forge.pull_request(&s.repo, n).await.expect("get pr");
    assert!(pr.from_fork);
    assert_eq!(pr.head_repo.as_deref(), Some("mallory/infra"));
    assert_eq!(
        pr.clone_url,
        s.fake.clone_url("mallory/infra").expect("fork url")
    );
    assert_eq!(pr.base_clone_url, s.fake.clone_url(REPO).expect("base url"));
    assert_eq!(pr.head_sha.as_str(), s.fake.head_sha(REPO, n).expect("sha"));
}

async fn approval_by_a_reviewer_without_write_access_does_not_count(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    s.fake.set_permission(REPO, "reader", "read");
    s.fake
        .review(REPO, n, "reader", ReviewAction::Approve)
        .await
        .expect("review");
    let approval = s
        .forge
        .approval(&s.repo, n, "alice")
        .await
        .expect("approval");
    assert!(!approval.is_approved(), "{approval:?}");
    s.fake.set_permission(REPO, "writer", "write");
    s.fake
        .review(REPO, n, "writer", ReviewAction::Approve)
        .await
        .expect("review");
    let approval = s
        .forge
        .approval(&s.repo, n, "alice")
        .await
        .expect("approval");
    assert_eq!(approval.approved_by, vec!["writer".to_owned()]);
    // Never the author's own approval, whatever the forge lets through.
    let approval = s
        .forge
        .approval(&s.repo, n, "writer")
        .await
        .expect("approval");
    assert!(!approval.is_approved(), "{approval:?}");
}

async fn mergeability_is_tri_state_and_draft_blocks_it(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    s.fake
        .set_mergeable(REPO, n, Some(false), "dirty")
        .expect("set");
    let pr = s.forge.pull_request(&s.repo, n).await.expect("get pr");
    assert!(
        matches!(pr.mergeable, Mergeable::No { .. }),
        "{:?}",
        pr.mergeable
    );
    if kind == ForgeKind::Github {
        s.fake.set_mergeable(REPO, n, None, "unknown").expect("set");
        let pr = s.forge.pull_request(&s.repo, n).await.expect("get pr");
        assert_eq!(pr.mergeable, Mergeable::Unknown);
        s.fake
            .set_mergeable(REPO, n, Some(true), "blocked")
            .expect("set");
        let pr = s.forge.pull_request(&s.repo, n).await.expect("get pr");
        assert!(matches!(pr.mergeable, Mergeable::No { reason } if reason.contains("protection")));
    }
}

async fn changed_files_follow_every_page(kind: ForgeKind) {
    let s = setup(kind).await;
    let names: Vec<String> = (0..250)
        .map(|i| format!("stacks/s{i:03}/main.tf"))
        .collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "resource")).collect();
    let n = s
        .fake
        .open_pr(REPO, "alice", "many", &files)
        .await
        .expect("pr");
    let mut got: Vec<String> = s
        .forge
        .changed_files(&s.repo, n)
        .await
        .expect("files")
        .into_iter()
        .map(|f| f.path)
        .collect();
    got.sort();
    assert_eq!(got, names);
    let pages = s
        .fake
        .requests()
        .iter()
        .filter(|r| r.contains("/files"))
        .count();
    let expected_pages = if kind == ForgeKind::Github { 3 } else { 5 };
    assert_eq!(pages, expected_pages, "one request per page");

    if kind == ForgeKind::Gitea {
        // Asking for more per page than the server's cap still reads everything.
        let mut settings = GiteaApiSettings::new(&s.fake.api_url(), FAKE_TOKEN.to_owned().into());
        settings.page_size = 100;
        let capped = GiteaApi::new(&settings).expect("client");
        let all = capped.changed_files(&s.repo, n).await.expect("files");
        assert_eq!(all.len(), 250);
    }

    s.fake
        .set_files(
            REPO,
            n,
            vec![("new/main.tf".into(), Some("old/main.tf".into()))],
        )
        .expect("set files");
    let renamed = s.forge.changed_files(&s.repo, n).await.expect("files");
    assert_eq!(renamed[0].previous_path.as_deref(), Some("old/main.tf"));
}

async fn approval_counts_until_dismissed(kind: ForgeKind) {
    let s = setup(kind).await;
    s.fake.set_permission(REPO, "bob", "write");
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    assert!(
        !s.forge
            .approval(&s.repo, n, "alice")
            .await
            .expect("approval")
            .is_approved()
    );
    let review = s
        .fake
        .review(REPO, n, "bob", ReviewAction::Approve)
        .await
        .expect("review");
    let approval = s
        .forge
        .approval(&s.repo, n, "alice")
        .await
        .expect("approval");
    assert_eq!(approval.approved_by, vec!["bob".to_owned()]);
    s.fake.dismiss_review(REPO, n, review).expect("dismiss");
    assert!(
        !s.forge
            .approval(&s.repo, n, "alice")
            .await
            .expect("approval")
            .is_approved()
    );
}

async fn changes_requested_after_approval_by_the_same_reviewer_revokes_it(kind: ForgeKind) {
    let s = setup(kind).await;
    s.fake.set_permission(REPO, "bob", "write");
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    s.fake
        .review(REPO, n, "bob", ReviewAction::Approve)
        .await
        .expect("review");
    s.fake
        .review(REPO, n, "bob", ReviewAction::Comment)
        .await
        .expect("review");
    assert!(
        s.forge
            .approval(&s.repo, n, "alice")
            .await
            .expect("approval")
            .is_approved(),
        "a comment keeps the approval"
    );
    s.fake
        .review(REPO, n, "bob", ReviewAction::RequestChanges)
        .await
        .expect("review");
    assert!(
        !s.forge
            .approval(&s.repo, n, "alice")
            .await
            .expect("approval")
            .is_approved()
    );
}

async fn approval_after_a_new_commit_follows_forge_semantics(kind: ForgeKind) {
    let s = setup(kind).await;
    s.fake.set_permission(REPO, "bob", "write");
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    s.fake
        .review(REPO, n, "bob", ReviewAction::Approve)
        .await
        .expect("review");
    s.fake.push(REPO, n, &[("a.tf", "y")]).await.expect("push");
    let approved = s
        .forge
        .approval(&s.repo, n, "alice")
        .await
        .expect("approval")
        .is_approved();
    // GitHub keeps approvals across pushes (unless branch protection dismisses them, which
    // shows as DISMISSED); Gitea marks them stale.
    assert_eq!(approved, kind == ForgeKind::Github);
}

async fn comment_is_created_edited_and_hidden(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let id = s
        .forge
        .create_comment(&s.repo, n, "plan v1")
        .await
        .expect("create");
    s.forge
        .edit_comment(&s.repo, id, "plan v1, edited")
        .await
        .expect("edit");
    s.forge
        .hide_comment(&s.repo, id, "plan for envs/dev")
        .await
        .expect("hide");
    let comments = s.fake.comments(REPO, n);
    assert_eq!(comments.len(), 1);
    let c = &comments[0];
    assert_eq!(c.id, id.0);
    assert_eq!(c.author, "atoll-bot");
    assert_eq!(c.history[0], "plan v1");
    match kind {
        ForgeKind::Github => {
            assert_eq!(c.minimized.as_deref(), Some("OUTDATED"));
            assert_eq!(c.body, "plan v1, edited");
        }
        ForgeKind::Gitea => {
            assert!(
                c.body
                    .starts_with("<details><summary>Superseded: plan for envs/dev</summary>"),
                "{}",
                c.body
            );
            assert!(c.body.contains("plan v1, edited"));
            s.forge
                .hide_comment(&s.repo, id, "again")
                .await
                .expect("hide twice");
            assert_eq!(
                s.fake.comments(REPO, n)[0].history.len(),
                2,
                "hiding twice folds once"
            );
        }
    }
    let missing = s.forge.edit_comment(&s.repo, CommentId(999_999), "x").await;
    assert!(
        matches!(missing, Err(atoll::forge::ForgeError::NotFound { .. })),
        "{missing:?}"
    );
}

async fn comment_over_the_limit_is_refused_before_sending(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let limit = s.forge.max_comment_chars();
    assert_eq!(limit, 65_536);
    let at_limit = "é".repeat(limit);
    s.forge
        .create_comment(&s.repo, n, &at_limit)
        .await
        .expect("exactly at the limit is fine");
    let before = s.fake.requests().len();
    let err = s
        .forge
        .create_comment(&s.repo, n, &format!("{at_limit}x"))
        .await
        .expect_err("over the limit");
    assert!(err.to_string().contains("split it"), "{err}");
    assert_eq!(s.fake.requests().len(), before, "nothing was sent");
}

async fn statuses_carry_context_description_and_job_link(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let sha = CommitSha::parse(&s.fake.head_sha(REPO, n).expect("sha")).expect("sha");
    let project = CommitStatus::project(
        StatusKind::Plan,
        "envs/dev",
        "default",
        StatusState::Pending,
        "planning",
    )
    .with_target_url("http://atoll.example/jobs/42");
    s.forge
        .set_status(&s.repo, &sha, &project)
        .await
        .expect("status");
    let long = "x".repeat(500);
    let aggregate = CommitStatus::aggregate(StatusKind::Plan, StatusState::Success, &long);
    s.forge
        .set_status(&s.repo, &sha, &aggregate)
        .await
        .expect("long description is cut, not refused");
    let got = s.fake.statuses(REPO, sha.as_str());
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].context, "atlantis/plan: envs/dev/default");
    assert_eq!(got[0].state, "pending");
    assert_eq!(
        got[0].target_url.as_deref(),
        Some("http://atoll.example/jobs/42")
    );
    assert_eq!(got[1].context, "atlantis/plan");
    assert_eq!(got[1].description.chars().count(), 140);
}

async fn reaction_lands_on_the_command_comment(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let cmd = s
        .fake
        .comment(REPO, n, "alice", "atlantis plan")
        .await
        .expect("comment");
    s.forge
        .react(&s.repo, CommentId(cmd), Reaction::Eyes)
        .await
        .expect("react");
    s.forge
        .react(&s.repo, CommentId(cmd), Reaction::Eyes)
        .await
        .expect("reacting twice is fine");
    let c = s
        .fake
        .comments(REPO, n)
        .into_iter()
        .find(|c| c.id == cmd)
        .expect("comment");
    assert_eq!(
        c.reactions,
        vec![("atoll-bot".to_owned(), "eyes".to_owned())]
    );
}

async fn permission_decides_who_may_apply(kind: ForgeKind) {
    let s = setup(kind).await;
    s.fake.set_permission(REPO, "bob", "write");
    s.fake.set_permission(
        REPO,
        "root",
        if kind == ForgeKind::Gitea {
            "owner"
        } else {
            "admin"
        },
    );
    let bob = s.forge.permission(&s.repo, "bob").await.expect("perm");
    let root = s.forge.permission(&s.repo, "root").await.expect("perm");
    let eve = s.forge.permission(&s.repo, "eve").await.expect("perm");
    assert_eq!(
        (bob, root, eve),
        (Permission::Write, Permission::Admin, Permission::Read)
    );
    assert!(bob.can_apply() && root.can_apply() && !eve.can_apply());
    let bot = s
        .forge
        .permission(&s.repo, "atoll[bot]")
        .await
        .expect("bot names are escaped");
    assert_eq!(bot, Permission::Read);
}

async fn merged_and_closed_states_are_reported(kind: ForgeKind) {
    let s = setup(kind).await;
    let a = s
        .fake
        .open_pr(REPO, "alice", "a", &[("a.tf", "x")])
        .await
        .expect("pr");
    let b = s
        .fake
        .open_pr(REPO, "alice", "b", &[("b.tf", "x")])
        .await
        .expect("pr");
    s.fake.merge(REPO, a).await.expect("merge");
    s.fake.close(REPO, b).await.expect("close");
    assert_eq!(
        s.forge.pull_request(&s.repo, a).await.expect("pr").state,
        PrState::Merged
    );
    assert_eq!(
        s.forge.pull_request(&s.repo, b).await.expect("pr").state,
        PrState::Closed
    );
}

async fn merge_is_refused_for_a_moved_head_then_merges_and_deletes_the_branch(kind: ForgeKind) {
    let s = setup(kind).await;
    let n = s
        .fake
        .open_pr(REPO, "alice", "feature/x", &[("a.tf", "x")])
        .await
        .expect("pr");
    let pr = s.forge.pull_request(&s.repo, n).await.expect("get pr");
    let moved = MergeRequest {
        style: MergeStyle::Rebase,
        head_sha: &pr.base_sha,
        delete_branch: Some("feature/x"),
    };
    let err = s
        .forge
        .merge_pull(&s.repo, n, &moved)
        .await
        .expect_err("the head is not base_sha");
    assert!(
        matches!(&err, ForgeError::Rejected { message, .. } if message.starts_with("HTTP 409")),
        "{err}"
    );
    assert!(s.fake.branch_exists(REPO, "feature/x").await);
    let request = MergeRequest {
        head_sha: &pr.head_sha,
        ..moved
    };
    let merged = s
        .forge
        .merge_pull(&s.repo, n, &request)
        .await
        .expect("merge");
    assert_eq!(merged.branch_deleted, Ok(true));
    assert_eq!(s.fake.merged_with(REPO, n).as_deref(), Some("rebase"));
    assert!(!s.fake.branch_exists(REPO, "feature/x").await);
    let after = s.forge.pull_request(&s.repo, n).await.expect("get pr");
    assert_eq!(after.state, PrState::Merged);
    let again = s.forge.merge_pull(&s.repo, n, &request).await;
    assert!(
        matches!(&again, Err(ForgeError::Rejected { message, .. }) if message.starts_with("HTTP 405")),
        "{again:?}"
    );
}
