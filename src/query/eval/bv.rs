//! Bit-vector operations under SMT-LIB's semantics: on `u64` for widths up to 64 (`narrow`),
//! on `BigUint` beyond (`wide`), values always masked to their width.

use super::scalar::bv_width;
use super::{unsupported, EvalError};
use crate::query::value::{mask64, mask_big, BvVal, Value};
use crate::term::{Op, SortId, TermStore};
use num_bigint::BigUint;
use num_traits::{One, Zero};
use std::borrow::Cow;

pub(super) fn bv_parts(v: &Value) -> Result<(u32, &BvVal), EvalError> {
    match v {
        Value::Bv { width, v } => Ok((*width, v)),
        _ => unsupported("expected a bit-vector value"),
    }
}

pub(super) fn small(v: &Value) -> Result<u64, EvalError> {
    match v {
        Value::Bv {
            v: BvVal::Small(x), ..
        } => Ok(*x),
        _ => unsupported("expected a narrow bit-vector value"),
    }
}

pub(super) fn big(v: &Value) -> Result<Cow<'_, BigUint>, EvalError> {
    match v {
        Value::Bv {
            v: BvVal::Small(x), ..
        } => Ok(Cow::Owned(BigUint::from(*x))),
        Value::Bv {
            v: BvVal::Wide(x), ..
        } => Ok(Cow::Borrowed(x)),
        _ => unsupported("expected a bit-vector value"),
    }
}

/// Sign-extend the low `w` bits of `a` to i64.
#[inline]
pub(super) fn sx(a: u64, w: u32) -> i64 {
    ((a << (64 - w)) as i64) >> (64 - w)
}

/// The SMT-LIB bit-vector operations on `u64` (width <= 64, values masked).
pub mod narrow {
    use super::{mask64, sx};
    #[inline]
    pub fn neg(a: u64, w: u32) -> u64 {
        a.wrapping_neg() & mask64(w)
    }
    #[inline]
    pub fn msb(a: u64, w: u32) -> bool {
        (a >> (w - 1)) & 1 == 1
    }
    #[inline]
    pub fn udiv(a: u64, b: u64, w: u32) -> u64 {
        a.checked_div(b).unwrap_or(mask64(w))
    }
    #[inline]
    pub fn urem(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            a % b
        }
    }
    pub fn sdiv(s: u64, t: u64, w: u32) -> u64 {
        match (msb(s, w), msb(t, w)) {
            (false, false) => udiv(s, t, w),
            (true, false) => neg(udiv(neg(s, w), t, w), w),
            (false, true) => neg(udiv(s, neg(t, w), w), w),
            (true, true) => udiv(neg(s, w), neg(t, w), w),
        }
    }
    pub fn srem(s: u64, t: u64, w: u32) -> u64 {
        match (msb(s, w), msb(t, w)) {
            (false, false) => urem(s, t),
            (true, false) => neg(urem(neg(s, w), t), w),
            (false, true) => urem(s, neg(t, w)),
            (true, true) => neg(urem(neg(s, w), neg(t, w)), w),
        }
    }
    pub fn smod(s: u64, t: u64, w: u32) -> u64 {
        let (ms, mt) = (msb(s, w), msb(t, w));
        let abs_s = if ms { neg(s, w) } else { s };
        let abs_t = if mt { neg(t, w) } else { t };
        let u = urem(abs_s, abs_t);
        let m = mask64(w);
        if u == 0 {
            u
        } else {
            match (ms, mt) {
                (false, false) => u,
                (true, false) => neg(u, w).wrapping_add(t) & m,
                (false, true) => u.wrapping_add(t) & m,
                (true, true) => neg(u, w),
            }
        }
    }
    #[inline]
    pub fn shl(a: u64, b: u64, w: u32) -> u64 {
        if b >= w as u64 {
            0
        } else {
            (a << b) & mask64(w)
        }
    }
    #[inline]
    pub fn lshr(a: u64, b: u64, w: u32) -> u64 {
        if b >= w as u64 {
            0
        } else {
            a >> b
        }
    }
    #[inline]
    pub fn ashr(a: u64, b: u64, w: u32) -> u64 {
        if b >= w as u64 {
            if msb(a, w) {
                mask64(w)
            } else {
                0
            }
        } else {
            ((sx(a, w) >> b) as u64) & mask64(w)
        }
    }
    pub fn rotl(a: u64, k: u32, w: u32) -> u64 {
        let r = k % w;
        if r == 0 {
            a
        } else {
            ((a << r) | (a >> (w - r))) & mask64(w)
        }
    }
    #[inline]
    pub fn slt(a: u64, b: u64, w: u32) -> bool {
        sx(a, w) < sx(b, w)
    }
}

