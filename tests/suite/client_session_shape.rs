//! The session shape of a symbolic executor that pipes to z3 (Manticore's): every query
//! starts with `(reset)`, sets the same logic and options again (`:global-decls false`,
//! a tactic option), re-declares its input bytes under fresh names, asserts a path
//! condition that grows from query to query, and asks `get-value` after each sat; now and
//! then a query uses z3's optimisation commands. Through smtproxy (hybrid and stack) the
//! client must see what z3 prints, line by line, but for model values; every value
//! smtproxy gives must satisfy its query (checked by z3); the queries after an
//! optimisation query go back to the modelled strategies (they are not all sent to the
//! solver).

use crate::common;

use common::replies::next_response;
use common::rng::Rng;
use common::{field, run_prog, run_z3};
use std::time::Duration;

const T: Duration = Duration::from_secs(120);

struct Query {
    /// Declarations and assertions (no check-sat).
    body: String,
    /// The constants a get-value asks for.
    names: Vec<String>,
    /// Uses `minimize` of its first name (answered by smtproxy's search over bounds: the
    /// optimum is z3's).
    optimises: bool,
}

/// `n` queries in Manticore's shape over 16 input bytes, naming the bytes from
/// `a_{first_name + 1}` on.
fn session(n: usize, seed: u64, first_name: usize) -> Vec<Query> {
    let mut rng = Rng(seed);
    let mut fresh = first_name;
    let mut path: Vec<(String, Vec<usize>)> = Vec::new();
    let mut out = Vec::new();
    while out.len() < n {
        let i = rng.below(16) as usize;
        let j = rng.below(16) as usize;
        let k = rng.below(256);
        let conds = [
            (format!("(bvult {{0}} #x{k:02x})"), vec![i]),
            (format!("(= (bvand {{0}} #x0f) #x{:02x})", k & 15), vec![i]),
            ("(= {0} {1})".to_string(), vec![i, j]),
            (format!("(bvugt (bvadd {{0}} {{1}}) #x{k:02x})"), vec![i, j]),
        ];
        let (tmpl, bytes) = rng.pick(&conds).clone();
        for positive in [true, false] {
            let mut used: Vec<usize> = path.iter().flat_map(|(_, b)| b.clone()).collect();
            used.extend(&bytes);
            used.sort_unstable();
            used.dedup();
            let names: Vec<String> = used
                .iter()
                .map(|_| {
                    fresh += 1;
                    format!("a_{fresh}")
                })
                .collect();
            let name_of = |b: usize| names[used.iter().position(|&u| u == b).unwrap_or(0)].clone();
            let fill = |t: &str, bs: &[usize]| {
                let mut s = t.to_string();
                for (x, &b) in bs.iter().enumerate() {
                    s = s.replace(&format!("{{{x}}}"), &name_of(b));
                }
                s
            };
            let mut body =
                String::from("(declare-fun STDIN () (Array (_ BitVec 32) (_ BitVec 8)))\n");
            for (b, name) in used.iter().zip(&names) {
                body.push_str(&format!(
                    "(declare-fun {name} () (_ BitVec 8))\n(assert (= {name} (select STDIN #x{b:08x})))\n"
                ));
            }
            for (t, bs) in &path {
                body.push_str(&format!("(assert {})\n", fill(t, bs)));
            }
            let c = fill(&tmpl, &bytes);
            if positive {
                body.push_str(&format!("(assert {c})\n"));
            } else {
                body.push_str(&format!("(assert (not {c}))\n"));
            }
            let optimises = out.len() % 25 == 12;
            if optimises {
                body.push_str(&format!("(minimize {})\n", names[0]));
            }
            out.push(Query {
                body,
                names,
                optimises,
            });
        }
        if path.len() >= 8 || rng.below(10) == 0 {
            let keep = rng.below(path.len() as u64 + 1) as usize;
            path.truncate(keep);
        } else {
            path.push((tmpl, bytes));
        }
    }
    out
}

fn script(qs: &[Query]) -> String {
    let mut s = String::new();
    for q in qs {
        s.push_str("(reset)\n(set-logic QF_AUFBV)\n(set-option :global-decls false)\n");
        s.push_str("(set-option :tactic.solve_eqs.context_solve false)\n");
        s.push_str(&q.body);
        s.push_str("(check-sat)\n");
        s.push_str(&format!("(get-value ({}))\n", q.names.join(" ")));
    }
    s
}

