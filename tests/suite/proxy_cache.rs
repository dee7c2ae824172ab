//! The result store through the real binary: a second run is answered from the on-disk
//! store, eight processes share one store at once without losing or corrupting entries,
//! two processes with separate disk stores share results through a real Redis, with
//! Redis down smtproxy warns once and goes on, and models forged into the store (valid
//! entries whose values do not satisfy the query) are never served.

use crate::common;

use common::redis_server::{self, Server};
use common::{corpus, field, KLEE_PROGRAMS};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Run {
    json: serde_json::Value,
    stderr: String,
}

/// `smtproxy replay --check --quiet` with the given store; returns the JSON summary.
fn replay(log: &Path, strategy: &str, cache: &str, xdg: &Path) -> Run {
    replay_with(log, strategy, cache, xdg, None)
}

/// `replay` holding the fleet secret `secret` (`SMTPROXY_CACHE_SECRET`), or none.
fn replay_with(log: &Path, strategy: &str, cache: &str, xdg: &Path, secret: Option<&str>) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("out.json");
    let mut cmd = common::replay_json_cmd(strategy, cache, &json, log);
    cmd.env("XDG_CACHE_HOME", xdg)
        .env_remove("SMTPROXY_CACHE_SECRET");
    if let Some(secret) = secret {
        cmd.env("SMTPROXY_CACHE_SECRET", secret);
    }
    let out = cmd.output().expect("run smtproxy");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "replay {} failed ({:?}):\n{stderr}",
        log.display(),
        out.status
    );
    let text = std::fs::read_to_string(&json).expect("json written");
    Run {
        json: serde_json::from_str(&text).expect("json"),
        stderr,
    }
}

#[test]
fn second_run_is_answered_from_the_disk_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let store = store.to_str().unwrap();
    for log in [
        "klee/sort/all-queries.smt2.gz",
        "klee/sbase-echo/solver-queries.smt2.gz",
    ] {
        for strategy in ["cache", "hybrid"] {
            let cold = replay(&corpus(log), strategy, store, dir.path());
            assert_eq!(field(&cold.json, "expected_mismatches"), 0);
            assert_eq!(field(&cold.json, "unknown"), 0);
            let warm = replay(&corpus(log), strategy, store, dir.path());
            assert_eq!(
                field(&warm.json, "expected_mismatches"),
                0,
                "{log} {strategy} warm"
            );
            assert_eq!(field(&warm.json, "unknown"), 0);
            assert_eq!(
                field(&warm.json, "solver_checks"),
                0,
                "{log} {strategy}: warm run still asked the solver: {}",
                warm.json
            );
            assert_eq!(field(&warm.json, "queries"), field(&cold.json, "queries"));
        }
    }
}

/// A second run over the same store finds each component by its exact key (the
/// component as the client wrote it), without computing its canonical form; a run under
/// other names finds it by its canonical key, and the same text over other sorts is
/// another formula that neither key may confuse with the first.
#[test]
fn exact_keys_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let store = store.to_str().unwrap();
    let log = corpus("klee/sbase-echo/solver-queries.smt2.gz");
    let cold = replay(&log, "cache", store, dir.path());
    assert_eq!(field(&cold.json, "exact_hits"), 0, "{}", cold.json);
    // The store's entries alone (the trie beside it holds the first run's answers).
    common::drop_trie(store);
    let warm = replay(&log, "cache", store, dir.path());
    assert_eq!(field(&warm.json, "expected_mismatches"), 0);
    assert_eq!(field(&warm.json, "solver_checks"), 0, "{}", warm.json);
    // Every store lookup that found something found it by the exact key or, for a sat
    // query, by its block's key (the model of the same commands in the first run); none
    // needed a canonical form (those not asked of the store were answered by recent
    // models and the session memo).
    assert!(field(&warm.json, "exact_hits") > 0, "{}", warm.json);
    assert!(
        field(&warm.json, "disk_hits")
            <= field(&warm.json, "exact_hits") + field(&warm.json, "block_hints"),
        "a second run should find each component by its exact or its block's key: {}",
        warm.json
    );

    // The same text over Bool and over Int: three distinct Booleans cannot exist, three
    // distinct integers can. Each script in its own run, over one store.
    let run_script = |decls: &str| -> String {
        let script = format!(
            "(set-option :print-success false)\n(set-logic ALL)\n{decls}\n\
             (assert (distinct x y z))\n(check-sat)\n"
        );
        let mut cmd = Command::new(common::bin());
        cmd.args(["--strategy", "cache", "--cache", store])
            .env("XDG_CACHE_HOME", dir.path());
        let out = common::run_cmd(cmd, script.as_bytes(), Duration::from_secs(60));
        out.stdout_str().trim().to_string()
    };
    let bools = "(declare-fun x () Bool) (declare-fun y () Bool) (declare-fun z () Bool)";
    let ints = "(declare-fun x () Int) (declare-fun y () Int) (declare-fun z () Int)";
    let renamed = "(declare-fun z () Bool) (declare-fun x () Bool) (declare-fun y () Bool)";
    assert_eq!(run_script(bools), "unsat");
    assert_eq!(
        run_script(ints),
        "sat",
        "the Bool component's answer served for Int"
    );
    assert_eq!(run_script(bools), "unsat");
    assert_eq!(run_script(renamed), "unsat");
}

