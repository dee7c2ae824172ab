//! The shared network tier: a Redis server used by many machines.
//!
//! * Keys are `smtproxy:v2:<32 hex digits>` (the `v2` is [`FORMAT_VERSION`], so builds
//!   with another entry format never read each other's values); values are
//!   [`Entry::encode`] byte strings, followed, when this process holds the fleet secret,
//!   by its tag ([`super::secret`]), written with `SET NX` (first writer wins).
//! * Trust: what is read is checked like a disk entry (checksum, version) and a sat is
//!   evaluated against its model by the caller before it is served. An unsat is served
//!   only with a tag that verifies under this process's fleet secret; any other unsat
//!   (no secret here, no tag, a tag of another secret or of other bytes) is a miss,
//!   counted in [`RedisStore::untrusted_unsat`]: a stray writer can make smtproxy slower,
//!   never wrong.
//! * A full server (`maxmemory` with `noeviction`: `OOM` answers) refuses writes; they
//!   are dropped and counted in [`RedisStore::rejected_writes`], the connection is kept
//!   and reads go on. An evicting server (`allkeys-lru`/`allkeys-lfu`) or entries
//!   expired by [`RedisStore::with_ttl`] (`SET NX EX`) are just misses.
//! * Reads are synchronous on the caller's connection with [`IO_TIMEOUT`] for connect,
//!   read and write (connection set-up is bounded by twice that), so a slow, hung or
//!   dead server costs at most about that much per call.
//! * Writes are write-through without blocking the caller: `put` hands the entry to a
//!   background thread over a bounded channel of [`QUEUE_LEN`] and returns; when the
//!   channel is full the write is dropped (counted in [`RedisStore::dropped_writes`]).
//!   The thread pipelines whatever is queued.
//! * After any failure a connection is not retried for [`RETRY_INTERVAL`]; calls in
//!   between fail immediately with [`CacheError::Unavailable`]. `put` reports an error
//!   while the writer thread's last attempt failed.
//! * Writes that fail are kept by the writer thread (at most [`QUEUE_LEN`], oldest
//!   dropped first) and retried when the back-off ends, so a server that stops and comes
//!   back mid-run receives what was computed meanwhile; [`RedisStore::written`] moving on
//!   tells the caller that the server is reachable again.
//! * `flush` waits (bounded) until everything queued before it has been handed to the
//!   server, and fails if any write was dropped since the previous flush; writes held
//!   for an unreachable server are dropped by it at once (no waiting for a server that
//!   is down). Drop does the same with a one-second bound and then detaches the thread.

use super::{CacheError, Entry, FleetSecret, Key, Store, Verdict, FORMAT_VERSION};
use ::redis::{Client, Connection, RedisResult};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const IO_TIMEOUT: Duration = Duration::from_millis(200);
pub const RETRY_INTERVAL: Duration = Duration::from_secs(1);
pub const QUEUE_LEN: usize = 4096;
const PIPELINE_MAX: usize = 256;

/// The Redis key under which `k` is stored.
pub fn redis_key(k: &Key) -> String {
    format!("smtproxy:v{FORMAT_VERSION}:{}", k.to_hex())
}

/// One connection with failure back-off.
struct Link {
    client: Client,
    conn: Option<Connection>,
    retry_at: Option<Instant>,
}

impl Link {
    fn new(client: Client) -> Link {
        Link {
            client,
            conn: None,
            retry_at: None,
        }
    }

