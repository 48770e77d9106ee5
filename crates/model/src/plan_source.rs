//! Where a plan came from: the commit, the configuration and the Proxmox state it was computed
//! from. The JSON plan carries it (`source`), the store keeps it beside the saved plan, and
//! apply refuses a plan whose source no longer matches what it would act on.

use serde::{Deserialize, Serialize};

/// A plan's provenance. One type for the plan document, the saved plan and the freshness check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSource {
    /// The commit that was evaluated (the PR head, or the checkout's `HEAD` for a local plan).
    pub sha: String,
    /// Hash of the project's configuration as evaluated.
    pub config_hash: String,
    /// atoll's state and the refreshed guests the plan changes: apply refuses the plan once it
    /// no longer matches.
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
        let differs = |planned: &String, now: &String| {
            (planned != now).then(|| (planned.clone(), now.clone()))
        };
        let mut stale = Vec::new();
        if let Some((planned, now)) = differs(&self.sha, &now.sha) {
            stale.push(Stale::HeadSha { planned, now });
        }
        if let Some((planned, now)) = differs(&self.config_hash, &now.config_hash) {
            stale.push(Stale::ConfigHash { planned, now });
        }
        if let Some((planned, now)) = differs(&self.state_fingerprint, &now.state_fingerprint) {
            stale.push(Stale::StateFingerprint { planned, now });
        }
        stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(sha: &str, config: &str, state: &str) -> PlanSource {
        PlanSource {
            sha: sha.to_owned(),
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
