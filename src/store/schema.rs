//! The migrations of each backend, embedded in the binary and applied by sqlx's migrator (which
//! records them in `_sqlx_migrations` and refuses a database whose applied scripts changed).
//!
//! They are listed here by hand rather than with `sqlx::migrate!`, which would pull in the sqlx
//! proc-macro crate (and its database drivers) at build time for two files.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};

/// `(version, description, sql)` for SQLite, oldest first.
const SQLITE: &[(i64, &str, &str)] = &[
    (
        1,
        "jobs",
        include_str!("../../migrations/sqlite/0001_jobs.sql"),
    ),
    (
        2,
        "managed resources",
        include_str!("../../migrations/sqlite/0002_managed_resources.sql"),
    ),
    (
        10,
        "locks plans audit",
        include_str!("../../migrations/sqlite/0010_locks_plans_audit.sql"),
    ),
    (
        11,
        "plan comments",
        include_str!("../../migrations/sqlite/0011_plan_comments.sql"),
    ),
    (
        12,
        "job progress",
        include_str!("../../migrations/sqlite/0012_job_progress.sql"),
    ),
    (
        13,
        "web sessions",
        include_str!("../../migrations/sqlite/0013_web_sessions.sql"),
    ),
    (
        14,
        "jobs queued in order",
        include_str!("../../migrations/sqlite/0014_jobs_queued_in_order.sql"),
    ),
    (
        15,
        "deliveries retention indexes",
        include_str!("../../migrations/sqlite/0015_deliveries_retention_indexes.sql"),
    ),
    (
        16,
        "job lost leases",
        include_str!("../../migrations/sqlite/0016_job_lost_leases.sql"),
    ),
    (
        17,
        "job kinds lock forge",
        include_str!("../../migrations/sqlite/0017_job_kinds_lock_forge.sql"),
    ),
    (
        18,
        "apply journal",
        include_str!("../../migrations/sqlite/0018_apply_journal.sql"),
    ),
    (
        19,
        "job kinds and audit actions of import and state rm",
        include_str!("../../migrations/sqlite/0019_job_kinds_import_state.sql"),
    ),
    (
        20,
        "job kind cancel",
        include_str!("../../migrations/sqlite/0020_job_kind_cancel.sql"),
    ),
    (
        21,
        "plans applied",
        include_str!("../../migrations/sqlite/0021_plans_applied.sql"),
    ),
    (
        22,
        "plan policy checks",
        include_str!("../../migrations/sqlite/0022_plan_policy_checks.sql"),
    ),
    (
        23,
        "state versions",
        include_str!("../../migrations/sqlite/0023_state_versions.sql"),
    ),
];

/// `(version, description, sql)` for PostgreSQL, oldest first.
const POSTGRES: &[(i64, &str, &str)] = &[
    (
        1,
        "jobs",
        include_str!("../../migrations/postgres/0001_jobs.sql"),
    ),
    (
        2,
        "managed resources",
        include_str!("../../migrations/postgres/0002_managed_resources.sql"),
    ),
    (
        10,
        "locks plans audit",
        include_str!("../../migrations/postgres/0010_locks_plans_audit.sql"),
    ),
    (
        11,
        "plan comments",
        include_str!("../../migrations/postgres/0011_plan_comments.sql"),
    ),
    (
        12,
        "job progress",
        include_str!("../../migrations/postgres/0012_job_progress.sql"),
    ),
    (
        13,
        "web sessions",
        include_str!("../../migrations/postgres/0013_web_sessions.sql"),
    ),
    (
        14,
        "jobs queued in order",
        include_str!("../../migrations/postgres/0014_jobs_queued_in_order.sql"),
    ),
    (
        15,
        "deliveries retention indexes",
        include_str!("../../migrations/postgres/0015_deliveries_retention_indexes.sql"),
    ),
    (
        16,
        "job lost leases",
        include_str!("../../migrations/postgres/0016_job_lost_leases.sql"),
    ),
    (
        17,
        "job kinds lock forge",
        include_str!("../../migrations/postgres/0017_job_kinds_lock_forge.sql"),
    ),
    (
        18,
        "apply journal",
        include_str!("../../migrations/postgres/0018_apply_journal.sql"),
    ),
    (
        19,
        "job kinds and audit actions of import and state rm",
        include_str!("../../migrations/postgres/0019_job_kinds_import_state.sql"),
    ),
    (
        20,
        "job kind cancel",
        include_str!("../../migrations/postgres/0020_job_kind_cancel.sql"),
    ),
    (
        21,
        "plans applied",
        include_str!("../../migrations/postgres/0021_plans_applied.sql"),
    ),
    (
        22,
        "plan policy checks",
        include_str!("../../migrations/postgres/0022_plan_policy_checks.sql"),
    ),
    (
        23,
        "state versions",
        include_str!("../../migrations/postgres/0023_state_versions.sql"),
    ),
];

pub(crate) async fn sqlite() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(SQLITE)).await
}

pub(crate) async fn postgres() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(POSTGRES)).await
}

/// A migration source compiled into the binary.
#[derive(Debug)]
struct Embedded(&'static [(i64, &'static str, &'static str)]);

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 'static>> {
        let migrations = self
            .0
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    Cow::Borrowed(sql),
                    false,
                )
            })
            .collect();
        Box::pin(std::future::ready(Ok(migrations)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_versions_increase_and_match_file_names() {
        for scripts in [SQLITE, POSTGRES] {
            let versions: Vec<i64> = scripts.iter().map(|s| s.0).collect();
            let mut sorted = versions.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(versions, sorted, "versions must be unique and ascending");
            assert!(scripts.iter().all(|s| !s.2.trim().is_empty()));
        }
    }

    /// A script added to `migrations/` but not listed here would never run.
    #[test]
    fn every_migration_file_is_listed() {
        for (backend, scripts) in [("sqlite", SQLITE), ("postgres", POSTGRES)] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(backend);
            let mut on_disk: Vec<i64> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .filter_map(|entry| {
                    let name = entry.ok()?.file_name().into_string().ok()?;
                    name.strip_suffix(".sql")?.split('_').next()?.parse().ok()
                })
                .collect();
            on_disk.sort_unstable();
            let listed: Vec<i64> = scripts.iter().map(|s| s.0).collect();
            assert_eq!(
                listed,
                on_disk,
                "{backend}: list every file of {}",
                dir.display()
            );
        }
    }
}
