//! The on-disk tier: one SQLite file shared by all smtproxy processes of a user on one
//! machine.
//!
//! * Schema: `results(key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID`, where
//!   `value` is an [`Entry::encode`] byte string, and `meta(name TEXT PRIMARY KEY,
//!   value INTEGER)` holding `format_version` = [`FORMAT_VERSION`]. A file of format 1
//!   (entries without checksums) is emptied and upgraded at open; a file with any other
//!   format version is rejected at open.
//! * Concurrency: WAL journal (readers never wait for writers), `synchronous=NORMAL`,
//!   a busy timeout (default [`DEFAULT_BUSY_TIMEOUT`]) for writers, and every write batch
//!   is one `BEGIN IMMEDIATE` transaction of `INSERT OR IGNORE` (first writer wins;
//!   entries are facts, so equal keys carry equal verdicts).
//! * Buffering: `put` buffers encoded entries; they are written when
//!   [`DEFAULT_BATCH`] are pending, when the oldest pending entry is older than
//!   [`FLUSH_INTERVAL`], on [`Store::flush`], and on drop, so nothing is lost at a
//!   normal exit (a crash can lose at most the unflushed batch). `get` sees buffered
//!   entries too. On SIGINT/SIGTERM the signal thread writes the buffer through a
//!   connection of its own ([`crate::signals::ExitFlush`]), so an interrupted run keeps
//!   every result it computed; the buffer is shared under a mutex that is only ever held
//!   for in-memory work, so that flush never waits on the engine thread's SQLite calls.
//! * Contention: a write that finds the file locked past the busy timeout keeps its
//!   entries buffered (still served by `get`) and is tried again later, after
//!   [`FLUSH_INTERVAL`] and then twice that; only the [`BUSY_ATTEMPTS`]th such failure in
//!   a row is an error. Many processes sharing one store on a loaded machine can each
//!   miss the lock for a second now and then, and must not give the store up for it.
//! * Failure: a file that is not SQLite, a truncated file (size disagreeing with the
//!   header), a read-only file or directory, a lock held through [`BUSY_ATTEMPTS`]
//!   writes, a full disk: all are [`CacheError`]s, never panics.

use super::{CacheError, Entry, Key, Store, FORMAT_VERSION};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_millis(1000);
pub const DEFAULT_BATCH: usize = 64;
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(500);
/// Write attempts in a row that may find the file locked before the tier is given up.
pub const BUSY_ATTEMPTS: u32 = 3;

pub struct DiskStore {
    conn: Connection,
    path: PathBuf,
    buffer: Arc<Buffered>,
    batch: usize,
    /// Write attempts in a row that found the file locked, and when the next may be made.
    busy_failures: u32,
    retry_at: Option<Instant>,
}

/// Encoded entries not yet written, shared with the exit flush.
struct Buffered {
    path: PathBuf,
    pending: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    entries: FxHashMap<Key, Vec<u8>>,
    since: Option<Instant>,
}

impl Buffered {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // Only in-memory work happens under this lock: a poisoned one is still consistent.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl crate::signals::ExitFlush for Buffered {
    fn flush_at_exit(&self, deadline: Instant) {
        let rows: Vec<(Key, Vec<u8>)> = self
            .lock()
            .entries
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
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
            insert_rows(&mut c, rows.iter().map(|(k, v)| (k, v)))
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

/// One `BEGIN IMMEDIATE` transaction of `INSERT OR IGNORE`s, in key order.
fn insert_rows<'a>(
    conn: &mut Connection,
    rows: impl Iterator<Item = (&'a Key, &'a Vec<u8>)>,
) -> Result<(), CacheError> {
    let mut rows: Vec<(&Key, &Vec<u8>)> = rows.collect();
    rows.sort_unstable_by_key(|(k, _)| **k);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut stmt =
            tx.prepare_cached("INSERT OR IGNORE INTO results(key, value) VALUES (?1, ?2)")?;
        for (k, v) in rows {
            stmt.execute(params![&k.0[..], v])?;
        }
    }
    tx.commit()?;
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
        loop {
            match setup(&conn) {
                Ok(()) => break,
                // Switching to WAL, or building the log's index for the file's first
                // reader, can report BUSY without calling the busy handler while another
                // process does the same: retry until the deadline.
                Err(e) if is_busy(&e) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(e),
            }
        }
        if conn.is_readonly(rusqlite::DatabaseName::Main)? {
            return Err(CacheError::ReadOnly(format!("file {}", path.display())));
        }
        let buffer = Arc::new(Buffered {
            path: path.clone(),
            pending: Mutex::new(Pending::default()),
        });
        let weak = Arc::downgrade(&buffer);
        crate::signals::on_exit_flush(weak);
        Ok(DiskStore {
            conn,
            path,
            buffer,
            batch: batch.max(1),
            busy_failures: 0,
            retry_at: None,
        })
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
        p.since = None;
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

