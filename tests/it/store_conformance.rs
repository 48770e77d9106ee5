//! One conformance suite for every `Store` backend: each case runs against SQLite, and against
//! PostgreSQL when `ATOLL_TEST_DATABASE_URL` is set (`sqlite::...` and `postgres::...` tests).

#[path = "store_conformance/cases.rs"]
mod cases;

per_backend!(
    ping_answers,
    duplicate_delivery_is_processed_once,
    same_comment_id_with_new_delivery_id_queues_once,
    same_delivery_id_from_another_forge_is_a_new_delivery,
    delivery_without_job_is_recorded_once,
    concurrent_duplicate_deliveries_queue_exactly_one_job,
    a_burst_of_deliveries_gets_the_one_by_one_answers,
    a_failing_write_does_not_fail_writes_committed_with_it,
    enqueue_without_delivery_dedups_by_key,
    jobs_without_dedup_key_are_never_duplicates,
    stored_job_keeps_its_fields,
    list_jobs_returns_newest_first,
    claim_returns_oldest_queued_job_of_requested_kinds,
    claim_leases_job_to_worker_and_counts_attempt,
    claim_respects_global_cap,
    claim_respects_per_repo_cap,
    concurrent_claims_never_hand_one_job_to_two_workers,
    heartbeat_extends_only_the_holders_lease,
    transition_follows_job_lifecycle,
    transition_by_another_worker_is_refused,
    terminal_job_cannot_be_moved_again,
    released_job_is_claimable_again,
    expired_running_job_is_requeued_with_attempts_counted,
    expired_applying_job_is_interrupted_not_retried,
    retention_deletes_finished_jobs_and_old_deliveries_only,
    jobs_in_a_state_are_listed_newest_first,
    job_whose_worker_keeps_dying_fails_after_max_attempts_not_counting_give_backs,
    a_lower_max_attempts_fails_a_job_on_its_next_death,
    a_pull_requests_jobs_of_a_kind_are_listed_newest_first,
    applying_at_is_set_when_a_job_first_applies_and_kept,
    unexpired_lease_is_not_reaped,
    job_log_lines_are_dense_ordered_and_resumable,
    append_log_to_missing_job_is_not_found,
    job_signal_fires_when_a_job_is_queued,
    jobs_survive_reopening_the_store,
    sessions_survive_reopening_and_logout_deletes_them,
    expired_sessions_are_not_returned_and_are_deleted,
    apply_progress_is_stored_for_the_holder_and_survives_reopening,
    apply_journal_keeps_typed_entries_in_order_and_survives_reopening,
    only_job_kinds_atoll_runs_can_be_queued,
    per_repo_exempt_kind_is_claimed_while_its_repo_is_full,
    cancel_queued_cancels_only_the_prs_earlier_queued_jobs_of_those_kinds,
);

/// Cases that only PostgreSQL can pass: several replicas share one database.
mod postgres_replicas {
    use std::time::Duration;

    use atoll::store::NewJob;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_job_queued_by_another_replica_wakes_this_one() {
        let Some(db) = crate::support::postgres().await else {
            return;
        };
        let replica = db.reopen().await;
        let mut signal = db.store.job_signal();
        signal.borrow_and_update();
        let job = NewJob {
            kind: "plan".to_owned(),
            repo: "r".to_owned(),
            pr: None,
            dedup_key: None,
            payload: serde_json::json!({}),
        };
        replica.enqueue(job).await.expect("enqueue on the replica");
        tokio::time::timeout(Duration::from_secs(10), signal.changed())
            .await
            .expect("NOTIFY from the replica wakes this store within 10s")
            .expect("signal sender alive");
        db.finish().await;
    }
}

/// Cases about the SQLite file itself.
mod sqlite_file {
    use atoll::store;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_stores_creating_one_new_file_at_once_both_open_it() {
        for round in 0..5 {
            let dir = tempfile::tempdir().expect("temp dir");
            let url = format!("sqlite://{}", dir.path().join("new.db").display());
            let (a, b) = tokio::join!(store::connect(&url), store::connect(&url));
            a.unwrap_or_else(|e| panic!("round {round}, first opener: {e}"));
            b.unwrap_or_else(|e| panic!("round {round}, second opener: {e}"));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_store_locked_by_another_process_answers_unavailable_not_hangs() {
        use atoll::store::{DeliveryOutcome, NewDelivery, StoreError};
        use model::ForgeKind;
        use sqlx::Connection;

        let db = crate::support::sqlite().await;
        let mut other = sqlx::SqliteConnection::connect(&db.url)
            .await
            .expect("raw connection");
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut other)
            .await
            .expect("take the write lock");
        let delivery = || NewDelivery {
            forge: ForgeKind::Github,
            delivery_id: "locked".to_owned(),
            event: "ping".to_owned(),
            repo: "r".to_owned(),
        };
        let waited = std::time::Duration::from_secs(30);
        let locked = tokio::time::timeout(waited, db.store.accept_delivery(delivery(), None)).await;
        let result = locked.expect("an answer within 30s, not a hang");
        assert!(
            matches!(result, Err(StoreError::Unavailable(_))),
            "{result:?}"
        );
        sqlx::query("ROLLBACK")
            .execute(&mut other)
            .await
            .expect("release the lock");
        let after = db
            .store
            .accept_delivery(delivery(), None)
            .await
            .expect("accept");
        assert_eq!(after, DeliveryOutcome::Accepted { job: None });
    }

    #[tokio::test]
    async fn sqlite_store_in_a_missing_directory_fails_with_a_clear_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!(
            "sqlite://{}",
            dir.path().join("no/such/dir/atoll.db").display()
        );
        let err = store::connect(&url).await.err().map(|e| e.to_string());
        let msg = err.expect("opening must fail");
        assert!(msg.contains("opening the sqlite database"), "{msg}");
    }
}

/// The `LISTEN` connection of a PostgreSQL store comes back after the server drops it.
mod postgres_listener {
    use std::time::Duration;

    use atoll::store::NewJob;
    use sqlx::Connection;
    use tokio::time::{Instant, timeout};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_wake_ups_resume_after_the_listen_connection_is_killed() {
        let Some(db) = crate::support::postgres().await else {
            return;
        };
        let replica = db.reopen().await;
        let mut signal = db.store.job_signal();
        signal.borrow_and_update();
        let base = std::env::var(crate::support::PG_ENV).expect("set, since the store exists");
        let mut admin = sqlx::PgConnection::connect(&base)
            .await
            .expect("admin connection");
        let schema = db
            .url
            .rsplit('=')
            .next()
            .expect("schema in the url")
            .to_owned();
        let killed: i64 = sqlx::query_scalar(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE application_name = $1 AND query ILIKE 'LISTEN%'",
        )
        .bind(&schema)
        .fetch_one(&mut admin)
        .await
        .expect("terminating this test's LISTEN connections");
        assert!(killed >= 1, "found no LISTEN connection to kill");
        // The store notices the loss (and says so, since notifications may have been missed).
        timeout(Duration::from_secs(10), signal.changed())
            .await
            .expect("the loss is noticed within 10s")
            .expect("signal alive");
        // Then a job queued on the replica wakes it again, once it listens anew.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            signal.borrow_and_update();
            let job = NewJob {
                kind: "plan".to_owned(),
                repo: "r".to_owned(),
                pr: None,
                dedup_key: None,
                payload: serde_json::json!({}),
            };
            replica.enqueue(job).await.expect("enqueue on the replica");
            if timeout(Duration::from_millis(300), signal.changed())
                .await
                .is_ok()
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no wake-up 20s after the LISTEN connection died"
            );
        }
        db.finish().await;
    }
}
