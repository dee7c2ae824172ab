//! Faults of the result store, through the real binary: an on-disk store that is corrupt,
//! truncated, read-only, locked by another process or on a full disk; eight smtproxy
//! processes sharing one store; Redis killed and restarted in the middle of a session.
//! In every case smtproxy must warn once, answer every query right, not hang, exit 0,
//! and never lose or corrupt what the store already held.

use crate::common;

use common::redis_server::Server;
use common::{bin, corpus, field, replay_json_cmd, run_cmd, summary, tail, Out, Session};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bound on one smtproxy run of the workload (it takes well under a second).
const T: Duration = Duration::from_secs(20);
/// Queries in the workload.
const N: u32 = 300;

/// Query `i` of the workload over 16-bit `x`, `y` and its answer: `x = i, x + y = 7i`
/// (sat), or every third one `x < i and x > i + 7` (unsat).
/// Each needs its own solver call (different constants: no key, model or unsat subset
/// of another query applies), so each stores one entry.
fn query(i: u32) -> (String, &'static str) {
    if i % 3 == 2 {
        (
            format!(
                "(push 1)\n(assert (bvult x (_ bv{i} 16)))\n(assert (bvugt x (_ bv{} 16)))",
                i + 7
            ),
            "unsat",
        )
    } else {
        (
            format!(
                "(push 1)\n(assert (= (bvadd x y) (_ bv{} 16)))\n(assert (= x (_ bv{i} 16)))",
                (i * 7) % 65536
            ),
            "sat",
        )
    }
}

/// The script for queries `ids` (with `set-info :status`, so it is a replay log too)
/// and the answers expected.
fn workload(ids: impl IntoIterator<Item = u32>) -> (String, Vec<&'static str>) {
    let mut s = String::from(
        "(set-logic QF_BV)\n(declare-const x (_ BitVec 16))\n(declare-const y (_ BitVec 16))\n",
    );
    let mut want = Vec::new();
    for i in ids {
        let (q, a) = query(i);
        s.push_str(&q);
        s.push_str(&format!("\n(set-info :status {a})\n(check-sat)\n(pop 1)\n"));
        want.push(a);
    }
    (s, want)
}

/// `smtproxy --solver z3 --strategy hybrid --cache CACHE --stats` on the whole workload.
fn run_workload(cache: &str, limit_file_size: Option<u64>) -> Out {
    let mut cmd = Command::new(bin());
    cmd.args([
        "--solver",
        "z3",
        "--strategy",
        "hybrid",
        "--cache",
        cache,
        "--stats",
    ]);
    if let Some(bytes) = limit_file_size {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child here.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    run_cmd(cmd, workload(0..N).0.as_bytes(), T)
}

fn warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .map(str::to_string)
        .collect()
}

/// Every answer right, no hang, exit 0, exactly one warning, about this store and
/// containing `why`.
fn assert_survived(what: &str, out: &Out, store: &Path, why: &str) {
    out.assert_no_panic_no_hang(what);
    let err = out.stderr_str();
    assert_eq!(
        out.code(),
        Some(0),
        "{what}: exit status; stderr:\n{}",
        tail(&err)
    );
    assert_eq!(
        out.lines(),
        workload(0..N).1,
        "{what}: answers; stderr:\n{}",
        tail(&err)
    );
    let w = warnings(&err);
    assert_eq!(
        w.len(),
        1,
        "{what}: expected exactly one warning, got:\n{}",
        tail(&err)
    );
    assert!(
        w[0].contains(&format!("disk cache at {}", store.display())),
        "{what}: warning does not name the store: {}",
        w[0]
    );
    assert!(
        w[0].contains(why),
        "{what}: warning does not say {why:?}: {}",
        w[0]
    );
    let s = summary(&err);
    assert_eq!(field(&s, "queries"), u64::from(N), "{what}: {s}");
    assert_eq!(field(&s, "unknown"), 0, "{what}: {s}");
    assert!(
        out.elapsed < Duration::from_secs(10),
        "{what}: took {:?}",
        out.elapsed
    );
}

/// A store populated by a normal run of the workload (checkpointed: no WAL left).
fn populated(dir: &Path) -> PathBuf {
    let path = dir.join("results.sqlite3");
    let out = run_workload(&path.display().to_string(), None);
    out.assert_no_panic_no_hang("populating run");
    assert_eq!(out.code(), Some(0), "populating run: {}", out.stderr_str());
    assert!(
        warnings(&out.stderr_str()).is_empty(),
        "populating run: {}",
        out.stderr_str()
    );
    assert_eq!(
        rows(&path),
        ROWS_PER_RESULT * i64::from(N),
        "populating run did not store every result"
    );
    assert!(!dir.join("results.sqlite3-wal").exists());
    path
}

