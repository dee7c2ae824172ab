//! Small components decided by enumeration (`query::enumerate`) against the real z3: random
//! components over a 3-bit constant, a Bool and two 2-bit array cells (8 bits in all, the
//! most the enumeration takes) must get z3's answer, and every model it finds must be one
//! z3 accepts. Division by zero, shifts past the width, extracts and extensions included.
//! Components of 14 bits are only guessed: a guess must be sat in z3, with its model
//! accepted, and is never unsat. Components of KLEE's words (32-bit reads of four bytes,
//! 16-bit ones, a 64-bit constant) compared with literals, decided by the words' bounds
//! (`enumerate::by_bounds`), must get z3's answer, a model z3 accepts with a sat; and its
//! refutations of random components (the intervals of every operator) must have no model.

use crate::common;

use common::rng::Rng;
use common::z3pipe::Z3Pipe;
use smtproxy::query::enumerate::{by_bounds, Decided, Small};
use smtproxy::query::eval::Model;
use smtproxy::query::value::Value;
use smtproxy::smt2::command::Command;
use smtproxy::smt2::parser::parse_command;
use smtproxy::smt2::printer::{print_term, BackendNames};
use smtproxy::term::signature::Signature;
use smtproxy::term::{TermId, TermStore};

const DECLS: &str = "(declare-fun x () (_ BitVec 3))
(declare-fun p () Bool)
(declare-fun a () (Array (_ BitVec 8) (_ BitVec 2)))";

/// z3 with the declarations, each script checked in a scope of its own.
struct Z3(Z3Pipe);
impl Z3 {
    fn new(decls: &str) -> Z3 {
        let mut z3 = Z3Pipe::new();
        z3.check(&format!("(set-logic QF_ABV)\n{decls}\n(check-sat)"));
        Z3(z3)
    }
    fn check(&mut self, asserts: &str) -> String {
        self.0
            .check(&format!("(push 1)\n{asserts}(check-sat)\n(pop 1)"))
    }
}

