//! The approval rule: the latest deciding review of each reviewer counts, and it approves only
//! if it is an approval that was not dismissed, is not stale, is not by the pull request's
//! author, and comes from someone with write access to the repository.
//!
//! GitHub: states `APPROVED`, `CHANGES_REQUESTED`, `DISMISSED` decide; `COMMENTED` and `PENDING`
//! do not (a comment after an approval keeps the approval). A dismissed approval shows as
//! `DISMISSED`. Anyone who can read a public repository may approve, so write access is read
//! from the collaborator permission API for each approver. Gitea/Forgejo: `APPROVED` and
//! `REQUEST_CHANGES` decide; the `dismissed` and `stale` flags void an approval (stale = made
//! on an older head), and `official` says whether the reviewer's review counts for the base
//! branch (write access, or the branch protection's approvers); a version that does not send
//! `official` gets the permission check too.

use std::future::Future;

use super::api::{Approval, ForgeError, Permission};

/// One review, normalised by the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReviewRecord {
    /// Ordering key: the review id (both forges number reviews in submission order).
    pub id: u64,
    pub user: String,
    pub verdict: Verdict,
    pub dismissed: bool,
    pub stale: bool,
    /// Whether the forge counts this reviewer's review (Gitea `official`); `None`: the forge
    /// does not say, so the reviewer's permission decides.
    pub official: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Approved,
    ChangesRequested,
    Dismissed,
    /// Comments, pending drafts, review requests: they do not change a decision.
    Neutral,
}

/// A reviewer whose latest deciding review approves, before write access is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub user: String,
    pub official: Option<bool>,
}

/// The reviewers whose latest deciding review approves, sorted, leaving out the PR's author and
/// reviews the forge says do not count.
pub(crate) fn candidates(mut reviews: Vec<ReviewRecord>, author: &str) -> Vec<Candidate> {
    reviews.sort_by_key(|r| r.id);
    let mut latest: Vec<ReviewRecord> = Vec::new();
    for review in reviews {
        if review.verdict == Verdict::Neutral || review.user.is_empty() {
            continue;
        }
        match latest
            .iter_mut()
            .find(|r| r.user.eq_ignore_ascii_case(&review.user))
        {
            Some(slot) => *slot = review,
            None => latest.push(review),
        }
    }
    let mut out: Vec<Candidate> = latest
        .into_iter()
        .filter(|r| r.verdict == Verdict::Approved && !r.dismissed && !r.stale)
        .filter(|r| r.official != Some(false))
        .filter(|r| !r.user.eq_ignore_ascii_case(author))
        .map(|r| Candidate {
            user: r.user,
            official: r.official,
        })
        .collect();
    out.sort_by(|a, b| a.user.cmp(&b.user));
    out
}

/// The approval: every candidate the forge calls official, and every other one whose
/// `permission` is write or admin (a user the forge does not know has none).
pub(crate) async fn confirm<F, Fut>(
    candidates: Vec<Candidate>,
    mut permission: F,
) -> Result<Approval, ForgeError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = Result<Permission, ForgeError>>,
{
    let mut approved_by = Vec::new();
    for c in candidates {
        let counts = match c.official {
            Some(official) => official,
            None => match permission(c.user.clone()).await {
                Ok(p) => p.can_apply(),
                Err(ForgeError::NotFound { .. }) => false,
                Err(e) => return Err(e),
            },
        };
        if counts {
            approved_by.push(c.user);
        }
    }
    Ok(Approval { approved_by })
}

/// The candidates as approvers, without a permission check (pure tests of the rule).
#[cfg(test)]
fn decide(reviews: Vec<ReviewRecord>) -> Approval {
    Approval {
        approved_by: candidates(reviews, "")
            .into_iter()
            .map(|c| c.user)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(id: u64, user: &str, verdict: Verdict) -> ReviewRecord {
        ReviewRecord {
            id,
            user: user.to_owned(),
            verdict,
            dismissed: false,
            stale: false,
            official: Some(true),
        }
    }

    #[test]
    fn changes_requested_after_approval_by_the_same_reviewer_revokes_it() {
        let a = decide(vec![
            review(1, "bob", Verdict::Approved),
            review(2, "bob", Verdict::ChangesRequested),
        ]);
        assert!(!a.is_approved());
    }

    #[test]
    fn comment_after_approval_keeps_it() {
        let a = decide(vec![
            review(1, "bob", Verdict::Approved),
            review(2, "bob", Verdict::Neutral),
        ]);
        assert_eq!(a.approved_by, vec!["bob".to_owned()]);
    }

    #[test]
    fn dismissed_stale_or_unofficial_approvals_do_not_count() {
        let tweaks: [fn(&mut ReviewRecord); 4] = [
            |r: &mut ReviewRecord| r.dismissed = true,
            |r: &mut ReviewRecord| r.stale = true,
            |r: &mut ReviewRecord| r.official = Some(false),
            |r: &mut ReviewRecord| r.verdict = Verdict::Dismissed,
        ];
        for tweak in tweaks {
            let mut r = review(1, "bob", Verdict::Approved);
            tweak(&mut r);
            assert!(!decide(vec![r]).is_approved());
        }
    }

    #[test]
    fn one_remaining_approver_is_enough_and_order_is_by_id() {
        let a = decide(vec![
            review(5, "carol", Verdict::ChangesRequested),
            review(3, "bob", Verdict::ChangesRequested),
            review(4, "bob", Verdict::Approved),
            review(1, "carol", Verdict::Approved),
        ]);
        assert_eq!(a.approved_by, vec!["bob".to_owned()]);
    }

    #[test]
    fn the_authors_own_approval_never_counts() {
        let c = candidates(
            vec![
                review(1, "Alice", Verdict::Approved),
                review(2, "bob", Verdict::Approved),
            ],
            "alice",
        );
        assert_eq!(
            c.iter().map(|c| c.user.as_str()).collect::<Vec<_>>(),
            ["bob"]
        );
    }

    #[tokio::test]
    async fn an_approver_without_write_access_does_not_count() {
        let mut unknown = review(1, "reader", Verdict::Approved);
        unknown.official = None;
        let mut writer = review(2, "writer", Verdict::Approved);
        writer.official = None;
        let mut ghost = review(3, "ghost", Verdict::Approved);
        ghost.official = None;
        let approval = confirm(
            candidates(vec![unknown, writer, ghost], "alice"),
            |user| async move {
                match user.as_str() {
                    "writer" => Ok(Permission::Write),
                    "ghost" => Err(ForgeError::NotFound { op: "p".into() }),
                    _ => Ok(Permission::Read),
                }
            },
        )
        .await
        .expect("approval");
        assert_eq!(approval.approved_by, vec!["writer".to_owned()]);
    }
}
