//! An apply cut short by a crash or a shutdown (job state `interrupted`) is reported on its PR
//! after the restart: a follow-up `apply_interrupted` job reads the apply's journal and
//! says which guests were done, in progress or not started, that nothing is retried, and what
//! to do next; it also sets `atlantis/apply` to failure.
//!
//! The queue stays generic: it only hands over the ids it reaped (see `reaped`). The follow-up
//! is enqueued with the dedup key `interrupted:<job id>`, so a job is reported exactly once
//! however often it is offered (the start-up scan and the reaper may both see it).

use anyhow::Context as _;
use uuid::Uuid;

use super::{Job, Runner};
use crate::forge::{CommitSha, CommitStatus, StatusKind, StatusState};
use crate::jobs::{ApplyInterrupted, JobKind, JobSpec};
use crate::render::pr::{self as view, GuestLine};
use crate::store::{DeliveryOutcome, JobState, Store};

/// Enqueues the report of one interrupted apply (a duplicate offer changes nothing).
pub(super) async fn offer(store: &dyn Store, job: &crate::store::Job) {
    if job.kind != JobKind::Apply.as_str() || job.state != JobState::Interrupted {
        return;
    }
    let apply = match JobSpec::parse(&job.kind, &job.payload) {
        Ok(JobSpec::Command(apply)) => apply,
        Ok(_) => return,
        Err(e) => {
            return tracing::warn!(job.id = %job.id, error = %e, "interrupted apply not reported");
        }
    };
    // The follow-up carries no comment id: it must not react to the command comment again.
    let report = JobSpec::ApplyInterrupted(ApplyInterrupted {
        pr: apply.pr,
        command: Some(apply.command),
        interrupted: job.id,
    });
    let follow_up = report.to_new_job(Some(format!("interrupted:{}", job.id)));
    match store.enqueue(follow_up).await {
        Ok(DeliveryOutcome::Accepted { .. }) => {
            tracing::info!(job.id = %job.id, "queued the report of an interrupted apply");
        }
        Ok(DeliveryOutcome::Duplicate) => {}
        Err(e) => {
            tracing::warn!(job.id = %job.id, error = %e, "cannot queue the report of an interrupted apply");
        }
    }
}

/// The `apply_interrupted` job: comment with what the log knows, then the failure status.
pub(super) async fn run(r: &Runner, job: &Job, id: Uuid) -> anyhow::Result<()> {
    job.step(&format!("reading the journal of interrupted apply {id}"))
        .await;
    let journal = r
        .store
        .journal()
        .journal(id)
        .await
        .with_context(|| format!("reading the apply journal of job {id}"))?;
    let known = if journal.is_empty() {
        // Applies interrupted before the journal existed (migration 0018) left only log lines.
        let lines: Vec<String> = r
            .store
            .job_log(id, 0)
            .await
            .with_context(|| format!("reading the log of job {id}"))?
            .into_iter()
            .map(|l| l.line)
            .collect();
        log::summarize(&lines)
    } else {
        log::Known::from_journal(&journal)
    };
    let projects: Vec<(String, Vec<GuestLine>)> = known
        .projects
        .iter()
        .map(|p| (p.label.clone(), p.guests.iter().map(guest_line).collect()))
        .collect();
    job.comment(&view::apply_interrupted(
        &r.executable,
        &id.to_string(),
        &projects,
    ))
    .await?;
    let sha = match known.head.as_deref().map(CommitSha::parse) {
        Some(Ok(sha)) => sha,
        _ => {
            job.forge
                .pull_request(&job.name, job.pr.number)
                .await
                .context("reading the pull request")?
                .head_sha
        }
    };
    let status = CommitStatus::aggregate(
        StatusKind::Apply,
        StatusState::Failure,
        "apply interrupted (atoll restarted); plan again",
    );
    job.status(&sha, &status).await;
    Ok(())
}

fn guest_line(g: &log::Guest) -> GuestLine {
    let status = match &g.state {
        log::GuestState::NotStarted => "not started".to_owned(),
        log::GuestState::InProgress { step } => {
            format!("in progress ({step}) when atoll stopped: may be partly changed")
        }
        log::GuestState::Done { detail } => format!("done: {detail}"),
        log::GuestState::Failed { error } => format!("FAILED: {error}"),
    };
    GuestLine {
        address: g.address.clone(),
        status,
    }
}

