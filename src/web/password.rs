//! The Argon2 check of the dashboard password. At most `web.max_concurrent_password_checks`
//! run at once, on the blocking pool; an attempt that cannot get a turn within [`TURN_WAIT`]
//! is told the server is busy. Each check needs the hash's memory (about 19 MiB with the
//! default parameters): the checks reuse that many buffers, allocated once, rather than
//! allocating per check (freed buffers of that size stay in the allocator's per-thread arenas,
//! so per-check allocation grew the process by one buffer per blocking thread).
//!
//! For a user name that is not the configured one nothing is hashed: the answer waits about
//! as long as a real check takes (a moving average of the checks run), so its timing says
//! little about which name is the real one. The first such attempt, before any check has been
//! timed, runs one real check of a dummy password to learn the duration.
//!
//! Also `atoll hash-password`, which makes the hash.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use argon2::{Algorithm, Argon2, Block, Params, PasswordHash, Version};
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;
use tokio::sync::Semaphore;

/// Longest an attempt waits for a turn to hash.
const TURN_WAIT: Duration = Duration::from_secs(5);
/// What an unknown name waits while the first timing is being taken.
const FIRST_GUESS: Duration = Duration::from_millis(100);

/// Every check slot was taken for [`TURN_WAIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy;

/// The configured hash, parsed once: what a check computes, and the output it must match.
struct Expected {
    argon: Argon2<'static>,
    salt: Vec<u8>,
    output: Vec<u8>,
    blocks: usize,
}

impl fmt::Debug for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expected")
            .field("blocks", &self.blocks)
            .finish_non_exhaustive()
    }
}

impl Expected {
    /// `None` when the PHC string is not a usable Argon2 hash (the config loader refuses
    /// those; every check then fails).
    fn parse(phc: &str) -> Option<Self> {
        let hash = PasswordHash::new(phc).ok()?;
        let algorithm = Algorithm::try_from(hash.algorithm).ok()?;
        let version = match hash.version {
            Some(v) => Version::try_from(v).ok()?,
            None => Version::default(),
        };
        let params = Params::try_from(&hash).ok()?;
        let mut salt = [0u8; 64];
        let salt = hash.salt?.decode_b64(&mut salt).ok()?.to_vec();
        let output = hash.hash?.as_bytes().to_vec();
        Some(Self {
            blocks: params.block_count(),
            argon: Argon2::new(algorithm, version, params),
            salt,
            output,
        })
    }

    /// Hashes `password` in `memory` and compares in constant time.
    fn matches(&self, password: &[u8], memory: &mut [Block]) -> bool {
        let mut out = vec![0u8; self.output.len()];
        self.argon
            .hash_password_into_with_memory(password, &self.salt, &mut out, memory)
            .is_ok()
            && bool::from(out.ct_eq(&self.output))
    }
}

#[derive(Debug)]
pub(crate) struct PasswordCheck {
    expected: Option<Arc<Expected>>,
    /// Argon2 working memory not in use (at most one per turn).
    memory: Mutex<Vec<Vec<Block>>>,
    turns: Arc<Semaphore>,
    /// Moving average of a check's duration, in microseconds; 0 until one was timed.
    typical_us: AtomicU64,
    timing: AtomicBool,
    /// Argon2 checks run since start (for `/metrics`).
    checks: AtomicU64,
}

impl PasswordCheck {
    pub(crate) fn new(hash: &SecretString, concurrent: usize) -> Self {
        Self {
            expected: Expected::parse(hash.expose_secret().trim()).map(Arc::new),
            memory: Mutex::new(Vec::new()),
            turns: Arc::new(Semaphore::new(concurrent.max(1))),
            typical_us: AtomicU64::new(0),
            timing: AtomicBool::new(false),
            checks: AtomicU64::new(0),
        }
    }

    /// Argon2 checks run since start.
    pub(crate) fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// Whether `password` matches the configured hash.
    pub(crate) async fn verify(&self, password: &str) -> Result<bool, Busy> {
        let turn = tokio::time::timeout(TURN_WAIT, Arc::clone(&self.turns).acquire_owned())
            .await
            .map_err(|_| Busy)?
            .map_err(|_| Busy)?;
        let Some(expected) = self.expected.clone() else {
            return Ok(false);
        };
        let memory = self.memory.lock().ok().and_then(|mut m| m.pop());
        let mut memory = memory.unwrap_or_else(|| vec![Block::new(); expected.blocks]);
        let password = password.to_owned();
        self.checks.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        // The turn moves into the blocking task: it is held while the hash runs, even if this
        // request is cancelled meanwhile.
        let checked = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let matched = expected.matches(password.as_bytes(), &mut memory);
            (matched, memory)
        })
        .await;
        let matched = match checked {
            Ok((matched, memory)) => {
                if let Ok(mut pool) = self.memory.lock() {
                    pool.push(memory);
                }
                matched
            }
            Err(_) => false,
        };
        self.record(started.elapsed());
        Ok(matched)
    }

    /// Stands in for a check without hashing: waits about as long as one takes.
    pub(crate) async fn imitate(&self) {
        let typical = self.typical_us.load(Ordering::Relaxed);
        if typical > 0 {
            tokio::time::sleep(Duration::from_micros(typical)).await;
        } else if !self.timing.swap(true, Ordering::AcqRel) {
            let _ = self.verify("\u{0}not the password").await;
        } else {
            tokio::time::sleep(FIRST_GUESS).await;
        }
    }

    fn record(&self, took: Duration) {
        let sample = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        let _ = self
            .typical_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some(if old == 0 {
                    sample
                } else {
                    old - old / 8 + sample / 8
                })
            });
    }
}

/// An Argon2id hash of `password` in PHC form, with a random salt, for `web.password_hash`.
pub fn hash_password(password: &str) -> Result<String, String> {
    use argon2::PasswordHasher;
    let mut salt = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut salt);
    let salt = argon2::password_hash::SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// `atoll hash-password`: reads one line from standard input, prints its hash.
pub fn hash_password_cli() -> std::process::ExitCode {
    let mut line = String::new();
    if let Err(e) = std::io::stdin().read_line(&mut line) {
        eprintln!("cannot read the password from standard input: {e}");
        return std::process::ExitCode::from(2);
    }
    let password = line.trim_end_matches(['\n', '\r']);
    if password.is_empty() {
        eprintln!("no password given: pipe it in, e.g. `atoll hash-password < password.txt`");
        return std::process::ExitCode::from(2);
    }
    match hash_password(password) {
        Ok(hash) => {
            println!("{hash}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hashing failed: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn checks_reuse_their_working_memory_and_tell_right_from_wrong() {
        let hash = hash_password("right").unwrap_or_else(|e| panic!("{e}"));
        let check = PasswordCheck::new(&SecretString::from(hash), 2);
        for _ in 0..3 {
            assert_eq!(check.verify("right").await, Ok(true));
            assert_eq!(check.verify("wrong").await, Ok(false));
        }
        let pooled = check.memory.lock().map(|m| m.len()).unwrap_or(0);
        assert_eq!(pooled, 1, "sequential checks share one buffer");
        assert_eq!(check.checks(), 6);
    }

    #[tokio::test]
    async fn a_hash_that_does_not_parse_matches_nothing() {
        let check = PasswordCheck::new(&SecretString::from("$argon2id$broken"), 2);
        assert_eq!(check.verify("anything").await, Ok(false));
    }
}
