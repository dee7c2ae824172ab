//! The solver's command line through the real binary: a tool runs smtproxy with the
//! arguments it gives its solver (Manticore's `-t:120000 -memory:8192 -smt2 -in`, z3's
//! `key=value` parameters, cvc5's `--print-success`, `-m`, `--dump-models`), and sees
//! what the solver would show: its version, its refusal of a flag it does not know (words
//! and exit code), models and statistics printed unasked, a whole-run deadline. Each is
//! compared with the solver run directly on the same input. The solvers are installed by
//! the test command; a missing one fails these tests.

use crate::common;

use common::{run, run_prog};
use std::os::unix::fs::symlink;
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

/// Model values differ between solvers and runs: every value masked, the shape kept.
fn mask_values(s: &str) -> String {
    s.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("(define-fun") || t.starts_with("((") || t.starts_with("#") {
                l.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn version_is_the_solver_s_and_proxy_version_is_smtproxy_s() {
    common::require("z3");
    common::require("cvc5");
    common::require("yices-smt2");
    for (solver, prog, flag) in [
        ("z3", "z3", "--version"),
        ("z3", "z3", "-version"),
        ("cvc5", "cvc5", "--version"),
        ("yices", "yices-smt2", "--version"),
    ] {
        let direct = run_prog(prog, &[flag], b"", T);
        let proxied = run(&["--solver", solver, flag], b"", T);
        assert_eq!(proxied.stdout_str(), direct.stdout_str(), "{solver} {flag}");
        assert_eq!(proxied.code(), direct.code(), "{solver} {flag}");
        assert!(!direct.stdout_str().is_empty());
    }
    let own = run(&["--proxy-version"], b"", T);
    assert!(
        own.stdout_str().starts_with("smtproxy "),
        "{}",
        own.stdout_str()
    );
}

#[test]
fn run_under_a_solver_s_name_that_solver_is_the_backend() {
    common::require("yices-smt2");
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("yices-smt2");
    symlink(common::bin(), &link).expect("symlink");
    let link = link.to_string_lossy().into_owned();
    let v = run_prog(&link, &["--version"], b"", T);
    assert!(v.stdout_str().starts_with("Yices"), "{}", v.stdout_str());
    // yices' own dialect: a bit-vector value in binary.
    let input = b"(set-logic QF_BV)(declare-fun x () (_ BitVec 4))(assert (= x #x5))(check-sat)(get-value (x))\n";
    let out = run_prog(&link, &["--incremental", "--cache", "none"], input, T);
    let direct = run_prog("yices-smt2", &["--incremental"], input, T);
    assert_eq!(out.stdout_str(), direct.stdout_str());
}

#[test]
fn manticore_command_line_is_taken_and_answers_as_z3() {
    common::require("z3");
    let input = b"(set-logic QF_AUFBV)\n(set-option :global-decls false)\n(declare-fun a () (_ BitVec 8))\n(assert (= a #x07))\n(check-sat)\n(get-value (a))\n";
    let args = ["-t:120000", "-memory:8192", "-smt2", "-in"];
    let direct = run_prog("z3", &args, input, T);
    let mut ours = vec!["--solver", "z3", "--cache", "none"];
    ours.extend(args);
    let proxied = run(&ours, input, T);
    assert_eq!(proxied.code(), Some(0), "{}", proxied.stderr_str());
    assert_eq!(proxied.stdout_str(), direct.stdout_str());
    assert_eq!(proxied.stdout_str(), "sat\n((a #x07))\n");
}

#[test]
fn z3_parameters_reach_the_backend() {
    common::require("z3");
    // rlimit=1 makes z3 give up on anything it cannot decide by preprocessing.
    let input = b"(declare-const x Int)(declare-const y Int)(assert (> (* x x y) 7))(assert (< (* x y) 3))(check-sat)\n";
    let direct = run_prog("z3", &["-in", "rlimit=1"], input, T);
    let proxied = run(
        &["--solver", "z3", "--cache", "none", "-in", "rlimit=1"],
        input,
        T,
    );
    assert_eq!(direct.stdout_str(), "unknown\n");
    assert_eq!(proxied.stdout_str(), direct.stdout_str());
}

#[test]
fn a_flag_the_solver_refuses_gets_its_words_and_exit_code() {
    common::require("z3");
    common::require("cvc5");
    common::require("yices-smt2");
    for (solver, prog, flag) in [
        ("z3", "z3", "-no-such-flag"),
        ("z3", "z3", "no_such_param=1"),
        ("cvc5", "cvc5", "--no-such-option"),
        ("yices", "yices-smt2", "--no-such-option"),
    ] {
        let direct = run_prog(prog, &[flag], b"", T);
        let proxied = run(&["--solver", solver, "--cache", "none", flag], b"", T);
        assert_ne!(direct.code(), Some(0), "{prog} {flag} is refused");
        assert_eq!(proxied.code(), direct.code(), "{solver} {flag}");
        assert_eq!(
            proxied.stdout_str() + &proxied.stderr_str(),
            direct.stdout_str() + &direct.stderr_str(),
            "{solver} {flag}"
        );
    }
}

#[test]
fn models_and_statistics_printed_unasked_as_the_solver_prints_them() {
    common::require("z3");
    common::require("cvc5");
    let z3_in = b"(declare-const x Int)(assert (> x 2))(check-sat)\n";
    for flags in [&["-in", "-model"][..], &["-in", "dump_models=true"][..]] {
        let direct = run_prog("z3", flags, z3_in, T);
        let mut ours = vec!["--solver", "z3", "--cache", "none"];
        ours.extend(flags);
        let proxied = run(&ours, z3_in, T);
        assert!(direct.stdout_str().contains("define-fun x"), "{flags:?}");
        assert_eq!(
            mask_values(&proxied.stdout_str()),
            mask_values(&direct.stdout_str()),
            "{flags:?}"
        );
    }
    // Statistics: the same form (the figures are the backend's own).
    let st = run(
        &["--solver", "z3", "--cache", "none", "-in", "-st"],
        z3_in,
        T,
    );
    let out = st.stdout_str();
    assert!(
        out.starts_with("sat\n(:") && out.trim_end().ends_with(')'),
        "{out}"
    );

    let cvc5_in = b"(set-logic QF_LIA)(declare-const x Int)(assert (> x 2))(check-sat)(assert (< x 0))(check-sat)(get-value (x))\n";
    for flags in [
        &["--incremental", "--dump-models"][..],
        &["--incremental", "--print-success", "-m"][..],
        &["-i", "-q", "--produce-models"][..],
    ] {
        let direct = run_prog("cvc5", flags, cvc5_in, T);
        let mut ours = vec!["--solver", "cvc5", "--cache", "none"];
        ours.extend(flags);
        let proxied = run(&ours, cvc5_in, T);
        assert_eq!(
            mask_values(&proxied.stdout_str()),
            mask_values(&direct.stdout_str()),
            "{flags:?}"
        );
    }
}

#[test]
fn a_whole_run_deadline_ends_the_run_as_z3_does() {
    common::require("z3");
    // The input never ends: z3 -T:1 says `timeout` after a second and exits 0.
    let mut s = common::Session::start(&["--solver", "z3", "--cache", "none", "-in", "-T:1"]);
    s.send("(declare-const x Int)");
    let line = s.line(Duration::from_secs(20));
    assert_eq!(line.as_deref(), Some("timeout"));
    let status = s.wait_exit(Duration::from_secs(20));
    assert_eq!(status.and_then(|st| st.code()), Some(0));
}

#[test]
fn a_flag_for_what_smtproxy_does_not_model_passes_the_session_through() {
    common::require("cvc5");
    let input = b"(set-logic QF_LIA)(declare-const x Int)(assert (! (> x 2) :named a))(assert (! (< x 0) :named b))(check-sat)(get-unsat-core)\n";
    for flags in [
        &["-i", "--produce-unsat-cores"][..],
        &["-i", "--print-success", "--produce-unsat-cores"][..],
    ] {
        let direct = run_prog("cvc5", flags, input, T);
        let mut ours = vec!["--solver", "cvc5", "--cache", "none"];
        ours.extend(flags);
        let proxied = run(&ours, input, T);
        assert!(direct.stdout_str().contains("unsat\n("), "{flags:?}");
        assert_eq!(proxied.stdout_str(), direct.stdout_str(), "{flags:?}");
    }
}

/// The solver is started at its first use when its command line is smtproxy's own (the
/// client's flags all understood): a session smtproxy answers itself never starts it, one
/// that needs it does, and its answers are z3's. A flag smtproxy passes on unread
/// (`-memory:`) starts it before anything is read, so a refusal would come first, as
/// from z3. The solver here is a script named `z3` that notes each start and runs z3.
#[test]
fn the_solver_starts_at_its_first_use_unless_its_command_line_may_be_refused() {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    let z3 = common::CountingZ3::new(dir.path(), "z3");
    let solver = z3.path.to_str().unwrap();
    // Decided by smtproxy itself (one value forced), then a query only a solver decides.
    let own = b"(set-logic QF_BV)(declare-const x (_ BitVec 8))(assert (= x #x05))(check-sat)(get-value (x))\n";
    let hard = b"(set-logic QF_NIA)(declare-const x Int)(declare-const y Int)(assert (= (* x x y) 12))(assert (> y 1))(check-sat)\n";
    for (input, flags, started) in [
        (&own[..], &["-in"][..], 0),
        (&own[..], &["-in", "-t:5000"][..], 0),
        (&hard[..], &["-in"][..], 1),
        (&own[..], &["-in", "-memory:4096"][..], 1),
        (&b""[..], &["-in", "-memory:4096"][..], 1),
    ] {
        let mut args = vec!["--solver", solver, "--cache", "none"];
        args.extend(flags);
        let proxied = run(&args, input, T);
        assert_eq!(
            z3.take_starts(),
            started,
            "{flags:?} {}",
            String::from_utf8_lossy(input)
        );
        let direct = run_prog("z3", flags, input, T);
        assert_eq!(proxied.stdout_str(), direct.stdout_str(), "{flags:?}");
        assert_eq!(proxied.code(), direct.code(), "{flags:?}");
    }
}

/// `--cache memory` is the memory tier alone, as `none` is: no store file appears in the
/// working directory (it was taken as a path and made a SQLite file named `memory`).
#[test]
fn cache_memory_leaves_no_file_behind() {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(common::bin());
    cmd.args(["--cache", "memory", "-in"])
        .current_dir(dir.path());
    let input = "(declare-fun x () Int)(assert (> x 1))(check-sat)\n";
    let out = common::run_cmd(cmd, input.as_bytes(), T);
    out.assert_no_panic_no_hang("smtproxy");
    assert_eq!(out.stdout_str().trim(), "sat");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}
