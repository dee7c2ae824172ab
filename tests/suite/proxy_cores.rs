//! Unsat cores in hybrid, through the real binary and a real z3: a core the stack backend
//! gives for one query refutes a later query that contains it without a solver call, the
//! answers are those z3 gives (cross-checked against `fresh` and the recorded statuses),
//! and a pure bit-vector logic (where core tracking costs z3 its preprocessing) asks for
//! none.

use crate::common;

use common::field;
use std::process::Stdio;

/// `smtproxy replay --check --quiet --strategy hybrid --cache none` of `script`; the JSON
/// summary.
fn replay(script: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("cores.smt2");
    std::fs::write(&log, script).expect("write log");
    let json = dir.path().join("out.json");
    summary_of(
        common::replay_json_cmd("hybrid", "none", &json, &log),
        &json,
    )
}

/// Run `cmd` (a `smtproxy replay` writing its JSON summary to `json`), which must succeed;
/// the summary. What cores do, not how fast the machine is: no solve counts as slow enough
/// to turn them off.
fn summary_of(mut cmd: std::process::Command, json: &std::path::Path) -> serde_json::Value {
    let out = cmd
        .env("SMTPROXY_CORES_SLOW_MS", "60000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .expect("run smtproxy");
    assert!(
        out.status.success(),
        "replay failed ({:?}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).expect("json")).expect("json parses")
}

/// Four queries over 32-bit constants (too wide to enumerate), each one component, each
/// in its own `(reset)` context: a cycle of `bvult` (unsatisfiable by itself) with a side
/// condition that differs from query to query, so no query equals or contains an earlier
/// one. Only an earlier query's core can refute a later one without the solver. z3's
/// cores are not minimal (z3 5.4 gives the first query's side condition with the cycle,
/// and the cycle alone for the second), so the test asks only that some later query be
/// refuted by a core.
fn script(logic: &str) -> String {
    let mut s = String::new();
    for (i, k) in ["#x00000005", "#x00000007", "#x00000009", "#x0000000b"]
        .iter()
        .enumerate()
    {
        if i > 0 {
            s.push_str("(reset)\n");
        }
        s.push_str(&format!(
            "(set-logic {logic})\n\
             (declare-fun a () (_ BitVec 32))\n\
             (declare-fun b () (_ BitVec 32))\n\
             (declare-fun c () (_ BitVec 32))\n\
             (declare-fun d () (_ BitVec 32))\n\
             (assert (bvult a b))\n\
             (assert (bvult b c))\n\
             (assert (bvult c a))\n\
             (assert (bvugt d a))\n\
             (assert (= d (bvadd a {k})))\n\
             (set-info :status unsat)\n\
             (check-sat)\n"
        ));
    }
    s
}

#[test]
fn a_core_refutes_later_queries_that_contain_it() {
    let j = replay(&script("QF_ABV"));
    assert_eq!(field(&j, "queries"), 4);
    assert_eq!(field(&j, "unsat"), 4);
    assert_eq!(field(&j, "expected_mismatches"), 0, "{j}");
    assert_eq!(field(&j, "cross_mismatches"), 0, "{j}");
    let checks = field(&j, "solver_checks");
    assert!(field(&j, "cores") >= 1, "{j}");
    assert!(checks < 4, "no query was refuted by a core: {j}");
    assert_eq!(field(&j, "cache_hits"), 4 - checks, "{j}");
}

#[test]
fn no_cores_under_a_pure_bit_vector_logic() {
    let j = replay(&script("QF_BV"));
    assert_eq!(field(&j, "unsat"), 4);
    assert_eq!(field(&j, "expected_mismatches"), 0, "{j}");
    assert_eq!(field(&j, "cross_mismatches"), 0, "{j}");
    assert_eq!(field(&j, "cores"), 0, "{j}");
    assert_eq!(field(&j, "solver_checks"), 4, "{j}");
}

/// A yosys-smtbmc-shaped session under QF_ABV: state asserted at the base level, each
/// check in a scope of its own, `steps` checks, all unsat. With `macros` every base
/// assertion goes through a `define-fun` (as yosys writes them), which the backend gets
/// expanded, each conjunct named while the queries are small; without, the first one goes
/// to the backend as the client wrote it (unnamed).
fn stepping_script(steps: usize, macros: bool) -> String {
    let mut s = String::from(
        "(set-logic QF_ABV)\n\
         (define-fun small ((a (_ BitVec 32))) Bool (bvult a #x00000010))\n\
         (define-fun step ((a (_ BitVec 32)) (b (_ BitVec 32))) Bool (= b (bvadd a #x00000001)))\n\
         (declare-fun x0 () (_ BitVec 32))\n",
    );
    s.push_str(if macros {
        "(assert (small x0))\n"
    } else {
        "(assert (bvult x0 #x00000010))\n"
    });
    for i in 1..=steps {
        s.push_str(&format!(
            "(declare-fun x{i} () (_ BitVec 32))\n\
             (assert (step x{p} x{i}))\n\
             (push 1)\n\
             (assert (= x{i} #xffffffff))\n\
             (set-info :status unsat)\n\
             (check-sat)\n\
             (pop 1)\n",
            p = i - 1
        ));
    }
    s
}

/// `script` replayed by hybrid through a z3 whose input is kept: the JSON summary and how
/// many assertions went to z3 named (`:named`), over every z3 process.
fn replay_through_kept_z3(script: &str) -> (serde_json::Value, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("steps.smt2");
    std::fs::write(&log, script).expect("write log");
    let json = dir.path().join("out.json");
    let kept = dir.path().join("kept");
    std::fs::create_dir(&kept).expect("mkdir");
    let z3 = dir.path().join("z3");
    std::fs::write(
        &z3,
        // The z3 on PATH (this directory is not on it).
        format!("#!/bin/sh\ntee {}/in.$$ | exec z3 \"$@\"\n", kept.display()),
    )
    .expect("write wrapper");
    let mut perms = std::fs::metadata(&z3).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&z3, perms).expect("chmod");
    let mut cmd = std::process::Command::new(common::bin());
    cmd.args([
        "replay",
        "--quiet",
        "--strategy",
        "hybrid",
        "--cache",
        "none",
    ])
    .arg("--solver")
    .arg(format!("{} -in", z3.display()))
    .arg("--json")
    .arg(&json)
    .arg(&log);
    let j = summary_of(cmd, &json);
    let named = std::fs::read_dir(&kept)
        .expect("kept inputs")
        .map(|e| std::fs::read_to_string(e.expect("entry").path()).expect("read"))
        .map(|t| t.matches(":named").count())
        .sum();
    (j, named)
}

#[test]
fn a_base_left_with_stranded_names_is_rebuilt_without_cores_once_that_pays() {
    common::require("z3");
    // Past 16 conjuncts, new base conjuncts go unnamed: the named ones below them can
    // never be in a core again, and cost z3 a share of every check. The backend is
    // rebuilt without names, once, when the checks since have cost what its first query
    // did (z3's context and the base, about 10 ms; each check here about 0.5 ms).
    let j = replay(&stepping_script(100, true));
    assert_eq!(field(&j, "unsat"), 100, "{j}");
    assert_eq!(field(&j, "expected_mismatches"), 0, "{j}");
    assert_eq!(field(&j, "cross_mismatches"), 0, "{j}");
    assert_eq!(field(&j, "stack_rebuilds"), 1, "{j}");
    // A check or two after the names are stranded (from about the sixteenth step; 1 ms of
    // checks): not worth a new context, nothing is rebuilt (a rebuild at once would have
    // been: 15 steps strand nothing).
    let j = replay(&stepping_script(17, true));
    assert_eq!(field(&j, "unsat"), 17, "{j}");
    assert_eq!(field(&j, "expected_mismatches"), 0, "{j}");
    assert_eq!(field(&j, "stack_rebuilds"), 0, "{j}");
    // Small throughout: the base stays named, nothing is rebuilt.
    let j = replay(&stepping_script(10, true));
    assert_eq!(field(&j, "unsat"), 10, "{j}");
    assert_eq!(field(&j, "expected_mismatches"), 0, "{j}");
    assert_eq!(field(&j, "stack_rebuilds"), 0, "{j}");
}

#[test]
fn nothing_is_named_once_the_base_holds_an_unnamed_assertion() {
    common::require("z3");
    // The first base assertion goes as the client wrote it: no core can be asked for in
    // that backend, so only what the first check sent with it is named (its two step
    // conjuncts and its scope's), not the 28 later checks' (with every check small).
    let (j, named) = replay_through_kept_z3(&stepping_script(10, false));
    assert_eq!(field(&j, "unsat"), 10, "{j}");
    assert_eq!(field(&j, "expected_mismatches"), 0, "{j}");
    assert!(named <= 3, "{named} assertions named: {j}");
    // With every base assertion named, each check's are (a control: the wrapper sees
    // names where there are some).
    let (j, named) = replay_through_kept_z3(&stepping_script(10, true));
    assert_eq!(field(&j, "unsat"), 10, "{j}");
    assert!(named >= 10, "{named} assertions named: {j}");
}
