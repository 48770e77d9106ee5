//! atoll: Atlantis-style pull-request automation for Proxmox VE.

pub mod app;
pub mod commands;
pub mod config;
pub mod fakeforge;
pub mod forge;
pub mod http;
pub mod locks;
pub mod metrics;
pub mod proxmox;
pub mod pvesim;
pub mod queue;
pub mod render;
pub mod repocfg;
pub mod runner;
pub mod store;
pub mod telemetry;
pub mod tfconfig;
pub mod web;
pub mod webhook;
pub mod workdir;
