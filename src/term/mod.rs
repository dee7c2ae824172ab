//! The hash-consed term store (after egg): every term is a `TermId` (a `u32`) into a flat
//! arena of nodes, and a memo table guarantees that structurally equal nodes get the same
//! id. Invariants: a node's arguments always have smaller ids than the node itself (so
//! iterating ids in order is a topological order); nodes are never removed or changed;
//! every node carries its sort, computed and checked when it was built (`build`).
//! Literals that do not fit in an `Op` (wide bit-vectors, numerals, decimals, strings) are
//! interned in a side table and referenced by `LitId`.

pub mod build;
pub mod signature;
pub mod sort;
pub mod symbol;
pub mod visit;

use num_bigint::BigUint;
use rustc_hash::FxHashMap;
pub use sort::{Sort, SortId, SortStore};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct TermId(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Sym(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct LitId(pub u32);

/// A literal too large or too varied to live inline in an `Op`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Lit {
    /// Value of a bit-vector of width > 64, or a numeral.
    Nat(BigUint),
    /// A decimal, as written (normalised text like `1.50`).
    Dec(String),
    /// A string literal, unescaped.
    Str(String),
    /// Raw attribute text (for `!` annotations other than :named), or an operator head we do not model.
    Raw(String),
}

/// Operators. Leaves: `True`, `False`, `Bv`, `BvWide`, `Num`, `Dec`, `Str`, and `Sym` with
/// no arguments (a declared constant or a bound variable). Everything else is an application.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Op {
    True,
    False,
    /// Bit-vector literal of width <= 64 (width is in the node's sort).
    Bv(u64),
    /// Bit-vector literal of width > 64.
    BvWide(LitId),
    Num(LitId),
    Dec(LitId),
    Str(LitId),
    /// A declared function symbol (constant when it has no arguments), or a bound variable.
    Sym(Sym),
    /// An operator smtproxy does not model; the `LitId` holds its head text, e.g. `str.++`
    /// or `(_ to_fp 8 24)` or `(as nil (List Int))`. Its sort is `Unknown` unless declared.
    Other(LitId),
    /// `(! t attrs)`: attribute text in the `LitId` (e.g. `:named a1`).
    Annot(LitId),
    /// Quantifiers: the binder list is `binders[id]`; the single argument is the body.
    Forall(u32),
    Exists(u32),
    // Core
    Not,
    And,
    Or,
    Xor,
    Implies,
    Eq,
    Distinct,
    Ite,
    // Arrays
    Select,
    Store,
    /// `((as const (Array I E)) v)`; the array sort is the node's sort.
    ConstArray,
    // Bit-vectors
    Concat,
    Extract(u32, u32),
    ZeroExtend(u32),
    SignExtend(u32),
    Repeat(u32),
    RotateLeft(u32),
    RotateRight(u32),
    BvNot,
    BvNeg,
    BvAnd,
    BvOr,
    BvXor,
    BvNand,
    BvNor,
    BvXnor,
    BvComp,
    BvAdd,
    BvSub,
    BvMul,
    BvUdiv,
    BvUrem,
    BvSdiv,
    BvSrem,
    BvSmod,
    BvShl,
    BvLshr,
    BvAshr,
    BvUlt,
    BvUle,
    BvUgt,
    BvUge,
    BvSlt,
    BvSle,
    BvSgt,
    BvSge,
    // Integers and reals
    Neg,
    Sub,
    Add,
    Mul,
    RealDiv,
    IntDiv,
    Mod,
    Abs,
    Le,
    Lt,
    Ge,
    Gt,
    ToReal,
    ToInt,
    IsInt,
    Divisible(u32),
}

impl Op {
    /// The bit-vector comparisons, unsigned and signed (`bvult` ... `bvsge`).
    pub fn is_bv_comparison(self) -> bool {
        matches!(
            self,
            Op::BvUlt
                | Op::BvUle
                | Op::BvUgt
                | Op::BvUge
                | Op::BvSlt
                | Op::BvSle
                | Op::BvSgt
                | Op::BvSge
        )
    }
}

/// A node as seen from outside the store: its operator, arguments and sort.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Node<'a> {
    pub op: Op,
    pub args: &'a [TermId],
    pub sort: SortId,
}

