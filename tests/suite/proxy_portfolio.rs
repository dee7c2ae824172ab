//! The portfolio (`--solver a,b,...`) through the binary, against real solvers: answers as
//! z3's on KLEE logs, a member that hangs or is killed, the first solver's dialect, and a
//! lying member (a wrapper that answers `unsat` for `sat`) caught by smtproxy's own model
//! check.

use crate::common;

use common::replies::check_sat_answers;
use common::{
    corpus, descendants_of, field, kill, replay, require, run, run_prog, summary, Session,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(60);

fn require_all() {
    require("z3");
    require("yices-smt2");
    require("cvc5");
}

/// A solver stand-in: an executable shell script `name` in `dir` (its name starts with the
/// solver's, so smtproxy gives it that solver's flags and dialect).
fn wrapper(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// `program` behind a wrapper `name` in `dir` that holds each of its check-sat answers
/// (`sat`, `unsat`) back `secs` seconds before passing it on.
fn held(dir: &Path, name: &str, program: &str, secs: &str) -> PathBuf {
    wrapper(
        dir,
        name,
        &format!(
            r#"{program} "$@" | while IFS= read -r l; do
  case "$l" in sat|unsat) sleep {secs};; esac
  printf '%s\n' "$l"
done"#
        ),
    )
}

/// `script` through smtproxy under hybrid with the portfolio `solvers`, no store, and the
/// JSON summary on stderr.
fn hybrid_portfolio(solvers: &str, script: &str) -> common::Out {
    hybrid_portfolio_with(solvers, script, &[])
}

/// As `hybrid_portfolio`, with smtproxy options `extra` as well.
fn hybrid_portfolio_with(solvers: &str, script: &str, extra: &[&str]) -> common::Out {
    let mut args = vec![
        "--solver",
        solvers,
        "--cache",
        "none",
        "--strategy",
        "hybrid",
        "--stats",
    ];
    args.extend_from_slice(extra);
    run(&args, script.as_bytes(), T)
}

/// z3 behind a wrapper that takes a second to start (as a solver loading a large library
/// does, only longer).
fn slow_starting_z3(dir: &Path) -> PathBuf {
    wrapper(
        dir,
        "z3-slow-start",
        "sleep 1
exec z3 \"$@\"",
    )
}

/// `script` through the portfolio `solvers` (`extra`: more smtproxy options): its
/// check-sat answers must be z3's; its JSON summary.
fn portfolio_summary(
    solvers: &str,
    script: &str,
    extra: &[&str],
    z3: &[String],
) -> serde_json::Value {
    let out = hybrid_portfolio_with(solvers, script, extra);
    out.assert_no_panic_no_hang(solvers);
    let err = out.stderr_str();
    assert_eq!(check_sat_answers(&out.stdout_str()), z3, "{err}");
    summary(&err)
}

/// Queries that need a solver (32-bit arithmetic no local search decides, unsat ones
/// among them): `3 * x = k` with `x < 256`, sat exactly when `k` is 3 times a small number.
fn arithmetic_script(ks: &[u32]) -> String {
    let mut s = String::from(
        "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 32))\n(declare-const y (_ BitVec 32))\n",
    );
    for k in ks {
        s.push_str(&format!(
            "(push 1)\n(assert (= (bvmul x #x00000003) #x{k:08x}))\n(assert (bvult x #x00000100))\n(assert (bvult y x))\n(check-sat)\n(pop 1)\n"
        ));
    }
    s
}

/// z3's check-sat answers to `script`, run directly.
fn z3_verdicts(script: &str) -> Vec<String> {
    check_sat_answers(&run_prog("z3", &["-in"], script.as_bytes(), T).stdout_str())
}

/// `arithmetic_script` of `n` queries, sat and unsat ones among them, and z3's answers.
fn mixed_arithmetic(n: u32) -> (String, Vec<String>) {
    let ks: Vec<u32> = (0..n).map(|i| 3 * i + 5 + (i % 2)).collect();
    let script = arithmetic_script(&ks);
    let z3 = z3_verdicts(&script);
    assert!(z3.contains(&"sat".to_string()) && z3.contains(&"unsat".to_string()));
    (script, z3)
}

#[test]
fn answers_as_z3_on_klee_logs() {
    require_all();
    for (solvers, logs) in [
        ("z3,yices", &["sort", "sbase-expr", "sbase-cut"][..]),
        ("yices,z3,cvc5", &["sbase-expr", "sbase-cut"][..]),
        ("yices,z3", &["sort", "sbase-expr", "sbase-cut"][..]),
    ] {
        for prog in logs {
            let log = corpus(&format!("klee/{prog}/solver-queries.smt2.gz"));
            let (code, z3, _, _) = replay(&log, "hybrid", "z3", T);
            assert_eq!(code, Some(0), "z3 alone on {prog}");
            let (code, pf, err, _) = replay(&log, "hybrid", solvers, T);
            assert_eq!(code, Some(0), "{solvers} on {prog}: {err}");
            for k in ["queries", "sat", "unsat"] {
                assert_eq!(field(&pf, k), field(&z3, k), "{solvers} on {prog}: {k}");
            }
            assert_eq!(field(&pf, "expected_mismatches"), 0, "{solvers} on {prog}");
            assert_eq!(field(&pf, "unknown"), 0, "{solvers} on {prog}");
            let members = pf["solvers"].as_array().expect("per-solver counts");
            assert_eq!(members.len(), solvers.split(',').count(), "{pf}");
            let wins: u64 = members.iter().map(|m| m["wins"].as_u64().unwrap()).sum();
            assert!(wins > 0, "{solvers} on {prog}: nobody won a query: {pf}");
        }
    }
}

#[test]
fn a_hanging_member_is_raced_and_killed() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    // yices that answers its first three check-sats and then never again (per process).
    let flaky = wrapper(
        dir.path(),
        "yices-flaky",
        r#"n=0
yices-smt2 "$@" | while IFS= read -r l; do
  case "$l" in sat|unsat) n=$((n+1)); if [ $n -gt 3 ]; then sleep 1000; fi;; esac
  printf '%s\n' "$l"
done"#,
    );
    // z3's answers held back 50 ms each: yices is the faster, so the learner gives it
    // queries past its third (on a loaded machine it otherwise could measure z3 the
    // faster after one exploring race and never ask yices again).
    let slow_z3 = held(dir.path(), "z3-slow", "z3", "0.05");
    let solvers = format!("{},{}", slow_z3.display(), flaky.display());
    let log = corpus("klee/sbase-expr/solver-queries.smt2.gz");
    let t0 = Instant::now();
    let (code, v, err, _) = replay(&log, "hybrid", &solvers, T);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(field(&v, "expected_mismatches"), 0);
    assert_eq!(field(&v, "unknown"), 0);
    let members = v["solvers"].as_array().unwrap();
    assert!(
        members[1]["kills"].as_u64().unwrap() > 0,
        "the hanging member was never killed: {v}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(40),
        "took {:?}",
        t0.elapsed()
    );

    // A member that never answers a check-sat at all, in an interactive session.
    let hung = wrapper(
        dir.path(),
        "yices-hung",
        r#"yices-smt2 "$@" | while IFS= read -r l; do
  case "$l" in sat|unsat) sleep 1000;; esac
  printf '%s\n' "$l"
