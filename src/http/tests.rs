//! Router behaviour when the store is down: `/readyz` is 503 and a verified delivery is a 503
//! that names no internals (the forge may redeliver).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt;
use uuid::Uuid;

use super::{AppState, router};
use crate::config::{ForgeSettings, WebhookSettings};
use crate::locks::{
    Acquisition, ApplySwitch, AuditEvent, AuditStamp, ClosedPr, Lock, LockKey, LockOwner,
    LockQuery, NewAuditEvent, NewPlan, PlanQuery, Release, SavedPlan,
};
use crate::store::{
    AuditStore, ClaimLimits, DeliveryOutcome, Job, JobSignal, JobState, JournalEntry, JournalStore,
    LockStore, LogLine, NewDelivery, NewJob, PlanStore, Pruned, QueueStore, Reaped, Store,
    StoreError,
};
use crate::webhook::{Intake, IntakeSettings, sign};

/// A store whose database is unreachable.
#[derive(Debug)]
struct DownStore(tokio::sync::watch::Sender<u64>);

fn down<T>() -> Result<T, StoreError> {
    Err(StoreError::Unavailable(
        "connection refused (db.internal:5432)".to_owned(),
    ))
}

impl Store for DownStore {
    fn locks(&self) -> &dyn LockStore {
        self
    }
    fn plans(&self) -> &dyn PlanStore {
        self
    }
    fn audit(&self) -> &dyn AuditStore {
        self
    }
    fn journal(&self) -> &dyn JournalStore {
        self
    }
}

#[async_trait::async_trait]
impl JournalStore for DownStore {
    async fn journal_append(&self, _: Uuid, _: &JournalEntry) -> Result<(), StoreError> {
        down()
    }
    async fn journal(&self, _: Uuid) -> Result<Vec<JournalEntry>, StoreError> {
        down()
    }
}

#[async_trait::async_trait]
impl QueueStore for DownStore {
    async fn ping(&self) -> Result<(), StoreError> {
        down()
    }
    async fn accept_delivery(
        &self,
        _: NewDelivery,
        _: Option<NewJob>,
    ) -> Result<DeliveryOutcome, StoreError> {
        down()
    }
    async fn enqueue(&self, _: NewJob) -> Result<DeliveryOutcome, StoreError> {
        down()
    }
    async fn claim(
        &self,
        _: &str,
        _: &[&str],
        _: Duration,
        _: ClaimLimits,
    ) -> Result<Option<Job>, StoreError> {
        down()
    }
    async fn heartbeat(&self, _: Uuid, _: &str, _: Duration) -> Result<bool, StoreError> {
        down()
    }
    async fn transition(
        &self,
        _: Uuid,
        _: &str,
        _: JobState,
        _: Option<&str>,
    ) -> Result<bool, StoreError> {
        down()
    }
    async fn set_progress(
        &self,
        _: Uuid,
        _: &str,
        _: crate::store::JobProgress,
    ) -> Result<bool, StoreError> {
        down()
    }
    async fn reap(&self, _: u32) -> Result<Reaped, StoreError> {
        down()
    }
    async fn prune(&self, _: Duration) -> Result<Pruned, StoreError> {
        down()
    }
    fn job_signal(&self) -> JobSignal {
        self.0.subscribe()
    }
    async fn get_job(&self, _: Uuid) -> Result<Option<Job>, StoreError> {
        down()
    }
    async fn list_jobs(&self, _: u32) -> Result<Vec<Job>, StoreError> {
        down()
    }
    async fn list_pr_jobs(&self, _: &str, _: u64, _: &str, _: u32) -> Result<Vec<Job>, StoreError> {
        down()
    }
    async fn list_jobs_in_state(&self, _: JobState, _: u32) -> Result<Vec<Job>, StoreError> {
        down()
    }
    async fn append_log(&self, _: Uuid, _: &str) -> Result<i64, StoreError> {
        down()
    }
    async fn job_log(&self, _: Uuid, _: i64) -> Result<Vec<LogLine>, StoreError> {
        down()
    }

    async fn cancel_queued(
        &self,
        _: &crate::store::CancelQueued<'_>,
    ) -> Result<Vec<Job>, StoreError> {
        down()
    }
}

#[async_trait::async_trait]
impl LockStore for DownStore {
    async fn lock_acquire(&self, _: &[LockKey], _: &LockOwner) -> Result<Acquisition, StoreError> {
        down()
    }
    async fn lock_release(&self, _: &Release, _: &AuditStamp) -> Result<Vec<Lock>, StoreError> {
        down()
    }
    async fn lock_get(&self, _: Uuid) -> Result<Option<Lock>, StoreError> {
        down()
    }
    async fn lock_list(&self, _: &LockQuery) -> Result<Vec<Lock>, StoreError> {
        down()
    }
    async fn pr_closed(&self, _: &str, _: u64, _: &AuditStamp) -> Result<ClosedPr, StoreError> {
        down()
    }
    async fn lock_acquire_remote(
        &self,
        _: &LockKey,
        _: &LockOwner,
    ) -> Result<Acquisition, StoreError> {
        down()
    }
}

