//! Equisatisfiability of slicing + canonicalisation against z3 on real KLEE queries, and
//! slicing soundness (components share no symbol or array cell).

use crate::common;

use common::corpus;
use common::z3pipe::Z3Pipe;
use flate2::read::GzDecoder;
use rustc_hash::{FxHashMap, FxHashSet};
use smtproxy::query::{canon, enumerate, slice, view};
use smtproxy::smt2::command::Command;
use smtproxy::smt2::parser::parse_command;
use smtproxy::smt2::printer::{backend_name, print_term, quote_symbol, BackendNames};
use smtproxy::smt2::reader::{CommandReader, Frame};
use smtproxy::term::signature::{DeclKind, FunDef, Signature};
use smtproxy::term::{Op, TermId, TermStore};
use std::io::Read;
use std::path::Path;

/// z3 on a script in a fresh context (`QF_AUFBV`).
struct Z3(Z3Pipe);
impl Z3 {
    fn new() -> Z3 {
        Z3(Z3Pipe::new())
    }
    fn check(&mut self, script: &str) -> String {
        self.0.check(&format!(
            "(reset)\n(set-logic QF_AUFBV)\n{script}\n(check-sat)"
        ))
    }
}

fn records(path: &Path, max: usize) -> Vec<String> {
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut recs = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        if line.starts_with("; Query") && !cur.trim().is_empty() {
            recs.push(std::mem::take(&mut cur));
            if recs.len() >= max {
                return recs;
            }
        }
        cur.push_str(line);
        cur.push('\n');
    }
    if !cur.trim().is_empty() && recs.len() < max {
        recs.push(cur);
    }
    recs
}

/// Symbols and cells a term reads: (whole symbols, cells (array, index)).
fn reads(store: &TermStore, ts: &[TermId]) -> (FxHashSet<TermId>, FxHashSet<(TermId, TermId)>) {
    let mut whole = FxHashSet::default();
    let mut cells = FxHashSet::default();
    let mut seen = FxHashSet::default();
    let mut st: Vec<TermId> = ts.to_vec();
    while let Some(x) = st.pop() {
        if !seen.insert(x) {
            continue;
        }
        match store.op(x) {
            Op::Sym(_) if store.args(x).is_empty() => {
                whole.insert(x);
            }
            Op::Select
                if matches!(store.op(store.args(x)[0]), Op::Sym(_))
                    && matches!(store.op(store.args(x)[1]), Op::Bv(_)) =>
            {
                cells.insert((store.args(x)[0], store.args(x)[1]));
            }
            _ => st.extend(store.args(x).iter().copied()),
        }
    }
    (whole, cells)
}

fn decls(store: &TermStore, leaves: &[TermId]) -> String {
    let mut s = String::new();
    for &l in leaves {
        if let Op::Sym(sym) = store.op(l) {
            s.push_str(&format!(
                "(declare-fun {} () {})\n",
                quote_symbol(&backend_name(store.sym_name(sym))),
                store.sorts.to_text(store.sort(l))
            ));
        }
    }
    s
}

fn script(store: &TermStore, ts: &[TermId]) -> String {
    let mut s = decls(store, &slice::free_symbols_of(store, ts));
    for &t in ts {
        s.push_str(&format!(
            "(assert {})\n",
            print_term(store, t, &BackendNames)
        ));
    }
    s
}

