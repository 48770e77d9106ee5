//! Data sources: what a configuration asks the cluster ([`DataRead`], listed in
//! [`crate::Loaded::data_reads`]) and bpg's answer to it, computed from what the caller read
//! ([`answer`]). The caller reads the cluster and loads again with the answers as known values
//! ([`crate::load_with_known`], keyed by the read's address), until nothing is left to read.
//!
//! Must not: read the cluster or anything else itself. An answer is a pure function of the
//! read's arguments and the guests the caller listed, so it is tested without Proxmox VE.

mod vm;

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Span};
use crate::value::Value;

/// One data source instance whose arguments are known and which has no answer yet.
#[derive(Clone, Debug, PartialEq)]
pub struct DataRead {
    /// `proxmox_virtual_environment_vms`.
    pub data_type: String,
    /// Full address (`module.x.data.proxmox_virtual_environment_vms.templates["a"]`), the key
    /// of its answer.
    pub address: String,
    /// The evaluated arguments as an object, unset optional ones null.
    pub arguments: Value,
    /// The block, the subject of a failed read's diagnostic.
    pub subject: Span,
    /// `file:line` of the block, relative to the project directory.
    pub declared_at: String,
}

impl DataRead {
    /// The diagnostic of a read that failed, on the data block (the provider's error is the
    /// summary, as Terraform shows an SDKv2 `diag.Errorf`).
    pub fn failed(&self, error: &ReadError) -> Diagnostic {
        Diagnostic::error(error.0.clone(), String::new(), Some(self.subject.clone()))
    }

    fn argument(&self, name: &str) -> Option<&Value> {
        self.arguments
            .get_attr(name)
            .map(|v| v.unmark().0)
            .filter(|v| !v.is_null())
    }
}

/// Why bpg's read fails, in its words (`VM 100 not found on node "pve"`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReadError(pub String);

/// A guest as `GET /cluster/resources?type=vm` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterGuest {
    pub vm_id: u32,
    pub node: String,
    /// A QEMU VM (`qemu`); `false` for a container.
    pub qemu: bool,
    pub name: Option<String>,
    /// As PVE lists them: `;`-separated.
    pub tags: Option<String>,
    pub template: bool,
    /// `running`, `stopped`, ...
    pub status: String,
}

/// The attributes the read sets, by name, for `read` given the cluster's guests.
pub fn answer(
    read: &DataRead,
    guests: &[ClusterGuest],
) -> Result<BTreeMap<String, Value>, ReadError> {
    match read.data_type.as_str() {
        "proxmox_virtual_environment_vm" => vm::one(read, guests),
        "proxmox_virtual_environment_vms" => vm::many(read, guests),
        other => Err(ReadError(format!(
            "atoll cannot read data source {other:?} yet"
        ))),
    }
}