done"#,
    );
    let ks = [15, 16, 33, 7, 300, 600, 9, 10];
    let script = arithmetic_script(&ks);
    let z3 = run_prog("z3", &["-in"], script.as_bytes(), T);
    let solvers = format!("z3,{}", hung.display());
    let out = hybrid_portfolio(&solvers, &script);
    out.assert_no_panic_no_hang("hung member");
    assert_eq!(
        check_sat_answers(&out.stdout_str()),
        check_sat_answers(&z3.stdout_str())
    );
    assert_eq!(check_sat_answers(&out.stdout_str()).len(), ks.len());
}

/// A member that does not run here (its program missing, or one that exits at once, as a
/// solver refusing its command line does) leaves the portfolio with one warning, is not
/// started again for every query, and the others answer as z3 does.
#[test]
fn a_member_that_does_not_start_leaves_with_one_warning() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let dies = wrapper(
        dir.path(),
        "yices-dies",
        &format!("echo start >> '{}'\nexit 3", starts.display()),
    );
    let missing = dir.path().join("yices-missing");
    let (script, z3) = mixed_arithmetic(12);
    for member in [&dies, &missing] {
        let out = hybrid_portfolio(&format!("z3,{}", member.display()), &script);
        out.assert_no_panic_no_hang("member that does not start");
        let err = out.stderr_str();
        assert_eq!(out.code(), Some(0), "{err}");
        assert_eq!(check_sat_answers(&out.stdout_str()), z3, "{err}");
        let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{err}");
        assert!(warnings[0].contains("going on without it"), "{err}");
        // Named (as the solver it stands for, or by its path).
        assert!(
            warnings[0].contains("portfolio: ") && warnings[0].contains("yices"),
            "{err}"
        );
        let v = summary(&err);
        if member == &missing {
            // Dropped before the session began: z3 alone, as with `--solver z3`.
            assert!(v.get("solvers").is_none(), "{v}");
        } else {
            let members = v["solvers"].as_array().unwrap();
            assert_eq!(members[1]["wins"].as_u64(), Some(0), "{v}");
            // Run at most twice (a look at its command line when the session begins, one
            // start), not again for each of the 12 queries.
            let n = std::fs::read_to_string(&starts).unwrap().lines().count();
            assert!(n <= 2, "{n} runs: {v}");
        }
    }
}

