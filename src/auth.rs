//! Identity primitives: password hashes (Argon2id) and bearer tokens (JWT HS256). Never
//! logs a token or a password. The accounts service (`crate::accounts`) uses them; the
//! `Caller` extractor lives in `crate::http::caller`.

use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// Token issuer and audience.
pub const ISSUER: &str = "stammtisch";
/// Token audience.
pub const AUDIENCE: &str = "stammtisch-api";

/// Seconds a token is still accepted after its `exp`, for clocks that differ a little.
const LEEWAY_SECONDS: i64 = 5;

/// Hashes a password with Argon2id and a random salt (PHC string).
///
/// # Errors
/// Only if the hasher fails, which it does not for valid parameters.
pub fn hash_password(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::generate(&mut OsRng);
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

/// Whether `password` matches the PHC `hash`.
#[must_use]
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// Why the bounded hasher gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    /// Every hashing slot stayed taken for the whole wait.
    #[error("every password-hashing slot is taken")]
    Busy,
    /// The hasher failed (it does not for valid parameters) or its thread died.
    #[error("password hashing failed: {0}")]
    Failed(String),
}

type Job = Box<dyn FnOnce(&mut Scratch) + Send>;

/// Argon2id over memory that its owner keeps: a hashing thread holds one for its life, so
/// a hash (~19 MiB of blocks) never goes through the allocator, whose arenas otherwise
/// kept hundreds of megabytes after a flood. Makes and reads the same PHC strings as
/// [`hash_password`] and [`verify_password`].
#[derive(Default)]
pub struct Scratch(Vec<argon2::Block>);

impl Scratch {
    fn blocks(&mut self, n: usize) -> &mut [argon2::Block] {
        if self.0.len() < n {
            self.0.resize(n, argon2::Block::default());
        }
        &mut self.0[..n]
    }

    /// Hashes a password with Argon2id's default parameters and a random salt.
    ///
    /// # Errors
    /// Only if the hasher fails, which it does not for valid parameters.
    pub fn hash(&mut self, password: &str) -> Result<String, argon2::password_hash::Error> {
        use argon2::password_hash::{Output, ParamsString};
        let params = argon2::Params::default();
        let salt = SaltString::generate(&mut OsRng);
        let mut salt_buf = [0u8; 64];
        let salt_bytes = salt.as_salt().decode_b64(&mut salt_buf)?;
        let mut out = [0u8; argon2::Params::DEFAULT_OUTPUT_LEN];
        let (algorithm, version) = (argon2::Algorithm::Argon2id, argon2::Version::V0x13);
        Argon2::new(algorithm, version, params.clone()).hash_password_into_with_memory(
            password.as_bytes(),
            salt_bytes,
            &mut out,
            self.blocks(params.block_count()),
        )?;
        Ok(PasswordHash {
            algorithm: algorithm.ident(),
            version: Some(version.into()),
            params: ParamsString::try_from(&params)?,
            salt: Some(salt.as_salt()),
            hash: Some(Output::new(&out)?),
        }
        .to_string())
    }

    /// Whether `password` matches the PHC `hash` (compared in constant time).
    #[must_use]
    pub fn verify(&mut self, password: &str, hash: &str) -> bool {
        self.check(password, hash).unwrap_or(false)
    }

    fn check(&mut self, password: &str, hash: &str) -> Result<bool, argon2::password_hash::Error> {
        use argon2::password_hash::{Error, Output};
        let phc = PasswordHash::new(hash)?;
        let algorithm = argon2::Algorithm::try_from(phc.algorithm)?;
        let version = phc
            .version
            .map(argon2::Version::try_from)
            .transpose()?
            .unwrap_or_default();
        let params = argon2::Params::try_from(&phc)?;
        let (Some(salt), Some(expected)) = (phc.salt, phc.hash) else {
            return Err(Error::PhcStringField);
        };
        let mut salt_buf = [0u8; 64];
        let salt_bytes = salt.decode_b64(&mut salt_buf)?;
        let mut out = vec![0u8; expected.len()];
        Argon2::new(algorithm, version, params.clone()).hash_password_into_with_memory(
            password.as_bytes(),
            salt_bytes,
            &mut out,
            self.blocks(params.block_count()),
        )?;
        Ok(Output::new(&out)? == expected)
    }
}

