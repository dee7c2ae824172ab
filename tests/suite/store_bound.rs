//! The on-disk store over time: a byte bound that holds (evicting what is worth least),
//! and a store written with the previous schema migrated and served.

use crate::common;

use common::redis_server::Server;
use common::store_bytes;
use rusqlite::Connection;
use smtproxy::cache::budget::Budget;
use smtproxy::cache::disk::{unix_now, DEFAULT_BATCH, NEW_PAGE_SIZE};
use smtproxy::cache::{
    DiskStore, Entry, FleetSecret, Key, MemoryStore, RedisStore, Store, TieredCache,
    COMPACT_FORMAT_VERSION, FORMAT_VERSION, SCHEMA_VERSION,
};
use std::path::Path;
use std::time::Duration;

fn key(i: u32) -> Key {
    let mut k = [0u8; 16];
    k[..4].copy_from_slice(&i.to_le_bytes());
    k[4..].copy_from_slice(b"bound-test!!");
    // Spread the keys as real hashes are.
    let h = blake3::hash(&k);
    Key(h.as_bytes()[..16].try_into().unwrap())
}

fn entry(i: u32) -> Entry {
    if i.is_multiple_of(4) {
        Entry::unsat()
    } else {
        // About 300 bytes of model, as a KLEE array model is.
        Entry::sat(Some(format!("((a{i} {}))", "#x5a".repeat(70))))
    }
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// The least store bound whose share for the SQLite file is at least `file` bytes: the
/// tests of what eviction keeps bound the file, the rest of the store being their own.
fn bound_for_file(file: u64) -> u64 {
    let (mut lo, mut hi) = (file, 4 * file + (1 << 20));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if Budget::split(mid).file >= file {
            hi = mid
        } else {
            lo = mid + 1
        }
    }
    lo
}

/// 20,000 entries (about 7 MB) into a store capped at 1 MiB: the file never passes the cap
/// by more than 10% while written (checked after every write batch), the store's files
/// together (the file, its log and the log's index) are within 10% of it once the writes
/// are done and within it after close, the entries kept are the expensive ones, and every
/// kept entry is served intact.
#[test]
fn capped_store_stays_within_its_bound() {
    capped_store(false);
}

/// The same with the writes on a thread of their own (as the engine's store writes),
/// the file checked from this thread whenever a batch was put.
#[test]
fn capped_store_stays_within_its_bound_with_writes_behind() {
    capped_store(true);
}

fn capped_store(behind: bool) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("capped.sqlite3");
    let cap: u64 = 1 << 20;
    let limit = cap + cap / 10;
    let n = 20_000u32;
    let mut worst = 0u64;
    {
        let mut s = DiskStore::open(&p)
            .unwrap()
            .with_max_bytes(Some(cap))
            .unwrap();
        if behind {
            s = s.write_behind().unwrap();
        }
        for i in 0..n {
            // Every tenth entry took a second to compute; the rest a millisecond.
            let ms = if i % 10 == 0 { 1000 } else { 1 };
            s.put_costed(&key(i), &entry(i), ms).unwrap();
            if (i as usize).is_multiple_of(DEFAULT_BATCH) {
                // The file itself (the log may be in the middle of a transaction, or of
                // the eviction's rebuild, which goes through it).
                worst = worst.max(file_len(&p));
                assert!(file_len(&p) <= limit, "after {i}: {} bytes", file_len(&p));
            }
        }
        s.flush().unwrap();
        assert!(s.evicted() > 0);
        worst = worst.max(store_bytes(&p));
        assert!(
            store_bytes(&p) <= limit,
            "flushed: {} bytes",
            store_bytes(&p)
        );
    }
    assert!(store_bytes(&p) <= cap, "closed: {} bytes", store_bytes(&p));
    let mut s = DiskStore::open(&p).unwrap();
    let kept = s.stored_len().unwrap();
    assert!(kept > 1000, "only {kept} entries kept in {cap} bytes");
    let (mut costly, mut cheap) = (0u32, 0u32);
    for i in 0..n {
        if let Some(e) = s.get(&key(i)).unwrap() {
            assert_eq!(e, entry(i));
            if i % 10 == 0 {
                costly += 1
            } else {
                cheap += 1
            }
        }
    }
    // Nearly all of the 2,000 costly entries survive; the cheap ones made way.
    assert!(costly >= 1900, "costly kept {costly}, cheap kept {cheap}");
    eprintln!("cap {cap}: worst file {worst} bytes, kept {kept} ({costly} costly, {cheap} cheap)");
}

