//! The store side of dashboard sessions (owned by `web`): one row per live session, keyed by the
//! SHA-256 of its token. The token itself never reaches the store; callers pass the hash.

use std::fmt;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;
use super::sql::{Db, Sql};

/// A dashboard session as stored. `Debug` hides the hash and the CSRF token.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// Lowercase hex SHA-256 of the session token (64 characters).
    pub token_hash: String,
    pub username: String,
    /// The session's CSRF token (worthless without the session cookie).
    pub csrf: String,
    pub expires_at: OffsetDateTime,
}

impl fmt::Debug for StoredSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredSession")
            .field("username", &self.username)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// Dashboard sessions; implemented once for both backends.
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Stores a new session (a hash already present is a conflict).
    async fn session_create(&self, session: &StoredSession) -> Result<(), StoreError>;
    /// The session with this hash if it has not expired at `now`; an expired one is deleted.
    async fn session_get(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<StoredSession>, StoreError>;
    /// Deletes the session (logout); `false` when there was none.
    async fn session_delete(&self, token_hash: &str) -> Result<bool, StoreError>;
    /// Deletes every session expired at `now`; returns how many.
    async fn session_purge(&self, now: OffsetDateTime) -> Result<u64, StoreError>;
}

/// The sessions of a store that keeps none (test fakes).
#[derive(Debug)]
pub(super) struct NoSessions;

fn no_sessions() -> StoreError {
    StoreError::Unavailable("this store keeps no dashboard sessions".to_owned())
}

#[async_trait]
impl SessionStore for NoSessions {
    async fn session_create(&self, _: &StoredSession) -> Result<(), StoreError> {
        Err(no_sessions())
    }
    async fn session_get(
        &self,
        _: &str,
        _: OffsetDateTime,
    ) -> Result<Option<StoredSession>, StoreError> {
        Err(no_sessions())
    }
    async fn session_delete(&self, _: &str) -> Result<bool, StoreError> {
        Err(no_sessions())
    }
    async fn session_purge(&self, _: OffsetDateTime) -> Result<u64, StoreError> {
        Err(no_sessions())
    }
}

fn conflict(e: StoreError) -> StoreError {
    match e {
        StoreError::Conflict(_) => {
            StoreError::Conflict("a session with this token already exists".to_owned())
        }
        other => other,
    }
}

#[async_trait]
impl SessionStore for Db {
    async fn session_create(&self, s: &StoredSession) -> Result<(), StoreError> {
        Sql::new(
            "INSERT INTO web_sessions (token_hash, username, csrf, created_at, expires_at)
             VALUES ($1, $2, $3, {now}, $4)",
        )
        .bind(&s.token_hash)
        .bind(&s.username)
        .bind(&s.csrf)
        .bind(s.expires_at)
        .execute(self.write())
        .await
        .map_err(conflict)?;
        Ok(())
    }

    async fn session_get(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<StoredSession>, StoreError> {
        let row = Sql::new(
            "SELECT token_hash, username, csrf, expires_at FROM web_sessions WHERE token_hash = $1",
        )
        .bind(token_hash)
        .fetch_optional(self.read())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let session = StoredSession {
            token_hash: row.get("token_hash")?,
            username: row.get("username")?,
            csrf: row.get("csrf")?,
            expires_at: row.time("expires_at")?,
        };
        if session.expires_at <= now {
            self.session_delete(token_hash).await?;
            return Ok(None);
        }
        Ok(Some(session))
    }

    async fn session_delete(&self, token_hash: &str) -> Result<bool, StoreError> {
        let deleted = Sql::new("DELETE FROM web_sessions WHERE token_hash = $1")
            .bind(token_hash)
            .execute(self.write())
            .await?;
        Ok(deleted > 0)
    }

    async fn session_purge(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        Sql::new("DELETE FROM web_sessions WHERE expires_at <= $1")
            .bind(now)
            .execute(self.write())
            .await
    }
}