/// The answers per query: (verdict, get-value answer).
fn answers(out: &str) -> Vec<(String, String)> {
    let mut lines = out.lines();
    let mut v = Vec::new();
    while let Some(verdict) = lines.next() {
        let value = next_response(&mut lines);
        v.push((verdict.to_string(), value));
    }
    v
}

/// The `(name value)` pairs of a get-value answer.
fn pairs(value: &str) -> Vec<(String, String)> {
    let flat = value.replace(['(', ')'], " ");
    let toks: Vec<&str> = flat.split_whitespace().collect();
    toks.chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0].to_string(), c[1].to_string()))
        .collect()
}

/// `qs` through z3 and through smtproxy under each of `strategies`: the same verdicts,
/// the same names in each get-value, every value smtproxy gave satisfying its query (z3
/// checks), errors word for word. Returns smtproxy's `--stats` summary per strategy.
fn answers_as_z3(qs: &[Query], strategies: &[&str]) -> Vec<serde_json::Value> {
    answers_as_z3_in(qs, strategies, "none")
}

/// [`answers_as_z3`] with the result store `cache` (a path, or `none`).
fn answers_as_z3_in(qs: &[Query], strategies: &[&str], cache: &str) -> Vec<serde_json::Value> {
    let input = script(qs);
    let direct = run_prog("z3", &["-t:120000", "-smt2", "-in"], input.as_bytes(), T);
    let want = answers(&direct.stdout_str());
    assert_eq!(
        want.len(),
        qs.len(),
        "z3's own answers:\n{}",
        direct.stdout_str()
    );
    let sats = want.iter().filter(|a| a.0 == "sat").count();
    assert!(
        sats > 20 && sats < qs.len(),
        "a mix of sat and unsat: {sats}"
    );
    let mut summaries = Vec::new();
    for &strategy in strategies {
        let out = common::run(
            &[
                "--solver",
                "z3",
                "--strategy",
                strategy,
                "--cache",
                cache,
                "--stats",
                "-t:120000",
                "-smt2",
                "-in",
            ],
            input.as_bytes(),
            T,
        );
        let got = answers(&out.stdout_str());
        assert_eq!(got.len(), want.len(), "{strategy}:\n{}", out.stdout_str());
        // Every value smtproxy gave, asserted with its query: z3 must say sat to each.
        let mut checks = String::new();
        let mut nchecks = 0;
        for (i, ((gv, gval), (wv, wval))) in got.iter().zip(&want).enumerate() {
            assert_eq!(gv, wv, "{strategy}: query {i}");
            if wv == "sat" {
                // The same names, in the same order.
                let (g, w) = (pairs(gval), pairs(wval));
                let names =
                    |p: &[(String, String)]| p.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
                assert_eq!(names(&g), names(&w), "{strategy}: query {i}");
                if qs[i].optimises {
                    // The objective's value is the optimum: z3's own.
                    assert_eq!(g[0], w[0], "{strategy}: query {i} minimizes {}", g[0].0);
                }
                checks.push_str("(reset)\n(set-logic QF_AUFBV)\n");
                for l in qs[i].body.lines().filter(|l| !l.starts_with("(minimize")) {
                    checks.push_str(l);
                    checks.push('\n');
                }
                for (n, v) in &g {
                    checks.push_str(&format!("(assert (= {n} {v}))\n"));
                }
                checks.push_str("(check-sat)\n");
                nchecks += 1;
            } else {
                // The error for a get-value after unsat, word for word.
                assert_eq!(gval, wval, "{strategy}: query {i}");
            }
        }
        let z = run_prog("z3", &["-in"], checks.as_bytes(), T);
        let verdicts: Vec<String> = z.stdout_str().lines().map(str::to_string).collect();
        assert_eq!(verdicts.len(), nchecks, "{strategy}: {}", z.stdout_str());
        assert!(
            verdicts.iter().all(|v| v == "sat"),
            "{strategy}: some values smtproxy gave do not satisfy their query: {verdicts:?}"
        );
        summaries.push(common::summary(&out.stderr_str()));
    }
    summaries
}