#[test]
fn a_member_killed_mid_session() {
    require_all();
    let ks = [15, 16, 33, 7, 300, 600, 9, 10, 45, 46];
    let script = arithmetic_script(&ks);
    let z3 = z3_verdicts(&script);
    let mut s = Session::start(&[
        "--solver",
        "z3,yices",
        "--cache",
        "none",
        "--strategy",
        "hybrid",
    ]);
    let mut got = Vec::new();
    let mut killed = 0;
    for (i, line) in script.lines().enumerate() {
        if line == "(check-sat)" {
            got.push(s.ask(line, T));
            if got.len() % 3 == 0 {
                for p in descendants_of(s.pid()) {
                    if common::comm(p).starts_with("yices") {
                        kill(p, 9);
                        killed += 1;
                    }
                }
            }
        } else {
            assert!(s.send(line), "send line {i}");
        }
    }
    let (_, err, timed_out) = s.finish(T);
    assert!(!timed_out, "{err}");
    assert_eq!(got, z3, "{err}");
    assert!(killed > 0, "no yices process ever ran under smtproxy");
}

/// z3 behind a wrapper that holds each of its answers back 100 ms: the portfolio learns
/// that yices (`yices-log`, which appends everything it is sent to `input` and a line to
/// `starts` per process) is faster and sends it the queries.
fn slow_z3_and_logged_yices(dir: &Path) -> (String, PathBuf, PathBuf) {
    let slow_z3 = held(dir, "z3-slow", "z3", "0.1");
    let input = dir.join("yices-input.smt2");
    let starts = dir.join("yices-starts");
    let yices = wrapper(
        dir,
        "yices-log",
        &format!(
            "echo start >> '{}'\ntee -a '{}' | exec yices-smt2 \"$@\"",
            starts.display(),
            input.display()
        ),
    );
    (
        format!("{},{}", slow_z3.display(), yices.display()),
        input,
        starts,
    )
}

