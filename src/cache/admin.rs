//! Looking after a store: `smtproxy cache stats|prune|export|import` on the on-disk
//! store (and `stats`, `export`, `import` on a Redis store), for the person who keeps a
//! shared store.
//!
//! * Every operation opens the store as smtproxy does ([`DiskStore::open`]), so an older
//!   store is migrated first and a newer or damaged one is refused, never misread.
//! * Export is portable text: JSON lines, first a header ([`ExportHeader`]: export,
//!   entry-format, schema and key-format versions), then one [`ExportLine`] per entry in
//!   key order: key, the entry's bytes in hex (in format 2 whatever the store holds, and
//!   written in the store's format on import; checksummed under its key), its verdict
//!   and model spelled out for people and tools, and its worth (solve time, hits, last
//!   use, creation). Redis exports carry no worth (zeros) and no tags.
//! * Import merges: first writer wins (an entry already present is kept as it is), and
//!   every line is checked before it is written: the header's versions must be this
//!   build's, the entry's bytes must decode under its key, and the spelled-out verdict
//!   and model must agree with them. A line that fails is counted in
//!   [`ImportReport::rejected`] and skipped, never written. Into Redis, entries are
//!   tagged with the fleet secret given to the import (an importer without it writes
//!   unsat entries no reader trusts).
//! * Prune deletes by a bound on the file, by days since last use, or below a worth,
//!   then gives the space back (`VACUUM`).

use super::disk::{enforce_bound, kind_priors, unix_now, WORTH_SQL};
use super::{
    CacheError, DiskStore, Entry, FleetSecret, Key, Verdict, FORMAT_VERSION, SCHEMA_VERSION,
};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;

/// The version of the export's line format.
pub const EXPORT_VERSION: u32 = 1;

/// What `cache stats` reports (fields may be added, never renamed or removed).
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub store: String,
    pub entries: u64,
    pub sat: u64,
    pub unsat: u64,
    /// Sat entries that hold a model.
    pub models: u64,
    /// Bytes on disk: the file and its write-ahead log (Redis: `used_memory`).
    pub bytes: u64,
    /// Bytes of the entries themselves.
    pub entry_bytes: u64,
    pub format_version: u8,
    /// The tables' version (0 for Redis, which has none).
    pub schema_version: i64,
    pub key_format_version: u32,
    /// Hits read from this store, in all, and entries hit at least once.
    pub hits: u64,
    pub entries_hit: u64,
    /// Solver time the entries took, in all (the time a hit of each saves).
    pub solve_ms: u64,
    /// Unix seconds of the oldest entry's creation and of the latest use (0: none).
    pub oldest_created: i64,
    pub last_used: i64,
    /// Redis: unsat entries carrying a fleet tag (trusted only where the secret is held).
    pub tagged: u64,
    /// Bytes of the trie of repeated blocks kept beside the file (`<store>.trie`,
    /// `session::repeat`; 0: none, and for Redis). Deleting that file loses no entry: the
    /// next session builds the trie again.
    pub trie_bytes: u64,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub struct ExportHeader {
    pub smtproxy_export: u32,
    pub format_version: u8,
    pub schema_version: i64,
    pub key_format_version: u32,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ExportLine {
    pub key: String,
    /// [`Entry::encode`] under `key`, in hex.
    pub entry: String,
    pub verdict: String,
    pub model: Option<String>,
    #[serde(default)]
    pub solve_ms: u64,
    #[serde(default)]
    pub hits: u64,
    #[serde(default)]
    pub last_used: i64,
    #[serde(default)]
    pub created: i64,
}

/// What an import did.
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Entries written.
    pub imported: u64,
    /// Entries whose key the store already held (kept as they were).
    pub present: u64,
    /// Lines refused (damaged, inconsistent, or not an entry).
    pub rejected: u64,
}

