//! The cases, written once against `dyn Store`, and the values they share.

#[path = "audit.rs"]
mod audit;
#[path = "locking.rs"]
mod locking;
#[path = "plans.rs"]
mod plans;

pub(crate) use audit::*;
pub(crate) use locking::*;
pub(crate) use plans::*;

use atoll::commands::{ProjectName, RepoDir, Workspace};
use atoll::locks::{
    Acquisition, Actor, ActorVia, AuditStamp, Lock, LockKey, LockOwner, NewPlan, PlanSource,
};
use atoll::store::Store;
use serde_json::json;
use uuid::Uuid;

pub(crate) const REPO: &str = "github.com/acme/infra";

pub(crate) fn key(dir: &str, workspace: &str, project: Option<&str>) -> LockKey {
    key_in(REPO, dir, workspace, project)
}

pub(crate) fn key_in(repo: &str, dir: &str, workspace: &str, project: Option<&str>) -> LockKey {
    LockKey {
        repo: repo.to_owned(),
        dir: RepoDir::parse(dir).expect("valid dir"),
        workspace: Workspace::parse(workspace).expect("valid workspace"),
        project: project.map(|p| ProjectName::parse(p).expect("valid project")),
    }
}

pub(crate) fn owner(pr: u64, sha: &str) -> LockOwner {
    LockOwner {
        pr,
        pr_url: format!("https://github.com/acme/infra/pull/{pr}"),
        head_sha: sha.to_owned(),
        user: format!("user{pr}"),
        job: Some(Uuid::new_v4()),
        summary: "Plan: 1 to add, 0 to change, 0 to destroy. 0 restarts. 0 blocked.".to_owned(),
        forge: Some(model::ForgeKind::Github),
    }
}

pub(crate) fn stamp(name: &str, via: ActorVia, detail: &str) -> AuditStamp {
    AuditStamp {
        actor: Actor::new(name, via),
        detail: detail.to_owned(),
    }
}

pub(crate) fn plan(key: &LockKey, pr: u64, sha: &str) -> NewPlan {
    NewPlan {
        key: key.clone(),
        pr,
        job: Some(Uuid::new_v4()),
        source: PlanSource {
            sha: sha.to_owned(),
            config_hash: format!("config-{sha}"),
            state_fingerprint: format!("state-{sha}"),
        },
        document: json!({"format_version": "1", "source": {"sha": sha}, "resource_changes": []}),
        rendered: format!("No changes at {sha}.\n"),
        summary: format!("No changes at {sha}."),
    }
}

/// Acquires and expects every key granted.
pub(crate) async fn take(store: &dyn Store, keys: &[LockKey], owner: &LockOwner) -> Vec<Lock> {
    match store
        .locks()
        .lock_acquire(keys, owner)
        .await
        .expect("lock_acquire")
    {
        Acquisition::Granted(locks) => locks,
        Acquisition::Conflict(held) => panic!("expected the locks, held by {held:?}"),
    }
}

pub(crate) fn keys_of(locks: &[Lock]) -> Vec<LockKey> {
    locks.iter().map(|l| l.key.clone()).collect()
}
