//! Failed-login limits, counted before the password is checked so parallel attempts cannot
//! slip past them.
//!
//! Three counters over a 15-minute window, each bounded in size:
//! - per user name and client address (`web.max_failed_logins`): one address guessing one
//!   name is stopped there, and only there, so the owner of the name can still log in from
//!   elsewhere;
//! - per client address (`web.max_failed_logins_per_address`): one address trying many names;
//! - per user name (`web.max_failed_logins_per_user`): many addresses guessing one name; past
//!   it, only addresses with no failure for that name in the window may still try it.
//!
//! [`Limiter::reserve`] counts the attempt as a failure up front, atomically with the check;
//! [`Reservation::succeeded`] takes it back, [`Reservation::unchecked`] too when no password
//! was checked. Dropping it (a wrong password, a cancelled request) keeps the failure.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use model::SharedClock;

use crate::config::WebSettings;

/// Window over which failed logins are counted.
const FAIL_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Bound on the entries of each counter (the oldest go first).
const MAX_ENTRIES: usize = 10_000;

/// Failures per key within the window.
#[derive(Debug)]
struct Counter<K> {
    limit: u64,
    counts: HashMap<K, (u64, Instant)>,
}

impl<K: Eq + Hash + Clone> Counter<K> {
    fn new(limit: u64) -> Self {
        Self {
            limit,
            counts: HashMap::new(),
        }
    }

    fn get(&self, key: &K, now: Instant) -> u64 {
        match self.counts.get(key) {
            Some((n, since)) if now.duration_since(*since) < FAIL_WINDOW => *n,
            _ => 0,
        }
    }

    fn full(&self, key: &K, now: Instant) -> bool {
        self.get(key, now) >= self.limit
    }

    fn add(&mut self, key: &K, now: Instant) {
        if !self.counts.contains_key(key) && self.counts.len() >= MAX_ENTRIES {
            self.counts
                .retain(|_, (_, since)| now.duration_since(*since) < FAIL_WINDOW);
            if self.counts.len() >= MAX_ENTRIES {
                let oldest = self
                    .counts
                    .iter()
                    .min_by_key(|(_, (_, since))| *since)
                    .map(|(k, _)| k.clone());
                if let Some(k) = oldest {
                    self.counts.remove(&k);
                }
            }
        }
        let entry = self.counts.entry(key.clone()).or_insert((0, now));
        if now.duration_since(entry.1) >= FAIL_WINDOW {
            *entry = (0, now);
        }
        entry.0 += 1;
    }

    fn sub(&mut self, key: &K) {
        if let Some(entry) = self.counts.get_mut(key) {
            entry.0 = entry.0.saturating_sub(1);
            if entry.0 == 0 {
                self.counts.remove(key);
            }
        }
    }

    fn clear(&mut self, key: &K) {
        self.counts.remove(key);
    }
}

#[derive(Debug)]
struct Counters {
    pairs: Counter<(IpAddr, String)>,
    addresses: Counter<IpAddr>,
    users: Counter<String>,
}

/// Which limit stopped an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Throttled {
    /// This name from this address, or this name from an address that failed it while it is
    /// under attack from many addresses.
    User,
    /// This address, whatever the name.
    Address,
}

#[derive(Debug)]
pub(crate) struct Limiter {
    counters: Mutex<Counters>,
    clock: SharedClock,
}

/// One attempt, counted as a failure until told otherwise.
#[derive(Debug)]
pub(crate) struct Reservation<'l> {
    limiter: &'l Limiter,
    address: IpAddr,
    user: String,
    settled: bool,
}

impl Limiter {
    pub(crate) fn new(settings: &WebSettings, clock: SharedClock) -> Self {
        Self {
            counters: Mutex::new(Counters {
                pairs: Counter::new(settings.max_failed_logins),
                addresses: Counter::new(settings.max_failed_logins_per_address),
                users: Counter::new(settings.max_failed_logins_per_user),
            }),
            clock,
        }
    }

    /// Checks every limit for `user` (compared case-insensitively) from `address` and, if
    /// none is reached, counts the attempt as a failure in all three.
    pub(crate) fn reserve(
        &self,
        address: IpAddr,
        user: &str,
    ) -> Result<Reservation<'_>, Throttled> {
        let user = user.to_lowercase();
        let now = self.clock.instant();
        let Ok(mut c) = self.counters.lock() else {
            return Err(Throttled::Address);
        };
        let pair = (address, user.clone());
        if c.addresses.full(&address, now) {
            return Err(Throttled::Address);
        }
        let pair_failures = c.pairs.get(&pair, now);
        if pair_failures >= c.pairs.limit || (c.users.full(&user, now) && pair_failures > 0) {
            return Err(Throttled::User);
        }
        c.pairs.add(&pair, now);
        c.addresses.add(&address, now);
        c.users.add(&user, now);
        Ok(Reservation {
            limiter: self,
            address,
            user,
            settled: false,
        })
    }
}