/// What a prune did.
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub struct PruneReport {
    pub deleted: u64,
    pub entries: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// Which entries `prune` deletes; every given criterion applies.
#[derive(Debug, Default, Clone)]
pub struct Prune {
    /// Entries not used for this many days.
    pub unused_days: Option<f64>,
    /// Entries whose worth ([`WORTH_SQL`]) is below this.
    pub below_worth: Option<f64>,
    /// Then, lowest worth first, until the store's files fit in this many bytes: the file
    /// is pruned to its share ([`super::budget::Budget::split`]), and a trie file larger
    /// than its share is removed (it holds no entry; the next run builds it again).
    pub max_bytes: Option<u64>,
}

/// Why an admin operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(transparent)]
    Store(#[from] CacheError),
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("not an smtproxy export: {0}")]
    NotAnExport(String),
    #[error("export of another version ({0}); this build reads {1}")]
    ExportVersion(String, String),
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn key_of(blob: &[u8]) -> Option<Key> {
    Some(Key(blob.try_into().ok()?))
}

fn disk_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len()) + super::disk::log_bytes(path)
}

/// `cache stats` of the on-disk store at `path`.
pub fn disk_stats(path: &Path) -> Result<StoreStats, AdminError> {
    let store = DiskStore::open(path)?;
    let c = store.conn();
    let (entries, sat, unsat, models, entry_bytes, hits, entries_hit, solve_ms, oldest, last): (
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
        i64,
    ) = c.query_row(
        "SELECT count(*),
                coalesce(sum(substr(value, 2, 1) = x'01'), 0),
                coalesce(sum(substr(value, 2, 1) = x'02'), 0),
                coalesce(sum(substr(value, 2, 1) = x'01' AND substr(value, 3, 1) = x'01'), 0),
                coalesce(sum(length(value) + length(key)), 0),
                coalesce(sum(hits), 0), coalesce(sum(hits > 0), 0), coalesce(sum(solve_ms), 0),
                coalesce(min(created), 0), coalesce(max(last_used), 0)
           FROM results",
        [],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
            ))
        },
    )?;
    let n = |v: i64| v.max(0) as u64;
    Ok(StoreStats {
        store: path.display().to_string(),
        entries: n(entries),
        sat: n(sat),
        unsat: n(unsat),
        models: n(models),
        bytes: disk_bytes(path),
        entry_bytes: n(entry_bytes),
        format_version: store.format(),
        schema_version: SCHEMA_VERSION,
        key_format_version: crate::query::key::KEY_FORMAT_VERSION,
        hits: n(hits),
        entries_hit: n(entries_hit),
        solve_ms: n(solve_ms),
        oldest_created: oldest,
        last_used: last,
        tagged: 0,
        trie_bytes: std::fs::metadata(super::sidecar::path_for(path, "trie"))
            .map_or(0, |m| m.len()),
    })
}

