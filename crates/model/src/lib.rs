//! The domain types every part of atoll meets on. A leaf: it depends on nothing of atoll's, so
//! the server, the fakes and the tests can all speak it.

use serde::{Deserialize, Serialize};

/// Which forge a delivery came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    Github,
    Gitea,
}

impl ForgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Github => "github",
            Self::Gitea => "gitea",
        }
    }
}
