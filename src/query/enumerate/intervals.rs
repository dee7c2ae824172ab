//! A refutation by intervals: each bit-vector subterm of at most 64 bits is given an
//! unsigned interval that holds every value it can take, each Bool subterm true, false or
//! either, bottom up from the atoms (any value of their width, or what the caller knows
//! narrower). A conjunct that comes out false under every value is unsat, and so is the
//! component. KLEE counts bytes with sums of `(ite (= #x2c byte) #b1 #b0)`, zero-extended
//! to 64 bits, and then compares the count with a bound no count of a few bytes reaches:
//! the interval of the sum, [0, 2], is far from it.
//!
//! Invariant: every rule over-approximates (an interval never leaves out a value the term
//! takes under some assignment of its atoms within theirs; `Either` is always allowed), so
//! a conjunct found `False` is false under every such assignment. An operator without a
//! rule gives its sort's whole range, or `Either`. The walk gives up (`false`) past
//! [`MAX_NODES`].

use crate::query::value::mask64;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::FxHashMap;

/// The most distinct subterms looked at for one component.
const MAX_NODES: usize = 1 << 14;

/// What a subterm can be: a Bool's value, or a bit-vector's interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Abs {
    True,
    False,
    Either,
    /// The values of an `n`-bit term lie in `[lo, hi]` (`n <= 64`).
    Bv {
        lo: u64,
        hi: u64,
        n: u32,
    },
    /// Anything else (a wider bit-vector, another sort).
    Other,
}

impl Abs {
    fn full(n: u32) -> Abs {
        Abs::Bv {
            lo: 0,
            hi: mask64(n),
            n,
        }
    }
    fn of_bool(b: bool) -> Abs {
        if b {
            Abs::True
        } else {
            Abs::False
        }
    }
    fn not(self) -> Abs {
        match self {
            Abs::True => Abs::False,
            Abs::False => Abs::True,
            other => other,
        }
    }
    /// The interval, if a bit-vector of `n` bits.
    fn bv(self) -> Option<(u64, u64, u32)> {
        match self {
            Abs::Bv { lo, hi, n } => Some((lo, hi, n)),
            _ => None,
        }
    }
    fn known(self) -> Option<bool> {
        match self {
            Abs::True => Some(true),
            Abs::False => Some(false),
            _ => None,
        }
    }
}

/// Whether some conjunct of `conj` is false under every value of its atoms; `known` gives
/// an interval that a term's value is known to lie in whenever every conjunct holds (a
/// word's bounds), else its whole range is assumed.
pub(super) fn refutes(
    store: &TermStore,
    conj: &[TermId],
    known: &dyn Fn(TermId) -> Option<(u64, u64)>,
) -> bool {
    let mut memo: FxHashMap<TermId, Abs> = FxHashMap::default();
    conj.iter()
        .any(|&c| matches!(abs(store, c, known, &mut memo), Some(Abs::False)))
}

/// The abstract value of `root` (None: past [`MAX_NODES`]).
fn abs(
    store: &TermStore,
    root: TermId,
    known: &dyn Fn(TermId) -> Option<(u64, u64)>,
    memo: &mut FxHashMap<TermId, Abs>,
) -> Option<Abs> {
    // Post-order without recursion: a node is computed once its arguments are.
    let mut stack: Vec<(TermId, bool)> = vec![(root, false)];
    while let Some((t, ready)) = stack.pop() {
        if memo.contains_key(&t) {
            continue;
        }
        if !ready {
            if memo.len() >= MAX_NODES {
                return None;
            }
            stack.push((t, true));
            for &a in store.args(t) {
                if !memo.contains_key(&a) {
                    stack.push((a, false));
                }
            }
            continue;
        }
        let v = step(store, t, known, memo);
        memo.insert(t, v);
    }
    memo.get(&root).copied()
}

