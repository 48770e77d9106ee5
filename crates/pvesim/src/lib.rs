//! The Proxmox VE API simulator behind `atoll pve-sim`: a faithful fake of PVE 9's REST API
//! (`/api2/json`) for tests and demos — envelope and error formats, token and ticket auth,
//! worker tasks with UPIDs, config digests, the LXC pending/hotplug engine, guest locks, VMID
//! uniqueness, storage content and capacity, QEMU basics, and fault injection.
//!
//! It must never be used by production code paths, and it is independent of `proxmox::client`
//! (which is tested against it). Where it could differ from PVE, PVE's own source decides.

mod access_control;
mod api_schema;
mod auth;
pub mod cli;
mod cluster_cfg;
mod conf;
mod error;
mod faults;
mod firewall;
mod model;
mod netconf;
mod network;
mod node_settings;
mod oci;
mod pending;
mod permissions;
mod pools;
mod propstr;
mod qemu;
mod qemu_alloc;
mod qemu_drive;
mod qemu_format;
mod qemu_net;
mod qemu_schema;
mod routes;
mod scenario;
mod schema;
mod sdn;
mod sdn_write;
mod server;
mod snippets;
mod storage;
mod tasks;
mod tls;
mod volumes;
mod worker;

pub use faults::{FaultSettings, Faults, TaskFailure};
pub use model::{GuestEvent, GuestKind};
pub use oci::OciImageSpec;
pub use scenario::{DEFAULT_TEMPLATE, GuestSpec, NodeSpec, PoolSpec, Scenario, StorageSpec};
pub use server::{SimOptions, Simulator};
