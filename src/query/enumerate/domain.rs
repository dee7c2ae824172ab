//! The data of a small-domain decision: a component's atoms (constants and array cells of
//! a few bits), the decision's result, and the finishing of a model. Shared by the
//! exhaustive decision (`enumerate`) and the guesses and searches (`guess`); it imports
//! neither.
//!
//! Invariant: a finished model holds arrays in their canonical form for a finite index
//! sort, or there is no model.

use crate::query::eval::Model;
use crate::query::value::{BvVal, Value};
use crate::term::{Op, Sort, SortId, TermId, TermStore};

/// The most assignments a guess evaluates.
pub const GUESSES: usize = 12;

/// What trying every assignment, or a guess, showed.
#[derive(Debug)]
pub enum Decided {
    Sat(Model),
    Unsat,
}

/// One atom: a constant, or a cell of an array constant.
#[derive(Debug)]
pub(super) struct Atom {
    /// The `Sym` leaf of the constant or of the array.
    pub(super) leaf: TermId,
    /// For a cell, its literal index.
    pub(super) index: Option<Value>,
    /// The sort of the constant or of the cell (Bool, or a bit-vector of at most
    /// `MAX_BITS` bits when enumerated, 64 when guessed).
    pub(super) sort: SortId,
    pub(super) bits: u32,
}

impl Atom {
    /// Give the atom value `v` in `model` (a cell is stored into its array, which the
    /// model already holds); None when the array is missing.
    pub(super) fn assign(&self, model: &mut Model, v: Value) -> Option<()> {
        match &self.index {
            None => model.set(self.leaf, v),
            Some(i) => match model.get_mut(self.leaf) {
                Some(Value::Array(arr)) => arr.store(i.clone(), v),
                _ => return None,
            },
        }
        Some(())
    }
}

/// A component in the fragment this module decides, with its atoms.
#[derive(Debug)]
pub struct Small {
    pub(super) atoms: Vec<Atom>,
    /// Values of the bit-vector literals in the component, tried first (a constraint
    /// `(= #x24 (select a 5))` is met by the literal it names).
    pub(super) hints: Vec<Value>,
    /// Every assignment is tried (at most [`MAX_BITS`] bits and [`MAX_WORK`]); otherwise
    /// only a guess is made, which decides `sat` alone.
    pub(super) exhaustive: bool,
    /// Nodes in the component's DAG (the evaluations of one assignment).
    pub(super) nodes: usize,
}

/// Whether `x` is an array constant (a `Sym` leaf of an array sort).
pub(super) fn is_array_constant(store: &TermStore, x: TermId) -> bool {
    matches!(store.op(x), Op::Sym(_))
        && store.args(x).is_empty()
        && matches!(store.sorts.get(store.sort(x)), Sort::Array(..))
}

/// The value of a bit-vector literal of at most 64 bits.
pub(super) fn literal_u64(store: &TermStore, t: TermId) -> Option<u64> {
    match Value::from_term(store, t)? {
        Value::Bv {
            v: BvVal::Small(x), ..
        } if store.args(t).is_empty() => Some(x),
        _ => None,
    }
}

/// The satisfying model as served: arrays in their canonical form for a finite index sort.
pub(super) fn finish(store: &TermStore, mut model: Model, atoms: &[Atom]) -> Option<Model> {
    for a in atoms.iter().filter(|a| a.index.is_some()) {
        let Sort::Array(isort, _) = *store.sorts.get(store.sort(a.leaf)) else {
            return None;
        };
        if let Some(Value::Array(arr)) = model.get_mut(a.leaf) {
            if !arr.normalise_finite(&store.sorts, isort) {
                return None;
            }
        }
    }
    Some(model)
}
