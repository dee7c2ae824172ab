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
//! what it reads, which symbol applications it depends on and which free constants it
//! mentions, all from one walk of it (`summarize`). The signature is asked again on every
//! query (`sliceable_with`), since after a reset the same symbol may be declared otherwise;
//! the memo only saves walking the same conjuncts query after query.
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

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
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

/// True for `(select a c)` with `a` an array constant and `c` a literal: it reads the
/// cell `(a, c)` only.
fn cell_of(store: &TermStore, op: Op, args: &[TermId]) -> Option<Res> {
    if op != Op::Select {
        return None;
    }
    let (a, i) = (args[0], args[1]);
    match store.op(a) {
        Op::Sym(s) if store.args(a).is_empty() && is_literal(store.op(i)) => Some(Res::Cell(s, i)),
        _ => None,
    }
}

/// A constant (a symbol applied to nothing) as a whole resource.
fn whole_constant(store: &TermStore, t: TermId) -> Option<Res> {
    match store.op(t) {
        Op::Sym(s) if store.args(t).is_empty() => Some(Res::Whole(s)),
        _ => None,
    }
}

/// One walk of the conjunct `t` for the memo: its resources (see the module doc) into
/// `res`, its symbol applications into `needs` (false when a node below it can never be
/// sliced: an unmodelled sort or operator), and its free constants into `leaves` in order
/// of first occurrence in a left-to-right pre-order walk (as `free_symbols_of` gives them).
/// A constant is read as a whole when some edge other than a cell's array reaches it (or
/// it is `t` itself); every node is visited once.
fn summarize(
    store: &TermStore,
    t: TermId,
    res: &mut Vec<Res>,
    needs: &mut Vec<Need>,
    leaves: &mut Vec<TermId>,
) -> bool {
    let mut sliceable = true;
    let mut bound: Vec<Sym> = Vec::new();
    let (res_from, needs_from, leaves_from) = (res.len(), needs.len(), leaves.len());
    let mut visited = Visited::new();
    res.extend(whole_constant(store, t));
    let mut stack = vec![t];
    while let Some(x) = stack.pop() {
        if !visited.insert(x) {
            continue;
        }
        let n = store.node(x);
        sliceable &= store.sorts.is_modelled(n.sort);
        match n.op {
            Op::Other(_) | Op::Str(_) | Op::Annot(_) => sliceable = false,
            Op::Forall(b) | Op::Exists(b) => {
                sliceable = false;
                bound.extend(store.binders[b as usize].iter().map(|&(s, _)| s));
            }
            Op::Sym(s) => {
                needs.push((s, n.args.len() as u32, n.sort));
                if n.args.is_empty() {
                    leaves.push(x);
                } else {
                    // A function application: the function as a whole.
                    res.push(Res::Whole(s));
                }
            }
            _ => {}
        }
        match cell_of(store, n.op, n.args) {
            Some(cell) => res.push(cell),
            None => res.extend(n.args.iter().filter_map(|&a| whole_constant(store, a))),
        }
        // A literal of a modelled sort other than a string adds nothing (no resource, need
        // or constant, and it can be sliced): not visited. KLEE's array indices are most of
        // the nodes below a cell.
        stack.extend(n.args.iter().rev().copied().filter(|&a| {
            let op = store.op(a);
            !(is_literal(op) && !matches!(op, Op::Str(_)) && store.sorts.is_modelled(store.sort(a)))
        }));
    }
    if !bound.is_empty() {
        // Quantified variables are not free constants.
        let mut kept = leaves_from;
        for i in leaves_from..leaves.len() {
            let x = leaves[i];
            if !matches!(store.op(x), Op::Sym(s) if bound.contains(&s)) {
                leaves[kept] = x;
                kept += 1;
            }
        }
        leaves.truncate(kept);
    }
    sort_dedup_from(res, res_from);
    sort_dedup_from(needs, needs_from);
    sliceable
}