    fn connection(&mut self) -> Result<&mut Connection, CacheError> {
        if self.conn.is_none() {
            if let Some(t) = self.retry_at {
                if Instant::now() < t {
                    return Err(CacheError::Unavailable(
                        "server unreachable, backing off".into(),
                    ));
                }
            }
            // The redis crate bounds the TCP connect by the timeout but then runs its
            // connection set-up commands with no read timeout, so a server that accepts
            // and never answers would block forever. Connect on a helper thread and stop
            // waiting after the timeout; a thread stuck that way is abandoned (at most one
            // per RETRY_INTERVAL, and the tiered cache gives up on the tier at once).
            let client = self.client.clone();
            let (tx, rx) = mpsc::sync_channel(1);
            let spawned = std::thread::Builder::new()
                .name("smtproxy-redis-connect".into())
                .spawn(move || {
                    let c = client
                        .get_connection_with_timeout(IO_TIMEOUT)
                        .and_then(|c| {
                            c.set_read_timeout(Some(IO_TIMEOUT))?;
                            c.set_write_timeout(Some(IO_TIMEOUT))?;
                            Ok(c)
                        });
                    let _ = tx.send(c);
                });
            let result = match spawned {
                Err(e) => Err(CacheError::Io(e)),
                Ok(_) => match rx.recv_timeout(2 * IO_TIMEOUT) {
                    Ok(Ok(c)) => Ok(c),
                    Ok(Err(e)) => Err(e.into()),
                    Err(_) => Err(CacheError::Unavailable(
                        "connection set-up timed out".into(),
                    )),
                },
            };
            match result {
                Ok(c) => {
                    self.conn = Some(c);
                    self.retry_at = None;
                }
                Err(e) => {
                    self.retry_at = Some(Instant::now() + RETRY_INTERVAL);
                    return Err(e);
                }
            }
        }
        Ok(self.conn.as_mut().expect("connected above"))
    }

    /// In the back-off after a failure: the next attempt is not before the returned time.
    fn backing_off(&self) -> Option<Instant> {
        match (self.conn.as_ref(), self.retry_at) {
            (None, Some(t)) if t > Instant::now() => Some(t),
            _ => None,
        }
    }

    fn run<T>(
        &mut self,
        f: impl FnOnce(&mut Connection) -> RedisResult<T>,
    ) -> Result<T, CacheError> {
        let c = self.connection()?;
        match f(c) {
            Ok(v) => Ok(v),
            // The server answered, refusing (a full server): every reply was read, so the
            // connection is in step and stays.
            Err(e) if is_full(&e) => Err(e.into()),
            Err(e) => {
                // The connection may be half-read or dead: never reuse it.
                self.conn = None;
                self.retry_at = Some(Instant::now() + RETRY_INTERVAL);
                Err(e.into())
            }
        }
    }
}

/// The server refused a write for lack of memory (`maxmemory` reached, `noeviction`).
fn is_full(e: &::redis::RedisError) -> bool {
    e.code() == Some("OOM")
}

/// A [`CacheError`] that is a full server's refusal.
fn is_full_error(e: &CacheError) -> bool {
    matches!(e, CacheError::Redis(r) if is_full(r))
}

enum Msg {
    Set(String, Vec<u8>, Option<u64>),
    Flush(SyncSender<()>),
}

#[derive(Default)]
struct Shared {
    down: AtomicBool,
    dropped: AtomicU64,
    written: AtomicU64,
    rejected: AtomicU64,
}

pub struct RedisStore {
    url: String,
    link: Link,
    tx: Option<SyncSender<Msg>>,
    shared: Arc<Shared>,
    /// `dropped_writes()` as of the last flush, to report losses once.
    dropped_reported: u64,
    secret: Option<FleetSecret>,
    ttl_secs: Option<u64>,
    untrusted_unsat: u64,
}

impl RedisStore {
    /// Connects (failing within about [`IO_TIMEOUT`] if the server is unreachable) and
    /// starts the writer thread.
    pub fn connect(url: &str) -> Result<RedisStore, CacheError> {
        let client = Client::open(url)?;
        let mut link = Link::new(client.clone());
        link.run(|c| ::redis::cmd("PING").query::<String>(c))?;
        let (tx, rx) = mpsc::sync_channel(QUEUE_LEN);
        let shared = Arc::new(Shared::default());
        let sh = shared.clone();
        std::thread::Builder::new()
            .name("smtproxy-redis-writer".into())
            .spawn(move || writer(Link::new(client), rx, sh))?;
        Ok(RedisStore {
            url: url.to_string(),
            link,
            tx: Some(tx),
            shared,
            dropped_reported: 0,
            secret: None,
            ttl_secs: None,
            untrusted_unsat: 0,
        })
    }

