//! The cache smtproxy actually uses: memory, then disk, then Redis.
//!
//! * `get` asks the tiers fastest first and copies a hit into every faster tier.
//! * `put` writes every tier (Redis asynchronously).
//! * A tier that fails to open or fails on any operation is reported ONCE on stderr
//!   (`smtproxy: warning: disk cache at PATH unavailable (cause); continuing without it`).
//!   The disk tier is then dropped for the rest of the run. Redis, a server that may
//!   stop and come back, is kept: while it is down it is not read (no waiting on it),
//!   writes are handed to its writer thread, which holds them and retries in the
//!   background, and reads resume once that thread has written to the server again.
//!   The memory tier cannot fail. A single undecodable entry is treated as a miss
//!   (warned once) rather than disabling a tier.
//! * The disk tier is opened on a thread of its own (`TieredCache::new` returns at once,
//!   or the open was begun before the engine was set up: `CacheConfig::open_ahead`, taken
//!   by the first cache built for that path) and taken at its first use: a session starts
//!   its solver while SQLite reads the file's schema and log (about 1 ms of a short
//!   session). Every method that touches the
//!   disk tier, or reports on the tiers, waits for that open first, so callers see the
//!   same tiers, warnings and answers as with an open made in place.
//! * Nothing here can make a lookup return an answer that was not stored by `put`.
//! * An entry's worth to the disk tier's bound is the time from the miss of its key to
//!   its `put` (what the solver, or the local decision, spent on it); an entry put
//!   without a miss of its own right after one that had (the exact key after the
//!   canonical key) is given that one's time. A Redis hit copied to disk was computed
//!   elsewhere: the disk tier values it at its own entries' mean cost, with one hit
//!   (`DiskStore::put_copied`).

use super::{CacheError, DiskStore, Entry, FleetSecret, Key, MemoryStore, RedisStore, Store};
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The memory tier's default bound in bytes (`Entry::approx_size`). It is a front for the
/// disk and Redis tiers, which keep what it drops (and, without them, the session's only
/// store of component results across term collections): at some 220 bytes an entry in a
/// symbolic executor's session, about 75k entries. Part of what keeps a session of hours
/// near the solver's own memory (`session::arena`).
pub const MEM_BYTES: usize = 16 << 20;

/// Misses remembered for costing the entries put after them.
const MISSES_KEPT: usize = 4096;

/// What tiers to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    pub mem_entries: usize,
    pub mem_bytes: usize,
    pub disk: Option<PathBuf>,
    pub redis: Option<String>,
    /// The disk tier's bound on its file's size in bytes (None: unbounded).
    pub disk_max_bytes: Option<u64>,
    /// The fleet secret: tags entries written to Redis, and unsat read from it is trusted
    /// only with a tag that verifies under it.
    pub secret: Option<FleetSecret>,
    /// Entries written to Redis expire after this many seconds.
    pub redis_ttl_secs: Option<u64>,
    /// The disk tier's open, begun ahead of the cache ([`CacheConfig::open_ahead`]).
    pub disk_opening: Option<DiskOpening>,
}

/// The disk tier's open under way on a thread of its own, taken by the first
/// [`TieredCache`] built for its path.
#[derive(Clone)]
pub struct DiskOpening {
    path: PathBuf,
    handle: Arc<Mutex<Option<Opening>>>,
}

type Opening = std::thread::JoinHandle<Result<DiskStore, CacheError>>;

impl DiskOpening {
    fn take(&self, path: &std::path::Path) -> Option<Opening> {
        if self.path != path {
            return None;
        }
        self.handle.lock().ok()?.take()
    }
}

impl std::fmt::Debug for DiskOpening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DiskOpening({})", self.path.display())
    }
}

impl PartialEq for DiskOpening {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.handle, &other.handle)
    }
}

impl Eq for DiskOpening {}

