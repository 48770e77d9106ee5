//! The Argon2 check of the dashboard password. At most `web.max_concurrent_password_checks`
//! run at once, on the blocking pool (each takes the hash's memory, about 19 MiB with the
//! default parameters); an attempt that cannot get a turn within [`TURN_WAIT`] is told the
//! server is busy.
//!
//! For a user name that is not the configured one nothing is hashed: the answer waits about
//! as long as a real check takes (a moving average of the checks run), so its timing says
//! little about which name is the real one. The first such attempt, before any check has been
//! timed, runs one real check of a dummy password to learn the duration.
//!
//! Also `atoll hash-password`, which makes the hash.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use argon2::{Argon2, PasswordHash, PasswordVerifier};
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::Semaphore;

/// Longest an attempt waits for a turn to hash.
const TURN_WAIT: Duration = Duration::from_secs(5);
/// What an unknown name waits while the first timing is being taken.
const FIRST_GUESS: Duration = Duration::from_millis(100);

/// Every check slot was taken for [`TURN_WAIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy;

#[derive(Debug)]
pub(crate) struct PasswordCheck {
    hash: SecretString,
    turns: Arc<Semaphore>,
    /// Moving average of a check's duration, in microseconds; 0 until one was timed.
    typical_us: AtomicU64,
    timing: AtomicBool,
    /// Argon2 checks run since start (for `/metrics`).
    checks: AtomicU64,
}

impl PasswordCheck {
    pub(crate) fn new(hash: SecretString, concurrent: usize) -> Self {
        Self {
            hash,
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
        let hash = self.hash.expose_secret().trim().to_owned();
        let password = password.to_owned();
        self.checks.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        // The turn moves into the blocking task: it is held while the hash runs, even if this
        // request is cancelled meanwhile.
        let matched = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            PasswordHash::new(&hash).is_ok_and(|h| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &h)
                    .is_ok()
            })
        })
        .await
        .unwrap_or(false);
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
