//! Random scripts about scopes, run through the real solver and through smtproxy.
//!
//! The scripts are made to hit what a session memo, the counterexample index, the memo of
//! parsed assertions or the stack mirror could get wrong: a handful of names declared,
//! popped and declared again with other sorts (Bool, Int, 1- and 2-bit vectors, arrays)
//! under push, pop, reset and reset-assertions, and assertions whose text fits any sort
//! (`(distinct a b c)` is unsat over Bool and 1-bit vectors, sat over Int), so the same
//! text comes back meaning something else; some assertions go through Bool macros
//! (`define-fun m1`) whose names come back with other bodies.
//!
//! * `random_scopes_match_z3`: stdout equal to `z3 -in` byte for byte under hybrid, cache,
//!   stack, stack-cse and fresh (no values are asked for, so nothing may differ);
//! * `random_episode_values_satisfy`: with a get-value after every check-sat, the same
//!   answers as z3, and every set of values smtproxy gives satisfies its scope in z3;
//! * `random_episodes_match_cvc5` / `_yices`: the error-free episode scripts against
//!   cvc5 and yices (QF_ABV, no Int) through `--solver cvc5` / `--solver yices`;
//! * `reset_assertions_and_levels_as_z3`: z3's reset-assertions and assertion-stack-levels;
//! * `reset_assertions_under_global_declarations_as_each_solver`: the same under
//!   `:global-declarations true`, with z3, cvc5 and yices (all strategies and passthrough).
//!
//! It catches a counterexample index keyed by conjunct text (seed 16, and the yices
//! episodes) and a wrong reset-assertions (the reset-assertions script).
//!
//! Fixed seeds; `SMTPROXY_SCOPES_SEED=N` runs one other seed, `SMTPROXY_SCOPES_RUNS=K`
//! more scripts. A failing script is written to `target/proxy_scopes-<seed>.smt2` (every
//! script, with `SMTPROXY_SCOPES_DUMP=1`).

use crate::common;

use common::rng::Rng;
use common::{root, run_prog, run_under, run_z3};
use std::fmt::Write;
use std::time::Duration;

const NAMES: &[&str] = &["a", "b", "c", "d"];
/// Names of Bool macros (`define-fun`), scoped like declarations.
const MACROS: &[&str] = &["m1", "m2"];
const SORTS: &[&str] = &[
    "Bool",
    "Int",
    "(_ BitVec 1)",
    "(_ BitVec 2)",
    "(Array (_ BitVec 1) Bool)",
];

/// One script of about `ops` commands (plus its header): episodes for even seeds, free
/// form for odd ones.
fn script(seed: u64, ops: usize) -> String {
    if seed.is_multiple_of(2) {
        episodes(seed, ops)
    } else {
        free_form(seed, ops)
    }
}

/// Short scopes, each with its own declarations of the same few names under random
/// sorts, one to three assertions and a check-sat; a reset now and then. The same
/// assertion text keeps coming back over other sorts, alone in its component.
fn episodes(seed: u64, ops: usize) -> String {
    render(&episode_list(seed, ops, SORTS), false, "ALL")
}

struct Episode {
    reset: bool,
    decls: Vec<(&'static str, &'static str)>,
    asserts: Vec<String>,
}