/// Bit-vector leaves by width: (width, term).
type Leaves<'a> = &'a [(u32, &'a str)];

/// The leaves of [`DECLS`]: 8 bits with `p`, so every component is enumerated.
const SMALL: Leaves<'static> = &[
    (3, "x"),
    (3, "x"),
    (2, "(select a #x00)"),
    (2, "(select a #x01)"),
];

/// A random term of width `w` over the leaves `l`, `p` and literals.
fn gen_bv(rng: &mut Rng, w: u32, depth: u32, l: Leaves) -> String {
    if depth == 0 || rng.below(5) == 0 {
        let mine: Vec<&str> = l
            .iter()
            .filter(|(lw, _)| *lw == w)
            .map(|(_, t)| *t)
            .collect();
        if !mine.is_empty() && rng.below(3) < 2 {
            return mine[rng.below(mine.len() as u64) as usize].to_string();
        }
        return format!("(_ bv{} {w})", rng.below(1 << w));
    }
    let d = depth - 1;
    match rng.below(9) {
        0 => format!(
            "({} {})",
            rng.pick(&["bvnot", "bvneg"]),
            gen_bv(rng, w, d, l)
        ),
        1..=3 => {
            let op = rng.pick(&[
                "bvand", "bvor", "bvxor", "bvadd", "bvsub", "bvmul", "bvudiv", "bvurem", "bvsdiv",
                "bvsrem", "bvsmod", "bvshl", "bvlshr", "bvashr",
            ]);
            format!("({op} {} {})", gen_bv(rng, w, d, l), gen_bv(rng, w, d, l))
        }
        4 => format!(
            "(ite {} {} {})",
            gen_bool(rng, d, l),
            gen_bv(rng, w, d, l),
            gen_bv(rng, w, d, l)
        ),
        5 => {
            let sw = 3 + rng.below(3) as u32;
            let j = rng.below(u64::from((sw + 1).saturating_sub(w)).max(1)) as u32;
            if j + w > sw {
                return gen_bv(rng, w, d, l);
            }
            format!("((_ extract {} {j}) {})", j + w - 1, gen_bv(rng, sw, d, l))
        }
        6 if w >= 2 => {
            let w1 = 1 + rng.below(u64::from(w - 1)) as u32;
            format!(
                "(concat {} {})",
                gen_bv(rng, w1, d, l),
                gen_bv(rng, w - w1, d, l)
            )
        }
        7 if w >= 2 => {
            let k = 1 + rng.below(u64::from(w - 1)) as u32;
            let ext = rng.pick(&["zero_extend", "sign_extend"]);
            format!("((_ {ext} {k}) {})", gen_bv(rng, w - k, d, l))
        }
        _ => format!("(bvadd {} {})", gen_bv(rng, w, d, l), gen_bv(rng, w, d, l)),
    }
}

fn gen_bool(rng: &mut Rng, depth: u32, l: Leaves) -> String {
    if depth == 0 || rng.below(6) == 0 {
        return rng.pick(&["p", "(not p)", "true"]).to_string();
    }
    let d = depth - 1;
    match rng.below(5) {
        0..=2 => {
            let w = 1 + rng.below(5) as u32;
            let op = rng.pick(&["bvult", "bvule", "bvslt", "bvsge", "=", "distinct", "bvugt"]);
            format!("({op} {} {})", gen_bv(rng, w, d, l), gen_bv(rng, w, d, l))
        }
        3 => format!("(not {})", gen_bool(rng, d, l)),
        _ => {
            let op = rng.pick(&["and", "or", "xor", "=>"]);
            format!("({op} {} {})", gen_bool(rng, d, l), gen_bool(rng, d, l))
        }
    }
}

/// The model as z3 assertions on the atoms.
fn model_asserts(store: &mut TermStore, m: &Model) -> String {
    let mut s = String::new();
    for (leaf, v) in m.iter().map(|(l, v)| (l, v.clone())).collect::<Vec<_>>() {
        let sort = store.sort(leaf);
        let t = v.to_term(store, sort);
        s.push_str(&format!(
            "(assert (= {} {}))\n",
            print_term(store, leaf, &BackendNames),
            print_term(store, t, &BackendNames)
        ));
    }
    s
}

/// z3 finds the assertions `text` satisfiable with the model `m` asserted too.
fn z3_accepts(z3: &mut Z3, store: &mut TermStore, text: &str, m: &Model, case: u32) {
    let with_model = format!("{text}{}", model_asserts(store, m));
    assert_eq!(
        z3.check(&with_model),
        "sat",
        "case {case}: z3 refutes the model:\n{with_model}"
    );
}

/// A random component of one to four assertions over `leaves`, declared by `decls` in a
/// fresh store: its text, its store and its conjuncts.
fn random_component(
    rng: &mut Rng,
    decls: &str,
    leaves: Leaves,
) -> (String, TermStore, Vec<TermId>) {
    let mut store = TermStore::new();
    let mut sig = Signature::default();
    for d in decls.lines() {
        let c = parse_command(&mut store, &sig, d).expect("declaration");
        c.declare_in(&mut store, &mut sig);
    }
    let n = 1 + rng.below(4);
    let mut text = String::new();
    let mut conj: Vec<TermId> = Vec::new();
    for _ in 0..n {
        let a = format!("(assert {})\n", gen_bool(rng, 4, leaves));
        match parse_command(&mut store, &sig, a.trim()) {
            Ok(Command::Assert(t, _)) => conj.push(t),
            other => panic!("{a} parsed as {other:?}"),
        }
        text.push_str(&a);
    }
    (text, store, conj)
}

#[test]
fn random_small_components_get_z3s_answer() {
    let mut z3 = Z3::new(DECLS);
    let mut rng = Rng(0x5DEECE66D);
    let (mut sat, mut unsat) = (0, 0);
    for case in 0..400 {
        let (text, mut store, conj) = random_component(&mut rng, DECLS, SMALL);
        let small = Small::of(&store, &conj)
            .unwrap_or_else(|| panic!("case {case}: 8 bits not taken:\n{text}"));
        assert!(small.is_exhaustive(), "case {case}: 8 bits only guessed");
        let want = z3.check(&text);
        match small.decide(&store, &conj, &|_| None) {
            Some(Decided::Unsat) => {
                assert_eq!(
                    want, "unsat",
                    "case {case}: enumeration said unsat:\n{text}"
                );
                unsat += 1;
            }
            Some(Decided::Sat(m)) => {
                assert_eq!(want, "sat", "case {case}: enumeration said sat:\n{text}");
                z3_accepts(&mut z3, &mut store, &text, &m, case);
                sat += 1;
            }
            None => panic!("case {case}: not decided:\n{text}"),
        }
    }
    eprintln!("enumerate_z3: {sat} sat, {unsat} unsat");
    assert!(
        sat >= 50 && unsat >= 50,
        "{sat} sat, {unsat} unsat: both answers tested"
    );
}

/// 14 bits of atoms: a 5-bit constant, a Bool and two 4-bit cells.
const WIDE: &str = "(declare-fun x () (_ BitVec 5))
(declare-fun p () Bool)
(declare-fun a () (Array (_ BitVec 8) (_ BitVec 4)))";
const WIDE_LEAVES: Leaves<'static> = &[
    (5, "x"),
    (5, "x"),
    (4, "(select a #x00)"),
    (4, "(select a #x01)"),
];

