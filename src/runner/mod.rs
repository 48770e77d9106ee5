//! The jobs behind PR automation: `autoplan`/`plan`, `apply`, `apply_interrupted` (the report
//! of an apply cut short by a restart), `apply_coalesced` (the one answer to identical apply
//! comments), `job_gave_up` (the report of a job whose worker kept dying), `unlock`,
//! `announce_unlock` (the dashboard released a lock), `pr_closed`, `reply`, `help` and
//! `version`. Each job is a pipeline of named steps (logged to the job's durable
//! log) that ends in a PR comment: a result, or a failure saying what to do next.
//!
//! It owns orchestration only: it must not parse commands (`commands`), talk HTTP to a forge
//! itself (`forge`), run git (`workdir`), decide projects (`repocfg`), plan or apply
//! (`proxmox`), or format Markdown (`render`). Nothing from a comment reaches a shell.

mod apply;
mod build;
mod coalesce;
mod gate;
mod gave_up;
mod interrupted;
mod other;
mod parallel;
mod plan;
mod post;
mod progress;
mod project;
mod reaped;
mod requirements;

use std::sync::Arc;

use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use serde::Deserialize;

use crate::app::App;
use crate::commands::Command;
use crate::forge::{Forge, RepoName};
use crate::locks::UnlockAnnouncement;
use crate::proxmox::engine::Engine;
use crate::queue::{JobContext, JobHandler};
use crate::repocfg::ServerRules;
use crate::store::Store;
use crate::workdir::Workdir;
use model::ForgeKind;

pub use gate::Policy;

/// Everything the jobs use; shared by every handler.
#[derive(Debug)]
pub struct Runner {
    pub github: Option<Arc<dyn Forge>>,
    pub gitea: Option<Arc<dyn Forge>>,
    pub store: Arc<dyn Store>,
    pub workdir: Workdir,
    pub rules: ServerRules,
    /// `None`: no Proxmox endpoint configured; plans fail with that next step.
    pub engine: Option<Engine>,
    /// The command word users type (`atlantis`).
    pub executable: String,
    /// `server.public_url`: commit statuses link to `{public_url}/jobs/{id}` when set.
    pub public_url: Option<String>,
    /// What comments may make it do: forks, unlock, reply size.
    pub policy: Policy,
    /// `limits`: what a PR's checkout may make a job read and evaluate.
    pub limits: crate::config::LimitsSettings,
}

impl Runner {
    /// Registers a handler for every job kind the webhook intake creates, and for the report
    /// of interrupted applies: those already in the store and those the queue's reaper finds.
    pub fn register(self: Arc<Self>, app: App) -> App {
        let app = match reaped::start(Arc::clone(&self.store)) {
            Some(reports) => app.report_reaped(reports),
            None => app,
        };
        let kinds = [
            "autoplan",
            "plan",
            "apply",
            interrupted::KIND,
            coalesce::KIND,
            gave_up::KIND,
            "unlock",
            "pr_closed",
            "reply",
            "help",
            "version",
            UnlockAnnouncement::KIND,
        ];
        kinds.iter().fold(app, |app, kind| {
            app.handle(
                kind,
                KindHandler {
                    runner: Arc::clone(&self),
                    kind,
                },
            )
        })
    }

    fn forge(&self, kind: ForgeKind) -> anyhow::Result<Arc<dyn Forge>> {
        let forge = match kind {
            ForgeKind::Github => &self.github,
            ForgeKind::Gitea => &self.gitea,
        };
        forge.clone().ok_or_else(|| match kind {
            ForgeKind::Github => anyhow!(
                "no github API configured: set github.token, or github.app_id, \
                 github.app_private_key and github.installation_id, in the config"
            ),
            ForgeKind::Gitea => {
                anyhow!("no gitea API configured: set gitea.api_url and gitea.token in the config")
            }
        })
    }
}

struct KindHandler {
    runner: Arc<Runner>,
    kind: &'static str,
}

#[async_trait]
impl JobHandler for KindHandler {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
        let r = &self.runner;
        if self.kind == UnlockAnnouncement::KIND {
            return other::announce_unlock(r, ctx).await;
        }
        let job = Job::from_context(r, ctx)?;
        job.acknowledge().await;
        match self.kind {
            "autoplan" => plan::run(r, &job, None).await,
            "plan" => plan::run(r, &job, Some(job.command()?)).await,
            "apply" => apply::run(r, &job, &job.command()?).await,
            interrupted::KIND => interrupted::run(r, &job).await,
            coalesce::KIND => coalesce::run(r, &job).await,
            gave_up::KIND => gave_up::run(r, &job).await,
            "unlock" => other::unlock(r, &job, &job.command()?).await,
            "pr_closed" => other::pr_closed(r, &job).await,
            "reply" => other::reply(r, &job).await,
            "help" => other::help(r, &job).await,
            "version" => other::version(r, &job).await,
            other => Err(anyhow!("no runner for job kind {other}")),
        }
    }
}

