//! The structural hashes of canonicalisation (passes 2-3): fixed functions of a term's
//! structure (sorts, operators, indices, literals, uninterpreted symbol names), never of term
//! ids or free-constant names, refined by the contexts each free constant occurs in. They
//! order arguments and conjuncts, so changing them changes canonical texts and every key.

use super::dag::Dag;
use crate::term::{Op, SortId, Sym, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};

// ---------------------------------------------------------------- fixed hashing

pub(super) const K1: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
pub(super) fn fin(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
#[inline]
pub(super) fn mix(h: u64, v: u64) -> u64 {
    fin(h.rotate_left(23) ^ v.wrapping_mul(K1) ^ 0x2545_F491_4F6C_DD1D)
}
pub(super) fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = 0x51_7C_C1_B7_27_22_0A_95u64 ^ b.len() as u64;
    for c in b.chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h = mix(h, u64::from_le_bytes(w));
    }
    h
}

pub(super) fn is_commutative(op: Op) -> bool {
    matches!(
        op,
        Op::And
            | Op::Or
            | Op::Xor
            | Op::Eq
            | Op::Distinct
            | Op::BvAdd
            | Op::BvMul
            | Op::BvAnd
            | Op::BvOr
            | Op::BvXor
            | Op::Add
            | Op::Mul
    )
}

pub(super) fn is_free_leaf(store: &TermStore, t: TermId, bound: &FxHashSet<Sym>) -> bool {
    matches!(store.op(t), Op::Sym(s) if store.args(t).is_empty() && !bound.contains(&s))
}

thread_local! {
    /// `plain_op_hash` results. Plain operators refer to nothing in a store (no symbol,
    /// literal or binder id), so one table serves every store of the thread.
    static PLAIN_OP_HASH: std::cell::RefCell<FxHashMap<Op, u64>> =
        std::cell::RefCell::new(FxHashMap::default());
}

/// The hash of a plain operator's `Debug` text (its name and indices, e.g. `Extract(7, 0)`,
/// or a small bit-vector literal's value, `Bv(65)`), memoised per thread (bounded).
pub(super) fn plain_op_hash(op: Op) -> u64 {
    PLAIN_OP_HASH.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(&h) = m.get(&op) {
            return h;
        }
        if m.len() >= 1 << 16 {
            m.clear();
        }
        let h = hash_bytes(format!("{op:?}").as_bytes());
        m.insert(op, h);
        h
    })
}

/// What each node contributes to its structural hash apart from its arguments (and, for a
/// free constant, its colour): its sort, and its operator's name, indices, literal or
/// symbol name. A function of structure only, never of term ids.
pub(super) struct OwnHashes {
    sort_h: FxHashMap<SortId, u64>,
    /// The words an operator mixes in (see `op_words`), by operator.
    op_h: FxHashMap<Op, [u64; 2]>,
}

impl OwnHashes {
    fn sort_hash(&mut self, store: &TermStore, s: SortId) -> u64 {
        *self
            .sort_h
            .entry(s)
            .or_insert_with(|| hash_bytes(store.sorts.text(s).as_bytes()))
    }
    /// The words an operator mixes into its node's hash (the second only for operators that
    /// carry a literal). Memoised per operator, as formatting them is costly.
    fn op_words(store: &TermStore, op: Op) -> [u64; 2] {
        match op {
            Op::Sym(s) => [hash_bytes(store.sym_name(s).as_bytes()), 0],
            Op::BvWide(l) | Op::Num(l) | Op::Dec(l) | Op::Str(l) | Op::Other(l) | Op::Annot(l) => [
                hash_bytes(format!("{op:?}").split('(').next().unwrap_or("").as_bytes()),
                hash_bytes(format!("{:?}", store.get_lit(l)).as_bytes()),
            ],
            op => [plain_op_hash(op), 0],
        }
    }
    /// The own hash of node `t`; `free` when it is a free constant (its name is not part of
    /// it: the colour is mixed in instead).
    fn own(&mut self, store: &TermStore, t: TermId, free: bool) -> u64 {
        let n = store.node(t);
        let sh = self.sort_hash(store, n.sort);
        let mut h = mix(0xC0FFEE, sh);
        if free {
            return h;
        }
        match n.op {
            Op::Forall(b) | Op::Exists(b) => {
                h = mix(h, matches!(n.op, Op::Forall(_)) as u64);
                for &(s, so) in store.binders[b as usize].iter() {
                    h = mix(h, hash_bytes(store.sym_name(s).as_bytes()));
                    h = mix(h, self.sort_hash(store, so));
                }
            }
            op => {
                let w = *self
                    .op_h
                    .entry(op)
                    .or_insert_with(|| Self::op_words(store, op));
                h = mix(h, w[0]);
                if matches!(
                    op,
                    Op::BvWide(_)
                        | Op::Num(_)
                        | Op::Dec(_)
                        | Op::Str(_)
                        | Op::Other(_)
                        | Op::Annot(_)
                ) {
                    h = mix(h, w[1]);
                }
            }
        }
        h
    }
}