/// Opens the store at `path` bounded to `max` bytes, its writes behind (the engine does
/// not wait for SQLite's commits), on a thread of its own.
fn open_disk(path: PathBuf, max: Option<u64>) -> std::io::Result<Opening> {
    std::thread::Builder::new()
        .name("store-open".into())
        .spawn(move || {
            DiskStore::open(&path)
                .and_then(|d| d.with_max_bytes(max))
                .and_then(DiskStore::write_behind)
        })
}

impl CacheConfig {
    /// Begin opening the disk tier now, so that the cache built later (with the solver
    /// resolved, the engine set up meanwhile) waits less for it. A failure to start the
    /// thread leaves the open to the cache.
    pub fn open_ahead(&mut self) {
        let Some(path) = self.disk.clone() else {
            return;
        };
        if let Ok(h) = open_disk(path.clone(), self.disk_max_bytes) {
            self.disk_opening = Some(DiskOpening {
                path,
                handle: Arc::new(Mutex::new(Some(h))),
            });
        }
    }
}

impl Default for CacheConfig {
    /// 100k entries / [`MEM_BYTES`] in memory, the default disk path, no Redis.
    fn default() -> Self {
        CacheConfig {
            mem_entries: 100_000,
            mem_bytes: MEM_BYTES,
            disk: super::disk::default_path(),
            redis: None,
            disk_max_bytes: Some(super::disk::DEFAULT_MAX_MB << 20),
            secret: None,
            redis_ttl_secs: None,
            disk_opening: None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub mem_hits: u64,
    pub disk_hits: u64,
    pub redis_hits: u64,
    pub misses: u64,
    pub puts: u64,
    /// Tiers disabled after an error, plus undecodable entries skipped.
    pub errors: u64,
    /// Unsat entries read from Redis without a tag that verifies under the fleet secret
    /// (or with no secret here): not trusted, counted as misses.
    pub redis_untrusted_unsat: u64,
    /// Writes a full Redis refused.
    pub redis_rejected: u64,
    /// Entries the disk tier's bound deleted.
    pub disk_evicted: u64,
}

impl CacheStats {
    pub fn lookups(&self) -> u64 {
        self.mem_hits + self.disk_hits + self.redis_hits + self.misses
    }
}

pub struct TieredCache {
    mem: MemoryStore,
    disk: Option<DiskStore>,
    /// The disk tier's open, still running (see the module doc); `settle` takes it.
    opening: Option<std::thread::JoinHandle<Result<DiskStore, CacheError>>>,
    disk_label: String,
    redis: Option<RedisStore>,
    redis_label: String,
    /// Redis is down: `Some(writes acknowledged when it went down)`.
    redis_down: Option<u64>,
    warned_redis: bool,
    stats: CacheStats,
    warnings: Vec<String>,
    warned_bad_entry: bool,
    /// When each recently missed key was missed.
    missed: FxHashMap<Key, Instant>,
    /// The last costed put: when, and its cost.
    last_cost: Option<(Instant, Duration)>,
}

/// Hides a password in `redis://user:pass@host` before it is printed.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s + 3 => format!("{}***{}", &url[..s + 3], &url[at..]),
        _ => url.to_string(),
    }
}

impl TieredCache {
    /// Builds the tiers; a tier that cannot be opened is warned about and left out.
    pub fn new(cfg: &CacheConfig) -> TieredCache {
        let mut c = TieredCache {
            mem: MemoryStore::new(cfg.mem_entries, cfg.mem_bytes),
            disk: None,
            opening: None,
            disk_label: String::new(),
            redis: None,
            redis_label: String::new(),
            redis_down: None,
            warned_redis: false,
            stats: CacheStats::default(),
            warnings: Vec::new(),
            warned_bad_entry: false,
            missed: FxHashMap::default(),
            last_cost: None,
        };
        if let Some(p) = &cfg.disk {
            c.disk_label = format!("disk cache at {}", p.display());
            let ahead = cfg.disk_opening.as_ref().and_then(|o| o.take(p));
            match ahead.map_or_else(|| open_disk(p.clone(), cfg.disk_max_bytes), Ok) {
                Ok(h) => c.opening = Some(h),
                Err(e) => c.warn_disabled(Tier::Disk, &CacheError::Io(e)),
            }
        }
        if let Some(u) = &cfg.redis {
            c.redis_label = format!("redis cache at {}", redact(u));
            match RedisStore::connect(u) {
                Ok(r) => {
                    c.redis = Some(
                        r.with_secret(cfg.secret.clone())
                            .with_ttl(cfg.redis_ttl_secs),
                    )
                }
                Err(e) => c.warn_disabled(Tier::Redis, &e),
            }
        }
        c
    }

