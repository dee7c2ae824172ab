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
//!
//! Layout: `normal` is pass 1, `hash` the name-independent hashes of passes 2-3 (a fixed
//! function: the key of a component is a hash of `text`, so changing either changes every
//! stored key), `dag` the local-index view of a term DAG that the passes and the printer
//! share, `text` the printing of pass 5; this file runs the passes in order.

mod dag;
mod hash;
mod normal;
mod text;

pub use text::print_canonical;

use crate::smt2::printer::push_backend_symbol;
use crate::term::{Op, Sym, TermId, TermStore};
use dag::{Dag, Local};
use hash::{is_commutative, is_free_leaf, refined_hashes};
use normal::normalise;
use rustc_hash::{FxHashMap, FxHashSet};
use text::{push_usize, Printer};

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

fn bound_syms(store: &TermStore, nodes: &[TermId]) -> FxHashSet<Sym> {
    let mut b = FxHashSet::default();
    for &x in nodes {
        if let Op::Forall(i) | Op::Exists(i) = store.op(x) {
            b.extend(store.binders[i as usize].iter().map(|&(s, _)| s));
        }
    }
    b
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