    /// Tags what is written, and trusts unsat entries tagged, under `secret`.
    pub fn with_secret(mut self, secret: Option<FleetSecret>) -> RedisStore {
        self.secret = secret;
        self
    }

    /// Entries written from now on expire after `secs` seconds (`SET NX EX`).
    pub fn with_ttl(mut self, secs: Option<u64>) -> RedisStore {
        self.ttl_secs = secs.filter(|&s| s > 0);
        self
    }

    /// Unsat entries read but not trusted (no secret, or no valid tag): served as misses.
    pub fn untrusted_unsat(&self) -> u64 {
        self.untrusted_unsat
    }

    /// Writes the server refused (full: `OOM`).
    pub fn rejected_writes(&self) -> u64 {
        self.shared.rejected.load(Ordering::Relaxed)
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Writes dropped because the queue was full or the server was unreachable (a full
    /// server's refusals are [`RedisStore::rejected_writes`]).
    pub fn dropped_writes(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Writes acknowledged by the server.
    pub fn written(&self) -> u64 {
        self.shared.written.load(Ordering::Relaxed)
    }

    fn flush_within(&mut self, limit: Duration) -> Result<(), CacheError> {
        let deadline = Instant::now() + limit;
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| CacheError::Unavailable("writer stopped".into()))?;
        let (rtx, rrx) = mpsc::sync_channel(1);
        let mut msg = Msg::Flush(rtx);
        loop {
            match tx.try_send(msg) {
                Ok(()) => break,
                Err(TrySendError::Full(m)) => {
                    if Instant::now() >= deadline {
                        return Err(CacheError::Unavailable(
                            "flush timed out (queue full)".into(),
                        ));
                    }
                    msg = m;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(TrySendError::Disconnected(_)) => {
                    return Err(CacheError::Unavailable("writer thread stopped".into()))
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        rrx.recv_timeout(left)
            .map_err(|_| CacheError::Unavailable("flush timed out".into()))?;
        let dropped = self.dropped_writes();
        let lost = dropped - self.dropped_reported;
        self.dropped_reported = dropped;
        if lost > 0 {
            return Err(CacheError::Unavailable(format!("{lost} writes dropped")));
        }
        Ok(())
    }
}

/// Hands `batch` to the server in pipelines of [`PIPELINE_MAX`]; what could not be
/// written stays in `batch` (bounded by [`QUEUE_LEN`], oldest dropped first). True when
/// everything was written.
fn send_batch(link: &mut Link, batch: &mut Vec<Pending>, shared: &Shared) -> bool {
    while !batch.is_empty() {
        let n = batch.len().min(PIPELINE_MAX);
        let mut pipe = ::redis::pipe();
        for (k, v, ttl) in &batch[..n] {
            let set = pipe.cmd("SET").arg(k).arg(&v[..]).arg("NX");
            if let Some(t) = ttl {
                set.arg("EX").arg(*t);
            }
            set.ignore();
        }
        match link.run(|c| pipe.query::<()>(c)) {
            Ok(()) => {
                shared.down.store(false, Ordering::Relaxed);
                shared.written.fetch_add(n as u64, Ordering::Relaxed);
                batch.drain(..n);
            }
            Err(e) if is_full_error(&e) => {
                // Up but full: some of these may have been taken, the rest are refused.
                // Counted as written too, so a reader that waits for the server to come
                // back sees it back.
                shared.down.store(false, Ordering::Relaxed);
                shared.written.fetch_add(1, Ordering::Relaxed);
                shared.rejected.fetch_add(n as u64, Ordering::Relaxed);
                batch.drain(..n);
            }
            Err(_) => {
                shared.down.store(true, Ordering::Relaxed);
                bound_backlog(batch, shared);
                return false;
            }
        }
    }
    true
}

/// Keeps at most [`QUEUE_LEN`] held writes, dropping (and counting) the oldest.
/// A write held by the writer thread: Redis key, value, expiry in seconds.
type Pending = (String, Vec<u8>, Option<u64>);

fn bound_backlog(batch: &mut Vec<Pending>, shared: &Shared) {
    let excess = batch.len().saturating_sub(QUEUE_LEN);
    if excess > 0 {
        batch.drain(..excess);
        shared.dropped.fetch_add(excess as u64, Ordering::Relaxed);
    }
}

fn writer(mut link: Link, rx: Receiver<Msg>, shared: Arc<Shared>) {
    let mut batch: Vec<Pending> = Vec::new();
    loop {
        // Idle: wait for work. Holding writes for an unreachable server: wake up when
        // the back-off ends to try them again.
        let first = if batch.is_empty() {
            match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => break,
            }
        } else {
            let wait = link.backing_off().map_or(Duration::ZERO, |t| {
                t.saturating_duration_since(Instant::now())
            });
            match rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    if link.backing_off().is_none() {
                        send_batch(&mut link, &mut batch, &shared);
                    }
                    break;
                }
            }
        };
        let mut next = first;
        while let Some(msg) = next.take() {
            match msg {
                Msg::Set(k, v, ttl) => {
                    batch.push((k, v, ttl));
                    if batch.len() >= PIPELINE_MAX && link.backing_off().is_none() {
                        send_batch(&mut link, &mut batch, &shared);
                    }
                    bound_backlog(&mut batch, &shared);
                }
                Msg::Flush(reply) => {
                    let done =
                        link.backing_off().is_none() && send_batch(&mut link, &mut batch, &shared);
                    if !done {
                        // The server is unreachable now: give up what is held rather than
                        // keep the caller (usually the exit) waiting for it.
                        shared
                            .dropped
                            .fetch_add(batch.len() as u64, Ordering::Relaxed);
                        batch.clear();
                    }
                    let _ = reply.try_send(());
                }
            }
            next = rx.try_recv().ok();
        }
        if link.backing_off().is_none() {
            send_batch(&mut link, &mut batch, &shared);
        }
    }
}

impl Store for RedisStore {
    fn get(&mut self, k: &Key) -> Result<Option<Entry>, CacheError> {
        let key = redis_key(k);
        let v: Option<Vec<u8>> = self.link.run(|c| ::redis::cmd("GET").arg(&key).query(c))?;
        let Some(v) = v else { return Ok(None) };
        let (bytes, tag) = Entry::split_encoded(&v).unwrap_or((&v[..], &[]));
        let e = Entry::decode(k, bytes)?;
        if !tag.is_empty()
            && (tag.len() != 1 + super::secret::TAG_LEN || tag[0] != super::secret::TAG_MAGIC)
        {
            return Err(CacheError::BadEntry(
                "trailing bytes that are not a tag".into(),
            ));
        }
        if e.verdict == Verdict::Unsat {
            let trusted = self
                .secret
                .as_ref()
                .is_some_and(|s| s.verify(&k.0, bytes, tag));
            if !trusted {
                self.untrusted_unsat += 1;
                return Ok(None);
            }
        }
        Ok(Some(e))
    }

    fn put(&mut self, k: &Key, e: &Entry) -> Result<(), CacheError> {
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| CacheError::Unavailable("writer stopped".into()))?;
        let mut v = e.encode(k);
        if let Some(s) = &self.secret {
            let tag = s.tag(&k.0, &v);
            v.extend_from_slice(&tag);
        }
        match tx.try_send(Msg::Set(redis_key(k), v, self.ttl_secs)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Disconnected(_)) => {
                return Err(CacheError::Unavailable("writer thread stopped".into()))
            }
        }
        if self.shared.down.load(Ordering::Relaxed) {
            return Err(CacheError::Unavailable(
                "writes to the server are failing".into(),
            ));
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        "redis"
    }

    fn flush(&mut self) -> Result<(), CacheError> {
        self.flush_within(Duration::from_secs(2))
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        if !self.shared.down.load(Ordering::Relaxed) {
            let _ = self.flush_within(Duration::from_secs(1));
        }
        // Dropping the sender ends the writer thread once the queue is drained; it is
        // detached rather than joined so a dead server can never hold up exit.
        self.tx = None;
    }
}