/// Hits count: of entries equal in cost, those read before are kept.
#[test]
fn hit_entries_outlive_unhit_ones() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hits.sqlite3");
    {
        let mut s = DiskStore::open(&p).unwrap();
        for i in 0..3000 {
            s.put_costed(&key(i), &entry(i), 5).unwrap();
        }
        s.flush().unwrap();
    }
    {
        let mut s = DiskStore::open(&p).unwrap();
        for i in (0..3000).step_by(3) {
            assert!(s.get(&key(i)).unwrap().is_some());
        }
        s.flush().unwrap();
    }
    let before = file_len(&p);
    let mut s = DiskStore::open(&p)
        .unwrap()
        .with_max_bytes(Some(bound_for_file(before / 2)))
        .unwrap();
    assert!(s.evicted() > 0);
    assert!(file_len(&p) <= before / 2 + before / 20);
    let hit_kept = (0..3000)
        .step_by(3)
        .filter(|&i| s.get(&key(i)).unwrap().is_some())
        .count();
    assert_eq!(hit_kept, 1000, "entries that had hits were evicted");
}

/// The previous schema (`results(key, value)`, no `schema_version`): migrated at open,
/// its entries served, and a build of that schema could still write to it.
#[test]
fn schema_1_store_migrates_and_serves() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.sqlite3");
    {
        let c = Connection::open(&p).unwrap();
        c.execute_batch(&format!(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
             CREATE TABLE results(key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
             INSERT INTO meta(name, value) VALUES ('format_version', {FORMAT_VERSION});"
        ))
        .unwrap();
        for i in 0..100 {
            c.execute(
                "INSERT INTO results(key, value) VALUES (?1, ?2)",
                rusqlite::params![&key(i).0[..], entry(i).encode(&key(i))],
            )
            .unwrap();
        }
    }
    {
        let mut s = DiskStore::open(&p).unwrap();
        for i in 0..100 {
            assert_eq!(s.get(&key(i)).unwrap(), Some(entry(i)), "entry {i}");
        }
        s.put_costed(&key(500), &entry(500), 7).unwrap();
        s.flush().unwrap();
    }
    let c = Connection::open(&p).unwrap();
    let v: i64 = c
        .query_row(
            "SELECT value FROM meta WHERE name='schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    let (hits, used): (i64, i64) = c
        .query_row(
            "SELECT hits, last_used FROM results WHERE key = ?1",
            [&key(3).0[..]],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(hits, 1);
    assert!((unix_now() - used).abs() < 60);
    let ms: i64 = c
        .query_row(
            "SELECT solve_ms FROM results WHERE key = ?1",
            [&key(500).0[..]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ms, 7);
    // A writer of the old schema still inserts (the new columns have defaults).
    c.execute(
        "INSERT OR IGNORE INTO results(key, value) VALUES (?1, ?2)",
        rusqlite::params![&key(900).0[..], entry(900).encode(&key(900))],
    )
    .unwrap();
    drop(c);
    let mut s = DiskStore::open(&p).unwrap();
    assert_eq!(s.get(&key(900)).unwrap(), Some(entry(900)));
}

/// A new store's fixed pages, which a small bound pays for before any entry: the header
/// and schema, the pointer map of its auto-vacuum, `meta` and the root of `results`; no
/// index page of its own for `meta` (a `WITHOUT ROWID` table). Stores made before, whose
/// `meta` has a rowid and an index, are read as they are
/// (`schema_1_store_migrates_and_serves`).
#[test]
fn a_new_store_has_four_fixed_pages() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.sqlite3");
    drop(DiskStore::open(&p).unwrap());
    let c = Connection::open(&p).unwrap();
    let pages: i64 = c.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    assert_eq!(pages, 4);
    let auto: i64 = c.query_row("PRAGMA auto_vacuum", [], |r| r.get(0)).unwrap();
    assert_eq!(auto, 2, "incremental auto-vacuum from the start");
    let indexes: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 0);
    drop(c);
    let mut s = DiskStore::open(&p).unwrap();
    s.put(&key(1), &entry(1)).unwrap();
    s.flush().unwrap();
    drop(s);
    let mut s = DiskStore::open(&p).unwrap();
    assert_eq!(s.get(&key(1)).unwrap(), Some(entry(1)));
}

/// A store of a newer schema than this build knows is refused, never misread.
#[test]
fn newer_schema_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("new.sqlite3");
    drop(DiskStore::open(&p).unwrap());
    let c = Connection::open(&p).unwrap();
    c.execute(
        "UPDATE meta SET value = ?1 WHERE name = 'schema_version'",
        [SCHEMA_VERSION + 1],
    )
    .unwrap();
    drop(c);
    let e = DiskStore::open_with(&p, Duration::from_millis(100), 1)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("schema version"), "{e}");
}