#[test]
fn a_manticore_shaped_session_answers_as_z3_does() {
    common::require("z3");
    let qs = session(120, 0x5e55_1011, 0);
    let strategies = ["hybrid", "stack"];
    let summaries = answers_as_z3(&qs, &strategies);
    for (strategy, s) in strategies.iter().zip(&summaries) {
        let optimising = qs.iter().filter(|q| q.optimises).count() as u64;
        assert!(optimising >= 2);
        assert_eq!(field(s, "optimisations"), optimising, "{strategy}: {s}");
        assert_eq!(field(s, "fallbacks_passthrough"), 0, "{strategy}: {s}");
        if *strategy == "hybrid" {
            // Back from passthrough at each reset: most queries never reach the solver.
            assert!(
                field(s, "solver_checks") < field(s, "queries") / 2,
                "{strategy}: {s}"
            );
        }
        // Options set again after every reset restart nothing; only the optimisation
        // queries do (into passthrough and back).
        assert!(field(s, "restarts") <= 2 * optimising, "{strategy}: {s}");
    }
}

/// The same queries asked again under other names (as a symbolic executor does when it
/// comes back to a state): each is answered from the trie of blocks without parsing its
/// assertions (`block_repeats`: the first block's answer, with its model read onto the new
/// names), or else the model of the first block is read onto the new names and evaluated
/// (`block_hints`); what the client sees is still z3's answers with values that satisfy
/// each query.
#[test]
fn a_block_asked_again_under_fresh_names_reuses_its_model() {
    common::require("z3");
    let mut qs = session(60, 0xb10c_4ea1, 0);
    let again = session(60, 0xb10c_4ea1, 100_000);
    assert_ne!(qs[5].body, again[5].body, "fresh names the second time");
    let asked_again = again.len() as u64;
    qs.extend(again);
    let s = &answers_as_z3(&qs, &["hybrid"])[0];
    let known = field(s, "block_hints") + field(s, "block_repeats");
    let optimising = qs.iter().filter(|q| q.optimises).count() as u64;
    assert!(
        known >= asked_again / 2 && known <= asked_again && field(s, "block_repeats") > 0,
        "the second pass answered from the first's answers: {s}"
    );
    assert_eq!(field(s, "optimisations"), optimising, "{s}");
}

/// The models by block outlive the process: a second run over the same result store, its
/// queries under names the first run never used, answers them from the first run's
/// models (each evaluated on its query, and checked here by z3), not from the solver; and
/// a third, over the trie the second kept beside the store, from that trie.
#[test]
fn block_models_carry_over_to_the_next_run_through_the_store() {
    common::require("z3");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("store.sqlite3");
    let db = db.to_str().expect("a UTF-8 path");
    let first = session(60, 0x5eed_b10c, 0);
    let s1 = &answers_as_z3_in(&first, &["hybrid"], db)[0];
    let again = session(60, 0x5eed_b10c, 500_000);
    assert_ne!(first[5].body, again[5].body, "fresh names the second time");
    let sats = field(s1, "sat");
    // The store's entries alone (the trie beside it holds the first run's answers).
    common::drop_trie(db);
    let s2 = &answers_as_z3_in(&again, &["hybrid"], db)[0];
    let optimising = again.iter().filter(|q| q.optimises).count() as u64;
    assert!(
        field(s2, "block_hints") + optimising >= sats && field(s2, "disk_hits") > 0,
        "the second run answered each sat block from the first run's models: {s2}"
    );
    // With the trie the second run left beside the store, a third run under other names
    // again follows the paths from its first query: its blocks are answered without
    // being parsed, each answer checked by z3 here.
    let third = session(60, 0x5eed_b10c, 900_000);
    let s3 = &answers_as_z3_in(&third, &["hybrid"], db)[0];
    assert!(
        field(s3, "trie_loaded_nodes") > 0
            && field(s3, "block_repeats") + optimising + 1 >= field(s3, "queries"),
        "the third run answered from the trie the second left: {s3}"
    );
}