/// Password hashing on a few threads of its own, at most one hash per thread at a time.
///
/// One Argon2id hash takes ~19 MiB and most of a core for tens of milliseconds. Run on
/// whatever thread a request has, a flood of logins ran hundreds at once and left the
/// process at gigabytes (the allocator keeps each thread's arena). Here a request first
/// takes a slot (one per hashing thread), waiting at most `wait`; without one it gets
/// [`HashError::Busy`] (the HTTP layer answers 503 with `Retry-After`). The work runs on
/// the hashing threads, each over its own [`Scratch`] memory, allocated once.
///
/// Each waiting request holds a thread of the blocking pool, which every database call
/// shares; so at most [`WAITERS_PER_THREAD`] per hashing thread wait, and a request beyond
/// them is answered busy at once instead of after the wait.
pub struct Hasher {
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<Job>>,
    slots: std::sync::Mutex<Slots>,
    freed: std::sync::Condvar,
    wait: Duration,
    most_waiting: usize,
}

/// Requests that may wait for a slot, per hashing thread.
pub const WAITERS_PER_THREAD: usize = 8;

/// The hashing slots: how many are free, and how many requests wait for one.
struct Slots {
    free: usize,
    waiting: usize,
}

/// A taken slot; dropping it frees the slot.
struct Slot<'a>(&'a Hasher);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        lock(&self.0.slots).free += 1;
        self.0.freed.notify_one();
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Hasher {
    /// `threads` hashing threads (at least one); a request waits at most `wait` for one.
    ///
    /// # Errors
    /// A thread could not be started.
    pub fn new(threads: usize, wait: Duration) -> std::io::Result<Self> {
        let threads = threads.max(1);
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("password-hash-{i}"))
                .spawn(move || {
                    let mut scratch = Scratch::default();
                    loop {
                        // The lock is held only while waiting for the next job.
                        let job = lock(&rx).recv();
                        match job {
                            Ok(job) => job(&mut scratch),
                            Err(_) => return,
                        }
                    }
                })?;
        }
        Ok(Self {
            jobs: std::sync::Mutex::new(tx),
            slots: std::sync::Mutex::new(Slots {
                free: threads,
                waiting: 0,
            }),
            freed: std::sync::Condvar::new(),
            wait,
            most_waiting: threads.saturating_mul(WAITERS_PER_THREAD),
        })
    }

    fn slot(&self) -> Result<Slot<'_>, HashError> {
        let deadline = std::time::Instant::now() + self.wait;
        let mut slots = lock(&self.slots);
        if slots.free == 0 && slots.waiting >= self.most_waiting {
            return Err(HashError::Busy);
        }
        slots.waiting += 1;
        while slots.free == 0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                slots.waiting -= 1;
                return Err(HashError::Busy);
            }
            slots = self
                .freed
                .wait_timeout(slots, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        slots.waiting -= 1;
        slots.free -= 1;
        Ok(Slot(self))
    }

    /// Runs `work` on a hashing thread once a slot is free, and waits for its answer.
    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Scratch) -> T + Send + 'static,
    ) -> Result<T, HashError> {
        let _slot = self.slot()?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        lock(&self.jobs)
            .send(Box::new(move |scratch: &mut Scratch| {
                let _ = tx.send(work(scratch));
            }))
            .map_err(|_| HashError::Failed("the hashing threads are gone".into()))?;
        rx.recv()
            .map_err(|_| HashError::Failed("a hashing thread died".into()))
    }

    /// [`Scratch::hash`] on a hashing thread.
    ///
    /// # Errors
    /// No slot within the wait, or the hasher failed.
    pub fn hash(&self, password: &str) -> Result<String, HashError> {
        let password = password.to_owned();
        self.run(move |scratch| scratch.hash(&password))?
            .map_err(|e| HashError::Failed(e.to_string()))
    }

    /// [`Scratch::verify`] on a hashing thread.
    ///
    /// # Errors
    /// No slot within the wait, or the hasher failed.
    pub fn verify(&self, password: &str, hash: &str) -> Result<bool, HashError> {
        let (password, hash) = (password.to_owned(), hash.to_owned());
        self.run(move |scratch| scratch.verify(&password, &hash))
    }
}

