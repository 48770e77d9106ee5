//! The time, from one place. Production code asks a [`Clock`] instead of the system, so a test
//! can hold a [`ManualClock`] and move it: expiry (dashboard sessions, login windows, Proxmox
//! tickets, the discovery cache, the simulator's tickets) is then instant and exact, and no
//! test waits for real time to pass.
//!
//! Two kinds of time stay off this seam on purpose:
//! - the store's: `{now}` is the database's clock, so that several replicas agree on leases
//!   and timestamps (a manual clock does not move it; lease tests use zero-length leases);
//! - real waits: timeouts and measured durations that go with a tokio timer (HTTP idle and
//!   request timeouts, task polling, request latency, job durations). A clock that stands
//!   still would make those wait forever.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use time::OffsetDateTime;

/// Wall time and monotonic time.
pub trait Clock: Send + Sync + Debug {
    /// Now, in UTC.
    fn now(&self) -> OffsetDateTime;

    /// Now, on the monotonic clock (for ages and windows, not for display).
    fn instant(&self) -> Instant;

    /// How long ago `earlier` (from [`Clock::instant`]) was; zero if it lies ahead.
    fn since(&self, earlier: Instant) -> Duration {
        self.instant().saturating_duration_since(earlier)
    }
}

/// A clock as the parts of atoll hold it.
pub type SharedClock = Arc<dyn Clock>;

/// The system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    /// The system's clock, shared.
    pub fn shared() -> SharedClock {
        Arc::new(Self)
    }
}

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }

    fn instant(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that stands still until told to move: for tests. It starts at the system's time
/// when it is made; every clone reads and moves the same time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    inner: Arc<Manual>,
}

#[derive(Debug)]
struct Manual {
    wall: OffsetDateTime,
    instant: Instant,
    advanced: Mutex<Duration>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl ManualClock {
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Manual {
                wall: OffsetDateTime::now_utc(),
                instant: Instant::now(),
                advanced: Mutex::new(Duration::ZERO),
            }),
        }
    }

    /// The clock to hand to the code under test.
    pub fn shared(&self) -> SharedClock {
        Arc::new(self.clone())
    }

    /// Moves the clock (and every clone of it) forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut advanced = self
            .inner
            .advanced
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *advanced = advanced.saturating_add(by);
    }

    fn advanced(&self) -> Duration {
        *self
            .inner
            .advanced
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        self.inner.wall + self.advanced()
    }

    fn instant(&self) -> Instant {
        self.inner.instant + self.advanced()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_all_its_clones_see_it() {
        let hand = ManualClock::new();
        let clock = hand.shared();
        let (wall, instant) = (clock.now(), clock.instant());
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(clock.now(), wall);
        assert_eq!(clock.instant(), instant);
        hand.advance(Duration::from_secs(7200));
        assert_eq!(clock.now() - wall, time::Duration::hours(2));
        assert_eq!(clock.since(instant), Duration::from_secs(7200));
        assert_eq!(
            clock.since(clock.instant() + Duration::from_secs(1)),
            Duration::ZERO
        );
    }

    #[test]
    fn the_system_clock_moves_by_itself() {
        let clock = SystemClock::shared();
        let before = clock.instant();
        std::thread::sleep(Duration::from_millis(2));
        assert!(clock.since(before) >= Duration::from_millis(2));
    }
}
