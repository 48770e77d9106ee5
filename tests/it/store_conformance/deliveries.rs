//! Deliveries and enqueueing: deduplication by delivery id and by meaning.

use model::ForgeKind;

use atoll::store::{DeliveryOutcome, JobState};
use serde_json::json;
use uuid::Uuid;

use super::{accepted, delivery, job, queue};
use crate::support::TestStore;

pub(crate) async fn ping_answers(db: &TestStore) {
    db.store.ping().await.expect("ping");
}

pub(crate) async fn duplicate_delivery_is_processed_once(db: &TestStore) {
    let s = &*db.store;
    let first = s
        .accept_delivery(
            delivery(ForgeKind::Github, "d-1"),
            Some(job("plan", "r", None)),
        )
        .await
        .expect("first delivery");
    let id = accepted(first);
    let again = s
        .accept_delivery(
            delivery(ForgeKind::Github, "d-1"),
            Some(job("plan", "r", None)),
        )
        .await
        .expect("redelivery");
    assert_eq!(again, DeliveryOutcome::Duplicate);
    let jobs = s.list_jobs(10).await.expect("list");
    assert_eq!(jobs.len(), 1, "the redelivery must not queue a second job");
    assert_eq!(jobs[0].id, id);
}

pub(crate) async fn same_comment_id_with_new_delivery_id_queues_once(db: &TestStore) {
    let s = &*db.store;
    let key = "comment:gitea:git.example/acme/infra:4411";
    let first = s
        .accept_delivery(
            delivery(ForgeKind::Gitea, "g-1"),
            Some(job("plan", "r", Some(key))),
        )
        .await
        .expect("first");
    accepted(first);
    let second = s
        .accept_delivery(
            delivery(ForgeKind::Gitea, "g-2"),
            Some(job("plan", "r", Some(key))),
        )
        .await
        .expect("second");
    assert_eq!(second, DeliveryOutcome::Duplicate);
    assert_eq!(s.list_jobs(10).await.expect("list").len(), 1);
    // Nothing was written for the duplicate: its delivery id is still new.
    let third = s
        .accept_delivery(delivery(ForgeKind::Gitea, "g-2"), None)
        .await
        .expect("third");
    assert_eq!(third, DeliveryOutcome::Accepted { job: None });
}

pub(crate) async fn same_delivery_id_from_another_forge_is_a_new_delivery(db: &TestStore) {
    let s = &*db.store;
    let gh = s
        .accept_delivery(delivery(ForgeKind::Github, "x"), None)
        .await;
    let gt = s
        .accept_delivery(delivery(ForgeKind::Gitea, "x"), None)
        .await;
    assert_eq!(gh.expect("github"), DeliveryOutcome::Accepted { job: None });
    assert_eq!(gt.expect("gitea"), DeliveryOutcome::Accepted { job: None });
}

pub(crate) async fn delivery_without_job_is_recorded_once(db: &TestStore) {
    let s = &*db.store;
    let first = s
        .accept_delivery(delivery(ForgeKind::Github, "p"), None)
        .await;
    assert_eq!(
        first.expect("first"),
        DeliveryOutcome::Accepted { job: None }
    );
    let again = s
        .accept_delivery(
            delivery(ForgeKind::Github, "p"),
            Some(job("plan", "r", None)),
        )
        .await;
    assert_eq!(again.expect("again"), DeliveryOutcome::Duplicate);
    assert!(s.list_jobs(10).await.expect("list").is_empty());
}

pub(crate) async fn enqueue_without_delivery_dedups_by_key(db: &TestStore) {
    let s = &*db.store;
    let key = Some("autoplan:github:acme/infra:7:abc123");
    accepted(s.enqueue(job("plan", "r", key)).await.expect("first"));
    let again = s.enqueue(job("plan", "r", key)).await.expect("second");
    assert_eq!(again, DeliveryOutcome::Duplicate);
    let via_delivery = s
        .accept_delivery(
            delivery(ForgeKind::Github, "new"),
            Some(job("plan", "r", key)),
        )
        .await
        .expect("third");
    assert_eq!(via_delivery, DeliveryOutcome::Duplicate);
}

pub(crate) async fn jobs_without_dedup_key_are_never_duplicates(db: &TestStore) {
    let s = &*db.store;
    let a = queue(s, "plan", "r").await;
    let b = queue(s, "plan", "r").await;
    assert_ne!(a, b);
    assert_eq!(s.list_jobs(10).await.expect("list").len(), 2);
}

pub(crate) async fn stored_job_keeps_its_fields(db: &TestStore) {
    let s = &*db.store;
    let mut new = job("apply", "github.com/acme/infra", Some("k"));
    new.pr = Some(4_000_000_000);
    new.payload = json!({"nested": {"list": [1, "two", null]}, "unicode": "ünï"});
    let id = accepted(s.enqueue(new.clone()).await.expect("enqueue"));
    let stored = s.get_job(id).await.expect("get").expect("exists");
    assert_eq!(stored.kind, "apply");
    assert_eq!(stored.repo, "github.com/acme/infra");
    assert_eq!(stored.pr, Some(4_000_000_000));
    assert_eq!(stored.payload, new.payload);
    assert_eq!(stored.state, JobState::Queued);
    assert_eq!(stored.attempts, 0);
    assert_eq!(
        (stored.worker, stored.lease_until, stored.error),
        (None, None, None)
    );
    assert!(s.get_job(Uuid::new_v4()).await.expect("get").is_none());
}

pub(crate) async fn list_jobs_returns_newest_first(db: &TestStore) {
    let s = &*db.store;
    let ids = [
        queue(s, "plan", "r").await,
        queue(s, "apply", "r").await,
        queue(s, "unlock", "r").await,
    ];
    let listed: Vec<Uuid> = s
        .list_jobs(2)
        .await
        .expect("list")
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(listed, vec![ids[2], ids[1]]);
}

