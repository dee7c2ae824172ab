//! z3's optimisation commands in the shape symbolic executors send them (one `minimize` or
//! `maximize` of a bit-vector constant, then check-sat and get-value of it, Manticore's
//! `optimize`): answered by smtproxy's search over bounds, byte for byte as z3 answers
//! them, under every modelled strategy; the shapes it does not search (two objectives, a
//! compound objective, one under a push, get-objectives where no optimum is known) still
//! answered as z3 answers them, by the solver.

use crate::common;

use common::rng::Rng;
use common::{field, run_prog, run_z3};
use std::time::Duration;

const T: Duration = Duration::from_secs(120);

fn lit(v: u64, w: u32) -> String {
    let v = if w == 64 { v } else { v & ((1u64 << w) - 1) };
    format!("#x{:0width$x}", v, width = (w / 4) as usize)
}

/// A random literal of `w` bits (a multiple of 64 past 64), of any magnitude: only its
/// lowest few words are nonzero. `small`: for a word of at most 64 bits, a value shifted
/// right by a random amount (else a whole random word).
fn wide_lit(rng: &mut Rng, w: u32, small: bool) -> String {
    if w <= 64 {
        return lit(
            if small {
                rng.next() >> rng.below(64)
            } else {
                rng.next()
            },
            w,
        );
    }
    let words = (w / 64) as usize;
    let nonzero = 1 + rng.below(words as u64) as usize;
    let mut s = String::from("#x");
    for i in (0..words).rev() {
        let v = if i < nonzero { rng.next() } else { 0 };
        s.push_str(&format!("{v:016x}"));
    }
    s
}

/// Manticore's query for `optimize`: a path condition over a few constants, `X == x`, a
/// fresh `optimized_` bounded by X, the objective, check-sat, get-value of it; sometimes
/// get-objectives, a check-sat-assuming, or a pushed extra assertion. Words of one of
/// `widths` bits: 8 to 64 for native code, 128 and 256 as well for Manticore's EVM words.
fn block(rng: &mut Rng, fresh: &mut usize, widths: &[u32]) -> (String, bool) {
    let w = widths[rng.below(widths.len() as u64) as usize];
    let n = 1 + rng.below(3) as usize;
    let mut s = String::from("(reset)\n(set-logic QF_AUFBV)\n(set-option :global-decls false)\n");
    let names: Vec<String> = (0..n)
        .map(|_| {
            *fresh += 1;
            format!("v_{fresh}")
        })
        .collect();
    for v in &names {
        s.push_str(&format!("(declare-fun {v} () (_ BitVec {w}))\n"));
    }
    let mut unsat_possible = false;
    for _ in 0..1 + rng.below(4) {
        let a = &names[rng.below(n as u64) as usize];
        let b = &names[rng.below(n as u64) as usize];
        let c = wide_lit(rng, w, true);
        let atom = match rng.below(7) {
            0 => format!("(bvule {a} {c})"),
            1 => format!("(bvuge {a} {c})"),
            2 => format!("(bvslt {a} {c})"),
            3 => format!("(bvsge {a} {c})"),
            4 => format!("(distinct {a} {b})"),
            5 => format!("(bvule (bvadd {a} {c}) {b})"),
            _ => {
                unsat_possible = true;
                format!("(= ((_ extract 0 0) {a}) #b{})", rng.below(2))
            }
        };
        s.push_str(&format!("(assert {atom})\n"));
    }
    *fresh += 1;
    let x = format!("X_{fresh}");
    s.push_str(&format!("(declare-fun {x} () (_ BitVec {w}))\n"));
    s.push_str(&format!("(assert (= {x} {}))\n", names[0]));
    s.push_str(&format!("(declare-fun optimized_ () (_ BitVec {w}))\n"));
    let maximize = rng.below(2) == 0;
    let (goal, op) = if maximize {
        ("maximize", "bvuge")
    } else {
        ("minimize", "bvule")
    };
    s.push_str(&format!(
        "(assert ({op} {x} optimized_))\n({goal} optimized_)\n"
    ));
    s.push_str("(check-sat)\n(get-value (optimized_))\n");
    match rng.below(4) {
        0 => s.push_str("(get-objectives)\n"),
        1 => {
            let c = wide_lit(rng, w, false);
            s.push_str(&format!(
                "(check-sat-assuming ((bvugt optimized_ {c})))\n(get-value (optimized_))\n"
            ));
        }
        2 => {
            let c = wide_lit(rng, w, false);
            s.push_str(&format!(
                "(push 1)\n(assert (bvult {} {c}))\n(check-sat)\n(get-value (optimized_))\n(pop 1)\n",
                names[0]
            ));
        }
        _ => {}
    }
    (s, unsat_possible)
}

