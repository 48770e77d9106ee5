//! Many webhook deliveries in one go: the group committer's fast path for `Write::Accept`.
//!
//! One by one, a delivery costs two statements (its job, then its delivery row), and with
//! sqlx every statement is a round trip to the connection's worker thread. Here the batch's
//! jobs go in one multi-row insert and their deliveries in a second, so a batch of 64 costs
//! two round trips instead of 128.
//!
//! The result must be exactly what writing them one by one would give. Jobs deduplicated by
//! meaning are: a job whose key is taken (by an older job or an earlier one in the same
//! statement) is not returned by `RETURNING`, and its delivery is then not recorded, as one by
//! one. A delivery id already recorded (a redelivery) is the rare case where the orders could
//! differ (one by one, the job it would have queued is deleted, which may free its key for a
//! later delivery in the batch); then [`accept_many`] answers `None` and the caller rolls back
//! to its savepoint and writes the batch one by one.

use std::collections::HashSet;

use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use uuid::Uuid;

use super::rows;
use super::{DeliveryOutcome, NewDelivery, NewJob, StoreError};

/// Rows per statement: 8 parameters a job, well under SQLite's 32,766.
const CHUNK: usize = 512;

/// Records `accepts` (in order) and answers each one's outcome, or `None` when one of the
/// delivery ids was already recorded and the batch must be written one by one instead.
pub(super) async fn accept_many(
    conn: &mut SqliteConnection,
    accepts: &[(&NewDelivery, Option<&NewJob>)],
    now: i64,
) -> Result<Option<Vec<DeliveryOutcome>>, StoreError> {
    let ids: Vec<Option<Uuid>> = accepts
        .iter()
        .map(|(_, job)| job.map(|_| Uuid::new_v4()))
        .collect();
    let inserted = insert_jobs(conn, accepts, &ids, now).await?;
    // A job that was not inserted is a duplicate by meaning: its delivery is not recorded.
    let outcomes: Vec<DeliveryOutcome> = ids
        .iter()
        .map(|id| match id {
            Some(id) if !inserted.contains(id) => DeliveryOutcome::Duplicate,
            id => DeliveryOutcome::Accepted { job: *id },
        })
        .collect();
    let wanted: Vec<(&NewDelivery, Option<Uuid>)> = accepts
        .iter()
        .zip(&outcomes)
        .filter_map(|((delivery, _), outcome)| match outcome {
            DeliveryOutcome::Accepted { job } => Some((*delivery, *job)),
            DeliveryOutcome::Duplicate => None,
        })
        .collect();
    let recorded = insert_deliveries(conn, &wanted, now).await?;
    Ok((recorded == wanted.len()).then_some(outcomes))
}

/// Inserts the jobs that have an id; answers the ids actually inserted.
async fn insert_jobs(
    conn: &mut SqliteConnection,
    accepts: &[(&NewDelivery, Option<&NewJob>)],
    ids: &[Option<Uuid>],
    now: i64,
) -> Result<HashSet<Uuid>, StoreError> {
    let jobs: Vec<(Uuid, &NewJob)> = accepts
        .iter()
        .zip(ids)
        .filter_map(|((_, job), id)| Some(((*id)?, (*job)?)))
        .collect();
    let mut inserted = HashSet::with_capacity(jobs.len());
    for chunk in jobs.chunks(CHUNK) {
        let rows: Vec<(String, &NewJob, Option<i64>, String)> = chunk
            .iter()
            .map(|(id, job)| {
                Ok((
                    id.to_string(),
                    *job,
                    rows::pr_to_db(job.pr)?,
                    job.payload.to_string(),
                ))
            })
            .collect::<Result<_, StoreError>>()?;
        let mut q = QueryBuilder::<Sqlite>::new(
            "INSERT INTO jobs (id, kind, repo, pr, state, payload, dedup_key, created_at, updated_at) ",
        );
        q.push_values(&rows, |mut b, (id, job, pr, payload)| {
            b.push_bind(id.as_str())
                .push_bind(job.kind.as_str())
                .push_bind(job.repo.as_str())
                .push_bind(*pr)
                .push("'queued'")
                .push_bind(payload.as_str())
                .push_bind(job.dedup_key.as_deref())
                .push_bind(now)
                .push_bind(now);
        });
        q.push(" ON CONFLICT DO NOTHING RETURNING id");
        for row in q.build().fetch_all(&mut *conn).await? {
            let id: String = row.try_get(0)?;
            inserted.insert(
                Uuid::parse_str(&id).map_err(|e| {
                    StoreError::Internal(format!("jobs.id {id:?} is not a UUID: {e}"))
                })?,
            );
        }
    }
    Ok(inserted)
}

/// Inserts the delivery rows; answers how many were new.
async fn insert_deliveries(
    conn: &mut SqliteConnection,
    deliveries: &[(&NewDelivery, Option<Uuid>)],
    now: i64,
) -> Result<usize, StoreError> {
    let mut recorded = 0;
    for chunk in deliveries.chunks(CHUNK) {
        let rows: Vec<(&NewDelivery, Option<String>)> = chunk
            .iter()
            .map(|(d, job)| (*d, job.map(|id| id.to_string())))
            .collect();
        let mut q = QueryBuilder::<Sqlite>::new(
            "INSERT INTO deliveries (forge, delivery_id, event, repo, job_id, received_at) ",
        );
        q.push_values(&rows, |mut b, (d, job)| {
            b.push_bind(d.forge.as_str())
                .push_bind(d.delivery_id.as_str())
                .push_bind(d.event.as_str())
                .push_bind(d.repo.as_str())
                .push_bind(job.as_deref())
                .push_bind(now);
        });
        q.push(" ON CONFLICT DO NOTHING");
        let done = q.build().execute(&mut *conn).await?.rows_affected();
        recorded += usize::try_from(done).unwrap_or(usize::MAX);
    }
    Ok(recorded)
}
