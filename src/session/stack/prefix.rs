//! The diffing of prefixes: which conjuncts a query shares with what the backend holds,
//! and in what order the new ones are pushed.
//!
//! Invariants:
//! * A query's conjuncts are its assertions with top-level `and` split, top-level
//!   annotations stripped, `(= false X)` read as `(not X)`, `true` dropped and duplicates
//!   removed ([`split_conjuncts`]); the same assertions give the same conjuncts.
//!   [`Split`] gives exactly those, splitting anew only the assertions past the ones the
//!   query shares, in order, with the last.
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
    /// Make room for `incoming` conjuncts: past [`SEEN_MAX`] the table starts over (then
    /// true).
    pub(super) fn bound(&mut self, incoming: usize) -> bool {
        let over = self.first_seen.len() + incoming > SEEN_MAX;
        if over {
            // Only an order of pushes: a conjunct seen again is then new.
            self.first_seen = FxHashMap::default();
        }
        over
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
    for &root in assertions {
        push_conjuncts(store, root, &mut out, &mut seen);
    }
    out
}

/// The conjuncts of `root` not in `seen` onto `out` (and into `seen`), in order.
fn push_conjuncts(
    store: &mut TermStore,
    root: TermId,
    out: &mut Vec<TermId>,
    seen: &mut FxHashSet<TermId>,
) {
    let mut stack = vec![root];
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
}

/// [`split_conjuncts`] kept from one query to the next. A query's assertions mostly
/// extend the last one's (a client asserts, pushes, pops): only the assertions past the
/// part the two share are split, and only the conjuncts of the ones left behind are
/// taken out, so a session whose state grows pays per query for what changed, not for
/// all it holds.
#[derive(Default)]
pub(super) struct Split {
    /// The assertions split, in order.
    roots: Vec<TermId>,
    /// `out.len()` after each of `roots`.
    ends: Vec<usize>,
    /// The conjuncts of `roots`, as `split_conjuncts` gives them.
    out: Vec<TermId>,
    /// The members of `out`.
    seen: FxHashSet<TermId>,
}

/// What [`Split::update`] changed.
pub(super) struct SplitChange {
    /// Conjuncts taken out (some may be back, from the assertions split anew).
    pub removed: Vec<TermId>,
    /// `conjuncts()[added_from..]` were split anew.
    pub added_from: usize,
}

impl Split {
    /// Make the conjuncts those of `roots`.
    pub(super) fn update(&mut self, store: &mut TermStore, roots: &[TermId]) -> SplitChange {
        let common = self
            .roots
            .iter()
            .zip(roots)
            .take_while(|(a, b)| a == b)
            .count();
        let keep = common.checked_sub(1).map_or(0, |i| self.ends[i]);
        let removed: Vec<TermId> = self.out.drain(keep..).collect();
        for c in &removed {
            self.seen.remove(c);
        }
        self.roots.truncate(common);
        self.ends.truncate(common);
        for &r in &roots[common..] {
            push_conjuncts(store, r, &mut self.out, &mut self.seen);
            self.roots.push(r);
            self.ends.push(self.out.len());
        }
        SplitChange {
            removed,
            added_from: keep,
        }
    }

    /// The conjuncts of the assertions last given to `update`.
    pub(super) fn conjuncts(&self) -> &[TermId] {
        &self.out
    }

    /// Whether `c` is one of `conjuncts()`.
    pub(super) fn contains(&self, c: TermId) -> bool {
        self.seen.contains(&c)
    }

    /// The set of `conjuncts()`.
    pub(super) fn set(&self) -> &FxHashSet<TermId> {
        &self.seen
    }

    /// How many of `conjuncts()` come from the first `n` assertions.
    pub(super) fn end_of(&self, n: usize) -> usize {
        n.checked_sub(1).map_or(0, |i| self.ends[i])
    }

    /// The term store is being replaced: forget every id.
    pub(super) fn forget_terms(&mut self) {
        *self = Split::default();
    }
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
    use crate::term::SortStore;

    /// Over a run of queries that extend, shrink and change the last one's assertions,
    /// `Split` gives what `split_conjuncts` gives, takes out what went, and splits anew
    /// only past the shared part.
    #[test]
    fn a_kept_split_is_the_split_of_each_query() {
        let mut s = TermStore::new();
        let v: Vec<TermId> = (0..6)
            .map(|i| s.mk_const(&format!("p{i}"), SortStore::BOOL))
            .collect();
        let and01 = s.app(Op::And, vec![v[0], v[1]]).unwrap();
        let eqf = s.app(Op::Eq, vec![TermStore::FALSE, v[2]]).unwrap();
        let and23 = s.app(Op::And, vec![eqf, v[3], v[1]]).unwrap();
        let pool = [and01, and23, v[4], v[5], TermStore::TRUE, v[1]];
        let mut split = Split::default();
        let mut last: Vec<TermId> = Vec::new();
        let mut seed = 0x2026_1128u64;
        for _ in 0..400 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let keep = (seed >> 33) as usize % (last.len() + 1);
            let add = (seed >> 40) as usize % 4;
            let mut roots: Vec<TermId> = last[..keep].to_vec();
            for k in 0..add {
                roots.push(pool[((seed >> (44 + 3 * k)) as usize) % pool.len()]);
            }
            let before: FxHashSet<TermId> = split.conjuncts().iter().copied().collect();
            let change = split.update(&mut s, &roots);
            let want = split_conjuncts(&mut s, &roots);
            assert_eq!(split.conjuncts(), want.as_slice());
            assert!(want.iter().all(|&c| split.contains(c)));
            assert_eq!(split.set().len(), want.len());
            // What went is among what was taken out; what is new was split anew.
            for c in &before {
                assert!(split.contains(*c) || change.removed.contains(c));
            }
            for c in &want[..change.added_from] {
                assert!(before.contains(c));
            }
            let shared = last.iter().zip(&roots).take_while(|(a, b)| a == b).count();
            assert_eq!(change.added_from, split.end_of(shared));
            assert_eq!(
                split.end_of(roots.len().min(2)),
                split_conjuncts(&mut s, &roots[..roots.len().min(2)]).len()
            );
            last = roots;
        }
    }

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
