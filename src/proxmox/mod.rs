//! The embedded Proxmox VE API client and everything built on it. Called only through its API.
//!
//! `types` holds the typed PVE values (ids, task ids, property strings); `client` talks to the
//! REST API (auth, TLS, errors, retries, tasks, per-node limits) behind the [`ProxmoxApi`] seam;
//! `discover` finds the guest atoll itself runs on. This module must not format user-facing text
//! nor decide what a change does to a guest (that is `plan`'s job).

pub mod client;
pub mod discover;
pub mod guard;
pub mod plan;
pub mod types;