/// A test case's bytes asked one query each (Manticore's `solve_to_fd`): every query has
/// the same path condition under fresh names, plus `(= BITVEC byte_i)`. z3 run afresh
/// gives the same model each time, so the bytes fit together; through smtproxy they must
/// too (a recent model carries over once the renamed intermediates are recomputed from
/// their definitions), else the test case does not take the path it was made for.
#[test]
fn bytes_asked_one_query_each_fit_together() {
    common::require("z3");
    let mut fresh = 0;
    let mut script = String::new();
    for i in 0..4 {
        script.push_str("(reset)\n(set-logic QF_AUFBV)\n(set-option :global-decls false)\n");
        script.push_str("(declare-fun STDIN () (Array (_ BitVec 32) (_ BitVec 8)))\n");
        script.push_str("(declare-fun BITVEC () (_ BitVec 8))\n");
        let mut bytes = Vec::new();
        for b in 0..4 {
            fresh += 1;
            let n = format!("a_{fresh}");
            script.push_str(&format!(
                "(declare-fun {n} () (_ BitVec 8))(assert (= {n} (select STDIN #x{b:08x})))\n"
            ));
            bytes.push(n);
        }
        fresh += 1;
        let sum = format!("a_{fresh}");
        script.push_str(&format!(
            "(declare-fun {sum} () (_ BitVec 8))(assert (= {sum} (bvadd {} {} (bvmul #x03 {}) {})))\n",
            bytes[0], bytes[1], bytes[2], bytes[3]
        ));
        script.push_str(&format!("(assert (= {sum} #x5a))\n"));
        script.push_str(&format!("(assert (bvugt {} #x40))\n", bytes[0]));
        script.push_str(&format!("(assert (distinct {} {}))\n", bytes[1], bytes[2]));
        script.push_str(&format!("(assert (= BITVEC {}))\n", bytes[i]));
        script.push_str("(check-sat)\n(get-value (BITVEC))\n");
    }
    for strategy in ["hybrid", "cache"] {
        let out = run_z3(strategy, &["-smt2", "-in"], script.as_bytes(), T);
        let got = answers(&out.stdout_str());
        assert_eq!(got.len(), 4, "{strategy}: {}", out.stdout_str());
        let vals: Vec<String> = got
            .iter()
            .map(|(v, val)| {
                assert_eq!(v, "sat", "{strategy}");
                pairs(val)[0].1.clone()
            })
            .collect();
        // The four bytes together satisfy the path condition (z3 says so).
        let check = format!(
            "(declare-const b0 (_ BitVec 8))(declare-const b1 (_ BitVec 8))(declare-const b2 (_ BitVec 8))(declare-const b3 (_ BitVec 8))\
             (assert (= b0 {}))(assert (= b1 {}))(assert (= b2 {}))(assert (= b3 {}))\
             (assert (= (bvadd b0 b1 (bvmul #x03 b2) b3) #x5a))(assert (bvugt b0 #x40))(assert (distinct b1 b2))(check-sat)\n",
            vals[0], vals[1], vals[2], vals[3]
        );
        let z = run_prog("z3", &["-in"], check.as_bytes(), T);
        assert_eq!(
            z.stdout_str(),
            "sat\n",
            "{strategy}: bytes {vals:?} do not fit together"
        );
    }
}

/// A name redeclared with another sort after a reset, beside names declared in an earlier
/// query and never used, with the client's `:global-decls false` (Manticore's test
/// session, reduced): every strategy answers as z3 (the stack's backend kept the client's
/// `false`, popped a declaration it still counted as made, and answered `unknown`).
#[test]
fn redeclared_names_after_resets_under_global_decls_false() {
    common::require("z3");
    let script = "(set-logic QF_AUFBV)\n(set-option :global-decls false)\n\
        (declare-fun BITVEC () (_ BitVec 8))\n(assert (= BITVEC #x41))\n(check-sat)\n(reset)\n\
        (set-logic QF_AUFBV)\n(declare-fun BITVEC () (_ BitVec 8))\n(declare-fun BITVEC_1 () (_ BitVec 8))\n\
        (assert (= BITVEC #x41))\n(check-sat)\n(reset)\n\
        (set-logic QF_AUFBV)\n(declare-fun BITVEC () (_ BitVec 16))\n(declare-fun BITVEC_1 () (_ BitVec 8))\n\
        (declare-fun BITVEC_2 () (_ BitVec 8))\n\
        (declare-fun a_129 () (_ BitVec 16))(assert (= a_129 (concat BITVEC_1 BITVEC_2)))\n(check-sat)\n";
    let want = run_prog("z3", &["-in"], script.as_bytes(), T).stdout_str();
    assert_eq!(want, "sat\nsat\nsat\n");
    for strategy in ["stack", "stack-cse", "hybrid", "cache", "fresh"] {
        let out = run_z3(strategy, &["-in"], script.as_bytes(), T);
        assert_eq!(out.stdout_str(), want, "{strategy}");
    }
}
