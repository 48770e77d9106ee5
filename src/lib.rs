//! atoll: Atlantis-style pull-request automation for Proxmox VE.

pub mod app;
pub mod cli;
pub mod commands;
pub mod config;
pub mod doctor;
pub mod forge;
pub mod http;
pub mod jobs;
pub mod locks;
pub mod metrics;
pub mod policies;
pub mod proxmox;
pub mod queue;
pub mod render;
pub mod repocfg;
pub mod runner;
pub mod s3;
pub mod store;
pub mod telemetry;
pub mod web;
pub mod webhook;
pub mod workdir;