/// A burnt hash to verify against for unknown names, so both answers take as long.
pub fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| hash_password("not a password of anyone").unwrap_or_default())
}

/// Claims of an access token.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// Account id.
    pub sub: String,
    /// Account name.
    pub name: String,
    /// Issuer: always [`ISSUER`], checked on every token.
    pub iss: String,
    /// Audience: always [`AUDIENCE`], checked on every token.
    pub aud: String,
    /// Issued at (seconds).
    pub iat: i64,
    /// Expiry (seconds).
    pub exp: i64,
    /// The account's token version at issue: a token whose version is not the account's
    /// current one is revoked (logout everywhere, password change, deletion). Tokens from
    /// before versions existed read as 0.
    #[serde(default)]
    pub ver: i32,
}

/// Signs and checks tokens with one HS256 secret.
pub struct Tokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    ttl: Duration,
    /// What `iat` and `exp` are measured against, when issued and when checked.
    clock: crate::clock::Clock,
}

impl Tokens {
    /// Keys from a secret.
    ///
    /// # Errors
    /// A secret the key constructors refuse.
    pub fn new(secret: &[u8], ttl: Duration) -> Result<Self, jsonwebtoken::errors::Error> {
        Ok(Self {
            encoding: EncodingKey::from_secret(secret)?,
            decoding: DecodingKey::from_secret(secret)?,
            ttl,
            clock: crate::clock::Clock::system(),
        })
    }

    /// The same keys, issuing and checking tokens by `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: crate::clock::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Lifetime of issued tokens in seconds.
    #[must_use]
    pub fn ttl_seconds(&self) -> u64 {
        self.ttl.as_secs()
    }

    /// Issues a token for an account.
    ///
    /// # Errors
    /// Signing failure.
    pub fn issue(
        &self,
        account_id: &str,
        name: &str,
        version: i32,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let now = self.clock.timestamp();
        let claims = Claims {
            sub: account_id.into(),
            name: name.into(),
            iss: ISSUER.into(),
            aud: AUDIENCE.into(),
            iat: now,
            exp: now + i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX / 2),
            ver: version,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    /// Checks a token: HS256 only, signature, `exp`, `iss` and `aud`.
    ///
    /// # Errors
    /// Any defect of the token.
    pub fn check(&self, token: &str) -> Result<Claims, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        // `exp` is checked below against this service's clock, not the crate's own reading
        // of the system time, so that a token expires by the same clock that issued it.
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)?.claims;
        if claims.exp < self.clock.timestamp() - LEEWAY_SECONDS {
            return Err(jsonwebtoken::errors::ErrorKind::ExpiredSignature.into());
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn scratch_hashes_read_like_the_crates_and_back() {
        let mut scratch = Scratch::default();
        let ours = scratch.hash("correct horse").unwrap();
        assert!(
            ours.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{ours}"
        );
        assert!(verify_password("correct horse", &ours));
        assert!(!verify_password("wrong horse", &ours));
        let theirs = hash_password("battery staple").unwrap();
        assert!(scratch.verify("battery staple", &theirs));
        assert!(!scratch.verify("battery stable", &theirs));
        assert!(!scratch.verify("x", "not a phc string"));
    }

    #[test]
    fn a_hasher_without_a_free_slot_says_busy() {
        let hasher = Hasher::new(1, Duration::from_millis(1)).unwrap();
        let slot = hasher.slot().unwrap();
        assert!(matches!(hasher.hash("whatever"), Err(HashError::Busy)));
        drop(slot);
        let hash = hasher.hash("whatever").unwrap();
        assert!(hasher.verify("whatever", &hash).unwrap());
        // Past the waiters a thread allows, a request is busy at once, however long the
        // wait: it does not hold a blocking thread for nothing.
        let hasher = Hasher::new(1, Duration::from_secs(600)).unwrap();
        let _taken = hasher.slot().unwrap();
        lock(&hasher.slots).waiting = WAITERS_PER_THREAD;
        assert!(matches!(hasher.slot(), Err(HashError::Busy)));
    }
}
