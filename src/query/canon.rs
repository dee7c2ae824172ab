//! Canonical forms of one independent component, equisatisfiable with it BY CONSTRUCTION:
//! the only transformations are logical equivalences applied locally, reordering of
//! conjuncts and of the arguments of commutative operators, and a bijective, sort-preserving
//! renaming of the free constants. So two components with the same canonical `text` are the
//! same formula up to renaming, and have the same satisfiability.
//!
//! Steps:
//! 1. local normalisation, bottom-up (ascending ids, no recursion):
//!    `(not (not x))` -> x, `(not true/false)` folded, `(= false x)`/`(= x false)` -> `(not x)`,
//!    `(= true x)` -> x; `bvugt/bvuge/bvsgt/bvsge a b` -> `bvult/bvule/bvslt/bvsle b a`;
//!    binary `>`/`>=` -> `<`/`<=` swapped; binary Int comparisons `<=`, `<`, `=`,
//!    `distinct` over linear terms -> Green's normal form `(op (+ c1*x1 ...) k)` with
//!    `<` -> `<=` (k-1), gcd-normalised coefficients (exact for Int: `<=` rounds the bound,
//!    `=` with a non-dividing gcd is false, `distinct` then true), equalities as `P = N` with
//!    positive coefficients on both sides (sign-free), `distinct` as `(not (= P N))`;
//!    ground linear atoms are decided;
//! 2. structural hashes that ignore free-constant names (sorts, ops and literals included),
//!    refined twice by the top-down context (all paths from the roots) each constant occurs in;
//! 3. arguments of `and or xor = distinct bvadd bvmul bvand bvor bvxor + *` sorted by that hash
//!    (ties: by term id of the normalised input, so deterministic but possibly order
//!    dependent: at worst a missed cache hit, never a wrong one);
//! 4. conjuncts sorted by hash and deduplicated, free constants renamed by first occurrence
//!    (depth-first, left to right) to internal symbols `\0c<i>` (printed `sp!c<i>`);
//! 5. the text: one `(declare-fun sp!c<i> () S)` line per canonical constant in index order,
//!    then one `(assert t)` line per conjunct, conjunct lines sorted. Printing is iterative
//!    with `let` for subterms shared within a conjunct, numbered in structural (post-order)
//!    order, so the text is a function of the canonical terms' structure only.
//!
//! Not done (misses, not errors): Real linear normalisation (only flips), flattening of nested
//! associative operators, renaming of uninterpreted function symbols (kept with client names,
//! their signatures are part of the text), bit-vector arithmetic normalisation.
//!
//! Precondition: see `slice::sliceable` (only free symbols; quantified variables are not
//! renamed but are tolerated).

use crate::smt2::printer::{
    bv_literal, bv_u64, push_backend_symbol, string_literal, write_op_head,
};
use crate::term::visit::Pooled;
use crate::term::{Lit, Op, SortId, SortStore, Sym, TermId, TermStore};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The canonical form of a component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canonical {
    /// Canonical conjuncts (renamed), in the order of `text`'s assert lines. `[false]` when
    /// the component is trivially unsatisfiable, empty when it is trivially true.
    pub conjuncts: Vec<TermId>,
    /// (client leaf, canonical leaf): a bijection between the free constants of the
    /// normalised component and the canonical constants, sort-preserving. Client constants
    /// that normalisation eliminated (e.g. `x - x <= 0`) do not appear: they are
    /// unconstrained.
    pub renaming: Vec<(TermId, TermId)>,
    /// Deterministic canonical text (declarations, then sorted assert lines); what the key hashes.
    pub text: String,
}

// ---------------------------------------------------------------- fixed hashing

const K1: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
fn fin(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
#[inline]
fn mix(h: u64, v: u64) -> u64 {
    fin(h.rotate_left(23) ^ v.wrapping_mul(K1) ^ 0x2545_F491_4F6C_DD1D)
}
fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = 0x51_7C_C1_B7_27_22_0A_95u64 ^ b.len() as u64;
    for c in b.chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h = mix(h, u64::from_le_bytes(w));
    }
    h
}

