//! `StateHandle::rename` (the store's `state_move`), per backend: renames are one
//! transaction, and a move onto an address in state or of one not in it changes nothing.

mod cases {
    use std::collections::BTreeMap;

    use atoll::proxmox::plan::{GuestKind, StateEntry, StateValue};
    use atoll::proxmox::state::{GeneratedEntry, StateError, StateHandle, secrets};
    use atoll::store::{StateScope, StoreError};

    use crate::support::TestStore;

    fn guest(address: &str, vm_id: u32) -> StateEntry {
        StateEntry::Guest {
            address: address.to_owned(),
            resource_type: "proxmox_virtual_environment_container".to_owned(),
            kind: GuestKind::Lxc,
            node: "pve".to_owned(),
            vm_id,
            attributes: BTreeMap::from([("cores".to_owned(), StateValue::Plain("2".to_owned()))]),
        }
    }

    fn handle(db: &TestStore) -> StateHandle {
        StateHandle::new(
            db.store.clone(),
            StateScope {
                repo: "local".to_owned(),
                project_dir: ".".to_owned(),
                workspace: "default".to_owned(),
            },
        )
    }

    fn addresses(entries: &[StateEntry]) -> Vec<&str> {
        entries.iter().map(StateEntry::address).collect()
    }

    pub(crate) async fn renames_move_guests_and_secrets_together(db: &TestStore) {
        let state = handle(db);
        state.record(&guest("ct.a", 100)).await.expect("a");
        state.record(&guest("ct.b", 101)).await.expect("b");
        state
            .record_generated(&GeneratedEntry {
                address: "random_password.p".to_owned(),
                resource_type: "random_password".to_owned(),
                arguments: BTreeMap::new(),
                values: secrets(BTreeMap::from([("result".to_owned(), "s3cret".to_owned())])),
            })
            .await
            .expect("generated");
        let moves = [
            ("ct.a".to_owned(), "module.m.ct.a".to_owned()),
            (
                "random_password.p".to_owned(),
                "module.m.random_password.p".to_owned(),
            ),
        ];
        state.rename(&moves).await.expect("rename");
        let loaded = state.load().await.expect("load");
        assert_eq!(addresses(&loaded.entries), ["ct.b", "module.m.ct.a"]);
        let StateEntry::Guest { vm_id, .. } = &loaded.entries[1] else {
            panic!("a guest");
        };
        assert_eq!(*vm_id, 100);
        assert_eq!(loaded.generated[0].address, "module.m.random_password.p");
        let values = loaded.generated_values();
        assert_eq!(
            values["module.m.random_password.p"].values["result"],
            "s3cret"
        );
    }

    pub(crate) async fn a_refused_rename_changes_nothing(db: &TestStore) {
        let state = handle(db);
        state.record(&guest("ct.a", 100)).await.expect("a");
        state.record(&guest("ct.b", 101)).await.expect("b");
        state.record(&guest("ct.c", 102)).await.expect("c");
        let before = state.load().await.expect("load");
        // the first rename would work; the second lands on an address in state
        let onto = [
            ("ct.a".to_owned(), "ct.z".to_owned()),
            ("ct.b".to_owned(), "ct.c".to_owned()),
        ];
        let err = state.rename(&onto).await.expect_err("onto ct.c");
        assert!(
            matches!(&err, StateError::Store(StoreError::Conflict(m)) if m.contains("ct.c is already in state")),
            "{err}"
        );
        let missing = [
            ("ct.a".to_owned(), "ct.y".to_owned()),
            ("ct.nope".to_owned(), "ct.x".to_owned()),
        ];
        let err = state.rename(&missing).await.expect_err("ct.nope");
        assert!(
            matches!(&err, StateError::Store(StoreError::NotFound(m)) if m.contains("ct.nope")),
            "{err}"
        );
        let after = state.load().await.expect("load");
        assert_eq!(addresses(&after.entries), ["ct.a", "ct.b", "ct.c"]);
        assert_eq!(before.fingerprint, after.fingerprint);
    }
}

per_backend!(
    renames_move_guests_and_secrets_together,
    a_refused_rename_changes_nothing,
);
