//! Saved plans with their provenance, and the freshness rule apply checks against them.

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use super::LockKey;

/// What a plan was computed from. Apply refuses a plan whose source no longer matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanSource {
    /// The PR head commit that was checked out.
    pub head_sha: String,
    /// Hash of the project's configuration as loaded.
    pub config_hash: String,
    /// Fingerprint of the Proxmox state the plan was diffed against.
    pub state_fingerprint: String,
}

/// One way a saved plan no longer matches what apply would act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    HeadSha { planned: String, now: String },
    ConfigHash { planned: String, now: String },
    StateFingerprint { planned: String, now: String },
}

impl PlanSource {
    /// Every difference between this (planned) source and `now`, in a fixed order: head
    /// commit, configuration, Proxmox state. Empty means the plan is fresh.
    pub fn stale_against(&self, now: &PlanSource) -> Vec<Stale> {
        let mut stale = Vec::new();
        if self.head_sha != now.head_sha {
            stale.push(Stale::HeadSha {
                planned: self.head_sha.clone(),
                now: now.head_sha.clone(),
            });
        }
        if self.config_hash != now.config_hash {
            stale.push(Stale::ConfigHash {
                planned: self.config_hash.clone(),
                now: now.config_hash.clone(),
            });
        }
        if self.state_fingerprint != now.state_fingerprint {
            stale.push(Stale::StateFingerprint {
                planned: self.state_fingerprint.clone(),
                now: now.state_fingerprint.clone(),
            });
        }
        stale
    }
}

/// A plan to save for one project of a PR. Saving it supersedes the PR's previous plan for
/// the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPlan {
    pub key: LockKey,
    pub pr: u64,
    pub job: Option<Uuid>,
    pub source: PlanSource,
    /// The JSON plan document (`format_version` 1, see DESIGN.md).
    pub document: serde_json::Value,
    /// The rendered, terraform-style text.
    pub rendered: String,
    /// Its one-line summary (`Plan: 1 to add, ...`), shown on the lock it is made under.
    pub summary: String,
}

/// A plan as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SavedPlan {
    pub id: Uuid,
    pub key: LockKey,
    pub pr: u64,
    pub job: Option<Uuid>,
    pub source: PlanSource,
    pub document: serde_json::Value,
    pub rendered: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Set when a newer plan for the same key replaced it, or its lock was released.
    #[serde(with = "time::serde::rfc3339::option")]
    pub superseded_at: Option<OffsetDateTime>,
}

/// Which plans of a PR to list (newest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanQuery {
    pub repo: String,
    pub pr: u64,
    /// Only the latest, not superseded, plan of each project.
    pub current_only: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(sha: &str, config: &str, state: &str) -> PlanSource {
        PlanSource {
            head_sha: sha.to_owned(),
            config_hash: config.to_owned(),
            state_fingerprint: state.to_owned(),
        }
    }

    #[test]
    fn plan_is_fresh_only_when_sha_config_and_state_all_match() {
        let planned = source("abc", "c1", "s1");
        assert!(planned.stale_against(&planned.clone()).is_empty());
        assert_eq!(
            planned.stale_against(&source("def", "c1", "s2")),
            vec![
                Stale::HeadSha {
                    planned: "abc".to_owned(),
                    now: "def".to_owned()
                },
                Stale::StateFingerprint {
                    planned: "s1".to_owned(),
                    now: "s2".to_owned()
                },
            ]
        );
        assert_eq!(
            planned.stale_against(&source("abc", "c2", "s1")),
            vec![Stale::ConfigHash {
                planned: "c1".to_owned(),
                now: "c2".to_owned()
            }]
        );
    }
}