/// Rows a result takes in the store: its canonical key and its exact key,
/// written in that order.
const ROWS_PER_RESULT: i64 = 2;

fn rows(path: &Path) -> i64 {
    let c = rusqlite::Connection::open(path).expect("open store");
    c.query_row("SELECT count(*) FROM results", [], |r| r.get(0))
        .expect("count")
}

fn integrity_ok(path: &Path) {
    let c = rusqlite::Connection::open(path).expect("open store");
    let r: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(r, "ok", "{}: integrity_check", path.display());
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Deterministic noise.
fn garbage(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_add(seed).wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

#[test]
fn store_corrupt() {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    // (1) Not SQLite at all.
    let path = dir.path().join("garbage.sqlite3");
    std::fs::write(&path, garbage(20_000, 1)).unwrap();
    let out = run_workload(&path.display().to_string(), None);
    assert_survived("garbage file", &out, &path, "corrupt");
    assert_eq!(
        bytes(&path),
        garbage(20_000, 1),
        "smtproxy modified a file that is not its store"
    );

    // (2) A valid header over garbage pages (what a half-overwritten store looks like).
    let good = populated(dir.path());
    let mut b = bytes(&good);
    let keep = 4096.min(b.len());
    let noise = garbage(b.len() - keep, 2);
    b[keep..].copy_from_slice(&noise);
    let path = dir.path().join("garbage-pages.sqlite3");
    std::fs::write(&path, &b).unwrap();
    let out = run_workload(&path.display().to_string(), None);
    assert_survived("valid header, garbage pages", &out, &path, "unavailable");

    // (3) Only the last pages (B-tree leaves) damaged: found while the run is going on.
    let mut b = bytes(&good);
    let n = b.len();
    let noise = garbage(2 * 4096, 3);
    b[n - 2 * 4096..].copy_from_slice(&noise);
    let path = dir.path().join("garbage-leaves.sqlite3");
    std::fs::write(&path, &b).unwrap();
    let out = run_workload(&path.display().to_string(), None);
    assert_survived("damaged leaf pages", &out, &path, "unavailable");
}

#[test]
fn store_truncated() {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    let good = populated(dir.path());
    let full = bytes(&good);
    let len = full.len();
    for (name, cut) in [
        ("half", len / 2 + 100),
        ("half, whole pages", len / 2 / 4096 * 4096),
    ] {
        let path = dir.path().join(format!("cut-{cut}.sqlite3"));
        std::fs::write(&path, &full[..cut]).unwrap();
        let out = run_workload(&path.display().to_string(), None);
        assert_survived(
            &format!("store cut to {name} ({cut} of {len} bytes)"),
            &out,
            &path,
            "truncated",
        );
        assert_eq!(
            bytes(&path),
            full[..cut],
            "smtproxy modified the truncated store"
        );
    }
}

#[test]
fn store_read_only() {
    common::require("z3");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Root writes through permission bits; the store checks the bits itself, and the
        // unchanged bytes below show that it wrote nothing.
        eprintln!("note: running as root: permission bits do not stop root's writes; checking smtproxy's own refusal");
    }
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("store");
    std::fs::create_dir(&sub).unwrap();
    let path = populated(&sub);
    let before = bytes(&path);
    let set = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    for (name, file_mode, dir_mode) in [
        ("file 0444", 0o444, 0o755),
        ("directory 0555", 0o644, 0o555),
        ("both", 0o444, 0o555),
    ] {
        set(&path, file_mode);
        set(&sub, dir_mode);
        let out = run_workload(&path.display().to_string(), None);
        set(&sub, 0o755);
        set(&path, 0o644);
        assert_survived(
            &format!("read-only store ({name})"),
            &out,
            &path,
            "read-only",
        );
        assert_eq!(
            bytes(&path),
            before,
            "{name}: the read-only store was modified"
        );
        let extra: Vec<_> = std::fs::read_dir(&sub)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "results.sqlite3")
            .collect();
        assert!(
            extra.is_empty(),
            "{name}: files created next to a read-only store: {extra:?}"
        );
    }
}

