//! The state cases, written once against `dyn Store`.

use std::collections::BTreeMap;

use atoll::proxmox::plan::{GuestKind, StateEntry, StateValue};
use atoll::proxmox::state::{GeneratedEntry, StateHandle, secrets};
use atoll::store::StateScope;

use crate::support::TestStore;

fn scope(workspace: &str) -> StateScope {
    StateScope {
        repo: "github.com/acme/infra".to_owned(),
        project_dir: "envs/dev".to_owned(),
        workspace: workspace.to_owned(),
    }
}

fn guest(address: &str, vm_id: u32, cores: &str) -> StateEntry {
    StateEntry::Guest {
        address: address.to_owned(),
        resource_type: "proxmox_virtual_environment_container".to_owned(),
        kind: GuestKind::Lxc,
        node: "pve".to_owned(),
        vm_id,
        attributes: BTreeMap::from([
            ("cores".to_owned(), StateValue::Plain(cores.to_owned())),
            (
                "password".to_owned(),
                StateValue::Fingerprint("ab12".to_owned()),
            ),
        ]),
    }
}

fn download() -> StateEntry {
    StateEntry::Download {
        address: "proxmox_download_file.debian".to_owned(),
        resource_type: "proxmox_download_file".to_owned(),
        node: "pve".to_owned(),
        volid: "local:vztmpl/debian.tar.zst".to_owned(),
        arguments: BTreeMap::from([("url".to_owned(), "https://x/debian.tar.zst".to_owned())]),
    }
}

fn generated(value: &str) -> GeneratedEntry {
    GeneratedEntry {
        address: "random_password.root".to_owned(),
        resource_type: "random_password".to_owned(),
        arguments: BTreeMap::from([("length".to_owned(), "24".to_owned())]),
        values: secrets(BTreeMap::from([("result".to_owned(), value.to_owned())])),
    }
}

fn handle(db: &TestStore, workspace: &str) -> StateHandle {
    StateHandle::new(db.store.clone(), scope(workspace))
}

pub(crate) async fn guest_download_and_generated_entries_round_trip(db: &TestStore) {
    let state = handle(db, "default");
    state.record(&guest("ct.a", 100, "2")).await.expect("guest");
    state.record(&download()).await.expect("download");
    state
        .record_generated(&generated("s3cret-value"))
        .await
        .expect("generated");
    let loaded = state.load().await.expect("load");
    assert_eq!(loaded.entries, vec![guest("ct.a", 100, "2"), download()]);
    let values = loaded.generated_values();
    let root = &values["random_password.root"];
    assert_eq!(root.values["result"], "s3cret-value");
    assert_eq!(root.resource_type, "random_password");
    assert_eq!(loaded.generated[0].arguments["length"], "24");
}

pub(crate) async fn scopes_are_separate_by_repo_dir_and_workspace(db: &TestStore) {
    handle(db, "default")
        .record(&guest("ct.a", 100, "1"))
        .await
        .expect("default");
    handle(db, "prod")
        .record(&guest("ct.a", 200, "4"))
        .await
        .expect("prod");
    let other_dir = StateHandle::new(
        db.store.clone(),
        StateScope {
            project_dir: "envs/other".to_owned(),
            ..scope("default")
        },
    );
    assert!(other_dir.load().await.expect("other").entries.is_empty());
    let prod = handle(db, "prod").load().await.expect("prod");
    assert_eq!(prod.entries, vec![guest("ct.a", 200, "4")]);
}

pub(crate) async fn record_replaces_and_forget_removes(db: &TestStore) {
    let state = handle(db, "default");
    state.record(&guest("ct.a", 100, "1")).await.expect("first");
    state
        .record(&guest("ct.a", 100, "8"))
        .await
        .expect("second");
    assert_eq!(
        state.load().await.expect("load").entries,
        vec![guest("ct.a", 100, "8")]
    );
    assert!(state.forget("ct.a").await.expect("forget"));
    assert!(!state.forget("ct.a").await.expect("forget again"));
    assert!(state.load().await.expect("load").entries.is_empty());
}

