//! PostgreSQL's reaper: its moves on expired leases, by the database clock.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::rows::{self, INTERRUPTED_MESSAGE};
use super::{Reaped, StoreError};

fn ids(rows: &[PgRow]) -> Result<Vec<Uuid>, StoreError> {
    rows.iter().map(|row| Ok(row.try_get("id")?)).collect()
}

/// The reaper's three moves, in one transaction. A running job whose lease expires counts a
/// lost lease; the one that reaches `max_attempts` fails it.
pub(super) async fn reap_expired(
    tx: &mut PgConnection,
    max_attempts: u32,
) -> Result<Reaped, StoreError> {
    let max = i32::try_from(max_attempts).unwrap_or(i32::MAX);
    let failed = sqlx::query(
        "UPDATE jobs SET state = 'failed', lease_until = NULL, lost_leases = lost_leases + 1,
             error = $1, finished_at = clock_timestamp(), updated_at = clock_timestamp()
         WHERE state = 'running' AND lease_until <= clock_timestamp() AND lost_leases + 1 >= $2
         RETURNING id",
    )
    .bind(rows::GAVE_UP_MESSAGE)
    .bind(max)
    .fetch_all(&mut *tx)
    .await?;
    // The clock moves between statements: a job that expired since the first is left to the
    // next pass rather than requeued past its last attempt.
    let requeued = sqlx::query(
        "UPDATE jobs SET state = 'queued', worker = NULL, lease_until = NULL,
             lost_leases = lost_leases + 1, updated_at = clock_timestamp()
         WHERE state = 'running' AND lease_until <= clock_timestamp() AND lost_leases + 1 < $1
         RETURNING id",
    )
    .bind(max)
    .fetch_all(&mut *tx)
    .await?;
    let interrupted = sqlx::query(
        "UPDATE jobs SET state = 'interrupted', lease_until = NULL, error = $1,
             finished_at = clock_timestamp(), updated_at = clock_timestamp()
         WHERE state = 'applying' AND lease_until <= clock_timestamp() RETURNING id",
    )
    .bind(INTERRUPTED_MESSAGE)
    .fetch_all(&mut *tx)
    .await?;
    Ok(Reaped {
        requeued: ids(&requeued)?,
        interrupted: ids(&interrupted)?,
        failed: ids(&failed)?,
    })
}
