//! The Proxmox VE REST client: rustls transport, token or ticket auth, per-node concurrency
//! limits, error classification, retries of transient failures where repeating is safe, task
//! waiting, and waiting for a guest's lock to clear. Callers outside `proxmox` use it through [`ProxmoxApi`]. It must not decide what a
//! change means for a guest, and never logs credentials or request bodies.

mod api;
mod auth;
mod cluster;
mod error;
mod files;
mod guest_lock;
mod guests;
mod metrics;
mod model;
mod objects;
mod permissions;
mod qemu;
mod reads;
mod sdn;
mod settings;
mod tasks;
mod template;
mod transport;

use std::sync::Arc;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

pub use api::ProxmoxApi;
pub use error::{ConflictKind, Detail, PveError};
pub use files::{StorageConfig, Upload};
pub use metrics::{EndpointClass, Outcome, ProxmoxMetrics};
pub use model::{
    ClusterGuest, ConfigChange, DeleteOptions, DownloadUrl, GuestConfig, GuestCreate,
    GuestInterface, GuestStatus, NodeInfo, PendingEntry, PowerAction, RunState, StorageStatus,
    StorageVolume, TaskLogLine, TaskOutcome, TaskStatus, TaskSummary, Version,
};
pub use objects::{ObjectTarget, ObjectWrite};
pub use permissions::Privileges;
pub use reads::ClusterRead;
pub use settings::{Auth, ClientSettings, RetryPolicy, TaskPolling, Tls};
pub use tasks::CreateOutcome;
pub use template::GuestClone;

use settings::TaskPolling as Polling;
use transport::Transport;

/// A cheap-to-clone handle on one Proxmox VE endpoint.
#[derive(Debug, Clone)]
pub struct ProxmoxClient {
    transport: Arc<Transport>,
    polling: Polling,
}

impl ProxmoxClient {
    /// Builds the client (TLS set-up, settings checks). No request is sent yet.
    pub fn new(settings: &ClientSettings) -> Result<Self, PveError> {
        Ok(Self {
            transport: Arc::new(Transport::new(settings)?),
            polling: settings.tasks,
        })
    }
}

/// Characters escaped in one path segment (UPIDs hold `:`, `@` and `!`, volume ids `/`).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'!')
    .add(b'@')
    .add(b':');

/// Percent-encodes one path segment.
fn seg(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}