#[test]
fn eight_processes_share_one_disk_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("shared.sqlite3");
    let store_s = store.to_str().unwrap().to_string();
    let logs: Vec<PathBuf> = KLEE_PROGRAMS
        .iter()
        .map(|p| corpus(&format!("klee/{p}/solver-queries.smt2.gz")))
        .collect();
    // All eight at once.
    let children: Vec<(PathBuf, Child)> = logs
        .iter()
        .enumerate()
        .map(|(i, log)| {
            let json = dir.path().join(format!("run-{i}.json"));
            let c = common::replay_json_cmd("cache", &store_s, &json, log)
                .env("XDG_CACHE_HOME", dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn");
            (log.clone(), c)
        })
        .collect();
    for (log, c) in children {
        let out = c.wait_with_output().expect("wait");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {err}", log.display());
        assert!(
            !err.contains("warning"),
            "{}: store trouble under concurrency: {err}",
            log.display()
        );
    }
    // Every entry is intact and right: replaying each log again from the store alone gives
    // the recorded answers without asking the solver.
    for log in &logs {
        let warm = replay(log, "cache", &store_s, dir.path());
        assert_eq!(
            field(&warm.json, "expected_mismatches"),
            0,
            "{}",
            log.display()
        );
        assert_eq!(field(&warm.json, "unknown"), 0);
        assert_eq!(
            field(&warm.json, "solver_checks"),
            0,
            "{}: {}",
            log.display(),
            warm.json
        );
    }
}

#[test]
fn two_processes_share_results_through_redis() {
    let redis = Server::start();
    let url = redis.url();
    let log = corpus("klee/sort/solver-queries.smt2.gz");
    // Separate disk stores (separate cache homes): only Redis is shared, under one fleet
    // secret.
    let secret = Some("fleet secret of this test");
    let a_home = tempfile::tempdir().unwrap();
    let b_home = tempfile::tempdir().unwrap();
    let a = replay_with(&log, "cache", &url, a_home.path(), secret);
    assert!(field(&a.json, "solver_checks") > 0);
    assert_eq!(field(&a.json, "expected_mismatches"), 0);
    assert!(field(&a.json, "unsat") > 0, "{}", a.json);
    let b = replay_with(&log, "cache", &url, b_home.path(), secret);
    assert_eq!(field(&b.json, "expected_mismatches"), 0);
    assert_eq!(
        field(&b.json, "solver_checks"),
        0,
        "second process did not get the first one's results: {}",
        b.json
    );
    assert!(!b.stderr.contains("warning"), "{}", b.stderr);
    // A process without the secret takes the sat entries (each checked against its model)
    // but trusts no unsat one: those it solves again, with the same answers.
    let c_home = tempfile::tempdir().unwrap();
    let c = replay_with(&log, "cache", &url, c_home.path(), None);
    assert_eq!(field(&c.json, "expected_mismatches"), 0);
    assert!(field(&c.json, "redis_untrusted_unsat") > 0, "{}", c.json);
    assert!(field(&c.json, "solver_checks") > 0, "{}", c.json);
}

#[test]
fn redis_down_warns_once_and_goes_on() {
    let port = redis_server::free_port(); // nothing listens there
    let home = tempfile::tempdir().unwrap();
    let run = replay(
        &corpus("klee/sbase-echo/solver-queries.smt2.gz"),
        "hybrid",
        &format!("redis://127.0.0.1:{port}"),
        home.path(),
    );
    assert_eq!(field(&run.json, "expected_mismatches"), 0);
    assert_eq!(field(&run.json, "unknown"), 0);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "expected exactly one warning, got:\n{}",
        run.stderr
    );
    assert!(warnings[0].contains("redis"), "{}", warnings[0]);
}