#[test]
fn store_locked_by_another_process() {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    // (1) The WAL store smtproxy makes, with another process's write transaction open for
    // the whole run: reads go on (the first answers come from the store), writes wait
    // out the busy timeout three times in a row (the first two failures only defer the
    // write), then the tier is given up.
    let path = populated(dir.path());
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("BEGIN EXCLUSIVE; INSERT INTO meta(name, value) VALUES ('held', 1);")
        .unwrap();
    // The stored queries: all answered from the store, nothing to write.
    let out = run_workload(&path.display().to_string(), None);
    out.assert_no_panic_no_hang("locked WAL store, stored queries");
    assert_eq!(out.lines(), workload(0..N).1);
    let s = summary(&out.stderr_str());
    assert_eq!(
        field(&s, "disk_hits"),
        u64::from(N),
        "reads must not be blocked by another writer: {s}"
    );
    assert!(
        warnings(&out.stderr_str()).is_empty(),
        "nothing to write, nothing to warn about: {}",
        out.stderr_str()
    );
    // New queries: results to write, and the lock is still held.
    let mut cmd = Command::new(bin());
    cmd.args([
        "--solver",
        "z3",
        "--strategy",
        "hybrid",
        "--cache",
        &path.display().to_string(),
        "--stats",
    ]);
    let out = run_cmd(cmd, workload(N..2 * N).0.as_bytes(), T);
    out.assert_no_panic_no_hang("locked WAL store");
    assert_eq!(out.code(), Some(0), "{}", out.stderr_str());
    assert_eq!(
        out.lines(),
        workload(N..2 * N).1,
        "locked WAL store: answers"
    );
    let w = warnings(&out.stderr_str());
    assert_eq!(w.len(), 1, "locked WAL store: {}", out.stderr_str());
    assert!(w[0].contains("locked"), "{}", w[0]);
    assert!(
        out.elapsed < Duration::from_secs(10),
        "locked WAL store: took {:?}",
        out.elapsed
    );
    other.execute_batch("ROLLBACK").unwrap();
    drop(other);
    assert_eq!(
        rows(&path),
        ROWS_PER_RESULT * i64::from(N),
        "entries lost or added under the lock"
    );
    integrity_ok(&path);

    // (2) A rollback-journal SQLite store held EXCLUSIVE: not even readable.
    let path = dir.path().join("journal.sqlite3");
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch(
            "PRAGMA journal_mode=DELETE;
             CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
             CREATE TABLE results(key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
             INSERT INTO meta(name, value) VALUES ('format_version', 2);
             BEGIN EXCLUSIVE; INSERT INTO meta(name, value) VALUES ('held', 1);",
        )
        .unwrap();
    let out = run_workload(&path.display().to_string(), None);
    assert_survived(
        "store held EXCLUSIVE (rollback journal)",
        &out,
        &path,
        "locked",
    );
    other.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn store_on_full_disk() {
    common::require("z3");
    // A full disk, unprivileged: RLIMIT_FSIZE on the smtproxy process. Writes past it fail
    // with EFBIG (and raise SIGXFSZ, which smtproxy must survive). 48 KiB leaves room for
    // the 32 KiB WAL index and a few WAL frames, so the store opens and fills mid-run.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite3");
    let out = run_workload(&path.display().to_string(), Some(48 << 10));
    assert!(
        !matches!(
            out.status
                .map(|s| std::os::unix::process::ExitStatusExt::signal(&s)),
            Some(Some(libc::SIGXFSZ))
        ),
        "smtproxy was killed by SIGXFSZ"
    );
    assert_survived(
        "full disk (RLIMIT_FSIZE 48 KiB)",
        &out,
        &path,
        "unavailable",
    );
    let s = summary(&out.stderr_str());
    // What was written before the disk filled is intact and right.
    integrity_ok(&path);
    let kept = rows(&path);
    assert!(
        kept > 0 && kept < ROWS_PER_RESULT * i64::from(N),
        "the limit should cut the store short mid-run: {kept} of {N} entries ({s})"
    );
    let out = run_workload(&path.display().to_string(), None);
    out.assert_no_panic_no_hang("run after the full disk");
    assert_eq!(out.lines(), workload(0..N).1, "answers after the full disk");
    assert!(
        warnings(&out.stderr_str()).is_empty(),
        "{}",
        out.stderr_str()
    );
    let s = summary(&out.stderr_str());
    // Each result found once: by its exact key, or by its canonical key when the disk
    // filled between the two.
    assert_eq!(
        field(&s, "disk_hits"),
        ((kept + 1) / ROWS_PER_RESULT) as u64,
        "every result kept is found again: {s}"
    );
    integrity_ok(&path);
    assert_eq!(rows(&path), ROWS_PER_RESULT * i64::from(N));
}

/// `smtproxy replay --check --quiet --strategy cache --cache STORE --json F LOG`.
fn replay_cmd(store: &Path, log: &Path, json: &Path) -> Command {
    let mut c = replay_json_cmd("cache", store, json, log);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

#[test]
fn eight_processes_one_store_then_consistent() {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("shared.sqlite3");
    let generated = dir.path().join("generated.smt2");
    std::fs::write(&generated, workload(0..N).0).unwrap();
    // Eight different logs; pairs of them share queries (KLEE's solver-queries are a
    // subset of its all-queries), so equal keys are written concurrently too.
    let mut logs: Vec<PathBuf> = [
        "klee/sort/all-queries.smt2.gz",
        "klee/sort/solver-queries.smt2.gz",
        "klee/sbase-echo/all-queries.smt2.gz",
        "klee/sbase-echo/solver-queries.smt2.gz",
        "klee/sbase-cut/all-queries.smt2.gz",
        "klee/sbase-basename/all-queries.smt2.gz",
        "hand/bv.smt2",
    ]
    .iter()
    .map(|p| corpus(p))
    .collect();
    logs.push(generated);
    let t0 = Instant::now();
    let children: Vec<_> = logs
        .iter()
        .enumerate()
        .map(|(i, log)| {
            (
                log,
                replay_cmd(&store, log, &dir.path().join(format!("cold-{i}.json")))
                    .spawn()
                    .expect("spawn smtproxy"),
            )
        })
        .collect();
    for (log, c) in children {
        let out = c.wait_with_output().expect("wait");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{}: exit {:?}\n{}",
            log.display(),
            out.status,
            tail(&err)
        );
        assert!(
            warnings(&err).is_empty(),
            "{}: store trouble under concurrency:\n{}",
            log.display(),
            tail(&err)
        );
        let s = summary(&err);
        assert_eq!(
            field(&s, "expected_mismatches"),
            0,
            "{}: {s}",
            log.display()
        );
        assert_eq!(field(&s, "unknown"), 0, "{}: {s}", log.display());
    }
    let cold = t0.elapsed();
    integrity_ok(&store);
    let stored = rows(&store);
    assert!(stored > 0);
    // Everything in the store agrees with the solver: every log again, from the store.
    for (i, log) in logs.iter().enumerate() {
        let json = dir.path().join(format!("warm-{i}.json"));
        let out = replay_cmd(&store, log, &json).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{} warm: {:?}\n{}",
            log.display(),
            out.status,
            tail(&err)
        );
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("json written"))
                .expect("json");
        assert_eq!(
            field(&s, "expected_mismatches"),
            0,
            "{} warm: {s}",
            log.display()
        );
        assert_eq!(field(&s, "unknown"), 0, "{} warm: {s}", log.display());
        assert!(
            field(&s, "disk_hits") > 0,
            "{} warm: no store hits: {s}",
            log.display()
        );
        // (For the KLEE logs the warm run may still solve a component or two: a store
        // entry written first by another process carries that process's model, and later
        // model reuse in this one can then go another way. The generated log shares no
        // query with the others and reuses no model, so all of it is in the store.)
        if log.ends_with("generated.smt2") {
            assert_eq!(
                field(&s, "solver_checks"),
                0,
                "{} warm: still asked the solver: {s}",
                log.display()
            );
            assert_eq!(
                field(&s, "disk_hits"),
                u64::from(N),
                "{} warm: {s}",
                log.display()
            );
        }
    }
    assert!(rows(&store) >= stored, "entries disappeared");
    integrity_ok(&store);
    eprintln!(
        "8 concurrent cold runs {cold:?}, {stored} entries; all in {:?}",
        t0.elapsed()
    );
    assert!(
        t0.elapsed() < Duration::from_secs(60),
        "took {:?}",
        t0.elapsed()
    );
}

