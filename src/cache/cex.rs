//! Counterexample-reasoning index: a UBTree (unlimited branching tree; Hoffmann &
//! Koehler 1999, as used by KLEE's CexCachingSolver) over sets of conjunct ids.
//!
//! A set is a sorted, duplicate-free `&[u64]`; it is stored as the path of its elements
//! in a trie whose edges are ordered by element. Lookups walk only the part of the trie
//! compatible with the query:
//!
//! * [`SetIndex::find_subset`]: is some stored set `S ⊆ Q`? From a node, only children
//!   labelled with a remaining element of `Q` are followed. Used for "a stored unsat
//!   core is contained in the query, so the query is unsat".
//! * [`SetIndex::find_supersets`]: stored sets `S ⊇ Q`. From a node waiting for the
//!   next query element `q`, only children labelled `<= q` are followed (a larger label
//!   can never be followed by `q` on a sorted path). Their sat models are candidates
//!   for the query.
//!
//! Cost: a query element that no stored set contains answers `find_supersets` at once
//! (each element's number of stored sets is kept), so a query with a new conjunct (a tool
//! that names every query's terms afresh asks nothing else) costs nothing however large
//! the index; otherwise the walk visits at most [`SUPERSET_VISITS`] nodes, so its cost
//! does not grow with the session.
//!
//! Bound: at most `max_sets` sets are kept, in at most `max_nodes` trie nodes (by default
//! [`MAX_NODES`], about 48 bytes each: a tool that names every query's terms afresh makes a
//! new path of nodes for every set, so a count of sets alone bounds nothing). Inserting a
//! new set into a full index first clears the whole index (cheap, and stale counterexamples are only an optimisation;
//! the hit rate recovers as queries repeat). Inserting an already stored set replaces
//! its value and never clears. Input slices that are not strictly increasing are
//! sorted and deduplicated first.

use rustc_hash::FxHashMap;

/// Nodes one `find_supersets` walk may visit.
pub const SUPERSET_VISITS: usize = 4096;

/// A trie node: its children sorted by label. A vector, not a map: most nodes of a
/// session's index have one child (the sets share prefixes, then part), and a one-child
/// vector costs a tenth of a B-tree map's smallest node.
struct Node<V> {
    value: Option<V>,
    children: Vec<(u64, Node<V>)>,
}

impl<V> Node<V> {
    fn new() -> Self {
        Node {
            value: None,
            children: Vec::new(),
        }
    }

    fn child(&self, e: u64) -> Option<&Node<V>> {
        let i = self.children.binary_search_by_key(&e, |c| c.0).ok()?;
        Some(&self.children[i].1)
    }

    /// The child labelled `e`, made if missing; the flag says whether it was made.
    fn child_or_new(&mut self, e: u64) -> (&mut Node<V>, bool) {
        match self.children.binary_search_by_key(&e, |c| c.0) {
            Ok(i) => (&mut self.children[i].1, false),
            Err(i) => {
                if self.children.capacity() == 0 {
                    self.children.reserve_exact(1);
                }
                self.children.insert(i, (e, Node::new()));
                (&mut self.children[i].1, true)
            }
        }
    }

    /// The children labelled at most `e`.
    fn up_to(&self, e: u64) -> &[(u64, Node<V>)] {
        let end = self.children.partition_point(|c| c.0 <= e);
        &self.children[..end]
    }
}

pub struct SetIndex<V> {
    root: Node<V>,
    /// For each element, how many stored sets contain it.
    elements: FxHashMap<u64, u32>,
    len: usize,
    max_sets: usize,
    /// Trie nodes now (the root not counted), and the most there may be.
    nodes: usize,
    max_nodes: usize,
    clears: u64,
}

/// The default bound on an index's trie nodes (about 48 bytes each).
pub const MAX_NODES: usize = 1 << 20;