fn out(o: &common::Out) -> String {
    o.stdout_str()
}

#[test]
fn optimisation_queries_answer_as_z3() {
    blocks_answer_as_z3(
        0x0b7e_c71e,
        60,
        &[8, 16, 32, 64],
        &["hybrid", "stack", "cache"],
    );
}

/// Manticore's EVM words: 128 and 256 bits (a search of up to 258 checks). Not under the
/// cache strategy, where each of them is a fresh context (tens of seconds here): the
/// search is the same code under every strategy, and the test above runs it there.
#[test]
fn evm_word_objectives_answer_as_z3() {
    blocks_answer_as_z3(0x0e4f_2560, 16, &[128, 256], &["hybrid", "stack"]);
}

/// `n` random blocks (`block`) of the given widths, answered by z3 and by smtproxy under
/// each strategy: the same bytes, every objective searched here.
fn blocks_answer_as_z3(seed: u64, n: usize, widths: &[u32], strategies: &[&str]) {
    common::require("z3");
    let mut rng = Rng(seed);
    let mut fresh = 0;
    let mut script = String::new();
    for _ in 0..n {
        let (b, _) = block(&mut rng, &mut fresh, widths);
        script.push_str(&b);
    }
    let z = run_prog("z3", &["-t:120000", "-smt2", "-in"], script.as_bytes(), T);
    let want = out(&z);
    let sats = want.lines().filter(|l| *l == "sat").count();
    let unsats = want.lines().filter(|l| *l == "unsat").count();
    assert!(
        sats > n / 2 && unsats > 0,
        "a mix: {sats} sat, {unsats} unsat"
    );
    assert!(want.contains("(objectives"), "get-objectives answered");
    let mut verdict = "";
    let mut objectives_after_unsat = 0;
    for l in want.lines() {
        match l {
            "sat" | "unsat" => verdict = l,
            "(objectives" if verdict == "unsat" => objectives_after_unsat += 1,
            _ => {}
        }
    }
    for &strategy in strategies {
        let o = run_z3(
            strategy,
            &["--stats", "-t:120000", "-smt2", "-in"],
            script.as_bytes(),
            T,
        );
        let got = out(&o);
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "{strategy}: line {i} of the answers");
        }
        assert_eq!(got.lines().count(), want.lines().count(), "{strategy}");
        let s = common::summary(&o.stderr_str());
        // Every check-sat under the objective was searched here; only a get-objectives
        // after an unsat one (z3 prints what its optimiser was left with) went to the
        // solver.
        assert!(field(&s, "optimisations") >= n as u64, "{strategy}: {s}");
        assert!(
            field(&s, "fallbacks_passthrough") <= objectives_after_unsat,
            "{strategy}: {s}"
        );
    }
}

#[test]
fn other_optimisation_shapes_go_to_the_solver_and_answer_as_z3() {
    common::require("z3");
    let scripts = [
        // Two objectives (lexicographic in z3).
        "(declare-fun x () (_ BitVec 8))\n(declare-fun y () (_ BitVec 8))\n(assert (bvugt x #x05))\n(assert (bvule x y))\n(minimize y)\n(maximize x)\n(check-sat)\n(get-value (x y))\n(get-objectives)\n",
        // A compound objective.
        "(declare-fun x () (_ BitVec 8))\n(assert (bvugt x #x05))\n(minimize (bvadd x #x03))\n(check-sat)\n(get-objectives)\n",
        // An objective under a push.
        "(declare-fun x () (_ BitVec 8))\n(assert (bvugt x #x05))\n(push 1)\n(maximize x)\n(check-sat)\n(get-value (x))\n(pop 1)\n(check-sat)\n",
        // get-objectives before any check-sat, and after an unsat one.
        "(declare-fun x () (_ BitVec 8))\n(minimize x)\n(get-objectives)\n(assert (bvugt x #x05))\n(check-sat)\n(get-objectives)\n(assert (bvult x #x05))\n(check-sat)\n(get-objectives)\n(get-value (x))\n",
        // An objective wider than the search takes (z3's optimiser answers).
        "(declare-fun x () (_ BitVec 512))\n(assert (bvult x (bvshl #x00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000003 #x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001f0)))\n(maximize x)\n(check-sat)\n(get-value (x))\n(get-objectives)\n",
        // An Int objective.
        "(declare-fun n () Int)\n(assert (> n 5))\n(minimize n)\n(check-sat)\n(get-value (n))\n",
    ];
    for (i, script) in scripts.iter().enumerate() {
        let want = out(&run_prog("z3", &["-smt2", "-in"], script.as_bytes(), T));
        assert!(
            want.starts_with("sat") || want.starts_with("(error"),
            "{want}"
        );
        for strategy in ["hybrid", "stack"] {
            let got = out(&run_z3(strategy, &["-smt2", "-in"], script.as_bytes(), T));
            assert_eq!(got, want, "script {i} under {strategy}");
        }
    }
}

