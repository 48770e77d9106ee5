//! The approval rule, pure: the latest deciding review of each reviewer counts, and it approves
//! only if it is an approval that was not dismissed, is not stale and is official.
//!
//! GitHub: states `APPROVED`, `CHANGES_REQUESTED`, `DISMISSED` decide; `COMMENTED` and `PENDING`
//! do not (a comment after an approval keeps the approval). A dismissed approval shows as
//! `DISMISSED`. Gitea/Forgejo: `APPROVED` and `REQUEST_CHANGES` decide; the `dismissed` and
//! `stale` flags void an approval (stale = made on an older head), and `official` must be set
//! (the reviewer's review counts for the base branch).

use super::api::Approval;

/// One review, normalised by the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReviewRecord {
    /// Ordering key: the review id (both forges number reviews in submission order).
    pub id: u64,
    pub user: String,
    pub verdict: Verdict,
    pub dismissed: bool,
    pub stale: bool,
    pub official: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Approved,
    ChangesRequested,
    Dismissed,
    /// Comments, pending drafts, review requests: they do not change a decision.
    Neutral,
}

/// The reviewers whose latest deciding review approves.
pub(crate) fn decide(mut reviews: Vec<ReviewRecord>) -> Approval {
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
    let mut approved_by: Vec<String> = latest
        .into_iter()
        .filter(|r| r.verdict == Verdict::Approved && !r.dismissed && !r.stale && r.official)
        .map(|r| r.user)
        .collect();
    approved_by.sort();
    Approval { approved_by }
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
            official: true,
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
            |r: &mut ReviewRecord| r.official = false,
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
}