fn normalise(set: &[u64]) -> std::borrow::Cow<'_, [u64]> {
    if set.windows(2).all(|w| w[0] < w[1]) {
        std::borrow::Cow::Borrowed(set)
    } else {
        let mut v = set.to_vec();
        v.sort_unstable();
        v.dedup();
        std::borrow::Cow::Owned(v)
    }
}

impl<V> SetIndex<V> {
    /// An index holding at most `max_sets` sets (at least 1) in at most [`MAX_NODES`]
    /// trie nodes.
    pub fn new(max_sets: usize) -> Self {
        Self::with_max_nodes(max_sets, MAX_NODES)
    }

    /// An index holding at most `max_sets` sets (at least 1) in at most `max_nodes` trie
    /// nodes (a set longer than that is not stored).
    pub fn with_max_nodes(max_sets: usize, max_nodes: usize) -> Self {
        SetIndex {
            root: Node::new(),
            elements: FxHashMap::default(),
            len: 0,
            max_sets: max_sets.max(1),
            nodes: 0,
            max_nodes,
            clears: 0,
        }
    }

    /// Trie nodes held now.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn max_sets(&self) -> usize {
        self.max_sets
    }

    /// How many times the size bound emptied the index.
    pub fn clears(&self) -> u64 {
        self.clears
    }

    pub fn clear(&mut self) {
        self.root = Node::new();
        self.elements = FxHashMap::default();
        self.len = 0;
        self.nodes = 0;
    }

    fn lookup_exact(&self, set: &[u64]) -> Option<&V> {
        let mut n = &self.root;
        for e in set {
            n = n.child(*e)?;
        }
        n.value.as_ref()
    }

    /// The value stored for exactly this set.
    pub fn get(&self, set: &[u64]) -> Option<&V> {
        self.lookup_exact(&normalise(set))
    }

    /// Stores `value` for `set`, returning the value it replaces.
    pub fn insert(&mut self, set: &[u64], value: V) -> Option<V> {
        let set = normalise(set);
        if set.len() > self.max_nodes {
            return None;
        }
        if (self.len >= self.max_sets || self.nodes + set.len() > self.max_nodes)
            && self.lookup_exact(&set).is_none()
        {
            self.clear();
            self.clears += 1;
        }
        let mut n = &mut self.root;
        for &e in set.iter() {
            let (c, made) = n.child_or_new(e);
            self.nodes += usize::from(made);
            n = c;
        }
        let old = n.value.replace(value);
        if old.is_none() {
            self.len += 1;
            for &e in set.iter() {
                *self.elements.entry(e).or_insert(0) += 1;
            }
        }
        old
    }

    /// Some stored set that is a subset of `query` (the empty set included), if any.
    pub fn find_subset(&self, query: &[u64]) -> Option<&V> {
        let q = normalise(query);
        fn walk<'a, V>(n: &'a Node<V>, q: &[u64]) -> Option<&'a V> {
            if let Some(v) = &n.value {
                return Some(v);
            }
            if n.children.is_empty() {
                return None;
            }
            for (i, e) in q.iter().enumerate() {
                if let Some(c) = n.child(*e) {
                    if let Some(v) = walk(c, &q[i + 1..]) {
                        return Some(v);
                    }
                }
            }
            None
        }
        walk(&self.root, &q)
    }

    /// Up to `limit` stored sets that contain every element of `query` (fewer when the
    /// walk reaches [`SUPERSET_VISITS`] nodes).
    pub fn find_supersets(&self, query: &[u64], limit: usize) -> Vec<&V> {
        let q = normalise(query);
        let mut out = Vec::new();
        if q.iter().any(|e| !self.elements.contains_key(e)) {
            return out;
        }
        struct Walk<'a, V> {
            out: Vec<&'a V>,
            limit: usize,
            visits: usize,
        }
        impl<'a, V> Walk<'a, V> {
            fn done(&mut self) -> bool {
                self.visits += 1;
                self.out.len() >= self.limit || self.visits > SUPERSET_VISITS
            }
            fn all(&mut self, n: &'a Node<V>) {
                if self.done() {
                    return;
                }
                if let Some(v) = &n.value {
                    self.out.push(v);
                }
                for (_, c) in &n.children {
                    self.all(c);
                    if self.out.len() >= self.limit || self.visits > SUPERSET_VISITS {
                        return;
                    }
                }
            }
            fn walk(&mut self, n: &'a Node<V>, q: &[u64]) {
                if self.done() {
                    return;
                }
                let Some((&first, rest)) = q.split_first() else {
                    self.visits -= 1;
                    return self.all(n);
                };
                for (e, c) in n.up_to(first) {
                    let e = *e;
                    if e == first {
                        self.walk(c, rest);
                    } else {
                        self.walk(c, q);
                    }
                    if self.out.len() >= self.limit || self.visits > SUPERSET_VISITS {
                        return;
                    }
                }
            }
        }
        let mut w = Walk {
            out,
            limit,
            visits: 0,
        };
        w.walk(&self.root, &q);
        out = w.out;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn node_bound_clears_and_counts() {
        let mut ix = SetIndex::with_max_nodes(100, 6);
        ix.insert(&[1, 2, 3], 'a');
        ix.insert(&[1, 2, 4], 'b');
        assert_eq!((ix.len(), ix.nodes(), ix.clears()), (2, 4, 0));
        // Three more nodes would pass six: the index starts over.
        ix.insert(&[5, 6, 7], 'c');
        assert_eq!((ix.len(), ix.nodes(), ix.clears()), (1, 3, 1));
        assert_eq!(ix.get(&[5, 6, 7]), Some(&'c'));
        assert_eq!(ix.get(&[1, 2, 3]), None);
        // Storing a set already there makes no node and never clears.
        ix.insert(&[5, 6, 7], 'd');
        assert_eq!((ix.len(), ix.nodes(), ix.clears()), (1, 3, 1));
        // A set longer than the bound is not stored.
        assert_eq!(ix.insert(&[1, 2, 3, 4, 5, 6, 7], 'e'), None);
        assert_eq!(ix.get(&[1, 2, 3, 4, 5, 6, 7]), None);
        assert_eq!(ix.find_subset(&[5, 6, 7, 8]), Some(&'d'));
    }

    #[test]
    fn cex_basic() {
        let mut ix = SetIndex::new(100);
        ix.insert(&[1, 3, 5], "a");
        ix.insert(&[2, 3], "b");
        ix.insert(&[1, 3, 5, 7], "c");
        assert_eq!(ix.len(), 3);
        assert_eq!(ix.find_subset(&[1, 2, 3, 4, 5]), Some(&"a"));
        assert_eq!(ix.find_subset(&[2, 3, 9]), Some(&"b"));
        assert_eq!(ix.find_subset(&[1, 5, 7]), None);
        let mut s = ix.find_supersets(&[3], 10);
        s.sort();
        assert_eq!(s, vec![&"a", &"b", &"c"]);
        assert_eq!(ix.find_supersets(&[5, 7], 10), vec![&"c"]);
        assert_eq!(ix.find_supersets(&[3], 2).len(), 2);
        assert!(ix.find_supersets(&[4], 10).is_empty());
        // Unsorted input is normalised.
        assert_eq!(ix.insert(&[5, 1, 3, 3], "a2"), Some("a"));
        assert_eq!(ix.len(), 3);
        assert_eq!(ix.get(&[1, 3, 5]), Some(&"a2"));
        // Empty set is a subset of everything.
        ix.insert(&[], "e");
        assert_eq!(ix.find_subset(&[42]), Some(&"e"));
    }

    #[test]
    fn cex_bound_clears() {
        let mut ix = SetIndex::new(3);
        for i in 0..3u64 {
            ix.insert(&[i], i);
        }
        assert_eq!(ix.len(), 3);
        ix.insert(&[1], 10); // replacement: no clear
        assert_eq!((ix.len(), ix.clears()), (3, 0));
        ix.insert(&[9], 9);
        assert_eq!((ix.len(), ix.clears()), (1, 1));
        assert_eq!(ix.find_subset(&[0, 1, 2]), None);
        assert_eq!(ix.find_subset(&[9]), Some(&9));
    }

    #[test]
    fn cex_does_not_scan_disjoint_sets() {
        // 50k sets over elements >= 1000; a query over small elements must not visit them:
        // from the root only children labelled with query elements are followed.
        let mut ix = SetIndex::new(1_000_000);
        for i in 0..50_000u64 {
            ix.insert(&[1000 + i, 100_000 + i], i);
        }
        let t = std::time::Instant::now();
        for _ in 0..10_000 {
            assert!(ix.find_subset(&[1, 2, 3, 4]).is_none());
            assert!(ix.find_supersets(&[5, 6], 10).is_empty());
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn superset_walks_are_bounded() {
        // A session that names every query's terms afresh: each query has a conjunct newer
        // than every stored set, and used to walk the whole trie (all labels are smaller).
        let mut ix = SetIndex::new(1_000_000);
        for i in 0..20_000u64 {
            ix.insert(&[i, i + 1, 30_000], i);
        }
        assert!(ix.find_supersets(&[5, 50_000], 10).is_empty());
        // Every stored set contains 30_000: the walk stops at its visit budget.
        let found = ix.find_supersets(&[30_000], usize::MAX);
        assert!(!found.is_empty() && found.len() <= SUPERSET_VISITS);
        // Unaffected below the budget.
        assert_eq!(ix.find_supersets(&[7, 8], 10), vec![&7]);
        ix.clear();
        assert!(ix.find_supersets(&[30_000], 10).is_empty());
    }

    fn sets() -> impl Strategy<Value = Vec<BTreeSet<u64>>> {
        prop::collection::vec(prop::collection::btree_set(0u64..10, 0..6), 0..40)
    }

    proptest! {
        #[test]
        fn cex_matches_brute_force(stored in sets(), queries in prop::collection::vec(prop::collection::btree_set(0u64..10, 0..8), 1..20), limit in 1usize..6) {
            let mut ix = SetIndex::new(usize::MAX);
            let mut oracle: Vec<(Vec<u64>, usize)> = Vec::new();
            for (i, s) in stored.iter().enumerate() {
                let v: Vec<u64> = s.iter().copied().collect();
                ix.insert(&v, i);
                match oracle.iter_mut().find(|(o, _)| *o == v) {
                    Some(slot) => slot.1 = i,
                    None => oracle.push((v, i)),
                }
            }
            prop_assert_eq!(ix.len(), oracle.len());
            for q in &queries {
                let qv: Vec<u64> = q.iter().copied().collect();
                let is_sub = |s: &Vec<u64>| s.iter().all(|e| q.contains(e));
                let is_sup = |s: &Vec<u64>| q.iter().all(|e| s.contains(e));
                // find_subset
                let want_any = oracle.iter().any(|(s, _)| is_sub(s));
                match ix.find_subset(&qv) {
                    None => prop_assert!(!want_any),
                    Some(&v) => {
                        let (s, _) = oracle.iter().find(|(_, ov)| *ov == v).expect("value stored");
                        prop_assert!(is_sub(s));
                    }
                }
                // find_supersets, unlimited: exactly the oracle's answer.
                let mut got: Vec<usize> = ix.find_supersets(&qv, usize::MAX).into_iter().copied().collect();
                got.sort_unstable();
                let mut want: Vec<usize> = oracle.iter().filter(|(s, _)| is_sup(s)).map(|(_, v)| *v).collect();
                want.sort_unstable();
                prop_assert_eq!(&got, &want);
                // limited: a prefix-sized subset of the answer.
                let lim: Vec<usize> = ix.find_supersets(&qv, limit).into_iter().copied().collect();
                prop_assert_eq!(lim.len(), want.len().min(limit));
                prop_assert!(lim.iter().all(|v| want.contains(v)));
            }
        }
    }
}