/// A small entry read again and again survives a flood of big entries that nobody reads,
/// however much more those took to compute than it did... within reason: its worth per
/// byte (hits × its cost / its bytes) is what keeps it.
#[test]
fn hot_small_entries_survive_a_flood_of_cold_big_ones() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hot.sqlite3");
    let hot: Vec<u32> = (0..200).map(|i| i * 4).collect(); // unsat: a few bytes each
    {
        let mut s = DiskStore::open(&p).unwrap();
        for &i in &hot {
            s.put_costed(&key(i), &entry(i), 2).unwrap();
        }
        s.flush().unwrap();
    }
    // Read by three runs (each counts one hit: later reads come from memory).
    for _ in 0..3 {
        let mut s = DiskStore::open(&p).unwrap();
        for &i in &hot {
            assert!(s.get(&key(i)).unwrap().is_some());
        }
        s.flush().unwrap();
    }
    let cap: u64 = 256 << 10;
    let mut s = DiskStore::open(&p)
        .unwrap()
        .with_max_bytes(Some(cap))
        .unwrap();
    // 5,000 cold sat entries of about 300 bytes (several times the cap), each twice as
    // costly as a hot one.
    for i in 0..5000u32 {
        let i = 100_000 + i * 4 + 1;
        s.put_costed(&key(i), &entry(i), 4).unwrap();
    }
    s.flush().unwrap();
    assert!(s.evicted() > 3000, "evicted {}", s.evicted());
    assert!(file_len(&p) <= cap + cap / 10, "{} bytes", file_len(&p));
    let kept = hot
        .iter()
        .filter(|&&i| s.get(&key(i)).unwrap() == Some(entry(i)))
        .count();
    assert_eq!(kept, hot.len(), "hot entries evicted by cold ones");
}

/// Entries of equal worth: those already in the store are not displaced by newcomers, so
/// that a workload larger than the store (a replay of many logs) keeps a stable part of
/// itself rather than cycling through all of it and finding nothing on its next pass.
#[test]
fn incumbents_outlast_newcomers_of_equal_worth() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cyclic.sqlite3");
    let cap: u64 = 512 << 10;
    {
        let mut s = DiskStore::open(&p)
            .unwrap()
            .with_max_bytes(Some(cap))
            .unwrap();
        for i in 0..600u32 {
            s.put_costed(&key(i), &entry(i * 4 + 1), 3).unwrap();
        }
        s.flush().unwrap();
        assert_eq!(s.evicted(), 0, "the first pass fits");
    }
    // The first pass was written a minute ago.
    let c = Connection::open(&p).unwrap();
    c.execute(
        "UPDATE results SET created = created - 60, last_used = last_used - 60",
        [],
    )
    .unwrap();
    drop(c);
    let mut s = DiskStore::open(&p)
        .unwrap()
        .with_max_bytes(Some(cap))
        .unwrap();
    for i in 10_000..14_000u32 {
        s.put_costed(&key(i), &entry(i * 4 + 1), 3).unwrap();
    }
    s.flush().unwrap();
    assert!(s.evicted() > 1000, "evicted {}", s.evicted());
    let old = (0..600u32)
        .filter(|&i| s.get(&key(i)).unwrap().is_some())
        .count();
    assert!(old >= 550, "only {old} of 600 incumbents kept");
}

