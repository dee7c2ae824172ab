//! Cross-check of the model evaluator against the real z3: random terms over constants
//! with fixed values are evaluated by smtproxy and by one `z3 -in` process (`get-value`
//! after asserting the constants' values), and the answers must agree exactly.
//! A missing `z3` fails the tests (the test command installs it).

use crate::common;

use common::rng::Rng;
use smtproxy::query::eval::{EvalError, Evaluator, Model};
use smtproxy::query::value::Value;
use smtproxy::smt2::command::Command;
use smtproxy::smt2::lexer::Sexps;
use smtproxy::smt2::parser::{parse_command, parse_term};
use smtproxy::term::signature::{DeclKind, FunDef, Signature};
use smtproxy::term::{TermId, TermStore};
use std::time::Duration;

/// A test context: the store, the signature, the declarations as text, the model (both as
/// `Model` and as z3 assertions).
struct Ctx {
    store: TermStore,
    sig: Signature,
    script: String,
    model: Model,
}

impl Ctx {
    fn new() -> Self {
        Ctx {
            store: TermStore::new(),
            sig: Signature::default(),
            script: String::new(),
            model: Model::new(),
        }
    }
    /// Declare a constant and fix its value (given as a literal term).
    fn constant(&mut self, name: &str, sort: &str, value: &str) {
        let decl = format!("(declare-fun {name} () {sort})");
        let Ok(Command::DeclareFun {
            name: n,
            params,
            ret,
        }) = parse_command(&mut self.store, &self.sig, &decl)
        else {
            panic!("{decl}")
        };
        let sym = self.store.sym(&n);
        self.sig.add_fun(
            &n,
            FunDef::Declared {
                sym,
                params,
                ret,
                kind: DeclKind::Free,
            },
        );
        let leaf = self.store.mk_sym_app(sym, vec![], ret);
        let vt = parse_term(&mut self.store, &self.sig, value).expect("value term");
        let v = Value::from_term(&self.store, vt).expect("literal value");
        self.model.set(leaf, v);
        self.script.push_str(&decl);
        self.script
            .push_str(&format!("\n(assert (= {name} {value}))\n"));
    }
}

/// Evaluate every term with smtproxy and z3; return how many were compared.
/// Terms whose evaluation is unsupported for division by zero are skipped.
fn cross_check(mut ctx: Ctx, terms: &[String]) -> usize {
    let mut ours: Vec<Option<Value>> = Vec::new();
    let mut ids: Vec<TermId> = Vec::new();
    for t in terms {
        let id =
            parse_term(&mut ctx.store, &ctx.sig, t).unwrap_or_else(|e| panic!("parse {t}: {e:?}"));
        let mut ev = Evaluator::new(&ctx.store, &ctx.model, false);
        match ev.eval(id) {
            Ok(Some(v)) => ours.push(Some(v)),
            Ok(None) => panic!("undetermined: {t}"),
            Err(EvalError::Unsupported(m)) if m.contains("division by zero") => ours.push(None),
            Err(e) => panic!("{t}: {e}"),
        }
        ids.push(id);
    }
    let mut script = ctx.script.clone();
    script.push_str("(check-sat)\n");
    let mut names = Vec::new();
    for (k, t) in terms.iter().enumerate() {
        if ours[k].is_none() {
            continue;
        }
        let sort = ctx.store.sorts.to_text(ctx.store.sort(ids[k]));
        script.push_str(&format!("(define-fun t{k} () {sort} {t})\n"));
        names.push(format!("t{k}"));
    }
    for chunk in names.chunks(50) {
        script.push_str(&format!("(get-value ({}))\n", chunk.join(" ")));
    }
    script.push_str("(exit)\n");
    let z3 = common::run_prog("z3", &["-in"], script.as_bytes(), Duration::from_secs(300));
    assert!(!z3.timed_out, "z3 hung on:\n{script}");
    let out = z3.stdout_str();
    let sx = Sexps::parse(&out).unwrap_or_else(|e| panic!("z3 output: {e:?}\n{out}"));
    assert!(
        !sx.roots.is_empty() && sx.source(sx.roots[0]) == "sat",
        "z3 said:\n{out}"
    );
    let mut answers = std::collections::HashMap::new();
    for &r in &sx.roots[1..] {
        let pairs = sx
            .list(r)
            .unwrap_or_else(|| panic!("z3 said: {}", sx.source(r)));
        for &p in pairs {
            let kv = sx
                .list(p)
                .unwrap_or_else(|| panic!("z3 said: {}", sx.source(r)));
            answers.insert(sx.source(kv[0]).to_string(), sx.source(kv[1]).to_string());
        }
    }
    let mut compared = 0;
    for (k, t) in terms.iter().enumerate() {
        let Some(v) = &ours[k] else { continue };
        let ans = answers
            .get(&format!("t{k}"))
            .unwrap_or_else(|| panic!("no z3 answer for {t}"));
        let at = parse_term(&mut ctx.store, &ctx.sig, ans)
            .unwrap_or_else(|e| panic!("parse z3 answer {ans}: {e:?}"));
        let zv = Value::from_term(&ctx.store, at)
            .unwrap_or_else(|| panic!("z3 answer is not a literal: {ans}"));
        assert_eq!(v, &zv, "term {t}: smtproxy {v:?}, z3 {ans}");
        compared += 1;
    }
    eprintln!("compared {compared} of {} terms with z3", terms.len());
    compared
}