    fn write_pending(&mut self) -> Result<(), CacheError> {
        // Copied out so the lock is not held across SQLite calls (only this thread adds
        // entries, so clearing afterwards loses nothing).
        let rows: Vec<(Key, Vec<u8>)> = self
            .buffer
            .lock()
            .entries
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        insert_rows(&mut self.conn, rows.iter().map(|(k, v)| (k, v)))?;
        let mut p = self.buffer.lock();
        p.entries.clear();
        p.since = None;
        drop(p);
        self.busy_failures = 0;
        self.retry_at = None;
        Ok(())
    }

    /// [`DiskStore::write_pending`], except that a locked file defers the write (see the
    /// module doc) until the [`BUSY_ATTEMPTS`]th failure in a row.
    fn write_or_defer(&mut self) -> Result<(), CacheError> {
        match self.write_pending() {
            Err(e) if is_busy(&e) && self.busy_failures + 1 < BUSY_ATTEMPTS => {
                self.busy_failures += 1;
                self.retry_at =
                    Some(Instant::now() + FLUSH_INTERVAL * (1 << (self.busy_failures - 1)));
                Ok(())
            }
            r => r,
        }
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

fn setup(conn: &Connection) -> Result<(), CacheError> {
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
        None => write_then_version(
            conn,
            &format!(
                "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                 CREATE TABLE IF NOT EXISTS results(key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
                 INSERT OR IGNORE INTO meta(name, value) VALUES ('format_version', {FORMAT_VERSION});"
            ),
        )?,
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
    if version != FORMAT_VERSION as i64 {
        return Err(CacheError::Version {
            found: version.clamp(0, 255) as u8,
            expected: FORMAT_VERSION,
        });
    }
    // Touch the results table so that a damaged schema shows up now, not later.
    conn.query_row(
        "SELECT count(*) FROM (SELECT 1 FROM results LIMIT 1)",
        [],
        |_| Ok(()),
    )?;
    Ok(())
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
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_pending = std::fs::metadata(PathBuf::from(wal))
        .map(|m| m.len() > 0)
        .unwrap_or(false);
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
        if let Some(v) = self.buffer.lock().entries.get(k) {
            return Entry::decode(k, v).map(Some);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT value FROM results WHERE key = ?1")?;
        let v: Option<Vec<u8>> = stmt.query_row([&k.0[..]], |r| r.get(0)).optional()?;
        match v {
            None => Ok(None),
            Some(v) => Entry::decode(k, &v).map(Some),
        }
    }

    fn put(&mut self, k: &Key, e: &Entry) -> Result<(), CacheError> {
        let (n, since) = {
            let mut p = self.buffer.lock();
            p.entries.entry(*k).or_insert_with(|| e.encode(k));
            (p.entries.len(), *p.since.get_or_insert_with(Instant::now))
        };
        let due = n >= self.batch || since.elapsed() >= FLUSH_INTERVAL;
        if due && self.retry_at.is_none_or(|t| Instant::now() >= t) {
            self.write_or_defer()?;
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        "disk"
    }

    fn flush(&mut self) -> Result<(), CacheError> {
        self.write_pending()
    }
}

impl Drop for DiskStore {
    fn drop(&mut self) {
        let n = self.pending();
        if let Err(e) = self.write_pending() {
            eprintln!(
                "smtproxy: warning: disk cache at {}: {n} entries not saved ({e})",
                self.path.display()
            );
        }
    }
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
        let p = dir.path().join("results.sqlite3");
        let mut s = DiskStore::open_with(&p, Duration::from_millis(20), 1).unwrap();
        let other = Connection::open(&p).unwrap();
        other.execute_batch("BEGIN IMMEDIATE;").unwrap();
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
            if let Some(t) = s.retry_at {
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
