//! The on-disk tier: one SQLite file shared by all smtproxy processes of a user on one
//! machine.
//!
//! * Schema [`SCHEMA_VERSION`] (2): `results(key BLOB PRIMARY KEY, value BLOB NOT NULL,
//!   solve_ms, hits, last_used, created, twin) WITHOUT ROWID`, where `value` is an
//!   [`Entry::encode`] byte string and the other columns are the entry's worth (the
//!   solver time a hit saves, hits read from this file, unix seconds of the last use and
//!   of the write, 1 for an exact key written beside its canonical twin), and `meta(name
//!   TEXT PRIMARY KEY, value INTEGER)` (`WITHOUT ROWID` in files made since: no index
//!   page of its own, one fixed page fewer; older files' `meta` is read alike) holding
//!   `format_version` (the entries' bytes) and `schema_version` (the tables; absent
//!   means 1, the schema without the worth columns). A new file is made with
//!   [`NEW_PAGE_SIZE`] pages and format [`COMPACT_FORMAT_VERSION`] (models packed, see
//!   [`super::compact`]); a file of format [`FORMAT_VERSION`] keeps it, and its page
//!   size: `put` writes each file's own format ([`DiskStore::format`]), so builds that
//!   read only format 2 still share the files they made (and refuse, at open, a format-3
//!   file). At open a schema-1 file gets the columns added (its entries kept, served,
//!   and valued as just written); a file of entry format 1 (no checksums) is emptied and
//!   upgraded to 2; any other format or a newer schema is refused at open, never
//!   misread. Builds that know only schema 1 still read and write a schema-2 file (the
//!   new columns have defaults).
//! * Bound: with a byte bound ([`DiskStore::with_max_bytes`], the whole store's, shared
//!   between the file, its log and the trie by [`Budget::split`]), after each write batch
//!   whose commit leaves the file (pages × page size) above its share, the entries of
//!   lowest worth per byte ([`WORTH_SQL`]: the time a hit saves × the hits to expect,
//!   divided by days since last use; [`EVICT_ORDER_SQL`]) are deleted in one batch
//!   ([`EVICT_SHARE`] of the entries, or as many as the file is over), newest first
//!   among equals (a newcomer does not displace an entry of the same worth that is
//!   still waiting for its next use: a replay longer than the store keeps a stable part
//!   of itself instead of cycling through all of it), free pages handed back to the file system
//!   (`auto_vacuum=INCREMENTAL`), and, where the file is still more than 5% over (space
//!   freed inside pages, or a file without auto-vacuum), rebuilt by `VACUUM`; the
//!   write-ahead log is then truncated and kept to its share. Space freed
//!   inside pages is reused by the next writes before the file grows.
//!   Hits are counted in memory and written with the next batch. An entry copied in from
//!   another tier (a Redis hit, [`DiskStore::put_copied`]) was computed elsewhere, at a
//!   cost this file never saw: it is written with the mean cost of the file's own-key
//!   entries ([`MEAN_COST_SQL`], refreshed every [`MEAN_COST_REFRESH`]) and the one hit
//!   that brought it, so it is neither evicted first for a cost of 0 nor kept above the
//!   file's own results.
//! * The log at close: while the write-ahead log is at most [`KEPT_LOG_BYTES`] (and
//!   within its share of the bound), the last connection to close leaves it in place
//!   (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`) instead of checkpointing it into the file and
//!   deleting it: that checkpoint costs two fsyncs, and the next process would create a
//!   new log, syncing its header and the directory at its first commit; together about
//!   2.5 ms of a short session. The store is then the file and its `-wal` together
//!   (SQLite reads both; `smtproxy cache export` makes a copy); a larger log is
//!   checkpointed and removed at close as before.
//! * Concurrency: WAL journal (readers never wait for writers), `synchronous=NORMAL`,
//!   a busy timeout (default [`DEFAULT_BUSY_TIMEOUT`]) for writers, and every write batch
//!   is one `BEGIN IMMEDIATE` transaction of `INSERT OR IGNORE` (first writer wins;
//!   entries are facts, so equal keys carry equal verdicts).
//! * Buffering: `put` buffers encoded entries; they are written when
//!   [`DEFAULT_BATCH`] are pending, when the oldest pending entry is older than
//!   [`FLUSH_INTERVAL`], on [`Store::flush`], and on drop, so nothing is lost at a
//!   normal exit (a crash can lose at most the unflushed batch). `get` sees buffered
//!   entries too, until they are committed. A write is at most [`DEFAULT_BATCH`]
//!   entries per transaction, the bound kept after each. On SIGINT/SIGTERM the signal
//!   thread writes the buffer through a connection of its own
//!   ([`crate::signals::ExitFlush`]), so an interrupted run keeps every result it
//!   computed; the buffer is shared under a mutex that is only ever held for in-memory
//!   work, so that flush never waits on the engine thread's SQLite calls.
//! * Writes behind ([`DiskStore::write_behind`], the engine's store): the writes run on
//!   a thread of their own ([`super::behind`]) with a connection of their own, so the
//!   engine does not wait for commits, checkpoints and evictions; a failed write reaches
//!   the next `put` or `flush`, and past [`BEHIND_MAX`] buffered entries a `put` waits
//!   for the writer. Everything else here holds alike.
//! * Contention: a write that finds the file locked past the busy timeout keeps its
//!   entries buffered (still served by `get`) and is tried again later, after
//!   [`FLUSH_INTERVAL`] and then twice that; only the [`BUSY_ATTEMPTS`]th such failure in
//!   a row is an error. Many processes sharing one store on a loaded machine can each
//!   miss the lock for a second now and then, and must not give the store up for it.
//! * Failure: a file that is not SQLite, a truncated file (size disagreeing with the
//!   header), a read-only file or directory, a lock held through [`BUSY_ATTEMPTS`]
//!   writes, a full disk: all are [`CacheError`]s, never panics.