/// The same operations on `BigUint` (any width).
pub(super) mod wide {
    use super::{mask_big, BigUint};
    use num_traits::{One, ToPrimitive, Zero};
    pub fn neg(a: &BigUint, w: u32) -> BigUint {
        if a.is_zero() {
            BigUint::zero()
        } else {
            (BigUint::one() << w as usize) - a
        }
    }
    pub fn msb(a: &BigUint, w: u32) -> bool {
        a.bit(w as u64 - 1)
    }
    pub fn udiv(a: &BigUint, b: &BigUint, w: u32) -> BigUint {
        if b.is_zero() {
            mask_big(w)
        } else {
            a / b
        }
    }
    pub fn urem(a: &BigUint, b: &BigUint) -> BigUint {
        if b.is_zero() {
            a.clone()
        } else {
            a % b
        }
    }
    pub fn sdiv(s: &BigUint, t: &BigUint, w: u32) -> BigUint {
        match (msb(s, w), msb(t, w)) {
            (false, false) => udiv(s, t, w),
            (true, false) => neg(&udiv(&neg(s, w), t, w), w),
            (false, true) => neg(&udiv(s, &neg(t, w), w), w),
            (true, true) => udiv(&neg(s, w), &neg(t, w), w),
        }
    }
    pub fn srem(s: &BigUint, t: &BigUint, w: u32) -> BigUint {
        match (msb(s, w), msb(t, w)) {
            (false, false) => urem(s, t),
            (true, false) => neg(&urem(&neg(s, w), t), w),
            (false, true) => urem(s, &neg(t, w)),
            (true, true) => neg(&urem(&neg(s, w), &neg(t, w)), w),
        }
    }
    pub fn smod(s: &BigUint, t: &BigUint, w: u32) -> BigUint {
        let (ms, mt) = (msb(s, w), msb(t, w));
        let abs_s = if ms { neg(s, w) } else { s.clone() };
        let abs_t = if mt { neg(t, w) } else { t.clone() };
        let u = urem(&abs_s, &abs_t);
        if u.is_zero() {
            return u;
        }
        let m = mask_big(w);
        match (ms, mt) {
            (false, false) => u,
            (true, false) => (neg(&u, w) + t) & m,
            (false, true) => (u + t) & m,
            (true, true) => neg(&u, w),
        }
    }
    /// Shift amount as usize when below the width.
    fn amount(b: &BigUint, w: u32) -> Option<usize> {
        b.to_u32().filter(|&x| x < w).map(|x| x as usize)
    }
    pub fn shl(a: &BigUint, b: &BigUint, w: u32) -> BigUint {
        match amount(b, w) {
            Some(k) => (a << k) & mask_big(w),
            None => BigUint::zero(),
        }
    }
    pub fn lshr(a: &BigUint, b: &BigUint, w: u32) -> BigUint {
        match amount(b, w) {
            Some(k) => a >> k,
            None => BigUint::zero(),
        }
    }
    pub fn ashr(a: &BigUint, b: &BigUint, w: u32) -> BigUint {
        let m = msb(a, w);
        match amount(b, w) {
            Some(k) => {
                let r = a >> k;
                if m {
                    // set the top k bits
                    r | (mask_big(w) ^ (mask_big(w) >> k))
                } else {
                    r
                }
            }
            None => {
                if m {
                    mask_big(w)
                } else {
                    BigUint::zero()
                }
            }
        }
    }
    pub fn rotl(a: &BigUint, k: u32, w: u32) -> BigUint {
        let r = k % w;
        if r == 0 {
            a.clone()
        } else {
            ((a << r as usize) | (a >> (w - r) as usize)) & mask_big(w)
        }
    }
    pub fn slt(a: &BigUint, b: &BigUint, w: u32) -> bool {
        match (msb(a, w), msb(b, w)) {
            (true, false) => true,
            (false, true) => false,
            _ => a < b,
        }
    }
}

