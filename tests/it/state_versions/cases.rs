//! The cases, written once against `dyn Store`.

use std::collections::BTreeMap;

use atoll::commands::{ProjectName, RepoDir, Workspace};
use atoll::locks::{Acquisition, LockKey, LockOwner, REMOTE_RUN};
use atoll::proxmox::plan::{GuestKind, StateEntry, StateValue};
use atoll::proxmox::state::{GeneratedEntry, StateHandle, secrets};
use atoll::store::{StateScope, VersionMeta, VersionReason};

use crate::support::TestStore;

fn scope(dir: &str) -> StateScope {
    StateScope {
        repo: "github.com/acme/infra".to_owned(),
        project_dir: dir.to_owned(),
        workspace: "default".to_owned(),
    }
}

fn guest(cores: &str) -> StateEntry {
    StateEntry::Guest {
        address: "proxmox_virtual_environment_container.web".to_owned(),
        resource_type: "proxmox_virtual_environment_container".to_owned(),
        kind: GuestKind::Lxc,
        node: "pve".to_owned(),
        vm_id: 150,
        attributes: BTreeMap::from([
            ("cores".to_owned(), StateValue::Plain(cores.to_owned())),
            (
                "password".to_owned(),
                StateValue::Fingerprint("f1ngerpr1nt0f7hepa55w0rd".to_owned()),
            ),
        ]),
    }
}

fn meta(actor: &str, reason: VersionReason) -> VersionMeta {
    VersionMeta {
        actor: actor.to_owned(),
        reason,
        job: Some(uuid::Uuid::new_v4()),
        commit: Some("0123456789abcdef0123456789abcdef01234567".to_owned()),
    }
}

pub(crate) async fn versions_are_numbered_per_scope_and_keep_no_secret(db: &TestStore) {
    let state = StateHandle::new(db.store.clone(), scope("envs/dev"));
    state.record(&guest("2")).await.expect("guest");
    state
        .record_generated(&GeneratedEntry {
            address: "random_password.root".to_owned(),
            resource_type: "random_password".to_owned(),
            arguments: BTreeMap::from([("length".to_owned(), "24".to_owned())]),
            values: secrets(BTreeMap::from([(
                "result".to_owned(),
                "s3cret-generated-value".to_owned(),
            )])),
        })
        .await
        .expect("generated");
    let first = meta("alice", VersionReason::Apply);
    assert_eq!(state.record_version(&first).await.expect("v1"), 1);
    state.record(&guest("4")).await.expect("changed");
    assert_eq!(
        state
            .record_version(&meta("bob", VersionReason::Import))
            .await
            .expect("v2"),
        2
    );
    let other = StateHandle::new(db.store.clone(), scope("envs/prod"));
    other.record(&guest("1")).await.expect("other guest");
    assert_eq!(
        other
            .record_version(&meta("carol", VersionReason::RemoteApply))
            .await
            .expect("other v1"),
        1,
        "versions are numbered per scope"
    );

    let listed = state.versions().await.expect("versions");
    let numbers: Vec<u32> = listed.iter().map(|v| v.version).collect();
    assert_eq!(numbers, [2, 1], "newest first");
    assert_eq!(listed[1].meta, first);
    assert_eq!(listed[1].resources, 2);
    assert!(listed.iter().all(|v| v.document.is_none()));

    let shown = state.version(1).await.expect("read v1").expect("v1 exists");
    assert_eq!(shown.version.meta.actor, "alice");
    let StateEntry::Guest { attributes, .. } = &shown.state.entries[0] else {
        panic!("expected the guest: {:?}", shown.state.entries);
    };
    assert_eq!(attributes["cores"], StateValue::Plain("2".to_owned()));
    assert_eq!(shown.state.generated[0].address, "random_password.root");
    let v2 = state.version(2).await.expect("read v2").expect("v2 exists");
    let StateEntry::Guest { attributes, .. } = &v2.state.entries[0] else {
        panic!("expected the guest");
    };
    assert_eq!(attributes["cores"], StateValue::Plain("4".to_owned()));

    // Nothing a version holds gives a secret away: not the value, not its fingerprint.
    let raw = db
        .store
        .state()
        .state_version(&scope("envs/dev"), 1)
        .await
        .expect("raw")
        .expect("v1");
    let text = raw.document.expect("document").to_string();
    assert!(!text.contains("s3cret-generated-value"), "{text}");
    assert!(!text.contains("f1ngerpr1nt0f7hepa55w0rd"), "{text}");
    assert!(state.version(3).await.expect("read v3").is_none());
}