const WIDTHS: [u32; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 64, 65, 128];

fn bv_lit(rng: &mut Rng, w: u32) -> String {
    let v: u128 = match rng.below(8) {
        0 => 0,
        1 => 1,
        2 => u128::MAX,
        3 => 1u128 << (w - 1),
        4 => (1u128 << (w - 1)).wrapping_sub(1),
        5 => w as u128,
        _ => ((rng.next() as u128) << 64) | rng.next() as u128,
    };
    let v = if w == 128 { v } else { v & ((1u128 << w) - 1) };
    format!("(_ bv{v} {w})")
}

/// A random bit-vector term of width `w`; constants exist for the widths in WIDTHS.
fn gen_bv(rng: &mut Rng, w: u32, depth: u32) -> String {
    if depth == 0 || rng.below(6) == 0 {
        return if WIDTHS.contains(&w) && rng.below(2) == 0 {
            format!("x{w}_{}", rng.below(2))
        } else {
            bv_lit(rng, w)
        };
    }
    let d = depth - 1;
    match rng.below(13) {
        0 => format!("({} {})", rng.pick(&["bvnot", "bvneg"]), gen_bv(rng, w, d)),
        1..=4 => {
            let op = rng.pick(&[
                "bvand", "bvor", "bvxor", "bvnand", "bvnor", "bvxnor", "bvadd", "bvsub", "bvmul",
                "bvudiv", "bvurem", "bvsdiv", "bvsrem", "bvsmod", "bvshl", "bvlshr", "bvashr",
            ]);
            // shift amounts and divisors: often small literals
            let b = if rng.below(3) == 0 {
                format!(
                    "(_ bv{} {w})",
                    rng.below(w as u64 + 3) % (1u64 << w.min(63))
                )
            } else {
                gen_bv(rng, w, d)
            };
            format!("({op} {} {b})", gen_bv(rng, w, d))
        }
        5 => format!(
            "((_ {} {}) {})",
            rng.pick(&["rotate_left", "rotate_right"]),
            rng.below(2 * w as u64 + 1),
            gen_bv(rng, w, d)
        ),
        6 => format!(
            "(ite {} {} {})",
            gen_bool(rng, d),
            gen_bv(rng, w, d),
            gen_bv(rng, w, d)
        ),
        7 => {
            // extract from a wider source
            let sw = *rng.pick(
                &WIDTHS
                    .iter()
                    .copied()
                    .filter(|&x| x >= w)
                    .collect::<Vec<_>>(),
            );
            let j = rng.below((sw - w + 1) as u64) as u32;
            format!("((_ extract {} {j}) {})", j + w - 1, gen_bv(rng, sw, d))
        }
        8 if w >= 2 => {
            let w1 = 1 + rng.below(w as u64 - 1) as u32;
            format!("(concat {} {})", gen_bv(rng, w1, d), gen_bv(rng, w - w1, d))
        }
        9 if w >= 2 => {
            let k = rng.below(w as u64) as u32;
            format!(
                "((_ {} {k}) {})",
                rng.pick(&["zero_extend", "sign_extend"]),
                gen_bv(rng, w - k, d)
            )
        }
        10 if w.is_multiple_of(2) || w.is_multiple_of(3) => {
            let r = if w.is_multiple_of(2) { 2 } else { 3 };
            format!("((_ repeat {r}) {})", gen_bv(rng, w / r, d))
        }
        11 if w == 1 => {
            let sw = *rng.pick(&WIDTHS);
            format!("(bvcomp {} {})", gen_bv(rng, sw, d), gen_bv(rng, sw, d))
        }
        _ => format!("(bvadd {} {})", gen_bv(rng, w, d), gen_bv(rng, w, d)),
    }
}