/// Components with more bits than are enumerated are only guessed: a guess is sat in z3
/// with its model accepted, and never unsat, whether the rounds or the local search found
/// it. (Random terms are met by the guessed values far less often than KLEE's: about a
/// third of z3's sat answers are guessed.)
#[test]
fn random_wider_components_guessed_sat_as_z3() {
    let mut z3 = Z3::new(WIDE);
    let mut rng = Rng(0x2545F4914F6CDD1D);
    let (mut guessed, mut searched, mut sat, mut unsat) = (0, 0, 0, 0);
    for case in 0..400 {
        let (text, mut store, conj) = random_component(&mut rng, WIDE, WIDE_LEAVES);
        let Some(small) = Small::of(&store, &conj) else {
            panic!("case {case}: not in the fragment:\n{text}");
        };
        let want = z3.check(&text);
        // As hybrid asks: the guess's rounds, then the local search.
        let by_rounds = small.decide(&store, &conj, &|_| None);
        let rounds_failed = by_rounds.is_none();
        let decided = by_rounds.or_else(|| small.search(&store, &conj, &|_| None));
        searched += u32::from(rounds_failed && decided.is_some());
        match decided {
            Some(Decided::Unsat) if !small.is_exhaustive() => {
                panic!("case {case}: a guess said unsat:\n{text}")
            }
            Some(Decided::Unsat) => assert_eq!(want, "unsat", "case {case}:\n{text}"),
            Some(Decided::Sat(m)) => {
                assert_eq!(want, "sat", "case {case}: guessed sat:\n{text}");
                z3_accepts(&mut z3, &mut store, &text, &m, case);
                guessed += u32::from(!small.is_exhaustive());
            }
            None => assert!(!small.is_exhaustive(), "case {case}"),
        }
        sat += u32::from(want == "sat");
        unsat += u32::from(want == "unsat");
    }
    eprintln!(
        "enumerate_z3 wide: {guessed} guessed of {sat} sat ({searched} by the search), {unsat} unsat"
    );
    assert!(
        unsat >= 50 && guessed >= 30 && searched >= 5,
        "{guessed} guessed of {sat} sat ({searched} by the search), {unsat} unsat"
    );
}

#[test]
fn model_values_are_values_of_their_sorts() {
    // A cell read compared with a literal: the model's array has the cell, the rest of the
    // array at the element sort's default.
    let mut store = TermStore::new();
    let mut sig = Signature::default();
    for d in DECLS.lines() {
        let c = parse_command(&mut store, &sig, d).expect("declaration");
        c.declare_in(&mut store, &mut sig);
    }
    let Ok(Command::Assert(t, _)) =
        parse_command(&mut store, &sig, "(assert (= (select a #x01) #b10))")
    else {
        panic!("parse");
    };
    let small = Small::of(&store, &[t]).expect("small");
    let Some(Decided::Sat(m)) = small.decide(&store, &[t], &|_| None) else {
        panic!("sat");
    };
    let (b8, b2) = (store.sorts.bv(8), store.sorts.bv(2));
    let arr_sort = store.sorts.array(b8, b2);
    let a = store.mk_const("a", arr_sort);
    let Some(Value::Array(v)) = m.get(a) else {
        panic!("array value");
    };
    assert_eq!(v.select(&Value::bv_u64(8, 1)), &Value::bv_u64(2, 2));
    assert_eq!(v.default_value(), &Value::bv_u64(2, 0));
}

/// KLEE's words: four byte reads, two of them again as a 16-bit word (the two share
/// atoms), and a 64-bit constant.
const WORDS: &str = "(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))
(declare-fun b () (Array (_ BitVec 32) (_ BitVec 8)))
(declare-fun q () (_ BitVec 64))
(declare-fun p () Bool)";
const WORD_TERMS: &[(u32, &str)] = &[
    (32, "(concat (select a #x00000003) (concat (select a #x00000002) (concat (select a #x00000001) (select a #x00000000))))"),
    (16, "(concat (select b #x00000001) (select b #x00000000))"),
    (8, "(select b #x00000000)"),
    (64, "q"),
];

/// A comparison of a word, seen through a transformation or two, with a literal near the
/// word's interesting values (small, near the sign bit, near the top).
fn gen_comparison(rng: &mut Rng) -> String {
    let (mut w, word) = WORD_TERMS[rng.below(WORD_TERMS.len() as u64) as usize];
    let mut t = word.to_string();
    let near = |rng: &mut Rng, w: u32| -> u64 {
        let top = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let base = match rng.below(4) {
            0 => 0,
            1 => 1u64 << (w - 1),
            2 => top,
            _ => rng.below(1 << 20),
        };
        base.wrapping_add(rng.below(9)).wrapping_sub(4) & top
    };
    for _ in 0..rng.below(3) {
        t = match rng.below(5) {
            0 if w <= 56 => {
                w += 8;
                format!("((_ zero_extend 8) {t})")
            }
            1 if w <= 56 => {
                w += 8;
                format!("((_ sign_extend 8) {t})")
            }
            2 => format!("(bvadd {} {t})", lit(w, near(rng, w))),
            3 => format!("(bvsub {t} {})", lit(w, near(rng, w))),
            _ => t,
        };
    }
    let op = rng.pick(&[
        "=", "distinct", "bvult", "bvule", "bvugt", "bvuge", "bvslt", "bvsle", "bvsgt", "bvsge",
    ]);
    let k = lit(w, near(rng, w));
    let cmp = if rng.below(2) == 0 {
        format!("({op} {t} {k})")
    } else {
        format!("({op} {k} {t})")
    };
    match rng.below(4) {
        0 => format!("(not {cmp})"),
        1 => format!("(= false {cmp})"),
        _ => cmp,
    }
}

