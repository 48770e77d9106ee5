//! The embedded Proxmox VE API client and everything built on it. Called only through its API.
//!
//! `types` holds the typed PVE values (ids, task ids, property strings); `client` talks to the
//! REST API (auth, TLS, errors, retries, tasks, per-node limits) behind the [`ProxmoxApi`] seam;
//! `discover` finds the guest atoll itself runs on. `desired` adapts the loader's output to the
//! plan engine, `state` keeps what atoll manages, `owner` names whose a guest is (the marker
//! and owner tags), `inventory` refreshes the cluster, `apply` executes a plan, `tfstate` reads
//! and writes Terraform's state file (a project taken over from Terraform through the engine,
//! and handed back), and `engine` is the one entry point that puts them together (the CLI and
//! the server's runner both call it, and nothing else). This module must not format
//! user-facing text nor decide what a change does to a guest (that is `plan`'s job).
//!
//! [`ProxmoxApi`]: client::ProxmoxApi

pub mod apply;
pub mod client;
pub mod desired;
pub mod discover;
pub mod engine;
pub mod guard;
pub mod inventory;
pub mod owner;
pub mod plan;
pub mod sftp;
pub mod state;
pub mod tfstate;
pub mod types;

pub use client::{ClientSettings, ProxmoxApi, ProxmoxClient, PveError};