fn gen_bool(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 {
        return rng.pick(&["true", "false"]).to_string();
    }
    let d = depth - 1;
    match rng.below(6) {
        0..=2 => {
            let w = *rng.pick(&WIDTHS);
            let op = rng.pick(&[
                "bvult", "bvule", "bvugt", "bvuge", "bvslt", "bvsle", "bvsgt", "bvsge", "=",
                "distinct",
            ]);
            format!("({op} {} {})", gen_bv(rng, w, d), gen_bv(rng, w, d))
        }
        3 => format!("(not {})", gen_bool(rng, d)),
        _ => {
            let op = rng.pick(&["and", "or", "xor", "=>", "="]);
            let n = 2 + rng.below(2);
            let args: Vec<String> = (0..n).map(|_| gen_bool(rng, d)).collect();
            format!("({op} {})", args.join(" "))
        }
    }
}

#[test]
fn random_bv_terms_agree_with_z3() {
    common::require("z3");
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let mut ctx = Ctx::new();
    for &w in &WIDTHS {
        for k in 0..2 {
            let v = bv_lit(&mut rng, w);
            ctx.constant(&format!("x{w}_{k}"), &format!("(_ BitVec {w})"), &v);
        }
    }
    let mut terms = Vec::new();
    for i in 0..400 {
        if i % 4 == 0 {
            terms.push(gen_bool(&mut rng, 4));
        } else {
            let w = *rng.pick(&WIDTHS);
            terms.push(gen_bv(&mut rng, w, 4));
        }
    }
    let n = cross_check(ctx, &terms);
    assert_eq!(n, terms.len());
}

/// Every BV operator on edge-case literals, all width combinations in WIDTHS.
#[test]
fn bv_edge_cases_agree_with_z3() {
    common::require("z3");
    let ctx = Ctx::new();
    let mut terms = Vec::new();
    for &w in &WIDTHS {
        let m = if w == 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1
        };
        let vals = [
            0u128,
            1,
            2,
            m,
            m - 1,
            1u128 << (w - 1),
            (1u128 << (w - 1)).wrapping_sub(1) & m,
            (w as u128) & m,
            7 & m,
        ];
        for op in [
            "bvudiv", "bvurem", "bvsdiv", "bvsrem", "bvsmod", "bvshl", "bvlshr", "bvashr", "bvmul",
            "bvsub", "bvslt", "bvsle", "bvult",
        ] {
            for &a in &vals {
                for &b in &vals {
                    terms.push(format!("({op} (_ bv{a} {w}) (_ bv{b} {w}))"));
                }
            }
        }
        for &a in &vals {
            for k in [0, 1, w - 1, w, w + 1, 2 * w + 3] {
                terms.push(format!("((_ rotate_left {k}) (_ bv{a} {w}))"));
                terms.push(format!("((_ rotate_right {k}) (_ bv{a} {w}))"));
            }
            terms.push(format!("((_ sign_extend 3) (_ bv{a} {w}))"));
            terms.push(format!("((_ sign_extend 64) (_ bv{a} {w}))"));
            terms.push(format!("((_ zero_extend 64) (_ bv{a} {w}))"));
            terms.push(format!("(bvneg (_ bv{a} {w}))"));
            terms.push(format!("((_ extract {} 0) (_ bv{a} {w}))", w - 1));
            terms.push(format!("((_ extract {} {}) (_ bv{a} {w}))", w - 1, w - 1));
            terms.push(format!("((_ repeat 3) (_ bv{a} {w}))"));
        }
    }
    let n = cross_check(ctx, &terms);
    assert_eq!(n, terms.len());
}

