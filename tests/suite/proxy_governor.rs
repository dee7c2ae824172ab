//! The default strategy's governor (`session::governor`): a KLEE stream (every `(exit)`
//! read as `(reset)`, as a client feeds the solver directly) through `smtproxy --solver S`
//! with no `--strategy`, against S fed the same stream. The governor always measures the
//! lean route once the first window of modelled queries is over, so both routes and the
//! switches between them run here, whatever the timings decide afterwards.
//!
//! Asserted: every check-sat answer equals the solver's own, in order; `--stats` shows at
//! least one route switch, a lean window's worth of queries answered by the lean route
//! where the solver is cheaper than smtproxy's own work (yices; in one of three runs, since
//! the routes' costs are timed on a machine the suite loads), and at least one where a
//! probe of the lean route may end early as hopeless (z3, cvc5); a named strategy
//! (`--strategy hybrid`) is never governed; a lean probe on input that is all there at
//! once ends after a few queries; a solver's slow start is not charged to the route
//! that pays it; behind z3 a turn to the lean route at a pop takes a z3 warmed ahead,
//! which answers as one that was not.

use crate::common;

use common::replies::check_sat_answers;
use common::{bin, field, require, run_prog, summary, Out};
use std::time::Duration;

/// Runs smtproxy with `args` on `input` up to three times, `check` asserting each run's
/// output (answers, switches), until one run answered `min_lean` queries or more on the
/// lean route; fails if none did. Which route wins is timed: on a loaded machine (the
/// suite's other tests) a new yices' first queries, each a wait for another process to be
/// scheduled, have looked hopeless, and the session then stays modelled, with answers as
/// right. So what `check` asserts holds on every run, the lean window on one of three.
fn lean_in_one_of_three(args: &[&str], input: &[u8], min_lean: u64, check: impl Fn(&Out)) {
    let mut lean_runs = Vec::new();
    for _ in 0..3 {
        let out = run_prog(bin(), args, input, Duration::from_secs(300));
        out.assert_no_panic_no_hang("smtproxy");
        check(&out);
        let lean = field(&summary(&out.stderr_str()), "lean_queries");
        lean_runs.push(lean);
        if lean >= min_lean {
            return;
        }
    }
    panic!("no lean window of {min_lean} queries in three runs (lean queries: {lean_runs:?})");
}

fn governed_matches_solver(name: &str, prog: &str, flags: &[&str], min_lean: u64) {
    require(prog);
    let input = common::klee_stream("klee/sbase-expr/solver-queries.smt2.gz");
    let t = Duration::from_secs(300);
    let direct = run_prog(prog, flags, &input, t);
    direct.assert_no_panic_no_hang(prog);
    let want = check_sat_answers(&direct.stdout_str());
    assert_eq!(want.len(), 296, "{prog} answered every query");
    assert!(!want.iter().any(|a| a == "unknown"));

    let mut args = vec!["--solver", name, "--cache", "none", "--stats"];
    args.extend_from_slice(flags);
    lean_in_one_of_three(&args, &input, min_lean, |out| {
        assert_eq!(
            check_sat_answers(&out.stdout_str()),
            want,
            "answers differ from {prog}'s"
        );
        let s = summary(&out.stderr_str());
        assert_eq!(field(&s, "queries"), 296);
        assert!(field(&s, "route_switches") >= 1, "no route switch: {s}");
    });

    let mut named = vec![
        "--solver",
        name,
        "--cache",
        "none",
        "--stats",
        "--strategy",
        "hybrid",
    ];
    named.extend_from_slice(flags);
    let out = run_prog(bin(), &named, &input, t);
    assert_eq!(check_sat_answers(&out.stdout_str()), want);
    let s = summary(&out.stderr_str());
    assert_eq!(field(&s, "route_switches"), 0);
    assert_eq!(field(&s, "lean_queries"), 0);
}

#[test]
fn governed_yices_answers_as_yices() {
    governed_matches_solver("yices", "yices-smt2", &["--incremental"], 64);
}

#[test]
fn governed_z3_answers_as_z3() {
    governed_matches_solver("z3", "z3", &["-in"], 1);
}

#[test]
fn governed_cvc5_answers_as_cvc5() {
    governed_matches_solver("cvc5", "cvc5", &["--incremental"], 1);
}

