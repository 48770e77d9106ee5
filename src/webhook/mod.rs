//! `POST /events`: raw bytes to a verified, deduplicated, normalised `ForgeEvent` and a durable
//! job. Never calls a forge API or Proxmox: anything that needs one becomes a job.
//!
//! Order of checks, cheapest first: JSON content type, forge headers, forge enabled, a signature
//! header ([`Intake::check_headers`], before the body is read), HMAC over the raw bytes
//! (nothing is parsed or stored before it verifies), payload, allowlist, then the store records
//! the delivery and its job in one transaction. Only then is 202 returned.

mod allowlist;
mod delivery;
mod jobs;
mod signature;

use std::sync::Arc;

use axum::http::HeaderMap;
use secrecy::SecretString;
use uuid::Uuid;

use crate::commands::Grammar;
use crate::config::{ForgeSettings, WebhookSettings};
use crate::forge::{self, EventHeaders, ForgeEvent};
use crate::store::{DeliveryOutcome, NewDelivery, Store, StoreError};
use model::ForgeKind;

pub use allowlist::RepoAllowlist;
pub use signature::sign;

/// Everything the intake needs, taken from the settings at start-up.
#[derive(Debug, Clone)]
pub struct IntakeSettings {
    pub github: ForgeSettings,
    pub gitea: ForgeSettings,
    pub repo_allowlist: Vec<String>,
    pub policy: WebhookSettings,
    pub executable_name: String,
    /// `commands.allow_commands`: the comments that become jobs; others are answered.
    pub allow_commands: crate::commands::AllowedCommands,
}

/// One forge's verified intake: its secret and comment grammar.
#[derive(Debug)]
struct ForgeIntake {
    secret: SecretString,
    grammar: Grammar,
    bot_user: Option<String>,
}

/// The webhook intake: verifies, parses, deduplicates and stores.
#[derive(Debug)]
pub struct Intake {
    store: Arc<dyn Store>,
    github: Option<ForgeIntake>,
    gitea: Option<ForgeIntake>,
    allowlist: RepoAllowlist,
    policy: WebhookSettings,
}

/// What a delivery led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receipt {
    /// The job is durably stored.
    Queued { job: Uuid },
    /// Verified and understood, but nothing to do.
    NoJob { reason: String },
    /// Seen before (same delivery id, or same meaning); nothing stored.
    Duplicate,
}