fn gen_int(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.below(5) == 0 {
        return match rng.below(4) {
            0 => format!("i{}", rng.below(3)),
            1 => format!("(- {})", rng.below(20)),
            _ => format!("{}", rng.below(20)),
        };
    }
    let d = depth - 1;
    match rng.below(9) {
        0 => format!(
            "(+ {} {} {})",
            gen_int(rng, d),
            gen_int(rng, d),
            gen_int(rng, d)
        ),
        1 => format!("(- {} {})", gen_int(rng, d), gen_int(rng, d)),
        2 => format!("(* {} {})", gen_int(rng, d), gen_int(rng, d)),
        3 => format!("(div {} {})", gen_int(rng, d), gen_int(rng, d)),
        4 => format!("(mod {} {})", gen_int(rng, d), gen_int(rng, d)),
        5 => format!("(abs {})", gen_int(rng, d)),
        6 => format!("(to_int {})", gen_real(rng, d)),
        7 => format!(
            "(ite {} {} {})",
            gen_arith_bool(rng, d),
            gen_int(rng, d),
            gen_int(rng, d)
        ),
        _ => format!("(- {})", gen_int(rng, d)),
    }
}

fn gen_real(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.below(5) == 0 {
        return match rng.below(4) {
            0 => format!("r{}", rng.below(2)),
            1 => format!("(/ {} {})", rng.below(10), 1 + rng.below(7)),
            2 => format!("{}.{}", rng.below(10), rng.below(100)),
            _ => format!("(- {}.5)", rng.below(10)),
        };
    }
    let d = depth - 1;
    match rng.below(7) {
        0 => format!("(+ {} {})", gen_real(rng, d), gen_int(rng, d)),
        1 => format!(
            "(- {} {} {})",
            gen_real(rng, d),
            gen_real(rng, d),
            gen_real(rng, d)
        ),
        2 => format!("(* {} {})", gen_real(rng, d), gen_real(rng, d)),
        3 => format!("(/ {} {})", gen_real(rng, d), gen_real(rng, d)),
        4 => format!("(to_real {})", gen_int(rng, d)),
        5 => format!(
            "(ite {} {} {})",
            gen_arith_bool(rng, d),
            gen_real(rng, d),
            gen_int(rng, d)
        ),
        _ => format!("(- {})", gen_real(rng, d)),
    }
}

fn gen_arith_bool(rng: &mut Rng, depth: u32) -> String {
    let d = depth.saturating_sub(1);
    match rng.below(6) {
        0 => format!(
            "({} {} {} {})",
            rng.pick(&["<", "<=", ">", ">="]),
            gen_int(rng, d),
            gen_real(rng, d),
            gen_int(rng, d)
        ),
        1 => format!(
            "({} {} {})",
            rng.pick(&["=", "distinct"]),
            gen_int(rng, d),
            gen_real(rng, d)
        ),
        2 => format!("(is_int {})", gen_real(rng, d)),
        // (z3 does not accept `(_ divisible k)`; it is unit-tested in query::eval)
        3 => format!("(= (mod {} {}) 0)", gen_int(rng, d), 1 + rng.below(5)),
        4 => format!(
            "({} {} {})",
            rng.pick(&["<", "<=", "=", ">"]),
            gen_int(rng, d),
            gen_int(rng, d)
        ),
        _ => format!(
            "({} {} {})",
            rng.pick(&["<", ">="]),
            gen_real(rng, d),
            gen_real(rng, d)
        ),
    }
}