use super::behind::Behind;
use super::budget::Budget;
use super::{
    CacheError, Entry, Key, Store, COMPACT_FORMAT_VERSION, FORMAT_VERSION, SCHEMA_VERSION,
};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The page size of a store file made by this build (a file keeps the page size it was
/// made with). SQLite's fixed pages (the header and schema, the auto-vacuum pointer map,
/// each table's root) are four pages of any store, however small: at 1 KiB they take
/// 4 KiB of a bounded file rather than 16 KiB. Entries in format 3 (a model of a few
/// hundred bytes of text packs to well under 200) fit a 1 KiB page's cell without an
/// overflow page.
pub const NEW_PAGE_SIZE: u32 = 1024;
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_millis(1000);
pub const DEFAULT_BATCH: usize = 64;
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(500);
/// Write attempts in a row that may find the file locked before the tier is given up.
pub const BUSY_ATTEMPTS: u32 = 3;
/// Buffered entries past which a `put` waits for the writer thread (a disk slower than
/// the engine's puts): 2-6 MiB of entries (100 bytes each for a packed KLEE model and
/// its map slot, about 350 for a large one).
pub const BEHIND_MAX: usize = 16_384;
/// The default bound on the file's size (`--cache-max-mb`).
pub const DEFAULT_MAX_MB: u64 = 1024;
/// The largest write-ahead log a close leaves in place (see the module doc).
pub const KEPT_LOG_BYTES: u64 = 1 << 20;
/// An eviction deletes this share of the entries (or as many as the file is over its
/// bound), the least worth per byte first; the space freed inside pages is filled by the
/// next writes before the file grows again. Small, so that what is deleted is only what
/// the bound needs (a coarse step deletes entries worth more than some that stay out).
pub const EVICT_SHARE: f64 = 0.02;
/// An entry's worth, higher kept longer: the milliseconds a hit saves (at least 1), times
/// the hits to expect of it: those it had, plus the mean hits of the entries of its kind
/// in the store (`?2` for entries put under their own key, `?3` for twins, exact keys
/// written beside their canonical one; see [`kind_priors`]), divided by one more than the
/// days since it was last used. The prior gives a new entry the chance its kind has shown
/// in this store, whatever the workload: where repeats come under the client's names the
/// exact keys take the hits (they are asked first), where they come renamed the canonical
/// ones do.
pub const WORTH_SQL: &str = "((solve_ms + 1.0) * (hits + (CASE twin WHEN 0 THEN ?2 ELSE ?3 END))
      / (1.0 + max(0, ?1 - last_used) / 86400.0))";
/// The order of eviction: least worth per byte the entry takes (its key, value and about
/// 40 bytes of cell and index overhead), then the newest first.
pub const EVICT_ORDER_SQL: &str = "((solve_ms + 1.0) * (hits + (CASE twin WHEN 0 THEN ?2 ELSE ?3 END))
      / (1.0 + max(0, ?1 - last_used) / 86400.0) / (length(value) + 56.0)) ASC, created DESC, last_used DESC";

/// The mean cost of the entries put under their own key: what a copied entry is valued at.
pub const MEAN_COST_SQL: &str = "SELECT coalesce(avg(solve_ms), 0.0) FROM results WHERE twin = 0";
/// How long the mean cost is used before it is read again (a scan of the file).
pub const MEAN_COST_REFRESH: Duration = Duration::from_secs(60);

/// The mean hits of the store's entries of each kind, (put under their own key, twins),
/// each counted as (hits + 1) / (entries + 1) so that a kind with no entries yet is given
/// one hit: the prior of [`WORTH_SQL`].
pub fn kind_priors(conn: &Connection) -> Result<(f64, f64), CacheError> {
    let mut prior = [1.0f64; 2];
    let mut stmt = conn.prepare_cached(
        "SELECT twin != 0, (sum(hits) + 1.0) / (count(*) + 1.0) FROM results GROUP BY twin != 0",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, bool>(0)?, r.get::<_, f64>(1)?)))?;
    for row in rows {
        let (twin, p) = row?;
        prior[usize::from(twin)] = p;
    }
    Ok((prior[0], prior[1]))
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

pub struct DiskStore {
    /// Reads, and writes unless they are behind.
    conn: Connection,
    path: PathBuf,
    buffer: Arc<Buffered>,
    /// Buffered entries that make a write due. The writer's `WriteState` holds the same
    /// value and `max_bytes` too: a writer thread takes its state away with it.
    batch: usize,
    busy_timeout: Duration,
    /// The shares of the store's bound (None: unbounded).
    budget: Option<Budget>,
    /// [`MEAN_COST_SQL`] and when it was read.
    mean_cost: Option<(u64, Instant)>,
    /// The entry format this file holds (`format_version` in `meta`): what `put` writes.
    format: u8,
    writes: Writes,
}

/// Who writes the buffer: the caller of `put`, through `conn`, or a thread of its own
/// with a connection of its own ([`DiskStore::write_behind`]).
enum Writes {
    Inline(WriteState),
    Behind(Behind<CacheError>),
}

/// What the writer of the buffer keeps between writes.
#[derive(Clone, Default)]
struct WriteState {
    /// Write attempts in a row that found the file locked, and when the next may be made.
    busy_failures: u32,
    retry_at: Option<Instant>,
    /// The shares of the store's bound (None: unbounded).
    budget: Option<Budget>,
    /// The file's size after the last eviction (see [`enforce_bound`]).
    bound_floor: u64,
    /// The most entries one transaction writes.
    batch: usize,
}

/// Encoded entries not yet written, shared with the exit flush (and the writer thread).
struct Buffered {
    path: PathBuf,
    pending: Mutex<Pending>,
    /// Entries deleted by the bound since open.
    evicted: AtomicU64,
}

#[derive(Default)]
struct Pending {
    /// Encoded entry, the milliseconds it took to compute, whether it is a twin, the hits
    /// it starts with, and its place in the order of puts.
    entries: FxHashMap<Key, (Vec<u8>, u64, bool, u32, u64)>,
    /// Hits on written entries not yet counted in the file.
    hits: FxHashMap<Key, u32>,
    since: Option<Instant>,
    /// The next entry's place in the order of puts.
    next: u64,
}

impl Pending {
    /// The buffered entries as rows to write, oldest put first.
    fn rows(&self) -> Vec<Row> {
        let mut by_age: Vec<_> = self.entries.iter().collect();
        by_age.sort_unstable_by_key(|(_, e)| e.4);
        by_age
            .into_iter()
            .map(|(k, (v, ms, twin, hits, _))| (*k, v.clone(), *ms, *twin, *hits))
            .collect()
    }
}