impl Reservation<'_> {
    /// The password was right: this attempt is no failure, and the name's earlier failures
    /// from this address are forgiven.
    pub(crate) fn succeeded(mut self) {
        self.settle(true);
    }

    /// No password was checked (the server was busy): the attempt does not count.
    pub(crate) fn unchecked(mut self) {
        self.settle(false);
    }

    fn settle(&mut self, forgive_pair: bool) {
        self.settled = true;
        let Ok(mut c) = self.limiter.counters.lock() else {
            return;
        };
        let pair = (self.address, self.user.clone());
        if forgive_pair {
            c.pairs.clear(&pair);
        } else {
            c.pairs.sub(&pair);
        }
        c.addresses.sub(&self.address);
        c.users.sub(&self.user);
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.settled {
            tracing::debug!(client = %self.address, "dashboard: failed login counted");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(pair: u64, address: u64, user: u64) -> Limiter {
        limiter_at(pair, address, user, model::SystemClock::shared())
    }

    fn limiter_at(pair: u64, address: u64, user: u64, clock: SharedClock) -> Limiter {
        Limiter {
            counters: Mutex::new(Counters {
                pairs: Counter::new(pair),
                addresses: Counter::new(address),
                users: Counter::new(user),
            }),
            clock,
        }
    }

    #[test]
    fn failures_are_forgotten_once_the_window_has_passed() {
        let hand = model::ManualClock::new();
        let l = limiter_at(1, 10, 10, hand.shared());
        drop(l.reserve(ip("192.0.2.1"), "ops").expect("first attempt"));
        hand.advance(FAIL_WINDOW - Duration::from_secs(1));
        assert_eq!(
            l.reserve(ip("192.0.2.1"), "ops").map(|_| ()),
            Err(Throttled::User)
        );
        hand.advance(Duration::from_secs(1));
        assert!(l.reserve(ip("192.0.2.1"), "ops").is_ok());
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn attempts_are_counted_when_reserved_not_when_they_end() {
        let l = limiter(3, 100, 100);
        let held: Vec<_> = (0..3)
            .map(|_| {
                l.reserve(ip("192.0.2.1"), "ops")
                    .unwrap_or_else(|e| panic!("{e:?}"))
            })
            .collect();
        assert_eq!(
            l.reserve(ip("192.0.2.1"), "OPS").err(),
            Some(Throttled::User)
        );
        assert!(
            l.reserve(ip("192.0.2.2"), "ops").is_ok(),
            "another address may try"
        );
        drop(held);
        assert_eq!(
            l.reserve(ip("192.0.2.1"), "ops").err(),
            Some(Throttled::User)
        );
    }

    #[test]
    fn success_and_unchecked_attempts_give_the_reservation_back() {
        let l = limiter(2, 100, 100);
        let a = l
            .reserve(ip("192.0.2.1"), "ops")
            .unwrap_or_else(|e| panic!("{e:?}"));
        drop(a);
        let b = l
            .reserve(ip("192.0.2.1"), "ops")
            .unwrap_or_else(|e| panic!("{e:?}"));
        b.succeeded();
        for _ in 0..2 {
            let busy = l
                .reserve(ip("192.0.2.1"), "ops")
                .unwrap_or_else(|e| panic!("{e:?}"));
            busy.unchecked();
        }
        assert!(l.reserve(ip("192.0.2.1"), "ops").is_ok());
    }

    #[test]
    fn one_address_spraying_names_is_stopped_by_the_address_limit() {
        let l = limiter(5, 4, 100);
        for i in 0..4 {
            drop(
                l.reserve(ip("192.0.2.1"), &format!("user{i}"))
                    .unwrap_or_else(|e| panic!("{e:?}")),
            );
        }
        assert_eq!(
            l.reserve(ip("192.0.2.1"), "ops").err(),
            Some(Throttled::Address)
        );
        assert!(l.reserve(ip("192.0.2.9"), "ops").is_ok());
    }

    #[test]
    fn a_name_under_wide_attack_stays_open_to_addresses_that_have_not_failed_it() {
        let l = limiter(5, 100, 3);
        for i in 1..=3 {
            drop(
                l.reserve(ip(&format!("198.51.100.{i}")), "ops")
                    .unwrap_or_else(|e| panic!("{e:?}")),
            );
        }
        assert_eq!(
            l.reserve(ip("198.51.100.1"), "ops").err(),
            Some(Throttled::User)
        );
        assert!(
            l.reserve(ip("192.0.2.7"), "ops").is_ok(),
            "a clean address may try"
        );
    }
}
