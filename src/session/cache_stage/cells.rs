//! Reading a backend's model of a component: an array the component only reads, `(select a
//! i)`, is asked for those cells (and, where it pays, one unread cell for the solver's
//! default), not as a whole (z3 5.4 takes ~5 ms to print a KLEE array's whole model). A
//! symbolic index `i` is asked too: the cell read is where the solver's model puts `i`. A
//! cell the component itself fixes, a conjunct `(= (select a 5) #x2a)` (KLEE states each
//! cell of a constant table so), is not asked: every model of the component holds it (on
//! KLEE's sbase-cut a table's 256 cells made yices' answer 12 KB, 1.0-1.4 ms, against
//! 0.2-0.35 ms for the three other terms alone).
//!
//! Invariant: an array value built from cells holds exactly the solver's values at the cells
//! the component reads (at the indices the solver's model gives them, or the values the
//! component fixes); everywhere else it holds the default (the solver's, when probed). Such
//! a model is served only once smtproxy evaluated it true on the query, as every backend
//! model is: where its own evaluation of an index differed from the solver's, it fails
//! there, never passes.

use crate::query::value::Value;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};

/// The array leaves among `leaves` that `conj` only reads, as `(select a i)`, with those
/// select terms (ascending, no duplicates). An array that occurs anywhere else (a store,
/// an equality, an `ite`) is not in the map.
pub(super) fn cell_reads(
    store: &TermStore,
    conj: &[TermId],
    leaves: &[TermId],
) -> FxHashMap<TermId, Vec<TermId>> {
    let arrays: FxHashSet<TermId> = leaves
        .iter()
        .copied()
        .filter(|&l| matches!(store.sorts.get(store.sort(l)), crate::term::Sort::Array(..)))
        .collect();
    if arrays.is_empty() {
        return FxHashMap::default();
    }
    let mut cells: FxHashMap<TermId, Vec<TermId>> = FxHashMap::default();
    let mut whole: FxHashSet<TermId> = FxHashSet::default();
    let mut seen = crate::term::visit::Visited::new();
    let mut stack: Vec<TermId> = conj.to_vec();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        let args = store.args(t);
        for (k, &x) in args.iter().enumerate() {
            if !arrays.contains(&x) {
                continue;
            }
            if k == 0 && store.op(t) == Op::Select {
                cells.entry(x).or_default().push(t);
            } else {
                whole.insert(x);
            }
        }
        stack.extend(args.iter().copied());
    }
    cells.retain(|a, _| !whole.contains(a));
    for sel in cells.values_mut() {
        sel.sort_unstable();
        sel.dedup();
    }
    cells
}

/// The cells that conjuncts of `conj` fix, `(= (select a i) v)` or `(= v (select a i))` with
/// literals `i` and `v`: each select term and its value `v`.
pub(super) fn fixed_cells(store: &TermStore, conj: &[TermId]) -> FxHashMap<TermId, Value> {
    let mut fixed = FxHashMap::default();
    for &t in conj {
        if store.op(t) != Op::Eq {
            continue;
        }
        let [x, y] = store.args(t) else { continue };
        for (sel, v) in [(*x, *y), (*y, *x)] {
            if Value::literal_select_index(store, sel).is_none() || !store.args(v).is_empty() {
                continue;
            }
            if let Some(v) = Value::from_term(store, v) {
                fixed.insert(sel, v);
            }
        }
    }
    fixed
}

/// The terms to ask the solver's values of for the cells `sel` (from `cell_reads`): each
/// select that `fixed` (from `fixed_cells`) does not hold, and each index that is not a
/// literal.
pub(super) fn cell_terms(
    store: &TermStore,
    sel: &[TermId],
    fixed: &FxHashMap<TermId, Value>,
) -> Vec<TermId> {
    let mut out: Vec<TermId> = sel
        .iter()
        .copied()
        .filter(|s| !fixed.contains_key(s))
        .collect();
    for &s in sel {
        if Value::literal_select_index(store, s).is_none() {
            out.push(store.args(s)[1]);
        }
    }
    out
}

/// `(select a i)` for a bit-vector index `i` that none of `sel` reads at a literal (the
/// highest such value), or None (other index sorts, or no such index among the 64
/// highest).
pub(super) fn unread_cell(store: &mut TermStore, a: TermId, sel: &[TermId]) -> Option<TermId> {
    let crate::term::Sort::Array(isort, _) = *store.sorts.get(store.sort(a)) else {
        return None;
    };
    let w = store
        .sorts
        .bv_width(isort)
        .filter(|&w| (1..=64).contains(&w))?;
    let read: FxHashSet<TermId> = sel.iter().map(|&s| store.args(s)[1]).collect();
    let top = crate::query::value::mask64(w);
    for k in 0..64u64.min(top) {
        let idx = store.mk_bv_u64(top - k, w);
        if !read.contains(&idx) {
            return store.app(Op::Select, vec![a, idx]).ok();
        }
    }
    None
}