pub(crate) async fn fingerprint_changes_with_every_write_and_only_then(db: &TestStore) {
    let state = handle(db, "default");
    let empty = state.load().await.expect("load").fingerprint;
    state
        .record(&guest("ct.a", 100, "1"))
        .await
        .expect("record");
    let one = state.load().await.expect("load").fingerprint;
    assert_ne!(empty, one);
    assert_eq!(
        one,
        state.load().await.expect("load").fingerprint,
        "reads do not change it"
    );
    state
        .record(&guest("ct.a", 100, "2"))
        .await
        .expect("record");
    let two = state.load().await.expect("load").fingerprint;
    assert_ne!(one, two);
    state.record_generated(&generated("a")).await.expect("gen");
    let three = state.load().await.expect("load").fingerprint;
    state.record_generated(&generated("b")).await.expect("gen");
    assert_ne!(
        three,
        state.load().await.expect("load").fingerprint,
        "a new secret counts"
    );
}

pub(crate) async fn generated_values_are_never_in_debug_output(db: &TestStore) {
    let state = handle(db, "default");
    state
        .record_generated(&generated("hunter2-do-not-print"))
        .await
        .expect("generated");
    let loaded = state.load().await.expect("load");
    let debug = format!("{loaded:?}");
    assert!(!debug.contains("hunter2"), "{debug}");
    assert!(!loaded.fingerprint.contains("hunter2"));
}

pub(crate) async fn state_survives_reopening_the_store(db: &TestStore) {
    handle(db, "default")
        .record(&guest("ct.a", 100, "3"))
        .await
        .expect("record");
    let reopened = StateHandle::new(db.reopen().await, scope("default"));
    assert_eq!(
        reopened.load().await.expect("load").entries,
        vec![guest("ct.a", 100, "3")]
    );
}

pub(crate) async fn scopes_lists_every_scope_with_resources(db: &TestStore) {
    handle(db, "a")
        .record(&guest("ct.a", 100, "1"))
        .await
        .expect("a");
    handle(db, "b")
        .record(&guest("ct.b", 101, "1"))
        .await
        .expect("b");
    let scopes = db.store.state().state_scopes().await.expect("scopes");
    assert_eq!(scopes, vec![scope("a"), scope("b")]);
}

pub(crate) async fn holders_name_every_scope_holding_a_vm_id(db: &TestStore) {
    handle(db, "b")
        .record(&guest("ct.b", 500, "1"))
        .await
        .expect("b");
    handle(db, "a")
        .record(&guest("ct.a", 500, "1"))
        .await
        .expect("a");
    handle(db, "a")
        .record(&guest("ct.other", 501, "1"))
        .await
        .expect("other");
    let held = db.store.state().state_holders(500).await.expect("holders");
    let named: Vec<(StateScope, &str, &str)> = held
        .iter()
        .map(|h| (h.scope.clone(), h.address.as_str(), h.node.as_str()))
        .collect();
    assert_eq!(
        named,
        vec![(scope("a"), "ct.a", "pve"), (scope("b"), "ct.b", "pve")]
    );
    let elsewhere = handle(db, "a")
        .held_elsewhere(500)
        .await
        .expect("elsewhere");
    assert_eq!(elsewhere.len(), 1);
    assert_eq!(elsewhere[0].scope, scope("b"));
    assert!(
        db.store
            .state()
            .state_holders(502)
            .await
            .expect("none")
            .is_empty()
    );
    let tag = atoll::proxmox::owner::owner_tag(&scope("b"));
    let found = handle(db, "a").scope_of_owner_tag(&tag).await.expect("tag");
    assert_eq!(found, Some(scope("b")));
    let unknown = handle(db, "a").scope_of_owner_tag("atoll-0000000000").await;
    assert_eq!(unknown.expect("unknown"), None);
}
