//! smtproxy takes exactly the commands its solver takes, and with the same meaning, or
//! the client's state and the solver's part.
//!
//! * Applications whose number of arguments the solvers disagree on (`(distinct x)`,
//!   `(< x)`, `(bvadd v)`, `(+ x)`, `(bvsub a b c)`, ...): each solver takes its own set,
//!   with its own meaning (sixteen one-argument cases differ across z3, cvc5 and
//!   yices).
//! * Terms smtproxy finds ill-sorted but a solver takes (z3 reads `(> x b)` with a Bool b
//!   as `(> x (ite b 1 0))`, `(abs r)` of a Real, `(bvxnor a b c)`): the solver is asked
//!   and, taking it, judges the session from there on.
//!
//! * Models: without `:produce-models`, cvc5 refuses get-value and yices answers it
//!   (smtproxy ran cvc5 with `--produce-models`, so passthrough answered it, and refused
//!   it for yices under its own strategies).
//!
//! Each case runs through the solver itself and through smtproxy under hybrid, stack,
//! fresh and passthrough; the replies (every error as `(error)`) must be the same, the
//! answers of later check-sats and the values of a later get-value included.
//!
//! * Values and models smtproxy answers itself (a query asked twice: the second answer
//!   comes from its memo) look as the solver's own: layout and bit-vector literals, values
//!   masked (`values_as_the_solver`).
//! * get-value terms as the solver repeats them: cvc5 as it parsed them, yices from its
//!   tokens, laid out by its pretty printer (long pairs and terms broken where yices breaks
//!   them), byte for byte.

use crate::common;

use common::replies::normalise;
use common::{run_as_client, run_prog, run_under};
use std::time::Duration;

/// Terms tried as `(assert (= T T))`: accepted or refused, the query stays satisfiable.
const TERMS: &[&str] = &[
    "(distinct x)",
    "(distinct a)",
    "(< x)",
    "(>= x)",
    "(< a)",
    "(bvadd v)",
    "(bvmul v)",
    "(bvand v)",
    "(bvxnor v)",
    "(div x)",
    "(/ r)",
    "(/ x)",
    "(+ x)",
    "(* x)",
    "(xor a)",
    "(concat v)",
    "(and a)",
    "(- x)",
    "(bvadd x)",
    "(= x)",
    "(=> a)",
    "(bvsub v)",
    "(bvsub v v v)",
    // Ill-sorted to smtproxy, not to z3.
    "(> x a)",
    "(+ x a)",
    "(abs r)",
    "(bvxnor v v v)",
    "(to_real a)",
];

/// Whose meaning decides the answer: z3's one-argument `bvadd` is its argument, `bvxnor`
/// is `bvnot` and `div` its argument, a Bool in a sum 0 or 1 (unsat when the solver takes
/// them so, sat when it refuses the constraining assertion).
const MEANING: &[&str] = &[
    "(assert (= (bvadd v) #x05)) (assert (= v #x06))",
    "(assert (= (bvxnor v) #x0f)) (assert (= v #x0f))",
    "(assert (= (div x) 3)) (assert (= x 4))",
    "(assert (= (+ x) 3)) (assert (= x 4))",
    // z3: a Bool in arithmetic is 0 or 1.
    "(assert (= (+ x a) 5)) (assert a) (assert (= x 5))",
];

fn scripts(logic: &str, real: &str) -> Vec<String> {
    let head = format!(
        "(set-option :print-success true)\n(set-logic {logic})\n(declare-fun a () Bool)\n\
         (declare-fun x () Int)\n(declare-fun r () {real})\n(declare-fun v () (_ BitVec 8))\n"
    );
    let mut v: Vec<String> = TERMS
        .iter()
        .map(|t| {
            format!(
                "{head}(assert (= {t} {t}))\n(check-sat)\n(assert (= x 3))\n(check-sat)\n\
                 (get-value (x))\n"
            )
        })
        .collect();
    v.extend(MEANING.iter().map(|m| format!("{head}{m}\n(check-sat)\n")));
    v
}

/// How long a script may take, through the solver or through smtproxy.
const T: Duration = Duration::from_secs(30);

/// A solver run directly, as the client would run it.
struct Direct<'a> {
    prog: &'a str,
    args: &'a [&'a str],
}

impl<'a> Direct<'a> {
    /// The solver run as `cmd` (the test fails if its program is not installed).
    fn new(cmd: &'a [&'a str]) -> Direct<'a> {
        let (prog, args) = cmd.split_first().expect("a command");
        common::require(prog);
        Direct { prog, args }
    }

    /// What it prints for `script`.
    fn says(&self, script: &str) -> String {
        self.ends(script).0
    }

    /// What it prints for `script`, and its exit code.
    fn ends(&self, script: &str) -> (String, Option<i32>) {
        let out = run_prog(self.prog, self.args, script.as_bytes(), T);
        (out.stdout_str(), out.status.and_then(|s| s.code()))
    }
}

