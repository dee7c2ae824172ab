//! Independence slicing (KLEE's independent-constraint solver, Green's slicing): conjuncts
//! are grouped into components so that two conjuncts in different components read no
//! common symbol, array cell or function. Then the conjunction is satisfiable iff every
//! component is, and a model is the union of the components' models.
//!
//! What a conjunct reads (its *resources*):
//! - every free constant it mentions, as a whole (by symbol);
//! - for `(select a c)` with `a` a declared array constant and `c` a literal index, only the
//!   cell `(a, c)`;
//! - any other use of an array constant (a symbolic index, a `store` chain on it, array
//!   equality, passing it to a function) reads the whole array, which conflicts with every
//!   cell of it (in every conjunct, across the whole query);
//! - every function symbol applied (by symbol).
//!
//! Precondition for soundness: every `Op::Sym` in the conjuncts is a *free* declaration
//! (declare-fun/declare-const) or a bound variable. A `define-fun-rec`'d function or a datatype
//! constructor may depend on or constrain things the terms do not show; use `sliceable` to
//! check, and do not slice (use one component) when it says no.
//!
//! An engine keeps a `SliceMemo`: per conjunct (a hash-consed term, which never changes),
//! what it reads and which symbol applications it depends on. The signature is asked again
//! on every query (`sliceable_with`), since after a reset the same symbol may be declared
//! otherwise; the memo only saves walking the same conjuncts query after query.
//!
//! All traversals are iterative (explicit stacks), so term depth is not limited by the stack.

use crate::term::signature::{DeclKind, FunDef, Signature};
use crate::term::visit::Visited;
use crate::term::{Op, Sort, Sym, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};

/// One independent group of conjuncts, in their input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Component {
    pub conjuncts: Vec<TermId>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Res {
    /// A whole symbol: a constant, a whole array, or a function.
    Whole(Sym),
    /// One cell of an array constant at a literal index.
    Cell(Sym, TermId),
}

fn is_literal(op: Op) -> bool {
    matches!(
        op,
        Op::True | Op::False | Op::Bv(_) | Op::BvWide(_) | Op::Num(_) | Op::Dec(_) | Op::Str(_)
    )
}

/// The resources `t` reads (see module doc), without duplicates.
fn resources(store: &TermStore, t: TermId) -> Vec<Res> {
    let mut out: Vec<Res> = Vec::new();
    let mut seen_res: FxHashSet<Res> = FxHashSet::default();
    let mut visited = Visited::new();
    let mut stack = vec![t];
    let mut add = |r: Res, out: &mut Vec<Res>| {
        if seen_res.insert(r) {
            out.push(r);
        }
    };
    while let Some(x) = stack.pop() {
        if !visited.insert(x) {
            continue;
        }
        let n = store.node(x);
        match n.op {
            Op::Sym(s) => {
                // A constant (leaf) or a function application: the symbol as a whole.
                add(Res::Whole(s), &mut out);
                stack.extend(n.args.iter().copied());
            }
            Op::Select => {
                let (a, i) = (n.args[0], n.args[1]);
                match store.op(a) {
                    Op::Sym(s) if store.args(a).is_empty() && is_literal(store.op(i)) => {
                        add(Res::Cell(s, i), &mut out);
                    }
                    _ => stack.extend(n.args.iter().copied()),
                }
            }
            _ => stack.extend(n.args.iter().copied()),
        }
    }
    out
}

struct Uf {
    parent: Vec<usize>,
}
impl Uf {
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // Keep the smaller index as root (deterministic).
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi] = lo;
        }
    }
}

/// The resources of conjuncts seen before, for an engine whose term store outlives many
/// queries: terms never change, so neither do their resources, and a symbolic executor's
/// queries share most of their conjuncts. Bounded: emptied when it holds `MEMO_MAX`
/// conjuncts, resources or symbol applications.
pub struct SliceMemo {
    spans: FxHashMap<TermId, (u32, u32)>,
    arena: Vec<Res>,
    /// For `sliceable_with`: per conjunct, `None` when something below it can never be
    /// sliced, else where in `needs` the symbol applications it depends on are.
    need_spans: FxHashMap<TermId, Option<(u32, u32)>>,
    needs: Vec<Need>,
    max: usize,
}

/// A symbol applied in a conjunct: the symbol, its number of arguments and the sort of the
/// application. The conjunct can be sliced only while the signature declares each of these
/// as a free function of that arity and result sort.
type Need = (Sym, u32, crate::term::SortId);

