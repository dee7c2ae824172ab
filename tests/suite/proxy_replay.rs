//! Every recorded log in smt2-corpus replayed with `smtproxy replay --check` under every
//! strategy: zero `expected_mismatches`, zero `unknown`, exit code 0, and `queries` equal
//! to the number of check-sats in the log. Real solvers, no mocks.
//!
//! Slow logs are left out where they are slow (see `z3_logs`): regexp/all-queries
//! (17,958 queries) everywhere; sbase-expr/all-queries and sbase-cut/all-queries only
//! under the incremental strategies; every all-queries log under passthrough and fresh,
//! which model nothing (each query goes to the solver as the client wrote it: the
//! solver-queries and external logs cover them, `proxy_lean` compares KLEE streams byte
//! for byte). external/domain.smt2 (z3 only) has its own tests, under hybrid (the
//! default, which serves about 20 of its 82 answers from models smtproxy evaluated) and
//! stack-cse (the incremental stack with its macros): each takes about 30 s of a 2-core
//! run. Not under cache and stack (about 70 and 25 s more): their parts run on it under
//! those two (the cache stages under hybrid, the incremental stack under stack-cse), and
//! both strategies run on every other log.

use crate::common;

use common::{corpus, replay, KLEE_PROGRAMS};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Logs replayed with z3 under `strategy`.
fn z3_logs(strategy: &str) -> Vec<PathBuf> {
    let incremental = matches!(strategy, "stack" | "stack-cse");
    let modelled = !matches!(strategy, "passthrough" | "fresh");
    let mut v = Vec::new();
    for p in KLEE_PROGRAMS {
        v.push(corpus(&format!("klee/{p}/solver-queries.smt2.gz")));
    }
    for p in KLEE_PROGRAMS {
        match *p {
            _ if !modelled => continue,
            "regexp" => continue,
            "sbase-expr" | "sbase-cut" if !incremental => continue,
            _ => v.push(corpus(&format!("klee/{p}/all-queries.smt2.gz"))),
        }
    }
    for e in ["cyphert-alu", "cyphert-wbmux", "cyphert-sprs"] {
        v.push(corpus(&format!("external/{e}.smt2.gz")));
    }
    v
}

fn cvc5_logs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = KLEE_PROGRAMS
        .iter()
        .map(|p| corpus(&format!("klee/{p}/solver-queries.smt2.gz")))
        .collect();
    v.push(corpus("external/cyphert-alu.smt2.gz"));
    v.push(corpus("external/cyphert-wbmux.smt2.gz"));
    v
}

/// Number of `(check-sat)` commands in a (possibly gzipped) log; in a KQuery log, of its
/// queries.
fn count_checks(path: &PathBuf) -> u64 {
    use std::io::Read;
    let bytes = std::fs::read(path).unwrap();
    let text = if path.extension().map(|e| e == "gz").unwrap_or(false) {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(bytes).unwrap()
    };
    let (comment, command) = if path.to_string_lossy().contains(".kquery") {
        ('#', "(query")
    } else {
        (';', "(check-sat)")
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with(comment))
        .map(|l| l.matches(command).count() as u64)
        .sum()
}

/// Replay every log (2 at a time), collect every failure, fail once with all of them.
fn replay_all(strategy: &str, solver: &str, logs: Vec<PathBuf>) {
    replay_all_within(strategy, solver, logs, Duration::from_secs(150))
}

