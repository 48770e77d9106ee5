//! `proxmox::state` conformance, per store backend: SQLite always, PostgreSQL when
//! `ATOLL_TEST_DATABASE_URL` is set (the shared suite's `per_backend!`).

#[path = "engine_state/cases.rs"]
mod cases;

per_backend!(
    guest_download_and_generated_entries_round_trip,
    scopes_are_separate_by_repo_dir_and_workspace,
    record_replaces_and_forget_removes,
    fingerprint_changes_with_every_write_and_only_then,
    generated_values_are_never_in_debug_output,
    state_survives_reopening_the_store,
    scopes_lists_every_scope_with_resources,
    holders_name_every_scope_holding_a_vm_id,
);