/// `cache prune` of the on-disk store at `path`.
pub fn disk_prune(path: &Path, how: &Prune) -> Result<PruneReport, AdminError> {
    let bytes_before = disk_bytes(path);
    let store = DiskStore::open(path)?;
    let c = store.conn();
    let now = unix_now();
    let mut deleted = 0u64;
    if let Some(days) = how.unused_days {
        let cutoff = now - (days * 86400.0) as i64;
        deleted += c.execute("DELETE FROM results WHERE last_used < ?1", [cutoff])? as u64;
    }
    if let Some(w) = how.below_worth {
        let (own, twin) = kind_priors(c)?;
        deleted += c.execute(
            &format!("DELETE FROM results WHERE {WORTH_SQL} < ?4"),
            params![now, own, twin, w],
        )? as u64;
    }
    if deleted > 0 {
        c.execute_batch("PRAGMA auto_vacuum=INCREMENTAL; VACUUM;")?;
        let _ = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
    if let Some(m) = how.max_bytes {
        let share = super::budget::Budget::split(m);
        deleted += enforce_bound(c, share.file, 0)?;
        let trie = super::sidecar::path_for(path, "trie");
        if std::fs::metadata(&trie).is_ok_and(|t| t.len() > share.trie) {
            std::fs::remove_file(&trie).map_err(CacheError::from)?;
        }
    }
    let entries: i64 = c.query_row("SELECT count(*) FROM results", [], |r| r.get(0))?;
    drop(store);
    Ok(PruneReport {
        deleted,
        entries: entries.max(0) as u64,
        bytes_before,
        bytes_after: disk_bytes(path),
    })
}

fn header() -> ExportHeader {
    ExportHeader {
        smtproxy_export: EXPORT_VERSION,
        format_version: FORMAT_VERSION,
        schema_version: SCHEMA_VERSION,
        key_format_version: crate::query::key::KEY_FORMAT_VERSION,
    }
}

fn line_of(k: &Key, bytes: &[u8], worth: [i64; 4]) -> Result<ExportLine, CacheError> {
    let e = Entry::decode(k, bytes)?;
    Ok(ExportLine {
        key: k.to_hex(),
        // In format 2 whatever the store holds: an export is read by any build.
        entry: hex(&e.encode(k)),
        verdict: match e.verdict {
            Verdict::Sat => "sat".into(),
            Verdict::Unsat => "unsat".into(),
        },
        model: e.model,
        solve_ms: worth[0].max(0) as u64,
        hits: worth[1].max(0) as u64,
        last_used: worth[2],
        created: worth[3],
    })
}

/// `cache export` of the on-disk store at `path` to `out`; returns the entries written
/// (an entry that does not decode is left out and counted in the second number).
pub fn disk_export(path: &Path, out: &mut dyn Write) -> Result<(u64, u64), AdminError> {
    let store = DiskStore::open(path)?;
    let c = store.conn();
    serde_json::to_writer(&mut *out, &header()).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    let mut stmt = c.prepare(
        "SELECT key, value, solve_ms, hits, last_used, created FROM results ORDER BY key",
    )?;
    let mut rows = stmt.query([])?;
    let (mut n, mut bad) = (0u64, 0u64);
    while let Some(r) = rows.next()? {
        let kb: Vec<u8> = r.get(0)?;
        let v: Vec<u8> = r.get(1)?;
        let worth = [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?];
        match key_of(&kb).map(|k| line_of(&k, &v, worth)) {
            Some(Ok(l)) => {
                serde_json::to_writer(&mut *out, &l).map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
                n += 1;
            }
            _ => bad += 1,
        }
    }
    out.flush()?;
    Ok((n, bad))
}

/// Reads and checks an export's header line.
fn read_header(lines: &mut dyn Iterator<Item = std::io::Result<String>>) -> Result<(), AdminError> {
    let first = lines
        .next()
        .transpose()?
        .ok_or_else(|| AdminError::NotAnExport("empty input".into()))?;
    let h: ExportHeader = serde_json::from_str(&first)
        .map_err(|e| AdminError::NotAnExport(format!("header: {e}")))?;
    let want = header();
    if h != want {
        return Err(AdminError::ExportVersion(
            serde_json::to_string(&h).unwrap_or_default(),
            serde_json::to_string(&want).unwrap_or_default(),
        ));
    }
    Ok(())
}

/// A checked line: the key, the entry's bytes and the entry.
fn check_line(text: &str) -> Option<(Key, Vec<u8>, Entry, ExportLine)> {
    let l: ExportLine = serde_json::from_str(text).ok()?;
    let k = Key::from_hex(&l.key)?;
    let bytes = unhex(&l.entry)?;
    let e = Entry::decode(&k, &bytes).ok()?;
    let verdict = match l.verdict.as_str() {
        "sat" => Verdict::Sat,
        "unsat" => Verdict::Unsat,
        _ => return None,
    };
    (verdict == e.verdict && l.model == e.model).then_some((k, bytes, e, l))
}

/// `cache import` of an export from `input` into the on-disk store at `path`.
pub fn disk_import(path: &Path, input: &mut dyn BufRead) -> Result<ImportReport, AdminError> {
    let mut lines = input.lines();
    read_header(&mut lines)?;
    let mut store = DiskStore::open(path)?;
    let format = store.format();
    let mut report = ImportReport::default();
    let c = store.conn_mut();
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut has = tx.prepare("SELECT 1 FROM results WHERE key = ?1")?;
        let mut ins = tx.prepare(
            "INSERT OR IGNORE INTO results(key, value, solve_ms, hits, last_used, created)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let now = unix_now();
        for line in lines {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let Some((k, _, e, l)) = check_line(&line) else {
                report.rejected += 1;
                continue;
            };
            if has.query_row([&k.0[..]], |_| Ok(())).optional()?.is_some() {
                report.present += 1;
                continue;
            }
            let stamp = |t: i64| if t > 0 { t.min(now) } else { now };
            ins.execute(params![
                &k.0[..],
                e.encode_as(&k, format),
                l.solve_ms.min(i64::MAX as u64) as i64,
                l.hits.min(i64::MAX as u64) as i64,
                stamp(l.last_used),
                stamp(l.created)
            ])?;
            report.imported += 1;
        }
    }
    tx.commit()?;
    Ok(report)
}

/// Every smtproxy key in the Redis store at `url`, with its value.
fn redis_entries(
    url: &str,
    mut each: impl FnMut(Key, Vec<u8>) -> Result<(), AdminError>,
) -> Result<(), AdminError> {
    let client = ::redis::Client::open(url).map_err(CacheError::from)?;
    let mut conn = client
        .get_connection_with_timeout(std::time::Duration::from_secs(5))
        .map_err(CacheError::from)?;
    let prefix = super::redis::redis_key(&Key([0; 16]));
    let prefix = &prefix[..prefix.len() - 32];
    let keys: Vec<String> = ::redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query(&mut conn)
        .map_err(CacheError::from)?;
    let mut keys = keys;
    keys.sort();
    for chunk in keys.chunks(256) {
        let vals: Vec<Option<Vec<u8>>> = ::redis::cmd("MGET")
            .arg(chunk)
            .query(&mut conn)
            .map_err(CacheError::from)?;
        for (name, v) in chunk.iter().zip(vals) {
            let (Some(k), Some(v)) = (Key::from_hex(&name[prefix.len()..]), v) else {
                continue;
            };
            each(k, v)?;
        }
    }
    Ok(())
}

/// `cache stats` of the Redis store at `url`.
pub fn redis_stats(url: &str) -> Result<StoreStats, AdminError> {
    let mut s = StoreStats {
        store: url.to_string(),
        format_version: FORMAT_VERSION,
        key_format_version: crate::query::key::KEY_FORMAT_VERSION,
        ..StoreStats::default()
    };
    redis_entries(url, |k, v| {
        let (bytes, tag) = Entry::split_encoded(&v).unwrap_or((&v[..], &[]));
        if let Ok(e) = Entry::decode(&k, bytes) {
            s.entries += 1;
            s.entry_bytes += v.len() as u64 + 16;
            match e.verdict {
                Verdict::Sat => {
                    s.sat += 1;
                    s.models += u64::from(e.model.is_some());
                }
                Verdict::Unsat => {
                    s.unsat += 1;
                    s.tagged += u64::from(!tag.is_empty());
                }
            }
        }
        Ok(())
    })?;
    let client = ::redis::Client::open(url).map_err(CacheError::from)?;
    let mut conn = client
        .get_connection_with_timeout(std::time::Duration::from_secs(5))
        .map_err(CacheError::from)?;
    let info: String = ::redis::cmd("INFO")
        .arg("memory")
        .query(&mut conn)
        .map_err(CacheError::from)?;
    s.bytes = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Ok(s)
}

/// `cache export` of the Redis store at `url`.
pub fn redis_export(url: &str, out: &mut dyn Write) -> Result<(u64, u64), AdminError> {
    serde_json::to_writer(&mut *out, &header()).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    let (mut n, mut bad) = (0u64, 0u64);
    redis_entries(url, |k, v| {
        let (bytes, _) = Entry::split_encoded(&v).unwrap_or((&v[..], &[]));
        match line_of(&k, bytes, [0; 4]) {
            Ok(l) => {
                serde_json::to_writer(&mut *out, &l).map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
                n += 1;
            }
            Err(_) => bad += 1,
        }
        Ok(())
    })?;
    out.flush()?;
    Ok((n, bad))
}

/// `cache import` of an export into the Redis store at `url` (`SET NX`), tagged under
/// `secret` when given.
pub fn redis_import(
    url: &str,
    input: &mut dyn BufRead,
    secret: Option<&FleetSecret>,
) -> Result<ImportReport, AdminError> {
    let mut lines = input.lines();
    read_header(&mut lines)?;
    let client = ::redis::Client::open(url).map_err(CacheError::from)?;
    let mut conn = client
        .get_connection_with_timeout(std::time::Duration::from_secs(5))
        .map_err(CacheError::from)?;
    let mut report = ImportReport::default();
    for line in lines {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let Some((k, mut bytes, _, _)) = check_line(&line) else {
            report.rejected += 1;
            continue;
        };
        if let Some(s) = secret {
            let tag = s.tag(&k.0, &bytes);
            bytes.extend_from_slice(&tag);
        }
        let set: Option<String> = ::redis::cmd("SET")
            .arg(super::redis::redis_key(&k))
            .arg(bytes)
            .arg("NX")
            .query(&mut conn)
            .map_err(CacheError::from)?;
        if set.is_some() {
            report.imported += 1;
        } else {
            report.present += 1;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Store;

    fn key(i: u32) -> Key {
        let mut k = [0u8; 16];
        k[..4].copy_from_slice(&i.to_le_bytes());
        Key(k)
    }

    #[test]
    fn export_import_round_trip_first_writer_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.sqlite3"), dir.path().join("b.sqlite3"));
        {
            let mut s = DiskStore::open(&a).unwrap();
            for i in 0..50 {
                let e = if i % 2 == 0 {
                    Entry::unsat()
                } else {
                    Entry::sat(Some(format!("((x #x{i:02x}))")))
                };
                s.put_costed(&key(i), &e, u64::from(i)).unwrap();
            }
            let mut t = DiskStore::open(&b).unwrap();
            t.put(&key(1), &Entry::sat(Some("((x #xff))".into())))
                .unwrap();
        }
        let mut text = Vec::new();
        assert_eq!(disk_export(&a, &mut text).unwrap(), (50, 0));
        let mut text = String::from_utf8(text).unwrap();
        // A forged line (unsat bytes under another key) and garbage are refused.
        let forged = format!(
            "{{\"key\":\"{}\",\"entry\":\"{}\",\"verdict\":\"unsat\",\"model\":null}}\n",
            key(999).to_hex(),
            hex(&Entry::unsat().encode(&key(0)))
        );
        text.push_str(&forged);
        text.push_str("{\"key\": 1}\n");
        let r = disk_import(&b, &mut text.as_bytes()).unwrap();
        assert_eq!(
            r,
            ImportReport {
                imported: 49,
                present: 1,
                rejected: 2
            }
        );
        let mut t = DiskStore::open(&b).unwrap();
        assert_eq!(
            t.get(&key(1)).unwrap(),
            Some(Entry::sat(Some("((x #xff))".into())))
        );
        assert_eq!(t.get(&key(2)).unwrap(), Some(Entry::unsat()));
        assert_eq!(t.get(&key(999)).unwrap(), None);
        let s = disk_stats(&b).unwrap();
        assert_eq!((s.entries, s.sat, s.unsat), (50, 25, 25));
        assert!(s.solve_ms >= (0..50).sum::<u64>() - 1);
    }
}