/// Why a delivery was refused, by what the sender can do about it.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("content type must be application/json; configure the webhook to send JSON")]
    UnsupportedMediaType,
    #[error(
        "not a webhook from a known forge: no X-GitHub-Event, X-Gitea-Event or X-Forgejo-Event header"
    )]
    UnknownForge,
    #[error("{0} webhooks are not enabled on this server; set {0}.enabled and {0}.webhook_secret")]
    ForgeDisabled(&'static str),
    #[error("missing header {0}")]
    MissingHeader(String),
    #[error("bad header: {0}")]
    BadHeader(String),
    #[error("missing signature; configure the webhook secret on the forge")]
    MissingSignature,
    #[error("signature does not match; check that the forge and atoll use the same secret")]
    BadSignature,
    #[error("{0}")]
    InvalidPayload(String),
    #[error("repository {0} is not in repo_allowlist")]
    RepoNotAllowed(String),
    #[error("could not store the delivery: {0}")]
    Store(#[from] StoreError),
}

impl Intake {
    /// Builds the intake; fails if an enabled forge has no secret or the allowlist is invalid.
    pub fn new(store: Arc<dyn Store>, settings: &IntakeSettings) -> Result<Self, String> {
        let forge = |name: &str, s: &ForgeSettings| -> Result<Option<ForgeIntake>, String> {
            if !s.enabled {
                return Ok(None);
            }
            let secret = s.webhook_secret.clone().ok_or_else(|| {
                format!("{name} is enabled but {name}.webhook_secret is not set; refusing to start")
            })?;
            let grammar = Grammar::new(&settings.executable_name, s.bot_user.as_deref())
                .allowing(settings.allow_commands.clone());
            Ok(Some(ForgeIntake {
                secret,
                grammar,
                bot_user: s.bot_user.clone(),
            }))
        };
        Ok(Self {
            store,
            github: forge("github", &settings.github)?,
            gitea: forge("gitea", &settings.gitea)?,
            allowlist: RepoAllowlist::new(&settings.repo_allowlist)?,
            policy: settings.policy,
        })
    }

    /// The checks that need no body: JSON content type, a known and enabled forge, a
    /// signature header. Run before the body is read, so a delivery that cannot verify costs
    /// nothing.
    pub fn check_headers(&self, headers: &HeaderMap) -> Result<(), WebhookError> {
        self.headers(headers).map(|_| ())
    }

    fn headers<'h>(
        &self,
        headers: &'h HeaderMap,
    ) -> Result<(delivery::DeliveryHeaders<'h>, &ForgeIntake, &'h str), WebhookError> {
        if !delivery::is_json(headers) {
            return Err(WebhookError::UnsupportedMediaType);
        }
        let d = delivery::read(headers)?;
        let span = tracing::Span::current();
        span.record("delivery.id", d.delivery_id);
        span.record("forge", d.flavour);
        let intake = match d.forge {
            ForgeKind::Github => self.github.as_ref(),
            ForgeKind::Gitea => self.gitea.as_ref(),
        }
        .ok_or(WebhookError::ForgeDisabled(d.forge.as_str()))?;
        let sig = d.signature.ok_or(WebhookError::MissingSignature)?;
        Ok((d, intake, sig))
    }

    /// Handles one delivery. The current span gets `delivery.id`, `forge`, `repo` and
    /// `pr.number` recorded as they become known.
    pub async fn receive(&self, headers: &HeaderMap, body: &[u8]) -> Result<Receipt, WebhookError> {
        let (d, intake, sig) = self.headers(headers)?;
        let span = tracing::Span::current();
        if !signature::verify(&intake.secret, body, sig) {
            return Err(WebhookError::BadSignature);
        }
        let names = EventHeaders {
            event: d.event,
            event_type: d.event_type,
        };
        let event = forge::parse_event(d.forge, names, body)
            .map_err(|e| WebhookError::InvalidPayload(e.to_string()))?;
        if let Some(repo) = event.repo() {
            let repo = repo.to_string();
            span.record("repo", repo.as_str());
            if !self.allowlist.allows(&repo) {
                return Err(WebhookError::RepoNotAllowed(repo));
            }
        }
        if let Some(pr) = event.pr_number() {
            span.record("pr.number", pr);
        }
        self.enqueue(&d, &event, intake, body).await
    }

    async fn enqueue(
        &self,
        d: &delivery::DeliveryHeaders<'_>,
        event: &ForgeEvent,
        intake: &ForgeIntake,
        body: &[u8],
    ) -> Result<Receipt, WebhookError> {
        let ctx = jobs::Context {
            forge: d.forge,
            policy: self.policy,
            grammar: &intake.grammar,
            bot_user: intake.bot_user.as_deref(),
            signed_body: body,
        };
        let job = match jobs::decide(&ctx, event) {
            jobs::Decision::NoJob(reason) => {
                tracing::debug!(%reason, "delivery needs no job");
                return Ok(Receipt::NoJob { reason });
            }
            jobs::Decision::Job(job) => job,
            jobs::Decision::Invalid(e) => return Err(WebhookError::InvalidPayload(e)),
        };
        let record = NewDelivery {
            forge: d.forge,
            delivery_id: d.delivery_id.to_owned(),
            event: d.event_type.unwrap_or(d.event).to_owned(),
            repo: job.repo.clone(),
        };
        let kind = job.kind.clone();
        match self.store.accept_delivery(record, Some(job)).await? {
            DeliveryOutcome::Accepted { job: Some(id) } => {
                tracing::info!(job.id = %id, job.kind = %kind, "job queued");
                Ok(Receipt::Queued { job: id })
            }
            DeliveryOutcome::Accepted { job: None } => Err(WebhookError::Store(
                StoreError::Internal("delivery accepted without its job".to_owned()),
            )),
            DeliveryOutcome::Duplicate => {
                tracing::info!(job.kind = %kind, "duplicate delivery; nothing queued");
                Ok(Receipt::Duplicate)
            }
        }
    }
}