/// The worth's prior follows the store: where the twins (exact keys) take the hits, an
/// unread twin outlasts an unread entry of the other kind of the same cost and size; and
/// the other way round where the canonical entries take them.
#[test]
fn the_kind_that_is_read_is_kept() {
    for twins_read in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("kinds.sqlite3");
        {
            let mut s = DiskStore::open(&p).unwrap();
            for i in 0..2000u32 {
                s.put_worth(&key(i), &entry(i * 4 + 1), 3, i % 2 == 1)
                    .unwrap();
            }
            s.flush().unwrap();
        }
        {
            // The first half is read: its twins, or its other entries.
            let mut s = DiskStore::open(&p).unwrap();
            for i in (0..1000u32).filter(|i| (i % 2 == 1) == twins_read) {
                assert!(s.get(&key(i)).unwrap().is_some());
            }
            s.flush().unwrap();
        }
        let before = file_len(&p);
        let mut s = DiskStore::open(&p)
            .unwrap()
            .with_max_bytes(Some(bound_for_file(before * 45 / 100)))
            .unwrap();
        assert!(s.evicted() > 0);
        // Of the unread second half, the entries of the kind that is read are kept.
        let (mut twins, mut own) = (0, 0);
        for i in 1000..2000u32 {
            if s.get(&key(i)).unwrap().is_some() {
                if i % 2 == 1 {
                    twins += 1
                } else {
                    own += 1
                }
            }
        }
        let (read, unread) = if twins_read {
            (twins, own)
        } else {
            (own, twins)
        };
        assert!(
            read >= 400 && unread * 4 <= read,
            "twins read {twins_read}: kept {read} of the read kind, {unread} of the other"
        );
    }
}

/// A Redis hit copied to disk was computed on another machine, at a cost this file never
/// saw: it is written with the mean cost of the file's own entries and the hit that found
/// it, so under the bound it outlasts the file's unread entries of that cost instead of
/// going first (as an entry of cost 0 and no hits would).
#[test]
fn a_redis_hit_copied_to_disk_keeps_its_worth() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("copied.sqlite3");
    {
        // The file's own entries: 10 and 30 ms, a mean of 20.
        let mut s = DiskStore::open(&p).unwrap();
        for i in 0..400u32 {
            let ms = if i % 2 == 0 { 10 } else { 30 };
            s.put_costed(&key(i), &entry(i * 4 + 1), ms).unwrap();
        }
        s.flush().unwrap();
    }
    let server = Server::start();
    let secret = || Some(FleetSecret::from_bytes(b"store_bound test secret").unwrap());
    let copied = 1000..1200u32;
    {
        let mut r = RedisStore::connect(&server.url())
            .unwrap()
            .with_secret(secret());
        for i in copied.clone() {
            r.put(&key(i), &entry(i * 4 + 1)).unwrap();
        }
        r.flush().unwrap();
    }
    {
        let disk = DiskStore::open(&p).unwrap();
        let redis = RedisStore::connect(&server.url())
            .unwrap()
            .with_secret(secret());
        let mut c = TieredCache::from_parts(MemoryStore::new(16, 1 << 20), Some(disk), Some(redis));
        for i in copied.clone() {
            assert_eq!(c.get(&key(i)), Some(entry(i * 4 + 1)), "entry {i}");
        }
        assert_eq!(c.stats().redis_hits, copied.len() as u64);
        c.flush();
    }
    {
        let conn = Connection::open(&p).unwrap();
        for i in copied.clone() {
            let (ms, hits, twin): (i64, i64, i64) = conn
                .query_row(
                    "SELECT solve_ms, hits, twin FROM results WHERE key = ?1",
                    [&key(i).0[..]],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            assert_eq!((ms, hits, twin), (20, 1, 0), "copied entry {i}");
        }
    }
    // Half the file: the copies (worth 21 x (1 + prior)) stay, the unread own entries
    // (11 or 31 x prior) go.
    let before = file_len(&p);
    let mut s = DiskStore::open(&p)
        .unwrap()
        .with_max_bytes(Some(bound_for_file(before / 2)))
        .unwrap();
    assert!(s.evicted() > 0);
    let kept = copied
        .clone()
        .filter(|&i| s.get(&key(i)).unwrap().is_some())
        .count();
    assert!(
        kept * 10 >= copied.len() * 9,
        "kept {kept} of {} copies",
        copied.len()
    );
}

