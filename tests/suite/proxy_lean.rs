//! The lean passthrough (print-success as the client has it, batches closed by markers,
//! solver output relayed verbatim): real KLEE streams byte for byte equal to `z3 -in`,
//! markers never reaching the client with any solver, the client's line numbers in error
//! messages of an interactive session, print-success toggled on cvc5 and yices as they do
//! it themselves, z3 stopping after a lexical error, a deadline and solver deaths in the
//! middle of a batch.

use crate::common;

use common::{
    alive, descendants_of, kill, klee_stream, root, run_prog, run_under, run_z3, Session, FACTOR,
};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(60);

#[test]
fn klee_streams_byte_for_byte() {
    common::require("z3");
    for rel in [
        "klee/sort/solver-queries.smt2.gz",
        "klee/regexp/solver-queries.smt2.gz",
        "klee/sbase-echo/solver-queries.smt2.gz",
    ] {
        let input = klee_stream(rel);
        let z = run_prog("z3", &["-in"], &input, T);
        let p = run_z3("passthrough", &[], &input, T);
        assert!(!z.timed_out && !p.timed_out, "{rel}: hung");
        assert!(z.stdout.len() > 1000, "{rel}: z3 said too little");
        assert!(
            z.stdout == p.stdout,
            "{rel}: smtproxy's output differs from z3's"
        );
        // With print-success turned on by the client, z3 prints `success` lines: relayed too.
        let mut ps = b"(set-option :print-success true)\n".to_vec();
        ps.extend_from_slice(&input);
        let z = run_prog("z3", &["-in"], &ps, T);
        let p = run_z3("passthrough", &[], &ps, T);
        assert!(
            z.stdout.windows(8).filter(|w| w == b"success\n").count() > 100,
            "{rel}: no success lines"
        );
        assert!(
            z.stdout == p.stdout,
            "{rel} with print-success: smtproxy's output differs from z3's"
        );
    }
}

/// yices on the lean route, a stream far larger than a pipe holds (the solver's stdin is
/// fed while smtproxy pauses between reads of its output, `Proc::nap`), get-value after
/// every sat and yices' errors for get-value after unsat: byte for byte what
/// `yices-smt2 --incremental` prints.
#[test]
fn yices_stream_larger_than_a_pipe_byte_for_byte() {
    common::require("yices-smt2");
    let input = klee_stream("klee/sbase-expr/solver-queries.smt2.gz");
    assert!(input.len() > 256 * 1024, "the stream is larger than a pipe");
    let y = run_prog("yices-smt2", &["--incremental"], &input, T);
    let args = [
        "--solver",
        "yices",
        "--strategy",
        "passthrough",
        "--cache",
        "none",
        "--incremental",
    ];
    let p = run_prog(common::bin(), &args, &input, T);
    assert!(!y.timed_out && !p.timed_out, "hung");
    let out = y.stdout_str();
    assert_eq!(
        out.lines().filter(|l| *l == "sat" || *l == "unsat").count(),
        296
    );
    assert!(
        out.contains("(error \"the context is unsatisfiable\")"),
        "no errors"
    );
    assert!(out.contains("((select"), "no get-value answers");
    assert!(
        y.stdout == p.stdout,
        "smtproxy's output differs from yices'"
    );
}