#[test]
fn a_member_answers_from_its_own_stack() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let (solvers, input, starts) = slow_z3_and_logged_yices(dir.path());
    let (script, z3) = mixed_arithmetic(24);
    let out = hybrid_portfolio(&solvers, &script);
    out.assert_no_panic_no_hang("slow z3, logged yices");
    let err = out.stderr_str();
    assert_eq!(check_sat_answers(&out.stdout_str()), z3, "{err}");
    let v = summary(&err);
    let members = v["solvers"].as_array().unwrap();
    let yices_wins = members[1]["wins"].as_u64().unwrap();
    assert!(yices_wins >= 12, "yices should answer most queries: {v}");
    // yices was kept incremental: the client's pops and pushes reached it as pops and
    // pushes of its own stack, not as a (reset) and the whole query each time.
    let sent = std::fs::read_to_string(&input).unwrap();
    let count = |pat: &str| sent.matches(pat).count() as u64;
    assert!(count("(pop ") + 1 >= yices_wins, "{sent}");
    assert!(count("(push 1)") >= yices_wins, "{sent}");
    assert_eq!(count("(reset)"), 0, "{sent}");
    // The declarations were sent once per process, not once per query.
    let nstarts = std::fs::read_to_string(&starts).unwrap().lines().count() as u64;
    assert!(count("(declare-fun x ") <= nstarts, "{sent}");
}

/// A member's answer is timed when it comes, not when smtproxy began to look for it: yices
/// behind a wrapper that holds each of its answers back 3 ms (z3 holding its own back
/// 100 ms, so yices answers alone, and a look at a lone member waits up to 5 ms) has its
/// answers timed at 3 ms or more each, and its models' reads are timed too. Timed from
/// the look's start, an answer that came during the first look measured next to nothing
/// (23 such answers: 5-8 ms in all), and the learner kept a member that had grown slower.
#[test]
fn a_members_answer_is_timed_when_it_comes() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let slow_z3 = held(dir.path(), "z3-slow", "z3", "0.1");
    let held_yices = held(dir.path(), "yices-held", "yices-smt2", "0.003");
    let solvers = format!("{},{}", slow_z3.display(), held_yices.display());
    let (script, z3) = mixed_arithmetic(24);
    let v = portfolio_summary(&solvers, &script, &[], &z3);
    let yices = &v["solvers"].as_array().unwrap()[1];
    let answers = yices["answers"].as_u64().unwrap();
    let ms = yices["answer_ms"].as_f64().unwrap();
    assert!(answers >= 12, "yices should answer most queries: {v}");
    assert!(
        ms >= 3.0 * answers as f64,
        "{answers} answers held 3 ms each were timed at {ms:.1} ms in all: {v}"
    );
    assert!(yices["model_reads"].as_u64().unwrap() >= 1, "{v}");
}

/// A class slow enough to be raced from its first query (yices' answers held back 0.3 s
/// each, z3's 0.6 s, by wrappers; past `learner::SLOW_MS` with yices the faster) races z3
/// on its own incremental stack, the path the learner measured it on: one z3 process, and
/// no `(reset)` in what it read. Posed in a fresh context in a second z3 (as races did),
/// z3 lost what its stack had learnt: on domain.smt2 0.7 s a query against 10-17 ms.
#[test]
fn a_race_poses_the_first_solver_on_its_own_stack() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("z3-input.smt2");
    let starts = dir.path().join("z3-starts");
    let z3 = wrapper(
        dir.path(),
        "z3-logged-held",
        &format!(
            r#"echo start >> '{}'
tee -a '{}' | z3 "$@" | while IFS= read -r l; do
  case "$l" in sat|unsat) sleep 0.6;; esac
  printf '%s\n' "$l"
done"#,
            starts.display(),
            input.display()
        ),
    );
    let yices = held(dir.path(), "yices-held", "yices-smt2", "0.3");
    let (script, z3_answers) = mixed_arithmetic(8);
    let solvers = format!("{},{}", z3.display(), yices.display());
    let v = portfolio_summary(&solvers, &script, &[], &z3_answers);
    let members = v["solvers"].as_array().unwrap();
    assert!(members[1]["wins"].as_u64().unwrap() >= 4, "{v}");
    assert!(v["portfolio_races"].as_u64().unwrap() >= 3, "{v}");
    let nstarts = std::fs::read_to_string(&starts).unwrap().lines().count();
    let sent = std::fs::read_to_string(&input).unwrap();
    assert_eq!(nstarts, 1, "{v}\n{sent}");
    assert_eq!(sent.matches("(reset)").count(), 0, "{v}\n{sent}");
    // Under `cache` the first solver's path keeps no stack and answers only as it blocks:
    // the race poses it in a fresh context beside yices, which still wins.
    let args = [
        "--solver",
        &solvers,
        "--cache",
        "none",
        "--strategy",
        "cache",
        "--stats",
    ];
    let out = run(&args, script.as_bytes(), T);
    out.assert_no_panic_no_hang("cache strategy");
    let err = out.stderr_str();
    assert_eq!(check_sat_answers(&out.stdout_str()), z3_answers, "{err}");
    let v = summary(&err);
    assert!(v["solvers"][1]["wins"].as_u64().unwrap() >= 4, "{v}");
    assert!(v["portfolio_races"].as_u64().unwrap() >= 3, "{v}");
}