/// A stream the cache answers almost entirely (KLEE's regexp, 17,958 queries, none of
/// which hybrid sends to z3), fed whole as from a file: the first probe of the lean route
/// ends early, with no more check-sats sent to z3 than its early end pays for (about 12
/// ms here: z3's first query alone, its context built, is nearly that), instead of a
/// whole pipe of queries already sent (it was 197 of them, 400 ms of z3's time; then 16,
/// about 70 ms). Later probes are the governor's to schedule; each is as short.
#[test]
fn a_lean_probe_ends_after_a_few_queries_however_much_input_is_ready() {
    require("z3");
    let input = common::klee_stream("klee/regexp/all-queries.smt2.gz");
    let mut cmd = std::process::Command::new(bin());
    cmd.args(["--solver", "z3", "--cache", "none", "--stats", "-in"])
        .env("SMTPROXY_GOVERNOR_TRACE", "1");
    let out = common::run_cmd(cmd, &input, Duration::from_secs(300));
    out.assert_no_panic_no_hang("smtproxy");
    let err = out.stderr_str();
    let s = summary(&err);
    assert_eq!(field(&s, "queries"), 17958);
    // "governor: Lean window of N (...": every probe of the lean route, in order.
    let probes: Vec<u64> = err
        .lines()
        .filter_map(|l| l.strip_prefix("governor: Lean window of "))
        .filter_map(|r| r.split(' ').next()?.parse().ok())
        .collect();
    assert!(!probes.is_empty(), "no probe of the lean route: {err}");
    assert!(
        probes.iter().all(|&n| (1..=4).contains(&n)),
        "probes of {probes:?} queries: {s}"
    );
}

/// yices behind a wrapper that sleeps `start_ms` before it runs: a solver whose start is
/// dear (a large binary, a loaded machine). Each route pays a start when the session
/// turns to it, once in a window of a few queries; the governor leaves the waits for
/// starts out of both routes' costs, so the session still goes lean, where yices answers
/// the queries faster than smtproxy's own work. Charged to the lean probe's first
/// queries, a 100 ms start made them cost 23 ms per KiB against 3.3 modelled, and the
/// session stayed modelled for good.
#[test]
fn a_solvers_start_is_not_charged_to_the_route_that_pays_it() {
    use std::os::unix::fs::PermissionsExt;
    require("yices-smt2");
    let dir = tempfile::tempdir().unwrap();
    // A file name starting with "yices" is taken as yices (its dialect, its flags).
    let slow = dir.path().join("yices-slow-start");
    let yices = common::program("yices-smt2");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh\nsleep 0.15\nexec {:?} \"$@\"\n",
            yices.to_str().expect("a UTF-8 path")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = common::klee_stream("klee/sbase-expr/solver-queries.smt2.gz");
    let t = Duration::from_secs(300);
    let direct = run_prog("yices-smt2", &["--incremental"], &input, t);
    let want = check_sat_answers(&direct.stdout_str());
    assert_eq!(want.len(), 296);
    let slow = slow.to_str().expect("a UTF-8 path");
    let args = ["--solver", slow, "--cache", "none", "--stats"];
    lean_in_one_of_three(&args, &input, 64, |out| {
        assert_eq!(check_sat_answers(&out.stdout_str()), want);
    });
}

/// A client that never resets (yosys-smtbmc: transitions asserted at the base level, each
/// step's property checked in a scope of its own) behind yices: the governor decides at
/// pops too, so the session goes lean once yices is measured cheaper than smtproxy's own
/// work, the client's state replayed into the new yices. Before, only a reset could end a
/// window, and such a session ran modelled throughout (69 ms against yices' 5 here).
#[test]
fn a_push_pop_session_goes_lean_at_a_pop() {
    require("yices-smt2");
    let input = common::corpus_text("sessions/yosys-smtbmc-lfsr-300.smt2.gz");
    let t = Duration::from_secs(300);
    let direct = run_prog("yices-smt2", &["--incremental"], input.as_bytes(), t);
    direct.assert_no_panic_no_hang("yices-smt2");
    assert_eq!(check_sat_answers(&direct.stdout_str()).len(), 300);
    let args = [
        "--solver",
        "yices",
        "--cache",
        "none",
        "--stats",
        "--incremental",
    ];
    lean_in_one_of_three(&args, input.as_bytes(), 64, |out| {
        // Every byte as yices wrote it (the trace's get-values included).
        assert_eq!(out.stdout_str(), direct.stdout_str());
        let s = summary(&out.stderr_str());
        assert!(field(&s, "route_switches") >= 1, "no route switch: {s}");
    });
}