/// Name-independent hashes of every node of `dag` (by local index), refined by the contexts
/// in which each free constant (`leaf[i]`) occurs.
pub(super) fn refined_hashes(
    store: &TermStore,
    dag: &Dag,
    roots: &[TermId],
    leaf: &[bool],
) -> Vec<u64> {
    let n = dag.len();
    let leaves: Vec<usize> = (0..n).filter(|&i| leaf[i]).collect();
    let mut colors: Vec<u64> = vec![0x1EAF; n];
    let mut memo: Vec<u64> = vec![0; n];
    let mut oh = OwnHashes {
        sort_h: FxHashMap::default(),
        op_h: FxHashMap::default(),
    };
    let own: Vec<u64> = (0..n).map(|i| oh.own(store, dag.ids[i], leaf[i])).collect();
    let comm: Vec<bool> = dag
        .ids
        .iter()
        .map(|&x| is_commutative(store.op(x)))
        .collect();
    // Heights and the order of decreasing height (stable: ties by ascending id).
    let mut height: Vec<u32> = vec![0; n];
    for i in 0..n {
        height[i] = dag
            .kids(i)
            .iter()
            .map(|&k| height[k as usize] + 1)
            .max()
            .unwrap_or(0);
    }
    let mut by_height: Vec<u32> = (0..n as u32).collect();
    by_height.sort_by_key(|&i| std::cmp::Reverse(height[i as usize]));
    let mut ctx = Contexts::new(n);
    let mut buf = Vec::new();
    for round in 0..3 {
        for i in 0..n {
            memo[i] = if leaf[i] {
                mix(own[i], colors[i])
            } else {
                buf.clear();
                buf.extend(dag.kids(i).iter().map(|&k| memo[k as usize]));
                if comm[i] {
                    buf.sort_unstable();
                }
                let mut h = mix(own[i], buf.len() as u64);
                for &a in &buf {
                    h = mix(h, a);
                }
                h
            };
        }
        if round == 2 || leaves.is_empty() {
            break;
        }
        // Top-down context, from the roots through every path, as a set (so sharing does not
        // matter): ctx(child) = set of H(ctx(parent), hash(parent), position). Computed per
        // *class*: non-leaf nodes with equal structural hash (in particular the commutative
        // variants `(f a b)`/`(f b a)`, which the input may or may not contain both of) form
        // one class; each free constant is its own class. Classes are processed by
        // decreasing height (a parent is always higher than its children); a class's
        // context is fixed when its first member is reached, from what its parents gave.
        ctx.classify(&memo, leaf);
        for &r in roots {
            ctx.give(dag.local(r), 0x7007);
        }
        for &p in &by_height {
            let p = p as usize;
            let base = mix(ctx.of(p), memo[p]);
            for (k, &a) in dag.kids(p).iter().enumerate() {
                ctx.give(
                    a as usize,
                    mix(base, if comm[p] { 0 } else { k as u64 + 1 }),
                );
            }
        }
        for &l in &leaves {
            colors[l] = mix(colors[l], ctx.of(l));
        }
    }
    memo
}

/// The per-class context sets of one refinement round, in flat vectors: each class's
/// contributions are a linked list in one arena, so no class owns an allocation.
pub(super) struct Contexts {
    /// Class of each node.
    class: Vec<u32>,
    /// Structural hash -> class, for non-leaf nodes.
    by_hash: FxHashMap<u64, u32>,
    /// Per class: the head of its contribution list, and its context once fixed.
    head: Vec<u32>,
    fixed: Vec<Option<u64>>,
    /// The contribution arena: value and next index.
    vals: Vec<(u64, u32)>,
    buf: Vec<u64>,
}

pub(super) const NIL: u32 = u32::MAX;

impl Contexts {
    pub(super) fn new(n: usize) -> Contexts {
        Contexts {
            class: Vec::with_capacity(n),
            by_hash: FxHashMap::with_capacity_and_hasher(n, Default::default()),
            head: Vec::with_capacity(n),
            fixed: Vec::with_capacity(n),
            vals: Vec::with_capacity(2 * n),
            buf: Vec::new(),
        }
    }
    /// Classes for this round: each free constant alone; other nodes by `memo` hash.
    fn classify(&mut self, memo: &[u64], leaf: &[bool]) {
        self.class.clear();
        self.by_hash.clear();
        self.head.clear();
        self.fixed.clear();
        self.vals.clear();
        for (i, &h) in memo.iter().enumerate() {
            let next = self.head.len() as u32;
            let c = if leaf[i] {
                next
            } else {
                *self.by_hash.entry(h).or_insert(next)
            };
            if c == next {
                self.head.push(NIL);
                self.fixed.push(None);
            }
            self.class.push(c);
        }
    }
    /// Add `v` to the context set of node `i`'s class (ignored once that is fixed).
    fn give(&mut self, i: usize, v: u64) {
        let c = self.class[i] as usize;
        if self.fixed[c].is_none() {
            self.vals.push((v, self.head[c]));
            self.head[c] = (self.vals.len() - 1) as u32;
        }
    }
    /// The context of node `i`'s class: fixed at the first call, from the set given so far.
    fn of(&mut self, i: usize) -> u64 {
        let c = self.class[i] as usize;
        if let Some(h) = self.fixed[c] {
            return h;
        }
        self.buf.clear();
        let mut at = self.head[c];
        while at != NIL {
            let (v, next) = self.vals[at as usize];
            self.buf.push(v);
            at = next;
        }
        self.buf.sort_unstable();
        self.buf.dedup();
        let mut h = 0xC7_u64;
        for &v in &self.buf {
            h = mix(h, v);
        }
        self.fixed[c] = Some(h);
        h
    }
}