const MEMO_MAX: usize = 1 << 20;

impl Default for SliceMemo {
    fn default() -> SliceMemo {
        SliceMemo::with_max(MEMO_MAX)
    }
}

impl SliceMemo {
    fn with_max(max: usize) -> SliceMemo {
        SliceMemo {
            spans: FxHashMap::default(),
            arena: Vec::new(),
            need_spans: FxHashMap::default(),
            needs: Vec::new(),
            max,
        }
    }
    /// Empty the memo when it holds `max` conjuncts, resources or needs (a conjunct that
    /// reads nothing still takes an entry).
    fn make_room(&mut self) {
        let held = [
            self.spans.len(),
            self.arena.len(),
            self.need_spans.len(),
            self.needs.len(),
        ];
        if held.iter().any(|&n| n >= self.max) {
            *self = SliceMemo::with_max(self.max);
        }
    }
    /// Where the needs of `t` are in `needs` (computed if new); `None` if `t` cannot be sliced
    /// whatever is declared.
    fn need_span(&mut self, store: &TermStore, t: TermId) -> Option<(u32, u32)> {
        if let Some(&s) = self.need_spans.get(&t) {
            return s;
        }
        let start = self.needs.len();
        let mut mine = Vec::new();
        let s = structural_needs(store, t, &mut mine).then(|| {
            mine.sort_unstable();
            mine.dedup();
            self.needs.extend_from_slice(&mine);
            (start as u32, self.needs.len() as u32)
        });
        self.need_spans.insert(t, s);
        s
    }
    /// Where the resources of `t` are in the arena (computed if new).
    fn span(&mut self, store: &TermStore, t: TermId) -> (u32, u32) {
        if let Some(&s) = self.spans.get(&t) {
            return s;
        }
        let start = self.arena.len() as u32;
        self.arena.extend(resources(store, t));
        let s = (start, self.arena.len() as u32);
        self.spans.insert(t, s);
        s
    }
}

/// Split conjuncts into independent components. Components are ordered by their first
/// conjunct's position in the input; conjuncts keep input order within a component.
/// Duplicated conjuncts in the input are kept as given (call `view::conjuncts` first).
pub fn slice(store: &TermStore, conjuncts: &[TermId]) -> Vec<Component> {
    slice_with(store, conjuncts, &mut SliceMemo::default())
}

/// `slice`, with the resources of conjuncts kept in (and taken from) `memo`.
pub fn slice_with(store: &TermStore, conjuncts: &[TermId], memo: &mut SliceMemo) -> Vec<Component> {
    memo.make_room();
    let n = conjuncts.len();
    let spans: Vec<(u32, u32)> = conjuncts.iter().map(|&c| memo.span(store, c)).collect();
    let res = |ci: usize| {
        let (a, b) = spans[ci];
        &memo.arena[a as usize..b as usize]
    };
    // Arrays read as a whole anywhere: all their cells collapse into the whole symbol.
    let whole: FxHashSet<Sym> = (0..n)
        .flat_map(res)
        .filter_map(|r| {
            if let Res::Whole(s) = r {
                Some(*s)
            } else {
                None
            }
        })
        .collect();
    let mut uf = Uf {
        parent: (0..n).collect(),
    };
    let mut owner: FxHashMap<Res, usize> = FxHashMap::default();
    for ci in 0..n {
        for &r in res(ci) {
            let r = match r {
                Res::Cell(s, _) if whole.contains(&s) => Res::Whole(s),
                r => r,
            };
            match owner.get(&r) {
                Some(&o) => uf.union(o, ci),
                None => {
                    owner.insert(r, ci);
                }
            }
        }
    }
    let mut comp_of_root: FxHashMap<usize, usize> = FxHashMap::default();
    let mut comps: Vec<Component> = Vec::new();
    for (ci, &c) in conjuncts.iter().enumerate() {
        let r = uf.find(ci);
        let k = *comp_of_root.entry(r).or_insert_with(|| {
            comps.push(Component {
                conjuncts: Vec::new(),
            });
            comps.len() - 1
        });
        comps[k].conjuncts.push(c);
    }
    comps
}

/// The free constants (leaf `Op::Sym` nodes, excluding quantifier-bound variables) of `t`,
/// in order of first occurrence in a left-to-right depth-first pre-order walk of the DAG.
pub fn free_symbols(store: &TermStore, t: TermId) -> Vec<TermId> {
    free_symbols_of(store, &[t])
}