#[test]
fn random_int_real_terms_agree_with_z3() {
    common::require("z3");
    let mut rng = Rng(0xD1B54A32D192ED03);
    let mut ctx = Ctx::new();
    ctx.constant("i0", "Int", "7");
    ctx.constant("i1", "Int", "(- 13)");
    ctx.constant("i2", "Int", "0");
    ctx.constant("r0", "Real", "(/ 5 3)");
    ctx.constant("r1", "Real", "(- 2.25)");
    let mut terms = Vec::new();
    for i in 0..300 {
        terms.push(match i % 3 {
            0 => gen_int(&mut rng, 4),
            1 => gen_real(&mut rng, 3),
            _ => gen_arith_bool(&mut rng, 4),
        });
    }
    let n = cross_check(ctx, &terms);
    // some terms divide by zero and are skipped, but most are compared
    assert!(
        n > terms.len() * 2 / 3,
        "only {n} of {} compared",
        terms.len()
    );
}

#[test]
fn array_terms_agree_with_z3() {
    common::require("z3");
    let mut rng = Rng(0x243F6A8885A308D3);
    let mut ctx = Ctx::new();
    ctx.constant(
        "a",
        "(Array (_ BitVec 4) (_ BitVec 8))",
        "(store (store ((as const (Array (_ BitVec 4) (_ BitVec 8))) #x00) #x1 #x05) #x3 #x07)",
    );
    ctx.constant(
        "b",
        "(Array Int Int)",
        "(store ((as const (Array Int Int)) 3) 2 (- 4))",
    );
    ctx.constant(
        "c",
        "(Array Bool Bool)",
        "(store ((as const (Array Bool Bool)) false) true true)",
    );
    ctx.constant(
        "d",
        "(Array (_ BitVec 1) (_ BitVec 8))",
        "(store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x01) #b0 #x02)",
    );
    let nib = |rng: &mut Rng| format!("#x{:x}", rng.below(16));
    let byte = |rng: &mut Rng| format!("#x{:02x}", rng.below(4) * 3);
    let mut terms = Vec::new();
    for _ in 0..60 {
        let mut arr = "a".to_string();
        for _ in 0..rng.below(4) {
            arr = format!("(store {arr} {} {})", nib(&mut rng), byte(&mut rng));
        }
        let mut arr2 = "a".to_string();
        for _ in 0..rng.below(4) {
            arr2 = format!("(store {arr2} {} {})", nib(&mut rng), byte(&mut rng));
        }
        terms.push(format!("(select {arr} {})", nib(&mut rng)));
        terms.push(format!(
            "(select {arr} ((_ extract 3 0) (select {arr2} {})))",
            nib(&mut rng)
        ));
        terms.push(format!("(= {arr} {arr2})"));
        terms.push(format!(
            "(ite (= {arr} {arr2}) (select {arr} #x1) (select {arr2} #x3))"
        ));
        let k = rng.below(5) as i64 - 2;
        let k = if k < 0 {
            format!("(- {})", -k)
        } else {
            k.to_string()
        };
        terms.push(format!(
            "(= (store b {k} (select b 2)) (store b 2 (select b {k})))"
        ));
        terms.push(format!(
            "(select (store (store b {k} 9) 2 {k}) {})",
            rng.below(4)
        ));
        let bl = *rng.pick(&["true", "false"]);
        let bl2 = *rng.pick(&["true", "false"]);
        terms.push(format!(
            "(= (store c {bl} {bl2}) ((as const (Array Bool Bool)) {bl2}))"
        ));
        terms.push(format!("(= (store (store c false {bl}) true {bl2}) (store ((as const (Array Bool Bool)) {bl}) true {bl2}))"));
        let bit = *rng.pick(&["#b0", "#b1"]);
        terms.push(format!(
            "(= (store d {bit} #x01) ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x01))"
        ));
        terms.push(format!("(= (store (store d #b1 #x02) {bit} {}) ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x02))", byte(&mut rng)));
    }
    let n = cross_check(ctx, &terms);
    assert_eq!(n, terms.len());
}
