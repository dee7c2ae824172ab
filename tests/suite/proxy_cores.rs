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
    // What cores do, not how fast the machine is: no solve counts as slow enough to turn
    // them off.
    let out = common::replay_json_cmd("hybrid", "none", &json, &log)
        .env("SMTPROXY_CORES_SLOW_MS", "60000")
        .stdout(Stdio::null())
        .output()
        .expect("run smtproxy");
    assert!(
        out.status.success(),
        "replay failed ({:?}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("json parses")
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