fn is_commutative(op: Op) -> bool {
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

fn is_free_leaf(store: &TermStore, t: TermId, bound: &FxHashSet<Sym>) -> bool {
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
fn plain_op_hash(op: Op) -> u64 {
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
struct OwnHashes {
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

fn bound_syms(store: &TermStore, nodes: &[TermId]) -> FxHashSet<Sym> {
    let mut b = FxHashSet::default();
    for &x in nodes {
        if let Op::Forall(i) | Op::Exists(i) = store.op(x) {
            b.extend(store.binders[i as usize].iter().map(|&(s, _)| s));
        }
    }
    b
}

// ---------------------------------------------------------------- pass 1: normalisation

type Lin = (BTreeMap<TermId, BigInt>, BigInt);

fn int_lit(store: &mut TermStore, v: &BigInt) -> TermId {
    let m = store.mk_num(v.magnitude().clone());
    if v.is_negative() {
        store.intern(Op::Neg, vec![m], SortStore::INT)
    } else {
        m
    }
}

const MAX_LIN_TERMS: usize = 64;

struct Norm {
    lin: FxHashMap<TermId, Option<Lin>>,
}

impl Norm {
    /// Linear form of an (already normalised) Int term; None when it is not Int.
    fn lin_of(&mut self, store: &TermStore, t: TermId) -> Option<Lin> {
        if store.sort(t) != SortStore::INT {
            return None;
        }
        if let Some(Some(l)) = self.lin.get(&t) {
            return Some(l.clone());
        }
        let atom = || {
            let mut m = BTreeMap::new();
            m.insert(t, BigInt::one());
            (m, BigInt::zero())
        };
        // Only look one level down at already computed forms (children were normalised
        // before their parents, and `remember` stored their forms): no recursion.
        let n = store.node(t);
        let child = |s: &Self, a: TermId| -> Lin {
            match s.lin.get(&a) {
                Some(Some(l)) => l.clone(),
                _ => {
                    let mut m = BTreeMap::new();
                    m.insert(a, BigInt::one());
                    (m, BigInt::zero())
                }
            }
        };
        let r: Lin = match n.op {
            Op::Num(l) => match store.get_lit(l) {
                Lit::Nat(v) => (BTreeMap::new(), BigInt::from(v.clone())),
                _ => atom(),
            },
            Op::Neg => {
                let (m, k) = child(self, n.args[0]);
                (m.into_iter().map(|(x, c)| (x, -c)).collect(), -k)
            }
            Op::Add | Op::Sub => {
                let mut acc: Lin = child(self, n.args[0]);
                if n.op == Op::Sub && n.args.len() == 1 {
                    acc = (acc.0.into_iter().map(|(x, c)| (x, -c)).collect(), -acc.1);
                }
                for &a in &n.args[1..] {
                    let (m, k) = child(self, a);
                    let neg = n.op == Op::Sub;
                    acc.1 += if neg { -k } else { k };
                    for (x, c) in m {
                        let e = acc.0.entry(x).or_insert_with(BigInt::zero);
                        *e += if neg { -c } else { c };
                    }
                    acc.0.retain(|_, c| !c.is_zero());
                }
                acc
            }
            Op::Mul => {
                let forms: Vec<Lin> = n.args.iter().map(|&a| child(self, a)).collect();
                let nonconst = forms.iter().filter(|f| !f.0.is_empty()).count();
                if nonconst > 1 {
                    atom()
                } else {
                    let mut scale = BigInt::one();
                    let mut var: Option<Lin> = None;
                    for f in forms {
                        if f.0.is_empty() {
                            scale *= f.1;
                        } else {
                            var = Some(f);
                        }
                    }
                    match var {
                        None => (BTreeMap::new(), scale),
                        Some((m, k)) => {
                            let m: BTreeMap<TermId, BigInt> = m
                                .into_iter()
                                .map(|(x, c)| (x, c * &scale))
                                .filter(|(_, c)| !c.is_zero())
                                .collect();
                            (m, k * scale)
                        }
                    }
                }
            }
            _ => atom(),
        };
        if r.0.len() > MAX_LIN_TERMS {
            return Some(atom());
        }
        Some(r)
    }

    fn remember(&mut self, store: &TermStore, t: TermId) {
        if store.sort(t) == SortStore::INT && !self.lin.contains_key(&t) {
            let l = self.lin_of(store, t);
            self.lin.insert(t, l);
        }
    }
}

/// Build `sum c_i x_i + k` (monomials unordered: `+` is sorted later); `0` when empty.
fn build_sum(store: &mut TermStore, m: &BTreeMap<TermId, BigInt>, k: &BigInt) -> TermId {
    let mut mons = Vec::new();
    for (&x, c) in m {
        if c.is_one() {
            mons.push(x);
        } else {
            let cl = int_lit(store, c);
            mons.push(store.intern(Op::Mul, vec![cl, x], SortStore::INT));
        }
    }
    if !k.is_zero() || mons.is_empty() {
        mons.push(int_lit(store, k));
    }
    if mons.len() == 1 {
        mons[0]
    } else {
        store.intern(Op::Add, mons, SortStore::INT)
    }
}

/// Green-style normal form of the Int atom `sum + k op 0` (`op` in Le, Eq, Distinct).
fn linear_atom(store: &mut TermStore, op: Op, (m, k): Lin) -> TermId {
    let mut m = m;
    let mut k = k;
    if m.is_empty() {
        let v = match op {
            Op::Le => k <= BigInt::zero(),
            Op::Eq => k.is_zero(),
            _ => !k.is_zero(),
        };
        return store.mk_bool(v);
    }
    let g = m.values().fold(BigInt::zero(), |g, c| g.gcd(c));
    if !g.is_one() {
        match op {
            Op::Le => {
                // sum c x + k <= 0  <=>  sum (c/g) x + ceil(k/g) <= 0   (g > 0)
                k = k.div_ceil(&g);
            }
            _ => {
                if !(&k % &g).is_zero() {
                    return store.mk_bool(op == Op::Distinct);
                }
                k /= &g;
            }
        }
        for c in m.values_mut() {
            *c /= &g;
        }
    }
    if op == Op::Le {
        let s = build_sum(store, &m, &BigInt::zero());
        let rhs = int_lit(store, &(-k));
        return store.intern(Op::Le, vec![s, rhs], SortStore::BOOL);
    }
    // Equalities are sign-free: `P = N` with the positive and the negated negative part on
    // each side (constant on the side that keeps it non-negative); `=` is commutative, so
    // `S = 0` and `-S = 0` get the same form.
    let pos: BTreeMap<TermId, BigInt> = m
        .iter()
        .filter(|(_, c)| c.is_positive())
        .map(|(x, c)| (*x, c.clone()))
        .collect();
    let neg: BTreeMap<TermId, BigInt> = m
        .iter()
        .filter(|(_, c)| c.is_negative())
        .map(|(x, c)| (*x, -c.clone()))
        .collect();
    let (kp, kn) = if k.is_positive() {
        (k, BigInt::zero())
    } else {
        (BigInt::zero(), -k)
    };
    let p = build_sum(store, &pos, &kp);
    let n = build_sum(store, &neg, &kn);
    let e = store.intern(Op::Eq, vec![p, n], SortStore::BOOL);
    if op == Op::Eq {
        e
    } else {
        store.mk_not(e)
    }
}

fn neg_of(store: &mut TermStore, x: TermId) -> TermId {
    match store.op(x) {
        Op::Not => store.args(x)[0],
        Op::True => TermStore::FALSE,
        Op::False => TermStore::TRUE,
        _ => store.mk_not(x),
    }
}

/// Normalise all of `roots` bottom-up; returns their normalised forms, in order.
fn normalise(store: &mut TermStore, roots: &[TermId]) -> Vec<TermId> {
    let dag = Dag::new(store, roots);
    let mut nm = Norm {
        lin: FxHashMap::default(),
    };
    let mut new: Vec<TermId> = Vec::with_capacity(dag.len());
    let mut args: Vec<TermId> = Vec::new();
    for (i, &x) in dag.ids.iter().enumerate() {
        let n = store.node(x);
        args.clear();
        args.extend(dag.kids(i).iter().map(|&k| new[k as usize]));
        // Most nodes (all but the operators `rewrite` changes) stay as they are when their
        // arguments did.
        let y = if !rewrites(n.op) && args[..] == *n.args {
            x
        } else {
            let (op, sort) = (n.op, n.sort);
            rewrite(store, op, args.clone(), sort, &mut nm)
        };
        nm.remember(store, y);
        new.push(y);
    }
    roots.iter().map(|&r| new[dag.local(r)]).collect()
}

/// The operators `rewrite` may change a node of even when its arguments are unchanged.
fn rewrites(op: Op) -> bool {
    matches!(
        op,
        Op::Not
            | Op::Eq
            | Op::Distinct
            | Op::BvUgt
            | Op::BvUge
            | Op::BvSgt
            | Op::BvSge
            | Op::Gt
            | Op::Ge
            | Op::Le
            | Op::Lt
    )
}

fn rewrite(
    store: &mut TermStore,
    op: Op,
    mut args: Vec<TermId>,
    sort: SortId,
    nm: &mut Norm,
) -> TermId {
    let swap2 = |args: &mut Vec<TermId>| args.swap(0, 1);
    let op = match op {
        Op::Not => {
            let a = args[0];
            return neg_of(store, a);
        }
        Op::Eq if args.len() == 2 && store.sort(args[0]) == SortStore::BOOL => {
            let (a, b) = (args[0], args[1]);
            if a == TermStore::TRUE {
                return b;
            } else if b == TermStore::TRUE {
                return a;
            } else if a == TermStore::FALSE {
                return neg_of(store, b);
            } else if b == TermStore::FALSE {
                return neg_of(store, a);
            }
            op
        }
        Op::BvUgt => {
            swap2(&mut args);
            Op::BvUlt
        }
        Op::BvUge => {
            swap2(&mut args);
            Op::BvUle
        }
        Op::BvSgt => {
            swap2(&mut args);
            Op::BvSlt
        }
        Op::BvSge => {
            swap2(&mut args);
            Op::BvSle
        }
        Op::Gt if args.len() == 2 => {
            swap2(&mut args);
            Op::Lt
        }
        Op::Ge if args.len() == 2 => {
            swap2(&mut args);
            Op::Le
        }
        op => op,
    };
    if matches!(op, Op::Le | Op::Lt | Op::Eq | Op::Distinct)
        && args.len() == 2
        && store.sort(args[0]) == SortStore::INT
        && store.sort(args[1]) == SortStore::INT
    {
        if let (Some(a), Some(b)) = (nm.lin_of(store, args[0]), nm.lin_of(store, args[1])) {
            // a - b
            let mut m = a.0;
            for (x, c) in b.0 {
                *m.entry(x).or_insert_with(BigInt::zero) -= c;
            }
            m.retain(|_, c| !c.is_zero());
            let mut k = a.1 - b.1;
            let op2 = if op == Op::Lt {
                k += 1; // a - b < 0  <=>  a - b + 1 <= 0 over Int
                Op::Le
            } else {
                op
            };
            if m.len() <= MAX_LIN_TERMS {
                return linear_atom(store, op2, (m, k));
            }
        }
    }
    store.intern(op, args, sort)
}

// ---------------------------------------------------------------- passes 2-5

/// The DAG below a set of roots with local indices, so that the passes below keep their
/// per-node data in vectors rather than hash maps: node `i` is `ids[i]` (ascending, so
/// every node comes after its arguments) and its arguments are `kids(i)`, as local indices
/// in the store's argument order.
struct Dag {
    ids: Vec<TermId>,
    index: Pooled<FxHashMap<TermId, u32>>,
    args: Vec<u32>,
    spans: Vec<(u32, u32)>,
}

thread_local! {
    /// `Dag::index` tables (see `term::visit`).
    static DAG_INDEX: std::cell::RefCell<Vec<FxHashMap<TermId, u32>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Dag {
    fn new(store: &TermStore, roots: &[TermId]) -> Dag {
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
    fn len(&self) -> usize {
        self.ids.len()
    }
    fn view(&self) -> Local<'_> {
        Local {
            term: &self.ids,
            args: &self.args,
            spans: &self.spans,
        }
    }
    #[inline]
    fn kids(&self, i: usize) -> &[u32] {
        self.view().kids(i)
    }
    #[inline]
    fn local(&self, t: TermId) -> usize {
        self.index[&t] as usize
    }
}

/// Name-independent hashes of every node of `dag` (by local index), refined by the contexts
/// in which each free constant (`leaf[i]`) occurs.
fn refined_hashes(store: &TermStore, dag: &Dag, roots: &[TermId], leaf: &[bool]) -> Vec<u64> {
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
struct Contexts {
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

const NIL: u32 = u32::MAX;

impl Contexts {
    fn new(n: usize) -> Contexts {
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

/// Arguments of node `i` in canonical order: those of commutative operators sorted by
/// (hash, term id), so deterministic but possibly order dependent on ties.
fn ordered_kids<'d>(
    store: &TermStore,
    dag: &'d Dag,
    hash: &[u64],
    i: usize,
    buf: &'d mut Vec<u32>,
) -> &'d [u32] {
    let kids = dag.kids(i);
    if !is_commutative(store.op(dag.ids[i])) {
        return kids;
    }
    buf.clear();
    buf.extend_from_slice(kids);
    buf.sort_unstable_by_key(|&k| (hash[k as usize], dag.ids[k as usize]));
    buf
}

/// Canonicalise one component (see the module doc).
pub fn canonicalize(store: &mut TermStore, comp: &[TermId]) -> Canonical {
    let tops = super::view::conjuncts(store, comp);
    // 1. local normalisation
    let mut stack: Vec<TermId> = normalise(store, &tops);
    stack.reverse();
    let mut cs: Vec<TermId> = Vec::new();
    while let Some(c) = stack.pop() {
        match store.op(c) {
            Op::True => {}
            Op::False => {
                return Canonical {
                    conjuncts: vec![TermStore::FALSE],
                    renaming: vec![],
                    text: "(assert false)\n".into(),
                };
            }
            Op::And => stack.extend(store.args(c).iter().rev().copied()),
            _ => cs.push(c),
        }
    }
    let mut seen = FxHashSet::default();
    cs.retain(|c| seen.insert(*c));
    if cs.is_empty() {
        return Canonical {
            conjuncts: vec![],
            renaming: vec![],
            text: String::new(),
        };
    }
    let dag = Dag::new(store, &cs);
    let n = dag.len();
    let bound = bound_syms(store, &dag.ids);
    let leaf: Vec<bool> = dag
        .ids
        .iter()
        .map(|&x| is_free_leaf(store, x, &bound))
        .collect();
    // 2. hashes
    let hash = refined_hashes(store, &dag, &cs, &leaf);
    // 4. conjunct order: by (hash, id) of the normalised conjunct
    let mut ord: Vec<(u64, TermId)> = cs.iter().map(|&c| (hash[dag.local(c)], c)).collect();
    ord.sort_unstable();
    // 3. argument order, and the free constants by first occurrence (depth-first, left to
    // right) in the conjuncts so ordered, with their arguments so ordered.
    let mut leaves: Vec<usize> = Vec::new();
    let mut visited = vec![false; n];
    let mut buf = Vec::new();
    let mut stack: Vec<u32> = ord
        .iter()
        .rev()
        .map(|&(_, c)| dag.local(c) as u32)
        .collect();
    while let Some(i) = stack.pop() {
        let i = i as usize;
        if std::mem::replace(&mut visited[i], true) {
            continue;
        }
        if leaf[i] {
            leaves.push(i);
        }
        stack.extend(ordered_kids(store, &dag, &hash, i, &mut buf).iter().rev());
    }
    // renaming by first occurrence
    let mut new: Vec<TermId> = dag.ids.clone();
    let mut renaming = Vec::new();
    let mut text = String::new();
    let mut name = String::new();
    for (k, &l) in leaves.iter().enumerate() {
        let sort = store.sort(dag.ids[l]);
        name.clear();
        name.push_str("\0c");
        push_usize(k, &mut name);
        let s = store.sym(&name);
        let c = store.mk_sym_app(s, vec![], sort);
        new[l] = c;
        renaming.push((dag.ids[l], c));
        text.push_str("(declare-fun sp!c");
        push_usize(k, &mut text);
        text.push_str(" () ");
        text.push_str(store.sorts.text(sort));
        text.push_str(")\n");
    }
    // the canonical terms: arguments ordered, constants renamed (bottom-up); and their DAG
    // in local indices, each canonical term at the first index that became it, for printing
    let mut args: Vec<TermId> = Vec::new();
    let mut rep: Vec<u32> = Vec::with_capacity(n);
    let mut rep_of: FxHashMap<TermId, u32> =
        FxHashMap::with_capacity_and_hasher(n, Default::default());
    let mut cargs: Vec<u32> = Vec::with_capacity(dag.args.len());
    let mut cspans: Vec<(u32, u32)> = Vec::with_capacity(n);
    for i in 0..n {
        let start = cargs.len() as u32;
        if !dag.kids(i).is_empty() {
            let kids = ordered_kids(store, &dag, &hash, i, &mut buf);
            args.clear();
            args.extend(kids.iter().map(|&k| new[k as usize]));
            cargs.extend(kids.iter().map(|&k| rep[k as usize]));
            let x = dag.ids[i];
            if args[..] != *store.args(x) {
                let nd = store.node(x);
                let (op, sort) = (nd.op, nd.sort);
                new[i] = store.intern_slice(op, &args, sort);
            }
        }
        cspans.push((start, cargs.len() as u32));
        rep.push(*rep_of.entry(new[i]).or_insert(i as u32));
    }
    let canon = Local {
        term: &new,
        args: &cargs,
        spans: &cspans,
    };
    // 5. text: each distinct conjunct printed once into one buffer, lines sorted by text.
    let mut printer = Printer::new(n);
    let mut body = String::new();
    let mut lines: Vec<(std::ops::Range<usize>, TermId)> = Vec::with_capacity(ord.len());
    let mut seen = FxHashSet::default();
    for &(_, c) in &ord {
        let r = rep[dag.local(c)] as usize;
        if seen.insert(r) {
            let at = body.len();
            printer.print(store, canon, r, &mut body);
            lines.push((at..body.len(), new[r]));
        }
    }
    lines.sort_by(|a, b| {
        body[a.0.clone()]
            .cmp(&body[b.0.clone()])
            .then(a.1.cmp(&b.1))
    });
    // Uninterpreted functions keep their names; their signatures are part of the text.
    let mut funs: Vec<String> = Vec::new();
    let mut fseen = FxHashSet::default();
    for &x in &dag.ids {
        if let Op::Sym(s) = store.op(x) {
            if !store.args(x).is_empty() && fseen.insert(s) {
                let mut f = String::from("(declare-fun ");
                push_backend_symbol(store.sym_name(s), &mut f);
                f.push_str(" (");
                for (i, &a) in store.args(x).iter().enumerate() {
                    if i > 0 {
                        f.push(' ');
                    }
                    f.push_str(store.sorts.text(store.sort(a)));
                }
                f.push_str(") ");
                f.push_str(store.sorts.text(store.sort(x)));
                f.push(')');
                funs.push(f);
            }
        }
    }
    funs.sort();
    for f in funs {
        text.push_str(&f);
        text.push('\n');
    }
    text.reserve(body.len() + 9 * lines.len());
    for (r, _) in &lines {
        text.push_str("(assert ");
        text.push_str(&body[r.clone()]);
        text.push_str(")\n");
    }
    Canonical {
        conjuncts: lines.into_iter().map(|l| l.1).collect(),
        renaming,
        text,
    }
}

// ---------------------------------------------------------------- printing

/// Print a term as SMT-LIB, iteratively (any depth), binding subterms that occur more than
/// once with nested `let`s named `sp!l<n>`, numbered in left-to-right post-order. The text
/// depends only on the term's structure (not on term ids). Symbols print with backend
/// names (internal names as `sp!...`).
pub fn print_canonical(store: &TermStore, t: TermId) -> String {
    let dag = Dag::new(store, &[t]);
    let mut out = String::new();
    Printer::new(dag.len()).print(store, dag.view(), dag.local(t), &mut out);
    out
}

/// A DAG in local indices, borrowed: node `i` is the term `term[i]`, whose arguments are the
/// nodes `kids(i)`, in order. Every term reachable from a node printed has one index.
#[derive(Clone, Copy)]
struct Local<'a> {
    term: &'a [TermId],
    args: &'a [u32],
    spans: &'a [(u32, u32)],
}

impl<'a> Local<'a> {
    #[inline]
    fn kids(&self, i: usize) -> &'a [u32] {
        let (a, b) = self.spans[i];
        &self.args[a as usize..b as usize]
    }
}

/// What printing knows of a node, valid while `stamp` is the current print's.
#[derive(Clone, Copy, Default)]
struct Mark {
    stamp: u32,
    /// Reached by more than one tree edge.
    reused: bool,
    /// Placed in the post-order.
    placed: bool,
    /// Its `let` number once bound (`NO_NAME` until then).
    name: u32,
}

const NO_NAME: u32 = u32::MAX;

/// Scratch of `print_canonical` over one local DAG, reused from one conjunct to the next.
struct Printer {
    marks: Vec<Mark>,
    stamp: u32,
    stack: Vec<u32>,
    post: Vec<(u32, bool)>,
    shared: Vec<u32>,
    /// `tree`'s open applications: node and the number of its arguments written.
    open: Vec<(u32, u32)>,
}

impl Printer {
    fn new(n: usize) -> Printer {
        Printer {
            marks: vec![Mark::default(); n],
            stamp: 0,
            stack: Vec::new(),
            post: Vec::new(),
            shared: Vec::new(),
            open: Vec::new(),
        }
    }

    /// Append the text of node `t` of `g` (see `print_canonical`) to `out`.
    fn print(&mut self, store: &TermStore, g: Local, t: usize, out: &mut String) {
        self.stamp += 1;
        let stamp = self.stamp;
        // nodes reached more than once (by two tree edges of the DAG), quantifier bodies
        // included
        self.stack.clear();
        self.stack.push(t as u32);
        while let Some(x) = self.stack.pop() {
            let m = &mut self.marks[x as usize];
            if m.stamp == stamp {
                m.reused = true;
            } else {
                *m = Mark {
                    stamp,
                    reused: false,
                    placed: false,
                    name: NO_NAME,
                };
                self.stack.extend_from_slice(g.kids(x as usize));
            }
        }
        // shared non-leaf nodes in post-order
        self.shared.clear();
        self.post.clear();
        self.post.push((t as u32, false));
        while let Some((x, expanded)) = self.post.pop() {
            let m = &mut self.marks[x as usize];
            if expanded {
                if x as usize != t && m.reused && !g.kids(x as usize).is_empty() {
                    self.shared.push(x);
                }
                continue;
            }
            if std::mem::replace(&mut m.placed, true) {
                continue;
            }
            self.post.push((x, true));
            for &a in g.kids(x as usize).iter().rev() {
                self.post.push((a, false));
            }
        }
        for i in 0..self.shared.len() {
            let x = self.shared[i];
            out.push_str("(let ((sp!l");
            push_usize(i, out);
            out.push(' ');
            self.tree(store, g, x, out);
            out.push_str(")) ");
            self.marks[x as usize].name = i as u32;
        }
        self.tree(store, g, t as u32, out);
        for _ in 0..self.shared.len() {
            out.push(')');
        }
    }

    /// Node `t` as a tree, with the nodes named so far written as their names.
    fn tree(&mut self, store: &TermStore, g: Local, t: u32, out: &mut String) {
        if !self.head(store, g, t as usize, out) {
            return;
        }
        let open = &mut self.open;
        open.clear();
        open.push((t, 0));
        while let Some(top) = open.last_mut() {
            let (x, k) = *top;
            let kids = g.kids(x as usize);
            if k as usize == kids.len() {
                open.pop();
                close(store, g, x as usize, out);
                continue;
            }
            top.1 += 1;
            let a = kids[k as usize];
            out.push(' ');
            let name = self.marks[a as usize].name;
            if name != NO_NAME {
                out.push_str("sp!l");
                push_usize(name as usize, out);
            } else if head_of(store, g, a as usize, out) {
                open.push((a, 0));
            }
        }
    }

    /// Node `x`'s name if it has one, else `head_of`.
    fn head(&self, store: &TermStore, g: Local, x: usize, out: &mut String) -> bool {
        let name = self.marks[x].name;
        if name != NO_NAME {
            out.push_str("sp!l");
            push_usize(name as usize, out);
            return false;
        }
        head_of(store, g, x, out)
    }
}

/// Decimal digits of `v`, appended.
fn push_usize(v: usize, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = v;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| d as char));
}

/// Write node `x`'s own text: a leaf whole (false), or the opening of an application,
/// `(head` without a space after it (true: its arguments follow, each after a space, then
/// `close`).
fn head_of(store: &TermStore, g: Local, x: usize, out: &mut String) -> bool {
    let n = store.node(g.term[x]);
    // Leaves; everything else is `(head args)`.
    match n.op {
        Op::True => {
            out.push_str("true");
            return false;
        }
        Op::False => {
            out.push_str("false");
            return false;
        }
        Op::Bv(v) => {
            bv_u64(v, store.sorts.bv_width(n.sort).unwrap_or(64), out);
            return false;
        }
        Op::BvWide(l) | Op::Num(l) | Op::Dec(l) | Op::Str(l) => {
            match (n.op, store.get_lit(l)) {
                (Op::BvWide(_), Lit::Nat(v)) => {
                    bv_literal(v, store.sorts.bv_width(n.sort).unwrap_or(0), out)
                }
                (_, Lit::Nat(v)) => {
                    let _ = write!(out, "{v}");
                }
                (_, Lit::Dec(d)) => out.push_str(d),
                (_, Lit::Str(s)) => string_literal(s, out),
                (_, Lit::Raw(r)) => out.push_str(r),
            }
            return false;
        }
        Op::Sym(_) | Op::Other(_) if n.args.is_empty() => {}
        // (! t attrs): the attributes are written by `close`.
        Op::Annot(_) => {
            out.push_str("(!");
            return true;
        }
        _ => out.push('('),
    }
    match n.op {
        Op::Sym(s) => push_backend_symbol(store.sym_name(s), out),
        Op::Other(l) => {
            if let Lit::Raw(r) = store.get_lit(l) {
                out.push_str(r);
            }
        }
        Op::Forall(b) | Op::Exists(b) => {
            out.push_str(if matches!(n.op, Op::Forall(_)) {
                "forall ("
            } else {
                "exists ("
            });
            for (i, (s, sort)) in store.binders[b as usize].iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push('(');
                push_backend_symbol(store.sym_name(*s), out);
                out.push(' ');
                out.push_str(store.sorts.text(*sort));
                out.push(')');
            }
            out.push(')');
        }
        Op::ConstArray => {
            out.push_str("(as const ");
            out.push_str(store.sorts.text(n.sort));
            out.push(')');
        }
        op => write_op_head(op, out),
    }
    // A constant or an unmodelled nullary operator is its head alone.
    !(matches!(n.op, Op::Sym(_) | Op::Other(_)) && n.args.is_empty())
}

/// The end of an application `head_of` opened: `)`, after an annotation's attributes.
fn close(store: &TermStore, g: Local, x: usize, out: &mut String) {
    if let Op::Annot(l) = store.op(g.term[x]) {
        if let Lit::Raw(r) = store.get_lit(l) {
            out.push(' ');
            out.push_str(r);
        }
    }
    out.push(')');
}