/// The queries of the first window, from the governor's trace (`SMTPROXY_GOVERNOR_TRACE`)
/// of smtproxy behind yices on `input`; the answers must be yices' own.
fn first_window(input: &[u8]) -> u64 {
    let t = Duration::from_secs(300);
    let direct = run_prog("yices-smt2", &["--incremental"], input, t);
    direct.assert_no_panic_no_hang("yices-smt2");
    let mut cmd = std::process::Command::new(bin());
    cmd.args(["--solver", "yices", "--cache", "none", "--incremental"])
        .env("SMTPROXY_GOVERNOR_TRACE", "1");
    let out = common::run_cmd(cmd, input, t);
    out.assert_no_panic_no_hang("smtproxy");
    assert_eq!(
        check_sat_answers(&out.stdout_str()),
        check_sat_answers(&direct.stdout_str())
    );
    let err = out.stderr_str();
    let line = err
        .lines()
        .find(|l| l.starts_with("governor: "))
        .unwrap_or_else(|| panic!("no decision traced: {err}"));
    let n = line
        .strip_prefix("governor: Modelled window of ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok());
    n.unwrap_or_else(|| panic!("not a first modelled window: {line}"))
}

/// smtproxy answers none of a yosys-smtbmc session's first queries itself (each is the
/// unsat check of a new step): the first window ends after `PROBE_MIN` of them and the
/// lean route is measured then. A KLEE log whose first queries the cache stage answers
/// some of keeps the whole window (measured after 16 queries, such a log's cold start
/// made the modelled route look dearer than it is).
#[test]
fn the_first_window_is_short_where_smtproxy_answers_none_of_it() {
    use smtproxy::session::governor::{PROBE_MIN, WINDOW};
    require("yices-smt2");
    let yosys = common::corpus_text("sessions/yosys-smtbmc-lfsr-300.smt2.gz");
    assert_eq!(first_window(yosys.as_bytes()), PROBE_MIN);
    let klee = common::klee_stream("klee/sbase-expr/solver-queries.smt2.gz");
    assert_eq!(first_window(&klee), WINDOW);
}

/// cyphert-sprs behind yices: smtproxy answers most of the first queries itself, but
/// the few it asks yices cost it a fraction of what smtproxy spends a query, so the first
/// window ends early (16 queries in 4 of 6 runs on the 2-core machine, 45-48 in the
/// others) and the lean route, 0.05-0.11 ms per KiB against 0.21 modelled, is measured then.
/// Timing decides it: asked of one run in three.
#[test]
fn the_first_window_is_short_where_the_solvers_checks_cost_less_than_smtproxy() {
    use smtproxy::session::governor::WINDOW;
    require("yices-smt2");
    let sprs = common::klee_stream("external/cyphert-sprs.smt2.gz");
    let firsts: Vec<u64> = (0..3).map(|_| first_window(&sprs)).collect();
    assert!(
        firsts.iter().any(|&n| n < WINDOW),
        "first windows {firsts:?}"
    );
}

/// yosys-smtbmc's 1,200-step session behind z3, its own command line (`z3 -smt2 -in`):
/// z3 spends most of the modelled route's time, but on checks that each take it well
/// under a millisecond, so a new z3 has little to learn again and the session goes lean
/// at a pop. Before, a solver that had most of the time kept the session modelled
/// whatever its checks cost (0.6 s against z3's 0.15 s here).
#[test]
fn a_solver_busy_on_cheap_checks_does_not_keep_the_session_modelled() {
    require("z3");
    let input = common::corpus_text("sessions/yosys-smtbmc-lfsr-1200-z3.smt2.gz");
    let t = Duration::from_secs(300);
    let direct = run_prog("z3", &["-smt2", "-in"], input.as_bytes(), t);
    direct.assert_no_panic_no_hang("z3");
    assert_eq!(check_sat_answers(&direct.stdout_str()).len(), 1200);
    let args = ["--cache", "none", "--stats", "-smt2", "-in"];
    lean_in_one_of_three(&args, input.as_bytes(), 256, |out| {
        assert_eq!(out.stdout_str(), direct.stdout_str());
    });
}

/// The other way: a push/pop session whose queries smtproxy answers itself (no solver
/// call) behind a z3 that takes 5 ms a check-sat. The governor's probe of the lean route
/// ends as hopeless and the session goes back to the modelled route at a pop; the
/// assertions the passthrough sent meanwhile at the base level (each pinning a constant
/// that later get-values read) are parsed into the client's view then, so every value
/// after the switch back is z3's. Dropped, they would leave those constants free.
#[test]
fn a_lean_probe_hands_a_push_pop_session_back_with_its_assertions() {
    require("z3");
    require("python3");
    let dir = tempfile::tempdir().unwrap();
    let slow = common::z3_holding(dir.path(), "z3-slow-checks", &["(check-sat"], 5);
    let mut input = String::from(
        "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n",
    );
    for k in 0..300 {
        input += &format!(
            "(declare-fun y{k} () (_ BitVec 8))\n(assert (= y{k} #x{:02x}))\n\
             (push 1)\n(assert (bvugt x #x00))\n(check-sat)\n(get-value (y{k} y{}))\n(pop 1)\n",
            (k * 7 + 3) % 256,
            k / 2
        );
    }
    let t = Duration::from_secs(300);
    let direct = run_prog("z3", &["-in"], input.as_bytes(), t);
    direct.assert_no_panic_no_hang("z3");
    let slow = slow.to_str().expect("a UTF-8 path");
    let args = ["--solver", slow, "--cache", "none", "--stats"];
    let out = run_prog(bin(), &args, input.as_bytes(), t);
    out.assert_no_panic_no_hang("smtproxy");
    assert_eq!(out.stdout_str(), direct.stdout_str());
    let s = summary(&out.stderr_str());
    assert!(field(&s, "route_switches") >= 2, "not back from lean: {s}");
    let lean = field(&s, "lean_queries");
    assert!((1..64).contains(&lean), "{lean} queries lean: {s}");
}

/// Every route switch the governor can make, made as often as it can
/// (`SMTPROXY_GOVERNOR_FLIP=1`: the other route after every query, at the next reset or
/// pop): push/pop sessions (the hand corpus' scoped files, yosys-smtbmc's recorded
/// session, a session asserting at the base level between its scopes) and a reset one
/// (Manticore's, its first 120 queries) behind each solver answer every check-sat as the
/// solver does alone and print as many errors, with at least two switches in each
/// session of four queries or more.
#[test]
fn switching_routes_at_every_window_changes_no_answer() {
    let mut based = String::from("(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n");
    for k in 0..40 {
        based += &format!(
            "(declare-fun y{k} () (_ BitVec 8))\n(assert (bvugt y{k} #x{k:02x}))\n\
             (push 1)\n(assert (= x (bvadd y{k} #x01)))\n(assert (bvult x #x{:02x}))\n\
             (check-sat)\n(pop 1)\n",
            (k * 5) % 256
        );
    }
    let manticore = common::corpus_text("sessions/manticore-solver-tests-500.smt2.gz");
    let manticore_cut = manticore
        .match_indices("(check-sat)")
        .nth(120)
        .map_or(manticore.len(), |(i, _)| i);
    let mut sessions: Vec<(String, String)> = [
        "arrays.smt2",
        "bv.smt2",
        "lia.smt2",
        "push-pop.smt2",
        "scoped-sorts.smt2",
    ]
    .iter()
    .map(|f| {
        let p = common::corpus(&format!("hand/{f}"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        (f.to_string(), text)
    })
    .collect();
    // yosys-smtbmc's first 40 steps (the later ones are the dear ones).
    let yosys = common::corpus_text("sessions/yosys-smtbmc-lfsr-150.smt2.gz");
    let cut = yosys
        .match_indices("(check-sat)")
        .nth(40)
        .map_or(yosys.len(), |(i, _)| i);
    sessions.push((
        "yosys-smtbmc-lfsr-150, 40 steps".into(),
        yosys[..cut].to_string(),
    ));
    sessions.push(("base-level assertions".into(), based));
    sessions.push((
        "manticore, 120 queries".into(),
        manticore[..manticore_cut].to_string(),
    ));
    let t = Duration::from_secs(300);
    for (name, prog, flags) in [
        ("z3", "z3", &["-in"][..]),
        ("yices", "yices-smt2", &["--incremental"][..]),
        ("cvc5", "cvc5", &["--incremental"][..]),
    ] {
        require(prog);
        for (file, input) in &sessions {
            // Manticore's session is z3's (its options and objectives); cvc5 takes minutes
            // on yosys-smtbmc's.
            if (name != "z3" && file.starts_with("manticore"))
                || (name == "cvc5" && file.starts_with("yosys"))
            {
                continue;
            }
            let direct = run_prog(prog, flags, input.as_bytes(), t);
            direct.assert_no_panic_no_hang(prog);
            let mut cmd = std::process::Command::new(bin());
            cmd.args(["--solver", name, "--cache", "none", "--stats"])
                .args(flags)
                .env("SMTPROXY_GOVERNOR_FLIP", "1");
            let out = common::run_cmd(cmd, input.as_bytes(), t);
            out.assert_no_panic_no_hang("smtproxy");
            let (d, p) = (direct.stdout_str(), out.stdout_str());
            assert_eq!(
                check_sat_answers(&p),
                check_sat_answers(&d),
                "{file} behind {name}: answers differ"
            );
            let errors = |s: &str| s.lines().filter(|l| l.contains("(error")).count();
            assert_eq!(
                errors(&p),
                errors(&d),
                "{file} behind {name}:\n{p}\n---\n{d}"
            );
            let s = summary(&out.stderr_str());
            if check_sat_answers(&d).len() >= 4 {
                assert!(
                    field(&s, "route_switches") >= 2,
                    "{file} behind {name}: {s}"
                );
            }
        }
    }
}

/// z3 behind a wrapper `dir/z3-logged` that copies each process's input to a file of its
/// own in `dir` (`in.PID`).
fn logged_z3(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("z3-logged");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\ntee '{}/in.'$$ | {:?} \"$@\"\n",
            dir.display(),
            common::program("z3")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The inputs of the z3 processes `logged_z3` saw.
fn logged_inputs(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().to_string();
            name.starts_with("in.")
                .then(|| std::fs::read_to_string(e.path()).unwrap_or_default())
        })
        .collect()
}

/// A governed push/pop session behind z3 keeps a warmed lean process ready from the
/// client's first push (its context built by `(simplify true)` while the modelled route
/// runs), and a turn to the lean route at a pop takes it: the process that then answers
/// the client's queries began with the warm-up. The answers and errors are z3's own.
/// Where the client set an option z3 fixes once its context is built
/// (`:global-declarations`), and with `--jobs 1`, no process began so.
#[test]
fn a_turn_to_the_lean_route_at_a_pop_takes_the_warmed_spare() {
    require("z3");
    let yosys = common::corpus_text("sessions/yosys-smtbmc-lfsr-150.smt2.gz");
    let cut = yosys
        .match_indices("(check-sat)")
        .nth(30)
        .map_or(yosys.len(), |(i, _)| i);
    let session = &yosys[..cut];
    let global = format!("(set-option :global-declarations true)\n{session}");
    let t = Duration::from_secs(300);
    let cases: [(&str, &[&str], bool); 3] = [
        (session, &[], true),
        (global.as_str(), &[], false),
        (session, &["--jobs", "1"], false),
    ];
    for (input, extra, spare) in cases {
        let dir = tempfile::tempdir().unwrap();
        let z3 = logged_z3(dir.path());
        let direct = run_prog("z3", &["-in"], input.as_bytes(), t);
        direct.assert_no_panic_no_hang("z3");
        let want = check_sat_answers(&direct.stdout_str());
        assert_eq!(want.len(), 30);
        let mut cmd = std::process::Command::new(bin());
        cmd.args([
            "--solver",
            z3.to_str().unwrap(),
            "--cache",
            "none",
            "--stats",
        ])
        .args(extra)
        .arg("-in")
        .env("SMTPROXY_GOVERNOR_FLIP", "1");
        let out = common::run_cmd(cmd, input.as_bytes(), t);
        out.assert_no_panic_no_hang("smtproxy");
        assert_eq!(check_sat_answers(&out.stdout_str()), want);
        let errors = |s: &str| s.lines().filter(|l| l.contains("(error")).count();
        assert_eq!(errors(&out.stdout_str()), errors(&direct.stdout_str()));
        // The warm-up's own answer never reaches the client.
        let bare_true = |s: &str| s.lines().filter(|l| l.trim() == "true").count();
        assert_eq!(
            bare_true(&out.stdout_str()),
            bare_true(&direct.stdout_str())
        );
        let s = summary(&out.stderr_str());
        assert!(field(&s, "lean_queries") >= 1, "never lean: {s}");
        let inputs = logged_inputs(dir.path());
        let warmed_and_used = inputs
            .iter()
            .filter(|i| i.starts_with("(simplify true)") && i.contains("(check-sat)"))
            .count();
        if spare {
            assert!(
                warmed_and_used >= 1,
                "no lean process began warmed: {} processes",
                inputs.len()
            );
        } else {
            assert!(
                !inputs.iter().any(|i| i.starts_with("(simplify true)")),
                "a spare was started ({extra:?}, {} bytes of input)",
                input.len()
            );
        }
    }
}

/// What a warmed spare relies on: z3 sent `(simplify true)` before anything else (its
/// context built) answers a script that sets any of `LEAN_WARM_OPTIONS` (with models,
/// cores, assumptions, assignments, scopes) as a z3 that was not warmed, the warm-up's
/// own `true` aside: the same answers, cores and assumptions, values and assignments for
/// the same names (the warm-up on the first line, as a spare's shares the line of its
/// handshake, so errors name the same lines). The values themselves may differ (a model
/// of its own, as any new z3 given the client's state at a turn to the lean route finds;
/// here `b` came out #x18 where the other said #x14), so their literals are masked. An
/// option z3 fixes once its context is built (`:global-declarations`) does change what
/// it prints, so the comparison can tell.
#[test]
fn z3_warmed_answers_as_z3_for_every_warm_option() {
    require("z3");
    let body = "(set-logic QF_BV)\n(declare-fun x () Bool)(declare-fun y () Bool)\n\
        (declare-fun b () (_ BitVec 8))\n\
        (assert (! x :named a))(assert (! (not x) :named n))(check-sat)(get-unsat-core)\n\
        (reset-assertions)(assert (! y :named c))(assert (bvugt b #x10))(check-sat)\n\
        (get-value (y b))(get-assignment)(check-sat-assuming ((not y)))\n\
        (get-unsat-assumptions)(push 1)(declare-fun z () (_ BitVec 8))\n\
        (assert (= z (bvadd b #x01)))(check-sat)(get-value (z))(pop 1)(check-sat)\n";
    let options: Vec<&str> = smtproxy::session::LEAN_WARM_OPTIONS.to_vec();
    assert!(options.contains(&":produce-models"));
    let all: String = options
        .iter()
        .map(|k| format!("(set-option {k} true)\n"))
        .collect();
    let scripts = std::iter::once(all).chain(options.iter().map(|k| {
        // Each alone, beside what the body needs.
        format!("(set-option {k} true)\n(set-option :produce-models true)\n(set-option :produce-unsat-cores true)\n")
    }));
    let t = Duration::from_secs(60);
    for opts in scripts {
        let plain = format!("{opts}{body}");
        let warmed = format!("(simplify true) {plain}");
        let p = run_prog("z3", &["-in"], plain.as_bytes(), t);
        let w = run_prog("z3", &["-in"], warmed.as_bytes(), t);
        p.assert_no_panic_no_hang("z3");
        w.assert_no_panic_no_hang("z3");
        let w = w.stdout_str();
        let rest = w
            .strip_prefix("true\n")
            .expect("the warm-up's answer first");
        let plain = p.stdout_str();
        assert!(
            plain.contains("(a n)") && plain.contains("sat\n(("),
            "{plain}"
        );
        assert_eq!(masked(rest), masked(&plain), "with {opts}");
    }
    let global = format!("(set-option :global-declarations true)\n{body}");
    let p = run_prog("z3", &["-in"], global.as_bytes(), t);
    let w = run_prog(
        "z3",
        &["-in"],
        format!("(simplify true) {global}").as_bytes(),
        t,
    );
    assert_ne!(
        w.stdout_str().strip_prefix("true\n").map(masked),
        Some(masked(&p.stdout_str())),
        "z3 took :global-declarations after its warm-up: the test cannot tell"
    );
}

/// `out` with the literals of values and assignments (`#x..`, `#b..`, `true`, `false` in
/// the answers to get-value and get-assignment, which open with `((`, and their
/// continuation lines) masked.
fn masked(out: &str) -> String {
    let mut depth = 0i64;
    let mut v = Vec::new();
    for line in out.lines() {
        let in_value = depth > 0 || line.starts_with("((");
        depth += line.matches('(').count() as i64 - line.matches(')').count() as i64;
        if !in_value {
            v.push(line.to_string());
            continue;
        }
        let words: Vec<String> = line
            .split_inclusive([' ', ')'])
            .map(|w| {
                let core = w.trim_end_matches([' ', ')']);
                let lit = core.starts_with("#x")
                    || core.starts_with("#b")
                    || core == "true"
                    || core == "false";
                if lit {
                    format!("_{}", &w[core.len()..])
                } else {
                    w.to_string()
                }
            })
            .collect();
        v.push(words.concat());
    }
    v.join("\n")
}
