//! The listener's accept loop and the registry of open connections.
//!
//! At most `server.max_connections` connections are open. When one more arrives at the cap
//! (or the process has run out of file descriptors), the oldest connection with no request in
//! progress is closed to make room: a client dribbling its headers, or one idling between
//! requests, gives way to the new one, so `/healthz` and the webhooks still get through. When
//! every connection is busy the new one gets a short 503 and is closed.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::conn;
use super::security_headers::RAW_HEADERS;
use crate::http::IpNetwork;

/// What each connection is allowed (from `server.*`).
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub trusted_proxies: Arc<[IpNetwork]>,
}

/// How long the loop pauses after an accept error before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);
/// At most one log line per this long about failing accepts.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` resolves, then stops accepting, lets every
/// connection finish its request in progress, and returns when all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send,
) {
    let registry = Arc::new(Registry::new(limits.max_connections));
    let limits = Arc::new(limits);
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection task holds a receiver; `closed()` resolves when the last one is gone.
    let (close_tx, close_rx) = watch::channel(());
    let mut last_log: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    accept_failed(&registry, &e, &mut last_log).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(admission) = registry.admit() else {
            refuse(&stream);
            continue;
        };
        let task = conn::Connection {
            stream,
            peer,
            admission,
            router: router.clone(),
            limits: Arc::clone(&limits),
        };
        let stop = stop_rx.clone();
        let close = close_rx.clone();
        tokio::spawn(async move {
            task.run(stop).await;
            drop(close);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(close_rx);
    close_tx.closed().await;
}

/// Out of descriptors (EMFILE, ENFILE): make room by closing an idle connection. Any other
/// error concerns one connection attempt only. Either way, pause briefly and go on.
async fn accept_failed(registry: &Registry, e: &io::Error, last_log: &mut Option<Instant>) {
    let out_of_descriptors = matches!(e.raw_os_error(), Some(23 | 24));
    if out_of_descriptors {
        registry.evict_oldest_idle();
    }
    if last_log.is_none_or(|t| t.elapsed() >= ACCEPT_LOG_EVERY) {
        *last_log = Some(Instant::now());
        if out_of_descriptors {
            tracing::warn!(error = %e, "out of file descriptors; closing idle connections (raise the limit or lower server.max_connections)");
        } else {
            tracing::debug!(error = %e, "accepting a connection failed");
        }
    }
    tokio::time::sleep(ACCEPT_BACKOFF).await;
}

/// Every open connection is busy: say so in a few bytes (if the socket takes them at once)
/// and close. Never waits on the client.
fn refuse(stream: &TcpStream) {
    let body = "too many connections; retry shortly\n";
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-type: text/plain; \
         charset=utf-8\r\n{RAW_HEADERS}connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(response.as_bytes());
    tracing::debug!("connection refused: every open connection has a request in progress");
}

/// One open connection as the registry sees it.
#[derive(Debug, Default)]
pub(super) struct ConnState {
    /// Requests whose handler has not yet produced a response.
    in_flight: AtomicUsize,
    /// Told to close to make room for a new connection.
    pub(super) evict: Notify,
}

impl ConnState {
    pub(super) fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }

    /// Marks a request in progress until the guard is dropped.
    pub(super) fn enter(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(self))
    }
}

/// A request in progress on a connection.
#[derive(Debug)]
pub(super) struct InFlight(Arc<ConnState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[derive(Debug)]
struct Registry {
    max: usize,
    /// By id, so the first entries are the oldest connections.
    open: Mutex<(u64, BTreeMap<u64, Arc<ConnState>>)>,
}

/// A connection's place in the registry; dropping it frees the place.
#[derive(Debug)]
pub(super) struct Admission {
    id: u64,
    pub(super) state: Arc<ConnState>,
    registry: Arc<Registry>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        if let Ok(mut open) = self.registry.open.lock() {
            open.1.remove(&self.id);
        }
    }
}

impl Registry {
    fn new(max: usize) -> Self {
        Self {
            max,
            open: Mutex::new((0, BTreeMap::new())),
        }
    }

    /// A place for a new connection, closing the oldest idle one at the cap; `None` when all
    /// are busy.
    fn admit(self: &Arc<Self>) -> Option<Admission> {
        let Ok(mut open) = self.open.lock() else {
            return None;
        };
        if open.1.len() >= self.max && !Self::evict_from(&mut open.1) {
            return None;
        }
        open.0 += 1;
        let id = open.0;
        let state = Arc::new(ConnState::default());
        open.1.insert(id, Arc::clone(&state));
        Some(Admission {
            id,
            state,
            registry: Arc::clone(self),
        })
    }

    fn evict_oldest_idle(&self) {
        if let Ok(mut open) = self.open.lock() {
            Self::evict_from(&mut open.1);
        }
    }

    /// Tells the oldest connection without a request in progress to close, and forgets it.
    fn evict_from(open: &mut BTreeMap<u64, Arc<ConnState>>) -> bool {
        let Some(id) = open.iter().find(|(_, c)| !c.busy()).map(|(id, _)| *id) else {
            return false;
        };
        if let Some(c) = open.remove(&id) {
            c.evict.notify_one();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_oldest_idle_connection_makes_room_and_busy_ones_do_not() {
        let registry = Arc::new(Registry::new(2));
        let first = registry.admit().unwrap_or_else(|| panic!("first"));
        let second = registry.admit().unwrap_or_else(|| panic!("second"));
        let _busy = second.state.enter();
        let third = registry
            .admit()
            .unwrap_or_else(|| panic!("third evicts the first"));
        assert!(Arc::strong_count(&first.state) == 1, "first is forgotten");
        let _busy_too = third.state.enter();
        assert!(registry.admit().is_none(), "all busy: refused");
        drop(first);
        assert_eq!(registry.open.lock().map(|o| o.1.len()).unwrap_or(0), 2);
    }
}
