//! One connection: hyper's HTTP/1 server with a header-read timeout, an idle timeout, and the
//! client address on every request.
//!
//! hyper closes a connection whose request headers are not complete within
//! `header_read_timeout` of the connection opening or the previous response ending. This task
//! closes it when no byte has moved either way for `idle_timeout` while no handler is working
//! (a client that stopped reading its response), when the registry evicts it to make room, and
//! asks hyper to finish gracefully at shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::Response;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;
use tower::ServiceExt as _;

use super::serve::{Admission, ConnState, ConnectionLimits};
use super::{ClientAddr, IpNetwork};

/// Largest read (and write) buffer per connection; request headers must fit in it.
const MAX_BUF: usize = 64 * 1024;
/// Longest a finished connection keeps reading what the client still sends before closing.
const LINGER: Duration = Duration::from_secs(2);

pub(super) struct Connection {
    pub(super) stream: TcpStream,
    pub(super) peer: SocketAddr,
    pub(super) admission: Admission,
    pub(super) router: Router,
    pub(super) limits: Arc<ConnectionLimits>,
}

/// Why the serving loop ended.
enum Ended {
    /// hyper finished with the connection (the client closed it, or hyper will not reuse
    /// it); the socket is still open.
    Served,
    /// Timed out, evicted or failed: the socket is just dropped.
    Dropped,
}

impl Connection {
    /// Serves the connection until it ends, times out, is evicted, or has drained after
    /// `stop` turned true.
    pub(super) async fn run(self, stop: watch::Receiver<bool>) {
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Watched {
            inner: self.stream,
            activity: Arc::clone(&activity),
        });
        let state = Arc::clone(&self.admission.state);
        let service = Handler {
            router: self.router,
            peer: self.peer,
            trusted: Arc::clone(&self.limits.trusted_proxies),
            state: Arc::clone(&state),
        };
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_read_timeout)
            .max_buf_size(MAX_BUF);
        let mut conn = builder.serve_connection(io, service);
        let watch = Watch {
            peer: self.peer,
            state: &state,
            activity: &activity,
            idle: self.limits.idle_timeout,
        };
        if let Ended::Served = watch.serve(&mut conn, stop).await {
            let stream = conn.into_parts().io.into_inner().inner;
            linger(stream).await;
        }
        drop(self.admission);
    }
}

/// What the serving loop watches besides hyper.
struct Watch<'a> {
    peer: SocketAddr,
    state: &'a ConnState,
    activity: &'a Activity,
    idle: Duration,
}

impl Watch<'_> {
    async fn serve(
        &self,
        conn: &mut http1::Connection<TokioIo<Watched>, Handler>,
        mut stop: watch::Receiver<bool>,
    ) -> Ended {
        let peer = self.peer;
        let mut draining = false;
        loop {
            let wake = if self.state.busy() {
                Instant::now() + self.idle
            } else {
                self.activity.last() + self.idle
            };
            tokio::select! {
                served = std::future::poll_fn(|cx| conn.poll_without_shutdown(cx)) => {
                    return match served {
                        Ok(()) => Ended::Served,
                        Err(e) => {
                            tracing::debug!(%peer, error = %e, "connection ended with an error");
                            Ended::Dropped
                        }
                    };
                }
                () = self.state.evict.notified() => {
                    tracing::debug!(%peer, "closing an idle connection to make room for a new one");
                    return Ended::Dropped;
                }
                changed = stop.changed(), if !draining => {
                    draining = true;
                    if changed.is_ok() {
                        Pin::new(&mut *conn).graceful_shutdown();
                    }
                }
                () = tokio::time::sleep_until(wake) => {
                    if !self.state.busy() && self.activity.last() + self.idle <= Instant::now() {
                        tracing::debug!(%peer, "closing a connection idle for server.idle_timeout_secs");
                        return Ended::Dropped;
                    }
                }
            }
        }
    }
}

/// Closes our side, then reads and discards what the client still sends, for a moment, before
/// the socket is dropped: closing with unread bytes would reset the connection, and the client
/// could lose the response it was sent (a 413 for a body it is still uploading).
async fn linger(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    if stream.shutdown().await.is_err() {
        return;
    }
    let mut sink = [0u8; 8192];
    let _ = tokio::time::timeout(LINGER, async {
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// The router as a hyper service: marks each request in progress until its response is
/// ready, and puts `ConnectInfo` and the [`ClientAddr`] on it.
struct Handler {
    router: Router,
    peer: SocketAddr,
    trusted: Arc<[IpNetwork]>,
    state: Arc<ConnState>,
}

type Responding = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl hyper::service::Service<hyper::Request<Incoming>> for Handler {
    type Response = Response;
    type Error = Infallible;
    type Future = Responding;

    fn call(&self, req: hyper::Request<Incoming>) -> Self::Future {
        let in_flight = self.state.enter();
        let client = ClientAddr::resolve(self.peer, req.headers(), &self.trusted);
        let mut req = req.map(Body::new);
        req.extensions_mut().insert(ConnectInfo(self.peer));
        req.extensions_mut().insert(client);
        let router = self.router.clone();
        Box::pin(async move {
            let response = router.oneshot(req).await;
            drop(in_flight);
            response
        })
    }
}

/// When a byte last moved on the connection.
#[derive(Debug)]
struct Activity {
    opened: Instant,
    /// Milliseconds after `opened`.
    last_ms: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Self {
            opened: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.opened + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// The socket, recording each read or write that moved bytes.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