/// A bit-vector operation on evaluated arguments. `sort` is the result sort.
pub(super) fn bv_op(
    store: &TermStore,
    op: Op,
    sort: SortId,
    vals: &[&Value],
) -> Result<Value, EvalError> {
    let get = |k: usize| -> Result<&Value, EvalError> {
        match vals.get(k) {
            Some(v) => Ok(*v),
            None => unsupported("internal: missing bit-vector argument"),
        }
    };
    let n = vals.len();
    let a0 = get(0)?;
    let (w0, _) = bv_parts(a0)?;
    // Operators whose result width differs from the argument width.
    match op {
        Op::Concat => {
            let rw = bv_width(store, sort)?;
            if rw <= 64 {
                let mut acc: u64 = 0;
                for k in 0..n {
                    let v = get(k)?;
                    let (w, _) = bv_parts(v)?;
                    acc = acc.checked_shl(w).unwrap_or(0) | small(v)?;
                }
                return Ok(Value::bv_u64(rw, acc));
            }
            let mut acc = BigUint::zero();
            for k in 0..n {
                let v = get(k)?;
                let (w, _) = bv_parts(v)?;
                acc = (acc << w as usize) | big(v)?.as_ref();
            }
            return Ok(Value::bv_big(rw, acc));
        }
        Op::Extract(i, j) => {
            let rw = i - j + 1;
            return Ok(if w0 <= 64 {
                Value::bv_u64(rw, small(a0)? >> j)
            } else {
                Value::bv_big(rw, big(a0)?.as_ref() >> j as usize)
            });
        }
        Op::ZeroExtend(k) => {
            let rw = w0 + k;
            return Ok(match a0 {
                Value::Bv {
                    v: BvVal::Small(x), ..
                } => Value::bv_u64(rw, *x),
                _ => Value::bv_big(rw, big(a0)?.into_owned()),
            });
        }
        Op::SignExtend(k) => {
            let rw = w0 + k;
            if rw <= 64 {
                return Ok(Value::bv_u64(rw, sx(small(a0)?, w0) as u64));
            }
            let b = big(a0)?.into_owned();
            return Ok(if wide::msb(&b, w0) {
                Value::bv_big(rw, b | (mask_big(rw) ^ mask_big(w0)))
            } else {
                Value::bv_big(rw, b)
            });
        }
        Op::Repeat(k) => {
            let rw = w0 * k;
            if rw <= 64 {
                let x = small(a0)?;
                let mut acc = 0u64;
                for _ in 0..k {
                    acc = acc.checked_shl(w0).unwrap_or(0) | x;
                }
                return Ok(Value::bv_u64(rw, acc));
            }
            let x = big(a0)?;
            let mut acc = BigUint::zero();
            for _ in 0..k {
                acc = (acc << w0 as usize) | x.as_ref();
            }
            return Ok(Value::bv_big(rw, acc));
        }
        Op::BvComp => {
            return Ok(Value::bv_u64(1, (a0 == get(1)?) as u64));
        }
        _ => {}
    }
    let w = w0;
    if w <= 64 {
        let a = small(a0)?;
        let m = mask64(w);
        let b = || -> Result<u64, EvalError> { small(get(1)?) };
        let fold = |f: &dyn Fn(u64, u64) -> u64| -> Result<u64, EvalError> {
            let mut acc = a;
            for k in 1..n {
                acc = f(acc, small(get(k)?)?);
            }
            Ok(acc & m)
        };
        let r = |x: u64| {
            Ok(Value::Bv {
                width: w,
                v: BvVal::Small(x & m),
            })
        };
        let cmp = |x: bool| Ok(Value::Bool(x));
        return match op {
            Op::BvNot => r(!a),
            Op::BvNeg => r(narrow::neg(a, w)),
            Op::BvAnd => r(fold(&|x, y| x & y)?),
            Op::BvOr => r(fold(&|x, y| x | y)?),
            Op::BvXor => r(fold(&|x, y| x ^ y)?),
            Op::BvAdd => r(fold(&|x, y| x.wrapping_add(y))?),
            Op::BvSub => r(fold(&|x, y| x.wrapping_sub(y))?),
            Op::BvMul => r(fold(&|x, y| x.wrapping_mul(y))?),
            Op::BvNand => r(!(a & b()?)),
            Op::BvNor => r(!(a | b()?)),
            Op::BvXnor => r(!(a ^ b()?)),
            Op::BvUdiv => r(narrow::udiv(a, b()?, w)),
            Op::BvUrem => r(narrow::urem(a, b()?)),
            Op::BvSdiv => r(narrow::sdiv(a, b()?, w)),
            Op::BvSrem => r(narrow::srem(a, b()?, w)),
            Op::BvSmod => r(narrow::smod(a, b()?, w)),
            Op::BvShl => r(narrow::shl(a, b()?, w)),
            Op::BvLshr => r(narrow::lshr(a, b()?, w)),
            Op::BvAshr => r(narrow::ashr(a, b()?, w)),
            Op::RotateLeft(k) => r(narrow::rotl(a, k % w, w)),
            Op::RotateRight(k) => r(narrow::rotl(a, (w - k % w) % w, w)),
            Op::BvUlt => cmp(a < b()?),
            Op::BvUle => cmp(a <= b()?),
            Op::BvUgt => cmp(a > b()?),
            Op::BvUge => cmp(a >= b()?),
            Op::BvSlt => cmp(narrow::slt(a, b()?, w)),
            Op::BvSle => cmp(!narrow::slt(b()?, a, w)),
            Op::BvSgt => cmp(narrow::slt(b()?, a, w)),
            Op::BvSge => cmp(!narrow::slt(a, b()?, w)),
            _ => unsupported("operator not modelled"),
        };
    }
    let a = big(a0)?;
    let a = a.as_ref();
    let m = mask_big(w);
    let b = || -> Result<BigUint, EvalError> { Ok(big(get(1)?)?.into_owned()) };
    let fold = |f: &dyn Fn(BigUint, &BigUint) -> BigUint| -> Result<BigUint, EvalError> {
        let mut acc = a.clone();
        for k in 1..n {
            acc = f(acc, big(get(k)?)?.as_ref()) & &m;
        }
        Ok(acc)
    };
    let r = |x: BigUint| Ok(Value::bv_big(w, x));
    let cmp = |x: bool| Ok(Value::Bool(x));
    let two_w = || BigUint::one() << w as usize;
    match op {
        Op::BvNot => r(a ^ &m),
        Op::BvNeg => r(wide::neg(a, w)),
        Op::BvAnd => r(fold(&|x, y| x & y)?),
        Op::BvOr => r(fold(&|x, y| x | y)?),
        Op::BvXor => r(fold(&|x, y| x ^ y)?),
        Op::BvAdd => r(fold(&|x, y| x + y)?),
        Op::BvSub => {
            let t = two_w();
            r(fold(&|x, y| x + &t - y)?)
        }
        Op::BvMul => r(fold(&|x, y| x * y)?),
        Op::BvNand => r((a & &b()?) ^ &m),
        Op::BvNor => r((a | &b()?) ^ &m),
        Op::BvXnor => r((a ^ &b()?) ^ &m),
        Op::BvUdiv => r(wide::udiv(a, &b()?, w)),
        Op::BvUrem => r(wide::urem(a, &b()?)),
        Op::BvSdiv => r(wide::sdiv(a, &b()?, w)),
        Op::BvSrem => r(wide::srem(a, &b()?, w)),
        Op::BvSmod => r(wide::smod(a, &b()?, w)),
        Op::BvShl => r(wide::shl(a, &b()?, w)),
        Op::BvLshr => r(wide::lshr(a, &b()?, w)),
        Op::BvAshr => r(wide::ashr(a, &b()?, w)),
        Op::RotateLeft(k) => r(wide::rotl(a, k % w, w)),
        Op::RotateRight(k) => r(wide::rotl(a, (w - k % w) % w, w)),
        Op::BvUlt => cmp(a < &b()?),
        Op::BvUle => cmp(a <= &b()?),
        Op::BvUgt => cmp(a > &b()?),
        Op::BvUge => cmp(a >= &b()?),
        Op::BvSlt => cmp(wide::slt(a, &b()?, w)),
        Op::BvSle => cmp(!wide::slt(&b()?, a, w)),
        Op::BvSgt => cmp(wide::slt(&b()?, a, w)),
        Op::BvSge => cmp(!wide::slt(a, &b()?, w)),
        _ => unsupported("operator not modelled"),
    }
}
