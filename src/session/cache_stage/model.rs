//! Component models: evaluated on conjuncts, merged into a query's model, restricted to a
//! component's constants, and encoded for the result store (one value per canonical
//! constant, in canonical order).
//!
//! Invariants: `satisfies` is the only judge of a model (completed with defaults);
//! `decode_model` gives a model only when every value has its constant's sort; `merge`
//! copies, for an array both models hold, only the cells the component reads.

use crate::query::eval::{Evaluator, Model};
use crate::query::slice::free_symbols_of;
use crate::query::value::Value;
use crate::smt2::parser::parse_term;
use crate::smt2::printer::{print_term, BackendNames};
use crate::term::signature::Signature;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::FxHashMap;

/// Whether every term of `ts` evaluates to true under `m` (completed with defaults).
///
/// Evaluated last to first: conjuncts come in assertion order (and `whole` in ascending
/// term id, i.e. interning order), and a model from an earlier query of the same path
/// usually satisfies the old prefix and fails on the newest branch condition, so a model
/// that does not fit is rejected after one conjunct rather than after the whole prefix
/// (hybrid replay of cyphert-sprs: 462M instructions in here before, 168M after; the
/// answer is the same either way, a conjunction).
pub fn satisfies(store: &TermStore, m: &Model, ts: &[TermId]) -> bool {
    let mut ev = Evaluator::new(store, m, true);
    ts.iter().rev().all(|&t| ev.is_true(t).unwrap_or(false))
}

/// Add a component's model to the query's model. Components share no constant, but they
/// may share an array whose cells they read at different constant indices (KLEE's
/// independence rule): for an array already in the model, only the cells this component
/// reads are copied, so the other components' cells (and the default) stay as they were.
pub(super) fn merge(store: &TermStore, into: &mut Model, from: &Model, conj: &[TermId]) {
    // The cells `conj` reads of each array, found only when an array is in both models
    // (components may share an array, each reading its own cells: KLEE's rule in `slice`).
    let mut cells: Option<FxHashMap<TermId, Vec<TermId>>> = None;
    for (l, v) in from.iter() {
        match (into.get_mut(l), v) {
            (Some(Value::Array(have)), Value::Array(new)) => {
                let cells = cells.get_or_insert_with(|| literal_cells(store, conj));
                let idx = cells.get(&l).map(|v| v.as_slice()).unwrap_or(&[]);
                for &i in idx {
                    if let Some(iv) = Value::from_term(store, i) {
                        let e = new.select(&iv).clone();
                        have.store(iv, e);
                    }
                }
            }
            _ => into.set(l, v.clone()),
        }
    }
}

/// The index terms of every `(select a i)` in `conj` with `a` an array constant, by array.
fn literal_cells(store: &TermStore, conj: &[TermId]) -> FxHashMap<TermId, Vec<TermId>> {
    let mut cells: FxHashMap<TermId, Vec<TermId>> = FxHashMap::default();
    let mut seen = crate::term::visit::Visited::new();
    let mut stack: Vec<TermId> = conj.to_vec();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        if store.op(t) == Op::Select {
            let (a, i) = (store.args(t)[0], store.args(t)[1]);
            if store.args(a).is_empty() && matches!(store.op(a), Op::Sym(_)) {
                cells.entry(a).or_default().push(i);
            }
        }
        stack.extend(store.args(t).iter().copied());
    }
    cells
}

pub(super) fn restrict(store: &TermStore, m: &Model, conj: &[TermId]) -> Model {
    let mut out = Model::new();
    for l in free_symbols_of(store, conj) {
        if let Some(v) = m.get(l) {
            out.set(l, v.clone());
        } else {
            let mut ev = Evaluator::new(store, m, true);
            if let Ok(Some(v)) = ev.eval(l) {
                out.set(l, v);
            }
        }
    }
    out
}

/// A model as stored: one value per canonical constant, in canonical order, one per line.
pub(super) fn encode_model(
    store: &mut TermStore,
    m: &Model,
    order: &[(usize, TermId)],
) -> Option<String> {
    let mut s = String::new();
    for &(_, leaf) in order {
        let sort = store.sort(leaf);
        let v = match m.get(leaf) {
            Some(v) => v.clone(),
            None => Value::default_of(&store.sorts, sort)?,
        };
        // The usual values without interning a term to print (`literal::write`).
        if !crate::query::literal::write(&v, sort, &store.sorts, &mut s) {
            let t = v.to_term(store, sort);
            s.push_str(&print_term(store, t, &BackendNames));
        }
        s.push('\n');
    }
    Some(s)
}

pub(super) fn decode_model(
    store: &mut TermStore,
    text: &str,
    order: &[(usize, TermId)],
) -> Option<Model> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    if lines.len() != order.len() {
        return None;
    }
    let empty = Signature::default();
    let mut m = Model::new();
    for (&(_, leaf), line) in order.iter().zip(lines) {
        let sort = store.sort(leaf);
        // Read straight from the text where it is a literal of the usual forms; else as a
        // term (which interns it).
        let v = match crate::query::literal::parse(line, sort, &store.sorts) {
            Some(v) => v,
            None => {
                let t = parse_term(store, &empty, line).ok()?;
                Value::from_term(store, t)?
            }
        };
        if !v.has_sort(&store.sorts, sort) {
            return None;
        }
        m.set(leaf, v);
    }
    Some(m)
}

/// The index `i` of a canonical constant `\0c<i>`.
pub(super) fn canon_index(store: &TermStore, leaf: TermId) -> usize {
    match store.op(leaf) {
        Op::Sym(s) => store
            .sym_name(s)
            .rsplit('c')
            .next()
            .and_then(|d| d.parse().ok())
            .unwrap_or(usize::MAX),
        _ => usize::MAX,
    }
}