impl Buffered {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // Only in-memory work happens under this lock: a poisoned one is still consistent.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl crate::signals::ExitFlush for Buffered {
    fn flush_at_exit(&self, deadline: Instant) {
        let rows = self.lock().rows();
        if rows.is_empty() {
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let r = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(CacheError::from)
        .and_then(|mut c| {
            c.busy_timeout(left)?;
            insert_rows(&mut c, &rows, &[])
        });
        if let Err(e) = r {
            eprintln!(
                "smtproxy: warning: disk cache at {}: {} entries not saved ({e})",
                self.path.display(),
                rows.len()
            );
        }
    }
}

/// An entry to write: key, encoded entry, milliseconds it took to compute, twin, hits.
type Row = (Key, Vec<u8>, u64, bool, u32);

/// One `BEGIN IMMEDIATE` transaction of `INSERT OR IGNORE`s in key order, and of the
/// hit counts `hits` adds to entries already in the file.
fn insert_rows(conn: &mut Connection, rows: &[Row], hits: &[(Key, u32)]) -> Result<(), CacheError> {
    let mut rows: Vec<&Row> = rows.iter().collect();
    rows.sort_unstable_by_key(|r| r.0);
    let now = unix_now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut stmt = tx.prepare_cached(
            "INSERT OR IGNORE INTO results(key, value, solve_ms, hits, last_used, created, twin)
             VALUES (?1, ?2, ?3, ?6, ?4, ?4, ?5)",
        )?;
        for (k, v, ms, twin, hits) in rows {
            stmt.execute(params![
                &k.0[..],
                v,
                (*ms).min(i64::MAX as u64) as i64,
                now,
                i64::from(*twin),
                *hits
            ])?;
        }
        let mut stmt = tx
            .prepare_cached("UPDATE results SET hits = hits + ?2, last_used = ?3 WHERE key = ?1")?;
        for (k, n) in hits {
            stmt.execute(params![&k.0[..], *n, now])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Bytes of the file as SQLite lays it out: pages times page size.
fn file_bytes(conn: &Connection) -> Result<u64, CacheError> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok((pages.max(0) as u64) * (size.max(0) as u64))
}

/// Keeps the file within `max` bytes (see the module doc); returns the entries deleted.
/// Nothing is done while the file is no larger than `floor` (its size after the last
/// eviction: space freed inside its pages is still being reused).
pub(crate) fn enforce_bound(conn: &Connection, max: u64, floor: u64) -> Result<u64, CacheError> {
    if file_bytes(conn)? <= max.max(floor) {
        return Ok(0);
    }
    let slack = Budget::file_slack(max);
    let mut deleted = 0u64;
    for _ in 0..16 {
        let n: i64 = conn.query_row("SELECT count(*) FROM results", [], |r| r.get(0))?;
        if n == 0 {
            break;
        }
        // EVICT_SHARE, or as many as the file is over its bound (a bound lowered well below
        // the file, as `cache prune --max-mb` may).
        let over = 1.0 - slack as f64 / file_bytes(conn)?.max(1) as f64;
        let k = ((n as f64 * over.max(EVICT_SHARE)).ceil() as i64).max(1);
        conn.execute_batch("BEGIN IMMEDIATE;")?;
        let del = kind_priors(conn).and_then(|(own, twin)| {
            Ok(conn.execute(
                &format!(
                    "DELETE FROM results WHERE key IN
                       (SELECT key FROM results ORDER BY {EVICT_ORDER_SQL} LIMIT ?4)"
                ),
                params![unix_now(), own, twin, k],
            )?)
        });
        match del {
            Ok(d) => {
                deleted += d as u64;
                conn.execute_batch("COMMIT;")?;
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK;");
                return Err(e);
            }
        }
        compact(conn, slack)?;
        if file_bytes(conn)? <= slack {
            break;
        }
    }
    Ok(deleted)
}

/// Hands free pages back to the file system (`incremental_vacuum`); where the file is
/// still above `slack` (no auto-vacuum, or space freed inside pages rather than whole
/// pages), rebuilds it (`VACUUM`); then truncates the write-ahead log.
fn compact(conn: &Connection, slack: u64) -> Result<(), CacheError> {
    let auto: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    if auto == 2 {
        conn.execute_batch("PRAGMA incremental_vacuum;")?;
    }
    if file_bytes(conn)? > slack {
        conn.execute_batch("PRAGMA auto_vacuum=INCREMENTAL; VACUUM;")?;
    }
    let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    Ok(())
}

/// `$XDG_CACHE_HOME/smtproxy/results.sqlite3`, else `$HOME/.cache/smtproxy/results.sqlite3`;
/// `None` when neither variable gives an absolute directory.
pub fn default_path() -> Option<PathBuf> {
    let abs = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let base = abs(std::env::var_os("XDG_CACHE_HOME"))
        .or_else(|| abs(std::env::var_os("HOME")).map(|h| h.join(".cache")))?;
    Some(base.join("smtproxy").join("results.sqlite3"))
}

impl DiskStore {
    /// Opens (creating if needed, with its directory) the store at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<DiskStore, CacheError> {
        Self::open_with(path, DEFAULT_BUSY_TIMEOUT, DEFAULT_BATCH)
    }

    /// [`DiskStore::open`] with an explicit busy timeout and write batch size (>= 1).
    pub fn open_with(
        path: impl AsRef<Path>,
        busy_timeout: Duration,
        batch: usize,
    ) -> Result<DiskStore, CacheError> {
        let path = path.as_ref().to_path_buf();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir)?;
        // Permission bits are checked explicitly so that a store made read-only is
        // treated as such even when running as root (who would ignore them).
        if std::fs::metadata(&dir)?.permissions().readonly() {
            return Err(CacheError::ReadOnly(format!("directory {}", dir.display())));
        }
        match std::fs::metadata(&path) {
            Ok(m) => {
                if !m.is_file() {
                    return Err(CacheError::Corrupt(format!(
                        "{} is not a regular file",
                        path.display()
                    )));
                }
                if m.permissions().readonly() {
                    return Err(CacheError::ReadOnly(format!("file {}", path.display())));
                }
                check_header(&path)?;
            }
            // Where this fails, the file is initialised in place below, with retries.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = create_initialised(&path, &dir);
            }
            Err(e) => return Err(e.into()),
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(busy_timeout)?;
        // As patient with a lock met here as with one met by writes.
        let deadline = Instant::now() + busy_timeout * BUSY_ATTEMPTS;
        let format = loop {
            match setup(&conn) {
                Ok(f) => break f,
                // Switching to WAL, or building the log's index for the file's first
                // reader, can report BUSY without calling the busy handler while another
                // process does the same: retry until the deadline.
                Err(e) if is_busy(&e) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(e),
            }
        };
        if conn.is_readonly(rusqlite::DatabaseName::Main)? {
            return Err(CacheError::ReadOnly(format!("file {}", path.display())));
        }
        let buffer = Arc::new(Buffered {
            path: path.clone(),
            pending: Mutex::new(Pending::default()),
            evicted: AtomicU64::new(0),
        });
        let weak = Arc::downgrade(&buffer);
        crate::signals::on_exit_flush(weak);
        Ok(DiskStore {
            conn,
            path,
            buffer,
            batch: batch.max(1),
            busy_timeout,
            budget: None,
            mean_cost: None,
            format,
            writes: Writes::Inline(WriteState {
                batch: batch.max(1),
                ..WriteState::default()
            }),
        })
    }