/// The model the client reads after an optimum is the optimum's: every value in it (here
/// determined by the optimum) is z3's.
#[test]
fn values_after_an_optimum_come_from_the_optimum_model() {
    common::require("z3");
    let script = "(declare-fun x () (_ BitVec 32))\n(declare-fun y () (_ BitVec 32))\n\
        (assert (bvugt x #x00000100))\n(assert (bvult x #x10000000))\n(assert (= y (bvadd x #x00000007)))\n\
        (minimize y)\n(check-sat)\n(get-value (y))\n(get-value (x y))\n";
    let want = out(&run_prog("z3", &["-smt2", "-in"], script.as_bytes(), T));
    assert_eq!(
        want,
        "sat\n((y #x00000108))\n((x #x00000101)\n (y #x00000108))\n"
    );
    for strategy in ["hybrid", "stack", "cache"] {
        let got = out(&run_z3(strategy, &["-smt2", "-in"], script.as_bytes(), T));
        assert_eq!(got, want, "{strategy}");
    }
}

/// The solvers killed after an optimum was answered: the model read next is still the
/// optimum's (a lost model is solved again under the optimum's bound, not as any model of
/// the query).
#[test]
fn the_optimum_outlives_its_solver() {
    common::require("z3");
    for strategy in ["stack", "hybrid"] {
        let mut s =
            common::Session::start(&["--solver", "z3", "--strategy", strategy, "--cache", "none"]);
        s.send("(declare-fun x () (_ BitVec 32))\n(declare-fun y () (_ BitVec 32))");
        s.send("(assert (bvugt x #x00000100))\n(assert (bvult x #x10000000))");
        s.send("(assert (= y (bvadd x #x00000007)))\n(maximize y)");
        assert_eq!(s.ask("(check-sat)", T), "sat", "{strategy}");
        let pids = common::descendants_of(s.pid());
        assert!(!pids.is_empty(), "{strategy}: no solver under smtproxy");
        for p in &pids {
            common::kill(*p, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(300));
        s.send("(get-value (y x))");
        let v = s.read_sexpr(T).expect("get-value answer");
        assert_eq!(
            v.split_whitespace().collect::<Vec<_>>().join(" "),
            "((y #x10000006) (x #x0fffffff))",
            "{strategy}"
        );
    }
}

/// KLEE's path conditions (sort's solver queries) as optimisation queries: each query's
/// first input word maximized, then minimized, through a fresh `optimized_` bounded by it;
/// every answer byte for byte as z3's, each check-sat under the objective searched here.
#[test]
fn klee_path_conditions_optimised_as_z3() {
    common::require("z3");
    let text = common::corpus_text("klee/sort/solver-queries.smt2.gz");
    for (goal, op) in [("maximize", "bvuge"), ("minimize", "bvule")] {
        let mut script = String::new();
        let mut queries = 0u64;
        for q in text.split("(exit)") {
            let Some(array) = q
                .lines()
                .find_map(|l| l.strip_prefix("(declare-fun "))
                .filter(|l| l.contains("(Array"))
                .and_then(|l| l.split_whitespace().next())
            else {
                continue;
            };
            let word = format!(
                "(concat (select {array} (_ bv3 32)) (concat (select {array} (_ bv2 32)) \
                 (concat (select {array} (_ bv1 32)) (select {array} (_ bv0 32)))))"
            );
            for l in q.lines() {
                let l = l.trim();
                if l.is_empty() || l.starts_with(';') || l.starts_with("(get-value") {
                    continue;
                }
                if l.starts_with("(check-sat)") {
                    script.push_str(&format!(
                        "(declare-fun optimized_ () (_ BitVec 32))\n(assert ({op} {word} optimized_))\n\
                         ({goal} optimized_)\n(check-sat)\n(get-value (optimized_))\n"
                    ));
                    queries += 1;
                } else {
                    script.push_str(l);
                    script.push('\n');
                }
            }
            script.push_str("(reset)\n");
        }
        assert!(queries > 50, "{queries} queries");
        let want = out(&run_prog("z3", &["-smt2", "-in"], script.as_bytes(), T));
        assert_eq!(
            want.lines()
                .filter(|l| l.starts_with("((optimized_"))
                .count() as u64
                + want.lines().filter(|l| *l == "unsat").count() as u64,
            queries,
            "z3 answered every query: {want}"
        );
        for strategy in ["hybrid", "stack"] {
            let o = run_z3(strategy, &["--stats", "-smt2", "-in"], script.as_bytes(), T);
            assert_eq!(out(&o), want, "{goal} under {strategy}");
            let s = common::summary(&o.stderr_str());
            assert_eq!(
                field(&s, "optimisations"),
                queries,
                "{goal} {strategy}: {s}"
            );
        }
    }
}

/// The client's deadline (`-t:`) holds for the whole search, as for z3's optimiser: a
/// check-sat under an objective answers within about one deadline, not one per bound.
/// When the query itself is too hard for the deadline, the answers are z3's to the byte:
/// `unknown`, get-objectives' interval, get-value's error. When the first model comes at
/// once but the bounds past it are hard, the answer is `unknown` within the deadline, and
/// get-objectives' interval holds that first value.
#[test]
fn the_deadline_bounds_the_whole_search() {
    common::require("z3");
    // a * b a fixed odd 64-bit number, with 32-bit factors: factoring by bit-blasting.
    let hard = "(assert (= (bvmul a b) #x9e3779b97f4a7c15))\n\
        (assert (bvugt a #x0000000000000001))\n(assert (bvugt b #x0000000000000001))\n\
        (assert (bvult a #x00000000ffffffff))\n(assert (bvult b #x00000000ffffffff))\n";
    let decls = "(declare-fun a () (_ BitVec 64))\n(declare-fun b () (_ BitVec 64))\n";
    let deadline = Duration::from_millis(1500);
    let flag = "-t:1500";
    let script =
        format!("{decls}{hard}(maximize a)\n(check-sat)\n(get-objectives)\n(get-value (a))\n");
    let want = out(&run_prog(
        "z3",
        &[flag, "-smt2", "-in"],
        script.as_bytes(),
        T,
    ));
    assert!(
        want.starts_with("unknown\n(objectives\n (a  (interval 18446744073709551615 0))\n)\n"),
        "{want}"
    );
    for strategy in ["hybrid", "stack"] {
        let o = run_z3(strategy, &[flag, "-smt2", "-in"], script.as_bytes(), T);
        assert_eq!(out(&o), want, "{strategy}");
        // One deadline and the solver's start, not a second deadline for a fall-back.
        assert!(
            o.elapsed < deadline * 2 - Duration::from_millis(200),
            "{strategy}: {:?}",
            o.elapsed
        );
    }
    // `a = 2` is a model at once; every bound past it needs the factoring (which has no
    // solution: the number has a 47-bit prime factor, so 2 is the optimum, unproven).
    let easy_first = format!(
        "{decls}(assert (or (= a #x0000000000000002) (and (= (bvmul a b) #x9e3779b97f4a7c15) \
         (bvugt a #x0000000000000001) (bvugt b #x0000000000000001) \
         (bvult a #x00000000ffffffff) (bvult b #x00000000ffffffff))))\n\
         (maximize a)\n(check-sat)\n(get-objectives)\n"
    );
    for strategy in ["hybrid", "stack"] {
        let o = run_z3(strategy, &[flag, "-smt2", "-in"], easy_first.as_bytes(), T);
        let got = out(&o);
        assert!(
            got.starts_with("unknown\n(objectives\n (a  (interval "),
            "{strategy}: {got}"
        );
        assert!(got.ends_with(" 2))\n)\n"), "{strategy}: {got}");
        assert!(
            o.elapsed < deadline * 2 - Duration::from_millis(200),
            "{strategy}: {:?}",
            o.elapsed
        );
    }
}
