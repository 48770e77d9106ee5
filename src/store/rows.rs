//! Conversions and messages shared by both backends: row values to domain types and back.

use std::time::Duration;

use time::OffsetDateTime;
use uuid::Uuid;

use super::{JobState, StoreError};

/// Stored as the error of a job whose lease expired while it was applying.
pub(crate) const INTERRUPTED_MESSAGE: &str = "the worker stopped renewing its lease while applying; \
     the change may be partly made and is not retried: check the guests, then comment `atlantis plan` again";

/// How the error of a job failed by the reaper (its worker kept dying) starts.
pub(crate) const GAVE_UP_PREFIX: &str = "the worker running this job died";

/// Stored as the error of a job whose worker died under it `queue.max_attempts` times (the
/// count is the job's `lost_leases`).
pub(crate) const GAVE_UP_MESSAGE: &str = "the worker running this job died (stopped renewing \
     its lease) each time it was started; not started again: see the server log for what killed \
     it, then run the command again";

pub(crate) fn pr_to_db(pr: Option<u64>) -> Result<Option<i64>, StoreError> {
    pr.map(|n| {
        i64::try_from(n)
            .map_err(|_| StoreError::Internal(format!("pull request number {n} is out of range")))
    })
    .transpose()
}

pub(crate) fn pr_from_db(pr: Option<i64>) -> Result<Option<u64>, StoreError> {
    pr.map(|n| {
        u64::try_from(n).map_err(|_| {
            StoreError::Internal(format!("stored pull request number {n} is negative"))
        })
    })
    .transpose()
}

pub(crate) fn state_from_db(state: &str) -> Result<JobState, StoreError> {
    JobState::parse(state)
        .ok_or_else(|| StoreError::Internal(format!("unknown job state `{state}`")))
}

pub(crate) fn attempts_from_db(attempts: i64) -> Result<u32, StoreError> {
    u32::try_from(attempts).map_err(|_| {
        StoreError::Internal(format!("stored attempt count {attempts} is out of range"))
    })
}

pub(crate) fn uuid_from_db(id: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(id).map_err(|e| StoreError::Internal(format!("stored job id `{id}`: {e}")))
}

/// A lease length in whole microseconds, saturating (a lease of centuries is still a lease).
pub(crate) fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

/// The kind names as one JSON array parameter, so a list binds as a single value.
pub(crate) fn json_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    serde_json::Value::from(items.into_iter().collect::<Vec<_>>()).to_string()
}

/// Now, in Unix microseconds (SQLite's time columns).
pub(crate) fn now_micros() -> i64 {
    i64::try_from(OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
}

/// A lock's `forge` column (`NULL` for locks taken before locks recorded it).
pub(crate) fn forge_column(forge: Option<String>) -> Result<Option<model::ForgeKind>, StoreError> {
    forge
        .map(|name| {
            model::ForgeKind::parse(&name).ok_or_else(|| {
                StoreError::Internal(format!("stored forge {name:?} is not one atoll knows"))
            })
        })
        .transpose()
}