    /// Writes from now on go through a thread of their own, with a connection of its own:
    /// `put` hands the buffer over and returns, where an inline write would wait for
    /// SQLite's commit, checkpoints and eviction. Buffered entries stay readable (`get`)
    /// until they are committed. A write that fails reaches the caller at its next `put`
    /// or `flush`; `flush` and the drop wait for the writes. Past [`BEHIND_MAX`]
    /// buffered entries a `put` waits for the writer, so a slow disk bounds the buffer.
    /// Set the bound ([`DiskStore::with_max_bytes`]) first.
    pub fn write_behind(mut self) -> Result<DiskStore, CacheError> {
        let Writes::Inline(state) = &self.writes else {
            return Ok(self);
        };
        let mut st = state.clone();
        let mut conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(self.busy_timeout)?;
        conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
        if let Some(b) = st.budget {
            log_bounds(&conn, b.log)?;
        }
        let buffer = self.buffer.clone();
        let behind = Behind::spawn("store-write", move |flush| {
            if flush {
                write_pending(&mut conn, &buffer, &mut st)
            } else if st.retry_at.is_none_or(|t| Instant::now() >= t) {
                write_or_defer(&mut conn, &buffer, &mut st)
            } else {
                Ok(())
            }
        });
        match behind {
            Ok(b) => self.writes = Writes::Behind(b),
            // No thread: the writes stay inline, with the state they had.
            Err(e) => {
                eprintln!("smtproxy: warning: store writes stay inline ({e})");
            }
        }
        Ok(self)
    }

    /// Bounds the store's files to `max` bytes in all (None: unbounded; shared between the
    /// file, its log and the trie by [`Budget::split`]), evicting at once if the file is
    /// over its share. (Before [`DiskStore::write_behind`]: the writer thread keeps the
    /// bound it was given.)
    pub fn with_max_bytes(mut self, max: Option<u64>) -> Result<DiskStore, CacheError> {
        let Writes::Inline(st) = &mut self.writes else {
            return Err(CacheError::Unavailable(
                "the bound is set before writes go behind".into(),
            ));
        };
        let budget = max.map(Budget::split);
        self.budget = budget;
        st.budget = budget;
        if let Some(b) = budget {
            log_bounds(&self.conn, b.log)?;
            evict(&self.conn, &self.buffer, st, b.file)?;
        }
        Ok(self)
    }

    /// The entry format this file holds and `put` writes ([`FORMAT_VERSION`] for a file
    /// made before format 3, else [`COMPACT_FORMAT_VERSION`]).
    pub fn format(&self) -> u8 {
        self.format
    }

    /// Entries deleted by the bound since open.
    pub fn evicted(&self) -> u64 {
        self.buffer.evicted.load(Ordering::Relaxed)
    }

    /// The connection (for [`super::admin`]).
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of buffered, not yet written entries.
    pub fn pending(&self) -> usize {
        self.buffer.lock().entries.len()
    }

    /// Forgets buffered entries (used when the tier is abandoned after an error so
    /// that dropping it does not block on the same failure again).
    pub fn discard_pending(&mut self) {
        let mut p = self.buffer.lock();
        p.entries.clear();
        p.hits.clear();
        p.since = None;
    }

    /// `put`, recording that the entry took `solve_ms` to compute (its worth to the bound).
    pub fn put_costed(&mut self, k: &Key, e: &Entry, solve_ms: u64) -> Result<(), CacheError> {
        self.put_worth(k, e, solve_ms, false)
    }

    /// `put_costed`, and whether the entry is a twin: a second key (the exact one) of a
    /// result stored under another key just before, valued by the hits twins get in this
    /// file (the prior of [`WORTH_SQL`]).
    pub fn put_worth(
        &mut self,
        k: &Key,
        e: &Entry,
        solve_ms: u64,
        twin: bool,
    ) -> Result<(), CacheError> {
        self.put_row(k, e, solve_ms, twin, 0)
    }

    /// `put` of an entry another tier answered (a Redis hit): computed elsewhere, it is
    /// valued at the mean cost of this file's own-key entries, with the hit that found it.
    pub fn put_copied(&mut self, k: &Key, e: &Entry) -> Result<(), CacheError> {
        let ms = self.mean_cost()?;
        self.put_row(k, e, ms, false, 1)
    }

    /// [`MEAN_COST_SQL`], read at most every [`MEAN_COST_REFRESH`].
    fn mean_cost(&mut self) -> Result<u64, CacheError> {
        if let Some((ms, at)) = self.mean_cost {
            if at.elapsed() < MEAN_COST_REFRESH {
                return Ok(ms);
            }
        }
        let mean: f64 = self.conn.query_row(MEAN_COST_SQL, [], |r| r.get(0))?;
        let ms = mean.round().max(0.0) as u64;
        self.mean_cost = Some((ms, Instant::now()));
        Ok(ms)
    }

    fn put_row(
        &mut self,
        k: &Key,
        e: &Entry,
        solve_ms: u64,
        twin: bool,
        hits: u32,
    ) -> Result<(), CacheError> {
        let (n, since) = {
            let mut p = self.buffer.lock();
            let at = p.next;
            if let std::collections::hash_map::Entry::Vacant(v) = p.entries.entry(*k) {
                v.insert((e.encode_as(k, self.format), solve_ms, twin, hits, at));
                p.next += 1;
            }
            (p.entries.len(), *p.since.get_or_insert_with(Instant::now))
        };
        let due = n >= self.batch || since.elapsed() >= FLUSH_INTERVAL;
        match &mut self.writes {
            Writes::Inline(st) => {
                if due && st.retry_at.is_none_or(|t| Instant::now() >= t) {
                    write_or_defer(&mut self.conn, &self.buffer, st)?;
                }
            }
            Writes::Behind(b) => {
                if let Some(e) = b.take_error() {
                    return Err(e);
                }
                if n >= BEHIND_MAX {
                    b.wait()?;
                } else if due {
                    b.ask();
                }
            }
        }
        Ok(())
    }

