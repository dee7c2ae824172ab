//! Bad and hostile input: every case must produce an `(error ...)` line or a correct
//! answer, never a panic or a hang (the child is killed after 60 s), and the session must
//! go on: a following `(check-sat)` and `(echo "after")` are still answered.
//! Run under passthrough, fresh and stack.

use crate::common;

use common::run_z3;
use std::time::Duration;

const STRATEGIES: &[&str] = &["passthrough", "fresh", "stack"];
const LIMIT: Duration = Duration::from_secs(60);

const PRELUDE: &str =
    "(declare-const x (_ BitVec 8))\n(declare-const p Bool)\n(assert (= x #x05))\n";
const TAIL: &str = "\n(check-sat)\n(echo \"after\")\n";

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// An `(error` line must appear before the final answers.
    Error,
    /// Either an `(error` line or the given answers (in order) before the final answers.
    ErrorOr(&'static [&'static str]),
}

/// PRELUDE + body + TAIL; the output must end with `sat`, `after`.
fn case(name: &str, body: &[u8], expect: Expect) {
    common::require("z3");
    let mut input = PRELUDE.as_bytes().to_vec();
    input.extend_from_slice(body);
    input.extend_from_slice(TAIL.as_bytes());
    let mut failures = Vec::new();
    for s in STRATEGIES {
        let out = run_z3(s, &[], &input, LIMIT);
        let what = format!("{name} [--strategy {s}]");
        if out.hung_or_panicked() {
            failures.push(format!(
                "{what}: {} (status {:?}, after {:?})\nstderr:\n{}\nstdout:\n{}",
                if out.timed_out { "HANG" } else { "PANIC" },
                out.status,
                out.elapsed,
                common::tail(&out.stderr_str()),
                common::tail(&out.stdout_str())
            ));
            continue;
        }
        let lines = out.lines();
        let n = lines.len();
        let ends_ok = n >= 2 && lines[n - 2] == "sat" && lines[n - 1] == "after";
        let middle: Vec<&str> = lines[..n.saturating_sub(2)]
            .iter()
            .map(|s| s.as_str())
            .collect();
        let has_error = middle.iter().any(|l| l.starts_with("(error"));
        let mid_ok = match expect {
            Expect::Error => has_error,
            Expect::ErrorOr(ans) => has_error || middle == ans,
        };
        if !ends_ok || !mid_ok {
            let shown: String = lines
                .iter()
                .map(|l| {
                    if l.len() > 300 {
                        format!("{}...\n", &l[..300])
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            failures.push(format!(
                "{what}: expected {} then `sat`, `after`; got (exit {:?}):\n{}stderr:\n{}",
                match expect {
                    Expect::Error => "an (error ...) line".to_string(),
                    Expect::ErrorOr(a) => format!("an (error ...) line or {a:?}"),
                },
                out.code(),
                common::tail(&shown),
                common::tail(&out.stderr_str())
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Input that swallows the rest of the stream (unclosed paren / string): only "an error or
/// the earlier answers, no panic, no hang" can be asked.
fn eof_case(name: &str, body: &[u8]) {
    common::require("z3");
    let mut input = PRELUDE.as_bytes().to_vec();
    input.extend_from_slice(b"(check-sat)\n");
    input.extend_from_slice(body);
    let mut failures = Vec::new();
    for s in STRATEGIES {
        let out = run_z3(s, &[], &input, LIMIT);
        let what = format!("{name} [--strategy {s}]");
        if out.hung_or_panicked() {
            failures.push(format!(
                "{what}: hang or panic (status {:?}, {:?})\nstderr:\n{}",
                out.status,
                out.elapsed,
                common::tail(&out.stderr_str())
            ));
            continue;
        }
        let lines = out.lines();
        if lines.first().map(|s| s.as_str()) != Some("sat")
            || !lines.iter().skip(1).any(|l| l.starts_with("(error"))
        {
            failures.push(format!(
                "{what}: expected `sat` then an (error ...) at end of input (z3 does so); got:\n{}",
                out.stdout_str()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn unbalanced_close_paren() {
    case("stray `)`", b"(check-sat))\n", Expect::ErrorOr(&["sat"]));
    // z3: `sat`, then an error for the stray `)`.
    case("stray `)` alone", b")\n", Expect::Error);
}

#[test]
fn unbalanced_open_paren_at_eof() {
    eof_case(
        "unclosed assert at EOF",
        b"(assert (= x #x05)\n(check-sat)\n",
    );
}

#[test]
fn unterminated_string_at_eof() {
    eof_case("unterminated string at EOF", b"(echo \"abc\n(check-sat)\n");
}

#[test]
fn unknown_command() {
    // z3 answers `unsupported` (a legal SMT-LIB response) for an unknown command.
    case("(foo)", b"(foo)\n", Expect::ErrorOr(&["unsupported"]));
    case(
        "(foo 1 2 (bar))",
        b"(foo 1 2 (bar))\n",
        Expect::ErrorOr(&["unsupported"]),
    );
}

#[test]
fn wrong_sorts() {
    case("bvadd x true", b"(assert (bvadd x true))\n", Expect::Error);
    case("= x p", b"(assert (= x p))\n", Expect::Error);
    case(
        "bvadd of mixed widths",
        b"(assert (= x (bvadd x #x0001)))\n",
        Expect::Error,
    );
    case(
        "undeclared symbol",
        b"(assert (= x nosuch))\n",
        Expect::Error,
    );
}

#[test]
fn pop_below_zero() {
    case("pop 1 at level 0", b"(pop 1)\n", Expect::Error);
    case(
        "push 1 pop 2",
        b"(push 1)\n(pop 2)\n(pop 1)\n",
        Expect::Error,
    );
}

#[test]
fn get_value_before_check_sat() {
    case(
        "get-value before any check-sat",
        b"(get-value (x))\n",
        Expect::Error,
    );
    case(
        "get-model before any check-sat",
        b"(get-model)\n",
        Expect::Error,
    );
}

#[test]
fn invalid_utf8() {
    case(
        "invalid UTF-8 in a string",
        b"(echo \"\xff\xfe\")\n",
        Expect::ErrorOr(&["\u{fffd}\u{fffd}"]),
    );
    case(
        "invalid UTF-8 in a symbol",
        b"(declare-const \xff\xc0 Int)\n",
        Expect::Error,
    );
    case(
        "invalid UTF-8 in a comment",
        b"; \xff\xfe\xfd comment\n",
        Expect::ErrorOr(&[]),
    );
    case(
        "invalid UTF-8 inside a term",
        b"(assert (= x \xff))\n",
        Expect::Error,
    );
}

#[test]
fn ten_megabyte_term() {
    // One `and` of 420,000 (true) atoms, ~10 MB on one line, in its own scope.
    let mut body = String::from("(push 1)\n(assert (and");
    for i in 0..210_000u64 {
        body.push_str(&format!(" (bvuge (bvadd x #x{:02x}) #x00)", i % 251));
        body.push_str(&format!(" (= p (bvult x #x{:02x}))", (i % 200) + 6));
    }
    body.push_str("))\n(check-sat)\n(pop 1)\n");
    assert!(body.len() > 10_000_000, "{}", body.len());
    case(
        "10 MB single term",
        body.as_bytes(),
        Expect::ErrorOr(&["sat"]),
    );
}

#[test]
fn deep_nesting_100k() {
    // (not (not ... p)), 100,000 deep, in its own scope: sat, or an error, never a crash.
    let depth = 100_000;
    let mut body = String::from("(push 1)\n(assert ");
    for _ in 0..depth {
        body.push_str("(not ");
    }
    body.push('p');
    for _ in 0..depth {
        body.push(')');
    }
    body.push_str(")\n(check-sat)\n(pop 1)\n");
    case(
        "100,000-deep (not (not ...))",
        body.as_bytes(),
        Expect::ErrorOr(&["sat"]),
    );
}

#[test]
fn deep_nesting_bvadd_chain() {
    // (bvadd (bvadd ... x ...) #x01) 100,000 deep: x + 100000 mod 256 = x + 0xa0.
    let depth = 100_000;
    let mut body = String::from("(push 1)\n(assert (= ");
    for _ in 0..depth {
        body.push_str("(bvadd ");
    }
    body.push('x');
    for _ in 0..depth {
        body.push_str(" #x01)");
    }
    body.push_str(" #xa5))\n(check-sat)\n(pop 1)\n");
    case(
        "100,000-deep bvadd chain",
        body.as_bytes(),
        Expect::ErrorOr(&["sat"]),
    );
}

/// An assertion that hangs z3 by itself (it unfolds recursive definitions while asserting):
/// under `--timeout-ms`, every strategy answers the check-sat `unknown` within the deadline
/// and the session goes on, never hanging. Found by the engine
/// fuzz target (fuzz/regressions/engine-recursive-definition-hangs-assert.smt2).
#[test]
fn assertion_that_hangs_the_solver_times_out() {
    common::require("z3");
    let input = std::fs::read(
        common::root().join("fuzz/regressions/engine-recursive-definition-hangs-assert.smt2"),
    )
    .unwrap();
    for s in [
        "hybrid",
        "stack",
        "stack-cse",
        "fresh",
        "cache",
        "passthrough",
    ] {
        let t0 = std::time::Instant::now();
        let out = run_z3(s, &["--timeout-ms", "1000"], &input, LIMIT);
        out.assert_no_panic_no_hang(s);
        let lines = out.lines();
        if s == "passthrough" {
            // The client's own state hangs the solver: after the timed-out check-sat, every
            // rebuild of that state times out too until the client pops it (z3 itself would
            // hang for ever); each command still gets an answer within the deadline.
            assert_eq!(
                lines.first().map(String::as_str),
                Some("unknown"),
                "{s}: {lines:?}"
            );
            assert!(
                lines[1..]
                    .iter()
                    .all(|l| l.starts_with("(error") || l == "sat"),
                "{s}: {lines:?}"
            );
        } else {
            assert_eq!(lines, ["unknown", "sat"], "{s}: answers");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "{s}: took {:?} with a 1 s deadline",
            t0.elapsed()
        );
    }
}

/// A sort name defined twice is an error (as in z3), so an alias can never be redefined in
/// terms of itself; alias expansion is bounded anyway. Found by the reader fuzz target
/// (fuzz/regressions/reader-define-sort-redefined-to-itself.smt2: a stack overflow).
#[test]
fn sort_redefinition_is_an_error() {
    common::require("z3");
    let input = b"(define-sort U () Int)\n(define-sort U () U)\n(declare-sort U 0)\n(declare-const x U)\n(assert (= x 3))\n(check-sat)\n";
    for s in STRATEGIES {
        let out = run_z3(s, &[], input, LIMIT);
        out.assert_no_panic_no_hang(s);
        let lines = out.lines();
        assert_eq!(lines.len(), 3, "{s}: {lines:?}");
        assert!(
            lines[0].starts_with("(error") && lines[0].contains("already declared/defined"),
            "{s}: {lines:?}"
        );
        assert!(
            lines[1].starts_with("(error") && lines[1].contains("already declared/defined"),
            "{s}: {lines:?}"
        );
        assert_eq!(lines[2], "sat", "{s}: U is still Int");
    }
}