/// One node's abstract value from its arguments' (all in `memo`).
fn step(
    store: &TermStore,
    t: TermId,
    known: &dyn Fn(TermId) -> Option<(u64, u64)>,
    memo: &FxHashMap<TermId, Abs>,
) -> Abs {
    let width = store
        .sorts
        .bv_width(store.sort(t))
        .filter(|&w| (1..=64).contains(&w));
    let args = store.args(t);
    let a = |i: usize| {
        args.get(i)
            .and_then(|x| memo.get(x))
            .copied()
            .unwrap_or(Abs::Other)
    };
    let v = match store.op(t) {
        Op::True => Abs::True,
        Op::False => Abs::False,
        Op::Bv(x) => match width {
            Some(n) => Abs::Bv {
                lo: x & mask64(n),
                hi: x & mask64(n),
                n,
            },
            None => Abs::Other,
        },
        Op::Not => a(0).not(),
        op @ (Op::And | Op::Or) => {
            // An `and` is false when one argument is, true when all are; an `or` the dual.
            let (absorbing, neutral) = if op == Op::And {
                (Abs::False, Abs::True)
            } else {
                (Abs::True, Abs::False)
            };
            let vs: Vec<Abs> = (0..args.len()).map(a).collect();
            if vs.contains(&absorbing) {
                absorbing
            } else if vs.iter().all(|v| *v == neutral) {
                neutral
            } else {
                Abs::Either
            }
        }
        Op::Implies if args.len() == 2 => match (a(0).known(), a(1).known()) {
            (Some(false), _) | (_, Some(true)) => Abs::True,
            (Some(true), Some(false)) => Abs::False,
            _ => Abs::Either,
        },
        Op::Xor if args.len() == 2 => match (a(0).known(), a(1).known()) {
            (Some(x), Some(y)) => Abs::of_bool(x != y),
            _ => Abs::Either,
        },
        Op::Eq if args.len() == 2 => equal(a(0), a(1)),
        Op::Distinct if args.len() == 2 => equal(a(0), a(1)).not(),
        Op::Ite if args.len() == 3 => match a(0).known() {
            Some(true) => a(1),
            Some(false) => a(2),
            None => hull(a(1), a(2)),
        },
        Op::BvUlt | Op::BvUle | Op::BvUgt | Op::BvUge if args.len() == 2 => {
            compare(store.op(t), a(0), a(1))
        }
        Op::BvSlt | Op::BvSle | Op::BvSgt | Op::BvSge if args.len() == 2 => {
            // Both in the lower half: signed order is unsigned order there.
            let low = |v: Abs| v.bv().is_some_and(|(_, hi, n)| hi < 1u64 << (n - 1));
            if low(a(0)) && low(a(1)) {
                let op = match store.op(t) {
                    Op::BvSlt => Op::BvUlt,
                    Op::BvSle => Op::BvUle,
                    Op::BvSgt => Op::BvUgt,
                    _ => Op::BvUge,
                };
                compare(op, a(0), a(1))
            } else {
                Abs::Either
            }
        }
        _ => match width {
            Some(n) => bv_step(store, t, n, &a, known),
            None if store.sorts.get(store.sort(t)) == &crate::term::Sort::Bool => Abs::Either,
            None => Abs::Other,
        },
    };
    // A known interval narrows what the rules give (both hold).
    match (v, width.and_then(|_| known(t))) {
        (Abs::Bv { lo, hi, n }, Some((klo, khi))) if klo.max(lo) <= khi.min(hi) => Abs::Bv {
            lo: klo.max(lo),
            hi: khi.min(hi),
            n,
        },
        _ => v,
    }
}