/// The payload fields every PR job carries (see `webhook::jobs`).
#[derive(Debug, Deserialize)]
struct Payload {
    forge: ForgeKind,
    /// `host/owner/name`.
    repo: String,
    pr: u64,
    #[serde(default)]
    author: Option<String>,
    #[serde(default)]
    comment_id: Option<u64>,
    #[serde(default)]
    command: Option<Command>,
    #[serde(default)]
    reply: Option<crate::commands::Reply>,
    #[serde(default)]
    merged: Option<bool>,
    /// `apply_interrupted`: the apply job to report on.
    #[serde(default)]
    interrupted: Option<uuid::Uuid>,
    /// `apply_coalesced`: the apply identical comments were folded into.
    #[serde(default)]
    coalesced: Option<coalesce::Coalesced>,
    /// `job_gave_up`: the job whose worker kept dying.
    #[serde(default)]
    gave_up: Option<gave_up::GaveUp>,
}

/// One running job: its payload, forge client and repository names.
pub(crate) struct Job {
    ctx: JobContext,
    payload: Payload,
    forge: Arc<dyn Forge>,
    host: String,
    name: RepoName,
    /// This job's dashboard page, linked from every commit status it sets.
    page: Option<String>,
    /// Set once the job has moved to `applying` (several projects may apply, concurrently).
    applying: tokio::sync::OnceCell<()>,
    /// The most comments one reply is split into (`commands.max_reply_comments`).
    max_parts: usize,
}

impl Job {
    fn from_context(runner: &Runner, ctx: JobContext) -> anyhow::Result<Self> {
        let payload: Payload = serde_json::from_value(ctx.job().payload.clone())
            .context("job payload is not one the webhook intake writes")?;
        Self::with_payload(runner, ctx, payload)
    }

    /// A job of a kind whose payload is not the webhook intake's, with the PR it is about.
    fn with_payload(runner: &Runner, ctx: JobContext, payload: Payload) -> anyhow::Result<Self> {
        let (host, rest) = payload
            .repo
            .split_once('/')
            .ok_or_else(|| anyhow!("repository id {:?} is not host/owner/name", payload.repo))?;
        let name = RepoName::parse(rest).map_err(|e| anyhow!("repository id: {e}"))?;
        let page = runner
            .public_url
            .as_ref()
            .map(|base| format!("{base}/jobs/{}", ctx.job().id));
        Ok(Self {
            page,
            applying: tokio::sync::OnceCell::new(),
            max_parts: runner.policy.max_reply_comments,
            ctx,
            forge: runner.forge(payload.forge)?,
            host: host.to_owned(),
            name,
            payload,
        })
    }

    fn command(&self) -> anyhow::Result<Command> {
        self.payload
            .command
            .clone()
            .ok_or_else(|| anyhow!("job payload has no command"))
    }

    /// The actor for locks and audit: the commenter, else the PR author, else atoll.
    fn user(&self) -> String {
        self.payload
            .author
            .clone()
            .unwrap_or_else(|| "atoll".to_owned())
    }

    /// Reacts with "eyes" on the command comment, so the user sees it was picked up.
    async fn acknowledge(&self) {
        self.react(crate::forge::Reaction::Eyes).await;
    }

    /// Reacts on the command comment (if the job has one); a failure is logged, not fatal.
    async fn react(&self, reaction: crate::forge::Reaction) {
        let Some(id) = self.payload.comment_id else {
            return;
        };
        let id = crate::forge::CommentId(id);
        if let Err(e) = self.forge.react(&self.name, id, reaction).await {
            self.step(&format!("reacting to the comment failed: {e}"))
                .await;
        }
    }

    /// Moves the job to `applying` before its first change to Proxmox; later calls (the next
    /// project, or a concurrent one) find it done.
    async fn begin_apply(&self) -> anyhow::Result<()> {
        self.applying
            .get_or_try_init(|| self.ctx.begin_apply())
            .await?;
        Ok(())
    }

    /// Logs a step to the job's durable log (a log failure never stops the job).
    async fn step(&self, line: &str) {
        if let Err(e) = self.ctx.log(line).await {
            tracing::warn!(error = %e, "cannot write job log");
        }
    }
}