fn episode_list(seed: u64, ops: usize, sorts: &[&'static str]) -> Vec<Episode> {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut eps = Vec::new();
    let mut n = 0;
    while n < ops {
        let reset = r.below(10) == 0;
        let k = 2 + r.below(3) as usize;
        // Often one sort for all: `(distinct a b c)` then comes back over other sorts.
        let one = (r.below(2) == 0).then(|| *r.pick(sorts));
        let mut decls = Vec::new();
        for &name in &NAMES[..k] {
            decls.push((name, one.unwrap_or_else(|| *r.pick(sorts))));
        }
        let mut asserts = Vec::new();
        if one.is_some() && k >= 3 && r.below(2) == 0 {
            asserts.push("(distinct a b c)".to_string());
        }
        for _ in 0..r.below(3) {
            if let Some(t) = assertion(&mut r, &decls) {
                asserts.push(t);
            }
        }
        eps.push(Episode {
            reset,
            decls,
            asserts,
        });
        n += k + 5;
    }
    eps
}

/// The script of `eps`, each episode in a scope of its own; with `values`, models are on
/// and every check-sat is followed by a get-value of the episode's constants.
fn render(eps: &[Episode], values: bool, logic: &str) -> String {
    let models = if values {
        "(set-option :produce-models true)\n"
    } else {
        ""
    };
    let mut out = format!("{models}(set-logic {logic})\n");
    for e in eps {
        if e.reset {
            let _ = write!(out, "(reset)\n{models}");
            // yices needs its logic again; z3 and cvc5 do without (and the z3 scripts
            // are kept as they are: in this form they catch a text-keyed index's wrong unsat).
            if logic != "ALL" {
                let _ = writeln!(out, "(set-logic {logic})");
            }
        }
        out.push_str("(push 1)\n");
        for (n, s) in &e.decls {
            let _ = writeln!(out, "(declare-fun {n} () {s})");
        }
        for t in &e.asserts {
            let _ = writeln!(out, "(assert {t})");
        }
        out.push_str("(check-sat)\n");
        if values {
            let names: Vec<&str> = e.decls.iter().map(|(n, _)| *n).collect();
            let _ = writeln!(out, "(get-value ({}))", names.join(" "));
        }
        out.push_str("(pop 1)\n");
    }
    out
}

/// Any mix of declarations, assertions (some through macros, some naming a constant that
/// is not declared: an error), push and pop of one or two levels, reset,
/// reset-assertions, get-info :assertion-stack-levels, and check-sat, with and without
/// assumptions (then get-unsat-assumptions: the assumptions, or z3's error after sat).
fn free_form(seed: u64, ops: usize) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = String::from("(set-option :produce-unsat-assumptions true)\n(set-logic ALL)\n");
    // Declarations per scope level: (name, sort).
    let mut frames: Vec<Vec<(&str, &str)>> = vec![Vec::new()];
    for _ in 0..ops {
        let visible: Vec<(&str, &str)> = frames.iter().flatten().copied().collect();
        let undeclared: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| !visible.iter().any(|(v, _)| v == n))
            .collect();
        match r.below(100) {
            0..=29 if !undeclared.is_empty() => {
                let n = *r.pick(&undeclared);
                let s = *r.pick(SORTS);
                let _ = writeln!(out, "(declare-fun {n} () {s})");
                frames.last_mut().expect("base frame").push((n, s));
            }
            0..=59 if !visible.is_empty() => {
                let free_macro = MACROS
                    .iter()
                    .copied()
                    .find(|m| !visible.iter().any(|(v, _)| v == m));
                if let Some(t) = assertion(&mut r, &visible) {
                    match free_macro {
                        // Sometimes through a macro, whose name comes back with another
                        // body after a pop (the memo of parsed assertions sees the same
                        // `(assert m1)` text).
                        Some(m) if r.below(4) == 0 => {
                            let _ = writeln!(out, "(define-fun {m} () Bool {t})\n(assert {m})");
                            frames.last_mut().expect("base frame").push((m, "macro"));
                        }
                        _ => {
                            let _ = writeln!(out, "(assert {t})");
                        }
                    }
                }
            }
            60..=76 => out.push_str("(check-sat)\n"),
            77 => out.push_str("(get-info :assertion-stack-levels)\n"),
            78..=85 => {
                let n = 1 + r.below(2) as usize;
                let _ = writeln!(out, "(push {n})");
                for _ in 0..n {
                    frames.push(Vec::new());
                }
            }
            86..=93 if frames.len() > 1 => {
                let n = 1 + r.below((frames.len() as u64 - 1).min(2)) as usize;
                let _ = writeln!(out, "(pop {n})");
                frames.truncate(frames.len() - n);
            }
            94 if !undeclared.is_empty() => {
                // A name popped or never declared: an error, and the session goes on.
                let _ = writeln!(
                    out,
                    "(assert (= {} {}))",
                    r.pick(&undeclared),
                    r.pick(&undeclared)
                );
            }
            95 => {
                // After a reset the options are back to their defaults.
                out.push_str("(reset)\n(set-option :produce-unsat-assumptions true)\n");
                frames = vec![Vec::new()];
            }
            96 => {
                // z3 drops the assertions of every level and keeps the levels with their
                // declarations.
                out.push_str("(reset-assertions)\n(get-info :assertion-stack-levels)\n");
            }
            97..=99 => {
                let bools: Vec<&str> = visible
                    .iter()
                    .filter(|(_, s)| *s == "Bool")
                    .map(|(n, _)| *n)
                    .collect();
                if !bools.is_empty() {
                    let mut lits = Vec::new();
                    for _ in 0..1 + r.below(2) {
                        let n = *r.pick(&bools);
                        lits.push(if r.below(2) == 0 {
                            n.to_string()
                        } else {
                            format!("(not {n})")
                        });
                    }
                    let _ = writeln!(
                        out,
                        "(check-sat-assuming ({}))\n(get-unsat-assumptions)",
                        lits.join(" ")
                    );
                }
            }
            _ => {}
        }
    }
    out.push_str("(check-sat)\n");
    out
}

