//! Recorded client sessions (`smt2-corpus/sessions/`), fed to smtproxy as the client fed
//! its solver: the output must be z3's line by line, but for model values, and every value
//! smtproxy gives must satisfy its query (z3 checks each, with the query's assertions).

use crate::common;

use common::{run_prog, run_z3};
use std::time::Duration;

const T: Duration = Duration::from_secs(300);

fn session(name: &str) -> String {
    common::corpus_text(&format!("sessions/{name}"))
}

/// The session's queries: the text from one `(reset)` to the next.
fn queries(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, _) in s.match_indices("(reset)") {
        if let Some(st) = start {
            out.push(&s[st..i]);
        }
        start = Some(i);
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

/// Top-level forms of a solver's output, one string each (whitespace folded).
fn forms(out: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut in_str = false;
    for ch in out.chars() {
        if in_str {
            cur.push(ch);
            in_str = ch != '"';
            continue;
        }
        match ch {
            '"' => {
                in_str = true;
                cur.push(ch);
            }
            '(' => {
                depth += 1;
                cur.push(ch);
            }
            ')' => {
                depth -= 1;
                cur.push(ch);
                if depth == 0 {
                    v.push(cur.split_whitespace().collect::<Vec<_>>().join(" "));
                    cur.clear();
                }
            }
            c if c.is_whitespace() => {
                if depth == 0 {
                    if !cur.is_empty() {
                        v.push(std::mem::take(&mut cur));
                    }
                } else {
                    cur.push(c);
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        v.push(cur);
    }
    v
}

/// The `(term value)` pairs of a get-value answer: split at depth 2.
fn value_pairs(form: &str) -> Vec<String> {
    let inner = form
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or("");
    forms(inner)
}

/// Whether a form is a get-value answer (not an error, not an objective list).
fn is_values(form: &str) -> bool {
    form.starts_with("((") && !form.starts_with("((error")
}

#[test]
fn manticore_solver_tests_session_answers_as_z3_does() {
    common::require("z3");
    let text = session("manticore-solver-tests-500.smt2.gz");
    let args = ["-t:120000", "-memory:8192", "-smt2", "-in"];
    let want = forms(&run_prog("z3", &args, text.as_bytes(), T).stdout_str());
    let qs = queries(&text);
    assert_eq!(qs.len(), 500);
    for strategy in ["hybrid", "stack"] {
        let mut extra = vec!["--stats"];
        extra.extend(args);
        let out = run_z3(strategy, &extra, text.as_bytes(), T);
        let got = forms(&out.stdout_str());
        assert_eq!(got.len(), want.len(), "{strategy}: as many answers as z3");
        // Which query each answer belongs to: one form per check-sat, get-value,
        // get-objectives, in order.
        let mut owner = Vec::new();
        for (i, q) in qs.iter().enumerate() {
            let n = q.matches("(check-sat)").count()
                + q.matches("(get-value").count()
                + q.matches("(get-objectives)").count();
            owner.extend(std::iter::repeat_n(i, n));
        }
        assert_eq!(owner.len(), want.len(), "answers per query");
        let mut checks = String::new();
        let mut nchecks = 0;
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            if is_values(w) && is_values(g) {
                // Same terms asked, values free: each checked with its query's assertions.
                let (gp, wp) = (value_pairs(g), value_pairs(w));
                assert_eq!(gp.len(), wp.len(), "{strategy}: answer {k}");
                let q = qs[owner[k]];
                let body: String = q
                    .lines()
                    .filter(|l| {
                        let t = l.trim_start();
                        t.starts_with("(declare")
                            || t.starts_with("(assert")
                            || t.starts_with("(define")
                    })
                    .map(|l| format!("{l}\n"))
                    .collect();
                checks.push_str("(reset)\n(set-logic QF_AUFBV)\n");
                checks.push_str(&body);
                for p in &gp {
                    let inner = p
                        .strip_prefix('(')
                        .and_then(|s| s.strip_suffix(')'))
                        .unwrap_or("");
                    let parts = forms(inner);
                    assert_eq!(parts.len(), 2, "{strategy}: a (term value) pair: {p}");
                    checks.push_str(&format!("(assert (= {} {}))\n", parts[0], parts[1]));
                }
                checks.push_str("(check-sat)\n");
                nchecks += 1;
            } else {
                assert_eq!(g, w, "{strategy}: answer {k} (query {})", owner[k]);
            }
        }
        assert!(nchecks > 100, "{strategy}: values to check: {nchecks}");
        let z = run_prog("z3", &["-in"], checks.as_bytes(), T).stdout_str();
        let verdicts: Vec<&str> = z.lines().collect();
        assert_eq!(verdicts.len(), nchecks, "{strategy}: {z}");
        let bad: Vec<usize> = (0..nchecks).filter(|&i| verdicts[i] != "sat").collect();
        assert!(
            bad.is_empty(),
            "{strategy}: values that do not satisfy their query: {bad:?}"
        );
        let s = common::summary(&out.stderr_str());
        if strategy == "hybrid" {
            let f = |k: &str| s[k].as_u64().unwrap_or(0);
            assert!(
                f("solver_checks") * 2 < f("queries"),
                "{strategy}: most queries answered without the solver: {s}"
            );
        }
    }
}
