//! `approve_policies` on one saved check, by Atlantis's rules (`doApprovePolicies`): an owner
//! of the set, or of every set, approves each failing set not yet approved enough; the PR's
//! author may not where the set says `prevent_self_approve`; `--clear-policy-approval` drops a
//! set's approvals; `--policy-set NAME` limits it to one set. Pure.

use serde::Serialize;

use super::{PolicyCheck, PolicySettings};

/// Who asks, and what.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalRequest<'a> {
    pub user: &'a str,
    /// The pull request's author.
    pub author: &'a str,
    /// `--policy-set NAME`.
    pub set: Option<&'a str>,
    /// `--clear-policy-approval`.
    pub clear: bool,
}

/// What happened to one failing set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Approval {
    /// Approved by the user; `have` of `need` approvals now.
    Approved { set: String, have: usize, need: u32 },
    /// The user had approved it already and it still needs others.
    AlreadyApproved { set: String, have: usize, need: u32 },
    /// Its approvals were dropped.
    Cleared { set: String },
    /// The user owns neither the set nor every set.
    NotOwner { set: String },
    /// The user wrote the pull request and the set has `prevent_self_approve`.
    SelfApprove { set: String },
}

impl PolicyCheck {
    /// Applies one user's `approve_policies` to this check; one entry per set it concerned.
    pub fn approve(
        &mut self,
        settings: &PolicySettings,
        request: &ApprovalRequest<'_>,
    ) -> Vec<Approval> {
        let mut out = Vec::new();
        for outcome in &mut self.sets {
            if request.set.is_some_and(|wanted| wanted != outcome.name) {
                continue;
            }
            if outcome.cleared() && !request.clear {
                continue;
            }
            let configured = settings.set(&outcome.name);
            let owner = settings.owners.contains(request.user)
                || configured.is_some_and(|s| s.owners.contains(request.user));
            let prevent_self = configured.is_some_and(|s| s.prevent_self_approve);
            let set = outcome.name.clone();
            if !owner {
                if !outcome.cleared() || !outcome.approvals.is_empty() {
                    out.push(Approval::NotOwner { set });
                }
                continue;
            }
            if prevent_self && request.user.eq_ignore_ascii_case(request.author) {
                out.push(Approval::SelfApprove { set });
                continue;
            }
            if request.clear {
                if !outcome.approvals.is_empty() {
                    outcome.approvals.clear();
                    out.push(Approval::Cleared { set });
                }
                continue;
            }
            let need = outcome.approve_count;
            if outcome
                .approvals
                .iter()
                .any(|a| a.eq_ignore_ascii_case(request.user))
            {
                let have = outcome.approvals.len();
                out.push(Approval::AlreadyApproved { set, have, need });
                continue;
            }
            outcome.approvals.push(request.user.to_owned());
            let have = outcome.approvals.len();
            out.push(Approval::Approved { set, have, need });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::{Owners, PolicySet, SetOutcome};

    fn settings() -> PolicySettings {
        let set = |name: &str, owner: &str, count, prevent| PolicySet {
            name: name.to_owned(),
            path: "/p".into(),
            owners: Owners {
                users: vec![owner.to_owned()],
            },
            approve_count: count,
            prevent_self_approve: prevent,
        };
        PolicySettings {
            owners: Owners {
                users: vec!["admin".to_owned()],
            },
            sets: vec![
                set("guests", "bob", 1, true),
                set("storage", "carol", 2, false),
            ],
            notes: Vec::new(),
        }
    }

    fn failing(name: &str, count: u32) -> SetOutcome {
        SetOutcome {
            name: name.to_owned(),
            failures: vec!["no".to_owned()],
            warnings: Vec::new(),
            error: None,
            approve_count: count,
            approvals: Vec::new(),
        }
    }

    fn request<'a>(user: &'a str, author: &'a str) -> ApprovalRequest<'a> {
        ApprovalRequest {
            user,
            author,
            set: None,
            clear: false,
        }
    }

    #[test]
    fn owners_approve_their_sets_and_counts_are_kept() {
        let s = settings();
        let mut check = PolicyCheck {
            sets: vec![failing("guests", 1), failing("storage", 2)],
        };
        let got = check.approve(&s, &request("bob", "alice"));
        assert_eq!(
            got,
            [
                Approval::Approved {
                    set: "guests".into(),
                    have: 1,
                    need: 1
                },
                Approval::NotOwner {
                    set: "storage".into()
                },
            ]
        );
        assert_eq!(check.blocking(), ["storage"]);
        check.approve(&s, &request("carol", "alice"));
        assert_eq!(
            check.approve(&s, &request("Carol", "alice")),
            [Approval::AlreadyApproved {
                set: "storage".into(),
                have: 1,
                need: 2
            }]
        );
        check.approve(&s, &request("admin", "alice"));
        assert!(check.cleared(), "{check:?}");
    }

    #[test]
    fn the_author_cannot_approve_a_set_that_prevents_self_approval() {
        let s = settings();
        let mut check = PolicyCheck {
            sets: vec![failing("guests", 1)],
        };
        assert_eq!(
            check.approve(&s, &request("bob", "BOB")),
            [Approval::SelfApprove {
                set: "guests".into()
            }]
        );
        assert_eq!(check.blocking(), ["guests"]);
    }

    #[test]
    fn policy_set_limits_and_clear_drops_approvals() {
        let s = settings();
        let mut check = PolicyCheck {
            sets: vec![failing("guests", 1), failing("storage", 1)],
        };
        let only = ApprovalRequest {
            set: Some("storage"),
            ..request("admin", "alice")
        };
        check.approve(&s, &only);
        assert_eq!(check.blocking(), ["guests"]);
        let clear = ApprovalRequest {
            clear: true,
            ..only
        };
        assert_eq!(
            check.approve(&s, &clear),
            [Approval::Cleared {
                set: "storage".into()
            }]
        );
        assert_eq!(check.blocking(), ["guests", "storage"]);
    }
}
