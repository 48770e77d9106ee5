//! Typed Proxmox VE values: guest ids, node and storage names, task ids, and the property strings
//! atoll reads and writes (`net<N>`, `rootfs`, `mp<N>`, `features`, `startup`). Each parses like
//! PVE does and prints canonically (default key, required keys, then alphabetical), so values are
//! compared parsed, never as strings. Pure: no I/O here.

mod access;
mod cluster_names;
mod features;
mod ids;
mod net;
mod object;
mod propstring;
mod startup;
mod upid;
mod volume;

#[cfg(test)]
mod roundtrip_tests;

pub use access::{AclEntry, Subject, acl_name, parse_acl, parse_member};
pub use features::Features;
pub use ids::{GuestKind, NodeName, StorageId, VmId};
pub use net::{IpConfig, LxcNet, Mac, Rate, qemu_net_mac};
pub use object::{Entries, ObjectId, ObjectKind, Scope};
pub use object::{sdn_subnet_cidr, sdn_subnet_id};
pub use propstring::DiskSize;
pub use startup::Startup;
pub use upid::Upid;
pub use volume::{MountPoint, RootFs, VolumeOptions};

/// A value that is not what PVE accepts for `what`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what}: {reason}")]
pub struct PropertyError {
    what: &'static str,
    reason: String,
}

impl PropertyError {
    pub(crate) fn new(what: &'static str, reason: impl Into<String>) -> Self {
        Self {
            what,
            reason: reason.into(),
        }
    }
}
