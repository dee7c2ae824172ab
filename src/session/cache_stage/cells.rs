//! Reading a backend's model of a component: an array the component reads only at literal
//! indices is asked for those cells (and, where it pays, one unread cell for the solver's
//! default), not as a whole (z3 5.4 takes ~5 ms to print a KLEE array's whole model).
//!
//! Invariant: an array value built from cells holds exactly the solver's values at the cells
//! the component reads; everywhere else it holds the default (the solver's, when probed).

use crate::query::value::Value;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};

/// The array leaves among `leaves` that `conj` reads only as `(select a i)` with a
/// literal index `i`, with those select terms (ascending, no duplicates). An array that
/// occurs anywhere else (a symbolic index, a store, an equality) is not in the map.
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
            let literal_index = k == 0 && Value::literal_select_index(store, t).is_some();
            if literal_index {
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

/// `(select a i)` for a bit-vector index `i` that none of `sel` reads (the highest such
/// value), or None (other index sorts, or no such index among the 64 highest).
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

/// The array value of `a` from the values of its cells (`sel`, from `cell_reads`), the
/// element sort's default elsewhere.
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
        let i = Value::from_term(store, store.args(s)[1])?;
        arr.store(i, got.get(&s)?.clone());
    }
    arr.normalise_finite(&store.sorts, isort)
        .then_some(Value::Array(arr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_read_at_literal_indices_are_asked_cell_by_cell() {
        let mut s = TermStore::new();
        let (b32, b8) = (s.sorts.bv(32), s.sorts.bv(8));
        let arr = s.sorts.array(b32, b8);
        let (a, b) = (s.mk_const("a", arr), s.mk_const("b", arr));
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
        // a: cells 1 and 2 only; b is read at a symbolic index: asked whole.
        let mut want = vec![a1, a2];
        want.sort_unstable();
        assert_eq!(cells.get(&a), Some(&want));
        assert!(!cells.contains_key(&b) && !cells.contains_key(&x));
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
    }
}
