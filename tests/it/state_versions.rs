//! State versions and the remote-run lock, per store backend: SQLite always, PostgreSQL when
//! `ATOLL_TEST_DATABASE_URL` is set.

#[path = "state_versions/cases.rs"]
mod cases;

per_backend!(
    versions_are_numbered_per_scope_and_keep_no_secret,
    remote_run_lock_waits_for_a_pull_requests_lock_and_is_never_retaken,
);
