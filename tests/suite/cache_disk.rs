//! Real-file tests of the SQLite tier and of the tiered cache's handling of its failures.

use smtproxy::cache::disk::{BUSY_ATTEMPTS, FLUSH_INTERVAL};
use smtproxy::cache::{
    CacheConfig, CacheError, DiskStore, Entry, Key, MemoryStore, Store, TieredCache,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PER_WRITER: u32 = 3000;

fn key(writer: u32, i: u32) -> Key {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&writer.to_le_bytes());
    k[4..8].copy_from_slice(&i.to_le_bytes());
    k[8..].copy_from_slice(b"smtproxy");
    Key(k)
}

fn entry(writer: u32, i: u32) -> Entry {
    if i.is_multiple_of(3) {
        Entry::unsat()
    } else {
        Entry::sat(Some(format!(
            "((x0 #x{:08x}) (w{writer} #x{i:08x}))",
            i.wrapping_mul(2654435761)
        )))
    }
}

/// The shared key every writer also stores (entries are facts: all equal).
fn common_key(i: u32) -> Key {
    key(u32::MAX, i)
}

fn write_all(path: &Path, writer: u32) {
    let mut s = DiskStore::open(path).expect("open store");
    for i in 0..PER_WRITER {
        s.put(&key(writer, i), &entry(writer, i)).expect("put");
        if i % 10 == 0 {
            s.put(&common_key(i), &entry(u32::MAX, i))
                .expect("put common");
        }
        if i % 500 == 0 {
            // Reads interleaved with other processes' writes.
            assert_eq!(s.get(&key(writer, i)).unwrap(), Some(entry(writer, i)));
        }
    }
    // Drop flushes the final partial batch.
}

/// Helper run in a child process by `disk_concurrent_processes_and_threads`.
#[test]
#[ignore]
fn helper_disk_writer() {
    let (Ok(path), Ok(id)) = (
        std::env::var("SMTPROXY_CACHE_TEST_DB"),
        std::env::var("SMTPROXY_CACHE_TEST_WRITER"),
    ) else {
        return;
    };
    write_all(Path::new(&path), id.parse().unwrap());
}

#[test]
fn disk_concurrent_processes_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite3");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2u32)
        .map(|w| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "cache_disk::helper_disk_writer",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("SMTPROXY_CACHE_TEST_DB", &path)
                .env("SMTPROXY_CACHE_TEST_WRITER", w.to_string())
                .spawn()
                .expect("spawn helper process")
        })
        .collect();
    let threads: Vec<_> = (2..4u32)
        .map(|w| {
            let p = path.clone();
            std::thread::spawn(move || write_all(&p, w))
        })
        .collect();
    for t in threads {
        t.join().expect("writer thread");
    }
    for mut c in children {
        assert!(c.wait().unwrap().success(), "helper process failed");
    }
    let mut s = DiskStore::open(&path).unwrap();
    let common = PER_WRITER.div_ceil(10);
    assert_eq!(
        s.stored_len().unwrap(),
        4 * PER_WRITER as u64 + common as u64
    );
    for w in 0..4 {
        for i in 0..PER_WRITER {
            assert_eq!(
                s.get(&key(w, i)).unwrap(),
                Some(entry(w, i)),
                "writer {w} entry {i}"
            );
        }
    }
    for i in (0..PER_WRITER).step_by(10) {
        assert_eq!(s.get(&common_key(i)).unwrap(), Some(entry(u32::MAX, i)));
    }
}

fn memory_only_cfg(disk: PathBuf) -> CacheConfig {
    CacheConfig {
        mem_entries: 100,
        mem_bytes: 1 << 20,
        disk: Some(disk),
        redis: None,
        ..CacheConfig::default()
    }
}

/// The tiered cache must have warned exactly once about the disk and still work.
fn assert_continues_without_disk(c: &mut TieredCache) {
    assert_eq!(c.active_tiers(), vec!["memory"]);
    let k = Key([0x42; 16]);
    assert_eq!(c.get(&k), None);
    c.put(&k, &Entry::unsat());
    assert_eq!(c.get(&k), Some(Entry::unsat()));
    c.flush();
    let w = c.warnings();
    assert_eq!(w.len(), 1, "warnings: {w:?}");
    assert!(
        w[0].starts_with("disk cache at ") && w[0].ends_with("; continuing without it"),
        "{}",
        w[0]
    );
}

#[test]
fn disk_corrupt_file_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite3");
    let garbage: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &garbage).unwrap();
    let err = DiskStore::open(&path).err().expect("garbage accepted");
    assert!(matches!(err, CacheError::Corrupt(_)), "{err}");
    // Garbage after a valid-looking magic string.
    let mut fake = b"SQLite format 3\0".to_vec();
    fake.extend_from_slice(&garbage[..4096 * 2 - 16]);
    std::fs::write(&path, &fake).unwrap();
    assert!(DiskStore::open(&path).is_err());
    let mut c = TieredCache::new(&memory_only_cfg(path.clone()));
    assert_continues_without_disk(&mut c);
    assert!(c.warnings()[0].contains(&path.display().to_string()));
}

