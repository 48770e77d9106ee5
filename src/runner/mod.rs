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
mod policies;
mod post;
mod progress;
mod project;
mod reaped;
mod requirements;

use std::sync::Arc;

use anyhow::anyhow;
use async_trait::async_trait;

use crate::commands::Verb;
use crate::forge::{Forge, RepoName};
use crate::jobs::{JobKind, JobSpec, PrJob};
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
    /// Installs the remote modules a project calls (`modules:`).
    pub modules: crate::workdir::modules::Installer,
    /// `policies:`: the policy sets every plan is checked against (none: no check).
    pub policies: Arc<crate::policies::PolicySettings>,
}

impl Runner {
    /// The handler of every job kind ([`JobKind::ALL`]), for the composition root to register
    /// with the queue.
    pub fn handlers(self: &Arc<Self>) -> Vec<(JobKind, JobRunner)> {
        JobKind::ALL
            .iter()
            .map(|kind| {
                let handler = JobRunner {
                    runner: Arc::clone(self),
                };
                (*kind, handler)
            })
            .collect()
    }

    /// Starts the reporter of interrupted and given-up jobs (those already in the store, and
    /// those the queue's reaper will find); the queue sends each reaper pass to the sender.
    pub fn reaped_reports(
        &self,
    ) -> Option<tokio::sync::mpsc::UnboundedSender<crate::store::Reaped>> {
        reaped::start(Arc::clone(&self.store))
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

/// Runs one job of any kind: reads its [`JobSpec`] and runs the steps of that kind.
#[derive(Debug)]
pub struct JobRunner {
    runner: Arc<Runner>,
}

#[async_trait]
impl JobHandler for JobRunner {
    async fn run(&self, ctx: JobContext) -> anyhow::Result<()> {
        let r = &self.runner;
        let stored = ctx.job();
        let spec = JobSpec::parse(&stored.kind, &stored.payload)?;
        let job = match spec {
            JobSpec::AnnounceUnlock(note) => return other::announce_unlock(r, ctx, note).await,
            spec => Job::new(r, ctx, spec)?,
        };
        job.acknowledge().await;
        match &job.spec {
            JobSpec::Autoplan(_) => plan::run(r, &job, None).await,
            JobSpec::Command(c) => match c.command.verb {
                Verb::Plan => plan::run(r, &job, Some(c.command.clone())).await,
                Verb::Apply => apply::run(r, &job, &c.command).await,
                Verb::Unlock => other::unlock(r, &job, &c.command).await,
                Verb::Help => other::help(r, &job).await,
                Verb::Version => other::version(r, &job).await,
                Verb::ApprovePolicies => policies::approve(r, &job, &c.command).await,
            },
            JobSpec::Reply(reply) => other::reply(r, &job, &reply.reply).await,
            JobSpec::PrClosed(closed) => other::pr_closed(r, &job, closed.merged).await,
            JobSpec::ApplyInterrupted(about) => interrupted::run(r, &job, about.interrupted).await,
            JobSpec::ApplyCoalesced(about) => coalesce::run(r, &job, &about.coalesced).await,
            JobSpec::JobGaveUp(about) => gave_up::run(r, &job, &about.gave_up).await,
            JobSpec::AnnounceUnlock(_) => Err(anyhow!("announce_unlock runs without a PR job")),
        }
    }
}

/// One running job: what it is for, the PR it is about, its forge client.
pub(crate) struct Job {
    ctx: JobContext,
    spec: JobSpec,
    /// The PR and who asked (every job the runner builds has one).
    pr: PrJob,
    forge: Arc<dyn Forge>,
    /// `owner/name`, as the forge's API names the repository.
    name: RepoName,
    /// This job's dashboard page, linked from every commit status it sets.
    page: Option<String>,
    /// Set once the job has moved to `applying` (several projects may apply, concurrently).
    applying: tokio::sync::OnceCell<()>,
    /// The most comments one reply is split into (`commands.max_reply_comments`).
    max_parts: usize,
}

impl Job {
    /// A job about the PR its spec names (every kind but the dashboard's announcement).
    fn new(runner: &Runner, ctx: JobContext, spec: JobSpec) -> anyhow::Result<Self> {
        let pr = spec
            .pr()
            .cloned()
            .ok_or_else(|| anyhow!("{} job is not about a pull request", spec.kind().as_str()))?;
        Self::about(runner, ctx, spec, pr)
    }

    fn about(runner: &Runner, ctx: JobContext, spec: JobSpec, pr: PrJob) -> anyhow::Result<Self> {
        let name =
            RepoName::parse(&pr.repo.full_name()).map_err(|e| anyhow!("repository id: {e}"))?;
        let page = runner
            .public_url
            .as_ref()
            .map(|base| format!("{base}/jobs/{}", ctx.job().id));
        Ok(Self {
            page,
            applying: tokio::sync::OnceCell::new(),
            max_parts: runner.policy.max_reply_comments,
            ctx,
            forge: runner.forge(pr.forge)?,
            name,
            spec,
            pr,
        })
    }

    /// The repository as locks, plans and state key it (`host/owner/name`).
    fn repo(&self) -> String {
        self.pr.repo.to_string()
    }

    /// The forge's host.
    fn host(&self) -> &str {
        self.pr.repo.host()
    }

    /// The actor for locks and audit: the commenter, else the PR author, else atoll.
    fn user(&self) -> String {
        self.pr.author.clone().unwrap_or_else(|| "atoll".to_owned())
    }

    /// Reacts with "eyes" on the command comment, so the user sees it was picked up.
    async fn acknowledge(&self) {
        self.react(crate::forge::Reaction::Eyes).await;
    }

    /// Reacts on the command comment (if the job has one); a failure is logged, not fatal.
    async fn react(&self, reaction: crate::forge::Reaction) {
        let Some(id) = self.spec.comment_id() else {
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

    /// Records one apply step: in the journal, as data the interrupted-apply report reads, and
    /// as a log line for people. Neither failure stops the job.
    async fn journal(&self, entry: &crate::store::JournalEntry) {
        self.step(&interrupted::log::line(entry)).await;
        if let Err(e) = self.ctx.journal(entry).await {
            tracing::warn!(error = %e, "cannot write the apply journal");
        }
    }

    /// Logs a step to the job's durable log (a log failure never stops the job).
    async fn step(&self, line: &str) {
        if let Err(e) = self.ctx.log(line).await {
            tracing::warn!(error = %e, "cannot write job log");
        }
    }
}