    /// A cache over stores the caller opened itself (e.g. with non-default timeouts).
    pub fn from_parts(
        mem: MemoryStore,
        disk: Option<DiskStore>,
        redis: Option<RedisStore>,
    ) -> TieredCache {
        TieredCache {
            disk_label: disk
                .as_ref()
                .map(|d| format!("disk cache at {}", d.path().display()))
                .unwrap_or_default(),
            redis_label: redis
                .as_ref()
                .map(|r| format!("redis cache at {}", redact(r.url())))
                .unwrap_or_default(),
            mem,
            disk,
            opening: None,
            redis,
            redis_down: None,
            warned_redis: false,
            stats: CacheStats::default(),
            warnings: Vec::new(),
            warned_bad_entry: false,
            missed: FxHashMap::default(),
            last_cost: None,
        }
    }

    /// What computing the entry under `k` cost: since its miss, else the cost of a put
    /// made just before (a second key for the same result), else nothing known.
    fn cost_of(&mut self, k: &Key) -> Duration {
        let now = Instant::now();
        match self.missed.remove(k) {
            Some(t) => {
                let d = now.saturating_duration_since(t);
                self.last_cost = Some((now, d));
                d
            }
            None => match self.last_cost {
                Some((at, d)) if now.saturating_duration_since(at) < Duration::from_millis(5) => d,
                _ => Duration::ZERO,
            },
        }
    }

    /// Takes the disk tier's background open, waiting for it if it is still running.
    fn settle(&mut self) {
        let Some(h) = self.opening.take() else { return };
        let opened = h.join().unwrap_or_else(|_| {
            Err(CacheError::Io(std::io::Error::other(
                "the store's open panicked",
            )))
        });
        match opened {
            Ok(d) => {
                self.stats.disk_evicted = d.evicted();
                self.disk = Some(d);
            }
            Err(e) => self.warn_disabled(Tier::Disk, &e),
        }
    }

    fn note_miss(&mut self, k: &Key) {
        if self.missed.len() >= MISSES_KEPT {
            self.missed.clear();
        }
        self.missed.insert(*k, Instant::now());
    }

    /// Copies the stores' own counters into the stats.
    fn sync_counters(&mut self) {
        if let Some(r) = &self.redis {
            self.stats.redis_untrusted_unsat = r.untrusted_unsat();
            self.stats.redis_rejected = r.rejected_writes();
        }
        if let Some(d) = &self.disk {
            self.stats.disk_evicted = d.evicted();
        }
    }

    fn warn(&mut self, msg: String) {
        eprintln!("smtproxy: warning: {msg}");
        self.warnings.push(msg);
    }

    fn warn_disabled(&mut self, tier: Tier, e: &CacheError) {
        self.stats.errors += 1;
        let label = match tier {
            Tier::Disk => {
                if let Some(mut d) = self.disk.take() {
                    d.discard_pending();
                }
                self.disk_label.clone()
            }
            Tier::Redis => {
                self.redis = None;
                self.warned_redis = true;
                self.redis_label.clone()
            }
        };
        self.warn(format!("{label} unavailable ({e}); continuing without it"));
    }

    /// Redis failed: stop reading it until its writer reaches the server again; warn
    /// the first time only.
    fn redis_outage(&mut self, e: &CacheError) {
        if self.redis_down.is_none() {
            self.stats.errors += 1;
            self.redis_down = Some(self.redis.as_ref().map_or(0, |r| r.written()));
        }
        if !self.warned_redis {
            self.warned_redis = true;
            let label = self.redis_label.clone();
            self.warn(format!("{label} unavailable ({e}); continuing without it"));
        }
    }