fn populated(dir: &Path) -> PathBuf {
    let path = dir.join("results.sqlite3");
    let mut s = DiskStore::open(&path).unwrap();
    for i in 0..5000 {
        s.put(&key(7, i), &entry(7, i)).unwrap();
    }
    s.flush().unwrap();
    drop(s);
    // The last connection closing checkpoints and removes the WAL.
    assert!(!dir.join("results.sqlite3-wal").exists());
    path
}

#[test]
fn disk_truncated_file_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let len = std::fs::metadata(&path).unwrap().len();
    for new_len in [len / 2 / 4096 * 4096, len / 2 + 100, 4096, 50] {
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(new_len).unwrap();
        drop(f);
        match DiskStore::open(&path) {
            Err(e) => eprintln!("truncated to {new_len}: {e}"),
            Ok(_) => panic!("file truncated to {new_len} of {len} bytes accepted"),
        }
    }
    let mut c = TieredCache::new(&memory_only_cfg(path));
    assert_continues_without_disk(&mut c);
}

#[test]
fn disk_read_only_file_and_dir() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = DiskStore::open(&path)
        .err()
        .expect("read-only file accepted");
    assert!(matches!(err, CacheError::ReadOnly(_)), "{err}");
    let mut c = TieredCache::new(&memory_only_cfg(path.clone()));
    assert_continues_without_disk(&mut c);
    drop(c);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();

    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let r = DiskStore::open(&path);
    let r2 = DiskStore::open(dir.path().join("new.sqlite3"));
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(matches!(r, Err(CacheError::ReadOnly(_))));
    assert!(matches!(r2, Err(CacheError::ReadOnly(_))));
}

#[test]
fn disk_locked_past_busy_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite3");
    let store = DiskStore::open_with(&path, Duration::from_millis(200), 1).unwrap();
    // Another "process" holds the write lock.
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO meta(name, value) VALUES ('x', 1);")
        .unwrap();

    let mut c = TieredCache::from_parts(MemoryStore::new(100, 1 << 20), Some(store), None);
    // Each write due waits out the busy timeout; the first BUSY_ATTEMPTS - 1 failures only
    // defer it (after FLUSH_INTERVAL, then twice that), the next gives the tier up.
    for i in 0..BUSY_ATTEMPTS {
        if i > 0 {
            std::thread::sleep(FLUSH_INTERVAL * (1 << (i - 1)) + Duration::from_millis(20));
        }
        let t = Instant::now();
        c.put(&key(1, i), &Entry::unsat());
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "blocked {:?}",
            t.elapsed()
        );
        if i + 1 < BUSY_ATTEMPTS {
            assert_eq!(c.active_tiers(), vec!["memory", "disk"], "write {i}");
            assert!(c.warnings().is_empty(), "{:?}", c.warnings());
        }
    }
    assert_eq!(c.get(&key(1, 1)), Some(Entry::unsat()));
    assert_eq!(c.get(&key(9, 9)), None);
    assert_eq!(c.active_tiers(), vec!["memory"]);
    assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
    assert!(c.warnings()[0].contains("locked"), "{}", c.warnings()[0]);
    other.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn disk_full_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite3");
    let store = DiskStore::open_with(&path, Duration::from_millis(200), 8).unwrap();
    store.set_max_page_count(8).unwrap();
    let mut c = TieredCache::from_parts(MemoryStore::new(10_000, 1 << 30), Some(store), None);
    let big = "m".repeat(2000);
    for i in 0..200 {
        c.put(&key(3, i), &Entry::sat(Some(big.clone())));
    }
    c.flush();
    assert_eq!(c.active_tiers(), vec!["memory"]);
    assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
    assert!(c.warnings()[0].contains("full"), "{}", c.warnings()[0]);
    assert_eq!(c.get(&key(3, 199)), Some(Entry::sat(Some(big))));
}

/// Record another format version in a store's `meta` table, as another build would.
fn set_format_version(path: &Path, v: i64) {
    rusqlite::Connection::open(path)
        .unwrap()
        .execute(
            "UPDATE meta SET value = ?1 WHERE name = 'format_version'",
            [v],
        )
        .unwrap();
}

#[test]
fn disk_other_format_version_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    // 2 and 3 are this build's (3 what it makes); 4 is a later build's.
    set_format_version(&path, 4);
    let err = DiskStore::open(&path)
        .err()
        .expect("version 4 store accepted");
    assert!(
        matches!(
            err,
            CacheError::Version {
                found: 4,
                expected: 3
            }
        ),
        "{err}"
    );
}