/// The apply job's log lines this report is made from: written by `apply`, read back here.
pub(super) mod log {
    use crate::proxmox::apply::ApplyEvent;
    use crate::proxmox::plan::{Action, Plan};
    use crate::store::{JournalEntry, JournalEvent};

    const HEAD: &str = "apply at ";
    const PLANNED: &str = "apply project ";
    /// Lines written since projects can apply in parallel name the project's index
    /// (`apply project[1] ...`, `guest[1] ...`): an address is unique only within its project.
    const INDEX_OPEN: char = '[';
    const INDEX_CLOSE: &str = "] ";
    const WILL_CHANGE: &str = ": will change ";
    const GUEST: &str = "guest ";
    const STARTED: &str = ": started ";
    const DONE: &str = ": done: ";
    const FAILED: &str = ": FAILED: ";

    /// The log line people read for one journal entry: `apply at <sha>` (a new attempt),
    /// `apply project[<index>] <label>: will change <address>` (one per guest, before the
    /// first change), `guest[<index>] <address>: started <step>` / `: done: <detail>` /
    /// `: FAILED: <error>`. Logs written before the journal are read back by [`summarize`].
    pub(in crate::runner) fn line(entry: &JournalEntry) -> String {
        let (index, address) = (entry.project, &entry.address);
        let guest = format!("{}[{index}] ", GUEST.trim_end());
        match &entry.event {
            JournalEvent::Attempt { head_sha } => format!("{HEAD}{head_sha}"),
            JournalEvent::Planned => format!(
                "{}[{index}] {}{WILL_CHANGE}{address}",
                PLANNED.trim_end(),
                entry.label
            ),
            JournalEvent::Started { step } => format!("{guest}{address}{STARTED}{step}"),
            JournalEvent::Done { detail } => format!("{guest}{address}{DONE}{detail}"),
            JournalEvent::Failed { error } => format!("{guest}{address}{FAILED}{error}"),
        }
    }

    /// The journal entry for an executor event of project `index` (named `label`).
    pub(in crate::runner) fn entry(index: usize, label: &str, event: &ApplyEvent) -> JournalEntry {
        let (address, event) = match event {
            ApplyEvent::Started { address, step } => (
                address,
                JournalEvent::Started {
                    step: (*step).to_owned(),
                },
            ),
            ApplyEvent::Done { address, detail } => (
                address,
                JournalEvent::Done {
                    detail: detail.clone(),
                },
            ),
            ApplyEvent::Failed { address, error } => (
                address,
                JournalEvent::Failed {
                    error: error.clone(),
                },
            ),
        };
        JournalEntry {
            project: u32::try_from(index).unwrap_or(u32::MAX),
            label: label.to_owned(),
            address: address.clone(),
            event,
        }
    }

    /// The entry written for each guest an apply of project `index` will change.
    pub(in crate::runner) fn planned(index: usize, label: &str, address: &str) -> JournalEntry {
        JournalEntry {
            project: u32::try_from(index).unwrap_or(u32::MAX),
            label: label.to_owned(),
            address: address.to_owned(),
            event: JournalEvent::Planned,
        }
    }

    /// The addresses an apply of `plan` will change (blocked and no-op changes are skipped).
    pub(in crate::runner) fn planned_guests(plan: &Plan) -> impl Iterator<Item = &str> {
        plan.resource_changes
            .iter()
            .filter(|c| c.blocked.is_none() && c.actions != [Action::NoOp])
            .map(|c| c.address.as_str())
    }