#[test]
fn markers_never_reach_the_client() {
    let mut scripts: Vec<_> = std::fs::read_dir(root().join("smt2-corpus/hand"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "smt2"))
        .collect();
    // Not the inputs that hang the solver itself (they need --timeout-ms; see proxy_bad_input).
    scripts.extend(
        std::fs::read_dir(root().join("fuzz/regressions"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| !p.to_string_lossy().contains("-hangs-")),
    );
    scripts.sort();
    assert!(scripts.len() > 20);
    let mut checked = 0;
    for solver in ["z3", "cvc5", "yices"] {
        let bin = if solver == "yices" {
            "yices-smt2"
        } else {
            solver
        };
        common::require(bin);
        for s in &scripts {
            let input = std::fs::read(s).unwrap();
            let p = run_under(solver, "passthrough", &input, T);
            p.assert_no_panic_no_hang(&format!("{solver} < {}", s.display()));
            let out = p.stdout_str();
            // Text the client wrote itself may come back in an error message.
            let own = String::from_utf8_lossy(&input).matches("sp!sync").count();
            assert!(
                out.matches("sp!sync").count() <= own,
                "{solver} < {}: a marker reached the client:\n{out}",
                s.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= scripts.len());
}

#[test]
fn interactive_session_keeps_the_clients_line_numbers() {
    common::require("z3");
    // One command per round trip, so every command ends a batch and the marker takes the
    // rest of its line; blank and comment lines in between must still count.
    let lines = [
        "(declare-const x Int)",
        "",
        "; a comment",
        "(assert (> y 0))",
        "  (assert (> x 0))",
        "(check-sat)",
        "(get-value (x z))",
    ];
    let text = lines.join("\n") + "\n";
    let z = run_prog("z3", &["-in"], text.as_bytes(), T);
    let want: Vec<String> = z.stdout_str().lines().map(String::from).collect();
    assert_eq!(want.len(), 3, "z3: {want:?}");
    assert!(
        want[0].starts_with("(error \"line 4 column"),
        "z3: {want:?}"
    );

    let mut s = Session::start(&[
        "--solver",
        "z3",
        "--strategy",
        "passthrough",
        "--cache",
        "none",
    ]);
    for l in &lines[..3] {
        assert!(s.send(l));
    }
    assert_eq!(s.ask(lines[3], T), want[0]);
    assert!(s.send(lines[4]));
    assert_eq!(s.ask(lines[5], T), "sat");
    assert_eq!(s.ask(lines[6], T), want[2]);
    let (st, err, hung) = s.finish(T);
    assert!(!hung && !err.contains("panicked"), "{err}");
    // z3 exits with 1 after a session with errors.
    let z3_code = z.status.and_then(|s| s.code());
    assert_eq!(z3_code, Some(1));
    assert_eq!(st.and_then(|s| s.code()), z3_code, "{err}");
}

/// A command whose write ends with more bytes than the proxy reads at once (here a long
/// run of blank lines): when it is handled, unread input is still waiting, so it is sent
/// ahead without waiting for its answer; the rest of the input holds no command, so the
/// answer must be given before the proxy waits for the client again. (Found as a hang
/// under load when a client wrote a command and its line break in two writes.)
#[test]
fn answer_given_before_waiting_for_more_input() {
    common::require("z3");
    let mut s = Session::start(&[
        "--solver",
        "z3",
        "--strategy",
        "passthrough",
        "--cache",
        "none",
    ]);
    assert!(s.send("(declare-const x Int)"));
    for i in 0..3 {
        let mut text = format!("(assert (> x {i}))\n(check-sat)");
        text.push_str(&"\n".repeat(4 << 20));
        assert!(s.send(&text));
        assert_eq!(
            s.line(T).as_deref(),
            Some("sat"),
            "no answer while the proxy waits for input (round {i})"
        );
    }
    // The same with the command's line break in a write of its own.
    for i in 0..20 {
        assert!(s.send(&format!("(assert (> x {}))\n(check-sat)", 41 + i)));
        assert!(s.send(""));
        assert_eq!(s.line(T).as_deref(), Some("sat"), "round {i}");
    }
    let (st, err, hung) = s.finish(T);
    assert!(!hung && !err.contains("panicked"), "{err}");
    assert_eq!(st.and_then(|s| s.code()), Some(0), "{err}");
}

/// `solver` run directly and through smtproxy on `script`: the same bytes.
fn same_as_direct(solver: &str, direct: &[&str], prefix: &str, script: &str) {
    let mut input = prefix.as_bytes().to_vec();
    input.extend_from_slice(script.as_bytes());
    let d = run_prog(direct[0], &direct[1..], &input, T);
    let p = run_under(solver, "passthrough", script.as_bytes(), T);
    assert!(!d.timed_out && !p.timed_out);
    assert_eq!(
        p.stdout_str(),
        d.stdout_str(),
        "{solver}: smtproxy differs from the solver run directly"
    );
}

#[test]
fn print_success_toggled_on_cvc5_and_yices() {
    // cvc5 prints `success` after an echo under print-success (the echo of a marker, too)
    // and turns print-success off at (reset); yices has it on by default in interactive
    // mode (smtproxy turns it off first, as z3 has it).
    let script = "(set-option :print-success true)
(set-logic QF_LIA)
(declare-const x Int)
(echo \"e\")
(assert (> x 0))
(check-sat)
(reset)
(set-logic QF_LIA)
(declare-const x Int)
(assert (< x 0))
(check-sat)
(set-option :print-success true)
(declare-const y Int)
(set-option :print-success false)
(declare-const z Int)
(check-sat)
";
    common::require("cvc5");
    {
        same_as_direct(
            "cvc5",
            &["cvc5", "--lang", "smt2", "--incremental"],
            "",
            script,
        );
    }
    common::require("yices-smt2");
    {
        let args = [
            "yices-smt2",
            "--incremental",
            "--interactive",
            "--smt2-model-format",
        ];
        same_as_direct("yices", &args, "(set-option :print-success false)", script);
    }
}

#[test]
fn z3_stopping_after_a_lexical_error_is_restarted() {
    common::require("z3");
    // After `(#e...` z3 counts one parenthesis too many and swallows all further input.
    let mut s = Session::start(&[
        "--solver",
        "z3",
        "--strategy",
        "passthrough",
        "--cache",
        "none",
    ]);
    s.send("(declare-const x Int)");
    s.send("(assert (= x 7))");
    let t0 = Instant::now();
    let e = s.ask("(#et-info :authors)", T);
    assert!(e.starts_with("(error \"line 3 column"), "{e}");
    assert_eq!(s.ask("(check-sat)", T), "sat");
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "recovery took {:?}",
        t0.elapsed()
    );
    assert_eq!(
        s.ask("(get-value (x))", T),
        "((x 7))",
        "the client's state is replayed"
    );
    let (st, err, hung) = s.finish(T);
    assert!(!hung && !err.contains("panicked"), "{err}");
    // As z3 after a session with an error.
    assert_eq!(st.and_then(|s| s.code()), Some(1), "{err}");
}

const EASY: &str = "(pop 1)
(assert (= (bvmul x y) #x0000000000000006))
(assert (bvugt x #x0000000000000001))
(assert (bvult x #x0000000000000003))
(check-sat)
(get-value (x))
";

#[test]
fn deadline_in_the_middle_of_a_batch() {
    common::require("z3");
    // All of it in one write: the hard check-sat runs out of time inside a batch; what
    // follows it in the batch is sent again after the state is replayed.
    let input = format!("{FACTOR}(check-sat)\n(get-info :name)\n{EASY}");
    let t0 = Instant::now();
    let p = run_z3("passthrough", &["--timeout-ms", "300"], input.as_bytes(), T);
    p.assert_no_panic_no_hang("deadline in a batch");
    let out = p.stdout_str();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "unknown",
            "(:name \"Z3\")",
            "sat",
            "((x #x0000000000000002))"
        ],
        "{out}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t0.elapsed()
    );
}

#[test]
fn solver_killed_in_the_middle_of_a_batch() {
    common::require("z3");
    let mut s = Session::start(&[
        "--solver",
        "z3",
        "--strategy",
        "passthrough",
        "--cache",
        "none",
    ]);
    // One write: a batch with the hard check-sat in the middle.
    assert!(s.send(&format!("{FACTOR}(check-sat)\n(get-info :name)")));
    // Kill each solver that takes the check-sat on until smtproxy gives it up: the first
    // death is in a batch of many (the rest is sent again one command per batch), then
    // the check-sat dies twice alone in its batch.
    let mut killed = Vec::new();
    let t0 = Instant::now();
    let answer = loop {
        if let Some(l) = s.line(Duration::from_millis(300)) {
            break l;
        }
        assert!(t0.elapsed() < T, "no answer after killing {killed:?}");
        for pid in descendants_of(s.pid()) {
            if !killed.contains(&pid) && alive(pid) {
                kill(pid, 9);
                killed.push(pid);
            }
        }
    };
    assert_eq!(answer, "unknown", "after killing {killed:?}");
    assert!(killed.len() >= 2, "killed {killed:?}");
    assert_eq!(
        s.line(T).as_deref(),
        Some("(:name \"Z3\")"),
        "the command after it in the batch"
    );
    // The session goes on with the client's state (the declarations, the push).
    for l in EASY.lines().take(4) {
        s.send(l);
    }
    assert_eq!(s.ask("(check-sat)", T), "sat");
    assert_eq!(s.ask("(get-value (x))", T), "((x #x0000000000000002))");
    let (st, err, hung) = s.finish(T);
    assert!(!hung && !err.contains("panicked"), "{err}");
    assert_eq!(st.and_then(|s| s.code()), Some(0), "{err}");
}

/// The queries around a scoped optimisation: the same prefix, one more bound each, then a
/// pop. The optimisation (z3's `minimize`) sends the session to passthrough; the pop of its
/// level brings it back, so the later queries are the cache's and the models' again.
fn scoped_optimisation(setup: &str, rounds: usize) -> String {
    let mut s = String::from("(set-option :produce-models true)\n");
    s.push_str(setup);
    s.push_str("(declare-fun x () Int)\n(declare-fun y () Int)\n(assert (> x 0))\n");
    s.push_str("(assert (< y 100))\n(check-sat)\n");
    s.push_str(
        "(push 1)\n(assert (> y x))\n(minimize y)\n(check-sat)\n(get-objectives)\n(pop 1)\n",
    );
    for i in 0..rounds {
        s.push_str(&format!(
            "(push 1)\n(assert (< x {}))\n(check-sat)\n(get-value (x))\n(pop 1)\n(check-sat)\n",
            10 + i
        ));
    }
    s
}

#[test]
fn passthrough_ends_at_the_pop_of_its_level() {
    common::require("z3");
    let rounds = 12;
    let input = scoped_optimisation("", rounds);
    let direct = run_prog("z3", &["-in"], input.as_bytes(), T);
    let out = run_z3("hybrid", &["--stats", "-in"], input.as_bytes(), T);
    assert_eq!(
        out.stdout_str(),
        direct.stdout_str(),
        "{}",
        out.stderr_str()
    );
    let s = common::summary(&out.stderr_str());
    let field = |k: &str| common::field(&s, k);
    assert_eq!(field("fallbacks_passthrough"), 1, "{s}");
    // 2 + 2 * rounds check-sats; in passthrough every one would reach z3.
    assert_eq!(field("queries"), 2 + 2 * rounds as u64, "{s}");
    assert!(
        field("solver_checks") < field("queries") / 2,
        "back on the modelled strategies after the pop: {s}"
    );
}

#[test]
fn passthrough_stays_while_the_pop_leaves_unmodelled_state() {
    common::require("z3");
    // Declarations that outlive their level, and an option smtproxy does not model: the
    // pop keeps what sent the session to passthrough, so it stays there (every check-sat
    // goes to z3), answering as z3 does.
    for setup in [
        "(set-option :global-declarations true)\n",
        "(set-option :produce-unsat-cores true)\n",
    ] {
        let input = scoped_optimisation(setup, 4);
        let direct = run_prog("z3", &["-in"], input.as_bytes(), T);
        let out = run_z3("hybrid", &["--stats", "-in"], input.as_bytes(), T);
        assert_eq!(
            out.stdout_str(),
            direct.stdout_str(),
            "{setup}: {}",
            out.stderr_str()
        );
        let s = common::summary(&out.stderr_str());
        assert!(
            common::field(&s, "solver_checks") >= common::field(&s, "queries"),
            "{setup}: every check-sat reaches z3: {s}"
        );
    }
    // A pop that does not reach below the optimisation's level keeps passthrough too.
    let input = "(declare-fun x () Int)\n(push 1)\n(minimize x)\n(assert (> x 2))\n(push 1)\n\
                 (assert (< x 5))\n(check-sat)\n(pop 1)\n(check-sat)\n(get-objectives)\n";
    let direct = run_prog("z3", &["-in"], input.as_bytes(), T);
    let out = run_z3("hybrid", &["--stats", "-in"], input.as_bytes(), T);
    assert_eq!(
        out.stdout_str(),
        direct.stdout_str(),
        "{}",
        out.stderr_str()
    );
    let s = common::summary(&out.stderr_str());
    assert_eq!(common::field(&s, "solver_checks"), 2, "{s}");
}

/// Fall-backs one after another (z3's optimisation commands, each query after a reset):
/// the fall-back backend is reset and reused rather than started again, and what it was
/// told for smtproxy's own use (print-success on in one fall-back, off in the next; models
/// off) does not leak into the next: every byte, error positions included, as z3's.
#[test]
fn fall_backs_reuse_one_backend_and_answer_as_z3() {
    common::require("z3");
    let input = "(set-option :print-success true)\n(declare-fun x () Int)\n(assert (> x 2))\n\
                 (minimize x)\n(check-sat)\n(get-value (x))\n(reset)\n\
                 (set-option :print-success false)\n(declare-fun y () Int)\n(assert (< y 10))\n\
                 (check-sat)\n(reset)\n(declare-fun z () Int)\n(assert (< z 10))\n\
                 (maximize z)\n(check-sat)\n(get-value (z))\n(get-objectives)\n(reset)\n\
                 (set-option :produce-models false)\n(declare-fun w () Int)\n(assert (< w 10))\n\
                 (maximize w)\n(check-sat)\n(get-value (w))\n(assert (bad-symbol w))\n(reset)\n\
                 (set-option :print-success true)\n(declare-fun v () Int)\n(maximize v)\n\
                 (check-sat)\n(get-value (v))\n";
    let direct = run_prog("z3", &["-in"], input.as_bytes(), T);
    for strategy in ["hybrid", "stack", "cache"] {
        let out = run_z3(strategy, &["--stats", "-in"], input.as_bytes(), T);
        assert_eq!(
            out.stdout_str(),
            direct.stdout_str(),
            "{strategy}: {}",
            out.stderr_str()
        );
        let s = common::summary(&out.stderr_str());
        assert_eq!(
            common::field(&s, "fallbacks_passthrough"),
            4,
            "{strategy}: {s}"
        );
        assert_eq!(common::field(&s, "restarts"), 0, "{strategy}: {s}");
    }
    assert!(
        direct
            .stdout_str()
            .contains("(error \"line 25 column 14: model is not available\")"),
        "{}",
        direct.stdout_str()
    );
}

#[test]
fn yices_framing_is_invisible_before_and_after_check_sat_assuming() {
    // yices runs with print-success off and markers until its first check-sat-assuming,
    // then counted (print-success on in yices, no marker after a client's command: yices
    // prints the names its lexer last read for get-unsat-assumptions). Errors it survives,
    // get-value, echo, get-unsat-assumptions asked twice, print-success turned on and off
    // by the client on either side of the switch: the bytes of `yices-smt2 --incremental`.
    common::require("yices-smt2");
    let script = "(set-option :produce-unsat-assumptions true)
(set-logic QF_BV)
(declare-fun x () (_ BitVec 8))
(declare-fun p () Bool)
(declare-fun q () Bool)
(get-value (x))
(get-info :no-such-info)
(echo \"one\")
(assert (= p (= x #x01)))
(check-sat)
(get-value (x p))
(set-option :print-success true)
(push 1)
(assert (bvult x #x01))
(check-sat)
(get-value ((bvadd x #x01)))
(pop 1)
(set-option :print-success false)
(assert (= x #x02))
(check-sat-assuming (p q))
(get-unsat-assumptions)
(get-value (x))
(get-unsat-assumptions)
(check-sat)
(get-value (x p))
(get-info :no-such-info)
(check-sat-assuming (q))
(get-value (x q))
(get-option :print-success)
(set-option :print-success true)
(declare-fun y () (_ BitVec 8))
(assert (= y x))
(check-sat)
(get-value (y))
(get-option :print-success)
(set-option :print-success false)
(check-sat)
";
    let d = run_prog("yices-smt2", &["--incremental"], script.as_bytes(), T);
    assert!(!d.timed_out);
    let out = d.stdout_str();
    assert!(
        out.contains("(p)\n(error") && out.contains("success"),
        "{out}"
    );
    same_as_direct("yices", &["yices-smt2", "--incremental"], "", script);
}