fn as_the_solver(solver: &str, cmd: &[&str], logic: &str, real: &str) {
    let direct = Direct::new(cmd);
    let mut failures = Vec::new();
    for s in scripts(logic, real) {
        let want = normalise(&direct.says(&s));
        // Six commands, then the case's own replies.
        assert!(want.len() >= 7, "{solver} answered {want:?} to\n{s}");
        for strategy in ["hybrid", "stack", "fresh", "passthrough"] {
            let out = run_under(solver, strategy, s.as_bytes(), T);
            out.assert_no_panic_no_hang(&format!("{solver} {strategy}"));
            let got = normalise(&out.stdout_str());
            // cvc5 1.x may stop reading after an error: compare what it answered.
            let n = want.len();
            if got.get(..n) != Some(&want[..]) {
                failures.push(format!(
                    "{strategy}: {got:?} where {solver} says {want:?} to\n{s}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn takes_what_z3_takes() {
    as_the_solver("z3", &["z3", "-in"], "ALL", "Real");
}

#[test]
fn takes_what_cvc5_takes() {
    as_the_solver(
        "cvc5",
        &["cvc5", "--lang", "smt2", "--incremental"],
        "ALL",
        "Real",
    );
}

/// yices has no logic with bit-vectors, Int and Real: `r` is an Int there.
#[test]
fn takes_what_yices_takes() {
    as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        "QF_AUFBVLIA",
        "Int",
    );
}

/// `hand/scoped-sorts.smt2` (declared sorts and datatypes under push/pop: the stack takes
/// them, started over when they change) gives each solver's own output byte for byte
/// under the strategies that keep a stack (yices stops at the datatype, as it does alone).
#[test]
fn scoped_sorts_and_datatypes_as_each_solver_answers_them() {
    let script = std::fs::read_to_string(common::corpus("hand/scoped-sorts.smt2")).unwrap();
    for (solver, cmd) in [
        ("cvc5", &["cvc5", "--lang", "smt2", "--incremental"][..]),
        ("yices", &["yices-smt2", "--incremental"][..]),
    ] {
        let want = Direct::new(cmd).says(&script);
        assert!(want.lines().count() >= 5, "{solver} answered {want:?}");
        for strategy in ["hybrid", "stack"] {
            let out = run_as_client(solver, strategy, cmd, script.as_bytes(), T);
            out.assert_no_panic_no_hang(&format!("{solver} {strategy}"));
            assert_eq!(out.stdout_str(), want, "{solver} under {strategy}");
        }
    }
}

/// A query asked twice (the second time answered from smtproxy's own memo under hybrid and
/// cache) with get-value and get-model after each check-sat.
fn values_script(terms: &str) -> String {
    let q = format!(
        "(push 1)\n(assert (bvugt a b))\n(assert (= c (= a #x05)))\n\
         (assert (= (bvand w #x0000ffff) #x00001234))\n(assert (bvult t #b011))\n\
         (check-sat)\n(get-value ({terms}))\n(get-model)\n(pop 1)\n"
    );
    format!(
        "(set-option :produce-models true)\n(set-logic QF_BV)\n\
         (declare-fun b () (_ BitVec 8))\n(declare-fun a () (_ BitVec 8))\n\
         (declare-fun w () (_ BitVec 32))\n(declare-fun t () (_ BitVec 3))\n\
         (declare-fun c () Bool)\n{q}{q}"
    )
}

/// `out` with every value masked (a bit-vector literal keeps its radix and length, its
/// digits all 0; a Boolean becomes `bool`: solvers pick different models). With `sort_models`, each
/// get-model's entries are put in name order (z3 lists a model in an order of its own).
fn masked(out: &str, sort_models: bool) -> String {
    let mut s = String::new();
    let mut rest = out;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("#b").or_else(|| rest.strip_prefix("#x")) {
            let n = r.bytes().take_while(|c| c.is_ascii_hexdigit()).count();
            s.push_str(&rest[..2]);
            s.extend(std::iter::repeat_n('0', n));
            rest = &r[n..];
        } else if let Some(r) = rest
            .strip_prefix("true")
            .or_else(|| rest.strip_prefix("false"))
        {
            s.push_str("bool");
            rest = r;
        } else {
            let c = rest.chars().next().expect("not empty");
            s.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !sort_models {
        return s;
    }
    let sx = smtproxy::smt2::lexer::Sexps::parse(&s).expect("replies are s-expressions");
    let mut roots = Vec::new();
    for &r in &sx.roots {
        let entries = sx.list(r).unwrap_or(&[]);
        let is_model = !entries.is_empty()
            && entries.iter().all(|&e| {
                sx.list(e)
                    .and_then(|l| l.first())
                    .is_some_and(|&h| sx.is_symbol(h, "define-fun"))
            });
        if is_model {
            let mut texts: Vec<&str> = entries.iter().map(|&e| sx.source(e)).collect();
            texts.sort_by_key(|t| t.split_whitespace().nth(1).map(str::to_string));
            roots.push(format!("(\n  {}\n)", texts.join("\n  ")));
        } else {
            roots.push(sx.source(r).to_string());
        }
    }
    roots.join("\n")
}

/// get-value and get-model answers smtproxy gives itself (from its memo, from a model it
/// checked) look as the solver's own: its layout, its bit-vector literals (z3: hex when
/// the width is a multiple of 4; cvc5 and yices: binary), its wrapping of a model.
fn values_as_the_solver(solver: &str, cmd: &[&str], terms: &str) {
    let direct = Direct::new(cmd);
    let script = values_script(terms);
    let sort_models = solver == "z3";
    let want = masked(&direct.says(&script), sort_models);
    assert!(want.contains("define-fun"), "{solver} answered {want}");
    for strategy in ["hybrid", "cache", "stack", "passthrough"] {
        let out = run_as_client(solver, strategy, cmd, script.as_bytes(), T);
        out.assert_no_panic_no_hang(&format!("{solver} {strategy}"));
        let got = masked(&out.stdout_str(), sort_models);
        assert_eq!(got, want, "{solver} {strategy}:\n{}", out.stdout_str());
    }
}

#[test]
fn values_and_models_look_as_z3_prints_them() {
    values_as_the_solver("z3", &["z3", "-in"], "c a w t (bvadd a #x01)");
}

/// cvc5 prints the terms of a get-value its own way (`(bvadd a #b00000001)` for
/// `(bvadd a #x01)`), and so does smtproxy for it.
#[test]
fn values_and_models_look_as_cvc5_prints_them() {
    values_as_the_solver(
        "cvc5",
        &["cvc5", "--lang", "smt2", "--incremental"],
        "c a w t (bvadd a #x01)",
    );
}

/// yices and cvc5 list a model in the client's declaration order, functions among the
/// constants (z3 puts the functions last, its constants in an order of its own).
#[test]
fn models_list_functions_where_each_solver_does() {
    let script = "(set-option :produce-models true)\n(set-logic QF_UFBV)\n\
                  (declare-fun c () (_ BitVec 8))\n(declare-fun g ((_ BitVec 8)) (_ BitVec 8))\n\
                  (declare-fun x () (_ BitVec 8))\n(declare-fun f ((_ BitVec 8)) (_ BitVec 8))\n\
                  (declare-fun b () Bool)\n(assert (= (f #x03) #x07))\n(assert (= (g #x01) #x03))\n\
                  (assert (= c (bvadd x #x01)))\n(assert (bvugt x #x02))\n(assert b)\n\
                  (check-sat)\n(get-model)\n";
    for (solver, cmd) in [
        (
            "yices",
            &["yices-smt2", "--incremental", "--smt2-model-format"][..],
        ),
        ("cvc5", &["cvc5", "--incremental"][..]),
    ] {
        let direct = Direct::new(cmd);
        let names = |out: &str| -> Vec<String> {
            out.split("define-fun ")
                .skip(1)
                .filter_map(|e| e.split_whitespace().next().map(str::to_string))
                .collect()
        };
        let want = names(&direct.says(script));
        assert_eq!(want.len(), 5, "{solver} listed {want:?}");
        for strategy in ["hybrid", "cache", "stack", "fresh", "passthrough"] {
            let out = run_as_client(solver, strategy, cmd, script.as_bytes(), T);
            out.assert_no_panic_no_hang(&format!("{solver} {strategy}"));
            assert_eq!(
                names(&out.stdout_str()),
                want,
                "{solver} {strategy}:\n{}",
                out.stdout_str()
            );
        }
    }
}

/// yices run with `--smt2-model-format` prints models as `define-fun`s, in `(model ...)`
/// (without it, `yices_models_in_the_format_the_client_asked_for`).
#[test]
fn values_and_models_look_as_yices_prints_them() {
    values_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental", "--smt2-model-format"],
        "c a w t (bvadd a #x01)",
    );
}

/// Commands a strict solver refuses under the client's logic (cvc5 and yices; z3 takes
/// every theory in every logic), and two it takes, each with what depends on it.
const OUTSIDE_LOGIC: &[(&str, &str)] = &[
    (
        "QF_BV",
        "(declare-fun i () Int)\n(assert (< i 0))\n(assert (> i 0))",
    ),
    // Unsat to smtproxy's parser, which takes Int anywhere; refused by both solvers.
    ("QF_BV", "(assert (< 2 1))"),
    // cvc5 takes bit-vectors in QF_LIA, yices does not.
    (
        "QF_LIA",
        "(declare-fun v () (_ BitVec 8))\n(assert (bvult v #x00))",
    ),
    (
        "QF_BV",
        "(declare-fun m () (Array (_ BitVec 8) (_ BitVec 8)))\n(assert (= (select m #x00) #x01))",
    ),
    // cvc5 wants UF for functions and declared sorts, yices does not.
    (
        "QF_BV",
        "(declare-fun f ((_ BitVec 8)) (_ BitVec 8))\n(assert (not (= (f #x00) (f #x00))))",
    ),
    ("QF_BV", "(declare-sort U 0)\n(declare-fun u () U)"),
    ("QF_LIA", "(declare-fun r () Real)\n(assert (< r 0.0))"),
    // Taken by both: answered as usual.
    (
        "QF_AUFBV",
        "(declare-fun f ((_ BitVec 8)) (_ BitVec 8))\n(assert (not (= (f #x00) (f #x00))))",
    ),
    (
        "QF_LIA",
        "(declare-fun x () Int)\n(assert (< x 0))\n(assert (> x 0))",
    ),
];

/// Each case through the solver and through smtproxy: the same error at the same
/// position, or the same answer, and the session ending where the solver's does (cvc5
/// and yices, reading a script, end it at a parse error), with the solver's exit code.
fn logic_as_the_solver(solver: &str, cmd: &[&str]) {
    let scripts: Vec<String> = OUTSIDE_LOGIC
        .iter()
        .map(|(logic, cmds)| format!("(set-logic {logic})\n{cmds}\n(check-sat)\n"))
        .collect();
    ends_as_the_solver(
        solver,
        cmd,
        &scripts,
        &["hybrid", "cache", "stack", "fresh"],
    );
}

/// Each script through the solver and through smtproxy under each strategy: the same
/// output to the byte and the same exit code.
fn ends_as_the_solver(
    solver: &str,
    cmd: &[&str],
    scripts: &[impl AsRef<str>],
    strategies: &[&str],
) {
    let direct = Direct::new(cmd);
    let mut failures = Vec::new();
    for script in scripts {
        let script = script.as_ref();
        let (want, code) = direct.ends(script);
        assert!(
            !want.trim().is_empty(),
            "{solver} said nothing to\n{script}"
        );
        for strategy in strategies {
            // The client's own flags, as it would pass them to the solver.
            let out = run_as_client(solver, strategy, cmd, script.as_bytes(), T);
            out.assert_no_panic_no_hang(&format!("{solver} {strategy}"));
            let got = out.stdout_str();
            let got_code = out.status.and_then(|s| s.code());
            if got != want || got_code != code {
                failures.push(format!(
                    "{strategy}:\n{got}(exit {got_code:?}) where {solver} says\n{want}(exit {code:?}) to\n{script}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Errors on which cvc5 or yices ends its session (cvc5: parse errors, get-unsat-core,
/// get-proof and get-unsat-assumptions without their options, a pop past the bottom;
/// yices: syntax errors and undefined names), and errors on which it goes on, under every
/// strategy: the solver's words, nothing answered after the end, the solver's exit code.
fn session_end_scripts() -> Vec<String> {
    let heads = [
        "(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n",
        "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n",
    ];
    let bodies = [
        "(assert (bvugt v #x03))",
        "(assert (bvugt x #x05))\n(check-sat)\n(assert (= x y))",
        "(foo)",
        "(get-value (x))",
        "(get-assignment)",
        "(assert false)(check-sat)(get-assignment)",
        "(check-sat)(get-assignment)",
        "(pop 1)",
        "(push 1)(pop 2)",
        "(push 1)(push 1)(pop 3)",
        "(get-unsat-core)",
        "(assert false)(check-sat)(get-proof)",
        "(check-sat)(get-unsat-assumptions)",
    ];
    let mut v = Vec::new();
    for h in heads {
        for b in bodies {
            v.push(format!("{h}{b}\n(check-sat)\n(echo \"after\")\n"));
        }
    }
    v
}

/// Commands smtproxy's own parser refuses, and a stray atom between commands, under
/// every route: each solver's own words at the client's position, and the end of the
/// session where the solver ends it (cvc5 after a parse error, yices after a syntax
/// error). One command per line: cvc5 quotes the client's line in its message.
fn parse_error_scripts() -> Vec<String> {
    let head = "(set-option :produce-models true)\n(set-logic QF_UFLIA)\n\
                (declare-const x Int)\n(declare-const b Bool)\n";
    let bodies = [
        "(declare-const x Int)",
        "(define-fun f ((a Int)) Bool a)",
        "(pop -1)",
        "(push)\n(pop)",
        "(check-sat-assuming (x))",
        "(check-sat-assuming ((and b b)))",
        "(assert x)",
        "(declare-fun g (Int) Int)\n(assert (> (g x x) 0))",
        "(check-sat)\n(get-value ())",
        "(check-sat))",
        "(set-info :status sat)\n(get-info :status)",
        "(set-info :status foo)",
    ];
    bodies
        .iter()
        .map(|b| format!("{head}{b}\n(check-sat)\n(echo \"after\")\n"))
        .collect()
}

#[test]
fn parse_errors_as_z3_words_them() {
    ends_as_the_solver(
        "z3",
        &["z3", "-in"],
        &parse_error_scripts(),
        &SET_OPTION_STRATEGIES,
    );
}

#[test]
fn parse_errors_as_cvc5_words_them() {
    // Not the stray `)`: cvc5 quotes the client's line after its message, which smtproxy
    // does not know there.
    let scripts: Vec<String> = parse_error_scripts()
        .into_iter()
        .filter(|s| !s.contains("(check-sat))"))
        .collect();
    ends_as_the_solver(
        "cvc5",
        &["cvc5", "--incremental"],
        &scripts,
        &SET_OPTION_STRATEGIES,
    );
}

#[test]
fn parse_errors_as_yices_words_them() {
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &parse_error_scripts(),
        &SET_OPTION_STRATEGIES,
    );
}

/// A `:named` label asked for in get-value (z3 and yices echo the label), and integral
/// reals as yices prints them with and without `--smt2-model-format`.
#[test]
fn named_labels_and_integral_reals_as_the_solver_prints_them() {
    let named = "(set-option :produce-models true)\n(set-logic QF_LIA)\n(declare-const x Int)\n\
                 (assert (! (= x 3) :named p))\n(check-sat)\n(get-value (p x))\n\
                 (assert (not p))\n(check-sat)\n";
    let reals = "(set-option :produce-models true)\n(set-logic QF_LRA)\n(declare-const r Real)\n\
                 (declare-const s Real)\n(assert (= r (- 3.0)))\n(assert (= s (/ 7.0 2.0)))\n\
                 (check-sat)\n(get-value (r s (* 2.0 r)))\n";
    let scripts = [named.to_string(), reals.to_string()];
    ends_as_the_solver("z3", &["z3", "-in"], &scripts, &SET_OPTION_STRATEGIES);
    // The passthrough relays its yices' values, and smtproxy runs yices with the flag.
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &scripts,
        &["hybrid", "stack"],
    );
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental", "--smt2-model-format"],
        &scripts,
        &SET_OPTION_STRATEGIES,
    );
}

/// cvc5 repeats each get-value term as it parsed it: `#x` and `(_ bvN W)` as `#b`,
/// decimals and divisions of numerals as its rationals, lets substituted, a `:named` label
/// as the term it names, `|x|` as `x`.
#[test]
fn get_value_terms_as_cvc5_repeats_them() {
    let bv = "(set-option :produce-models true)\n(set-logic QF_ABV)\n\
              (declare-const a (_ BitVec 8))\n(declare-const A (Array (_ BitVec 4) (_ BitVec 8)))\n\
              (assert (! (= a #x0f) :named q))\n(assert (= (select A #x3) (_ bv1 8)))\n\
              (check-sat)\n(get-value (a q (bvadd a #xff) ((_ extract 3 0) a) (select A #x3) \
              (let ((z a)) (bvmul z (_ bv2 8))) |a|))\n";
    let reals = "(set-option :produce-models true)\n(set-logic QF_LIRA)\n(declare-const r Real)\n\
                 (declare-const x Int)\n(assert (! (> x (- 2)) :named |w z|))\n\
                 (assert (= r 2.5))\n(assert (= x 4))\n(check-sat)\n\
                 (get-value (r 2.0 0.5 (+ r 0.25) (/ 4 2) (/ 6 4) (/ r 2) (- 0.5) |w z| \
                 (let ((y 1) (z 2)) (let ((y z)) (+ y z x)))))\n";
    let scripts = [bv.to_string(), reals.to_string()];
    ends_as_the_solver(
        "cvc5",
        &["cvc5", "--incremental"],
        &scripts,
        &["hybrid", "stack", "fresh", "cache"],
    );
}

/// Sessions whose get-values yices re-prints (spacing, comments and line breaks in the
/// terms gone) and lays out past its 160 columns (a pair on two lines, a long term broken
/// where its pretty printer breaks it, one level a line when nested too deep). Every value
/// is forced by the assertions, so the answers can be compared byte for byte.
fn yices_get_value_scripts() -> Vec<String> {
    let concat = "(concat (select a (_ bv0 32)) (concat (select a (_ bv1 32)) (concat (select \
                  a (_ bv2 32)) (concat (select a (_ bv3 32)) (concat (select a (_ bv4 32)) \
                  (select a (_ bv5 32)))))))";
    let mut bv = String::from(
        "(set-option :produce-models true)\n(set-logic QF_ABV)\n\
         (declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))\n\
         (declare-fun |weird x| () (_ BitVec 8))\n(assert (= |weird x| #x2a))\n",
    );
    for i in 0..6 {
        bv.push_str(&format!(
            "(assert (= (select a (_ bv{i} 32)) #x{:02x}))\n",
            17 * i + 3
        ));
    }
    bv.push_str(&format!(
        "(check-sat)\n(get-value ( (select a (_ bv0 32) ) ) )\n(get-value ({concat}))\n\
         (get-value (   |weird x|   (bvadd |weird x| #b00000001)  ( ( _   extract 3 0 ) |weird x| ) \
         (let ((y |weird x|)) (bvmul y y))))\n\
         (get-value (#x01 (_ bv7 8) true (ite   true #x01 #x02) ; a comment\n\
         (bvand |weird x| ; another\n   (select a (_ bv2 32)))))\n\
         (get-value ({concat} |weird x| (concat {concat} {concat}) (! |weird x| :foo \"s t\")))\n\
         (get-value ({}|weird x|{}))\n",
        "(bvnot ".repeat(90),
        ")".repeat(90)
    ));
    let n = "nvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv";
    let big = "68022543218450889998822008219414067407614391501578755266481597821585865482\
               172749618166831186577085597284679349826184932964347435002458949";
    let xs = |k: usize| format!("(+{})", " x".repeat(k));
    let lia = format!(
        "(set-option :produce-models true)\n(set-logic QF_LIA)\n(declare-fun x () Int)\n\
         (declare-fun {n} () Int)\n(declare-fun |q r| () Int)\n(assert (= x (- 942988695358)))\n\
         (assert (= {n} {big}))\n(assert (= |q r| 7))\n(check-sat)\n\
         (get-value ((ite (< x |q r|) (- {n}) |q r|)))\n(get-value ((+ x {n}) x))\n\
         (get-value ({} (* 2 |q r|)))\n(get-value ({}))\n(get-value ({}))\n\
         (get-value (x |q r| (- x) (+ x 1) (* 3 |q r|) {n} (+ {n} {n} {n}) (- 5) 0 12345))\n",
        xs(80),
        xs(79),
        xs(77)
    );
    vec![bv, lia]
}

/// yices repeats each get-value term from the tokens it read, one space apart, and its
/// pretty printer lays the answer out; smtproxy's answers are yices' to the byte.
#[test]
fn get_value_terms_as_yices_prints_them() {
    let direct = Direct::new(&["yices-smt2", "--incremental"]);
    let mut failures = Vec::new();
    for script in yices_get_value_scripts() {
        let want = direct.says(&script);
        assert!(
            want.starts_with("sat\n") && !want.contains("error"),
            "yices said\n{want}"
        );
        for strategy in ["hybrid", "stack", "fresh", "cache"] {
            let out = common::run(
                &[
                    "--solver",
                    "yices-smt2",
                    "--strategy",
                    strategy,
                    "--cache",
                    "none",
                    "--incremental",
                ],
                script.as_bytes(),
                T,
            );
            out.assert_no_panic_no_hang(&format!("yices {strategy}"));
            let got = out.stdout_str();
            if got != want {
                failures.push(format!("{strategy}:\n{got}where yices says\n{want}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// yices runs no declaration, assertion, check or model command before a `set-logic`, nor
/// after a `(reset)` until the next one: each is `no logic set` and the session goes on (a
/// term outside the core theory is its own error first, and ends the session).
#[test]
fn yices_without_a_logic_as_yices() {
    let scripts = [
        "(declare-const x Bool)\n(assert x)\n(check-sat)\n(get-model)\n(get-value (x))\n\
         (set-logic QF_UF)\n(declare-const x Bool)\n(assert x)\n(check-sat)\n",
        "(push 1)\n(pop 1)\n(define-fun f () Bool true)\n(declare-sort U 0)\n(get-value (1))\n\
         (check-sat-assuming (true))\n(get-assertions)\n(echo \"on\")\n(get-value ((> 1 2)))\n",
        "(set-logic QF_UF)\n(declare-const x Bool)\n(assert x)\n(check-sat)\n(reset)\n\
         (declare-const y Bool)\n(check-sat)\n(set-logic QF_UF)\n(declare-const y Bool)\n\
         (assert (not y))\n(check-sat)\n",
        "(assert (= 1 1))\n(declare-fun z () Int)\n(set-logic QF_LIA)\n(declare-fun z () Int)\n\
         (assert (> z 1))\n(check-sat)\n",
    ];
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &scripts,
        &EVERY_STRATEGY,
    );
}

/// yices has no datatypes and no recursive definitions: each such command is a syntax
/// error (`declare-datatypes is not a command`), which ends its session unless it runs
/// `--interactive` (one command a line here: yices then skips the rest of the line).
#[test]
fn yices_lacks_datatypes_and_recursive_definitions() {
    let scripts = [
        "(set-option :produce-models true)\n(set-logic QF_UF)\n\
         (declare-datatypes ((Color 0)) (((red) (green) (blue))))\n(declare-const c Color)\n\
         (declare-const b Bool)\n(assert b)\n(check-sat)\n(get-value (b))\n",
        "(set-logic QF_UF)\n(declare-datatype Pair ((pair (fst Bool) (snd Bool))))\n(check-sat)\n",
        "(set-logic QF_UF)\n(declare-const b Bool)\n(define-fun-rec f ((x Bool)) Bool (f x))\n\
         (assert (not b))\n(check-sat)\n",
    ];
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &scripts,
        &EVERY_STRATEGY,
    );
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental", "--interactive"],
        &scripts,
        &["hybrid", "stack", "passthrough"],
    );
}

const EVERY_STRATEGY: [&str; 5] = ["passthrough", "hybrid", "stack", "fresh", "cache"];

#[test]
fn cvc5_sessions_end_where_cvc5_ends_them() {
    ends_as_the_solver(
        "cvc5",
        &["cvc5", "--incremental"],
        &session_end_scripts(),
        &EVERY_STRATEGY,
    );
}

#[test]
fn yices_sessions_end_where_yices_ends_them() {
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &session_end_scripts(),
        &EVERY_STRATEGY,
    );
}

/// `set-option` in each phase of the client's solver (before and after set-logic, a
/// declaration, an assertion and check, a reset, a logic it refuses) with values of the wrong kind and
/// options the solver fixes at some point: the solver's words, its session going on or
/// ending (cvc5), its exit code (z3: 1 after any error), the option as the solver left it.
fn set_option_scripts() -> Vec<String> {
    let phases = [
        "",
        "(set-logic QF_BV)\n",
        "(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n",
        "(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n(assert (= x #x01))\n(check-sat)\n",
        "(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n(assert (= x #x01))\n(check-sat)\n(reset)\n",
        // A logic the solver does not know (cvc5 ends the session there, yices goes on
        // with its context not fixed).
        "(set-option :print-success true)\n(set-logic FOO)\n",
    ];
    let options = [
        ":produce-models true",
        ":produce-models 1",
        ":produce-models \"true\"",
        ":print-success foo",
        ":print-success |true|",
        ":global-declarations true",
        ":produce-unsat-cores false",
        ":interactive-mode false",
    ];
    let mut v = Vec::new();
    for p in phases {
        for o in options {
            let key = o.split(' ').next().unwrap_or_default();
            v.push(format!(
                "{p}(set-option {o})\n(echo \"after\")\n(get-option {key})\n(get-option :print-success)\n"
            ));
        }
    }
    v
}

const SET_OPTION_STRATEGIES: [&str; 3] = ["passthrough", "hybrid", "stack"];

#[test]
fn set_option_as_z3_takes_it() {
    ends_as_the_solver(
        "z3",
        &["z3", "-in"],
        &set_option_scripts(),
        &SET_OPTION_STRATEGIES,
    );
}

#[test]
fn set_option_as_cvc5_takes_it() {
    ends_as_the_solver(
        "cvc5",
        &["cvc5", "--incremental"],
        &set_option_scripts(),
        &SET_OPTION_STRATEGIES,
    );
}

#[test]
fn set_option_as_yices_takes_it() {
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &set_option_scripts(),
        &SET_OPTION_STRATEGIES,
    );
}

/// yices after a `check-sat-assuming`, where smtproxy's passthrough keeps print-success on
/// in the solver and answers the client's `:print-success` itself: values of the wrong
/// kind refused in yices' words, `|true|` taken.
#[test]
fn print_success_values_as_yices_takes_them_after_check_sat_assuming() {
    let script = "(set-logic QF_BV)\n(declare-fun b () Bool)\n(check-sat-assuming (b))\n\
                  (set-option :print-success foo)\n(echo \"a\")\n\
                  (set-option :print-success |true|)\n(echo \"b\")\n";
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &[script.to_string()],
        &SET_OPTION_STRATEGIES,
    );
}

/// yices run as `yices-smt2 --incremental --interactive`: print-success on from the
/// start, and a session that goes on after a syntax error or an undefined name.
#[test]
fn yices_interactive_sessions_as_yices_runs_them() {
    let mut scripts = session_end_scripts();
    scripts.extend(set_option_scripts());
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental", "--interactive"],
        &scripts,
        &SET_OPTION_STRATEGIES,
    );
}

#[test]
fn refuses_what_cvc5_refuses_in_a_logic() {
    logic_as_the_solver("cvc5", &["cvc5", "--lang", "smt2", "--incremental"]);
}

#[test]
fn refuses_what_yices_refuses_in_a_logic() {
    logic_as_the_solver("yices", &["yices-smt2", "--incremental"]);
}

/// An arithmetic operator the logic's arithmetic lacks, and a non-linear term under a
/// linear logic (pySMT's own tests send these): each solver's error, where it gives it
/// (yices at the assertion, cvc5 at the check-sat, z3 at the assertion with its
/// position), and what the solver says after; beside them the linear and non-linear
/// terms each logic takes.
const ARITH_OUTSIDE_LOGIC: &[(&str, &str)] = &[
    (
        "QF_NIA",
        "(declare-fun a () Int)\n(assert (< 0 a))\n(assert (= (/ 5 a) 2))",
    ),
    (
        "QF_LIA",
        "(declare-fun a () Int)\n(assert (= (to_real a) 1.0))",
    ),
    (
        "QF_LIA",
        "(declare-fun a () Int)\n(declare-fun b () Int)\n(assert (= (* a b) 1))",
    ),
    (
        "QF_UFLIRA",
        "(push 1)\n(declare-fun r () Real)\n(assert (= (* r r) 2.0))",
    ),
    (
        "QF_LRA",
        "(declare-fun r () Real)\n(declare-fun q () Real)\n(assert (= (/ r q) 1.0))",
    ),
    // Taken by all three.
    (
        "QF_LIA",
        "(declare-fun a () Int)\n(assert (= (* (+ 1 2) a) 6))\n(assert (= (div a 2) 1))",
    ),
    ("QF_NIA", "(declare-fun a () Int)\n(assert (= (* a a) 4))"),
];

#[test]
fn refuses_what_each_solver_refuses_in_an_arithmetic() {
    let scripts: Vec<String> = ARITH_OUTSIDE_LOGIC
        .iter()
        .map(|(logic, cmds)| format!("(set-logic {logic})\n{cmds}\n(check-sat)\n"))
        .collect();
    ends_as_each_solver(&scripts, &["hybrid", "cache", "stack", "fresh"]);
}

/// [`ends_as_the_solver`] through z3, cvc5 and yices, each run as its clients run it.
fn ends_as_each_solver(scripts: &[String], strategies: &[&str]) {
    ends_as_the_solver("z3", &["z3", "-in"], scripts, strategies);
    let cvc5 = ["cvc5", "--lang", "smt2", "--incremental"];
    ends_as_the_solver("cvc5", &cvc5, scripts, strategies);
    let yices = ["yices-smt2", "--incremental"];
    ends_as_the_solver("yices", &yices, scripts, strategies);
}

/// Under a logic of reals without integers cvc5 reads every numeral as a real: it
/// repeats `3` as `3.0` and keeps a division of numerals as written, and the value of a
/// numeral is a real (`7.0`, `(- 3.0)`); with integers in the logic, as before.
#[test]
fn get_value_numerals_as_cvc5_reads_them_under_reals() {
    let script = |logic: &str| {
        format!(
            "(set-option :produce-models true)\n(set-logic {logic})\n(declare-const r Real)\n\
             (assert (= r 0.5))\n(check-sat)\n(get-value ((/ 28 5) (/ 4 2) (+ r 3) (- 3) 0.5 \
             (/ 1.5 3) (* 2 r) (/ r 2) 7 (- r 1.0) (/ (- 1) 2) r))\n"
        )
    };
    let scripts: Vec<String> = ["QF_LRA", "QF_NRA", "QF_UFLRA", "QF_LIRA"]
        .iter()
        .map(|l| script(l))
        .collect();
    ends_as_the_solver(
        "cvc5",
        &["cvc5", "--incremental"],
        &scripts,
        &["hybrid", "stack", "fresh", "cache"],
    );
}

/// A function asked for as a whole (pySMT's `get_model` asks each declared symbol):
/// each solver prints it its own way (z3 as an array, cvc5 as a `lambda`, yices as
/// `@fun_5`), so smtproxy falls back to the solver, which runs the sat check again (no
/// value was read before it), and the model the client reads is the solver's own.
#[test]
fn a_function_asked_for_whole_is_the_solvers_own() {
    let script = "(set-option :produce-models true)\n(set-logic QF_UFLRA)\n\
                  (declare-fun h (Real Real) Real)\n(assert (< 0.0 (h 0.0 1.0)))\n(check-sat)\n\
                  (get-value (h))\n(get-value ((h 0.0 1.0)))\n";
    ends_as_each_solver(
        &[script.to_string()],
        &["hybrid", "stack", "fresh", "cache"],
    );
}

/// yices without `--smt2-model-format` prints its model as `(= x 1)` lines in an order
/// of its own, arrays and functions as `@fun_N` blocks, integral reals bare: a get-model
/// right after a sat is the solver's own, under every strategy (passthrough's yices runs
/// without the flag smtproxy gives its own contexts); with the flag, SMT-LIB's format.
#[test]
fn yices_models_in_the_format_the_client_asked_for() {
    let arrays = "(set-logic QF_AUFBV)\n(declare-const x (_ BitVec 8))\n(declare-const b Bool)\n\
                  (declare-fun a () (Array (_ BitVec 8) (_ BitVec 8)))\n\
                  (declare-fun f ((_ BitVec 8)) (_ BitVec 8))\n(assert (bvugt x #x05))\n(assert b)\n\
                  (assert (= (select a x) #x11))\n(assert (= (f x) #x22))\n(check-sat)\n(get-model)\n";
    let reals = "(set-logic QF_LIRA)\n(declare-const r Real)\n(declare-const i Int)\n\
                 (assert (= r 2.0))\n(assert (= i (- 3)))\n(check-sat)\n(get-model)\n\
                 (get-value (r i))\n";
    let scripts = [arrays.to_string(), reals.to_string()];
    let strategies = ["hybrid", "stack", "fresh", "cache", "passthrough"];
    ends_as_the_solver(
        "yices",
        &["yices-smt2", "--incremental"],
        &scripts,
        &strategies,
    );
    let smt2 = ["yices-smt2", "--incremental", "--smt2-model-format"];
    ends_as_the_solver("yices", &smt2, &scripts[1..], &strategies);
}

/// A get-value smtproxy cannot evaluate (`bv2nat`, which it does not model) after values
/// of the same model were read: the solver it falls back to answers it under that model,
/// the constants pinned to the values read (smtproxy's model may not be the solver's).
#[test]
fn a_fall_back_keeps_the_model_the_client_read() {
    let script = "(set-option :produce-models true)\n(declare-const x (_ BitVec 8))\n\
                  (declare-const y (_ BitVec 8))\n(assert (bvugt x #x05))\n(assert (bvult y x))\n\
                  (check-sat)\n(get-value (x y))\n(get-value ((bv2nat x) (bv2nat y)))\n(get-value (x))\n";
    for strategy in ["hybrid", "stack", "fresh", "cache"] {
        let out = run_under("z3", strategy, script.as_bytes(), T);
        out.assert_no_panic_no_hang(strategy);
        // One answer a line, whatever the layout (z3 breaks a pair of values).
        let text = out
            .stdout_str()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let bv = |name: &str| -> u64 {
            let at = text
                .find(&format!("({name} #x"))
                .unwrap_or_else(|| panic!("{name}: {text}"));
            let hex = &text[at + name.len() + 4..at + name.len() + 6];
            u64::from_str_radix(hex, 16).expect("hex")
        };
        let (x, y) = (bv("x"), bv("y"));
        assert!(x > 5 && y < x, "{strategy}: {text}");
        let want = format!(
            "sat ((x #x{x:02x}) (y #x{y:02x})) (((bv2nat x) {x}) ((bv2nat y) {y})) ((x #x{x:02x}))"
        );
        assert_eq!(
            text, want,
            "{strategy}: the values read and the fall-back's differ"
        );
    }
}

/// An error on line 3 under passthrough, and one on line 1 after two commands on that
/// line: the solver's message names the client's line and column (smtproxy's own first
/// command to yices, on line 1, must shift neither). Not the second for cvc5, which gets
/// a sync marker after each command, and whose message quotes the line it read: there
/// the marker's line, not the client's.
#[test]
fn errors_name_the_clients_line_under_passthrough() {
    let z3: (&str, &[&str]) = ("z3", &["z3", "-in"]);
    let cvc5: (&str, &[&str]) = ("cvc5", &["cvc5", "--lang", "smt2", "--incremental"]);
    let yices: (&str, &[&str]) = ("yices", &["yices-smt2", "--incremental"]);
    errors_name_the_clients_line(
        "(set-logic QF_BV)\n(declare-fun v () (_ BitVec 8))\n\
         (assert (bvult v #x00 #x01 qq))\n(check-sat)\n",
        &[z3, cvc5, yices],
    );
    errors_name_the_clients_line(
        "(set-logic QF_LIA) (declare-fun x () Int) (assert (> x y))\n(check-sat)\n",
        &[z3, yices],
    );
}

fn errors_name_the_clients_line(script: &str, cases: &[(&str, &[&str])]) {
    for &(solver, cmd) in cases {
        let direct = Direct::new(cmd);
        let want = direct.says(script);
        let first = want.lines().next().unwrap_or_default().to_string();
        // (cvc5 counts lines its own way: `<stdin>:2.29` here.)
        assert!(first.starts_with("(error"), "{solver}: {want}");
        let out = run_under(solver, "passthrough", script.as_bytes(), T);
        out.assert_no_panic_no_hang(&format!("{solver} passthrough"));
        assert!(
            out.stdout_str().starts_with(&first),
            "{solver} passthrough:\n{}where {solver} says\n{want}",
            out.stdout_str()
        );
    }
}

/// Fractions smtproxy prints itself (the second check-sat, from its memo) as each solver
/// prints them: z3 `(/ 1.0 2.0)` and `(- (/ 9.0 2.0))`, cvc5 and yices `(/ 1 2)` and
/// `(/ (- 9) 2)` (all three: `2.0`, `(- 3.0)`). The values are fixed by the assertions, so
/// the whole output must be the solver's.
#[test]
fn fractions_look_as_each_solver_prints_them() {
    let q = "(push 1)\n(assert (= (* 2.0 x) 1.0))\n(assert (= (* 2.0 y) (- 9.0)))\n\
             (assert (= z (- 3.0)))\n(assert (= w 2.0))\n(check-sat)\n(get-value (x y z w))\n\
             (pop 1)\n";
    let script = format!(
        "(set-option :produce-models true)\n(set-logic QF_LRA)\n(declare-fun x () Real)\n\
         (declare-fun y () Real)\n(declare-fun z () Real)\n(declare-fun w () Real)\n{q}{q}"
    );
    let cases: [(&str, &[&str]); 3] = [
        ("z3", &["z3", "-in"]),
        ("cvc5", &["cvc5", "--lang", "smt2", "--incremental"]),
        // Without the flag yices prints `2` and `(- 3)`: see
        // `named_labels_and_integral_reals_as_the_solver_prints_them`.
        (
            "yices",
            &["yices-smt2", "--incremental", "--smt2-model-format"],
        ),
    ];
    for (solver, cmd) in cases {
        let direct = Direct::new(cmd);
        let want = direct.says(&script);
        assert!(want.contains("(x "), "{solver}: {want}");
        for strategy in ["hybrid", "cache", "stack"] {
            // The client's own flags, as it would pass them to the solver.
            let out = run_as_client(solver, strategy, cmd, script.as_bytes(), T);
            out.assert_no_panic_no_hang(&format!("{solver} {strategy}"));
            assert_eq!(out.stdout_str(), want, "{solver} {strategy}");
        }
    }
}

/// A block of Manticore's shape whose answers are forced (`a` is 5, `b` 6, `c` true),
/// under the names `n`, with `tail` before its check-sat and `after` after its get-value.
fn forced_block(n: [&str; 3], tail: &str, after: &str) -> String {
    let [a, b, c] = n;
    format!(
        "(reset)\n(set-logic QF_BV)\n(set-option :global-decls false)\n\
         (declare-fun {a} () (_ BitVec 8))\n\
         (declare-fun {b} () (_ BitVec 8))(assert (= {b} (bvadd {a} #x01)))\n\
         (declare-fun {c} () Bool)(assert (= {c} (bvult {a} #x06)))\n\
         (assert {c})\n(assert (bvugt {b} #x05))\n{tail}(check-sat)\n(get-value ({a} {b} {c}))\n{after}"
    )
}

/// Blocks repeated after a `(reset)` under fresh names are answered from the trie of
/// blocks (`session::repeat`) without parsing their assertions. Whatever comes after such
/// an answer reads the state as z3's would: a get-model, get-assertions (through the
/// solver, which must be given every assertion, in order), more assertions and a
/// check-sat, scopes, an echo, a get-value of a term smtproxy leaves to the solver; and so does a block that parts from the path late (an
/// extra assertion, an option), or spells its names in ways the trie does not follow
/// (`|quoted|`, a `:named` label). z3's output exactly (values are forced), with the
/// client's print-success on and off, under hybrid and cache; and the repeats are
/// answered from the trie.
#[test]
fn repeated_blocks_answer_as_z3_whatever_follows() {
    let first = forced_block(["a_1", "a_2", "a_3"], "", "");
    let n = |i: usize| {
        [
            format!("a_{}", 3 * i + 1),
            format!("a_{}", 3 * i + 2),
            format!("a_{}", 3 * i + 3),
        ]
    };
    let again = |i: usize, tail: &str, after: &str| {
        let [a, b, c] = n(i);
        let fill = |t: &str| t.replace("{a}", &a).replace("{b}", &b).replace("{c}", &c);
        forced_block([&a, &b, &c], &fill(tail), &fill(after))
    };
    let afters = [
        "(get-assertions)\n",
        "(assert (= {a} #x05))\n(check-sat)\n(get-value ({b}))\n",
        "(assert (bvugt {a} #x20))\n(check-sat)\n(get-value ({a}))\n",
        "(push 1)\n(assert false)\n(check-sat)\n(pop 1)\n(check-sat)\n(get-value ({c}))\n",
        "(echo \"after\")\n(get-value ({a}))\n",
        "(get-info :assertion-stack-levels)\n",
        // A term smtproxy does not model: the session goes to the solver, which must be
        // given every assertion (`a` is 5, so 7 is unsat).
        "(get-value ((bv2nat {a})))\n(assert (= {a} #x07))\n(check-sat)\n",
    ];
    let tails = [
        "(assert (= {a} #x05))\n",
        "(assert (bvugt {a} #x20))\n",
        "(set-option :produce-models true)\n",
        "(assert (! (= {b} #x06) :named fixed))\n",
        "(assert (= |{a}| #x05))\n",
    ];
    let mut scripts = Vec::new();
    for after in afters {
        // Asked twice again: the second repeat follows a path whose answer came from the
        // trie the first time.
        scripts.push(format!(
            "{first}{}{}",
            again(1, "", after),
            again(2, "", after)
        ));
    }
    for tail in tails {
        scripts.push(format!("{first}{}{}", again(1, tail, ""), again(2, "", "")));
    }
    // Names spelt quoted in the repeat, names of theory symbols, and a repeat under
    // print-success.
    scripts.push(format!(
        "{first}{}",
        forced_block(["|a_4|", "a_5", "a_6"], "", "")
    ));
    let shadow = "(define-fun bvult () Bool {c})\n";
    scripts.push(format!(
        "{first}{}{}{}",
        again(1, shadow, ""),
        again(2, shadow, ""),
        again(3, shadow, "")
    ));
    scripts.push(format!(
        "(set-option :print-success true)\n{first}{}{}",
        again(1, "", "(get-value ({a}))\n"),
        again(2, "(assert (= {a} #x05))\n", "")
    ));
    ends_as_the_solver("z3", &["z3", "-in"], &scripts, &["hybrid", "cache"]);
    // The models of a repeat, in z3's layout (z3 orders a model its own way).
    let script = format!("{first}{}", again(1, "", "(get-model)\n"));
    let want = masked(&Direct::new(&["z3", "-in"]).says(&script), true);
    for strategy in ["hybrid", "cache"] {
        let out = common::run_z3(strategy, &["-in"], script.as_bytes(), T);
        assert_eq!(masked(&out.stdout_str(), true), want, "{strategy}");
    }
    // The repeats were answered from the trie, not parsed and planned: all but the first
    // (z3 keeps options across a reset, so the block after the second reset starts from
    // another state than the first block: `:global-decls` is set).
    let script = format!(
        "{first}{}{}{}",
        again(1, "", ""),
        again(2, "", ""),
        again(3, "", "")
    );
    let out = common::run_z3("hybrid", &["--stats", "-in"], script.as_bytes(), T);
    assert_eq!(out.stdout_str().matches("sat\n").count(), 4);
    let s = common::summary(&out.stderr_str());
    assert_eq!(common::field(&s, "block_repeats"), 2, "{s}");
}

/// cvc5 and yices, whose sessions keep no option across a `(reset)`: a repeated block is
/// answered from the trie with each solver's own output (values forced).
#[test]
fn repeated_blocks_answer_as_cvc5_and_yices_do() {
    let first = forced_block(["a_1", "a_2", "a_3"], "", "");
    let script = format!(
        "(set-option :produce-models true)\n{first}{}{}",
        forced_block(["a_4", "a_5", "a_6"], "", "(get-model)\n"),
        forced_block(["a_7", "a_8", "a_9"], "(assert (= a_7 #x04))\n", "")
    )
    .replace(
        "(reset)\n(set-logic",
        "(reset)\n(set-option :produce-models true)\n(set-logic",
    )
    .replace("(set-option :global-decls false)\n", "");
    for (solver, cmd) in [
        ("cvc5", &["cvc5", "--incremental"][..]),
        (
            "yices",
            &["yices-smt2", "--incremental", "--smt2-model-format"][..],
        ),
    ] {
        ends_as_the_solver(solver, cmd, &[&script], &["hybrid", "cache"]);
    }
}

/// Random sessions of blocks repeated under fresh names, some parting from their path
/// (an extra assertion), with commands inside a block or after its answer that read or
/// change the state (get-assertions, push and pop, echo, get-info, another check-sat,
/// more assertions, a `:named` label, get-values): z3's output and exit code, values
/// masked, under hybrid; and some of the repeats answered from the trie of blocks.
/// Seeded, so the sessions are the same on every machine.
#[test]
fn random_repeated_blocks_answer_as_z3() {
    let z3 = Direct::new(&["z3", "-in"]);
    let conds = [
        "(bvult {x} #x{k})",
        "(bvugt {x} #x{k})",
        "(= (bvand {x} #x0f) #x0{j})",
        "(not (= {x} {y}))",
        "(bvule (bvadd {x} {y}) #x{k})",
    ];
    let extras = [
        "(get-assertions)",
        "(echo \"e\")",
        "(push 1)",
        "(pop 1)",
        "(check-sat)",
        "(assert (= {x} #x{k}))",
        "(set-option :produce-models true)",
        "(get-info :assertion-stack-levels)",
        "(get-value ({x}))",
        "(assert (! (bvult {x} #x{k}) :named nm{j}))",
    ];
    let mut rng = common::rng::Rng(0x7e9e_a7ed);
    let mut repeats = 0;
    let mut renamed = 0;
    let mut failures = Vec::new();
    for _ in 0..24 {
        let mut fresh = 0;
        let hex = |rng: &mut common::rng::Rng| format!("{:02x}", rng.below(256));
        let base: Vec<(&str, String, u64)> = (0..2 + rng.below(4))
            .map(|_| (*rng.pick(&conds), hex(&mut rng), rng.below(16)))
            .collect();
        let fill = |t: &str, n: &[String], k: &str, j: u64| {
            t.replace("{x}", &n[0])
                .replace("{y}", &n[1])
                .replace("{k}", k)
                .replace("{j}", &format!("{j:x}"))
        };
        let mut s = String::new();
        if rng.below(3) == 0 {
            s.push_str("(set-option :print-success true)\n");
        }
        for _ in 0..2 + rng.below(4) {
            let mut cs = base.clone();
            if rng.below(5) < 2 {
                cs.push((*rng.pick(&conds), hex(&mut rng), rng.below(16)));
            }
            let n = fresh_bv8_block(&mut s, &mut fresh);
            for (c, k, j) in &cs {
                s.push_str(&format!("(assert {})\n", fill(c, &n, k, *j)));
                if rng.below(10) == 0 {
                    let e = rng.pick(&extras);
                    let other = [n[2].clone(), n[0].clone()];
                    let e = fill(e, &other, &hex(&mut rng), rng.below(16));
                    s.push_str(&format!("{e}\n"));
                }
            }
            s.push_str("(check-sat)\n");
            if rng.below(5) < 4 {
                s.push_str(&format!("(get-value ({} {}))\n", n[0], n[1]));
            }
            if rng.below(10) < 3 {
                let e = rng.pick(&extras);
                let e = fill(e, &n, &hex(&mut rng), rng.below(16));
                s.push_str(&format!("{e}\n(check-sat)\n"));
            }
        }
        let (want, code) = z3.ends(&s);
        let out = common::run(
            &[
                "--solver",
                "z3",
                "--strategy",
                "hybrid",
                "--cache",
                "none",
                "--stats",
                "-in",
            ],
            s.as_bytes(),
            T,
        );
        out.assert_no_panic_no_hang("hybrid");
        let got_code = out.status.and_then(|st| st.code());
        if masked(&out.stdout_str(), false) != masked(&want, false) || got_code != code {
            failures.push(format!(
                "{}(exit {got_code:?}) where z3 says\n{want}(exit {code:?}) to\n{s}",
                out.stdout_str()
            ));
        }
        let sum = common::summary(&out.stderr_str());
        repeats += common::field(&sum, "block_repeats");
        renamed += common::field(&sum, "renamed_assertions");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(repeats >= 5, "{repeats} answers from the trie");
    // Blocks that part from their path have their held assertions renamed, not parsed.
    assert!(renamed >= 5, "{renamed} assertions renamed");
}

/// Begins a block as Manticore does: a reset, the logic and options again, and three 8-bit
/// constants under names never used before in the session (`a_{fresh}` on); their names.
fn fresh_bv8_block(s: &mut String, fresh: &mut u64) -> Vec<String> {
    let n: Vec<String> = (0..3)
        .map(|_| {
            *fresh += 1;
            format!("a_{fresh}")
        })
        .collect();
    s.push_str("(reset)\n(set-logic QF_BV)\n(set-option :global-decls false)\n");
    for v in &n {
        s.push_str(&format!("(declare-fun {v} () (_ BitVec 8))\n"));
    }
    n
}

/// A session of reset-separated queries under fresh names, as Manticore sends them:
/// `blocks` queries over `seed`'s conditions, each a few assertions on three 8-bit
/// constants, a check-sat and a get-value.
fn fresh_name_session(seed: u64, blocks: usize) -> String {
    let conds = [
        "(bvult {x} #x{k})",
        "(bvugt {y} #x{k})",
        "(= (bvand {x} #x0f) #x0{j})",
        "(not (= {x} {z}))",
        "(bvule (bvadd {y} {z}) #x{k})",
    ];
    let mut rng = common::rng::Rng(seed);
    let mut s = String::new();
    let mut fresh = 0;
    let mut path: Vec<String> = Vec::new();
    for _ in 0..blocks {
        // A path grows by a condition, or goes back to a shorter prefix.
        if path.len() > 4 || rng.below(4) == 0 {
            path.truncate(rng.below(path.len() as u64 + 1) as usize);
        }
        let c = rng.pick(&conds);
        path.push(
            c.replace("{k}", &format!("{:02x}", rng.below(256)))
                .replace("{j}", &format!("{:x}", rng.below(16))),
        );
        let n = fresh_bv8_block(&mut s, &mut fresh);
        for c in &path {
            let c = c
                .replace("{x}", &n[0])
                .replace("{y}", &n[1])
                .replace("{z}", &n[2]);
            s.push_str(&format!("(assert {c})\n"));
        }
        s.push_str(&format!("(check-sat)\n(get-value ({} {}))\n", n[0], n[1]));
    }
    s
}

/// The trie of repeated blocks is kept beside the disk store: a second run of a session
/// follows the first run's paths from its first query, and answers as z3 does (values
/// masked, each checked by z3 in the first run's differential). So does a session that
/// shares only some paths with the first; a damaged trie file, or one made under other
/// solver parameters, is not used, and the answers are z3's still.
#[test]
fn a_trie_kept_beside_the_store_answers_the_next_run_as_z3() {
    let z3 = Direct::new(&["z3", "-in"]);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let trie = dir.path().join("s.db.trie");
    let store_arg = store.to_str().unwrap().to_string();
    let run = |session: &str, extra: &[&str]| {
        let mut args = vec!["--solver", "z3", "--cache", &store_arg, "--stats"];
        args.extend_from_slice(extra);
        args.push("-in");
        let out = common::run(&args, session.as_bytes(), T);
        out.assert_no_panic_no_hang("trie run");
        let (want, _) = z3.ends(session);
        assert_eq!(
            masked(&out.stdout_str(), false),
            masked(&want, false),
            "{extra:?} on\n{session}"
        );
        common::summary(&out.stderr_str())
    };
    let first = fresh_name_session(0x5eed_7e1e, 60);
    let s1 = run(&first, &[]);
    assert_eq!(common::field(&s1, "trie_loaded_nodes"), 0);
    assert!(trie.exists(), "no trie written at the end of the session");

    let s2 = run(&first, &[]);
    assert!(common::field(&s2, "trie_loaded_nodes") > 60);
    // Every query is on a path the first run answered (the first block's root is the
    // session's start, not yet the options kept across its resets).
    assert!(
        common::field(&s2, "block_repeats") >= 58,
        "{} of 60 from the trie",
        common::field(&s2, "block_repeats")
    );
    assert_eq!(common::field(&s2, "solver_checks"), 0);

    // Another session, some of whose paths the trie holds.
    let other = fresh_name_session(0x0dd_5eed, 60);
    let s3 = run(&other, &[]);
    assert!(common::field(&s3, "trie_loaded_nodes") > 60);

    // Damaged: flip a byte of the payload; it is not loaded, and replaced at the end.
    let mut bytes = std::fs::read(&trie).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x20;
    std::fs::write(&trie, &bytes).unwrap();
    let s4 = run(&first, &[]);
    assert_eq!(common::field(&s4, "trie_loaded_nodes"), 0);
    assert_ne!(
        std::fs::read(&trie).unwrap(),
        bytes,
        "the damaged file stayed"
    );

    // Made under other solver flags: not this session's. (A deadline, `-t:`, is not one
    // of them: an answer kept is a verdict, never an unknown a deadline could change.)
    let s5 = run(&first, &["smt.random_seed=3"]);
    assert_eq!(common::field(&s5, "trie_loaded_nodes"), 0);
}
