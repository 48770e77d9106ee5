//! Apply progress on a job: written only by the worker holding it, durable, capped at the total.

use atoll::store::{JobProgress, JobState};
use uuid::Uuid;

use super::{LEASE, WIDE, queue};
use crate::support::TestStore;

async fn progress(db: &TestStore, id: Uuid) -> Option<JobProgress> {
    db.store
        .get_job(id)
        .await
        .expect("get")
        .expect("job")
        .progress
}

pub(crate) async fn apply_progress_is_stored_for_the_holder_and_survives_reopening(db: &TestStore) {
    let s = &*db.store;
    let id = queue(s, "apply", "r").await;
    assert_eq!(progress(db, id).await, None, "a new job has no progress");
    assert!(
        !s.set_progress(id, "w1", JobProgress::new(0, 3))
            .await
            .expect("queued job"),
        "a queued job has no holder to report progress"
    );
    s.claim("w1", &["apply"], LEASE, WIDE).await.expect("claim");
    assert!(
        s.set_progress(id, "w1", JobProgress::new(0, 3))
            .await
            .expect("running")
    );
    assert!(
        s.transition(id, "w1", JobState::Applying, None)
            .await
            .expect("applying")
    );
    assert!(
        s.set_progress(id, "w1", JobProgress::new(2, 3))
            .await
            .expect("applying")
    );
    assert!(
        !s.set_progress(id, "w2", JobProgress::new(3, 3))
            .await
            .expect("other worker"),
        "only the holder may report progress"
    );
    assert!(
        !s.set_progress(Uuid::new_v4(), "w1", JobProgress::new(1, 1))
            .await
            .expect("missing job")
    );
    let p = progress(db, id).await.expect("progress");
    assert_eq!((p.done(), p.total(), p.percent()), (2, 3, 66));
    let listed = s.list_jobs(10).await.expect("list");
    assert_eq!(listed.first().and_then(|j| j.progress), Some(p));
    assert!(
        s.transition(id, "w1", JobState::Succeeded, None)
            .await
            .expect("done")
    );
    assert!(
        !s.set_progress(id, "w1", JobProgress::new(3, 3))
            .await
            .expect("ended"),
        "an ended job's progress is final"
    );
    let reopened = db.reopen().await;
    let kept = reopened
        .get_job(id)
        .await
        .expect("get")
        .expect("job")
        .progress;
    assert_eq!(kept, Some(p), "progress is durable");
    assert_eq!(
        JobProgress::new(5, 2).done(),
        2,
        "done is capped at the total"
    );
}

/// The apply journal: typed entries in the order written, per job, durable, gone with the job.
pub(crate) async fn apply_journal_keeps_typed_entries_in_order_and_survives_reopening(
    db: &TestStore,
) {
    use atoll::store::{JournalEntry, JournalEvent};

    let s = &*db.store;
    let id = queue(s, "apply", "r").await;
    let other = queue(s, "apply", "r").await;
    let guest = |project: u32, event: JournalEvent| JournalEntry {
        project,
        label: format!("dir: p{project}"),
        address: "proxmox_virtual_environment_container.web".to_owned(),
        event,
    };
    let written = vec![
        JournalEntry::attempt("0123456789abcdef0123456789abcdef01234567"),
        guest(0, JournalEvent::Planned),
        guest(1, JournalEvent::Planned),
        guest(
            1,
            JournalEvent::Started {
                step: "update".to_owned(),
            },
        ),
        guest(
            1,
            JournalEvent::Failed {
                error: "500 Internal Server Error: unable to parse value of 'cores' ('x')"
                    .to_owned(),
            },
        ),
        guest(
            0,
            JournalEvent::Done {
                detail: "updated live: memory".to_owned(),
            },
        ),
    ];
    for entry in &written {
        s.journal().journal_append(id, entry).await.expect("append");
    }
    s.journal()
        .journal_append(other, &guest(0, JournalEvent::Planned))
        .await
        .expect("append to another job");
    assert_eq!(s.journal().journal(id).await.expect("read"), written);
    let reopened = db.reopen().await;
    assert_eq!(
        reopened.journal().journal(id).await.expect("read again"),
        written,
        "the journal is durable"
    );
    assert_eq!(
        reopened
            .journal()
            .journal(other)
            .await
            .expect("other")
            .len(),
        1
    );
    assert!(
        s.journal()
            .journal_append(Uuid::new_v4(), &guest(0, JournalEvent::Planned))
            .await
            .is_err(),
        "an entry for a job that does not exist is refused"
    );
}