/// The array value of `a` from the values of its cells (`sel`, from `cell_reads`; `got`
/// holds the values of their [`cell_terms`]), the element sort's default elsewhere.
pub(super) fn array_of_cells(
    store: &TermStore,
    a: TermId,
    sel: &[TermId],
    default: Option<Value>,
    got: &FxHashMap<TermId, Value>,
) -> Option<Value> {
    let crate::term::Sort::Array(isort, esort) = *store.sorts.get(store.sort(a)) else {
        return None;
    };
    let default = match default {
        Some(d) => d,
        None => Value::default_of(&store.sorts, esort)?,
    };
    let mut arr = crate::query::value::ArrayVal::constant(default);
    for &s in sel {
        let i = match Value::literal_select_index(store, s) {
            Some(i) => i,
            None => got.get(&store.args(s)[1])?.clone(),
        };
        arr.store(i, got.get(&s)?.clone());
    }
    arr.normalise_finite(&store.sorts, isort)
        .then_some(Value::Array(arr))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store with two arrays `a` and `b` from 32-bit indices to bytes.
    fn two_arrays() -> (TermStore, TermId, TermId) {
        let mut s = TermStore::new();
        let (b32, b8) = (s.sorts.bv(32), s.sorts.bv(8));
        let arr = s.sorts.array(b32, b8);
        let (a, b) = (s.mk_const("a", arr), s.mk_const("b", arr));
        (s, a, b)
    }

    #[test]
    fn arrays_only_read_are_asked_cell_by_cell() {
        let (mut s, a, b) = two_arrays();
        let b32 = s.sorts.bv(32);
        let x = s.mk_const("x", b32);
        let one = s.mk_bv_u64(1, 32);
        let two = s.mk_bv_u64(2, 32);
        let k = s.mk_bv_u64(7, 8);
        let a1 = s.app(Op::Select, vec![a, one]).unwrap();
        let a2 = s.app(Op::Select, vec![a, two]).unwrap();
        let bx = s.app(Op::Select, vec![b, x]).unwrap();
        let c1 = s.app(Op::Eq, vec![a1, k]).unwrap();
        let c2 = s.app(Op::Eq, vec![a2, bx]).unwrap();
        let leaves = [a, b, x];
        let cells = cell_reads(&s, &[c1, c2], &leaves);
        // a: cells 1 and 2 only; b at the symbolic index x: that cell and x are asked.
        let mut want = vec![a1, a2];
        want.sort_unstable();
        assert_eq!(cells.get(&a), Some(&want));
        assert_eq!(cells.get(&b), Some(&vec![bx]));
        assert!(!cells.contains_key(&x));
        let none = FxHashMap::default();
        assert_eq!(cell_terms(&s, &[bx], &none), vec![bx, x]);
        assert_eq!(cell_terms(&s, &want, &none), want);
        // c1 fixes a's cell 1 at 7: only cell 2 is asked.
        let fixed = fixed_cells(&s, &[c1, c2]);
        assert_eq!(fixed.len(), 1);
        assert_eq!(fixed.get(&a1), Some(&Value::bv_u64(8, 7)));
        assert_eq!(cell_terms(&s, &want, &fixed), vec![a2]);
        // The array built from the cells: those values, the element default elsewhere.
        let mut got = FxHashMap::default();
        got.insert(a1, Value::bv_u64(8, 7));
        got.insert(a2, Value::bv_u64(8, 9));
        let Some(Value::Array(v)) = array_of_cells(&s, a, &want, None, &got) else {
            panic!("no array")
        };
        assert_eq!(v.select(&Value::bv_u64(32, 1)), &Value::bv_u64(8, 7));
        assert_eq!(v.select(&Value::bv_u64(32, 2)), &Value::bv_u64(8, 9));
        assert_eq!(v.select(&Value::bv_u64(32, 3)), &Value::bv_u64(8, 0));
        // The probe for the solver's default reads a cell the component does not.
        let p = unread_cell(&mut s, a, &want).expect("a probe cell");
        assert_eq!(s.args(p)[0], a);
        assert!(!want.iter().any(|&c| s.args(c)[1] == s.args(p)[1]));
        let Some(Value::Array(v)) = array_of_cells(&s, a, &want, Some(Value::bv_u64(8, 42)), &got)
        else {
            panic!("no array")
        };
        assert_eq!(v.select(&Value::bv_u64(32, 3)), &Value::bv_u64(8, 42));
        assert_eq!(v.select(&Value::bv_u64(32, 1)), &Value::bv_u64(8, 7));
        // b's cell lies where the solver's model puts x; x's value must be there.
        got.insert(bx, Value::bv_u64(8, 5));
        assert!(array_of_cells(&s, b, &[bx], None, &got).is_none());
        got.insert(x, Value::bv_u64(32, 40));
        let Some(Value::Array(v)) = array_of_cells(&s, b, &[bx], None, &got) else {
            panic!("no array")
        };
        assert_eq!(v.select(&Value::bv_u64(32, 40)), &Value::bv_u64(8, 5));
        assert_eq!(v.select(&Value::bv_u64(32, 41)), &Value::bv_u64(8, 0));
    }

    /// An array stored into or compared whole is asked whole.
    #[test]
    fn arrays_used_whole_are_asked_whole() {
        let (mut s, a, b) = two_arrays();
        let one = s.mk_bv_u64(1, 32);
        let k = s.mk_bv_u64(7, 8);
        let a1 = s.app(Op::Select, vec![a, one]).unwrap();
        let read = s.app(Op::Eq, vec![a1, k]).unwrap();
        let st = s.app(Op::Store, vec![a, one, k]).unwrap();
        let same = s.app(Op::Eq, vec![st, b]).unwrap();
        let cells = cell_reads(&s, &[read, same], &[a, b]);
        assert!(cells.is_empty(), "{cells:?}");
    }
}