/// z3 slow to start (`slow_starting_z3`): while it loads, yices (started beside it, not
/// after it) answers the queries, all sat (an `unsat` of another member waits for the first solver's, which
/// cross-checks it), and nothing waits for z3's start. Fails when exploring waits for the
/// first solver's own answer (z3 then wins, after a second).
#[test]
fn a_first_solver_slow_to_start_is_not_waited_for() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let ks: Vec<u32> = (1..=6).map(|i| 3 * i + 30).collect();
    let script = arithmetic_script(&ks);
    let z3 = z3_verdicts(&script);
    assert!(z3.iter().all(|a| a == "sat"), "{z3:?}");
    let solvers = format!("{},yices-smt2", slow_starting_z3(dir.path()).display());
    let v = portfolio_summary(&solvers, &script, &[], &z3);
    let members = v["solvers"].as_array().unwrap();
    assert_eq!(members[0]["wins"].as_u64(), Some(0), "{v}");
    assert!(members[1]["wins"].as_u64().unwrap() >= 1, "{v}");
    // The solvers' time is yices' answers, not z3's second of loading.
    assert!(v["solver_ms"].as_f64().unwrap() < 900.0, "{v}");
}

/// The same slow-starting z3 with yices, on queries that are all unsat. By default
/// yices' first `unsat` waits for z3's answer, which cross-checks it (z3 wins that race,
/// after its second of loading); with `--first-answer-wins` it is taken at once and z3's
/// start is waited for by nothing.
#[test]
fn an_unsat_first_waits_for_the_first_solver_unless_the_first_answer_wins() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let ks: Vec<u32> = (1..=6).map(|i| 3 * i + 31).collect();
    let script = arithmetic_script(&ks);
    let z3 = z3_verdicts(&script);
    assert!(z3.iter().all(|a| a == "unsat"), "{z3:?}");
    let solvers = format!("{},yices-smt2", slow_starting_z3(dir.path()).display());
    for first_wins in [false, true] {
        let extra: &[&str] = if first_wins {
            &["--first-answer-wins"]
        } else {
            &[]
        };
        let v = portfolio_summary(&solvers, &script, extra, &z3);
        let members = v["solvers"].as_array().unwrap();
        let z3_wins = members[0]["wins"].as_u64().unwrap();
        // z3 starts ahead of the first race (a portfolio warms it), so its second of
        // loading is a wait for its start, not solver time: the session's wall shows it.
        if first_wins {
            assert_eq!(z3_wins, 0, "{v}");
            assert!(members[1]["wins"].as_u64().unwrap() >= 1, "{v}");
            assert!(v["wall_ms"].as_f64().unwrap() < 900.0, "{v}");
        } else {
            assert!(z3_wins >= 1, "yices' unsat held for z3's: {v}");
            assert!(v["wall_ms"].as_f64().unwrap() >= 900.0, "{v}");
        }
    }
}

