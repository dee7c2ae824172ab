//! Operations on Bool, Int and Real values under SMT-LIB's semantics (Int `div`/`mod` are
//! Euclidean); what SMT-LIB leaves uninterpreted (division by zero) is an `EvalError`.

use super::{unsupported, EvalError};
use crate::query::value::Value;
use crate::term::{Op, SortId, SortStore, TermStore};
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use std::borrow::Cow;
use std::cmp::Ordering;

pub(super) fn bv_width(store: &TermStore, s: SortId) -> Result<u32, EvalError> {
    store
        .sorts
        .bv_width(s)
        .ok_or_else(|| EvalError::Unsupported("bit-vector literal of a non-bit-vector sort".into()))
}

pub(super) fn as_bool(v: &Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => unsupported("expected a Bool value"),
    }
}

/// Equality of two values of one sort (Int and Real compare numerically).
pub(super) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(i), Value::Real(r)) | (Value::Real(r), Value::Int(i)) => {
            r.is_integer() && r.numer() == i
        }
        _ => a == b,
    }
}

pub(super) fn num_cmp(a: &Value, b: &Value) -> Result<Ordering, EvalError> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Real(x), Value::Real(y)) => x.cmp(y),
        (Value::Int(x), Value::Real(y)) => BigRational::from_integer(x.clone()).cmp(y),
        (Value::Real(x), Value::Int(y)) => x.cmp(&BigRational::from_integer(y.clone())),
        _ => return unsupported("comparison of non-numeric values"),
    })
}

pub(super) fn rat(v: &Value) -> Result<Cow<'_, BigRational>, EvalError> {
    match v {
        Value::Real(r) => Ok(Cow::Borrowed(r)),
        Value::Int(i) => Ok(Cow::Owned(BigRational::from_integer(i.clone()))),
        _ => unsupported("expected a numeric value"),
    }
}

pub(super) fn int(v: &Value) -> Result<&BigInt, EvalError> {
    match v {
        Value::Int(i) => Ok(i),
        _ => unsupported("expected an Int value"),
    }
}

/// SMT-LIB Int division: q with a = b*q + r, 0 <= r < |b|.
pub(super) fn euclid_div_mod(a: &BigInt, b: &BigInt) -> Result<(BigInt, BigInt), EvalError> {
    if b.is_zero() {
        return unsupported("division by zero");
    }
    let r = a.mod_floor(&b.abs());
    let q = (a - &r) / b;
    Ok((q, r))
}

pub(super) fn arith(op: Op, sort: SortId, vals: &[&Value]) -> Result<Value, EvalError> {
    let real = sort == SortStore::REAL;
    Ok(match op {
        Op::ToReal => Value::Real(rat(vals[0])?.into_owned()),
        Op::ToInt => match vals[0] {
            Value::Int(i) => Value::Int(i.clone()),
            v => Value::Int(rat(v)?.floor().to_integer()),
        },
        Op::IsInt => Value::Bool(rat(vals[0])?.is_integer()),
        Op::Divisible(k) => {
            if k == 0 {
                return unsupported("divisible by zero");
            }
            Value::Bool(int(vals[0])?.is_multiple_of(&BigInt::from(k)))
        }
        Op::Abs => match vals[0] {
            Value::Int(i) => Value::Int(i.abs()),
            v => Value::Real(rat(v)?.abs()),
        },
        Op::IntDiv => {
            let mut acc = int(vals[0])?.clone();
            for v in &vals[1..] {
                acc = euclid_div_mod(&acc, int(v)?)?.0;
            }
            Value::Int(acc)
        }
        Op::Mod => Value::Int(euclid_div_mod(int(vals[0])?, int(vals[1])?)?.1),
        Op::RealDiv => {
            let mut acc = rat(vals[0])?.into_owned();
            for v in &vals[1..] {
                let d = rat(v)?;
                if d.is_zero() {
                    return unsupported("division by zero");
                }
                acc /= d.as_ref();
            }
            Value::Real(acc)
        }
        _ if real => {
            let mut acc = rat(vals[0])?.into_owned();
            if vals.len() == 1 && matches!(op, Op::Neg | Op::Sub) {
                return Ok(Value::Real(-acc));
            }
            for v in &vals[1..] {
                let x = rat(v)?;
                match op {
                    Op::Add => acc += x.as_ref(),
                    Op::Sub => acc -= x.as_ref(),
                    Op::Mul => acc *= x.as_ref(),
                    _ => return unsupported("arithmetic operator"),
                }
            }
            Value::Real(acc)
        }
        _ => {
            let mut acc = int(vals[0])?.clone();
            if vals.len() == 1 && matches!(op, Op::Neg | Op::Sub) {
                return Ok(Value::Int(-acc));
            }
            for v in &vals[1..] {
                let x = int(v)?;
                match op {
                    Op::Add => acc += x,
                    Op::Sub => acc -= x,
                    Op::Mul => acc *= x,
                    _ => return unsupported("arithmetic operator"),
                }
            }
            Value::Int(acc)
        }
    })
}