    /// Number of entries written to the file (excluding buffered ones).
    pub fn stored_len(&self) -> Result<u64, CacheError> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM results", [], |r| r.get::<_, i64>(0))?
            as u64)
    }

    /// Test hook: caps the file size in pages so that writes fail like on a full disk.
    #[doc(hidden)]
    pub fn set_max_page_count(&self, pages: u32) -> Result<(), CacheError> {
        self.conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
        Ok(())
    }
}

/// The write-ahead log is checkpointed at half its share `log` (the other half is room
/// for the transaction that passes it), and cut back to its share after a checkpoint.
fn log_bounds(conn: &Connection, log: u64) -> Result<(), CacheError> {
    let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    let pages = (log / page.max(512) as u64 / 2).clamp(8, 1000);
    conn.query_row(&format!("PRAGMA wal_autocheckpoint = {pages}"), [], |_| {
        Ok(())
    })?;
    conn.query_row(
        &format!("PRAGMA journal_size_limit = {log}"),
        [],
        |_| Ok(()),
    )?;
    Ok(())
}

/// [`enforce_bound`] through `conn`, remembering the file's size after an eviction.
fn evict(
    conn: &Connection,
    buf: &Buffered,
    st: &mut WriteState,
    max: u64,
) -> Result<(), CacheError> {
    let n = enforce_bound(conn, max, st.bound_floor)?;
    if n > 0 {
        buf.evicted.fetch_add(n, Ordering::Relaxed);
        st.bound_floor = file_bytes(conn)?;
    }
    Ok(())
}

/// Writes the buffered entries and hit counts through `conn`, at most a batch of
/// entries per transaction in the order they were put, keeping the bound after each (so
/// that a file passes its bound by at most one batch, however many entries waited).
/// Entries stay in the buffer (and readable) until their transaction commits; then they
/// leave it.
/// Entries put meanwhile (by the engine, while a writer thread writes) stay for the next
/// write, as do those of a transaction that failed.
fn write_pending(
    conn: &mut Connection,
    buf: &Buffered,
    st: &mut WriteState,
) -> Result<(), CacheError> {
    // Copied out so the lock is not held across SQLite calls, oldest put first: a write
    // cut short (a full disk) keeps what was put first, a result's keys together as they
    // were put (its canonical key, then its exact key).
    let (rows, hits): (Vec<Row>, Vec<(Key, u32)>) = {
        let p = buf.lock();
        (p.rows(), p.hits.iter().map(|(k, n)| (*k, *n)).collect())
    };
    if rows.is_empty() && hits.is_empty() {
        return Ok(());
    }
    if rows.is_empty() {
        // Hit counts alone are bookkeeping for the bound, not results: a session that
        // only reads (the file locked by another process, or read-only) loses them
        // without a warning rather than giving the tier up.
        let r = insert_rows(conn, &[], &hits);
        forget_hits(&mut buf.lock(), &hits);
        if r.is_ok() {
            st.busy_failures = 0;
            st.retry_at = None;
        }
        return Ok(());
    }
    for (i, chunk) in rows.chunks(st.batch.max(1)).enumerate() {
        let counted: &[(Key, u32)] = if i == 0 { &hits } else { &[] };
        insert_rows(conn, chunk, counted)?;
        let mut p = buf.lock();
        forget_hits(&mut p, counted);
        for row in chunk {
            p.entries.remove(&row.0);
        }
        p.since = (!p.entries.is_empty()).then(Instant::now);
        drop(p);
        st.busy_failures = 0;
        st.retry_at = None;
        if let Some(b) = st.budget {
            evict(conn, buf, st, b.file)?;
            // The log counts against the bound too: past its share (an eviction or a
            // checkpoint that ran while the log was growing), truncate it now.
            if log_bytes(&buf.path) > b.log {
                let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            }
        }
    }
    Ok(())
}

/// Takes the hit counts `written` off the buffer's (hits counted meanwhile stay).
fn forget_hits(p: &mut Pending, written: &[(Key, u32)]) {
    for (k, n) in written {
        if let Some(h) = p.hits.get_mut(k) {
            *h = h.saturating_sub(*n);
            if *h == 0 {
                p.hits.remove(k);
            }
        }
    }
}

/// [`write_pending`], except that a locked file defers the write (see the module doc)
/// until the [`BUSY_ATTEMPTS`]th failure in a row.
fn write_or_defer(
    conn: &mut Connection,
    buf: &Buffered,
    st: &mut WriteState,
) -> Result<(), CacheError> {
    match write_pending(conn, buf, st) {
        Err(e) if is_busy(&e) && st.busy_failures + 1 < BUSY_ATTEMPTS => {
            st.busy_failures += 1;
            st.retry_at = Some(Instant::now() + FLUSH_INTERVAL * (1 << (st.busy_failures - 1)));
            Ok(())
        }
        r => r,
    }
}

/// The file was locked by another connection past the busy timeout.
fn is_busy(e: &CacheError) -> bool {
    matches!(e, CacheError::Sqlite(e) if matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    ))
}

/// Creates the store at `path` fully formed, so that processes starting together on a
/// new store do not race to initialise one file (switching it to WAL and creating the
/// tables need its write lock, and a loaded machine could keep a process waiting on that
/// past its busy timeout): the schema goes into a file of this process's own beside it,
/// which is then linked into place unless another process's got there first.
fn create_initialised(path: &Path, dir: &Path) -> Result<(), CacheError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.init-{}-{nanos}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let linked = (|| {
        let conn = Connection::open_with_flags(
            &tmp,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        setup(&conn)?;
        // The last connection's close checkpoints the log into the file itself.
        conn.close().map_err(|(_, e)| e)?;
        match std::fs::hard_link(&tmp, path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e.into()),
            _ => Ok(()),
        }
    })();
    for suffix in ["", "-wal", "-shm"] {
        let mut p = tmp.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    linked
}

const VERSION_SQL: &str = "SELECT value FROM meta WHERE name = 'format_version'";
const SCHEMA_SQL: &str = "SELECT value FROM meta WHERE name = 'schema_version'";
/// The columns schema 2 adds to `results`, with the defaults that let a schema-1 writer
/// insert rows.
const WORTH_COLUMNS: &str = "solve_ms INTEGER NOT NULL DEFAULT 0, hits INTEGER NOT NULL DEFAULT 0,
                       last_used INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL DEFAULT 0,
                       twin INTEGER NOT NULL DEFAULT 0";

