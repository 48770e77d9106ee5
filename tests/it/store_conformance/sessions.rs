//! Dashboard sessions: kept by token hash, survive reopening, expire, and are deleted by logout
//! and by the purge.

use atoll::store::{StoreError, StoredSession};
use time::{Duration, OffsetDateTime};

use crate::support::TestStore;

fn session(hash_digit: char, expires_in: Duration) -> StoredSession {
    StoredSession {
        token_hash: hash_digit.to_string().repeat(64),
        username: "ops".to_owned(),
        csrf: "c".repeat(64),
        expires_at: OffsetDateTime::now_utc() + expires_in,
    }
}

pub(crate) async fn sessions_survive_reopening_and_logout_deletes_them(db: &TestStore) {
    let live = session('a', Duration::hours(1));
    let sessions = db.store.sessions();
    sessions.session_create(&live).await.expect("create");
    let again = sessions.session_create(&live).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");

    let reopened = db.reopen().await;
    let now = OffsetDateTime::now_utc();
    let found = reopened
        .sessions()
        .session_get(&live.token_hash, now)
        .await
        .expect("get")
        .expect("the session survives reopening");
    assert_eq!(found.username, "ops");
    assert_eq!(found.csrf, live.csrf);
    // Stored times keep microseconds.
    assert!((found.expires_at - live.expires_at).abs() < Duration::milliseconds(1));

    assert!(
        reopened
            .sessions()
            .session_delete(&live.token_hash)
            .await
            .expect("delete")
    );
    assert!(
        !reopened
            .sessions()
            .session_delete(&live.token_hash)
            .await
            .expect("delete")
    );
    let gone = sessions
        .session_get(&live.token_hash, now)
        .await
        .expect("get");
    assert!(gone.is_none());
}

pub(crate) async fn expired_sessions_are_not_returned_and_are_deleted(db: &TestStore) {
    let sessions = db.store.sessions();
    let expired = session('b', Duration::seconds(-1));
    let stale = session('c', Duration::seconds(-5));
    let live = session('d', Duration::hours(1));
    for s in [&expired, &stale, &live] {
        sessions.session_create(s).await.expect("create");
    }
    let now = OffsetDateTime::now_utc();
    assert!(
        sessions
            .session_get(&expired.token_hash, now)
            .await
            .expect("get")
            .is_none()
    );
    // Reading it deleted it: a purge finds only the other expired one.
    assert_eq!(sessions.session_purge(now).await.expect("purge"), 1);
    assert!(
        !sessions
            .session_delete(&stale.token_hash)
            .await
            .expect("delete")
    );
    assert!(
        sessions
            .session_get(&live.token_hash, now)
            .await
            .expect("get")
            .is_some()
    );
    // Later, the live one expires too.
    let later = now + Duration::hours(2);
    assert!(
        sessions
            .session_get(&live.token_hash, later)
            .await
            .expect("get")
            .is_none()
    );
}
