//! Concrete values of the modelled sorts (Bool, bit-vectors, Int, Real, arrays), as used
//! by the model evaluator (`eval`), and their conversion from and to literal terms.
//!
//! Every value is kept in a canonical form, so that two values of one sort are equal as
//! SMT-LIB values exactly when they are equal as Rust values (`==`, `Ord`, `Hash`):
//! - a bit-vector of width <= 64 is `BvVal::Small` (masked to its width), a wider one
//!   `BvVal::Wide` (reduced modulo 2^width);
//! - a Real is a normalised `BigRational` (a Real-sorted value is never `Value::Int`);
//! - an array is a default plus the entries that differ from it, and, when the index sort
//!   is so small that the entries cover at least half of it, the default is the most
//!   frequent element (ties: the least value), so extensionally equal arrays are equal.
//!   An array whose index sort is finite but cannot be enumerated here (arrays indexed by
//!   arrays) and that would need this step is refused (`conform` returns `None`).

use crate::term::{Lit, Op, Sort, SortId, SortStore, TermId, TermStore};
use num_bigint::{BigInt, BigUint};
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::BTreeMap;

/// Bits of a bit-vector value; the width lives in `Value::Bv`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum BvVal {
    /// Width <= 64, masked to the width.
    Small(u64),
    /// Width > 64, reduced modulo 2^width.
    Wide(BigUint),
}

/// An array value: a default element and the indices where the array differs from it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ArrayVal {
    default: Box<Value>,
    entries: BTreeMap<Value, Value>,
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Value {
    Bool(bool),
    Bv { width: u32, v: BvVal },
    Int(BigInt),
    Real(BigRational),
    Array(ArrayVal),
}