/// `free_symbols` over several roots (first occurrence across them, in order).
pub fn free_symbols_of(store: &TermStore, roots: &[TermId]) -> Vec<TermId> {
    let mut out = Vec::new();
    let mut bound: FxHashSet<Sym> = FxHashSet::default();
    let mut visited = Visited::new();
    let mut stack: Vec<TermId> = roots.iter().rev().copied().collect();
    while let Some(x) = stack.pop() {
        if !visited.insert(x) {
            continue;
        }
        let n = store.node(x);
        match n.op {
            Op::Sym(_) if n.args.is_empty() => out.push(x),
            Op::Forall(b) | Op::Exists(b) => {
                bound.extend(store.binders[b as usize].iter().map(|&(s, _)| s));
            }
            _ => {}
        }
        stack.extend(n.args.iter().rev().copied());
    }
    if !bound.is_empty() {
        out.retain(|&x| match store.op(x) {
            Op::Sym(s) => !bound.contains(&s),
            _ => true,
        });
    }
    out
}

/// True when the conjuncts can be sliced and canonicalised soundly: only modelled sorts
/// (Bool, Int, Real, bit-vectors, arrays of those), no quantifiers, annotations or unknown
/// operators below the top, and every symbol is a free declaration in `sig` (no
/// `define-fun-rec` functions or datatype symbols).
pub fn sliceable(store: &TermStore, sig: &Signature, conjuncts: &[TermId]) -> bool {
    sliceable_with(store, sig, conjuncts, &mut SliceMemo::default()).is_some()
}

/// `sliceable`, with what each conjunct depends on kept in (and taken from) `memo`; the
/// signature is asked afresh every time. `None` when the conjuncts cannot be sliced, else
/// whether an uninterpreted function is applied anywhere in them.
pub fn sliceable_with(
    store: &TermStore,
    sig: &Signature,
    conjuncts: &[TermId],
    memo: &mut SliceMemo,
) -> Option<bool> {
    memo.make_room();
    let mut spans = Vec::with_capacity(conjuncts.len());
    for &c in conjuncts {
        spans.push(memo.need_span(store, c)?);
    }
    let mut needs: Vec<Need> = spans
        .iter()
        .flat_map(|&(a, b)| memo.needs[a as usize..b as usize].iter().copied())
        .collect();
    needs.sort_unstable();
    needs.dedup();
    let mut functions = false;
    for (s, arity, sort) in needs {
        match sig.fun(store.sym_name(s)) {
            Some(FunDef::Declared {
                sym,
                params,
                ret,
                kind: DeclKind::Free,
            }) if *sym == s && params.len() == arity as usize && *ret == sort => {}
            _ => return None,
        }
        functions |= arity > 0;
    }
    Some(functions)
}

/// The part of `sliceable` that does not depend on the signature, for the conjunct `t`:
/// false when a node below it has an unmodelled sort or operator; else true, with every
/// symbol application below it added to `out` (duplicates included).
fn structural_needs(store: &TermStore, t: TermId, out: &mut Vec<Need>) -> bool {
    let mut visited = Visited::new();
    let mut stack: Vec<TermId> = vec![t];
    while let Some(x) = stack.pop() {
        if !visited.insert(x) {
            continue;
        }
        let n = store.node(x);
        if !store.sorts.is_modelled(n.sort) {
            return false;
        }
        match n.op {
            Op::Other(_) | Op::Forall(_) | Op::Exists(_) | Op::Str(_) | Op::Annot(_) => {
                return false
            }
            Op::Sym(s) => out.push((s, n.args.len() as u32, n.sort)),
            _ => {}
        }
        stack.extend(n.args.iter().copied());
    }
    true
}