    /// Splits `[<index>] rest` (new lines) or ` rest` (lines written before projects had an
    /// index) after a prefix without its trailing space.
    fn indexed(rest: &str) -> Option<(Option<usize>, &str)> {
        if let Some(after) = rest.strip_prefix(INDEX_OPEN) {
            let (digits, rest) = after.split_once(INDEX_CLOSE)?;
            return Some((Some(digits.parse().ok()?), rest));
        }
        rest.strip_prefix(' ').map(|rest| (None, rest))
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(in crate::runner) enum GuestState {
        NotStarted,
        InProgress { step: String },
        Done { detail: String },
        Failed { error: String },
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(in crate::runner) struct Guest {
        pub(in crate::runner) address: String,
        pub(in crate::runner) state: GuestState,
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(in crate::runner) struct Project {
        /// The project's place in the apply (`None` in logs written before it was logged).
        pub(in crate::runner) index: Option<usize>,
        pub(in crate::runner) label: String,
        pub(in crate::runner) guests: Vec<Guest>,
    }

    /// What the log of an interrupted apply says, for its last attempt.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub(in crate::runner) struct Known {
        pub(in crate::runner) head: Option<String>,
        pub(in crate::runner) projects: Vec<Project>,
    }

    impl Known {
        /// Sets a guest's state; a guest no planned line named (a lost log line) is added to
        /// the last project.
        fn set(&mut self, index: Option<usize>, address: &str, state: GuestState) {
            let existing = self
                .projects
                .iter_mut()
                .filter(|p| index.is_none() || p.index == index)
                .flat_map(|p| p.guests.iter_mut())
                .find(|g| g.address == address);
            if let Some(guest) = existing {
                guest.state = state;
                return;
            }
            if self.projects.is_empty() {
                self.projects.push(Project {
                    index,
                    label: "unknown project".to_owned(),
                    guests: Vec::new(),
                });
            }
            if let Some(last) = self.projects.last_mut() {
                last.guests.push(Guest {
                    address: address.to_owned(),
                    state,
                });
            }
        }
    }

    /// Reads the lines `head`, `planned` and `event` wrote; other lines are ignored.
    impl Known {
        /// What the journal of an interrupted apply says, for its last attempt.
        pub(in crate::runner) fn from_journal(entries: &[JournalEntry]) -> Self {
            let mut known = Self::default();
            for entry in entries {
                let index = usize::try_from(entry.project).ok();
                let state = match &entry.event {
                    JournalEvent::Attempt { head_sha } => {
                        known = Self {
                            head: Some(head_sha.clone()),
                            projects: Vec::new(),
                        };
                        continue;
                    }
                    JournalEvent::Planned => {
                        planned_line(&mut known, index, &entry.label, &entry.address);
                        continue;
                    }
                    JournalEvent::Started { step } => GuestState::InProgress { step: step.clone() },
                    JournalEvent::Done { detail } => GuestState::Done {
                        detail: detail.clone(),
                    },
                    JournalEvent::Failed { error } => GuestState::Failed {
                        error: error.clone(),
                    },
                };
                known.set(index, &entry.address, state);
            }
            known
        }
    }

    /// What the log lines of an apply say, for applies logged before the journal existed.
    pub(in crate::runner) fn summarize(lines: &[String]) -> Known {
        let mut known = Known::default();
        for line in lines {
            if let Some(sha) = line.strip_prefix(HEAD) {
                known = Known {
                    head: Some(sha.trim().to_owned()),
                    projects: Vec::new(),
                };
            } else if let Some((index, rest)) =
                line.strip_prefix(PLANNED.trim_end()).and_then(indexed)
            {
                if let Some((label, address)) = rest.split_once(WILL_CHANGE) {
                    planned_line(&mut known, index, label, address);
                }
            } else if let Some((index, rest)) =
                line.strip_prefix(GUEST.trim_end()).and_then(indexed)
            {
                guest_line(&mut known, index, rest);
            }
        }
        known
    }

    fn planned_line(known: &mut Known, index: Option<usize>, label: &str, address: &str) {
        // Projects applying in parallel interleave their lines: find this one's section.
        let at = known
            .projects
            .iter()
            .position(|p| p.label == label && p.index == index)
            .unwrap_or_else(|| {
                known.projects.push(Project {
                    index,
                    label: label.to_owned(),
                    guests: Vec::new(),
                });
                known.projects.len() - 1
            });
        known.projects[at].guests.push(Guest {
            address: address.to_owned(),
            state: GuestState::NotStarted,
        });
    }

    fn guest_line(known: &mut Known, index: Option<usize>, rest: &str) {
        let marker = [STARTED, DONE, FAILED]
            .into_iter()
            .filter_map(|m| rest.find(m).map(|at| (at, m)))
            .min_by_key(|(at, _)| *at);
        let Some((at, marker)) = marker else {
            return;
        };
        let address = &rest[..at];
        let text = rest[at + marker.len()..].to_owned();
        let state = match marker {
            STARTED => GuestState::InProgress { step: text },
            DONE => GuestState::Done { detail: text },
            _ => GuestState::Failed { error: text },
        };
        known.set(index, address, state);
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn lines(raw: &[&str]) -> Vec<String> {
            raw.iter().map(|l| (*l).to_owned()).collect()
        }

        #[test]
        fn projects_applied_in_parallel_keep_their_own_guests_of_the_same_address() {
            let started = ApplyEvent::Started {
                address: "ct.web".into(),
                step: "update",
            };
            let done = ApplyEvent::Done {
                address: "ct.web".into(),
                detail: "updated".into(),
            };
            let journal = vec![
                JournalEntry::attempt("ab"),
                planned(0, "dir: dev", "ct.web"),
                planned(1, "dir: prod", "ct.web"),
                planned(0, "dir: dev", "ct.db"),
                entry(1, "dir: prod", &started),
                entry(1, "dir: prod", &done),
                entry(0, "dir: dev", &started),
            ];
            let known = Known::from_journal(&journal);
            // The log lines written beside the journal say the same to the legacy reader.
            let lines: Vec<String> = journal.iter().map(line).collect();
            assert_eq!(summarize(&lines), known);
            let states: Vec<(&str, Vec<GuestState>)> = known
                .projects
                .iter()
                .map(|p| {
                    (
                        p.label.as_str(),
                        p.guests.iter().map(|g| g.state.clone()).collect(),
                    )
                })
                .collect();
            assert_eq!(
                states,
                vec![
                    (
                        "dir: dev",
                        vec![
                            GuestState::InProgress {
                                step: "update".into()
                            },
                            GuestState::NotStarted
                        ]
                    ),
                    (
                        "dir: prod",
                        vec![GuestState::Done {
                            detail: "updated".into()
                        }]
                    ),
                ]
            );
        }

        #[test]
        fn the_last_attempt_says_which_guests_were_done_in_progress_or_not_started() {
            let log = lines(&[
                "checkout 0123",
                "apply at 1111111111111111111111111111111111111111",
                "apply project dir: a workspace: default: will change ct.old",
                "apply at 2222222222222222222222222222222222222222",
                "apply project dir: a workspace: default: will change ct.web[\"x: y\"]",
                "apply project dir: a workspace: default: will change ct.db",
                "apply project dir: a workspace: default: will change ct.cache",
                "apply project dir: b workspace: default: will change ct.b",
                "guest ct.web[\"x: y\"]: started create",
                "guest ct.db: started create",
                "guest ct.web[\"x: y\"]: done: created 101",
                "guest ct.db: started start",
                "guest ct.cache: FAILED: no space: left",
            ]);
            let known = summarize(&log);
            assert_eq!(
                known.head.as_deref(),
                Some("2222222222222222222222222222222222222222")
            );
            assert_eq!(known.projects.len(), 2);
            let a = &known.projects[0];
            assert_eq!(a.label, "dir: a workspace: default");
            let states: Vec<_> = a.guests.iter().map(|g| g.state.clone()).collect();
            assert_eq!(
                states,
                vec![
                    GuestState::Done {
                        detail: "created 101".into()
                    },
                    GuestState::InProgress {
                        step: "start".into()
                    },
                    GuestState::Failed {
                        error: "no space: left".into()
                    },
                ]
            );
            assert_eq!(a.guests[0].address, "ct.web[\"x: y\"]");
            assert_eq!(known.projects[1].guests[0].state, GuestState::NotStarted);
        }

        #[test]
        fn an_event_for_an_unplanned_guest_is_still_reported() {
            let known = summarize(&lines(&["guest ct.x: started create"]));
            assert_eq!(known.projects.len(), 1);
            assert_eq!(known.projects[0].guests[0].address, "ct.x");
        }

        #[test]
        fn written_lines_read_back() {
            let event = ApplyEvent::Done {
                address: "ct.a".into(),
                detail: "started".into(),
            };
            let journal = [
                JournalEntry::attempt("ab"),
                planned(0, "p", "ct.a"),
                entry(0, "p", &event),
            ];
            let log: Vec<String> = journal.iter().map(line).collect();
            let known = summarize(&log);
            assert_eq!(
                known.projects[0].guests[0].state,
                GuestState::Done {
                    detail: "started".into()
                }
            );
        }
    }
}
