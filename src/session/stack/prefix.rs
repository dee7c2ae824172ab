//! The diffing of prefixes: which conjuncts a query shares with what the backend holds,
//! and in what order the new ones are pushed.
//!
//! Invariants:
//! * A query's conjuncts are its assertions with top-level `and` split, top-level
//!   annotations stripped, `(= false X)` read as `(not X)`, `true` dropped and duplicates
//!   removed ([`split_conjuncts`]); the same assertions give the same conjuncts.
//! * The frames kept are the longest run from the bottom whose conjuncts the query all
//!   wants ([`frames_kept`]); everything above is popped.
//! * New conjuncts are pushed oldest-first, by the first time any query contained them
//!   ([`Sightings`]), one scope each, so the newest branch condition sits on top and the
//!   next query on a sibling path pops as little as possible; beyond `max_scopes` the
//!   oldest share one scope ([`scopes`]). Hybrid's stack pushes all the new conjuncts of
//!   a query in one scope (`max_scopes` 1).
//! * First sightings are kept for at most [`SEEN_MAX`] conjuncts; past that they are
//!   forgotten (a conjunct seen again then counts as new, which changes only the order).

use super::cse::SEEN_MAX;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};

/// When each conjunct was first seen in a query.
#[derive(Default)]
pub(super) struct Sightings {
    first_seen: FxHashMap<TermId, u64>,
    seen_counter: u64,
}

impl Sightings {
    /// Make room for `incoming` conjuncts: past [`SEEN_MAX`] the table starts over.
    pub(super) fn bound(&mut self, incoming: usize) {
        if self.first_seen.len() + incoming > SEEN_MAX {
            // Only an order of pushes: a conjunct seen again is then new.
            self.first_seen = FxHashMap::default();
        }
    }

    /// Note that `c` is in a query; true the first time.
    pub(super) fn see(&mut self, c: TermId) -> bool {
        if self.first_seen.contains_key(&c) {
            return false;
        }
        self.first_seen.insert(c, self.seen_counter);
        self.seen_counter += 1;
        true
    }

    /// Order `new` oldest-first (then by id).
    pub(super) fn oldest_first(&self, new: &mut [TermId]) {
        new.sort_by_key(|c| (self.first_seen.get(c).copied().unwrap_or(u64::MAX), *c));
    }

    /// The term store is being replaced: forget every id.
    pub(super) fn forget_terms(&mut self) {
        self.first_seen = FxHashMap::default();
    }
}

/// How many frames, from the bottom, hold only conjuncts in `want`.
pub(super) fn frames_kept(frames: &[Vec<TermId>], want: &FxHashSet<TermId>) -> usize {
    frames
        .iter()
        .take_while(|f| f.iter().all(|c| want.contains(c)))
        .count()
}

/// The scopes to push the `new` conjuncts in, oldest first: one each, but the oldest share
/// one scope when there are more than `max_scopes`.
pub(super) fn scopes(new: &[TermId], max_scopes: usize) -> impl Iterator<Item = &[TermId]> {
    let shared = new.len().saturating_sub(max_scopes - 1);
    std::iter::once(&new[..shared])
        .filter(|g| !g.is_empty())
        .chain(new[shared..].chunks(1))
}

/// The conjuncts of the assertions: top-level `and` split, annotations stripped at the top,
/// `(= false X)` read as `(not X)`, `true` dropped, duplicates removed (first kept).
pub fn split_conjuncts(store: &mut TermStore, assertions: &[TermId]) -> Vec<TermId> {
    let mut out = Vec::new();
    let mut seen = FxHashSet::default();
    let mut stack: Vec<TermId> = assertions.iter().rev().copied().collect();
    while let Some(t) = stack.pop() {
        match store.op(t) {
            Op::And => stack.extend(store.args(t).iter().rev().copied()),
            Op::Annot(_) => stack.push(store.args(t)[0]),
            Op::True => {}
            Op::Eq if store.args(t).len() == 2 && store.args(t)[0] == TermStore::FALSE => {
                let x = store.args(t)[1];
                let n = store.mk_not(x);
                if seen.insert(n) {
                    out.push(n);
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

/// Whether the command `text` sets `:global-declarations` (or z3's `:global-decls`).
pub(super) fn sets_global_declarations(text: &str) -> bool {
    let mut words = text
        .trim_start_matches(|c: char| c == '(' || c.is_whitespace())
        .split(|c: char| c.is_whitespace() || c == ')')
        .filter(|w| !w.is_empty());
    words.next() == Some("set-option")
        && matches!(words.next(), Some(":global-declarations" | ":global-decls"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_s_global_declarations_are_not_the_backend_s() {
        assert!(sets_global_declarations("(set-option :global-decls false)"));
        assert!(sets_global_declarations(
            "( set-option\n :global-declarations true)"
        ));
        assert!(!sets_global_declarations(
            "(set-option :global-declarations-x true)"
        ));
        assert!(!sets_global_declarations(
            "(set-option :produce-models true)"
        ));
        assert!(!sets_global_declarations("(set-logic QF_BV)"));
    }
}
