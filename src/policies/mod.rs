//! Policy checks on plans, after Atlantis's `policies:` (conftest's Rego), evaluated natively:
//! each policy set is a directory of `.rego` files on the server, and its `deny` (and
//! `violation`) rules in `package main` are evaluated with the `regorus` interpreter over the
//! project's JSON plan (the document `atoll plan --json` prints), `warn` rules are shown. No OPA
//! or conftest binary runs, and nothing a pull request holds becomes a policy: the paths come
//! from the server's configuration only.
//!
//! - [`PolicySettings`]: the operator's `policies:` section (owners, policy sets), validated;
//! - [`check`]: one plan document against every set, bounded (file sizes and counts, a time
//!   limit per set), giving a [`PolicyCheck`] that is saved with the plan;
//! - [`PolicyCheck::approve`]: `approve_policies` by one user, by Atlantis's rules (owners of
//!   the set or of every set, `approve_count`, `prevent_self_approve`,
//!   `--clear-policy-approval`). A new plan has a new check and so no approvals.
//!
//! It reads the policy files and runs the interpreter; it never touches the network, a forge or
//! the store (the runner saves the result).

mod approve;
mod eval;
mod settings;

use serde::{Deserialize, Serialize};

pub use approve::{Approval, ApprovalRequest};
pub use eval::{MAX_FILE_BYTES, MAX_FILES, MAX_SET_BYTES, TIME_LIMIT, check, check_set};
pub use settings::{Owners, PolicySet, PolicySettings, SettingsError};

/// The result of checking one plan against every policy set, as saved with the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyCheck {
    pub sets: Vec<SetOutcome>,
}

/// One policy set's result for one plan, with the approvals it got since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetOutcome {
    pub name: String,
    /// The messages of its `deny`/`violation` rules; none when it passed.
    #[serde(default)]
    pub failures: Vec<String>,
    /// The messages of its `warn` rules (shown, never failing).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Why the set could not be evaluated (a file that does not parse, the time limit): the
    /// set then fails, and an owner may approve it like any failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many approvals make a failure acceptable (`approve_count` when it was checked).
    pub approve_count: u32,
    /// Who approved it, in order.
    #[serde(default)]
    pub approvals: Vec<String>,
}

impl SetOutcome {
    /// No `deny` message and no evaluation error.
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.error.is_none()
    }

    /// Passed, or failed with enough approvals.
    pub fn cleared(&self) -> bool {
        self.passed() || self.approvals.len() >= self.approve_count as usize
    }
}

impl PolicyCheck {
    /// The sets that fail without enough approvals, by name: what keeps apply refused.
    pub fn blocking(&self) -> Vec<&str> {
        self.sets
            .iter()
            .filter(|s| !s.cleared())
            .map(|s| s.name.as_str())
            .collect()
    }

    /// Every set passed, or was approved.
    pub fn cleared(&self) -> bool {
        self.sets.iter().all(SetOutcome::cleared)
    }

    /// Reads a check saved with a plan (`None`: the plan has none, or it no longer parses).
    pub fn from_saved(value: Option<&serde_json::Value>) -> Option<Self> {
        value.and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}