fn lit(w: u32, v: u64) -> String {
    format!("(_ bv{v} {w})")
}

/// The words' bounds decide components of comparisons as z3 does: an unsat only where z3
/// says unsat (another conjunct, no comparison, may sit beside them), a sat with a model z3
/// accepts.
#[test]
fn random_comparisons_of_words_decided_by_bounds_as_z3() {
    let mut z3 = Z3::new(WORDS);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut sat, mut unsat, mut left) = (0, 0, 0);
    for case in 0..600 {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        for d in WORDS.lines() {
            let c = parse_command(&mut store, &sig, d).expect("declaration");
            c.declare_in(&mut store, &mut sig);
        }
        let mut text = String::new();
        let mut conj: Vec<TermId> = Vec::new();
        for _ in 0..2 + rng.below(5) {
            let c = if rng.below(8) == 0 {
                "(= p (bvult (bvmul q q) #x0000000000000005))".to_string()
            } else {
                gen_comparison(&mut rng)
            };
            let a = format!("(assert {c})\n");
            match parse_command(&mut store, &sig, a.trim()) {
                Ok(Command::Assert(t, _)) => conj.push(t),
                other => panic!("{a} parsed as {other:?}"),
            }
            text.push_str(&a);
        }
        let want = z3.check(&text);
        match by_bounds(&store, &conj, &|_| None) {
            Some(Decided::Unsat) => {
                assert_eq!(want, "unsat", "case {case}: bounds said unsat:\n{text}");
                unsat += 1;
            }
            Some(Decided::Sat(m)) => {
                assert_eq!(want, "sat", "case {case}: bounds said sat:\n{text}");
                z3_accepts(&mut z3, &mut store, &text, &m, case);
                sat += 1;
            }
            None => left += 1,
        }
    }
    eprintln!("enumerate_z3 bounds: {sat} sat, {unsat} unsat, {left} left to the solver");
    assert!(
        sat >= 50 && unsat >= 50,
        "{sat} sat, {unsat} unsat, {left} left: both answers tested"
    );
}

/// The words' bounds and the intervals beside them (`by_bounds`) never contradict the
/// exhaustive decision on random components of 8 bits (every operator the generator
/// makes: `ite`, extracts, extensions, division, shifts), nor z3 on components of 14
/// bits: an `unsat` only where there is no model, a `sat` with one.
#[test]
fn random_components_refuted_by_bounds_only_when_unsat() {
    let mut rng = Rng(0x0BAD_5EED_F00D);
    let (mut unsat, mut sat) = (0, 0);
    for case in 0..3000 {
        let (text, store, conj) = random_component(&mut rng, DECLS, SMALL);
        let Some(d) = by_bounds(&store, &conj, &|_| None) else {
            continue;
        };
        let small = Small::of(&store, &conj).expect("8 bits");
        let exact = small.decide(&store, &conj, &|_| None);
        match (d, exact) {
            (Decided::Unsat, Some(Decided::Unsat)) => unsat += 1,
            (Decided::Sat(_), Some(Decided::Sat(_))) => sat += 1,
            (d, e) => panic!("case {case}: bounds {d:?}, every assignment {e:?}:\n{text}"),
        }
    }
    let mut z3 = Z3::new(WIDE);
    let mut wide_unsat = 0;
    for case in 0..600 {
        let (text, store, conj) = random_component(&mut rng, WIDE, WIDE_LEAVES);
        if let Some(Decided::Unsat) = by_bounds(&store, &conj, &|_| None) {
            assert_eq!(
                z3.check(&text),
                "unsat",
                "case {case}: bounds said unsat:\n{text}"
            );
            wide_unsat += 1;
        }
    }
    eprintln!("enumerate_z3 bounds on random terms: {unsat} unsat, {sat} sat of 3000 small; {wide_unsat} unsat of 600 wide");
    assert!(
        unsat >= 30 && wide_unsat >= 5,
        "{unsat} small, {wide_unsat} wide refuted: exercised"
    );
}