    /// Redis may be read: it is up, or its writer has written to it since it went down.
    fn redis_readable(&mut self) -> bool {
        match (self.redis_down, self.redis.as_ref()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(w), Some(r)) => {
                if r.written() > w {
                    self.redis_down = None;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// Handles a tier error; returns normally either way.
    fn tier_error(&mut self, tier: Tier, e: CacheError) {
        if e.is_entry_error() {
            self.stats.errors += 1;
            if !self.warned_bad_entry {
                self.warned_bad_entry = true;
                let label = match tier {
                    Tier::Disk => self.disk_label.clone(),
                    Tier::Redis => self.redis_label.clone(),
                };
                self.warn(format!("{label}: ignoring unreadable entry ({e})"));
            }
        } else if matches!(tier, Tier::Redis) {
            self.redis_outage(&e);
        } else {
            self.warn_disabled(tier, &e);
        }
    }

    /// `get` from the memory tier alone (a miss is not counted: `get` follows).
    pub fn get_memory(&mut self, k: &Key) -> Option<Entry> {
        let e = self.mem.get_entry(k)?;
        self.stats.mem_hits += 1;
        Some(e)
    }

    pub fn get(&mut self, k: &Key) -> Option<Entry> {
        if let Some(e) = self.mem.get_entry(k) {
            self.stats.mem_hits += 1;
            return Some(e);
        }
        self.settle();
        if let Some(d) = self.disk.as_mut() {
            match d.get(k) {
                Ok(Some(e)) => {
                    self.stats.disk_hits += 1;
                    self.mem.put_entry(k, &e);
                    return Some(e);
                }
                Ok(None) => {}
                Err(err) => self.tier_error(Tier::Disk, err),
            }
        }
        if !self.redis_readable() {
            self.stats.misses += 1;
            self.note_miss(k);
            return None;
        }
        if let Some(r) = self.redis.as_mut() {
            match r.get(k) {
                Ok(Some(e)) => {
                    self.stats.redis_hits += 1;
                    self.mem.put_entry(k, &e);
                    if let Some(d) = self.disk.as_mut() {
                        if let Err(err) = d.put_copied(k, &e) {
                            self.tier_error(Tier::Disk, err);
                        }
                    }
                    return Some(e);
                }
                Ok(None) => {}
                Err(err) => self.tier_error(Tier::Redis, err),
            }
            self.sync_counters();
        }
        self.stats.misses += 1;
        self.note_miss(k);
        None
    }

    pub fn put(&mut self, k: &Key, e: &Entry) {
        self.put_as(k, e, false)
    }

    /// `put` of a second key (the exact key) for a result just put under its canonical
    /// key: the disk tier values it by the hits such twins get there (see
    /// `disk::WORTH_SQL`), so whichever key a workload's repeats come under is kept.
    pub fn put_twin(&mut self, k: &Key, e: &Entry) {
        self.put_as(k, e, true)
    }

    /// `put` into the memory tier alone: an entry that pays within this run only.
    pub fn put_memory(&mut self, k: &Key, e: &Entry) {
        self.stats.puts += 1;
        self.mem.put_entry(k, e);
    }

    fn put_as(&mut self, k: &Key, e: &Entry, twin: bool) {
        self.stats.puts += 1;
        self.mem.put_entry(k, e);
        let ms = self.cost_of(k).as_millis().min(u64::MAX as u128) as u64;
        self.settle();
        if let Some(d) = self.disk.as_mut() {
            if let Err(err) = d.put_worth(k, e, ms, twin) {
                self.tier_error(Tier::Disk, err);
            }
        }
        if let Some(r) = self.redis.as_mut() {
            if let Err(err) = r.put(k, e) {
                self.tier_error(Tier::Redis, err);
            }
        }
    }

    /// Writes buffered disk entries and waits (bounded) for queued Redis writes.
    pub fn flush(&mut self) {
        self.settle();
        if let Some(d) = self.disk.as_mut() {
            if let Err(err) = d.flush() {
                self.tier_error(Tier::Disk, err);
            }
        }
        if let Some(r) = self.redis.as_mut() {
            if let Err(err) = r.flush() {
                self.tier_error(Tier::Redis, err);
            }
        }
        self.sync_counters();
    }

    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Names of the tiers still in use, fastest first.
    pub fn active_tiers(&mut self) -> Vec<&'static str> {
        self.settle();
        let mut v = vec!["memory"];
        if self.disk.is_some() {
            v.push("disk");
        }
        if self.redis.is_some() && self.redis_down.is_none() {
            v.push("redis");
        }
        v
    }

    /// Every warning printed so far (without the `smtproxy: warning: ` prefix).
    pub fn warnings(&mut self) -> &[String] {
        self.settle();
        &self.warnings
    }

    pub fn memory(&self) -> &MemoryStore {
        &self.mem
    }
}

#[derive(Clone, Copy)]
enum Tier {
    Disk,
    Redis,
}

impl Drop for TieredCache {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_password() {
        assert_eq!(redact("redis://u:secret@h:1/0"), "redis://***@h:1/0");
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }

    #[test]
    fn tiered_memory_only() {
        let cfg = CacheConfig {
            mem_entries: 10,
            mem_bytes: 1 << 20,
            disk: None,
            redis: None,
            ..CacheConfig::default()
        };
        let mut c = TieredCache::new(&cfg);
        let k = Key([7; 16]);
        assert_eq!(c.get(&k), None);
        c.put(&k, &Entry::unsat());
        assert_eq!(c.get(&k), Some(Entry::unsat()));
        assert_eq!(c.stats().mem_hits, 1);
        assert_eq!(c.stats().misses, 1);
        assert_eq!(c.stats().puts, 1);
        assert_eq!(c.active_tiers(), vec!["memory"]);
    }

    #[test]
    fn tiered_promotes_disk_hits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite3");
        let k = Key([3; 16]);
        let e = Entry::sat(Some("((x0 #x01))".into()));
        let cfg = CacheConfig {
            mem_entries: 10,
            mem_bytes: 1 << 20,
            disk: Some(p.clone()),
            redis: None,
            ..CacheConfig::default()
        };
        {
            let mut c = TieredCache::new(&cfg);
            c.put(&k, &e);
        }
        let mut c = TieredCache::new(&cfg);
        assert_eq!(c.active_tiers(), vec!["memory", "disk"]);
        assert_eq!(c.get(&k), Some(e.clone()));
        assert_eq!(c.get(&k), Some(e));
        assert_eq!(c.stats().disk_hits, 1);
        assert_eq!(c.stats().mem_hits, 1);
        assert!(c.warnings().is_empty());
    }

    /// A cache built after `open_ahead` takes that open; the next cache of the same
    /// config opens its own, and a config for another path ignores it.
    #[test]
    fn an_open_begun_ahead_is_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite3");
        let k = Key([5; 16]);
        let mut cfg = CacheConfig {
            mem_entries: 10,
            mem_bytes: 1 << 20,
            disk: Some(p.clone()),
            ..CacheConfig::default()
        };
        cfg.open_ahead();
        let opening = cfg.disk_opening.clone().expect("an open under way");
        {
            let mut c = TieredCache::new(&cfg);
            assert!(opening.handle.lock().unwrap().is_none(), "taken");
            assert_eq!(c.active_tiers(), vec!["memory", "disk"]);
            c.put(&k, &Entry::unsat());
        }
        let mut c = TieredCache::new(&cfg);
        assert_eq!(c.active_tiers(), vec!["memory", "disk"]);
        assert_eq!(c.get(&k), Some(Entry::unsat()));
        assert_eq!(c.stats().disk_hits, 1);
        let other = dir.path().join("d.sqlite3");
        cfg.open_ahead();
        let ahead = cfg.disk_opening.clone().unwrap();
        assert!(ahead.take(&other).is_none());
        let store = ahead.take(&p).expect("still there").join().unwrap();
        assert!(store.is_ok());
    }
}
