//! Common subexpression macros (`stack-cse`): a subterm that recurs across conjuncts is
//! defined once in the backend with `define-fun` and named in every assertion after.
//!
//! Invariants:
//! * A subterm gets a macro when it occurs in at least two distinct conjuncts seen so far,
//!   has at least [`CSE_MIN_NODES`] nodes, has arguments, is not the conjunct itself, and
//!   lies outside quantifiers and annotations; its macro is defined before the assertion
//!   that first needs it; a macro's body names the macros already defined.
//! * Macros are defined at the base level (`:global-declarations`), so they survive pops;
//!   they live in [`StackNames`] and go with its backend generation. Macro names
//!   `sp!m<k>` are never reused within a session.
//! * The occurrence and size tables hold at most [`SEEN_MAX`] entries each; past that,
//!   counting starts over (which decides only which subterms get macros).

use super::names::StackNames;
use crate::smt2::printer::write_term;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};

/// Bound on the conjuncts whose first sight is kept, and on the subterms whose occurrences
/// and sizes are counted for CSE (each table is emptied when exceeded).
pub(super) const SEEN_MAX: usize = 1 << 20;
/// A CSE candidate must have at least this many nodes.
const CSE_MIN_NODES: u32 = 4;

/// What CSE has counted of the conjuncts seen so far.
#[derive(Default)]
pub(super) struct Cse {
    /// In how many distinct conjuncts each subterm occurs.
    occurrences: FxHashMap<TermId, u32>,
    sizes: FxHashMap<TermId, u32>,
    macro_counter: u64,
}

impl Cse {
    /// The term store is being replaced: drop every table keyed by a term id.
    pub(super) fn forget_terms(&mut self) {
        self.occurrences = FxHashMap::default();
        self.sizes = FxHashMap::default();
    }

    /// Start counting over once a table has grown past [`SEEN_MAX`].
    pub(super) fn bound(&mut self) {
        if self.sizes.len() > SEEN_MAX || self.occurrences.len() > SEEN_MAX {
            self.forget_terms();
        }
    }

    /// Count the subterms of a conjunct seen for the first time.
    pub(super) fn count_subterms(&mut self, store: &TermStore, c: TermId) {
        let mut seen: FxHashSet<TermId> = FxHashSet::default();
        let mut stack = vec![c];
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            if matches!(store.op(t), Op::Forall(_) | Op::Exists(_)) {
                continue;
            }
            *self.occurrences.entry(t).or_insert(0) += 1;
            stack.extend(store.args(t).iter().copied());
        }
        let mut ids: Vec<TermId> = seen.into_iter().collect();
        ids.sort_unstable();
        for t in ids {
            if !self.sizes.contains_key(&t) {
                let s = 1 + store
                    .args(t)
                    .iter()
                    .map(|a| self.sizes.get(a).copied().unwrap_or(1))
                    .sum::<u32>();
                self.sizes.insert(t, s.min(1 << 20));
            }
        }
    }

    /// Define, before asserting `c`, a macro for each repeated subterm of `c` that has none.
    pub(super) fn define_macros(
        &mut self,
        store: &TermStore,
        c: TermId,
        names: &mut StackNames,
        cmds: &mut Vec<String>,
    ) {
        let mut seen: FxHashSet<TermId> = FxHashSet::default();
        let mut stack = vec![c];
        let mut cands: Vec<TermId> = Vec::new();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) || names.macros.contains_key(&t) {
                continue;
            }
            if matches!(store.op(t), Op::Forall(_) | Op::Exists(_) | Op::Annot(_)) {
                continue;
            }
            if t != c
                && !store.args(t).is_empty()
                && self.occurrences.get(&t).copied().unwrap_or(0) >= 2
                && self.sizes.get(&t).copied().unwrap_or(0) >= CSE_MIN_NODES
            {
                cands.push(t);
            }
            stack.extend(store.args(t).iter().copied());
        }
        cands.sort_unstable();
        for t in cands {
            let name = format!("sp!m{}", self.macro_counter);
            self.macro_counter += 1;
            let mut s = format!("(define-fun {name} () ");
            store.sorts.print(store.sort(t), &mut s);
            s.push(' ');
            write_term(store, t, names, &mut s);
            s.push(')');
            cmds.push(s);
            names.macros.insert(t, name);
        }
    }
}
