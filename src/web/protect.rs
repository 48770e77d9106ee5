//! The protected guests page: the guests `protect.guests` names, and atoll's own guest as MAC
//! discovery finds it right now (through `proxmox::engine::discover`, the same matching the runner's
//! guard uses), with the MAC that matched, or why there is no single answer and what to do.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use model::SharedClock;

use axum::response::Response;
use serde::Serialize;
use tokio::sync::Mutex;

use super::WebState;
use super::pages::{SignedIn, context};
use super::views::page;
use crate::config::{GuestSelector, ProtectSettings};
use crate::proxmox::ProxmoxApi;
use crate::proxmox::discover::NoMatch;
use crate::proxmox::engine::{self, Protect};

/// How long one discovery answer is shown before the page asks Proxmox VE again.
const FRESH_FOR: Duration = Duration::from_secs(30);

/// What discovery found, as the page shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(super) enum Discovered {
    /// `protect.discover: false`.
    Off,
    /// No `proxmox` section: there is no cluster to ask.
    NoProxmox,
    /// Exactly one guest: protected.
    Found {
        kind: String,
        vmid: u32,
        node: String,
        name: Option<String>,
        matched: Vec<String>,
    },
    /// No guest holds a local MAC: nothing is protected by discovery.
    NoGuest { local: Vec<String>, why: String },
    /// No usable local MAC address.
    NoLocalMacs { why: String },
    /// Several guests: plans fail until the guest is pinned.
    Several {
        candidates: Vec<String>,
        why: String,
    },
    /// Proxmox VE or the local interfaces could not be read.
    Failed { why: String },
}

/// The Proxmox client and the last answer, shared by every request.
#[derive(Debug, Clone)]
pub(super) struct Discovery {
    api: Option<Arc<dyn ProxmoxApi>>,
    /// The same protect settings the guard uses, so the page and the guard agree.
    protect: Protect,
    last: Arc<Mutex<Option<(Instant, Discovered)>>>,
    clock: SharedClock,
}

impl Discovery {
    pub(super) fn new(
        protect: &ProtectSettings,
        api: Option<Arc<dyn ProxmoxApi>>,
        clock: SharedClock,
    ) -> Self {
        Self {
            api,
            protect: Protect::from(protect),
            last: Arc::default(),
            clock,
        }
    }

    /// The current answer, from the cache while it is fresh.
    async fn current(&self) -> Discovered {
        if !self.protect.discover {
            return Discovered::Off;
        }
        let Some(api) = &self.api else {
            return Discovered::NoProxmox;
        };
        let mut last = self.last.lock().await;
        if let Some((at, found)) = last.as_ref()
            && self.clock.since(*at) < FRESH_FOR
        {
            return found.clone();
        }
        let found = match engine::discover(api.as_ref(), &self.protect).await {
            Ok(found) => found.into(),
            Err(engine::EngineError::Protect(why)) => Discovered::Failed { why },
            Err(e) => Discovered::Failed {
                why: format!("asking Proxmox VE failed: {e}"),
            },
        };
        *last = Some((self.clock.instant(), found.clone()));
        found
    }
}

impl From<Result<crate::proxmox::discover::SelfGuest, NoMatch>> for Discovered {
    fn from(found: Result<crate::proxmox::discover::SelfGuest, NoMatch>) -> Self {
        let why = match &found {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        };
        match found {
            Ok(g) => Self::Found {
                kind: g.kind.to_string(),
                vmid: g.vmid.get(),
                node: g.node.to_string(),
                name: g.name,
                matched: g.matched.iter().map(ToString::to_string).collect(),
            },
            Err(NoMatch::NoLocalMacs) => Self::NoLocalMacs { why },
            Err(NoMatch::NoGuest { local, .. }) => Self::NoGuest {
                local: local.iter().map(ToString::to_string).collect(),
                why,
            },
            Err(NoMatch::Ambiguous { candidates }) => Self::Several {
                candidates: candidates
                    .iter()
                    .map(|c| {
                        let macs: Vec<String> = c.matched.iter().map(ToString::to_string).collect();
                        format!(
                            "{} {} on {} (MAC {})",
                            c.kind,
                            c.vmid,
                            c.node,
                            macs.join(", ")
                        )
                    })
                    .collect(),
                why,
            },
        }
    }
}

fn configured(protect: &ProtectSettings) -> Vec<String> {
    protect
        .guests
        .iter()
        .map(|g| match g {
            GuestSelector::VmId(id) => format!("VM/CT id {id}"),
            GuestSelector::Name {
                name,
                node: Some(node),
            } => format!("name {name} on node {node}"),
            GuestSelector::Name { name, node: None } => format!("name {name} (any node)"),
        })
        .collect()
}

pub(super) async fn protect(State(state): State<WebState>, SignedIn(s): SignedIn) -> Response {
    let discovered = state.discovery.current().await;
    let mut ctx = context(Some(&s), "Protected guests");
    ctx.insert("guests", &configured(&state.protect));
    ctx.insert("discovered", &discovered);
    ctx.insert("local_macs", &state.protect.local_macs);
    ctx.insert("allow_live", &state.protect.allow_live_changes);
    page(&state.tera, "protect.html", &ctx)
}