#[test]
fn a_killed_member_is_rebuilt_from_the_mirror() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let (solvers, input, starts) = slow_z3_and_logged_yices(dir.path());
    let ks: Vec<u32> = (0..18).map(|i| 3 * i + 5 + (i % 2)).collect();
    let script = arithmetic_script(&ks);
    let z3 = z3_verdicts(&script);
    let mut s = Session::start(&[
        "--solver",
        &solvers,
        "--cache",
        "none",
        "--strategy",
        "hybrid",
        "--stats",
    ]);
    let mut got = Vec::new();
    let mut killed = 0;
    let mut rounds = 0;
    // A kill is due after every 6th query; a member that is not running then (killed as
    // the loser of an exploring race, restarted only when next needed) is killed after
    // the next query that finds it running, while queries are left to rebuild it for.
    let mut due = 0;
    for (i, line) in script.lines().enumerate() {
        if line == "(check-sat)" {
            got.push(s.ask(line, T));
            if got.len() % 6 == 0 && got.len() < ks.len() {
                due += 1;
            }
            if due > rounds && got.len() + 3 <= ks.len() {
                // The member's whole process (the wrapper, its tee and yices) between
                // two queries: found dead at its next use.
                let before = killed;
                let mut gone = Vec::new();
                for p in descendants_of(s.pid()) {
                    let c = common::comm(p);
                    if c.starts_with("yices") || c.starts_with("tee") {
                        kill(p, 9);
                        killed += 1;
                        gone.push(p);
                    }
                }
                // Dead before the next query is sent (a kill still on its way would be a
                // death during that query, which the learner holds against the member).
                let t0 = Instant::now();
                while gone.iter().any(|&p| common::alive(p)) && t0.elapsed() < T {
                    std::thread::sleep(Duration::from_millis(5));
                }
                rounds += usize::from(killed > before);
            }
        } else {
            assert!(s.send(line), "send line {i}");
        }
    }
    let (_, err, timed_out) = s.finish(T);
    assert!(!timed_out, "{err}");
    assert_eq!(got, z3, "{err}");
    assert_eq!(rounds, 2, "yices was never running again after a 6th query");
    let v = summary(&err);
    let members = v["solvers"].as_array().unwrap();
    assert!(members[1]["wins"].as_u64().unwrap() >= 6, "{v}");
    // Each kill was followed by a new process, rebuilt with the declarations and the
    // query's conjuncts, and that process went on answering from its stack.
    let nstarts = std::fs::read_to_string(&starts).unwrap().lines().count();
    // (A loser of an exploring race is killed too, so a loaded machine may see more.)
    assert!(nstarts > rounds, "{nstarts} starts for {rounds} kills");
    let sent = std::fs::read_to_string(&input).unwrap();
    assert_eq!(sent.matches("(declare-fun x ").count(), nstarts, "{sent}");
    assert_eq!(sent.matches("(reset)").count(), 0, "{sent}");
    assert!(sent.matches("(pop ").count() >= 6, "{sent}");
}

/// Queries of one class with unique models, each followed by a get-value.
fn unique_models_script() -> String {
    let mut s = String::from(
        "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 32))\n(declare-const y (_ BitVec 32))\n",
    );
    for k in [15u32, 21, 30, 303] {
        s.push_str(&format!(
            "(push 1)\n(assert (= (bvmul x #x00000003) #x{k:08x}))\n(assert (= (bvadd x y) #x00000064))\n(check-sat)\n(get-value (x y))\n(pop 1)\n"
        ));
    }
    s
}

#[test]
fn values_in_the_first_solver_s_dialect() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    // cvc5 a second slower on every check-sat: once measured, z3 answers the class.
    let slow_cvc5 = held(dir.path(), "cvc5-slow", "cvc5", "1");
    let script = unique_models_script();
    let slow = format!("{},z3", slow_cvc5.display());
    for (solvers, own) in [
        (
            slow.as_str(),
            &["cvc5", "--lang", "smt2", "--incremental"][..],
        ),
        ("z3,cvc5,yices", &["z3", "-in"][..]),
    ] {
        let direct = run_prog(own[0], &own[1..], script.as_bytes(), T);
        let out = hybrid_portfolio(solvers, &script);
        out.assert_no_panic_no_hang(solvers);
        assert_eq!(
            out.stdout_str(),
            direct.stdout_str(),
            "{solvers} against {}",
            own[0]
        );
        if solvers == slow {
            // Some of those values came from z3 and were printed as cvc5 prints them.
            let v = summary(&out.stderr_str());
            let members = v["solvers"].as_array().unwrap();
            assert!(members[1]["wins"].as_u64().unwrap() > 0, "{v}");
        }
    }
}