/// Keys in a Redis server.
fn dbsize(url: &str) -> i64 {
    redis::Client::open(url)
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
        .and_then(|mut c| redis::cmd("DBSIZE").query(&mut c))
        .unwrap_or(-1)
}

/// The fleet secret both processes hold: unsat entries shared through Redis are tagged
/// with it, and trusted only under a tag that verifies.
const FLEET_SECRET: &str = "fleet secret of this test";

#[test]
fn redis_killed_and_restarted_mid_session() {
    common::require("z3");
    let mut server = Server::start();
    let port = server.port;
    let url = server.url();
    let home1 = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin());
    cmd.args([
        "--solver",
        "z3",
        "--strategy",
        "hybrid",
        "--cache",
        &url,
        "--stats",
    ])
    .env("XDG_CACHE_HOME", home1.path())
    .env("SMTPROXY_CACHE_SECRET", FLEET_SECRET);
    let mut s = Session::start_cmd(cmd);
    s.send("(set-logic QF_BV)\n(declare-const x (_ BitVec 16))\n(declare-const y (_ BitVec 16))");
    let ask = |s: &mut Session, range: std::ops::Range<u32>, what: &str| {
        for i in range {
            let (q, want) = query(i);
            s.send(&q);
            let t = Instant::now();
            assert_eq!(
                s.ask("(check-sat)", Duration::from_secs(10)),
                want,
                "{what}: query {i}"
            );
            assert!(
                t.elapsed() < Duration::from_secs(2),
                "{what}: query {i} took {:?}",
                t.elapsed()
            );
            s.send("(pop 1)");
        }
    };
    const K: u32 = 12;
    ask(&mut s, 0..K, "Redis up");
    let t = Instant::now();
    // Every result of the first queries reaches the first server (two keys each) before it
    // is killed, so none of them is pending in the writer to reach the restarted one.
    while dbsize(&url) < ROWS_PER_RESULT * i64::from(K) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "results never reached Redis ({} keys)",
            dbsize(&url)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.stop();
    ask(&mut s, K..2 * K, "Redis killed");
    let _server2 = Server::start_on(port);
    ask(&mut s, 2 * K..3 * K, "Redis restarted");
    // The restarted server is empty; what was computed while it was down and after it came
    // back reaches it (the writer retries after its back-off).
    let t = Instant::now();
    while dbsize(&url) < ROWS_PER_RESULT * i64::from(2 * K) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "results never reached the restarted Redis ({} keys)",
            dbsize(&url)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(s.ask("(echo \"done\")", Duration::from_secs(10)), "done");
    let (st, err, hung) = s.finish(Duration::from_secs(10));
    assert!(!hung, "smtproxy did not exit");
    assert_eq!(st.and_then(|s| s.code()), Some(0), "{err}");
    let w = warnings(&err);
    assert_eq!(w.len(), 1, "expected one warning:\n{err}");
    assert!(w[0].contains(&format!("redis cache at {url}")), "{}", w[0]);
    let s1 = summary(&err);
    assert_eq!(field(&s1, "queries"), u64::from(3 * K), "{s1}");
    assert_eq!(field(&s1, "unknown"), 0, "{s1}");

    // A second process with an empty disk store: the queries asked while Redis was down
    // and after its restart come from Redis; the first ones were lost with the old server.
    let home2 = tempfile::tempdir().unwrap();
    let (script, want) = workload((K..3 * K).chain(0..K));
    let mut cmd = Command::new(bin());
    cmd.args([
        "--solver",
        "z3",
        "--strategy",
        "hybrid",
        "--cache",
        &url,
        "--stats",
    ])
    .env("XDG_CACHE_HOME", home2.path())
    .env("SMTPROXY_CACHE_SECRET", FLEET_SECRET);
    let out = run_cmd(cmd, script.as_bytes(), T);
    out.assert_no_panic_no_hang("second process");
    assert_eq!(out.code(), Some(0), "{}", out.stderr_str());
    assert_eq!(out.lines(), want, "second process: answers");
    assert!(
        warnings(&out.stderr_str()).is_empty(),
        "{}",
        out.stderr_str()
    );
    let s2 = summary(&out.stderr_str());
    assert_eq!(
        field(&s2, "redis_hits"),
        u64::from(2 * K),
        "second process: {s2}"
    );
    assert_eq!(field(&s2, "disk_hits"), 0, "second process: {s2}");
    // (Hybrid may decide some of those itself: a guessed model, or the bounds of a word.)
    assert_eq!(
        field(&s2, "solver_checks") + field(&s2, "guessed") + field(&s2, "bounded"),
        u64::from(K),
        "second process: only the first queries need the solver: {s2}"
    );
}