fn key(project: Option<&str>) -> LockKey {
    LockKey {
        repo: "github.com/acme/infra".to_owned(),
        dir: RepoDir::parse("envs/dev").expect("dir"),
        workspace: Workspace::parse("default").expect("workspace"),
        project: project.map(|p| ProjectName::parse(p).expect("project")),
    }
}

fn owner(pr: u64, user: &str) -> LockOwner {
    LockOwner {
        pr,
        pr_url: String::new(),
        head_sha: "abc".to_owned(),
        user: user.to_owned(),
        job: None,
        summary: String::new(),
        forge: None,
    }
}

pub(crate) async fn remote_run_lock_waits_for_a_pull_requests_lock_and_is_never_retaken(
    db: &TestStore,
) {
    let locks = db.store.locks();
    // A named project's lock stands in the way too: state is per directory and workspace.
    let pr = locks
        .lock_acquire(&[key(Some("web"))], &owner(7, "alice"))
        .await
        .expect("pr lock");
    let Acquisition::Granted(pr_locks) = pr else {
        panic!("the PR should get its lock: {pr:?}");
    };
    let remote = locks
        .lock_acquire_remote(&key(None), &owner(REMOTE_RUN, "bob"))
        .await
        .expect("remote attempt");
    let Acquisition::Conflict(held) = remote else {
        panic!("a remote run must not take a PR's project: {remote:?}");
    };
    assert_eq!(held[0].owner.pr, 7);
    let stamp = atoll::locks::AuditStamp {
        actor: atoll::locks::Actor::new("alice", atoll::locks::ActorVia::Comment),
        detail: "atlantis unlock".to_owned(),
    };
    locks
        .lock_release(&atoll::locks::Release::Id(pr_locks[0].id), &stamp)
        .await
        .expect("unlock");
    let taken = locks
        .lock_acquire_remote(&key(None), &owner(REMOTE_RUN, "bob"))
        .await
        .expect("remote lock");
    assert!(matches!(taken, Acquisition::Granted(_)), "{taken:?}");
    let again = locks
        .lock_acquire_remote(&key(None), &owner(REMOTE_RUN, "carol"))
        .await
        .expect("second remote attempt");
    let Acquisition::Conflict(held) = again else {
        panic!("a second remote run must wait: {again:?}");
    };
    assert_eq!(held[0].owner.user, "bob");
    let pr_again = locks
        .lock_acquire(&[key(None)], &owner(8, "dave"))
        .await
        .expect("pr attempt");
    assert!(
        matches!(&pr_again, Acquisition::Conflict(h) if h[0].owner.pr == REMOTE_RUN),
        "a PR must wait for a remote run: {pr_again:?}"
    );
    // ... on a named project of that directory and workspace too, and takes none of its
    // other keys meanwhile.
    let named = locks
        .lock_acquire(&[key(Some("web")), key(Some("api"))], &owner(9, "erin"))
        .await
        .expect("pr attempt on named projects");
    let Acquisition::Conflict(held) = named else {
        panic!("a named project must wait for a remote run: {named:?}");
    };
    assert!(held.iter().all(|l| l.owner.pr == REMOTE_RUN), "{held:?}");
    let listed = locks
        .lock_list(&atoll::locks::LockQuery::default())
        .await
        .expect("list");
    assert_eq!(listed.len(), 1, "only the remote run's lock: {listed:?}");
}
