//! The cases, written once against `dyn Store`, and the helpers they share.

#[path = "claims.rs"]
mod claims;
#[path = "deaths.rs"]
mod deaths;
#[path = "deliveries.rs"]
mod deliveries;
#[path = "lifecycle.rs"]
mod lifecycle;
#[path = "progress.rs"]
mod progress;
#[path = "sessions.rs"]
mod sessions;

pub(crate) use claims::*;
pub(crate) use deaths::*;
pub(crate) use deliveries::*;
pub(crate) use lifecycle::*;
pub(crate) use progress::*;
pub(crate) use sessions::*;

use std::time::Duration;

use model::ForgeKind;

use atoll::store::{ClaimLimits, DeliveryOutcome, JobState, NewDelivery, NewJob, Store};
use serde_json::json;
use uuid::Uuid;

pub(crate) const LEASE: Duration = Duration::from_secs(60);
pub(crate) const EXPIRED: Duration = Duration::ZERO;
pub(crate) const WIDE: ClaimLimits = ClaimLimits {
    global: 100,
    per_repo: 100,
    per_repo_exempt: &[],
};

pub(crate) fn delivery(forge: ForgeKind, id: &str) -> NewDelivery {
    NewDelivery {
        forge,
        delivery_id: id.to_owned(),
        event: "issue_comment".to_owned(),
        repo: "github.com/acme/infra".to_owned(),
    }
}

pub(crate) fn job(kind: &str, repo: &str, dedup: Option<&str>) -> NewJob {
    NewJob {
        kind: kind.to_owned(),
        repo: repo.to_owned(),
        pr: Some(7),
        dedup_key: dedup.map(str::to_owned),
        payload: json!({"command": "plan", "dir": "envs/dev"}),
    }
}

pub(crate) fn accepted(outcome: DeliveryOutcome) -> Uuid {
    match outcome {
        DeliveryOutcome::Accepted { job: Some(id) } => id,
        other => panic!("expected an accepted job, got {other:?}"),
    }
}

pub(crate) async fn queue(store: &dyn Store, kind: &str, repo: &str) -> Uuid {
    accepted(store.enqueue(job(kind, repo, None)).await.expect("enqueue"))
}

pub(crate) async fn state(store: &dyn Store, id: Uuid) -> JobState {
    store
        .get_job(id)
        .await
        .expect("get_job")
        .expect("job exists")
        .state
}