/// The tables' version: `schema_version` in `meta`, 1 where it is absent.
fn schema_version(conn: &Connection) -> Result<i64, CacheError> {
    Ok(conn
        .query_row(SCHEMA_SQL, [], |r| r.get::<_, i64>(0))
        .optional()?
        .unwrap_or(1))
}

/// Schema 1 to 2: the worth columns added (existing entries valued as written now), in
/// one transaction that another opener doing the same finds already done.
fn migrate_schema_1(conn: &Connection) -> Result<i64, CacheError> {
    let run = || -> Result<i64, CacheError> {
        conn.execute_batch("BEGIN IMMEDIATE;")?;
        if schema_version(conn)? == 1 {
            let cols: Vec<String> = conn
                .prepare("SELECT name FROM pragma_table_info('results')")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for (name, decl) in [
                ("solve_ms", "solve_ms INTEGER NOT NULL DEFAULT 0"),
                ("hits", "hits INTEGER NOT NULL DEFAULT 0"),
                ("last_used", "last_used INTEGER NOT NULL DEFAULT 0"),
                ("created", "created INTEGER NOT NULL DEFAULT 0"),
                ("twin", "twin INTEGER NOT NULL DEFAULT 0"),
            ] {
                if !cols.iter().any(|c| c == name) {
                    conn.execute_batch(&format!("ALTER TABLE results ADD COLUMN {decl};"))?;
                }
            }
            conn.execute(
                "UPDATE results SET last_used = ?1, created = ?1 WHERE last_used = 0",
                [unix_now()],
            )?;
            conn.execute(
                "INSERT OR REPLACE INTO meta(name, value) VALUES ('schema_version', ?1)",
                [SCHEMA_VERSION],
            )?;
        }
        conn.execute_batch("COMMIT;")?;
        schema_version(conn)
    };
    run().inspect_err(|_| {
        let _ = conn.execute_batch("ROLLBACK;");
    })
}

/// Run `body` in one `BEGIN IMMEDIATE` transaction, rolled back if it fails part way,
/// then read the format version it left.
fn write_then_version(conn: &Connection, body: &str) -> Result<i64, CacheError> {
    let run = || -> Result<(), rusqlite::Error> {
        conn.execute_batch("BEGIN IMMEDIATE;")?;
        conn.execute_batch(body)?;
        #[cfg(test)]
        std::thread::sleep(Duration::from_millis(
            tests::SLOW_WRITE_MS.load(std::sync::atomic::Ordering::Relaxed),
        ));
        conn.execute_batch("COMMIT;")
    };
    run().inspect_err(|_| {
        let _ = conn.execute_batch("ROLLBACK;");
    })?;
    Ok(conn.query_row(VERSION_SQL, [], |r| r.get(0))?)
}

/// Makes the tables of a new file, or checks (and migrates) those of an existing one;
/// returns the file's entry format.
fn setup(conn: &Connection) -> Result<u8, CacheError> {
    // Free pages can be handed back only if this is set before the file's first page is
    // written, which switching to WAL does; the page size likewise. Only on an empty
    // file: on one that has pages they change nothing (and would wait for another
    // process's write lock).
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    if pages == 0 {
        conn.execute_batch(&format!(
            "PRAGMA page_size={NEW_PAGE_SIZE}; PRAGMA auto_vacuum=INCREMENTAL;"
        ))?;
    }
    let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
    // Fast path: an initialised store needs no write lock.
    let existing: Option<i64> = match conn.query_row(VERSION_SQL, [], |r| r.get(0)).optional() {
        Ok(v) => v,
        Err(rusqlite::Error::SqliteFailure(_, Some(msg))) if msg.contains("no such table") => None,
        Err(e) => return Err(e.into()),
    };
    let version = match existing {
        Some(v) => v,
        None => {
            write_then_version(
                conn,
                &format!(
                    "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL)
                       WITHOUT ROWID;
                     CREATE TABLE IF NOT EXISTS results(key BLOB PRIMARY KEY, value BLOB NOT NULL,
                       {WORTH_COLUMNS}) WITHOUT ROWID;
                     INSERT OR IGNORE INTO meta(name, value) VALUES ('format_version', {COMPACT_FORMAT_VERSION});
                     INSERT OR IGNORE INTO meta(name, value) VALUES ('schema_version', {SCHEMA_VERSION});"
                ),
            )?
        }
    };
    // A store of format 1 (entries without checksums) is emptied and becomes format 2:
    // its entries are only a cache, and none is served unchecked.
    let version = if version == 1 && FORMAT_VERSION == 2 {
        write_then_version(
            conn,
            "DELETE FROM results
              WHERE (SELECT value FROM meta WHERE name = 'format_version') = 1;
             UPDATE meta SET value = 2 WHERE name = 'format_version' AND value = 1;",
        )?
    } else {
        version
    };
    // Format 2 (a file made before format 3) keeps its format, so that the builds that
    // read only format 2 still share it; format 3 is what new files get.
    if version != FORMAT_VERSION as i64 && version != COMPACT_FORMAT_VERSION as i64 {
        return Err(CacheError::Version {
            found: version.clamp(0, 255) as u8,
            expected: COMPACT_FORMAT_VERSION,
        });
    }
    let schema = schema_version(conn)?;
    let schema = if schema == 1 {
        migrate_schema_1(conn)?
    } else {
        schema
    };
    if schema != SCHEMA_VERSION {
        return Err(CacheError::Schema {
            found: schema,
            expected: SCHEMA_VERSION,
        });
    }
    // Touch the results table so that a damaged schema shows up now, not later.
    conn.query_row(
        "SELECT count(*) FROM (SELECT 1 FROM results LIMIT 1)",
        [],
        |_| Ok(()),
    )?;
    Ok(version as u8)
}

