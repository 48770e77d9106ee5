//! Reading a webhook body, which has to happen before its signature can be checked: bounded in
//! size (`webhook.max_body_bytes`), in bodies being read at once (`max_concurrent_bodies`) and
//! in their total bytes (`max_buffered_bytes`). Nothing waits for room: a delivery that does
//! not fit is answered 503 with `Retry-After` at once, a too-large one 413.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, header};
use futures::StreamExt as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::WebhookBodySettings;

/// Smallest buffer allocated for a body; it doubles from there as bytes arrive.
const FIRST_BUFFER: usize = 16 * 1024;

/// Why a body was not read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error(
        "the delivery is larger than {limit} bytes (webhook.max_body_bytes); raise the limit if \
         the forge really sends such payloads"
    )]
    TooLarge { limit: usize },
    #[error("too many deliveries are being received at once; retry in a few seconds")]
    Busy,
    #[error("content-length is not a number")]
    BadLength,
    #[error("reading the request body failed: {0}")]
    Read(String),
}

/// The shared allowance for bodies being read.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    max_body: usize,
    total: usize,
    bodies: Arc<Semaphore>,
    /// One permit per byte of buffer allocated.
    bytes: Arc<Semaphore>,
}

/// A body in memory, holding its share of the budget until dropped.
#[derive(Debug)]
pub struct Buffered {
    bytes: Vec<u8>,
    _body: OwnedSemaphorePermit,
    _bytes: Option<OwnedSemaphorePermit>,
}

impl std::ops::Deref for Buffered {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl BodyBudget {
    pub fn new(limits: WebhookBodySettings) -> Self {
        let total = limits.max_buffered_bytes.min(Semaphore::MAX_PERMITS);
        Self {
            max_body: limits.max_body_bytes,
            total,
            bodies: Arc::new(Semaphore::new(limits.max_concurrent_bodies)),
            bytes: Arc::new(Semaphore::new(total)),
        }
    }

    /// Bytes of buffer held by the bodies being read (or handled) now.
    pub fn buffered(&self) -> usize {
        self.total.saturating_sub(self.bytes.available_permits())
    }

    /// Refuses a declared length above the limit before anything is read, then reads the
    /// body, taking budget for each buffer growth as bytes arrive (so a client that only
    /// announces a large body holds nothing for it).
    pub async fn read(&self, headers: &HeaderMap, body: Body) -> Result<Buffered, BodyError> {
        let declared = declared_length(headers)?;
        if declared.is_some_and(|n| n > self.max_body) {
            return Err(BodyError::TooLarge {
                limit: self.max_body,
            });
        }
        let slot = Arc::clone(&self.bodies)
            .try_acquire_owned()
            .map_err(|_| BodyError::Busy)?;
        let mut buffer = Growing {
            bytes: Vec::new(),
            held: None,
            ceiling: declared.unwrap_or(self.max_body),
        };
        let mut stream = body.into_data_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| BodyError::Read(e.to_string()))?;
            let needed = buffer.bytes.len() + chunk.len();
            if needed > self.max_body {
                return Err(BodyError::TooLarge {
                    limit: self.max_body,
                });
            }
            buffer.make_room(needed, &self.bytes)?;
            buffer.bytes.extend_from_slice(&chunk);
        }
        Ok(Buffered {
            bytes: buffer.bytes,
            _body: slot,
            _bytes: buffer.held,
        })
    }
}

/// A body's buffer and the budget it holds (one permit per byte of capacity).
struct Growing {
    bytes: Vec<u8>,
    held: Option<OwnedSemaphorePermit>,
    /// The declared length, or the limit: capacity never grows past it.
    ceiling: usize,
}

impl Growing {
    /// Grows the buffer (doubling, up to the ceiling) to hold `needed` bytes, taking budget
    /// for the growth first.
    fn make_room(&mut self, needed: usize, budget: &Arc<Semaphore>) -> Result<(), BodyError> {
        let capacity = self.bytes.capacity();
        if needed <= capacity {
            return Ok(());
        }
        let target = (capacity * 2)
            .max(FIRST_BUFFER)
            .min(self.ceiling)
            .max(needed);
        let more = u32::try_from(target - capacity).map_err(|_| BodyError::Busy)?;
        let permit = Arc::clone(budget)
            .try_acquire_many_owned(more)
            .map_err(|_| BodyError::Busy)?;
        match &mut self.held {
            Some(held) => held.merge(permit),
            None => self.held = Some(permit),
        }
        self.bytes.reserve_exact(target - self.bytes.len());
        Ok(())
    }
}

/// `Content-Length` if sent (hyper has already refused a malformed one on HTTP/1).
fn declared_length(headers: &HeaderMap) -> Result<Option<usize>, BodyError> {
    let Some(value) = headers.get(header::CONTENT_LENGTH) else {
        return Ok(None);
    };
    let text = value.to_str().map_err(|_| BodyError::BadLength)?;
    let n: u64 = text.trim().parse().map_err(|_| BodyError::BadLength)?;
    Ok(Some(usize::try_from(n).unwrap_or(usize::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(max_body: usize, concurrent: usize, total: usize) -> BodyBudget {
        BodyBudget::new(WebhookBodySettings {
            max_body_bytes: max_body,
            max_concurrent_bodies: concurrent,
            max_buffered_bytes: total,
        })
    }

    fn length(n: usize) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_LENGTH, n.into());
        h
    }

    #[tokio::test]
    async fn a_body_holds_its_capacity_until_dropped() {
        let b = budget(1 << 20, 4, 4 << 20);
        let body = b
            .read(&length(100_000), Body::from(vec![7u8; 100_000]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(body.len(), 100_000);
        assert_eq!(
            b.buffered(),
            100_000,
            "capacity grows exactly to the declared length"
        );
        drop(body);
        assert_eq!(b.buffered(), 0);
    }

    #[tokio::test]
    async fn declared_length_over_the_limit_is_refused_unread_and_a_full_budget_is_busy() {
        let b = budget(1000, 1, 1000);
        let too_big = b.read(&length(1001), Body::from(vec![0u8; 10])).await;
        assert!(
            matches!(too_big, Err(BodyError::TooLarge { limit: 1000 })),
            "{too_big:?}"
        );
        let held = b
            .read(&HeaderMap::new(), Body::from(vec![1u8; 10]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let second = b.read(&HeaderMap::new(), Body::from(vec![1u8; 10])).await;
        assert!(matches!(second, Err(BodyError::Busy)), "{second:?}");
        drop(held);
        let chunked_too_big = b.read(&HeaderMap::new(), Body::from(vec![1u8; 1001])).await;
        assert!(matches!(chunked_too_big, Err(BodyError::TooLarge { .. })));
        assert_eq!(b.buffered(), 0);
    }
}
