//! The embedded Proxmox VE API client and everything built on it. Called only through its API.

pub mod guard;
pub mod plan;
