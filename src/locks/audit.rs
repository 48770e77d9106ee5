//! The append-only audit trail (who unlocked, who applied, who flipped the apply switch) and the
//! global apply switch.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// How an actor reached atoll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActorVia {
    /// A PR comment; the name is the forge login.
    Comment,
    /// The web dashboard; the name is the dashboard user.
    Dashboard,
    /// The JSON API (bearer token).
    Api,
    /// A forge event such as a merge; the name is the forge login that caused it.
    Forge,
    /// atoll itself (reaper, start-up).
    System,
}

impl ActorVia {
    const ALL: [Self; 5] = [
        Self::Comment,
        Self::Dashboard,
        Self::Api,
        Self::Forge,
        Self::System,
    ];

    /// The stored form, mirrored by a `CHECK` constraint.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Comment => "comment",
            Self::Dashboard => "dashboard",
            Self::Api => "api",
            Self::Forge => "forge",
            Self::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// Who did something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub name: String,
    pub via: ActorVia,
}

impl Actor {
    pub fn new(name: impl Into<String>, via: ActorVia) -> Self {
        Self {
            name: name.into(),
            via,
        }
    }
}

/// What an audit event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    /// A lock released by `atlantis unlock`, the dashboard or the API.
    Unlock,
    /// A lock released because its PR was merged or closed.
    PrClosed,
    /// An apply started.
    Apply,
    ApplySwitchOn,
    ApplySwitchOff,
    /// `atlantis import`: an object taken into a project's state.
    Import,
    /// `atlantis state rm`: resources forgotten from a project's state.
    StateRm,
}

impl AuditAction {
    const ALL: [Self; 7] = [
        Self::Unlock,
        Self::PrClosed,
        Self::Apply,
        Self::ApplySwitchOn,
        Self::ApplySwitchOff,
        Self::Import,
        Self::StateRm,
    ];

    /// The stored form, mirrored by a `CHECK` constraint.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unlock => "unlock",
            Self::PrClosed => "pr_closed",
            Self::Apply => "apply",
            Self::ApplySwitchOn => "apply_switch_on",
            Self::ApplySwitchOff => "apply_switch_off",
            Self::Import => "import",
            Self::StateRm => "state_rm",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// The actor and the reason written with every audit event an operation produces (one per
/// released lock, for example).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditStamp {
    pub actor: Actor,
    /// Free text for the log, e.g. `atlantis unlock -d envs/dev` or `pull request merged`.
    pub detail: String,
}

/// An event to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAuditEvent {
    pub actor: Actor,
    pub action: AuditAction,
    /// `host/owner/repo` when the event concerns one repository.
    pub repo: Option<String>,
    pub pr: Option<u64>,
    /// What was acted on (a lock key, a project, `apply switch`).
    pub target: String,
    pub detail: String,
}

/// An event as stored. `seq` grows with every append; lists are newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEvent {
    pub seq: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub actor: Actor,
    pub action: AuditAction,
    pub repo: Option<String>,
    pub pr: Option<u64>,
    pub target: String,
    pub detail: String,
}

/// The global apply switch: when off, every apply is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApplySwitch {
    pub enabled: bool,
    /// Who last flipped it; `None` when never flipped since installation.
    pub changed_by: Option<Actor>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub changed_at: Option<OffsetDateTime>,
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_names_round_trip() {
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::parse(action.as_str()), Some(action));
        }
        for via in ActorVia::ALL {
            assert_eq!(ActorVia::parse(via.as_str()), Some(via));
        }
        assert_eq!(AuditAction::parse("Unlock"), None);
        assert_eq!(ActorVia::parse(""), None);
    }
}