/// A store made by this build: 1 KiB pages (its four fixed pages take 4 KiB of a bound,
/// not 16) and entries in the compact format 3, recorded in `meta`; a KLEE array model
/// takes well under half its format-2 bytes, and reads back as written.
#[test]
fn a_new_store_has_small_pages_and_compact_entries() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("new.sqlite3");
    let model = "(store (store (store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000022 #x22) #x00000027 #x27) #x00000045 #x1b)\n";
    let e = Entry::sat(Some(model.into()));
    {
        let mut s = DiskStore::open(&p).unwrap();
        assert_eq!(s.format(), COMPACT_FORMAT_VERSION);
        s.put(&key(1), &e).unwrap();
        s.put(&key(2), &Entry::unsat()).unwrap();
    }
    let c = Connection::open(&p).unwrap();
    let page: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    assert_eq!(page, i64::from(NEW_PAGE_SIZE));
    assert_eq!(NEW_PAGE_SIZE, 1024);
    let format: i64 = c
        .query_row(
            "SELECT value FROM meta WHERE name = 'format_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(format, i64::from(COMPACT_FORMAT_VERSION));
    let v: Vec<u8> = c
        .query_row(
            "SELECT value FROM results WHERE key = ?1",
            [&key(1).0[..]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v[0], COMPACT_FORMAT_VERSION);
    assert!(v.len() * 2 < e.encode(&key(1)).len(), "{} bytes", v.len());
    drop(c);
    let mut s = DiskStore::open(&p).unwrap();
    assert_eq!(s.get(&key(1)).unwrap(), Some(e));
    assert_eq!(s.get(&key(2)).unwrap(), Some(Entry::unsat()));
}

/// A store made before format 3 (format-2 entries, 4 KiB pages) is read as it is and
/// keeps its format and page size: what this build writes to it is format 2, so the
/// builds that read only format 2 still share it. A damaged entry in it is an error for
/// that key (a miss for the cache), never a value.
#[test]
fn a_format_2_store_keeps_its_format_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v2.sqlite3");
    {
        let c = Connection::open(&p).unwrap();
        c.execute_batch(&format!(
            "PRAGMA page_size=4096; PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL;
             CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
             CREATE TABLE results(key BLOB PRIMARY KEY, value BLOB NOT NULL,
               solve_ms INTEGER NOT NULL DEFAULT 0, hits INTEGER NOT NULL DEFAULT 0,
               last_used INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL DEFAULT 0,
               twin INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
             INSERT INTO meta(name, value) VALUES ('format_version', {FORMAT_VERSION});
             INSERT INTO meta(name, value) VALUES ('schema_version', {SCHEMA_VERSION});"
        ))
        .unwrap();
        for i in 0..50 {
            c.execute(
                "INSERT INTO results(key, value) VALUES (?1, ?2)",
                rusqlite::params![&key(i).0[..], entry(i).encode(&key(i))],
            )
            .unwrap();
        }
        let mut bad = entry(7).encode(&key(7));
        let n = bad.len();
        bad[n / 2] ^= 4;
        c.execute(
            "UPDATE results SET value = ?2 WHERE key = ?1",
            rusqlite::params![&key(7).0[..], bad],
        )
        .unwrap();
    }
    {
        let mut s = DiskStore::open(&p).unwrap();
        assert_eq!(s.format(), FORMAT_VERSION);
        for i in (0..50).filter(|i| *i != 7) {
            assert_eq!(s.get(&key(i)).unwrap(), Some(entry(i)), "entry {i}");
        }
        assert!(s.get(&key(7)).is_err(), "a damaged entry is never served");
        s.put(&key(100), &entry(100)).unwrap();
    }
    let c = Connection::open(&p).unwrap();
    let page: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    assert_eq!(page, 4096);
    let v: Vec<u8> = c
        .query_row(
            "SELECT value FROM results WHERE key = ?1",
            [&key(100).0[..]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, entry(100).encode(&key(100)), "written in format 2");
    let format: i64 = c
        .query_row(
            "SELECT value FROM meta WHERE name = 'format_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(format, i64::from(FORMAT_VERSION));
}