pub(crate) async fn concurrent_duplicate_deliveries_queue_exactly_one_job(db: &TestStore) {
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = db.store.clone();
        tasks.push(tokio::spawn(async move {
            // Half redeliver one delivery id; half are new ids for the same comment.
            let id = if i % 2 == 0 {
                "same".to_owned()
            } else {
                format!("new-{i}")
            };
            let key = Some("comment:github:acme/infra:99");
            store
                .accept_delivery(
                    delivery(ForgeKind::Github, &id),
                    Some(job("plan", "r", key)),
                )
                .await
                .expect("accept")
        }));
    }
    let mut accepted = 0;
    for task in tasks {
        if task.await.expect("task") != DeliveryOutcome::Duplicate {
            accepted += 1;
        }
    }
    assert_eq!(accepted, 1);
    assert_eq!(db.store.list_jobs(100).await.expect("list").len(), 1);
}

pub(crate) async fn a_failing_write_does_not_fail_writes_committed_with_it(db: &TestStore) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for i in 0..20 {
        let store = db.store.clone();
        bad.push(tokio::spawn(async move {
            store.append_log(uuid::Uuid::new_v4(), "orphan").await
        }));
        let store = db.store.clone();
        good.push(tokio::spawn(async move {
            let d = delivery(ForgeKind::Gitea, &format!("g-{i}"));
            store.accept_delivery(d, Some(job("plan", "r", None))).await
        }));
    }
    for task in bad {
        let result = task.await.expect("task");
        assert!(
            matches!(result, Err(atoll::store::StoreError::NotFound(_))),
            "{result:?}"
        );
    }
    for task in good {
        accepted(task.await.expect("task").expect("accept"));
    }
    assert_eq!(db.store.list_jobs(100).await.expect("list").len(), 20);
}

/// A burst of deliveries arriving together (so the SQLite writer commits them in one batch)
/// gets exactly the answers they would get one at a time: new ones are queued, a second
/// delivery of one comment is a duplicate and is not recorded (so that delivery id stays
/// free), redeliveries are duplicates, and deliveries without a job are recorded once.
pub(crate) async fn a_burst_of_deliveries_gets_the_one_by_one_answers(db: &TestStore) {
    // Already recorded before the burst: redeliveries of these are duplicates.
    for i in 0..5 {
        let d = delivery(ForgeKind::Github, &format!("old-{i}"));
        let key = format!("comment:old:{i}");
        accepted(
            db.store
                .accept_delivery(d, Some(job("plan", "r", Some(&key))))
                .await
                .expect("accept old"),
        );
    }
    let mut tasks = Vec::new();
    for i in 0..120 {
        let store = db.store.clone();
        tasks.push(tokio::spawn(async move {
            let (id, key, with_job) = match i % 4 {
                // new delivery, new comment
                0 => (format!("new-{i}"), Some(format!("comment:new:{i}")), true),
                // new delivery of a comment another delivery in the burst also carries
                1 => (
                    format!("twin-{i}"),
                    Some(format!("comment:twin:{}", i / 8)),
                    true,
                ),
                // redelivery of a delivery recorded before the burst
                2 => (
                    format!("old-{}", i % 5),
                    Some(format!("comment:old:{}", i % 5)),
                    true,
                ),
                // a delivery that needs no job
                _ => (format!("ping-{i}"), None, false),
            };
            let j = with_job.then(|| job("plan", "r", key.as_deref()));
            let outcome = store
                .accept_delivery(delivery(ForgeKind::Github, &id), j)
                .await
                .expect("accept");
            (i, id, outcome)
        }));
    }
    let mut twins_accepted = std::collections::BTreeMap::<usize, usize>::new();
    let mut twin_duplicates = Vec::new();
    for task in tasks {
        let (i, id, outcome) = task.await.expect("task");
        match i % 4 {
            0 => assert!(
                matches!(outcome, DeliveryOutcome::Accepted { job: Some(_) }),
                "{id}: {outcome:?}"
            ),
            1 => match outcome {
                DeliveryOutcome::Accepted { job: Some(_) } => {
                    *twins_accepted.entry(i / 8).or_default() += 1;
                }
                DeliveryOutcome::Duplicate => twin_duplicates.push(id),
                other @ DeliveryOutcome::Accepted { .. } => panic!("{id}: {other:?}"),
            },
            2 => assert_eq!(outcome, DeliveryOutcome::Duplicate, "{id}"),
            _ => assert_eq!(outcome, DeliveryOutcome::Accepted { job: None }, "{id}"),
        }
    }
    // Each twin comment queued exactly once.
    assert_eq!(twins_accepted.len(), 15);
    assert!(
        twins_accepted.values().all(|n| *n == 1),
        "{twins_accepted:?}"
    );
    // 5 old + 30 new + 15 twins.
    assert_eq!(db.store.list_jobs(1000).await.expect("list").len(), 50);
    // A delivery refused as a duplicate comment was not recorded: its id is still free.
    let id = twin_duplicates.first().expect("a twin lost");
    let again = db
        .store
        .accept_delivery(
            delivery(ForgeKind::Github, id),
            Some(job("plan", "r", Some("comment:fresh"))),
        )
        .await
        .expect("accept again");
    assert!(
        matches!(again, DeliveryOutcome::Accepted { job: Some(_) }),
        "{again:?}"
    );
    // The ones that needed no job were recorded: the same ids again are duplicates.
    let ping = db
        .store
        .accept_delivery(delivery(ForgeKind::Github, "ping-3"), None)
        .await
        .expect("ping again");
    assert_eq!(ping, DeliveryOutcome::Duplicate);
}
