//! The conjunct view of an assertion set: top-level `and`s flattened, top-level annotations
//! stripped, Boolean negation written one way (`(not X)`, never `(= false X)`), `true`
//! dropped, duplicates removed (first occurrence kept). Everything here is a logical
//! equivalence: the conjunction of the result is equivalent to the conjunction of the input.

use crate::term::{Op, SortStore, TermId, TermStore};
use rustc_hash::FxHashSet;

/// Normalise one Boolean term at its top: `(= false X)`/`(= X false)` -> `(not X)`,
/// `(= true X)`/`(= X true)` -> X, `(not (not X))` -> X, `(not true)` -> false,
/// `(not false)` -> true, annotations stripped. Iterates single steps (no recursion) until
/// no rule applies; every step strictly shrinks the term, so it terminates.
pub fn normalise_top(store: &mut TermStore, mut t: TermId) -> TermId {
    while let Some(n) = step(store, t) {
        t = n;
    }
    t
}

/// One rewrite step at the top of `t`, if any applies.
fn step(store: &mut TermStore, t: TermId) -> Option<TermId> {
    match store.op(t) {
        Op::Annot(_) => Some(store.args(t)[0]),
        Op::Eq if store.args(t).len() == 2 && store.sort(store.args(t)[0]) == SortStore::BOOL => {
            let (a, b) = (store.args(t)[0], store.args(t)[1]);
            if a == TermStore::TRUE {
                Some(b)
            } else if b == TermStore::TRUE {
                Some(a)
            } else if a == TermStore::FALSE {
                Some(negate(store, b))
            } else if b == TermStore::FALSE {
                Some(negate(store, a))
            } else {
                None
            }
        }
        Op::Not => {
            let a = store.args(t)[0];
            match store.op(a) {
                Op::Not => Some(store.args(a)[0]),
                Op::True => Some(TermStore::FALSE),
                Op::False => Some(TermStore::TRUE),
                _ => {
                    let a2 = step(store, a)?;
                    Some(negate(store, a2))
                }
            }
        }
        _ => None,
    }
}

/// `(not x)` with double negations and constants folded (one level).
fn negate(store: &mut TermStore, x: TermId) -> TermId {
    match store.op(x) {
        Op::Not => store.args(x)[0],
        Op::True => TermStore::FALSE,
        Op::False => TermStore::TRUE,
        _ => store.mk_not(x),
    }
}

/// Flatten the assertions into a deduplicated conjunct list (see the module doc). If any
/// conjunct is `false`, the result is `[false]`; an empty result means `true`.
pub fn conjuncts(store: &mut TermStore, assertions: &[TermId]) -> Vec<TermId> {
    let mut out = Vec::new();
    let mut seen: FxHashSet<TermId> = FxHashSet::default();
    // Explicit stack, pushed in reverse so the output keeps left-to-right order.
    let mut stack: Vec<TermId> = assertions.iter().rev().copied().collect();
    while let Some(t) = stack.pop() {
        let t = normalise_top(store, t);
        match store.op(t) {
            Op::And => {
                stack.extend(store.args(t).iter().rev().copied());
            }
            Op::True => {}
            Op::False => return vec![TermStore::FALSE],
            Op::Not if store.op(store.args(t)[0]) == Op::Or => {
                // (not (or a b ...)) = (and (not a) (not b) ...)
                let args: Vec<TermId> = store.args(store.args(t)[0]).to_vec();
                for &a in args.iter().rev() {
                    let n = negate(store, a);
                    stack.push(n);
                }
            }
            _ => {
                if seen.insert(t) {
                    out.push(t);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_and_normalise() {
        let mut s = TermStore::new();
        let x = s.mk_const("x", SortStore::BOOL);
        let y = s.mk_const("y", SortStore::BOOL);
        let nx = s.mk_not(x);
        let nnx = s.mk_not(nx);
        let eqf = s.app(Op::Eq, vec![TermStore::FALSE, y]).unwrap();
        let eqt = s.app(Op::Eq, vec![x, TermStore::TRUE]).unwrap();
        let inner = s.app(Op::And, vec![nnx, TermStore::TRUE, eqf]).unwrap();
        let ann = s.mk_annot(inner, ":named a");
        let c = conjuncts(&mut s, &[ann, eqt, y]);
        let ny = s.mk_not(y);
        assert_eq!(c, vec![x, ny, y]);
        let c2 = conjuncts(&mut s, &[x, TermStore::FALSE]);
        assert_eq!(c2, vec![TermStore::FALSE]);
        assert!(conjuncts(&mut s, &[TermStore::TRUE]).is_empty());
    }
}