/// A store written by a build of format 1 (entries without checksums) is emptied and
/// upgraded at open: its entries are not served, later ones are kept.
#[test]
fn disk_format_1_store_emptied_and_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    set_format_version(&path, 1);
    let raw = rusqlite::Connection::open(&path).unwrap();
    // What format 1 wrote for an unsat entry: version, verdict, no model.
    raw.execute(
        "UPDATE results SET value = x'010200' WHERE key = ?1",
        [&key(7, 1).0[..]],
    )
    .unwrap();
    drop(raw);
    let mut s = DiskStore::open(&path).expect("format 1 store opens");
    assert_eq!(s.get(&key(7, 1)).unwrap(), None);
    assert_eq!(s.get(&key(7, 2)).unwrap(), None);
    s.put(&key(8, 1), &entry(8, 1)).unwrap();
    s.flush().unwrap();
    drop(s);
    let raw = rusqlite::Connection::open(&path).unwrap();
    let (version, rows): (i64, i64) = raw
        .query_row(
            "SELECT (SELECT value FROM meta WHERE name = 'format_version'),
                    (SELECT count(*) FROM results)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((version, rows), (2, 1));
    drop(raw);
    let mut s = DiskStore::open(&path).unwrap();
    assert_eq!(s.get(&key(8, 1)).unwrap(), Some(entry(8, 1)));
}

/// An entry moved under another key (a damaged index, a hand edit, a bad copy between
/// stores) fails its checksum: a miss with one warning, never that entry's verdict.
#[test]
fn disk_entry_under_another_key_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE results SET value = (SELECT value FROM results WHERE key = ?1) WHERE key = ?2",
        [&key(7, 1).0[..], &key(7, 2).0[..]],
    )
    .unwrap();
    drop(raw);
    let mut s = DiskStore::open(&path).unwrap();
    let err = s
        .get(&key(7, 2))
        .expect_err("entry under another key accepted");
    assert!(
        err.is_entry_error() && err.to_string().contains("checksum"),
        "{err}"
    );
    assert_eq!(s.get(&key(7, 1)).unwrap(), Some(entry(7, 1)));
    drop(s);
    let mut c = TieredCache::new(&memory_only_cfg(path));
    assert_eq!(c.get(&key(7, 2)), None);
    assert_eq!(c.get(&key(7, 3)), Some(entry(7, 3)));
    assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
}

#[test]
fn disk_unreadable_entry_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated(dir.path());
    let bad = key(7, 1);
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE results SET value = x'09010000' WHERE key = ?1",
        [&bad.0[..]],
    )
    .unwrap();
    drop(raw);
    let mut s = DiskStore::open(&path).unwrap();
    let err = s.get(&bad).expect_err("version 9 entry accepted");
    assert!(err.is_entry_error());
    drop(s);
    let mut c = TieredCache::new(&memory_only_cfg(path));
    assert_eq!(c.get(&bad), None);
    assert_eq!(c.get(&bad), None);
    assert_eq!(c.get(&key(7, 2)), Some(entry(7, 2)));
    assert_eq!(c.active_tiers(), vec!["memory", "disk"]);
    assert_eq!(c.warnings().len(), 1);
    assert_eq!(c.stats().disk_hits, 1);
}

fn log_len(path: &Path) -> Option<u64> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).ok().map(|m| m.len())
}

/// A close leaves a small write-ahead log in place (no checkpoint); the entries in it are
/// the store's for every reader (a plain SQLite connection, the next DiskStore). A log
/// past KEPT_LOG_BYTES is checkpointed into the file and removed at close.
#[test]
fn a_small_log_is_kept_at_close_and_read_with_the_file() {
    use smtproxy::cache::disk::KEPT_LOG_BYTES;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite3");
    let mut s = DiskStore::open(&path).unwrap();
    for i in 0..20 {
        s.put(&key(1, i), &entry(1, i)).unwrap();
    }
    drop(s);
    let kept = log_len(&path).expect("the log is kept");
    assert!(kept > 0 && kept <= KEPT_LOG_BYTES, "log {kept} bytes");
    let c = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM results", [], |r| r.get(0))
        .unwrap();
    drop(c);
    assert_eq!(n, 20);
    let mut s = DiskStore::open(&path).unwrap();
    for i in 0..20 {
        assert_eq!(s.get(&key(1, i)).unwrap(), Some(entry(1, i)), "entry {i}");
    }
    // Enough to pass the kept size: checkpointed and removed at close.
    for i in 0..20_000 {
        s.put(&key(2, i), &entry(2, i)).unwrap();
    }
    s.flush().unwrap();
    assert!(
        log_len(&path).unwrap_or(0) > KEPT_LOG_BYTES,
        "the log grew past the kept size"
    );
    drop(s);
    assert_eq!(log_len(&path), None, "a large log is removed at close");
    let mut s = DiskStore::open(&path).unwrap();
    assert_eq!(s.get(&key(2, 19_999)).unwrap(), Some(entry(2, 19_999)));
}