/// A node as stored: its arguments are `args[start..start + len]` of the store's pool
/// (one flat vector for all nodes, so creating a node allocates nothing of its own).
#[derive(Clone, Copy, Debug)]
struct Slot {
    op: Op,
    sort: SortId,
    start: u32,
    len: u32,
}

/// The store. One per session (the replay and bench engines keep one per run).
pub struct TermStore {
    nodes: Vec<Slot>,
    /// The arguments of every node, back to back (see `Slot`).
    args: Vec<TermId>,
    /// Structural hash of a node -> its id; a second node with the same hash (rare) goes
    /// into `collisions`. Lookups allocate nothing.
    memo: FxHashMap<u64, TermId>,
    collisions: FxHashMap<u64, Vec<TermId>>,
    pub sorts: SortStore,
    syms: Vec<Box<str>>,
    sym_memo: FxHashMap<Box<str>, Sym>,
    lits: Vec<Lit>,
    lit_memo: FxHashMap<Lit, LitId>,
    pub binders: Vec<Box<[(Sym, SortId)]>>,
    binder_memo: FxHashMap<Box<[(Sym, SortId)]>, u32>,
    /// Maximum nesting depth of any node (0 for leaves); used to refuse terms too deep to
    /// process recursively.
    depth: Vec<u32>,
    fresh: u32,
}

impl Default for TermStore {
    fn default() -> Self {
        Self::new()
    }
}

impl TermStore {
    pub fn new() -> Self {
        let mut t = TermStore {
            nodes: Vec::new(),
            args: Vec::new(),
            memo: FxHashMap::default(),
            collisions: FxHashMap::default(),
            sorts: SortStore::new(),
            syms: Vec::new(),
            sym_memo: FxHashMap::default(),
            lits: Vec::new(),
            lit_memo: FxHashMap::default(),
            binders: Vec::new(),
            binder_memo: FxHashMap::default(),
            depth: Vec::new(),
            fresh: 0,
        };
        let tt = t.intern(Op::True, Vec::new(), SortStore::BOOL);
        let ff = t.intern(Op::False, Vec::new(), SortStore::BOOL);
        debug_assert_eq!((tt, ff), (Self::TRUE, Self::FALSE));
        t
    }
    pub const TRUE: TermId = TermId(0);
    pub const FALSE: TermId = TermId(1);

    /// Number of nodes ever created.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Intern a node without any checks. Callers outside `build` should use the checked
    /// builders (`TermStore::app` and friends).
    pub(crate) fn intern(&mut self, op: Op, args: Vec<TermId>, sort: SortId) -> TermId {
        self.intern_slice(op, &args, sort)
    }

    /// `intern` without giving up a vector: nothing is allocated when the node exists.
    pub(crate) fn intern_slice(&mut self, op: Op, args: &[TermId], sort: SortId) -> TermId {
        use std::hash::{Hash, Hasher};
        let mut hasher = rustc_hash::FxHasher::default();
        op.hash(&mut hasher);
        args.hash(&mut hasher);
        sort.hash(&mut hasher);
        let h = hasher.finish();
        let same = |id: TermId| {
            let n = self.node(id);
            n.op == op && n.sort == sort && n.args == args
        };
        let first = self.memo.get(&h).copied();
        if let Some(id) = first {
            if same(id) {
                return id;
            }
            if let Some(ids) = self.collisions.get(&h) {
                if let Some(&id) = ids.iter().find(|&&id| same(id)) {
                    return id;
                }
            }
        }
        let id = TermId(u32::try_from(self.nodes.len()).expect("term store: 2^32 nodes"));
        let d = args
            .iter()
            .map(|a| self.depth[a.0 as usize] + 1)
            .max()
            .unwrap_or(0);
        self.depth.push(d);
        // Ids and pool offsets are u32: past 2^32 (over 16 GB of arguments alone, far beyond
        // any machine this runs on) refuse loudly rather than wrap into wrong terms.
        let start = u32::try_from(self.args.len()).expect("term store: argument pool full");
        self.args.extend_from_slice(args);
        self.nodes.push(Slot {
            op,
            sort,
            start,
            len: args.len() as u32,
        });
        if first.is_some() {
            self.collisions.entry(h).or_default().push(id);
        } else {
            self.memo.insert(h, id);
        }
        id
    }