fn replay_all_within(strategy: &str, solver: &str, logs: Vec<PathBuf>, limit: Duration) {
    common::require(solver);
    let t0 = Instant::now();
    let queue = Arc::new(Mutex::new(logs));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut hs = Vec::new();
    for _ in 0..2 {
        let queue = queue.clone();
        let failures = failures.clone();
        let strategy = strategy.to_string();
        let solver = solver.to_string();
        hs.push(std::thread::spawn(move || loop {
            let Some(log) = queue.lock().unwrap().pop() else { break };
            let name = log.strip_prefix(common::root()).unwrap_or(&log).display().to_string();
            let (code, json, stderr, took) = replay(&log, &strategy, &solver, limit);
            eprintln!("{strategy}/{solver} {name}: {took:?} {json}");
            let mut why = Vec::new();
            if code != Some(0) {
                why.push(format!("exit code {code:?}"));
            }
            let field = |k: &str| json.get(k).and_then(|v| v.as_u64());
            match field("expected_mismatches") {
                Some(0) => {}
                other => why.push(format!("expected_mismatches = {other:?}")),
            }
            match field("unknown") {
                Some(0) => {}
                other => why.push(format!("unknown = {other:?}")),
            }
            let n = count_checks(&log);
            if field("queries") != Some(n) {
                why.push(format!("queries = {:?}, log has {n} check-sats", field("queries")));
            }
            if let (Some(q), Some(s), Some(u)) = (field("queries"), field("sat"), field("unsat")) {
                if s + u != q {
                    why.push(format!("sat {s} + unsat {u} != queries {q}"));
                }
            }
            if !why.is_empty() {
                let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
                let shown = lines[lines.len().saturating_sub(15)..].join("\n    ");
                failures.lock().unwrap().push(format!("{name} [{strategy}, {solver}]: {}\n    json: {json}\n    stderr (last lines):\n    {shown}", why.join("; ")));
            }
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    eprintln!("{strategy}/{solver}: all logs in {:?}", t0.elapsed());
    let f = failures.lock().unwrap();
    assert!(
        f.is_empty(),
        "{} log(s) failed under --strategy {strategy} --solver {solver}:\n{}",
        f.len(),
        f.join("\n")
    );
}

#[test]
fn z3_passthrough() {
    replay_all("passthrough", "z3", z3_logs("passthrough"));
}
#[test]
fn z3_fresh() {
    replay_all("fresh", "z3", z3_logs("fresh"));
}
#[test]
fn z3_stack() {
    replay_all("stack", "z3", z3_logs("stack"));
}
#[test]
fn z3_stack_cse() {
    replay_all("stack-cse", "z3", z3_logs("stack-cse"));
}
#[test]
fn z3_cache() {
    replay_all("cache", "z3", z3_logs("cache"));
}
#[test]
fn z3_hybrid() {
    replay_all("hybrid", "z3", z3_logs("hybrid"));
}

#[test]
fn cvc5_passthrough() {
    replay_all("passthrough", "cvc5", cvc5_logs());
}
#[test]
fn cvc5_fresh() {
    replay_all("fresh", "cvc5", cvc5_logs());
}
#[test]
fn cvc5_stack() {
    replay_all("stack", "cvc5", cvc5_logs());
}
#[test]
fn cvc5_stack_cse() {
    replay_all("stack-cse", "cvc5", cvc5_logs());
}
#[test]
fn cvc5_cache() {
    replay_all("cache", "cvc5", cvc5_logs());
}
#[test]
fn cvc5_hybrid() {
    replay_all("hybrid", "cvc5", cvc5_logs());
}

fn domain(strategy: &str) {
    replay_all_within(
        strategy,
        "z3",
        vec![corpus("external/domain.smt2")],
        Duration::from_secs(200),
    );
}
#[test]
fn z3_domain_stack_cse() {
    domain("stack-cse");
}
#[test]
fn z3_domain_hybrid() {
    domain("hybrid");
}

/// KLEE's own KQuery log of a PCRE run (756 queries, KLEE's answers in its comments), read
/// as the SMT2 query log it stands for. yices answers it in about a second, z3 alone in
/// minutes.
fn pcre_kquery() -> PathBuf {
    corpus("external/pcresymperf-3.kquery.gz")
}

#[test]
fn yices_kquery_log() {
    for strategy in ["hybrid", "cache", "stack"] {
        replay_all(strategy, "yices", vec![pcre_kquery()]);
    }
}

#[test]
fn portfolio_kquery_log() {
    common::require("z3");
    common::require("yices-smt2");
    let (code, json, stderr, _) = replay(
        &pcre_kquery(),
        "hybrid",
        "z3,yices",
        Duration::from_secs(300),
    );
    let field = |k: &str| json.get(k).and_then(|v| v.as_u64());
    assert_eq!(code, Some(0), "{json}\n{stderr}");
    assert_eq!(field("queries"), Some(756), "{json}");
    assert_eq!(field("expected_mismatches"), Some(0), "{json}");
    assert_eq!(field("unknown"), Some(0), "{json}");
}

/// The translation checked without smtproxy's engine: the SMT2 log `replay --print-log`
/// prints, fed to yices directly, gets the answers KLEE recorded for every query.
#[test]
fn printed_kquery_log_gets_klees_answers_from_yices() {
    common::require("yices-smt2");
    let out = common::run(
        &["replay", "--print-log", &pcre_kquery().to_string_lossy()],
        b"",
        Duration::from_secs(60),
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr_str());
    let text = out.stdout_str();
    let want = smtproxy::corpus::klee_answers(&text);
    assert_eq!(want.len(), 756);
    assert!(
        want.iter().all(Option::is_some),
        "every query has KLEE's answer"
    );
    let stream = text.replace("\n(exit)\n", "\n(reset)\n");
    let direct = common::run_prog(
        "yices-smt2",
        &["--incremental"],
        stream.as_bytes(),
        Duration::from_secs(120),
    );
    let got = common::replies::check_sat_answers(&direct.stdout_str());
    let want: Vec<&str> = want.iter().flatten().map(|a| a.as_str()).collect();
    assert_eq!(got, want);
}

/// A KQuery log that cannot be read: the file, line and column, and exit code 1, before
/// any query is run.
#[test]
fn unreadable_kquery_log_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bad.kquery");
    std::fs::write(
        &log,
        "array a[4] : w32 -> w8 = symbolic\n(query [(Eq 0 (Read w8 0 b))] false)\n",
    )
    .unwrap();
    let out = common::run(
        &[
            "replay",
            "--check",
            "--solver",
            "z3",
            &log.to_string_lossy(),
        ],
        b"",
        Duration::from_secs(30),
    );
    assert_eq!(out.code(), Some(1), "{}", out.stderr_str());
    let err = out.stderr_str();
    assert!(
        err.contains(&format!(
            "cannot read {} as KQuery: line 2, column 26: unknown array `b`",
            log.display()
        )),
        "{err}"
    );
}

/// The starts of a z3 wrapper (its name makes it z3, with z3's own flags) that counts
/// them, on a log smtproxy answers itself under hybrid (sbase-echo's solver queries) and
/// on one that needs solvers (sbase-cut's), replayed with `z3` replaced by the wrapper in
/// `solvers`; each replay's answers are checked against the recorded ones.
fn z3_starts_on_echo_and_cut(solvers: &str) -> [usize; 2] {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    let z3 = common::CountingZ3::new(dir.path(), "z3-counting");
    let solvers = solvers.replace("z3", &z3.path.to_string_lossy());
    [
        ("klee/sbase-echo/solver-queries.smt2.gz", false),
        ("klee/sbase-cut/solver-queries.smt2.gz", true),
    ]
    .map(|(log, needs_solver)| {
        let (code, v, err, _) = replay(&corpus(log), "hybrid", &solvers, Duration::from_secs(120));
        assert_eq!(code, Some(0), "{log}: {err}");
        assert_eq!(common::field(&v, "expected_mismatches"), 0, "{log}: {v}");
        assert_eq!(
            common::field(&v, "solver_checks") > 0,
            needs_solver,
            "{log}: {v}"
        );
        z3.take_starts()
    })
}

/// `replay` starts the solver when the proxy would: at its first use, so a log smtproxy
/// answers itself never starts it, and its time is in the replay's measure where a log
/// needs it.
#[test]
fn replay_starts_the_solver_only_when_a_query_needs_it() {
    let [echo, cut] = z3_starts_on_echo_and_cut("z3");
    assert_eq!(echo, 0, "the solver started where no query needed it");
    assert!(cut > 0, "the solver did not start where a query needed it");
}

/// A portfolio starts z3 as soon as a query gets past the memory tier, before any query
/// needs a solver, so that z3 builds its context (about 11 ms) while smtproxy answers
/// queries itself: the portfolio's first race would otherwise wait for it. That process is
/// the one later queries use (one start in all), and on a log smtproxy answers alone it is
/// the only cost. One solver alone still starts at its first use (test above).
#[test]
fn a_portfolio_starts_z3_ahead_of_its_first_query_once() {
    common::require("yices-smt2");
    assert_eq!(
        z3_starts_on_echo_and_cut("z3,yices"),
        [1, 1],
        "z3 started ahead, once"
    );
}