/// True when `s` is an array sort.
pub fn is_array_sort(store: &TermStore, s: crate::term::SortId) -> bool {
    matches!(store.sorts.get(s), Sort::Array(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declare(
        s: &mut TermStore,
        sig: &mut Signature,
        name: &str,
        params: Vec<crate::term::SortId>,
        ret: crate::term::SortId,
        kind: DeclKind,
    ) {
        let sym = s.sym(name);
        sig.add_fun(
            name,
            FunDef::Declared {
                sym,
                params,
                ret,
                kind,
            },
        );
    }

    /// The memo keeps what a conjunct needs, never the verdict: the signature is asked again
    /// each time, so a name declared otherwise after a reset is seen.
    #[test]
    fn sliceable_with_a_memo_asks_the_signature_each_time() {
        let mut s = TermStore::new();
        let b8 = s.sorts.bv(8);
        let x = s.mk_const("x", b8);
        let zero = s.mk_bv_u64(0, 8);
        let lt = s.app(Op::BvUlt, vec![zero, x]).unwrap();
        let f = s.sym("f");
        let fx = s.mk_sym_app(f, vec![x], b8);
        let uses_f = s.app(Op::Eq, vec![fx, zero]).unwrap();
        let mut memo = SliceMemo::default();
        let mut sig = Signature::default();
        declare(&mut s, &mut sig, "x", vec![], b8, DeclKind::Free);
        declare(&mut s, &mut sig, "f", vec![b8], b8, DeclKind::Free);
        for _ in 0..2 {
            assert_eq!(sliceable_with(&s, &sig, &[lt], &mut memo), Some(false));
            assert_eq!(
                sliceable_with(&s, &sig, &[lt, uses_f], &mut memo),
                Some(true)
            );
            assert!(sliceable(&s, &sig, &[lt, uses_f]));
        }
        // The same terms under other declarations of `x`: not free, another sort, a function.
        let b16 = s.sorts.bv(16);
        for (params, ret, kind) in [
            (vec![], b8, DeclKind::Defined),
            (vec![], b16, DeclKind::Free),
            (vec![b8], b8, DeclKind::Free),
        ] {
            let mut other = Signature::default();
            declare(&mut s, &mut other, "x", params, ret, kind);
            declare(&mut s, &mut other, "f", vec![b8], b8, DeclKind::Free);
            assert_eq!(sliceable_with(&s, &other, &[lt], &mut memo), None);
            assert!(!sliceable(&s, &other, &[lt]));
        }
        // Undeclared: not sliceable either.
        assert_eq!(
            sliceable_with(&s, &Signature::default(), &[lt], &mut memo),
            None
        );
        // Something that can never be sliced, whatever is declared.
        let sq = s.mk_str("a");
        let strs = s.app(Op::Eq, vec![sq, sq]).unwrap();
        assert_eq!(sliceable_with(&s, &sig, &[lt, strs], &mut memo), None);
        assert!(!sliceable(&s, &sig, &[lt, strs]));
    }

    #[test]
    fn a_memo_full_or_not_slices_as_without_one() {
        let mut s = TermStore::new();
        let (b32, b8) = (s.sorts.bv(32), s.sorts.bv(8));
        let arr = s.sorts.array(b32, b8);
        let a = s.mk_const("a", arr);
        let x = s.mk_const("x", b8);
        let y = s.mk_const("y", b8);
        let cell = |s: &mut TermStore, i: u64| {
            let i = s.mk_bv_u64(i, 32);
            s.app(Op::Select, vec![a, i]).unwrap()
        };
        let (c0, c1) = (cell(&mut s, 0), cell(&mut s, 1));
        let e0 = s.app(Op::Eq, vec![c0, x]).unwrap();
        let e1 = s.app(Op::Eq, vec![c1, y]).unwrap();
        let xy = s.app(Op::BvUlt, vec![x, y]).unwrap();
        let z = s.mk_const("z", b32);
        let sym_idx = s.app(Op::Select, vec![a, z]).unwrap();
        let whole = s.app(Op::Eq, vec![sym_idx, x]).unwrap();
        let queries: Vec<Vec<TermId>> = vec![
            vec![e0, e1],        // two cells: two components
            vec![e0, e1, xy],    // joined through x < y
            vec![e1, e0, whole], // a whole read of `a` joins its cells
            vec![e0, e1],
        ];
        // A memo that keeps everything, and one emptied after every query or two.
        for max in [MEMO_MAX, 1, 3] {
            let mut memo = SliceMemo::with_max(max);
            for q in &queries {
                assert_eq!(slice_with(&s, q, &mut memo), slice(&s, q), "max {max}");
            }
        }
        // Conjuncts that read nothing still count against the bound.
        let mut memo = SliceMemo::with_max(8);
        for k in 0..100 {
            let c = s.mk_bv_u64(k, 8);
            let ground = s.app(Op::Eq, vec![c, c]).unwrap();
            slice_with(&s, &[ground], &mut memo);
            assert!(memo.spans.len() <= 8, "{} conjuncts kept", memo.spans.len());
        }
        assert_eq!(slice(&s, &queries[0]).len(), 2);
        assert_eq!(slice(&s, &queries[1]).len(), 1);
        assert_eq!(slice(&s, &queries[2]).len(), 1);
    }
}
