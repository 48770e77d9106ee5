//! The domain types every part of atoll meets on. A leaf: it depends on nothing of atoll's, so
//! the server, the fakes and the tests can all speak it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub mod access;
mod clock;
mod names;
mod net;
mod plan_options;
mod plan_source;

pub use clock::{Clock, ManualClock, SharedClock, SystemClock};
pub use names::{
    NameError, ProjectName, RepoDir, Workspace, is_hidden as is_hidden_char, shown as shown_value,
};
pub use net::{IpNetwork, canonical_ip};
pub use plan_options::{MAX_ADDRESS_LEN, OptionError, PlanOptions, ResourceAddress, VarArg};
pub use plan_source::{PlanSource, Stale};

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

    /// The kind [`Self::as_str`] names.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Github, Self::Gitea]
            .into_iter()
            .find(|k| k.as_str() == name)
    }
}

/// A repository as atoll keys it everywhere (locks, plans, state, jobs): the forge's host, the
/// owner and the name, written `host/owner/name`. Parsed once, where it enters; never split
/// again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoId {
    host: String,
    owner: String,
    name: String,
}

/// Why a text is not a `host/owner/name` repository id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidRepoId(pub String);

impl fmt::Display for InvalidRepoId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "repository id {:?} is not host/owner/name (three non-empty parts)",
            self.0
        )
    }
}

impl std::error::Error for InvalidRepoId {}

impl RepoId {
    /// A repository id from its parts; each must be non-empty and free of `/`.
    pub fn new(host: &str, owner: &str, name: &str) -> Result<Self, InvalidRepoId> {
        let ok = |part: &str| !part.is_empty() && !part.contains('/');
        if ok(host) && ok(owner) && ok(name) {
            Ok(Self {
                host: host.to_owned(),
                owner: owner.to_owned(),
                name: name.to_owned(),
            })
        } else {
            Err(InvalidRepoId(format!("{host}/{owner}/{name}")))
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `owner/name`, as the forge's API names the repository.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

impl fmt::Display for RepoId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.host, self.owner, self.name)
    }
}

impl FromStr for RepoId {
    type Err = InvalidRepoId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.splitn(3, '/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(host), Some(owner), Some(name)) => Self::new(host, owner, name),
            _ => Err(InvalidRepoId(s.to_owned())),
        }
    }
}

impl Serialize for RepoId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RepoId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ids_round_trip_and_refuse_missing_parts() {
        let id: RepoId = "github.com/acme/infra".parse().expect("parses");
        assert_eq!(
            (id.host(), id.owner(), id.name()),
            ("github.com", "acme", "infra")
        );
        assert_eq!(id.to_string(), "github.com/acme/infra");
        assert_eq!(id.full_name(), "acme/infra");
        let json = serde_json::to_string(&id).expect("serialises");
        assert_eq!(json, "\"github.com/acme/infra\"");
        assert_eq!(serde_json::from_str::<RepoId>(&json).expect("reads"), id);
        for bad in [
            "",
            "github.com",
            "github.com/acme",
            "github.com//infra",
            "a/b/c/d",
        ] {
            assert!(bad.parse::<RepoId>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn forge_kinds_read_as_written() {
        for kind in [ForgeKind::Github, ForgeKind::Gitea] {
            let json = serde_json::to_value(kind).expect("serialises");
            assert_eq!(json, kind.as_str());
        }
    }
}
