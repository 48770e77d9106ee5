//! Test stores for both backends: a fresh SQLite file per test, and a fresh PostgreSQL schema per
//! test when `ATOLL_TEST_DATABASE_URL` is set (an unreachable database fails the test).

#![allow(dead_code, reason = "each test crate uses part of the support module")]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use atoll::store::{self, Store};

mod container;
pub(crate) use container::{Container, TEMPLATE};
use sqlx::Connection;
use tempfile::TempDir;

pub(crate) const PG_ENV: &str = "ATOLL_TEST_DATABASE_URL";

/// A store that exists for one test.
pub(crate) struct TestStore {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) url: String,
    _dir: Option<TempDir>,
    pg_schema: Option<(String, String)>,
}

impl TestStore {
    /// Opens a second, independent handle on the same database (another process, or replica).
    pub(crate) async fn reopen(&self) -> Arc<dyn Store> {
        store::connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("reopening the test store: {e}"))
    }

    /// Drops the PostgreSQL schema; a failed test leaves it for inspection.
    pub(crate) async fn finish(self) {
        if let Some((base, schema)) = self.pg_schema {
            let mut conn = sqlx::PgConnection::connect(&base)
                .await
                .unwrap_or_else(|e| panic!("connecting to {PG_ENV} to clean up: {e}"));
            sqlx::query(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
                .execute(&mut conn)
                .await
                .unwrap_or_else(|e| panic!("dropping test schema {schema}: {e}"));
        }
    }
}

pub(crate) async fn sqlite() -> TestStore {
    let dir = tempfile::tempdir().expect("creating a temp dir");
    let url = format!("sqlite://{}", dir.path().join("atoll.db").display());
    let store = store::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("opening sqlite test store: {e}"));
    TestStore {
        store,
        url,
        _dir: Some(dir),
        pg_schema: None,
    }
}

/// `None` when `ATOLL_TEST_DATABASE_URL` is unset; panics when it is set but unusable, and
/// when it is unset under CI (`CI` set and not `false`), so a PostgreSQL case never passes
/// there without running.
pub(crate) async fn postgres() -> Option<TestStore> {
    let Ok(base) = std::env::var(PG_ENV) else {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(
            !ci,
            "{PG_ENV} is not set under CI: this PostgreSQL case cannot run; run the tests with \
             bash deploy/test.sh, which starts PostgreSQL and sets it"
        );
        eprintln!("{PG_ENV} is not set: PostgreSQL case not run");
        return None;
    };
    let schema = format!("atoll_test_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&base)
        .await
        .unwrap_or_else(|e| panic!("{PG_ENV} is set but the database is unreachable: {e}"));
    sqlx::query(&format!("CREATE SCHEMA \"{schema}\""))
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("creating test schema {schema}: {e}"));
    let sep = if base.contains('?') { '&' } else { '?' };
    // The application name marks this test's connections in `pg_stat_activity`.
    let url = format!("{base}{sep}application_name={schema}&options[search_path]={schema}");
    let store = store::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("opening postgres test store: {e}"));
    Some(TestStore {
        store,
        url,
        _dir: None,
        pg_schema: Some((base, schema)),
    })
}

/// Polls `check` until it returns `Some`, failing the test after `within`.
pub(crate) async fn eventually<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {within:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Instantiates async test cases `cases::$name(&TestStore)` once per backend, in modules
/// `sqlite` and `postgres` so the test names say which backend ran.
#[macro_export]
macro_rules! per_backend {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let db = $crate::support::sqlite().await;
                    super::cases::$name(&db).await;
                    db.finish().await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(db) = $crate::support::postgres().await else { return };
                    super::cases::$name(&db).await;
                    db.finish().await;
                }
            )*
        }
    };
}
