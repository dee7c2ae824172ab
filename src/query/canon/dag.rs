//! A term DAG below a set of roots in local indices (ascending term ids, so every node comes
//! after its arguments), for passes that keep per-node data in vectors rather than maps.

use crate::term::visit::Pooled;
use crate::term::{TermId, TermStore};
use rustc_hash::FxHashMap;

/// The DAG below a set of roots with local indices, so that the passes below keep their
/// per-node data in vectors rather than hash maps: node `i` is `ids[i]` (ascending, so
/// every node comes after its arguments) and its arguments are `kids(i)`, as local indices
/// in the store's argument order.
pub(super) struct Dag {
    pub(super) ids: Vec<TermId>,
    pub(super) index: Pooled<FxHashMap<TermId, u32>>,
    pub(super) args: Vec<u32>,
    pub(super) spans: Vec<(u32, u32)>,
}

thread_local! {
    /// `Dag::index` tables (see `term::visit`).
    static DAG_INDEX: std::cell::RefCell<Vec<FxHashMap<TermId, u32>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Dag {
    pub(super) fn new(store: &TermStore, roots: &[TermId]) -> Dag {
        // One table serves as the walk's visited set and then as the local index: every
        // node reachable from the roots, then sorted ascending, then numbered.
        let mut index = Pooled::take(&DAG_INDEX);
        let mut ids: Vec<TermId> = Vec::new();
        let mut stack: Vec<TermId> = roots.to_vec();
        while let Some(x) = stack.pop() {
            if let std::collections::hash_map::Entry::Vacant(e) = index.entry(x) {
                e.insert(0);
                ids.push(x);
                stack.extend_from_slice(store.args(x));
            }
        }
        ids.sort_unstable();
        for (i, x) in ids.iter().enumerate() {
            if let Some(v) = index.get_mut(x) {
                *v = i as u32;
            }
        }
        let mut args = Vec::with_capacity(ids.len() * 2);
        let mut spans = Vec::with_capacity(ids.len());
        for &x in &ids {
            let start = args.len() as u32;
            // Every argument of a reached node was reached.
            args.extend(store.args(x).iter().map(|a| index[a]));
            spans.push((start, args.len() as u32));
        }
        Dag {
            ids,
            index,
            args,
            spans,
        }
    }
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }
    pub(super) fn view(&self) -> Local<'_> {
        Local {
            term: &self.ids,
            args: &self.args,
            spans: &self.spans,
        }
    }
    #[inline]
    pub(super) fn kids(&self, i: usize) -> &[u32] {
        self.view().kids(i)
    }
    #[inline]
    pub(super) fn local(&self, t: TermId) -> usize {
        self.index[&t] as usize
    }
}

/// A DAG in local indices, borrowed: node `i` is the term `term[i]`, whose arguments are the
/// nodes `kids(i)`, in order. Every term reachable from a node printed has one index.
#[derive(Clone, Copy)]
pub(super) struct Local<'a> {
    pub(super) term: &'a [TermId],
    pub(super) args: &'a [u32],
    pub(super) spans: &'a [(u32, u32)],
}

impl<'a> Local<'a> {
    #[inline]
    pub(super) fn kids(&self, i: usize) -> &'a [u32] {
        let (a, b) = self.spans[i];
        &self.args[a as usize..b as usize]
    }
}