/// An assertion over the visible constants; mostly text that fits any sort.
fn assertion(r: &mut Rng, visible: &[(&str, &str)]) -> Option<String> {
    let visible: Vec<(&str, &str)> = visible
        .iter()
        .copied()
        .filter(|(_, s)| *s != "macro")
        .collect();
    if visible.is_empty() {
        return None;
    }
    let (x, s) = *r.pick(&visible);
    let same: Vec<&str> = visible
        .iter()
        .filter(|(n, t)| *t == s && *n != x)
        .map(|(n, _)| *n)
        .collect();
    let other = |r: &mut Rng| -> Option<&str> {
        if same.is_empty() {
            None
        } else {
            Some(*r.pick(&same))
        }
    };
    Some(match r.below(8) {
        // Sort-generic: the same text over Bool, Int or bit-vectors.
        0 | 1 if same.len() >= 2 => {
            let (y, z) = (same[0], same[1]);
            format!("(distinct {x} {y} {z})")
        }
        0..=2 => format!("(= {x} {})", other(r)?),
        3 => format!("(not (= {x} {}))", other(r)?),
        // Sort-specific.
        _ => match s {
            "Bool" => match r.below(3) {
                0 => x.to_string(),
                1 => format!("(not {x})"),
                _ => format!("(or {x} (not {}))", other(r)?),
            },
            "Int" => match r.below(3) {
                0 => format!("(< {x} {})", other(r)?),
                1 => format!("(> {x} {})", r.below(3)),
                _ => format!("(< {x} {})", r.below(3)),
            },
            "(_ BitVec 1)" => format!("(= {x} #b{})", r.below(2)),
            "(Array (_ BitVec 1) Bool)" => match r.below(3) {
                0 => format!("(select {x} #b{})", r.below(2)),
                1 => format!("(not (select {x} #b{}))", r.below(2)),
                _ => format!("(= (store {x} #b{} true) {})", r.below(2), other(r)?),
            },
            _ => match r.below(2) {
                0 => format!("(bvult {x} {})", other(r)?),
                _ => format!("(= {x} #b{:02b})", r.below(4)),
            },
        },
    })
}