    #[inline]
    pub fn node(&self, t: TermId) -> Node<'_> {
        let s = self.nodes[t.0 as usize];
        Node {
            op: s.op,
            args: &self.args[s.start as usize..(s.start + s.len) as usize],
            sort: s.sort,
        }
    }
    #[inline]
    pub fn op(&self, t: TermId) -> Op {
        self.nodes[t.0 as usize].op
    }
    #[inline]
    pub fn args(&self, t: TermId) -> &[TermId] {
        let s = self.nodes[t.0 as usize];
        &self.args[s.start as usize..(s.start + s.len) as usize]
    }
    #[inline]
    pub fn sort(&self, t: TermId) -> SortId {
        self.nodes[t.0 as usize].sort
    }
    pub fn depth(&self, t: TermId) -> u32 {
        self.depth[t.0 as usize]
    }

    pub fn sym(&mut self, name: &str) -> Sym {
        if let Some(&s) = self.sym_memo.get(name) {
            return s;
        }
        let s = Sym(self.syms.len() as u32);
        self.syms.push(name.into());
        self.sym_memo.insert(name.into(), s);
        s
    }
    pub fn find_sym(&self, name: &str) -> Option<Sym> {
        self.sym_memo.get(name).copied()
    }
    pub fn sym_name(&self, s: Sym) -> &str {
        &self.syms[s.0 as usize]
    }

    pub fn lit(&mut self, l: Lit) -> LitId {
        if let Some(&id) = self.lit_memo.get(&l) {
            return id;
        }
        let id = LitId(self.lits.len() as u32);
        self.lits.push(l.clone());
        self.lit_memo.insert(l, id);
        id
    }
    pub fn get_lit(&self, id: LitId) -> &Lit {
        &self.lits[id.0 as usize]
    }
    pub fn binder(&mut self, vars: Vec<(Sym, SortId)>) -> u32 {
        let b: Box<[(Sym, SortId)]> = vars.into_boxed_slice();
        if let Some(&id) = self.binder_memo.get(&b) {
            return id;
        }
        let id = self.binders.len() as u32;
        self.binders.push(b.clone());
        self.binder_memo.insert(b, id);
        id
    }

    /// True when the term uses only operators and sorts smtproxy models (so it can be
    /// evaluated, sliced and canonicalised): no quantifiers, annotations other than at the
    /// top, unknown operators or uninterpreted sorts.
    pub fn is_modelled(&self, t: TermId, memo: &mut FxHashMap<TermId, bool>) -> bool {
        if let Some(&b) = memo.get(&t) {
            return b;
        }
        let n = self.node(t);
        let own = match n.op {
            Op::Other(_) | Op::Forall(_) | Op::Exists(_) | Op::Str(_) | Op::Annot(_) => false,
            _ => self.sorts.is_modelled(n.sort),
        };
        let r = own && n.args.iter().all(|&a| self.is_modelled(a, memo));
        memo.insert(t, r);
        r
    }

    /// Value of a bit-vector literal node, if it is one.
    pub fn bv_value(&self, t: TermId) -> Option<BigUint> {
        match self.op(t) {
            Op::Bv(v) => Some(BigUint::from(v)),
            Op::BvWide(l) => match self.get_lit(l) {
                Lit::Nat(n) => Some(n.clone()),
                _ => None,
            },
            _ => None,
        }
    }
}

impl TermStore {
    /// A fresh internal symbol (macro parameters, bound variables). Its name starts with
    /// NUL, which no client symbol can contain; printers map it to a reserved `sp!` name.
    pub fn fresh_sym(&mut self, base: &str) -> Sym {
        let n = self.fresh;
        self.fresh += 1;
        self.sym(&format!("\0{n}!{base}"))
    }

    /// Replace subterms by `map` everywhere below `t` (sharing preserved, memoised). The
    /// replacement must have the same sort as what it replaces.
    pub fn substitute(&mut self, t: TermId, map: &FxHashMap<TermId, TermId>) -> TermId {
        let mut memo = map.clone();
        self.subst_rec(t, &mut memo)
    }
    fn subst_rec(&mut self, t: TermId, memo: &mut FxHashMap<TermId, TermId>) -> TermId {
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let n = self.node(t);
        let (op, sort, old) = (n.op, n.sort, n.args.to_vec());
        let r = if old.is_empty() {
            t
        } else {
            let args: Vec<TermId> = old.iter().map(|&a| self.subst_rec(a, memo)).collect();
            if args == old {
                t
            } else {
                self.intern(op, args, sort)
            }
        };
        memo.insert(t, r);
        r
    }
}