/// Sort `v[from..]` and drop its duplicates, leaving `v[..from]` as it is.
fn sort_dedup_from<T: Ord + Copy>(v: &mut Vec<T>, from: usize) {
    v[from..].sort_unstable();
    let mut kept = from;
    for i in from..v.len() {
        if kept == from || v[kept - 1] != v[i] {
            v[kept] = v[i];
            kept += 1;
        }
    }
    v.truncate(kept);
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

/// What conjuncts seen before read, need and mention (`summarize`), for an engine whose
/// term store outlives many queries: terms never change, so neither does any of this, and a
/// symbolic executor's queries share most of their conjuncts. Bounded: emptied when it
/// holds `MEMO_MAX` conjuncts, resources, symbol applications or constants.
pub struct SliceMemo {
    summaries: FxHashMap<TermId, Summary>,
    arena: Vec<Res>,
    needs: Vec<Need>,
    leaves: Vec<TermId>,
    max: usize,
}

/// Where one conjunct's summary is in the memo's vectors.
#[derive(Clone, Copy)]
struct Summary {
    res: (u32, u32),
    /// `None` when something below it can never be sliced.
    needs: Option<(u32, u32)>,
    leaves: (u32, u32),
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

fn span(from: usize, to: usize) -> (u32, u32) {
    (from as u32, to as u32)
}

impl SliceMemo {
    fn with_max(max: usize) -> SliceMemo {
        SliceMemo {
            summaries: FxHashMap::default(),
            arena: Vec::new(),
            needs: Vec::new(),
            leaves: Vec::new(),
            max,
        }
    }
    /// Empty the memo when it holds `max` conjuncts, resources, needs or constants (a
    /// conjunct that reads nothing still takes an entry).
    fn make_room(&mut self) {
        let held = [
            self.summaries.len(),
            self.arena.len(),
            self.needs.len(),
            self.leaves.len(),
        ];
        if held.iter().any(|&n| n >= self.max) {
            *self = SliceMemo::with_max(self.max);
        }
    }
    /// The summary of `t` (computed if new).
    fn summary(&mut self, store: &TermStore, t: TermId) -> Summary {
        if let Some(&s) = self.summaries.get(&t) {
            return s;
        }
        let (r, n, l) = (self.arena.len(), self.needs.len(), self.leaves.len());
        let ok = summarize(store, t, &mut self.arena, &mut self.needs, &mut self.leaves);
        let s = Summary {
            res: span(r, self.arena.len()),
            needs: ok.then(|| span(n, self.needs.len())),
            leaves: span(l, self.leaves.len()),
        };
        if !ok {
            self.needs.truncate(n);
        }
        self.summaries.insert(t, s);
        s
    }
    fn resources(&self, s: Summary) -> &[Res] {
        &self.arena[s.res.0 as usize..s.res.1 as usize]
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
    let sums: Vec<Summary> = conjuncts.iter().map(|&c| memo.summary(store, c)).collect();
    let res = |ci: usize| memo.resources(sums[ci]);
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

/// `free_symbols_of`, from the memo's per-conjunct lists (each conjunct walked once,
/// ever): first occurrence across the roots in order is first occurrence in each root's
/// own list, those of earlier roots skipped.
pub fn free_symbols_with(store: &TermStore, roots: &[TermId], memo: &mut SliceMemo) -> Vec<TermId> {
    memo.make_room();
    let sums: Vec<Summary> = roots.iter().map(|&c| memo.summary(store, c)).collect();
    let leaves = |s: Summary| &memo.leaves[s.leaves.0 as usize..s.leaves.1 as usize];
    if let [one] = sums[..] {
        return leaves(one).to_vec();
    }
    let mut seen = Visited::new();
    let mut out: Vec<TermId> = Vec::new();
    for s in sums {
        out.extend(leaves(s).iter().filter(|&&l| seen.insert(l)));
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
        spans.push(memo.summary(store, c).needs?);
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

/// Whether the conjunct `t` keeps its query from being sliced as plain constants: it
/// cannot be sliced at all (an unmodelled sort or operator below it), or it applies a
/// declared function to one argument or more (see `sliceable_with`, which finds the same
/// after splitting and sorting the whole query). From what `memo` keeps of `t`.
pub fn blocks_slicing(store: &TermStore, t: TermId, memo: &mut SliceMemo) -> bool {
    memo.make_room();
    match memo.summary(store, t).needs {
        Some((a, b)) => memo.needs[a as usize..b as usize]
            .iter()
            .any(|&(_, arity, _)| arity > 0),
        None => true,
    }
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

    /// A store with `(bvult #x00 x)` and `(= (f x) #x00)` over 8-bit `x` and `f`: the
    /// store, the 8-bit sort, and the two terms.
    fn x_and_f() -> (TermStore, crate::term::SortId, TermId, TermId) {
        let mut s = TermStore::new();
        let b8 = s.sorts.bv(8);
        let x = s.mk_const("x", b8);
        let zero = s.mk_bv_u64(0, 8);
        let lt = s.app(Op::BvUlt, vec![zero, x]).unwrap();
        let f = s.sym("f");
        let fx = s.mk_sym_app(f, vec![x], b8);
        let uses_f = s.app(Op::Eq, vec![fx, zero]).unwrap();
        (s, b8, lt, uses_f)
    }

    /// The memo keeps what a conjunct needs, never the verdict: the signature is asked again
    /// each time, so a name declared otherwise after a reset is seen.
    #[test]
    fn sliceable_with_a_memo_asks_the_signature_each_time() {
        let (mut s, b8, lt, uses_f) = x_and_f();
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

    /// `blocks_slicing` on one conjunct says what `sliceable_with` says of any query that
    /// holds it, whatever is declared: never sliced as plain constants.
    #[test]
    fn a_conjunct_that_blocks_slicing_blocks_it_in_any_query() {
        let (mut s, b8, lt, uses_f) = x_and_f();
        let sq = s.mk_str("a");
        let strs = s.app(Op::Eq, vec![sq, sq]).unwrap();
        let mut sig = Signature::default();
        declare(&mut s, &mut sig, "x", vec![], b8, DeclKind::Free);
        declare(&mut s, &mut sig, "f", vec![b8], b8, DeclKind::Free);
        let mut memo = SliceMemo::default();
        assert!(!blocks_slicing(&s, lt, &mut memo));
        for c in [uses_f, strs] {
            assert!(blocks_slicing(&s, c, &mut memo));
            for q in [vec![c], vec![lt, c], vec![c, lt]] {
                assert_ne!(sliceable_with(&s, &sig, &q, &mut memo), Some(false));
                assert_ne!(
                    sliceable_with(&s, &Signature::default(), &q, &mut memo),
                    Some(false)
                );
            }
        }
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
            assert!(
                memo.summaries.len() <= 8,
                "{} conjuncts kept",
                memo.summaries.len()
            );
        }
        assert_eq!(slice(&s, &queries[0]).len(), 2);
        assert_eq!(slice(&s, &queries[1]).len(), 1);
        assert_eq!(slice(&s, &queries[2]).len(), 1);
    }

    /// What a conjunct reads, walked as before the one-walk summary: cells at literal
    /// indices of array constants, everything else read whole (the reference `summarize`
    /// is checked against).
    fn reference_resources(store: &TermStore, t: TermId) -> Vec<Res> {
        let mut out: FxHashSet<Res> = FxHashSet::default();
        let mut visited = Visited::new();
        let mut stack = vec![t];
        while let Some(x) = stack.pop() {
            if !visited.insert(x) {
                continue;
            }
            let n = store.node(x);
            match n.op {
                Op::Sym(s) => {
                    out.insert(Res::Whole(s));
                    stack.extend(n.args.iter().copied());
                }
                Op::Select => match store.op(n.args[0]) {
                    Op::Sym(s)
                        if store.args(n.args[0]).is_empty() && is_literal(store.op(n.args[1])) =>
                    {
                        out.insert(Res::Cell(s, n.args[1]));
                    }
                    _ => stack.extend(n.args.iter().copied()),
                },
                _ => stack.extend(n.args.iter().copied()),
            }
        }
        let mut v: Vec<Res> = out.into_iter().collect();
        v.sort_unstable();
        v
    }

    /// On random terms over arrays (cells at literal and symbolic indices, stores, whole
    /// array equalities), constants, a function and a quantifier, one walk gives what the
    /// separate walks gave: the resources, the free constants in order, sliceability.
    #[test]
    fn one_walk_agrees_with_separate_walks() {
        let mut s = TermStore::new();
        let (b8, b32) = (s.sorts.bv(8), s.sorts.bv(32));
        let arr = s.sorts.array(b32, b8);
        let arrays = [s.mk_const("a", arr), s.mk_const("b", arr)];
        let words = [s.mk_const("i", b32), s.mk_const("j", b32)];
        let bytes = [s.mk_const("x", b8), s.mk_const("y", b8)];
        let f = s.sym("f");
        let mut sig = Signature::default();
        for (name, sort) in [
            ("a", arr),
            ("b", arr),
            ("i", b32),
            ("j", b32),
            ("x", b8),
            ("y", b8),
        ] {
            declare(&mut s, &mut sig, name, vec![], sort, DeclKind::Free);
        }
        declare(&mut s, &mut sig, "f", vec![b8], b8, DeclKind::Free);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| crate::test_rng::xorshift(&mut seed) % n;
        for round in 0..2000 {
            // A pool of byte terms built up from leaves.
            let mut pool: Vec<TermId> = bytes.to_vec();
            for _ in 0..1 + next(8) {
                let a = arrays[next(2) as usize];
                let t = match next(7) {
                    0 | 1 => {
                        let i = s.mk_bv_u64(next(4), 32);
                        s.app(Op::Select, vec![a, i]).unwrap()
                    }
                    2 => s.app(Op::Select, vec![a, words[next(2) as usize]]).unwrap(),
                    3 => {
                        let (i, v) = (
                            s.mk_bv_u64(next(4), 32),
                            pool[next(pool.len() as u64) as usize],
                        );
                        let st = s.app(Op::Store, vec![a, i, v]).unwrap();
                        let k = s.mk_bv_u64(next(4), 32);
                        s.app(Op::Select, vec![st, k]).unwrap()
                    }
                    4 => s.mk_sym_app(f, vec![pool[next(pool.len() as u64) as usize]], b8),
                    _ => {
                        let (l, r) = (
                            pool[next(pool.len() as u64) as usize],
                            pool[next(pool.len() as u64) as usize],
                        );
                        s.app(Op::BvAdd, vec![l, r]).unwrap()
                    }
                };
                pool.push(t);
            }
            let (l, r) = (
                pool[next(pool.len() as u64) as usize],
                pool[next(pool.len() as u64) as usize],
            );
            let mut conj = s.app(Op::BvUlt, vec![l, r]).unwrap();
            if next(10) == 0 {
                let other = arrays[1 - next(2) as usize];
                let whole = s.mk_eq(arrays[0], other).unwrap();
                conj = s.mk_and(vec![conj, whole]);
            }
            if next(20) == 0 {
                let v = s.sym(&format!("q{round}"));
                let bv = s.mk_sym_app(v, vec![], b8);
                let body = s.app(Op::BvUlt, vec![bv, l]).unwrap();
                conj = s.mk_quant(true, vec![(v, b8)], body).unwrap();
            }
            let (mut res, mut needs, mut leaves) = (Vec::new(), Vec::new(), Vec::new());
            let ok = summarize(&s, conj, &mut res, &mut needs, &mut leaves);
            assert_eq!(res, reference_resources(&s, conj), "round {round}");
            assert_eq!(leaves, free_symbols(&s, conj), "round {round}");
            assert_eq!(
                ok && sliceable_with(&s, &sig, &[conj], &mut SliceMemo::default()).is_some(),
                sliceable(&s, &sig, &[conj])
            );
            assert_eq!(ok, !matches!(s.op(conj), Op::Forall(_)), "round {round}");
        }
    }
}
