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

/// Split conjuncts into independent components. Components are ordered by their first
/// conjunct's position in the input; conjuncts keep input order within a component.
/// Duplicated conjuncts in the input are kept as given (call `view::conjuncts` first).
pub fn slice(store: &TermStore, conjuncts: &[TermId]) -> Vec<Component> {
    let n = conjuncts.len();
    let res: Vec<Vec<Res>> = conjuncts.iter().map(|&c| resources(store, c)).collect();
    // Arrays read as a whole anywhere: all their cells collapse into the whole symbol.
    let whole: FxHashSet<Sym> = res
        .iter()
        .flatten()
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
    for (ci, rs) in res.iter().enumerate() {
        for &r in rs {
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
    let mut visited = Visited::new();
    let mut sort_ok: FxHashMap<crate::term::SortId, bool> = FxHashMap::default();
    let mut stack: Vec<TermId> = conjuncts.to_vec();
    while let Some(x) = stack.pop() {
        if !visited.insert(x) {
            continue;
        }
        let n = store.node(x);
        let ok_sort = *sort_ok
            .entry(n.sort)
            .or_insert_with(|| store.sorts.is_modelled(n.sort));
        if !ok_sort {
            return false;
        }
        match n.op {
            Op::Other(_) | Op::Forall(_) | Op::Exists(_) | Op::Str(_) | Op::Annot(_) => {
                return false
            }
            Op::Sym(s) => {
                let name = store.sym_name(s);
                match sig.fun(name) {
                    Some(FunDef::Declared {
                        sym,
                        params,
                        ret,
                        kind: DeclKind::Free,
                    }) if *sym == s && params.len() == n.args.len() && *ret == n.sort => {}
                    _ => return false,
                }
            }
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
