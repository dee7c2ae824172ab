//! Definitions: conjuncts `(= x t)` that name a term by a constant, as symbolic executors
//! write every intermediate value (`(declare-fun a_7 () (_ BitVec 8))(assert (= a_7
//! (select STDIN #x00000001)))`). A model of an earlier query that shares the real
//! constraints (on the inputs) but names its intermediates afresh fails the new query only
//! on these definitions; [`fill`] recomputes each defined constant from its definition, so
//! that the earlier model carries over, as a solver run on the same constraints would
//! give the same model again (Manticore asks for the bytes of one test case in separate
//! queries and expects them to fit together).
//!
//! Invariants:
//! * A constant is defined at most once: the first definition of it, in conjunct order,
//!   counts; in `(= x y)` between two constants the left one is defined unless it already
//!   has a definition. A definition never mentions its own constant.
//! * [`fill`] only proposes a model: nothing here claims that it satisfies anything. The
//!   caller evaluates the query under the filled model before serving it.

use crate::query::eval::{Evaluator, Model};
use crate::term::{Op, TermId, TermStore};
use rustc_hash::FxHashSet;

/// How many passes `fill` makes over definitions whose terms are not yet evaluable (in
/// the order tools write them, one pass suffices).
const PASSES: usize = 4;

fn is_constant(store: &TermStore, t: TermId) -> bool {
    matches!(store.op(t), Op::Sym(_)) && store.args(t).is_empty()
}

/// Whether `t` mentions `x`.
fn mentions(store: &TermStore, t: TermId, x: TermId) -> bool {
    let mut stack = vec![t];
    let mut seen: FxHashSet<TermId> = FxHashSet::default();
    while let Some(u) = stack.pop() {
        if u == x {
            return true;
        }
        if seen.insert(u) {
            stack.extend(store.args(u).iter().copied());
        }
    }
    false
}

/// The definitions among `conj`, as (constant, term), in conjunct order.
pub fn definitions(store: &TermStore, conj: &[TermId]) -> Vec<(TermId, TermId)> {
    let mut defined: FxHashSet<TermId> = FxHashSet::default();
    let mut out = Vec::new();
    for &c in conj {
        if store.op(c) != Op::Eq || store.args(c).len() != 2 {
            continue;
        }
        let (l, r) = (store.args(c)[0], store.args(c)[1]);
        let pick = [(l, r), (r, l)]
            .into_iter()
            .find(|&(x, _)| is_constant(store, x) && !defined.contains(&x));
        if let Some((x, t)) = pick {
            if !mentions(store, t, x) {
                defined.insert(x);
                out.push((x, t));
            }
        }
    }
    out
}

/// `m` with every defined constant set to its definition's value under the model as
/// filled so far (definitions whose terms cannot be evaluated keep `m`'s value).
pub fn fill(store: &TermStore, m: &Model, defs: &[(TermId, TermId)]) -> Model {
    let mut out = m.clone();
    let mut done = vec![false; defs.len()];
    for _ in 0..PASSES {
        let mut progress = false;
        for (i, &(x, t)) in defs.iter().enumerate() {
            if done[i] {
                continue;
            }
            let v = {
                let mut ev = Evaluator::new(store, &out, false);
                ev.eval(t)
            };
            if let Ok(Some(v)) = v {
                out.set(x, v);
                done[i] = true;
                progress = true;
            }
        }
        if !progress || done.iter().all(|&d| d) {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::value::Value;
    use crate::smt2::command::Command;
    use crate::smt2::parser::parse_command;
    use crate::term::signature::{ArityRule, Signature};

    /// Parse `decls` then the assertions, returning their terms.
    fn terms(store: &mut TermStore, decls: &[&str], asserts: &[&str]) -> Vec<TermId> {
        let mut sig = Signature::for_solver(ArityRule::Z3);
        for d in decls {
            let c = parse_command(store, &sig, d).expect("declaration parses");
            c.declare_in(store, &mut sig);
        }
        asserts
            .iter()
            .map(
                |a| match parse_command(store, &sig, a).expect("assertion parses") {
                    Command::Assert(t, _) => t,
                    other => panic!("not an assertion: {other:?}"),
                },
            )
            .collect()
    }

    #[test]
    fn renamed_intermediates_are_recomputed() {
        let mut store = TermStore::new();
        let decls = [
            "(declare-fun x () (_ BitVec 8))",
            "(declare-fun a_1 () (_ BitVec 8))",
            "(declare-fun a_2 () (_ BitVec 8))",
            "(declare-fun out () (_ BitVec 8))",
        ];
        let conj = terms(
            &mut store,
            &decls,
            &[
                "(assert (= a_1 (bvadd x #x01)))",
                "(assert (= (bvmul a_1 #x02) a_2))",
                "(assert (= out a_2))",
                "(assert (bvugt x #x03))",
            ],
        );
        let defs = definitions(&store, &conj);
        assert_eq!(defs.len(), 3, "a_1, a_2 (right-hand side) and out");
        // An earlier model: x only, out from another query.
        let x = store.args(store.args(conj[0])[1])[0];
        let out = store.args(conj[2])[0];
        let mut m = Model::new();
        m.set(x, Value::bv_u64(8, 5));
        m.set(out, Value::bv_u64(8, 99));
        let filled = fill(&store, &m, &defs);
        assert_eq!(filled.get(out), Some(&Value::bv_u64(8, 12)));
        let mut ev = Evaluator::new(&store, &filled, false);
        assert!(conj.iter().all(|&c| ev.is_true(c).unwrap_or(false)));
    }

    #[test]
    fn a_definition_through_its_own_constant_is_not_one() {
        let mut store = TermStore::new();
        let conj = terms(
            &mut store,
            &["(declare-fun y () Int)"],
            &["(assert (= y (+ y 0)))"],
        );
        assert!(definitions(&store, &conj).is_empty());
    }
}