/// Cheap structural checks on an existing file before SQLite sees it: the magic
/// string, a sane page size, and (when no write-ahead log is pending) a file size
/// that matches the page count in the header. Catches garbage and truncated files
/// deterministically, without a full integrity check.
fn check_header(path: &Path) -> Result<(), CacheError> {
    let len = std::fs::metadata(path)?.len();
    if len == 0 {
        return Ok(()); // SQLite treats an empty file as a new database.
    }
    let corrupt = CacheError::Corrupt;
    if len < 100 {
        return Err(corrupt(format!("truncated ({len} bytes)")));
    }
    let mut h = [0u8; 100];
    std::fs::File::open(path)?.read_exact(&mut h)?;
    if &h[..16] != b"SQLite format 3\0" {
        return Err(corrupt("not an SQLite database".into()));
    }
    let page_size = match u16::from_be_bytes([h[16], h[17]]) {
        1 => 65536u64,
        n if n >= 512 && n.is_power_of_two() => n as u64,
        n => return Err(corrupt(format!("bad page size {n}"))),
    };
    if len % page_size != 0 {
        return Err(corrupt(format!(
            "truncated ({len} bytes is not a whole number of {page_size}-byte pages)"
        )));
    }
    let be = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let (change, pages, valid_for) = (be(24), be(28) as u64, be(92));
    let wal_pending = log_bytes(path) > 0;
    if pages != 0 && change == valid_for && !wal_pending && len / page_size < pages {
        return Err(corrupt(format!(
            "truncated ({} of {pages} pages)",
            len / page_size
        )));
    }
    Ok(())
}

impl Store for DiskStore {
    fn get(&mut self, k: &Key) -> Result<Option<Entry>, CacheError> {
        if let Some((v, ..)) = self.buffer.lock().entries.get(k) {
            return Entry::decode(k, v).map(Some);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT value FROM results WHERE key = ?1")?;
        let v: Option<Vec<u8>> = stmt.query_row([&k.0[..]], |r| r.get(0)).optional()?;
        match v {
            None => Ok(None),
            Some(v) => {
                let e = Entry::decode(k, &v)?;
                *self.buffer.lock().hits.entry(*k).or_insert(0) += 1;
                Ok(Some(e))
            }
        }
    }

    fn put(&mut self, k: &Key, e: &Entry) -> Result<(), CacheError> {
        self.put_costed(k, e, 0)
    }

    fn name(&self) -> &'static str {
        "disk"
    }

    fn flush(&mut self) -> Result<(), CacheError> {
        match &mut self.writes {
            Writes::Inline(st) => write_pending(&mut self.conn, &self.buffer, st),
            Writes::Behind(b) => b.wait(),
        }
    }
}

impl Drop for DiskStore {
    fn drop(&mut self) {
        // The writer thread's connection closes first: this one, the last, checkpoints.
        let written =
            match std::mem::replace(&mut self.writes, Writes::Inline(WriteState::default())) {
                Writes::Inline(mut st) => write_pending(&mut self.conn, &self.buffer, &mut st),
                Writes::Behind(b) => b.finish(),
            };
        // Entries still buffered are the ones lost. A writer thread may report a write
        // that failed before the caller gave the tier up and discarded its entries (its
        // warning said so): with nothing left, nothing is lost.
        let n = self.pending();
        if let (Err(e), true) = (written, n > 0) {
            eprintln!(
                "smtproxy: warning: disk cache at {}: {n} entries not saved ({e})",
                self.path.display()
            );
        }
        let keep = match self.budget {
            Some(b) => KEPT_LOG_BYTES.min(b.log),
            None => KEPT_LOG_BYTES,
        };
        if log_bytes(&self.path) <= keep {
            let _ = self.conn.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            );
        }
    }
}