/// Every entry of the store at `path` that holds a model has each value replaced by
/// `#x00` (which satisfies none of the queries of `forged_models_are_never_served`), under
/// a valid checksum, as a buggy or hostile writer sharing the store would leave it.
/// Returns how many entries were changed.
fn forge_models(path: &str) -> usize {
    use smtproxy::cache::{Entry, Key};
    let c = rusqlite::Connection::open(path).expect("open store");
    let rows: Vec<(Vec<u8>, Vec<u8>)> = c
        .prepare("SELECT key, value FROM results")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()
        })
        .expect("read the store");
    let mut forged = 0;
    for (k, v) in rows {
        let key = Key(k.as_slice().try_into().expect("16-byte keys"));
        let entry = Entry::decode(&key, &v).expect("entries decode");
        let Some(model) = &entry.model else { continue };
        let wrong = model
            .lines()
            .map(|l| if l.is_empty() { "" } else { "#x00" })
            .collect::<Vec<_>>()
            .join("\n");
        let e = Entry {
            verdict: entry.verdict,
            model: Some(wrong),
        };
        c.execute(
            "UPDATE results SET value = ?1 WHERE key = ?2",
            rusqlite::params![e.encode(&key), k],
        )
        .expect("update");
        forged += 1;
    }
    forged
}

/// A store entry whose model does not satisfy its query (well formed, with a valid
/// checksum) is never served: the query of one component and the query of two are
/// answered as the solver answers them, with values that satisfy them, and neither is
/// counted as answered from the store.
#[test]
fn forged_models_are_never_served() {
    common::require("z3");
    let script = "(set-option :produce-models true)(set-logic QF_BV)\
        (declare-fun x () (_ BitVec 8))(declare-fun y () (_ BitVec 8))\
        (assert (= (bvadd x #x01) #x06))(check-sat)(get-value (x))(reset)\
        (set-option :produce-models true)(set-logic QF_BV)\
        (declare-fun x () (_ BitVec 8))(declare-fun y () (_ BitVec 8))\
        (assert (= (bvadd x #x01) #x06))(assert (= (bvmul y #x03) #x15))\
        (check-sat)(get-value (x y))\n";
    let want = "sat\n((x #x05))\nsat\n((x #x05)\n (y #x07))\n";
    for strategy in ["cache", "hybrid"] {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store.sqlite3");
        let store = store.to_str().unwrap();
        let args = [
            "--solver",
            "z3",
            "--strategy",
            strategy,
            "--cache",
            store,
            "--stats",
        ];
        let t = Duration::from_secs(60);
        let first = common::run(&args, script.as_bytes(), t);
        assert_eq!(first.stdout_str(), want, "{strategy}, first run");
        let forged = forge_models(store);
        // The store's entries alone (the trie beside it holds the first run's answers).
        common::drop_trie(store);
        assert!(
            forged >= 2,
            "{strategy}: {forged} models stored, 2 expected"
        );
        let second = common::run(&args, script.as_bytes(), t);
        assert_eq!(
            second.stdout_str(),
            want,
            "{strategy}: a forged model was served"
        );
        let stats = common::summary(&String::from_utf8_lossy(&second.stderr));
        // Found in the store, and refused: every query decided afresh.
        let n = |k: &str| stats[k].as_u64().unwrap_or(u64::MAX);
        assert!(
            n("disk_hits") >= 1 && n("cache_hits") == 0 && n("model_hits") == 0,
            "{strategy}: the forged entries were not found, or served: {stats}"
        );
    }
}

/// A run whose solver is not there fails before it touches the default store: no store
/// (nor its directory) is made for a session that never ran.
#[test]
fn a_missing_solver_makes_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(common::bin());
    cmd.args(["--solver", "/nonexistent/z3", "--strategy", "hybrid"])
        .env("XDG_CACHE_HOME", dir.path());
    let out = common::run_cmd(cmd, b"(check-sat)\n", Duration::from_secs(60));
    out.assert_no_panic_no_hang("a missing solver");
    assert!(
        !out.status.is_some_and(|s| s.success()),
        "a missing solver should fail the run"
    );
    let err = out.stderr_str();
    assert!(err.contains("/nonexistent/z3"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "made {left:?}");
}