/// All-ones mask of `w` bits (w <= 64).
#[inline]
pub fn mask64(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// All-ones `BigUint` of `w` bits.
pub fn mask_big(w: u32) -> BigUint {
    (BigUint::one() << w as usize) - BigUint::one()
}

impl ArrayVal {
    /// The constant array.
    pub fn constant(default: Value) -> Self {
        ArrayVal {
            default: Box::new(default),
            entries: BTreeMap::new(),
        }
    }
    pub fn default_value(&self) -> &Value {
        &self.default
    }
    /// The indices where the array differs from its default, in ascending order.
    pub fn entries(&self) -> &BTreeMap<Value, Value> {
        &self.entries
    }
    pub fn select(&self, i: &Value) -> &Value {
        self.entries.get(i).unwrap_or(&self.default)
    }
    /// `store` in place. Keeps entries different from the default only; callers with a
    /// finite index sort must call `normalise_finite` afterwards.
    pub fn store(&mut self, i: Value, e: Value) {
        if e == *self.default {
            self.entries.remove(&i);
        } else {
            self.entries.insert(i, e);
        }
    }

    /// False when `normalise_finite` certainly leaves the array unchanged.
    fn may_need_finite_normalisation(&self, sorts: &SortStore, index: SortId) -> bool {
        let k = self.entries.len() as u128;
        k > 0 && domain_size(sorts, index).is_some_and(|n| 2 * k >= n as u128)
    }

    /// Make the representation canonical for a finite index sort (see the module doc).
    /// False when that would be needed but the index sort cannot be enumerated.
    pub fn normalise_finite(&mut self, sorts: &SortStore, index: SortId) -> bool {
        // Otherwise the default occurs n - k > n/2 > k times: the unique most frequent element.
        if !self.may_need_finite_normalisation(sorts, index) {
            return true;
        }
        let k = self.entries.len() as u64;
        let Some(n) = domain_size(sorts, index) else {
            return true;
        };
        let Some(dom) = enumerate_domain(sorts, index, n) else {
            return false;
        };
        let mut counts: BTreeMap<&Value, u64> = BTreeMap::new();
        *counts.entry(&self.default).or_insert(0) += n.saturating_sub(k);
        for v in self.entries.values() {
            *counts.entry(v).or_insert(0) += 1;
        }
        // Most frequent; among equals the least value (BTreeMap iterates ascending, so keep
        // the first maximum).
        let mut best: Option<(&Value, u64)> = None;
        for (v, c) in &counts {
            if best.is_none_or(|(_, bc)| *c > bc) {
                best = Some((v, *c));
            }
        }
        let Some((best, _)) = best else { return true };
        if best == &*self.default {
            return true;
        }
        let best = best.clone();
        let mut entries = BTreeMap::new();
        for i in dom {
            let v = self.select(&i);
            if *v != best {
                entries.insert(i, v.clone());
            }
        }
        self.entries = entries;
        *self.default = best;
        true
    }
}

/// Number of values of a sort, when finite and below 2^63.
pub fn domain_size(sorts: &SortStore, s: SortId) -> Option<u64> {
    match sorts.get(s) {
        Sort::Bool => Some(2),
        Sort::BitVec(w) if *w < 63 => Some(1u64 << w),
        Sort::Array(i, e) => {
            let (i, e) = (*i, *e);
            let ni = domain_size(sorts, i)?;
            let ne = domain_size(sorts, e)?;
            let ni = u32::try_from(ni).ok()?;
            let r = ne.checked_pow(ni)?;
            (r < (1u64 << 63)).then_some(r)
        }
        _ => None,
    }
}

fn enumerate_domain(sorts: &SortStore, s: SortId, n: u64) -> Option<Vec<Value>> {
    match sorts.get(s) {
        Sort::Bool => Some(vec![Value::Bool(false), Value::Bool(true)]),
        Sort::BitVec(w) if *w <= 32 => Some(
            (0..n)
                .map(|x| Value::Bv {
                    width: *w,
                    v: BvVal::Small(x),
                })
                .collect(),
        ),
        _ => None,
    }
}

impl Value {
    /// A bit-vector value from the low `width` bits of `v`.
    #[inline]
    pub fn bv_u64(width: u32, v: u64) -> Value {
        if width <= 64 {
            Value::Bv {
                width,
                v: BvVal::Small(v & mask64(width)),
            }
        } else {
            Value::Bv {
                width,
                v: BvVal::Wide(BigUint::from(v)),
            }
        }
    }
    /// A bit-vector value from `v` modulo 2^width.
    pub fn bv_big(width: u32, v: BigUint) -> Value {
        let v = if v.bits() > width as u64 {
            v & mask_big(width)
        } else {
            v
        };
        if width <= 64 {
            Value::Bv {
                width,
                v: BvVal::Small(v.to_u64().unwrap_or(0)),
            }
        } else {
            Value::Bv {
                width,
                v: BvVal::Wide(v),
            }
        }
    }
    /// The bits of a bit-vector value as a `BigUint`.
    pub fn bv_biguint(&self) -> Option<BigUint> {
        match self {
            Value::Bv {
                v: BvVal::Small(x), ..
            } => Some(BigUint::from(*x)),
            Value::Bv {
                v: BvVal::Wide(x), ..
            } => Some(x.clone()),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The default value of a sort (model completion): false, 0, the zero bit-vector, the
    /// constant array of the element default. None for sorts that are not modelled.
    pub fn default_of(sorts: &SortStore, s: SortId) -> Option<Value> {
        Some(match sorts.get(s) {
            Sort::Bool => Value::Bool(false),
            Sort::BitVec(w) => Value::bv_u64(*w, 0),
            Sort::Int => Value::Int(BigInt::zero()),
            Sort::Real => Value::Real(BigRational::zero()),
            Sort::Array(i, e) => {
                if !sorts.is_modelled(*i) {
                    return None;
                }
                Value::Array(ArrayVal::constant(Value::default_of(sorts, *e)?))
            }
            Sort::Named { .. } | Sort::Unknown => return None,
        })
    }

    /// True when the value is a canonical value of sort `s` (what `conform` would return unchanged).
    pub fn has_sort(&self, sorts: &SortStore, s: SortId) -> bool {
        match (self, sorts.get(s)) {
            (Value::Bool(_), Sort::Bool) => true,
            (Value::Bv { width, v }, Sort::BitVec(w)) => {
                *width == *w
                    && match v {
                        BvVal::Small(x) => *w <= 64 && *x & !mask64(*w) == 0,
                        BvVal::Wide(x) => *w > 64 && x.bits() <= *w as u64,
                    }
            }
            (Value::Int(_), Sort::Int) => true,
            (Value::Real(_), Sort::Real) => true,
            (Value::Array(a), Sort::Array(i, e)) => {
                let (i, e) = (*i, *e);
                if !a.default.has_sort(sorts, e)
                    || !a.entries.iter().all(|(k, v)| {
                        k.has_sort(sorts, i) && v.has_sort(sorts, e) && v != &*a.default
                    })
                {
                    return false;
                }
                if !a.may_need_finite_normalisation(sorts, i) {
                    return true;
                }
                let mut c = a.clone();
                c.normalise_finite(sorts, i) && c == *a
            }
            _ => false,
        }
    }

    /// This value as a canonical value of sort `s`: Int is promoted to Real, bit-vectors are
    /// reduced, arrays normalised. None when the value does not belong to the sort.
    pub fn conform(&self, sorts: &SortStore, s: SortId) -> Option<Value> {
        match (self, sorts.get(s)) {
            (Value::Bool(_), Sort::Bool)
            | (Value::Int(_), Sort::Int)
            | (Value::Real(_), Sort::Real) => Some(self.clone()),
            (Value::Int(i), Sort::Real) => Some(Value::Real(BigRational::from_integer(i.clone()))),
            (Value::Bv { width, v }, Sort::BitVec(w)) if width == w => Some(match v {
                BvVal::Small(x) => Value::bv_u64(*w, *x),
                BvVal::Wide(x) => Value::bv_big(*w, x.clone()),
            }),
            (Value::Array(a), Sort::Array(i, e)) => {
                let (i, e) = (*i, *e);
                let d = a.default.conform(sorts, e)?;
                let mut out = ArrayVal::constant(d);
                for (k, v) in &a.entries {
                    out.store(k.conform(sorts, i)?, v.conform(sorts, e)?);
                }
                out.normalise_finite(sorts, i).then_some(Value::Array(out))
            }
            _ => None,
        }
    }

    /// A literal term for this value: `true`, `#x0a`, `5`, `(- 5)`, `1.5`, `(- (/ 1.0 3.0))`,
    /// `(store ((as const (Array I E)) d) i1 e1)` with the entries in ascending index order.
    /// `sort` is the sort the term must have (it decides Int vs Real and the array sort); if
    /// the value does not belong to it, the value's own sort is used.
    pub fn to_term(&self, store: &mut TermStore, sort: SortId) -> TermId {
        match self {
            Value::Bool(b) => store.mk_bool(*b),
            Value::Bv {
                width,
                v: BvVal::Small(x),
            } => store.mk_bv_u64(*x, *width),
            Value::Bv {
                width,
                v: BvVal::Wide(x),
            } => store.mk_bv(x, *width),
            Value::Int(i) => {
                if sort == SortStore::REAL {
                    real_term(store, &BigRational::from_integer(i.clone()))
                } else {
                    let n = store.mk_num(i.magnitude().clone());
                    if i.is_negative() {
                        store.intern(Op::Neg, vec![n], SortStore::INT)
                    } else {
                        n
                    }
                }
            }
            Value::Real(r) => real_term(store, r),
            Value::Array(a) => {
                let sort = match store.sorts.get(sort) {
                    Sort::Array(..) if self.conform(&store.sorts, sort).is_some() => sort,
                    _ => natural_sort(self, &mut store.sorts),
                };
                let (isort, esort) = match store.sorts.get(sort) {
                    Sort::Array(i, e) => (*i, *e),
                    _ => (SortStore::INT, SortStore::INT),
                };
                let d = a.default.to_term(store, esort);
                let mut t = store.intern(Op::ConstArray, vec![d], sort);
                for (k, v) in &a.entries {
                    let kt = k.to_term(store, isort);
                    let vt = v.to_term(store, esort);
                    t = store.intern(Op::Store, vec![t, kt, vt], sort);
                }
                t
            }
        }
    }

    /// The index of `t` as a value when `t` is `(select a i)` with `i` a literal (a leaf
    /// with a value: the cell reads of KLEE's arrays).
    pub fn literal_select_index(store: &TermStore, t: TermId) -> Option<Value> {
        if store.op(t) != Op::Select {
            return None;
        }
        let i = *store.args(t).get(1)?;
        if !store.args(i).is_empty() {
            return None;
        }
        Value::from_term(store, i)
    }

    /// The value of a literal term: Bool and bit-vector literals, numerals, decimals,
    /// `(- n)`, `(/ n m)`, `(- (/ n m))`, `(/ (- n) m)`, `(to_real n)`, constant arrays and
    /// `store` chains over them with literal indices and elements. None for anything else
    /// (z3's `(_ as-array k!0)`, lambdas, `ite` models, symbols, ...).
    pub fn from_term(store: &TermStore, t: TermId) -> Option<Value> {
        let sort = store.sort(t);
        let v = match store.op(t) {
            Op::True => Value::Bool(true),
            Op::False => Value::Bool(false),
            Op::Bv(x) => Value::bv_u64(store.sorts.bv_width(sort)?, x),
            Op::BvWide(l) => match store.get_lit(l) {
                Lit::Nat(n) => Value::bv_big(store.sorts.bv_width(sort)?, n.clone()),
                _ => return None,
            },
            Op::Num(_) | Op::Dec(_) | Op::Neg | Op::RealDiv | Op::ToReal => {
                numeric_literal(store, t, 0)?
            }
            Op::ConstArray | Op::Store => {
                let Sort::Array(isort, esort) = *store.sorts.get(sort) else {
                    return None;
                };
                // Walk the store spine down to the constant array, then apply the stores
                // innermost first.
                let mut spine = Vec::new();
                let mut cur = t;
                while store.op(cur) == Op::Store {
                    spine.push(cur);
                    cur = store.args(cur)[0];
                }
                if store.op(cur) != Op::ConstArray {
                    return None;
                }
                let d =
                    Value::from_term(store, store.args(cur)[0])?.conform(&store.sorts, esort)?;
                let mut a = ArrayVal::constant(d);
                for &s in spine.iter().rev() {
                    let args = store.args(s);
                    let i = Value::from_term(store, args[1])?.conform(&store.sorts, isort)?;
                    let e = Value::from_term(store, args[2])?.conform(&store.sorts, esort)?;
                    a.store(i, e);
                }
                if !a.normalise_finite(&store.sorts, isort) {
                    return None;
                }
                Value::Array(a)
            }
            _ => return None,
        };
        v.conform(&store.sorts, sort)
    }
}

/// Numeric literal forms, depth-limited (`(- (/ (- 1) 3))` is as deep as answers go).
fn numeric_literal(store: &TermStore, t: TermId, depth: u32) -> Option<Value> {
    if depth > 4 {
        return None;
    }
    let args = store.args(t);
    match store.op(t) {
        Op::Num(l) => match store.get_lit(l) {
            Lit::Nat(n) => Some(Value::Int(BigInt::from(n.clone()))),
            _ => None,
        },
        Op::Dec(l) => match store.get_lit(l) {
            Lit::Dec(d) => parse_decimal(d).map(Value::Real),
            _ => None,
        },
        Op::Neg if args.len() == 1 => match numeric_literal(store, args[0], depth + 1)? {
            Value::Int(i) => Some(Value::Int(-i)),
            Value::Real(r) => Some(Value::Real(-r)),
            _ => None,
        },
        Op::ToReal if args.len() == 1 => match numeric_literal(store, args[0], depth + 1)? {
            Value::Int(i) => Some(Value::Real(BigRational::from_integer(i))),
            v @ Value::Real(_) => Some(v),
            _ => None,
        },
        Op::RealDiv if args.len() == 2 => {
            let a = to_rational(numeric_literal(store, args[0], depth + 1)?)?;
            let b = to_rational(numeric_literal(store, args[1], depth + 1)?)?;
            if b.is_zero() {
                return None;
            }
            Some(Value::Real(a / b))
        }
        _ => None,
    }
}

fn to_rational(v: Value) -> Option<BigRational> {
    match v {
        Value::Int(i) => Some(BigRational::from_integer(i)),
        Value::Real(r) => Some(r),
        _ => None,
    }
}

/// `12.50` -> 25/2.
pub fn parse_decimal(text: &str) -> Option<BigRational> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let num: BigInt = digits.parse().ok()?;
    let den = num_traits::pow(BigInt::from(10u8), frac.len());
    Some(BigRational::new(num, den))
}

/// Real literal term: `2.0`, `(- 2.0)`, `(/ 1.0 3.0)`, `(- (/ 1.0 3.0))` (z3's forms).
fn real_term(store: &mut TermStore, r: &BigRational) -> TermId {
    let neg = r.is_negative();
    let a = r.abs();
    let t = if a.is_integer() {
        store.mk_dec(&format!("{}.0", a.numer()))
    } else {
        let n = store.mk_dec(&format!("{}.0", a.numer()));
        let d = store.mk_dec(&format!("{}.0", a.denom()));
        store.intern(Op::RealDiv, vec![n, d], SortStore::REAL)
    };
    if neg {
        store.intern(Op::Neg, vec![t], SortStore::REAL)
    } else {
        t
    }
}

/// A sort for a value that came without a usable one (index sort of an empty array: Int).
fn natural_sort(v: &Value, sorts: &mut SortStore) -> SortId {
    match v {
        Value::Bool(_) => SortStore::BOOL,
        Value::Bv { width, .. } => sorts.bv(*width),
        Value::Int(_) => SortStore::INT,
        Value::Real(_) => SortStore::REAL,
        Value::Array(a) => {
            let i = a
                .entries
                .keys()
                .next()
                .map(|k| natural_sort(k, sorts))
                .unwrap_or(SortStore::INT);
            let e = natural_sort(&a.default, sorts);
            sorts.array(i, e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bv_canonical() {
        assert_eq!(
            Value::bv_u64(8, 0x1ff),
            Value::Bv {
                width: 8,
                v: BvVal::Small(0xff)
            }
        );
        assert_eq!(
            Value::bv_big(8, BigUint::from(0x1ffu32)),
            Value::bv_u64(8, 0xff)
        );
        let big = (BigUint::one() << 70usize) + BigUint::from(5u8);
        assert_eq!(
            Value::bv_big(65, big),
            Value::Bv {
                width: 65,
                v: BvVal::Wide(BigUint::from(5u8))
            }
        );
        assert_eq!(
            Value::bv_u64(64, u64::MAX),
            Value::Bv {
                width: 64,
                v: BvVal::Small(u64::MAX)
            }
        );
    }

    #[test]
    fn decimal_parse() {
        assert_eq!(
            parse_decimal("12.50"),
            Some(BigRational::new(25.into(), 2.into()))
        );
        assert_eq!(parse_decimal("0.0"), Some(BigRational::zero()));
        assert_eq!(parse_decimal("x.0"), None);
    }

    #[test]
    fn array_store_drops_default_entries() {
        let mut a = ArrayVal::constant(Value::bv_u64(8, 0));
        a.store(Value::bv_u64(32, 1), Value::bv_u64(8, 7));
        a.store(Value::bv_u64(32, 2), Value::bv_u64(8, 0));
        assert_eq!(a.entries().len(), 1);
        a.store(Value::bv_u64(32, 1), Value::bv_u64(8, 0));
        assert_eq!(a, ArrayVal::constant(Value::bv_u64(8, 0)));
    }

    #[test]
    fn array_finite_domain_canonical() {
        let mut sorts = SortStore::new();
        let bb = sorts.array(SortStore::BOOL, SortStore::BOOL);
        // const false with both indices true == const true
        let mut a = ArrayVal::constant(Value::Bool(false));
        a.store(Value::Bool(false), Value::Bool(true));
        a.store(Value::Bool(true), Value::Bool(true));
        assert!(a.normalise_finite(&sorts, SortStore::BOOL));
        assert_eq!(a, ArrayVal::constant(Value::Bool(true)));
        // tie: default becomes the least element value
        let bv2 = sorts.bv(1);
        let mut b = ArrayVal::constant(Value::bv_u64(8, 9));
        b.store(Value::bv_u64(1, 0), Value::bv_u64(8, 5));
        b.store(Value::bv_u64(1, 1), Value::bv_u64(8, 3));
        assert!(b.normalise_finite(&sorts, bv2));
        assert_eq!(b.default_value(), &Value::bv_u64(8, 3));
        assert_eq!(b.entries().len(), 1);
        let v = Value::Array(b);
        let e8 = sorts.bv(8);
        let s = sorts.array(bv2, e8);
        assert!(v.has_sort(&sorts, s));
        assert!(!v.has_sort(&sorts, bb));
    }
}
