//! The jobs behind PR automation: `autoplan`/`plan`, `apply`, `apply_interrupted` (the report
//! of an apply cut short by a restart), `apply_coalesced` (the one answer to identical apply
//! comments), `job_gave_up` (the report of a job whose worker kept dying), `unlock`,
//! `announce_unlock` (the dashboard released a lock), `pr_closed`, `reply`, `help`,
//! `version`, and `import` and `state_rm` (atoll's state changed by comment, never the cluster). Each job is a pipeline of named steps (logged to the job's durable
//! log) that ends in a PR comment: a result, or a failure saying what to do next.
//!
//! It owns orchestration only: it must not parse commands (`commands`), talk HTTP to a forge
//! itself (`forge`), run git (`workdir`), decide projects (`repocfg`), plan or apply
//! (`proxmox`), or format Markdown (`render`). Nothing from a comment reaches a shell.

mod apply;
mod automerge;
mod build;
mod coalesce;
mod gate;
mod gave_up;
mod interrupted;
mod order;
mod other;
mod parallel;
mod plan;
mod policies;
mod post;
mod progress;
mod project;
mod reaped;
mod requirements;
mod stages;
mod state_commands;

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

    /// A job's dashboard page, when `server.public_url` is set.
    fn job_page(&self, job: uuid::Uuid) -> Option<String> {
        self.public_url
            .as_ref()
            .map(|base| format!("{base}/jobs/{job}"))
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
        // Plan and apply react once they have read `emoji_reaction` from atlantis.yaml (or,
        // stopped before that, with the server's reaction when they end).
        let reacts_later = matches!(&job.spec, JobSpec::Command(c)
            if matches!(c.command.verb, Verb::Plan | Verb::Apply));
        if !reacts_later {
            job.acknowledge(None).await;
        }
        let result = job.run(r).await;
        job.acknowledge(None).await;
        if job.spec.command().is_some_and(|c| c.verbose) {
            job.post_log(r).await;
        }
        result
    }
}

impl Job {
    /// The steps of the job's kind.
    async fn run(&self, r: &Runner) -> anyhow::Result<()> {
        match &self.spec {
            JobSpec::Autoplan(_) => plan::run(r, self, None).await,
            JobSpec::Command(c) => match c.command.verb {
                Verb::Plan => plan::run(r, self, Some(c.command.clone())).await,
                Verb::Apply => apply::run(r, self, &c.command).await,
                Verb::Unlock => other::unlock(r, self, &c.command).await,
                Verb::Cancel => other::cancel(r, self).await,
                Verb::Help => other::help(r, self).await,
                Verb::Version => other::version(r, self).await,
                Verb::Import => state_commands::import(r, self, &c.command).await,
                Verb::StateRm => state_commands::state_rm(r, self, &c.command).await,
                Verb::ApprovePolicies => policies::approve(r, self, &c.command).await,
            },
            JobSpec::Reply(reply) => other::reply(r, self, &reply.reply).await,
            JobSpec::PrClosed(closed) => other::pr_closed(r, self, closed.merged).await,
            JobSpec::ApplyInterrupted(about) => interrupted::run(r, self, about.interrupted).await,
            JobSpec::ApplyCoalesced(about) => coalesce::run(r, self, &about.coalesced).await,
            JobSpec::JobGaveUp(about) => gave_up::run(r, self, &about.gave_up).await,
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
    /// Set once the command comment has its reaction.
    reacted: std::sync::atomic::AtomicBool,
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
        let page = runner.job_page(ctx.job().id);
        Ok(Self {
            page,
            applying: tokio::sync::OnceCell::new(),
            reacted: std::sync::atomic::AtomicBool::new(false),
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

    /// Writes a state version of `state` after this job changed it (who, which job, which
    /// commit). A failure is logged as a step: the change itself is done and in state.
    async fn record_state_version(
        &self,
        state: &crate::proxmox::state::StateHandle,
        reason: crate::store::VersionReason,
        commit: &str,
    ) {
        let meta = crate::store::VersionMeta {
            actor: self.user(),
            reason,
            job: Some(self.ctx.job().id),
            commit: Some(commit.to_owned()),
        };
        let scope = state.scope();
        match state.record_version(&meta).await {
            Ok(n) => {
                self.step(&format!(
                    "state version {n} of {} ({})",
                    scope.project_dir, scope.workspace
                ))
                .await;
            }
            Err(e) => {
                self.step(&format!(
                    "could not write a state version of {} ({}): {e}",
                    scope.project_dir, scope.workspace
                ))
                .await;
            }
        }
    }

    /// Reacts on the command comment, once per job, so the user sees it was picked up: with
    /// `emoji` (the repository's `emoji_reaction`) or else "eyes". Later calls do nothing.
    async fn acknowledge(&self, emoji: Option<&crate::repocfg::Emoji>) {
        if self.reacted.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let reaction = emoji
            .and_then(|e| crate::forge::Reaction::from_content(e.as_str()))
            .unwrap_or(crate::forge::Reaction::Eyes);
        self.react(reaction).await;
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

    /// `--verbose`: posts the job's log so far as one more comment. A failure is logged, not
    /// fatal: the command's own reply is already posted.
    async fn post_log(&self, r: &Runner) {
        let lines = match r.store.job_log(self.ctx.job().id, 0).await {
            Ok(lines) => lines,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the job log for --verbose");
                return;
            }
        };
        let lines: Vec<String> = lines.into_iter().map(|l| l.line).collect();
        if let Err(e) = self.comment(&crate::render::pr::verbose_log(&lines)).await {
            tracing::warn!(error = %format!("{e:#}"), "cannot post the --verbose log");
        }
    }

    /// Logs a step to the job's durable log (a log failure never stops the job).
    async fn step(&self, line: &str) {
        if let Err(e) = self.ctx.log(line).await {
            tracing::warn!(error = %e, "cannot write job log");
        }
    }
}
