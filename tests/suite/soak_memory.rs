//! Memory over a long session of resets and fresh names (the shape Manticore gives z3):
//! every query is `(reset)`, `set-logic QF_AUFBV`, ~50-80 fresh bit-vector constants read
//! from a fresh array, a few assertions over selects, extracts and bvadd, check-sat and a
//! get-value. The real binary answers it over a pipe, one query at a time as a client
//! waits for its answers, with z3 behind it. Asserted: the peak resident set (VmHWM) after
//! all the queries is not past the peak after half of them by more than a margin (the term
//! store and the memos are collected at resets), the term store was collected, and every
//! answer (check-sat and get-value: every byte is pinned to one value, so the model is
//! unique) equals z3's own for the same text.
//!
//! `SMTPROXY_SOAK_QUERIES=N` runs N queries instead of the default (a run of an hour is
//! `SMTPROXY_SOAK_QUERIES=1000000` or so; the figures are printed).

use crate::common;

use common::rng::Rng;
use common::Session;
use std::time::{Duration, Instant};

/// Queries in the CI run: several collections at the default bound
/// (`arena::COLLECT_MIN_TERMS`).
const QUERIES: usize = 4000;

/// One query's text, and whether it asks get-value (after a sat answer only, as a client
/// does: the unsat ones are known to be unsat, every byte being pinned).
fn query(rng: &mut Rng, counter: &mut u64) -> (String, bool) {
    let mut q = String::new();
    q.push_str("(reset)\n(set-logic QF_AUFBV)\n(set-option :global-decls false)\n");
    q.push_str("(declare-fun A () (Array (_ BitVec 32) (_ BitVec 8)))\n");
    let n = 50 + rng.index(31);
    let mut names = Vec::with_capacity(n);
    for i in 0..n {
        *counter += 1;
        let a = format!("a_{counter}");
        q.push_str(&format!(
            "(declare-fun {a} () (_ BitVec 8))(assert (= {a} (select A #x{:08x})))\n",
            1000 + i
        ));
        names.push(a);
    }
    // Pin every byte: through bvadd, through an extract of a concat, or directly; byte
    // `i` the same way and to the same value in every query, as a tool's path conditions
    // recur under fresh names (what the result store must see through).
    let mut values = Vec::with_capacity(n);
    for (i, a) in names.iter().enumerate() {
        let v = (i as u64 * 37 + 11) & 0xff;
        values.push(v);
        let k = (i as u64 * 91 + 5) & 0xff;
        match i % 3 {
            0 => q.push_str(&format!(
                "(assert (= (bvadd {a} #x{k:02x}) #x{:02x}))\n",
                (v + k) & 0xff
            )),
            1 => {
                let b = &names[(i + 1) % n];
                q.push_str(&format!(
                    "(assert (= ((_ extract 15 8) (concat {a} {b})) #x{v:02x}))\n"
                ))
            }
            _ => q.push_str(&format!("(assert (= {a} #x{v:02x}))\n")),
        }
    }
    // A branch condition over a few bytes: sat, or (one query in eight) unsat.
    let i = rng.index(n);
    let j = rng.index(n);
    let sum = (values[i] + values[j]) & 0xff;
    let unsat = rng.below(8) == 0;
    if unsat {
        q.push_str(&format!(
            "(assert (not (= (bvadd {} {}) #x{sum:02x})))\n",
            names[i], names[j]
        ));
    } else {
        q.push_str(&format!(
            "(assert (bvule (bvadd {} {}) #x{sum:02x}))\n",
            names[i], names[j]
        ));
    }
    q.push_str("(check-sat)\n");
    if !unsat {
        let shown: Vec<&str> = names.iter().take(8).map(|s| s.as_str()).collect();
        q.push_str(&format!("(get-value ({}))\n", shown.join(" ")));
    }
    (q, !unsat)
}

fn vm(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = s
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("{key} in /proc/{pid}/status"));
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        / 1024
}

/// Complete s-expressions (or atoms) of `text`, whitespace collapsed.
fn forms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i64;
    for tok in text.split_whitespace() {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(tok);
        depth += tok.matches('(').count() as i64 - tok.matches(')').count() as i64;
        if depth <= 0 {
            out.push(std::mem::take(&mut cur));
            depth = 0;
        }
    }
    out
}