/// A bit-vector operator's interval (`n` bits).
fn bv_step(
    store: &TermStore,
    t: TermId,
    n: u32,
    a: &dyn Fn(usize) -> Abs,
    known: &dyn Fn(TermId) -> Option<(u64, u64)>,
) -> Abs {
    let m = mask64(n);
    let full = Abs::full(n);
    let mk = |lo: u128, hi: u128| -> Abs {
        if lo <= hi && hi <= u128::from(m) {
            Abs::Bv {
                lo: lo as u64,
                hi: hi as u64,
                n,
            }
        } else {
            full
        }
    };
    let two = || Some((a(0).bv()?, a(1).bv()?));
    match store.op(t) {
        Op::Sym(_) => match known(t) {
            Some((lo, hi)) => mk(lo.into(), hi.into()),
            None => full,
        },
        Op::ZeroExtend(_) => match a(0).bv() {
            Some((lo, hi, _)) => mk(lo.into(), hi.into()),
            None => full,
        },
        Op::Concat if store.args(t).len() == 2 => match two() {
            Some(((alo, ahi, _), (blo, bhi, bn))) => {
                let s = |x: u64, y: u64| (u128::from(x) << bn) | u128::from(y);
                mk(s(alo, blo), s(ahi, bhi))
            }
            None => full,
        },
        Op::Extract(i, 0) => match a(0).bv() {
            // Every value below 2^(i+1): extracting the low bits changes none.
            Some((lo, hi, _)) if hi <= mask64(i + 1) => mk(lo.into(), hi.into()),
            _ => full,
        },
        Op::BvAdd if store.args(t).len() == 2 => match two() {
            Some(((alo, ahi, _), (blo, bhi, _))) => mk(
                u128::from(alo) + u128::from(blo),
                u128::from(ahi) + u128::from(bhi),
            ),
            None => full,
        },
        Op::BvSub if store.args(t).len() == 2 => match two() {
            Some(((alo, ahi, _), (blo, bhi, _))) if alo >= bhi => {
                mk(u128::from(alo - bhi), u128::from(ahi - blo))
            }
            _ => full,
        },
        Op::BvMul if store.args(t).len() == 2 => match two() {
            Some(((alo, ahi, _), (blo, bhi, _))) => mk(
                u128::from(alo) * u128::from(blo),
                u128::from(ahi) * u128::from(bhi),
            ),
            None => full,
        },
        Op::BvUdiv if store.args(t).len() == 2 => match two() {
            Some(((alo, ahi, _), (blo, bhi, _))) if blo >= 1 => {
                mk(u128::from(alo / bhi), u128::from(ahi / blo))
            }
            _ => full,
        },
        Op::BvUrem if store.args(t).len() == 2 => match two() {
            // At most the dividend (all of it when dividing by zero), below a divisor.
            Some(((_, ahi, _), (blo, bhi, _))) if blo >= 1 => mk(0, u128::from(ahi.min(bhi - 1))),
            Some(((_, ahi, _), _)) => mk(0, ahi.into()),
            None => full,
        },
        Op::BvAnd if store.args(t).len() == 2 => match two() {
            Some(((_, ahi, _), (_, bhi, _))) => mk(0, ahi.min(bhi).into()),
            None => full,
        },
        Op::BvLshr if store.args(t).len() == 2 => match a(0).bv() {
            Some((_, hi, _)) => mk(0, hi.into()),
            None => full,
        },
        _ => full,
    }
}

/// `(= x y)` over two abstract values.
fn equal(x: Abs, y: Abs) -> Abs {
    match (x, y) {
        (Abs::Bv { lo: a, hi: b, .. }, Abs::Bv { lo: c, hi: d, .. }) => {
            if b < c || d < a {
                Abs::False
            } else if a == b && c == d && a == c {
                Abs::True
            } else {
                Abs::Either
            }
        }
        (x, y) => match (x.known(), y.known()) {
            (Some(p), Some(q)) => Abs::of_bool(p == q),
            _ => Abs::Either,
        },
    }
}

/// The least value holding both (for `ite` with an unknown condition).
fn hull(x: Abs, y: Abs) -> Abs {
    match (x, y) {
        (Abs::Bv { lo: a, hi: b, n }, Abs::Bv { lo: c, hi: d, .. }) => Abs::Bv {
            lo: a.min(c),
            hi: b.max(d),
            n,
        },
        (x, y) if x == y => x,
        (Abs::True | Abs::False | Abs::Either, Abs::True | Abs::False | Abs::Either) => Abs::Either,
        _ => Abs::Other,
    }
}

/// An unsigned comparison over two intervals.
fn compare(op: Op, x: Abs, y: Abs) -> Abs {
    let (Some((a, b, _)), Some((c, d, _))) = (x.bv(), y.bv()) else {
        return Abs::Either;
    };
    // x < y: surely when b < c, never when a >= d.
    let lt = |a: u64, b: u64, c: u64, d: u64| {
        if b < c {
            Abs::True
        } else if a >= d {
            Abs::False
        } else {
            Abs::Either
        }
    };
    match op {
        Op::BvUlt => lt(a, b, c, d),
        Op::BvUgt => lt(c, d, a, b),
        Op::BvUle => lt(c, d, a, b).not(),
        Op::BvUge => lt(a, b, c, d).not(),
        _ => Abs::Either,
    }
}