#[test]
fn a_lying_member_is_caught() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let liar = wrapper(
        dir.path(),
        "yices-liar",
        r#"yices-smt2 "$@" | sed -u 's/^sat$/unsat/'"#,
    );
    // x * y = 60491 (241 * 251) with both factors in (1, 65536): sat, two models.
    let mut script = String::from(
        "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 32))\n(declare-const y (_ BitVec 32))\n(assert (= (bvmul x y) #x0000ec4b))\n(assert (bvugt x #x00000001))\n(assert (bvugt y #x00000001))\n(assert (bvult x #x00010000))\n(assert (bvult y #x00010000))\n(check-sat)\n",
    );
    script.push_str(&arithmetic_script(&[15, 16, 33, 7]).replace("(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 32))\n(declare-const y (_ BitVec 32))\n", "(reset-assertions)\n"));
    let z3 = z3_verdicts(&script);
    assert_eq!(z3[0], "sat");
    let store = dir.path().join("store.sqlite3");
    let store_s = store.to_string_lossy().into_owned();
    let solvers = format!("z3,{}", liar.display());
    let out = run(
        &[
            "--solver",
            &solvers,
            "--cache",
            &store_s,
            "--strategy",
            "hybrid",
            "--stats",
        ],
        script.as_bytes(),
        T,
    );
    out.assert_no_panic_no_hang("liar");
    let err = out.stderr_str();
    assert_eq!(check_sat_answers(&out.stdout_str()), z3, "{err}");
    assert!(err.contains("solver disagreement"), "not reported:\n{err}");
    let v = summary(&err);
    assert!(field(&v, "solver_disagreements") >= 1, "{v}");
    // The unsat was not stored: z3 alone on the same store still answers sat.
    let again = run(
        &[
            "--solver",
            "z3",
            "--cache",
            &store_s,
            "--strategy",
            "hybrid",
        ],
        script.as_bytes(),
        T,
    );
    assert_eq!(check_sat_answers(&again.stdout_str()), z3);
}

#[test]
fn bench_rows_per_solver_portfolio_and_virtual_best() {
    require_all();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let json_s = json.to_string_lossy().into_owned();
    let log = corpus("klee/sbase-expr/solver-queries.smt2.gz");
    let log_s = log.to_string_lossy().into_owned();
    let out = run(
        &[
            "--solver",
            "z3,yices",
            "bench",
            "--strategies",
            "hybrid",
            "--cache",
            "none",
            "--json",
            &json_s,
            &log_s,
        ],
        b"",
        T,
    );
    assert_eq!(out.code(), Some(0), "{}", out.stderr_str());
    let stdout = out.stdout_str();
    let rows: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(
        rows,
        ["hybrid@z3", "hybrid@yices", "hybrid@z3,yices", "hybrid@vbs"],
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = v["runs"].as_array().unwrap();
    let solver: Vec<&str> = runs.iter().map(|r| r["solver"].as_str().unwrap()).collect();
    assert_eq!(solver, ["z3", "yices", "z3,yices", "vbs"]);
    let wall = |i: usize| runs[i]["wall_ms"].as_f64().unwrap();
    // Per check-sat the least solver wait and the mean of smtproxy's own work: never more
    // than the solo runs' mean in all, and more than nothing.
    assert!(wall(3) <= (wall(0) + wall(1)) / 2.0 + 1e-6, "{v}");
    assert!(wall(3) > 0.0, "{v}");
    for r in runs {
        assert_eq!(r["strategy"], "hybrid");
        assert_eq!(r["queries"], runs[0]["queries"]);
        assert_eq!(r["expected_mismatches"], 0);
    }
    assert_eq!(runs[2]["solvers"].as_array().unwrap().len(), 2);
}