/// z3's answers to the session.
fn z3_answers(session: &str) -> Vec<String> {
    let out = common::run_prog(
        "z3",
        &["-smt2", "-in"],
        session.as_bytes(),
        Duration::from_secs(1800),
    );
    assert!(!out.timed_out, "z3 did not finish the session");
    let mut all = forms(&out.stdout_str());
    // get-value answers are one form; a check-sat's is an atom.
    all.retain(|f| !f.is_empty());
    all
}

#[test]
fn memory_levels_off_and_answers_equal_z3s_over_a_long_session_of_resets() {
    common::require("z3");
    let queries: usize = std::env::var("SMTPROXY_SOAK_QUERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(QUERIES)
        .max(2);
    let mut rng = Rng(0x5eed_50a4);
    let mut counter = 0u64;
    // The modelled engine's memory (the default strategy may take the lean route for
    // windows of queries, which builds fewer terms).
    let mut session = Session::start(&[
        "--stats",
        "--strategy",
        "hybrid",
        "--cache",
        "none",
        "-smt2",
        "-in",
    ]);
    let pid = session.pid();
    let mut got: Vec<String> = Vec::with_capacity(2 * queries);
    let mut text = String::new();
    let t0 = Instant::now();
    let mut half_peak = 0;
    let mut rows = Vec::new();
    // The z3 reference is computed in chunks as we go, so a long run keeps no more text
    // than a chunk's.
    let mut mismatches = 0usize;
    let mut first_mismatch = None;
    let chunk = 2000;
    for k in 1..=queries {
        let (q, values) = query(&mut rng, &mut counter);
        assert!(session.send(&q), "smtproxy closed its input at query {k}");
        let sat = session
            .line(Duration::from_secs(60))
            .unwrap_or_else(|| panic!("no check-sat answer to query {k}"));
        got.push(sat.trim().to_string());
        if values {
            let value = session
                .read_sexpr(Duration::from_secs(60))
                .unwrap_or_else(|| panic!("no get-value answer to query {k}"));
            got.extend(forms(&value));
        }
        text.push_str(&q);
        if k % chunk == 0 || k == queries {
            let want = z3_answers(&text);
            assert_eq!(want.len(), got.len(), "answers to queries up to {k}");
            for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                if w != g {
                    mismatches += 1;
                    first_mismatch.get_or_insert_with(|| (k, i, w.clone(), g.clone()));
                }
            }
            text.clear();
            got.clear();
        }
        if k == queries / 2 {
            half_peak = vm(pid, "VmHWM:");
        }
        if k % (queries / 8).max(1) == 0 {
            rows.push((k, vm(pid, "VmRSS:"), vm(pid, "VmHWM:"), t0.elapsed()));
        }
    }
    let end_peak = vm(pid, "VmHWM:");
    let (st, stderr, timed_out) = session.finish(Duration::from_secs(60));
    assert!(
        !timed_out && st.is_some_and(|s| s.success()),
        "smtproxy exit: {st:?}"
    );
    let stats = common::summary(&stderr);
    for (k, rss, hwm, t) in &rows {
        eprintln!(
            "soak: {k:>8} queries  rss {rss:>5} MB  peak {hwm:>5} MB  {:>8.1} s",
            t.as_secs_f64()
        );
    }
    eprintln!("soak: {stats}");
    assert_eq!(
        mismatches, 0,
        "first answer unlike z3's: {first_mismatch:?}"
    );
    assert_eq!(common::field(&stats, "queries"), queries as u64);
    let collections = common::field(&stats, "term_collections");
    let peak_terms = common::field(&stats, "terms_peak");
    assert!(
        collections >= 2,
        "the term store was collected {collections} times"
    );
    // A store is collected at the first reset past the bound; one query adds far fewer
    // nodes than the bound again.
    let bound = smtproxy::session::arena::COLLECT_MIN_TERMS as u64;
    assert!(
        peak_terms < 2 * bound,
        "a store held {peak_terms} nodes (collected past {bound})"
    );
    // Memory levels off: the second half adds at most a quarter (or 24 MB) to the peak
    // of the first.
    assert!(
        end_peak <= half_peak + (half_peak / 4).max(24),
        "peak resident set {half_peak} MB after {} queries, {end_peak} MB after {queries}",
        queries / 2
    );
}
