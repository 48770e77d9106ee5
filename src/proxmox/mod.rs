//! The embedded Proxmox VE API client and everything built on it. Called only through its API.
//!
//! `types` holds the typed PVE values (ids, task ids, property strings); `client` talks to the
//! REST API (auth, TLS, errors, retries, tasks, per-node limits) behind the [`ProxmoxApi`] seam;
//! `discover` finds the guest atoll itself runs on; `plan` (pure) turns desired state, state and
//! inventory into a plan with per-attribute effects; `guard` holds the self-host refusal rules.
//! Nothing here formats user-facing text (that is `render`'s job).

pub mod client;
pub mod discover;
pub mod guard;
pub mod plan;
pub mod types;

pub use client::{ClientSettings, ProxmoxApi, ProxmoxClient, PveError};