/// Returns how many components were decided by enumeration, and how many guessed.
fn run_corpus(path: &Path, max: usize) -> (usize, usize) {
    let mut z3 = Z3::new();
    let mut store = TermStore::new();
    let (mut n_comp, mut n_multi, mut n_unsat, mut n_small) = (0, 0, 0, 0);
    let mut n_guessed = 0usize;
    // One memo over every record, as an engine keeps it: it must not change a slicing.
    let mut memo = slice::SliceMemo::default();
    for rec in records(path, max) {
        let mut sig = Signature::default();
        let mut asserts = Vec::new();
        let mut rd = CommandReader::new(rec.as_bytes());
        while let Some(f) = rd.next_frame() {
            let Frame::Command(c) = f else {
                panic!("bad frame")
            };
            match parse_command(&mut store, &sig, &c.text).expect("parse") {
                Command::DeclareFun { name, params, ret } => {
                    let sym = store.sym(&name);
                    sig.add_fun(
                        &name,
                        FunDef::Declared {
                            sym,
                            params,
                            ret,
                            kind: DeclKind::Free,
                        },
                    );
                }
                Command::Assert(t, _) => asserts.push(t),
                _ => {}
            }
        }
        let conj = view::conjuncts(&mut store, &asserts);
        assert!(slice::sliceable(&store, &sig, &conj));
        assert_eq!(
            slice::sliceable_with(&store, &sig, &conj, &mut memo),
            Some(false),
            "the memo agrees: sliceable, no function applied"
        );
        let comps = slice::slice(&store, &conj);
        assert_eq!(slice::slice_with(&store, &conj, &mut memo), comps);
        for c in &comps {
            assert_eq!(
                slice::free_symbols_with(&store, &c.conjuncts, &mut memo),
                slice::free_symbols_of(&store, &c.conjuncts),
                "the memo's constants, in order"
            );
        }
        // every conjunct in exactly one component, order by first conjunct
        let flat: Vec<TermId> = comps
            .iter()
            .flat_map(|c| c.conjuncts.iter().copied())
            .collect();
        assert_eq!(flat.len(), conj.len());
        assert_eq!(
            flat.iter().copied().collect::<FxHashSet<_>>(),
            conj.iter().copied().collect()
        );
        // soundness: no shared symbol or cell; a whole-read array has no cell read elsewhere
        let rs: Vec<_> = comps.iter().map(|c| reads(&store, &c.conjuncts)).collect();
        for i in 0..rs.len() {
            for j in 0..rs.len() {
                if i == j {
                    continue;
                }
                assert!(rs[i].0.is_disjoint(&rs[j].0), "components share a symbol");
                assert!(rs[i].1.is_disjoint(&rs[j].1), "components share a cell");
                for (a, _) in &rs[j].1 {
                    assert!(
                        !rs[i].0.contains(a),
                        "whole array read vs cell read elsewhere"
                    );
                }
            }
        }
        let whole = z3.check(&script(&store, &asserts));
        let mut all_sat = true;
        n_comp += comps.len();
        n_multi += (comps.len() > 1) as usize;
        for c in &comps {
            let orig = z3.check(&script(&store, &c.conjuncts));
            // A component of a few bits is decided by enumeration as z3 decides it, with a
            // model z3 accepts; a wider one may be guessed sat, with a model z3 accepts.
            if let Some(small) = enumerate::Small::of(&store, &c.conjuncts) {
                n_small += usize::from(small.is_exhaustive());
                // As hybrid asks: the decision (or the guess's rounds), then the search.
                let decided = small
                    .decide(&store, &c.conjuncts, &|_| None)
                    .or_else(|| small.search(&store, &c.conjuncts, &|_| None));
                match decided {
                    Some(enumerate::Decided::Unsat) => {
                        assert!(small.is_exhaustive(), "a guess said unsat");
                        assert_eq!(orig, "unsat", "enumeration")
                    }
                    Some(enumerate::Decided::Sat(m)) => {
                        assert_eq!(orig, "sat", "enumeration");
                        n_guessed += usize::from(!small.is_exhaustive());
                        let mut with_model = script(&store, &c.conjuncts);
                        for (leaf, v) in m.iter().map(|(l, v)| (l, v.clone())).collect::<Vec<_>>() {
                            let sort = store.sort(leaf);
                            let vt = v.to_term(&mut store, sort);
                            with_model.push_str(&format!(
                                "(assert (= {} {}))\n",
                                print_term(&store, leaf, &BackendNames),
                                print_term(&store, vt, &BackendNames)
                            ));
                        }
                        assert_eq!(z3.check(&with_model), "sat", "model:\n{with_model}");
                    }
                    None if !small.is_exhaustive() => {}
                    None => panic!("not decided:\n{}", script(&store, &c.conjuncts)),
                }
            }
            let can = canon::canonicalize(&mut store, &c.conjuncts);
            // renaming is a sort-preserving bijection onto the canonical constants
            let mut seen_l = FxHashSet::default();
            let mut seen_c = FxHashSet::default();
            for &(l, k) in &can.renaming {
                assert_eq!(store.sort(l), store.sort(k));
                assert!(seen_l.insert(l) && seen_c.insert(k));
            }
            let canon_res = if can.text.is_empty() {
                "sat".to_string()
            } else {
                z3.check(&can.text)
            };
            assert_eq!(
                orig, canon_res,
                "canonical form not equisatisfiable:\n{}",
                can.text
            );
            // also the canonical terms themselves, printed by the standard printer
            let mut s2 = decls(
                &store,
                &can.renaming.iter().map(|p| p.1).collect::<Vec<_>>(),
            );
            for &t in &can.conjuncts {
                s2.push_str(&format!(
                    "(assert {})\n",
                    print_term(&store, t, &BackendNames)
                ));
            }
            if !can.conjuncts.is_empty() {
                assert_eq!(z3.check(&s2), orig);
            }
            // canonicalising the canonical form is stable
            let again = canon::canonicalize(&mut store, &can.conjuncts);
            assert_eq!(again.text, can.text, "canonical form not idempotent");
            all_sat &= orig == "sat";
            n_unsat += (orig == "unsat") as usize;
        }
        assert_eq!(whole == "sat", all_sat, "query sat iff all components sat");
    }
    eprintln!("{}: {n_comp} components, {n_multi} multi-component queries, {n_unsat} unsat components, {n_small} decided by enumeration, {n_guessed} guessed", path.display());
    let _ = FxHashMap::<u8, u8>::default();
    (n_small, n_guessed)
}

#[test]
fn canon_z3_klee_sort() {
    // Its sat components are orders among words, found by the local search.
    let (_, guessed) = run_corpus(&corpus("klee/sort/all-queries.smt2.gz"), 150);
    assert!(
        guessed >= 40,
        "{guessed} of sort's 48 sat components guessed"
    );
}

#[test]
fn canon_z3_klee_sbase_echo() {
    run_corpus(&corpus("klee/sbase-echo/solver-queries.smt2.gz"), 150);
}

#[test]
fn canon_z3_klee_sbase_echo_all() {
    // Bounds on argc and masked mode bits are guessed too: every component is decided.
    let (small, guessed) = run_corpus(&corpus("klee/sbase-echo/all-queries.smt2.gz"), 150);
    assert!(
        small + guessed >= 1200,
        "{small} enumerated, {guessed} guessed of 1,228"
    );
}

#[test]
fn canon_z3_klee_regexp_all() {
    let (small, _) = run_corpus(&corpus("klee/regexp/all-queries.smt2.gz"), 150);
    assert!(small >= 50, "{small} components decided by enumeration");
}