#[test]
fn random_scopes_match_z3() {
    common::require("z3");
    let seeds: Vec<u64> = match std::env::var("SMTPROXY_SCOPES_SEED") {
        Ok(s) => vec![s.parse().expect("SMTPROXY_SCOPES_SEED is a number")],
        Err(_) => {
            let runs: u64 = std::env::var("SMTPROXY_SCOPES_RUNS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(20);
            (1..=runs).collect()
        }
    };
    let t = Duration::from_secs(60);
    let mut failures = Vec::new();
    let mut checks = 0;
    for &seed in &seeds {
        let text = script(seed, 150);
        if std::env::var_os("SMTPROXY_SCOPES_DUMP").is_some() {
            let _ = std::fs::write(
                root().join(format!("target/proxy_scopes-{seed}.smt2")),
                &text,
            );
        }
        let want = run_prog("z3", &["-in"], text.as_bytes(), t).stdout_str();
        checks += want.lines().count();
        let name = seed.to_string();
        let strategies = ["hybrid", "cache", "stack", "stack-cse", "fresh"];
        failures.extend(differ("z3", &strategies, &name, &text, &want));
    }
    // The scripts must be about something: many answers.
    assert!(
        checks >= 15 * seeds.len(),
        "only {checks} answers in {} scripts",
        seeds.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Models: every episode's check-sat is followed by a get-value of its constants. The
/// answers must be z3's, and every set of values smtproxy gives after a sat must satisfy
/// the episode's assertions, checked by z3 (the values may differ from z3's own).
#[test]
fn random_episode_values_satisfy() {
    common::require("z3");
    let t = Duration::from_secs(60);
    let mut checks = String::new();
    let mut n_checks = 0;
    for seed in (2..=12).step_by(2) {
        let eps = episode_list(seed, 150, SORTS);
        let text = render(&eps, true, "ALL");
        let z3 = run_prog("z3", &["-in"], text.as_bytes(), t).stdout_str();
        let want = responses(&z3);
        assert_eq!(want.len(), 2 * eps.len(), "seed {seed}: z3 said {z3}");
        for strategy in ["hybrid", "cache", "stack", "stack-cse", "fresh"] {
            let out = run_z3(strategy, &[], text.as_bytes(), t);
            out.assert_no_panic_no_hang(&format!("seed {seed} under {strategy} (values)"));
            let got = responses(&out.stdout_str());
            assert_eq!(got.len(), want.len(), "seed {seed} under {strategy}");
            for (i, e) in eps.iter().enumerate() {
                let (answer, values) = (&got[2 * i].0, &got[2 * i + 1]);
                assert_eq!(
                    answer,
                    &want[2 * i].0,
                    "seed {seed} under {strategy}: episode {i}"
                );
                if answer != "sat" {
                    assert!(values.0.starts_with("(error"), "{}", values.0);
                    continue;
                }
                assert_eq!(values.1.len(), e.decls.len(), "seed {seed}: {}", values.0);
                checks.push_str("(reset)\n(set-logic ALL)\n");
                for (n, s) in &e.decls {
                    let _ = writeln!(checks, "(declare-fun {n} () {s})");
                }
                for a in &e.asserts {
                    let _ = writeln!(checks, "(assert {a})");
                }
                for (n, v) in e.decls.iter().zip(&values.1) {
                    let _ = writeln!(checks, "(assert (= {} {v}))", n.0);
                }
                checks.push_str("(check-sat)\n");
                n_checks += 1;
            }
        }
    }
    let verdicts = run_prog("z3", &["-in"], checks.as_bytes(), t).stdout_str();
    let sat = verdicts.lines().filter(|l| *l == "sat").count();
    assert!(n_checks >= 50, "only {n_checks} sat episodes");
    assert_eq!(
        sat, n_checks,
        "values that do not satisfy their episode:\n{verdicts}"
    );
}

/// The top-level responses in `out`: each with its text and, for a get-value answer, the
/// value texts in order.
fn responses(out: &str) -> Vec<(String, Vec<String>)> {
    let sx = smtproxy::smt2::lexer::Sexps::parse(out).expect("responses are s-expressions");
    sx.roots
        .iter()
        .map(|&r| {
            let values = match sx.list(r) {
                Some(pairs) if sx.symbol(pairs.first().copied().unwrap_or(r)) != Some("error") => {
                    pairs
                        .iter()
                        .filter_map(|&p| {
                            sx.list(p)
                                .and_then(|kv| kv.get(1))
                                .map(|&v| sx.source(v).to_string())
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            (sx.source(r).to_string(), values)
        })
        .collect()
}

/// Run `text` through smtproxy with `solver` under each of `strategies`; every stdout
/// other than `want` (the solver's own) is described in the result, its script saved as
/// `target/proxy_scopes-<name>.smt2`.
fn differ(solver: &str, strategies: &[&str], name: &str, text: &str, want: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for &strategy in strategies {
        let got = run_under(solver, strategy, text.as_bytes(), Duration::from_secs(60));
        got.assert_no_panic_no_hang(&format!("script {name} under {strategy} ({solver})"));
        let got = got.stdout_str();
        if got != want {
            let path = root().join(format!("target/proxy_scopes-{name}.smt2"));
            let _ = std::fs::write(&path, text);
            let first = want.lines().zip(got.lines()).position(|(a, b)| a != b);
            failures.push(format!(
                "script {name} under {strategy}: stdout differs from {solver}'s (first at answer {first:?}); script in {}",
                path.display()
            ));
        }
    }
    failures
}

/// The error-free episode scripts (cvc5 1.0 stops at the first error, and its
/// reset-assertions is not z3's) through `solver_cmd` itself and through smtproxy with
/// `solver`, over `sorts` under `logic`.
fn episodes_match(solver: &str, solver_cmd: &[&str], sorts: &[&'static str], logic: &str) {
    let (prog, args) = solver_cmd.split_first().expect("a solver command");
    common::require(prog);
    let mut failures = Vec::new();
    for seed in (2..=12).step_by(2) {
        let text = render(&episode_list(seed, 150, sorts), false, logic);
        let want = run_prog(prog, args, text.as_bytes(), Duration::from_secs(60)).stdout_str();
        assert!(
            want.lines().count() >= 10 && !want.contains("error"),
            "seed {seed}: {solver} said {want}"
        );
        let name = format!("{solver}-{seed}");
        let strategies = ["hybrid", "cache", "stack", "fresh"];
        failures.extend(differ(solver, &strategies, &name, &text, &want));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn random_episodes_match_cvc5() {
    episodes_match(
        "cvc5",
        &["cvc5", "--lang", "smt2", "--incremental"],
        SORTS,
        "ALL",
    );
}

/// Without Int: yices needs a logic and has no `ALL` (QF_ABV).
#[test]
fn random_episodes_match_yices() {
    let sorts: Vec<&'static str> = SORTS.iter().copied().filter(|s| *s != "Int").collect();
    episodes_match("yices", &["yices-smt2", "--incremental"], &sorts, "QF_ABV");
}

/// z3's reset-assertions drops the assertions of every level but keeps the levels and
/// what was declared in them; get-info :assertion-stack-levels is the client's depth
/// (not the depth of smtproxy's own backend, 0 under cache and fresh).
const LEVELS: &str = "(declare-fun a () Int)
(assert (> a 0))
(push 1)
(get-info :assertion-stack-levels)
(declare-fun b () Int)
(define-fun f () Int 5)
(push 1)
(get-info :assertion-stack-levels)
(assert (< a 0))
(assert (> b f))
(check-sat)
(reset-assertions)
(get-info :assertion-stack-levels)
(check-sat)
(assert (< a 0))
(assert (> b f))
(check-sat)
(pop 1)
(get-info :assertion-stack-levels)
(check-sat)
(assert (< b 0))
(check-sat)
(pop 1)
(get-info :assertion-stack-levels)
(assert (> b 0))
(check-sat)
";

#[test]
fn reset_assertions_and_levels_as_z3() {
    common::require("z3");
    let t = Duration::from_secs(60);
    let want = run_prog("z3", &["-in"], LEVELS.as_bytes(), t).stdout_str();
    assert!(want.contains("(:assertion-stack-levels 2)") && want.contains("unknown constant b"));
    for strategy in [
        "hybrid",
        "cache",
        "stack",
        "stack-cse",
        "fresh",
        "passthrough",
    ] {
        let got = run_z3(strategy, &[], LEVELS.as_bytes(), t);
        assert_eq!(got.stdout_str(), want, "under {strategy}");
    }
}

/// Under `:global-declarations true` reset-assertions keeps what the levels declared
/// (cvc5 and yices drop the levels, z3 keeps them); smtproxy must not forget every
/// declaration for cvc5 and yices (`b` unknown below). The `( assert` spelled with
/// a space must go too: z3's session left it in the log it rebuilds a solver from, so
/// after the ill-sorted `(abs r)` (which z3 takes, sending the session to passthrough)
/// the last check-sat was `unsat`.
const GLOBAL_RESET: &str = "(set-option :global-declarations true)
(set-logic QF_LIRA)
(declare-fun a () Int)
( assert (> a 0))
(push 1)
(declare-fun b () Int)
(define-fun f () Int 5)
(assert (> a b))
(check-sat)
(reset-assertions)
(assert (< a b))
(assert (> b f))
(check-sat)
(push 1)
(assert (< b 0))
(check-sat)
(pop 1)
(assert (< a 0))
(declare-fun r () Real)
(assert (= (abs r) 1.5))
(check-sat)
";

#[test]
fn reset_assertions_under_global_declarations_as_each_solver() {
    let mut failures = Vec::new();
    for (solver, cmd) in [
        ("z3", &["z3", "-in"][..]),
        ("cvc5", &["cvc5", "--lang", "smt2", "--incremental"][..]),
        ("yices", &["yices-smt2", "--incremental"][..]),
    ] {
        common::require(cmd[0]);
        let want = run_prog(
            cmd[0],
            &cmd[1..],
            GLOBAL_RESET.as_bytes(),
            Duration::from_secs(60),
        )
        .stdout_str();
        let answers: Vec<&str> = want.lines().filter(|l| !l.starts_with("(error")).collect();
        assert!(
            answers.len() >= 3 && answers[..3] == ["sat", "sat", "unsat"],
            "{solver} said {want}"
        );
        let strategies = ["hybrid", "cache", "stack", "fresh", "passthrough"];
        failures.extend(differ(
            solver,
            &strategies,
            &format!("global-reset-{solver}"),
            GLOBAL_RESET,
            &want,
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn scripts_have_both_answers_and_only_the_errors_meant() {
    common::require("z3");
    // What the generator makes, as z3 sees it: both sat and unsat, errors only of the kinds
    // meant.
    let (mut sat, mut unsat) = (0, 0);
    for seed in 1..=12 {
        let text = script(seed, 150);
        let out = run_prog("z3", &["-in"], text.as_bytes(), Duration::from_secs(60)).stdout_str();
        // The only errors meant: names not declared, unsat assumptions after sat.
        for l in out.lines().filter(|l| l.starts_with("(error")) {
            assert!(
                l.contains("unknown constant") || l.contains("unsat assumptions is not available"),
                "seed {seed}: {l}"
            );
        }
        sat += out.lines().filter(|l| *l == "sat").count();
        unsat += out.lines().filter(|l| *l == "unsat").count();
    }
    assert!(sat >= 50 && unsat >= 50, "{sat} sat, {unsat} unsat");
}

/// A client's base-level assertions (it pushes above them) reach the stack backend as the
/// client wrote them, let-bindings and all, so the solver works on the text it would have
/// read alone (`session::stack::verbatim`); one that uses a `define-fun` (the backend has
/// no such macro) or a `:named` annotation goes as smtproxy prints it. Answers as z3's.
#[test]
fn base_assertions_reach_the_stack_as_written() {
    common::require("z3");
    let z3 = smtproxy::driver::spec::find_in_path(
        "z3",
        &std::env::var_os("PATH").unwrap_or_default(),
        None,
    )
    .expect("z3 is installed");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("backend.smt2");
    let wrapper = dir.path().join("z3-recorded");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ntee -a '{}' | exec '{}' \"$@\"\n",
            log.display(),
            z3.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plain = "(assert (let ((?s (bvadd x y))) (and (bvult ?s #x10) (bvugt x #x02) (= (bvand y #x01) #x01))))";
    let with_macro = "(assert (bvult (dbl y) #x08))";
    let named = "(assert (! (bvuge y #x01) :named ny))";
    let script = format!(
        "(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n(declare-fun y () (_ BitVec 8))\n\
         {plain}\n(define-fun dbl ((a (_ BitVec 8))) (_ BitVec 8) (bvmul a #x02))\n{with_macro}\n{named}\n\
         (push 1)\n(assert (= x #x03))\n(check-sat)\n(get-value (x y))\n(pop 1)\n\
         (push 1)\n(assert (= x #x0f))\n(check-sat)\n(pop 1)\n\
         (push 1)\n(assert (= x #x04))\n(check-sat)\n(pop 1)\n"
    );
    let want = run_prog("z3", &["-in"], script.as_bytes(), Duration::from_secs(30)).stdout_str();
    assert_eq!(want.lines().filter(|l| *l == "sat").count(), 2, "{want}");
    let _ = std::fs::remove_file(&log);
    let wrapper = wrapper.display().to_string();
    let got = common::run(
        &[
            "--solver",
            &wrapper,
            "--strategy",
            "stack",
            "--cache",
            "none",
        ],
        script.as_bytes(),
        Duration::from_secs(30),
    )
    .stdout_str();
    assert_eq!(got, want);
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(
        sent.contains(plain),
        "the client's text went as written:\n{sent}"
    );
    assert!(
        sent.contains("(bvmul y #x02)"),
        "the macro's use printed:\n{sent}"
    );
    assert!(!sent.contains(with_macro), "{sent}");
    assert!(!sent.contains(":named ny"), "{sent}");
}
