//! Pass 1 of canonicalisation: local normalisation by logical equivalences only, bottom-up
//! (see the parent module's doc for the rewrites), so the result is equivalent to the input.

use super::dag::Dag;
use crate::term::{Lit, Op, SortId, SortStore, TermId, TermStore};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

pub(super) type Lin = (BTreeMap<TermId, BigInt>, BigInt);

pub(super) fn int_lit(store: &mut TermStore, v: &BigInt) -> TermId {
    let m = store.mk_num(v.magnitude().clone());
    if v.is_negative() {
        store.intern(Op::Neg, vec![m], SortStore::INT)
    } else {
        m
    }
}

pub(super) const MAX_LIN_TERMS: usize = 64;

pub(super) struct Norm {
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
pub(super) fn build_sum(store: &mut TermStore, m: &BTreeMap<TermId, BigInt>, k: &BigInt) -> TermId {
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
pub(super) fn linear_atom(store: &mut TermStore, op: Op, (m, k): Lin) -> TermId {
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

pub(super) fn neg_of(store: &mut TermStore, x: TermId) -> TermId {
    match store.op(x) {
        Op::Not => store.args(x)[0],
        Op::True => TermStore::FALSE,
        Op::False => TermStore::TRUE,
        _ => store.mk_not(x),
    }
}

/// Normalise all of `roots` bottom-up; returns their normalised forms, in order.
pub(super) fn normalise(store: &mut TermStore, roots: &[TermId]) -> Vec<TermId> {
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
pub(super) fn rewrites(op: Op) -> bool {
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

pub(super) fn rewrite(
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