/// The size of the store's write-ahead log (0 when there is none).
pub(crate) fn log_bytes(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).map_or(0, |m| m.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> Key {
        let mut k = [0u8; 16];
        k[..4].copy_from_slice(&i.to_le_bytes());
        k[15] = 0xd1;
        Key(k)
    }

    #[test]
    fn disk_round_trip_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/dir/results.sqlite3");
        {
            let mut s = DiskStore::open(&p).unwrap();
            for i in 0..200 {
                let e = if i % 2 == 0 {
                    Entry::sat(Some(format!("((x0 #x{i:02x}))")))
                } else {
                    Entry::unsat()
                };
                s.put(&key(i), &e).unwrap();
            }
            // Buffered entries are visible before flush.
            assert_eq!(s.get(&key(199)).unwrap(), Some(Entry::unsat()));
            // First writer wins.
            s.put(&key(0), &Entry::sat(Some("other".into()))).unwrap();
        } // drop flushes
        let mut s = DiskStore::open(&p).unwrap();
        assert_eq!(s.stored_len().unwrap(), 200);
        assert_eq!(
            s.get(&key(0)).unwrap(),
            Some(Entry::sat(Some("((x0 #x00))".into())))
        );
        assert_eq!(s.get(&key(1)).unwrap(), Some(Entry::unsat()));
        assert_eq!(s.get(&key(1000)).unwrap(), None);
    }

    #[test]
    fn locked_writes_are_deferred_then_given_up() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, other) = locked(dir.path(), Duration::from_millis(20), 1);
        // Locked: the write is deferred, the entry kept and served.
        s.put(&key(1), &Entry::unsat()).unwrap();
        assert_eq!(s.pending(), 1);
        assert_eq!(s.get(&key(1)).unwrap(), Some(Entry::unsat()));
        // Before the retry time no write is tried, however full the batch.
        s.put(&key(2), &Entry::unsat()).unwrap();
        assert_eq!(s.pending(), 2);
        // The lock goes away: the next write due after the retry time writes everything.
        other.execute_batch("COMMIT;").unwrap();
        std::thread::sleep(FLUSH_INTERVAL);
        s.put(&key(3), &Entry::unsat()).unwrap();
        assert_eq!((s.pending(), s.stored_len().unwrap()), (0, 3));
        // Locked through BUSY_ATTEMPTS writes in a row: an error, the entries still held.
        other.execute_batch("BEGIN IMMEDIATE;").unwrap();
        let mut results = Vec::new();
        for i in 0..BUSY_ATTEMPTS {
            if let Writes::Inline(WriteState {
                retry_at: Some(t), ..
            }) = s.writes
            {
                std::thread::sleep(t.saturating_duration_since(Instant::now()));
            }
            results.push(s.put(&key(10 + i), &Entry::unsat()).is_ok());
        }
        assert_eq!(results, [true, true, false]);
        assert_eq!(s.pending(), BUSY_ATTEMPTS as usize);
        other.execute_batch("COMMIT;").unwrap();
        s.flush().unwrap();
        assert_eq!(s.stored_len().unwrap(), 3 + u64::from(BUSY_ATTEMPTS));
    }

    #[test]
    fn writes_behind_keep_every_entry_readable_and_saved() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("results.sqlite3");
        {
            let mut s = DiskStore::open_with(&p, DEFAULT_BUSY_TIMEOUT, 8)
                .unwrap()
                .write_behind()
                .unwrap();
            for i in 0..2000 {
                s.put(&key(i), &Entry::sat(Some(format!("((x #x{:04x}))", i))))
                    .unwrap();
                // Every entry put so far is served, written or not.
                if i % 97 == 0 {
                    for j in (0..=i).step_by(13) {
                        let want = Entry::sat(Some(format!("((x #x{:04x}))", j)));
                        assert_eq!(s.get(&key(j)).unwrap(), Some(want), "entry {j} at {i}");
                    }
                }
            }
            s.flush().unwrap();
            assert_eq!((s.pending(), s.stored_len().unwrap()), (0, 2000));
            for i in 2000..2100 {
                s.put(&key(i), &Entry::unsat()).unwrap();
            }
        } // the drop writes the rest
        let s = DiskStore::open(&p).unwrap();
        assert_eq!(s.stored_len().unwrap(), 2100);
    }

    /// A store in `dir` writing inline, batches of `batch`, and another connection that
    /// holds its write lock.
    fn locked(dir: &Path, busy: Duration, batch: usize) -> (DiskStore, Connection) {
        let p = dir.join("results.sqlite3");
        let s = DiskStore::open_with(&p, busy, batch).unwrap();
        let other = Connection::open(&p).unwrap();
        other.execute_batch("BEGIN IMMEDIATE;").unwrap();
        (s, other)
    }

    /// As `locked`, a batch of one, the store writing behind.
    fn behind_and_locked(dir: &Path, busy: Duration) -> (DiskStore, Connection) {
        let (s, other) = locked(dir, busy, 1);
        (s.write_behind().unwrap(), other)
    }

    #[test]
    fn a_locked_file_does_not_hold_up_puts_behind() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, other) = behind_and_locked(dir.path(), Duration::from_secs(2));
        // Inline, the first put would wait out the 2 s busy timeout.
        let t = Instant::now();
        for i in 0..5 {
            s.put(&key(i), &Entry::unsat()).unwrap();
        }
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert_eq!(s.get(&key(4)).unwrap(), Some(Entry::unsat()));
        other.execute_batch("COMMIT;").unwrap();
        s.flush().unwrap();
        assert_eq!((s.pending(), s.stored_len().unwrap()), (0, 5));
    }

    /// Entries that waited are written oldest first, a batch per transaction: a disk that
    /// fills part way keeps the entries put first (a result's canonical key, put just
    /// before its exact key, is not kept without it but at the cut).
    #[test]
    fn a_write_cut_short_keeps_the_entries_put_first() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, other) = locked(dir.path(), Duration::from_millis(20), 8);
        // Put order is the reverse of key order; the lock keeps all 40 waiting.
        let put: Vec<Key> = (0..40u32).map(|i| key(39 - i)).collect();
        for k in &put {
            s.put(k, &Entry::sat(Some(format!("((x {}))", "#x5a".repeat(80)))))
                .unwrap();
        }
        assert_eq!(s.pending(), 40);
        other.execute_batch("COMMIT;").unwrap();
        let pages: u32 = s
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        s.set_max_page_count(pages + 12).unwrap();
        assert!(s.flush().is_err(), "the disk should fill part way");
        let kept = s.stored_len().unwrap() as usize;
        assert!(kept > 0 && kept < 40, "{kept} kept");
        for (n, k) in put.iter().enumerate() {
            let stored: Option<i64> = s
                .conn
                .query_row("SELECT 1 FROM results WHERE key = ?1", [&k.0[..]], |r| {
                    r.get(0)
                })
                .optional()
                .unwrap();
            assert_eq!(stored.is_some(), n < kept, "entry put {n}th, {kept} kept");
        }
        s.discard_pending();
    }

    #[test]
    fn a_write_behind_that_keeps_failing_reaches_a_later_put() {
        let dir = tempfile::tempdir().unwrap();
        let (mut s, other) = behind_and_locked(dir.path(), Duration::from_millis(20));
        // Deferred BUSY_ATTEMPTS - 1 times (after FLUSH_INTERVAL, then twice that), then
        // an error that the next put returns; the entries are still held.
        let t = Instant::now();
        let mut failed = None;
        for i in 0..400 {
            if let Err(e) = s.put(&key(i), &Entry::unsat()) {
                failed = Some(e);
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let e = failed.expect("the lock was never reported");
        assert!(is_busy(&e), "{e}");
        assert!(t.elapsed() >= FLUSH_INTERVAL * 3, "{:?}", t.elapsed());
        assert!(s.pending() > 0);
        other.execute_batch("COMMIT;").unwrap();
        s.flush().unwrap();
        assert_eq!(s.pending(), 0);
    }

    /// Milliseconds the schema's transaction holds the write lock before its commit, as a
    /// slow disk would make it.
    pub(super) static SLOW_WRITE_MS: std::sync::atomic::AtomicU64 =
        std::sync::atomic::AtomicU64::new(0);

    #[test]
    fn many_openers_of_a_new_store_never_wait() {
        // Sixteen openers of one new file at once, on a disk so slow that initialising the
        // file takes longer than anyone waits for a lock: each finds the file fully formed
        // or links its own into place, so none waits for another's initialisation.
        SLOW_WRITE_MS.store(200, std::sync::atomic::Ordering::Relaxed);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("results.sqlite3");
        let start = Arc::new(std::sync::Barrier::new(16));
        let threads: Vec<_> = (0..16u32)
            .map(|i| {
                let (p, start) = (p.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let mut s = DiskStore::open_with(&p, Duration::from_millis(50), 1)?;
                    // Writes may find the lock taken and stay buffered; no matter here.
                    let _ = s.put(&key(i), &Entry::unsat());
                    s.discard_pending();
                    Ok::<(), CacheError>(())
                })
            })
            .collect();
        let failed: Vec<String> = threads
            .into_iter()
            .filter_map(|t| t.join().unwrap().err().map(|e| e.to_string()))
            .collect();
        SLOW_WRITE_MS.store(0, std::sync::atomic::Ordering::Relaxed);
        assert!(failed.is_empty(), "{failed:?}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".init-"))
            .collect();
        assert!(names.is_empty(), "initialisation files left: {names:?}");
    }

    #[test]
    fn default_path_uses_xdg_or_home() {
        // Only checks the shape; environment is process-global so we do not mutate it.
        if let Some(p) = default_path() {
            assert!(p.ends_with("smtproxy/results.sqlite3"));
            assert!(p.is_absolute());
        }
    }
}
