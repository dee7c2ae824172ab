//! Small components decided by enumeration (`query::enumerate`) against the real z3: random
//! components over a 3-bit constant, a Bool and two 2-bit array cells (8 bits in all, the
//! most the enumeration takes) must get z3's answer, and every model it finds must be one
//! z3 accepts. Division by zero, shifts past the width, extracts and extensions included.

mod common;

use common::rng::Rng;
use common::z3pipe::Z3Pipe;
use smtproxy::query::enumerate::{Decided, Small};
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
    fn new() -> Z3 {
        let mut z3 = Z3Pipe::new();
        z3.check(&format!("(set-logic QF_ABV)\n{DECLS}\n(check-sat)"));
        Z3(z3)
    }
    fn check(&mut self, asserts: &str) -> String {
        self.0
            .check(&format!("(push 1)\n{asserts}(check-sat)\n(pop 1)"))
    }
}

/// A random term of width `w` over `x`, the two cells, `p` and literals.
fn gen_bv(rng: &mut Rng, w: u32, depth: u32) -> String {
    if depth == 0 || rng.below(5) == 0 {
        return match (w, rng.below(3)) {
            (3, 0 | 1) => "x".into(),
            (2, 0) => "(select a #x00)".into(),
            (2, 1) => "(select a #x01)".into(),
            _ => format!("(_ bv{} {w})", rng.below(1 << w)),
        };
    }
    let d = depth - 1;
    match rng.below(9) {
        0 => format!("({} {})", rng.pick(&["bvnot", "bvneg"]), gen_bv(rng, w, d)),
        1..=3 => {
            let op = rng.pick(&[
                "bvand", "bvor", "bvxor", "bvadd", "bvsub", "bvmul", "bvudiv", "bvurem", "bvsdiv",
                "bvsrem", "bvsmod", "bvshl", "bvlshr", "bvashr",
            ]);
            format!("({op} {} {})", gen_bv(rng, w, d), gen_bv(rng, w, d))
        }
        4 => format!(
            "(ite {} {} {})",
            gen_bool(rng, d),
            gen_bv(rng, w, d),
            gen_bv(rng, w, d)
        ),
        5 => {
            let sw = 3 + rng.below(3) as u32;
            let j = rng.below(u64::from(sw - w + 1).max(1)) as u32;
            if j + w > sw {
                return gen_bv(rng, w, d);
            }
            format!("((_ extract {} {j}) {})", j + w - 1, gen_bv(rng, sw, d))
        }
        6 if w >= 2 => {
            let w1 = 1 + rng.below(u64::from(w - 1)) as u32;
            format!("(concat {} {})", gen_bv(rng, w1, d), gen_bv(rng, w - w1, d))
        }
        7 if w >= 2 => {
            let k = 1 + rng.below(u64::from(w - 1)) as u32;
            let ext = rng.pick(&["zero_extend", "sign_extend"]);
            format!("((_ {ext} {k}) {})", gen_bv(rng, w - k, d))
        }
        _ => format!("(bvadd {} {})", gen_bv(rng, w, d), gen_bv(rng, w, d)),
    }
}

fn gen_bool(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.below(6) == 0 {
        return rng.pick(&["p", "(not p)", "true"]).to_string();
    }
    let d = depth - 1;
    match rng.below(5) {
        0..=2 => {
            let w = 1 + rng.below(5) as u32;
            let op = rng.pick(&["bvult", "bvule", "bvslt", "bvsge", "=", "distinct", "bvugt"]);
            format!("({op} {} {})", gen_bv(rng, w, d), gen_bv(rng, w, d))
        }
        3 => format!("(not {})", gen_bool(rng, d)),
        _ => {
            let op = rng.pick(&["and", "or", "xor", "=>"]);
            format!("({op} {} {})", gen_bool(rng, d), gen_bool(rng, d))
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

#[test]
fn random_small_components_get_z3s_answer() {
    let mut z3 = Z3::new();
    let mut rng = Rng(0x5DEECE66D);
    let (mut sat, mut unsat) = (0, 0);
    for case in 0..400 {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        for d in DECLS.lines() {
            let c = parse_command(&mut store, &sig, d).expect("declaration");
            c.declare_in(&mut store, &mut sig);
        }
        let n = 1 + rng.below(4);
        let mut text = String::new();
        let mut conj: Vec<TermId> = Vec::new();
        for _ in 0..n {
            let a = format!("(assert {})\n", gen_bool(&mut rng, 4));
            match parse_command(&mut store, &sig, a.trim()) {
                Ok(Command::Assert(t, _)) => conj.push(t),
                other => panic!("case {case}: {a} parsed as {other:?}"),
            }
            text.push_str(&a);
        }
        let small = Small::of(&store, &conj)
            .unwrap_or_else(|| panic!("case {case}: 8 bits not taken:\n{text}"));
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
                let with_model = format!("{text}{}", model_asserts(&mut store, &m));
                assert_eq!(
                    z3.check(&with_model),
                    "sat",
                    "case {case}: z3 refutes the model:\n{with_model}"
                );
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