#[async_trait::async_trait]
impl PlanStore for DownStore {
    async fn plan_save(&self, _: &NewPlan) -> Result<SavedPlan, StoreError> {
        down()
    }
    async fn plan_get(&self, _: Uuid) -> Result<Option<SavedPlan>, StoreError> {
        down()
    }
    async fn plan_list(&self, _: &PlanQuery) -> Result<Vec<SavedPlan>, StoreError> {
        down()
    }
    async fn plan_mark_applied(&self, _: Uuid) -> Result<(), StoreError> {
        down()
    }
    async fn plan_supersede_pr(&self, _: &str, _: u64) -> Result<u64, StoreError> {
        down()
    }
    async fn plan_supersede_key(
        &self,
        _: &crate::locks::LockKey,
        _: u64,
    ) -> Result<(), StoreError> {
        down()
    }
    async fn plan_policy_check_replace(
        &self,
        _: Uuid,
        _: Option<&serde_json::Value>,
        _: &serde_json::Value,
    ) -> Result<bool, StoreError> {
        down()
    }
    async fn plan_comments_replace(
        &self,
        _: &str,
        _: u64,
        _: &[u64],
    ) -> Result<Vec<u64>, StoreError> {
        down()
    }
}

#[async_trait::async_trait]
impl AuditStore for DownStore {
    async fn audit_append(&self, _: &NewAuditEvent) -> Result<AuditEvent, StoreError> {
        down()
    }
    async fn audit_list(&self, _: u32, _: Option<i64>) -> Result<Vec<AuditEvent>, StoreError> {
        down()
    }
    async fn apply_switch(&self) -> Result<ApplySwitch, StoreError> {
        down()
    }
    async fn set_apply_switch(&self, _: bool, _: &AuditStamp) -> Result<ApplySwitch, StoreError> {
        down()
    }
}

fn app() -> axum::Router {
    let store: Arc<dyn Store> = Arc::new(DownStore(tokio::sync::watch::channel(0).0));
    let forge = |enabled| ForgeSettings {
        enabled,
        webhook_secret: Some("s".to_owned().into()),
        bot_user: None,
        api_url: None,
        token: None,
        app: None,
        max_comment_chars: crate::forge::DEFAULT_MAX_COMMENT_CHARS,
    };
    let settings = IntakeSettings {
        github: forge(true),
        gitea: forge(false),
        repo_allowlist: vec!["*".to_owned()],
        policy: WebhookSettings {
            allow_draft_prs: false,
            allow_fork_prs: false,
        },
        executable_name: "atoll".to_owned(),
        allow_commands: crate::commands::AllowedCommands::default(),
    };
    let intake = Intake::new(Arc::clone(&store), &settings).expect("intake");
    super::with_outer_layers(router(
        AppState {
            intake: Arc::new(intake),
            store,
            bodies: super::BodyBudget::new(crate::config::WebhookBodySettings {
                max_body_bytes: 1 << 20,
                max_concurrent_bodies: 4,
                max_buffered_bytes: 4 << 20,
            }),
        },
        Duration::from_secs(5),
    ))
}

async fn body_text(resp: axum::response::Response) -> String {
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .expect("body");
    String::from_utf8_lossy(&bytes).into_owned()
}

#[tokio::test]
async fn readyz_is_503_when_the_store_is_unreachable_and_healthz_stays_200() {
    let req = || {
        Request::builder()
            .uri("/readyz")
            .body(Body::empty())
            .expect("request")
    };
    let resp = app().oneshot(req()).await.expect("response");
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    let health = Request::builder()
        .uri("/healthz")
        .body(Body::empty())
        .expect("request");
    assert_eq!(
        app().oneshot(health).await.expect("response").status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn delivery_is_503_without_internals_when_the_store_is_down() {
    let body = br#"{"action":"opened","number":1,"pull_request":{"number":1,"head":{"ref":"f","sha":"abc","repo":{"full_name":"a/b"}},"base":{"ref":"main","sha":"def","repo":{"full_name":"a/b"}}},"repository":{"full_name":"a/b","html_url":"https://github.com/a/b"}}"#;
    let req = Request::post("/events")
        .header("content-type", "application/json")
        .header("x-github-event", "pull_request")
        .header("x-github-delivery", "d1")
        .header("x-hub-signature-256", format!("sha256={}", sign("s", body)))
        .body(Body::from(&body[..]))
        .expect("request");
    let resp = app().oneshot(req).await.expect("response");
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    let id = resp
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .expect("x-request-id")
        .to_owned();
    let text = body_text(resp).await;
    assert!(text.contains("redeliver"), "{text}");
    assert!(text.contains(&id), "the error names its request id: {text}");
    assert!(!text.contains("db.internal"), "internals leaked: {text}");
}
