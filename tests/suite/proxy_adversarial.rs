//! Hostile but legal clients, beyond what the hand scripts compare (those run through
//! `tests/suite/proxy_differential.rs` too: `adversarial-*.smt2`, `errors-redeclare-reset-pop.smt2`):
//!
//! * client symbols that look like smtproxy's internal names: under every strategy the
//!   get-value answer names them exactly as the client wrote them, and its values satisfy
//!   the client's assertions;
//! * one query with 20,000 conjuncts under the stack strategies: the answers are z3's, and
//!   the backend gets a bounded number of scopes (one scope per conjunct kept z3 busy for
//!   minutes on such queries; see `SCOPES_MAX` in `src/session/stack.rs`).

use crate::common;

use common::{root, run_z3, summary};
use std::time::Duration;

const T: Duration = Duration::from_secs(120);
const STRATEGIES: &[&str] = &[
    "passthrough",
    "fresh",
    "stack",
    "stack-cse",
    "cache",
    "hybrid",
];

/// The value after `name` in a get-value answer, as a number (`#x..`, `#b..`, true/false).
fn value_after(answer: &str, name: &str) -> Option<u64> {
    let at = answer.find(&format!("({name} "))? + name.len() + 2;
    let v: String = answer[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ')')
        .collect();
    match v.as_str() {
        "true" => Some(1),
        "false" => Some(0),
        _ if v.starts_with("#x") => u64::from_str_radix(&v[2..], 16).ok(),
        _ if v.starts_with("#b") => u64::from_str_radix(&v[2..], 2).ok(),
        _ => v.parse().ok(),
    }
}

#[test]
fn client_names_like_internal_ones() {
    common::require("z3");
    let script =
        std::fs::read(root().join("smt2-corpus/hand/adversarial-internal-names.smt2")).unwrap();
    for s in STRATEGIES {
        let out = run_z3(s, &[], &script, T);
        out.assert_no_panic_no_hang(s);
        let text = out.stdout_str();
        let answers: Vec<&str> = text
            .lines()
            .filter(|l| matches!(*l, "sat" | "unsat" | "unknown"))
            .collect();
        assert_eq!(answers, ["sat", "unsat", "unsat"], "{s}:\n{text}");
        let v = |name: &str| {
            value_after(&text, name)
                .unwrap_or_else(|| panic!("{s}: no value for {name} in\n{text}"))
        };
        let (l0, m0, d1x, sync1, x, c0) = (
            v("sp!l0"),
            v("sp!m0"),
            v("|sp!d1!x|"),
            v("|sp!sync-1|"),
            v("sp!!x"),
            v("|sp!c0|"),
        );
        // The assertions in force at the get-value (all modulo 2^8).
        assert_eq!((l0 + m0) % 256, d1x, "{s}: sp!l0 + sp!m0 = sp!d1!x\n{text}");
        assert!(l0 < 16, "{s}: sp!l0 < 16\n{text}");
        assert_eq!(sync1, (l0 * 2) % 256, "{s}: sp!sync-1 = 2 sp!l0\n{text}");
        assert_eq!(c0, (l0 * 4) % 256, "{s}: sp!c0 = 4 sp!l0\n{text}");
        assert_eq!((m0 + 1) % 256, sync1, "{s}: sp!m0 + 1 = sp!sync-1\n{text}");
        assert_eq!(x, 1, "{s}: sp!!x\n{text}");
    }
}

#[test]
fn many_conjuncts_share_scopes() {
    common::require("z3");
    let n = 20_000;
    let parts: Vec<String> = (1..=n).map(|i| format!("(> (+ x {i}) 0)")).collect();
    let script = format!(
        "(declare-const x Int)\n(assert (> x 5))\n(assert (and {}))\n(check-sat)\n(assert (< x 0))\n(check-sat)\n",
        parts.join(" ")
    );
    for s in ["stack", "stack-cse"] {
        let out = run_z3(s, &["--stats"], script.as_bytes(), T);
        out.assert_no_panic_no_hang(s);
        assert_eq!(out.stdout_str(), "sat\nunsat\n", "{s}");
        let stats = summary(&out.stderr_str());
        let pushes = stats["pushes"].as_u64().expect("pushes in the summary");
        assert!(
            pushes <= 2 * 64,
            "{s}: {pushes} scopes pushed for two queries of {n} conjuncts"
        );
    }
}
