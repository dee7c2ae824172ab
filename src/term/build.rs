//! Checked term construction: every builder computes the result sort from the argument
//! sorts and refuses ill-sorted applications with a `SortError`, so every node in the store
//! is well sorted. Int and Real may be mixed in arithmetic (the result is Real), as z3 and
//! cvc5 accept.

use super::{Lit, Op, Sort, SortId, SortStore, Sym, TermId, TermStore};
use num_bigint::BigUint;
use num_traits::ToPrimitive;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortError(pub String);

impl std::fmt::Display for SortError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn op_name(op: Op) -> String {
    format!("{op:?}")
}

impl TermStore {
    pub fn mk_true(&self) -> TermId {
        Self::TRUE
    }
    pub fn mk_bool(&self, b: bool) -> TermId {
        if b {
            Self::TRUE
        } else {
            Self::FALSE
        }
    }
    /// Bit-vector literal; `value` is reduced modulo 2^width.
    pub fn mk_bv(&mut self, value: &BigUint, width: u32) -> TermId {
        let sort = self.sorts.bv(width);
        let v = if (width as u64) < value.bits() {
            value % (BigUint::from(1u8) << width as usize)
        } else {
            value.clone()
        };
        if width <= 64 {
            let v = v.to_u64().unwrap_or(0);
            self.intern(Op::Bv(v), Vec::new(), sort)
        } else {
            let l = self.lit(Lit::Nat(v));
            self.intern(Op::BvWide(l), Vec::new(), sort)
        }
    }
    pub fn mk_bv_u64(&mut self, value: u64, width: u32) -> TermId {
        if width == 0 || width > 64 {
            return self.mk_bv(&BigUint::from(value), width);
        }
        let v = if width == 64 {
            value
        } else {
            value & ((1u64 << width) - 1)
        };
        let sort = self.sorts.bv(width);
        self.intern(Op::Bv(v), Vec::new(), sort)
    }
    pub fn mk_num(&mut self, n: BigUint) -> TermId {
        let l = self.lit(Lit::Nat(n));
        self.intern(Op::Num(l), Vec::new(), SortStore::INT)
    }
    /// A decimal literal, as text (`1.5`). The text is normalised (no trailing zeros beyond one).
    pub fn mk_dec(&mut self, text: &str) -> TermId {
        let l = self.lit(Lit::Dec(normalise_decimal(text)));
        self.intern(Op::Dec(l), Vec::new(), SortStore::REAL)
    }
    pub fn mk_str(&mut self, s: &str) -> TermId {
        let l = self.lit(Lit::Str(s.to_string()));
        let sort = self.sorts.intern(Sort::Named {
            name: "String".into(),
            indices: vec![],
            args: vec![],
        });
        self.intern(Op::Str(l), Vec::new(), sort)
    }
    /// A declared constant, or an application of a declared function symbol whose result
    /// sort the caller has checked.
    pub fn mk_sym_app(&mut self, s: Sym, args: Vec<TermId>, sort: SortId) -> TermId {
        self.intern(Op::Sym(s), args, sort)
    }
    pub fn mk_const(&mut self, name: &str, sort: SortId) -> TermId {
        let s = self.sym(name);
        self.intern(Op::Sym(s), Vec::new(), sort)
    }
    /// An application of an operator smtproxy does not model, kept verbatim by head text.
    pub fn mk_other(&mut self, head: &str, args: Vec<TermId>, sort: SortId) -> TermId {
        let l = self.lit(Lit::Raw(head.to_string()));
        self.intern(Op::Other(l), args, sort)
    }
    pub fn mk_annot(&mut self, t: TermId, attrs: &str) -> TermId {
        let l = self.lit(Lit::Raw(attrs.to_string()));
        let sort = self.sort(t);
        self.intern(Op::Annot(l), vec![t], sort)
    }
    pub fn mk_quant(
        &mut self,
        forall: bool,
        vars: Vec<(Sym, SortId)>,
        body: TermId,
    ) -> Result<TermId, SortError> {
        if self.sort(body) != SortStore::BOOL {
            return Err(SortError("quantifier body must be Bool".into()));
        }
        let b = self.binder(vars);
        let op = if forall { Op::Forall(b) } else { Op::Exists(b) };
        Ok(self.intern(op, vec![body], SortStore::BOOL))
    }
    pub fn mk_const_array(&mut self, array_sort: SortId, v: TermId) -> Result<TermId, SortError> {
        match self.sorts.get(array_sort) {
            Sort::Array(_, e) if *e == self.sort(v) => {
                Ok(self.intern(Op::ConstArray, vec![v], array_sort))
            }
            _ => Err(SortError(format!(
                "constant array of sort {} cannot hold a value of sort {}",
                self.sorts.to_text(array_sort),
                self.sorts.to_text(self.sort(v))
            ))),
        }
    }
    pub fn mk_not(&mut self, t: TermId) -> TermId {
        self.intern(Op::Not, vec![t], SortStore::BOOL)
    }
    pub fn mk_and(&mut self, mut args: Vec<TermId>) -> TermId {
        match args.len() {
            0 => Self::TRUE,
            1 => args.pop().unwrap_or(Self::TRUE),
            _ => self.intern(Op::And, args, SortStore::BOOL),
        }
    }
    pub fn mk_eq(&mut self, a: TermId, b: TermId) -> Result<TermId, SortError> {
        self.app(Op::Eq, vec![a, b])
    }

    /// Build an application of a modelled operator, checking and computing sorts.
    pub fn app(&mut self, op: Op, args: Vec<TermId>) -> Result<TermId, SortError> {
        self.app_slice(op, &args)
    }

    /// `app` over borrowed arguments (no allocation when the node already exists).
    pub fn app_slice(&mut self, op: Op, args: &[TermId]) -> Result<TermId, SortError> {
        let sort = self.result_sort(op, args)?;
        Ok(self.intern_slice(op, args, sort))
    }

    /// The sort `op` applied to `args` would have, without building the application.
    pub fn check_app(&mut self, op: Op, args: &[TermId]) -> Result<SortId, SortError> {
        self.result_sort(op, args)
    }

    fn result_sort(&mut self, op: Op, args: &[TermId]) -> Result<SortId, SortError> {
        let sorts: smallvec::SmallVec<[SortId; 8]> = args.iter().map(|&a| self.sort(a)).collect();
        let n = args.len();
        let arity = |lo: usize, hi: usize| -> Result<(), SortError> {
            if n < lo || n > hi {
                Err(SortError(format!(
                    "{} expects {} argument(s), got {}",
                    op_name(op),
                    arity_text(lo, hi),
                    n
                )))
            } else {
                Ok(())
            }
        };
        let all_bool = |ss: &SortStore| -> Result<(), SortError> {
            if sorts.iter().all(|&s| s == SortStore::BOOL) {
                Ok(())
            } else {
                Err(SortError(format!(
                    "{} expects Bool arguments, got {}",
                    op_name(op),
                    sorts_text(ss, &sorts)
                )))
            }
        };
        let bv_same = |ss: &SortStore| -> Result<u32, SortError> {
            let w = sorts.first().and_then(|&s| ss.bv_width(s));
            match w {
                Some(w) if sorts.iter().all(|&s| ss.bv_width(s) == Some(w)) => Ok(w),
                _ => Err(SortError(format!(
                    "{} expects bit-vector arguments of one width, got {}",
                    op_name(op),
                    sorts_text(ss, &sorts)
                ))),
            }
        };
        let numeric = |ss: &SortStore| -> Result<SortId, SortError> {
            if sorts.iter().all(|&s| s == SortStore::INT) {
                Ok(SortStore::INT)
            } else if sorts
                .iter()
                .all(|&s| s == SortStore::INT || s == SortStore::REAL)
            {
                Ok(SortStore::REAL)
            } else {
                Err(SortError(format!(
                    "{} expects Int or Real arguments, got {}",
                    op_name(op),
                    sorts_text(ss, &sorts)
                )))
            }
        };
        let ss = &self.sorts;
        let bool_ = SortStore::BOOL;
        Ok(match op {
            Op::Not => {
                arity(1, 1)?;
                all_bool(ss)?;
                bool_
            }
            Op::And | Op::Or | Op::Xor => {
                // `(and)` is refused by z3, cvc5 and yices alike.
                arity(1, usize::MAX)?;
                all_bool(ss)?;
                bool_
            }
            Op::Implies => {
                arity(2, usize::MAX)?;
                all_bool(ss)?;
                bool_
            }
            Op::Eq | Op::Distinct => {
                arity(2, usize::MAX)?;
                let s0 = sorts[0];
                let ok = sorts.iter().all(|&s| s == s0)
                    || sorts
                        .iter()
                        .all(|&s| s == SortStore::INT || s == SortStore::REAL);
                if !ok || s0 == SortStore::UNKNOWN {
                    if s0 == SortStore::UNKNOWN {
                        return Ok(bool_);
                    }
                    return Err(SortError(format!(
                        "{} expects arguments of one sort, got {}",
                        op_name(op),
                        sorts_text(ss, &sorts)
                    )));
                }
                bool_
            }
            Op::Ite => {
                arity(3, 3)?;
                if sorts[0] != bool_ {
                    return Err(SortError("ite condition must be Bool".into()));
                }
                if sorts[1] == sorts[2] {
                    sorts[1]
                } else if numeric_pair(sorts[1], sorts[2]) {
                    SortStore::REAL
                } else {
                    return Err(SortError(format!(
                        "ite branches have different sorts: {}",
                        sorts_text(ss, &sorts[1..])
                    )));
                }
            }
            Op::Select => {
                arity(2, 2)?;
                match ss.get(sorts[0]) {
                    Sort::Array(i, e) if *i == sorts[1] => *e,
                    _ => {
                        return Err(SortError(format!(
                            "select: ill-sorted arguments {}",
                            sorts_text(ss, &sorts)
                        )));
                    }
                }
            }
            Op::Store => {
                arity(3, 3)?;
                match ss.get(sorts[0]) {
                    Sort::Array(i, e) if *i == sorts[1] && *e == sorts[2] => sorts[0],
                    _ => {
                        return Err(SortError(format!(
                            "store: ill-sorted arguments {}",
                            sorts_text(ss, &sorts)
                        )));
                    }
                }
            }
            Op::ConstArray => return Err(SortError("use mk_const_array".into())),
            Op::Concat => {
                arity(1, usize::MAX)?;
                let mut w: u64 = 0;
                for &s in &sorts {
                    w += ss
                        .bv_width(s)
                        .ok_or_else(|| SortError("concat expects bit-vectors".into()))?
                        as u64;
                }
                let w = u32::try_from(w).map_err(|_| SortError("concat result too wide".into()))?;
                self.sorts.bv(w)
            }
            Op::Extract(i, j) => {
                arity(1, 1)?;
                let w = ss
                    .bv_width(sorts[0])
                    .ok_or_else(|| SortError("extract expects a bit-vector".into()))?;
                if i < j || i >= w {
                    return Err(SortError(format!(
                        "invalid extract indices {i} {j} for width {w}"
                    )));
                }
                self.sorts.bv(i - j + 1)
            }
            Op::ZeroExtend(k) | Op::SignExtend(k) => {
                arity(1, 1)?;
                let w = ss
                    .bv_width(sorts[0])
                    .ok_or_else(|| SortError("extend expects a bit-vector".into()))?;
                let nw = w
                    .checked_add(k)
                    .ok_or_else(|| SortError("extension too wide".into()))?;
                self.sorts.bv(nw)
            }
            Op::Repeat(k) => {
                arity(1, 1)?;
                let w = ss
                    .bv_width(sorts[0])
                    .ok_or_else(|| SortError("repeat expects a bit-vector".into()))?;
                if k == 0 {
                    return Err(SortError("repeat count must be positive".into()));
                }
                let nw = w
                    .checked_mul(k)
                    .ok_or_else(|| SortError("repeat too wide".into()))?;
                self.sorts.bv(nw)
            }
            Op::RotateLeft(_) | Op::RotateRight(_) | Op::BvNot | Op::BvNeg => {
                arity(1, 1)?;
                bv_same(ss)?;
                sorts[0]
            }
            Op::BvAnd | Op::BvOr | Op::BvXor | Op::BvAdd | Op::BvMul | Op::BvSub => {
                arity(2, usize::MAX)?;
                bv_same(ss)?;
                sorts[0]
            }
            Op::BvNand
            | Op::BvNor
            | Op::BvXnor
            | Op::BvUdiv
            | Op::BvUrem
            | Op::BvSdiv
            | Op::BvSrem
            | Op::BvSmod
            | Op::BvShl
            | Op::BvLshr
            | Op::BvAshr => {
                arity(2, 2)?;
                bv_same(ss)?;
                sorts[0]
            }
            Op::BvComp => {
                arity(2, 2)?;
                bv_same(ss)?;
                self.sorts.bv(1)
            }
            Op::BvUlt
            | Op::BvUle
            | Op::BvUgt
            | Op::BvUge
            | Op::BvSlt
            | Op::BvSle
            | Op::BvSgt
            | Op::BvSge => {
                arity(2, 2)?;
                bv_same(ss)?;
                bool_
            }
            Op::Neg | Op::Abs => {
                arity(1, 1)?;
                let s = numeric(ss)?;
                if op == Op::Abs && s != SortStore::INT {
                    return Err(SortError("abs expects Int".into()));
                }
                s
            }
            Op::Add | Op::Mul | Op::Sub => {
                arity(1, usize::MAX)?;
                numeric(ss)?
            }
            Op::RealDiv => {
                arity(2, usize::MAX)?;
                numeric(ss)?;
                SortStore::REAL
            }
            Op::IntDiv | Op::Mod => {
                arity(2, if op == Op::Mod { 2 } else { usize::MAX })?;
                if numeric(ss)? != SortStore::INT {
                    return Err(SortError(format!("{} expects Int arguments", op_name(op))));
                }
                SortStore::INT
            }
            Op::Le | Op::Lt | Op::Ge | Op::Gt => {
                arity(2, usize::MAX)?;
                numeric(ss)?;
                bool_
            }
            Op::ToReal => {
                arity(1, 1)?;
                numeric(ss)?;
                SortStore::REAL
            }
            Op::ToInt => {
                arity(1, 1)?;
                numeric(ss)?;
                SortStore::INT
            }
            Op::IsInt => {
                arity(1, 1)?;
                numeric(ss)?;
                bool_
            }
            Op::Divisible(_) => {
                arity(1, 1)?;
                if numeric(ss)? != SortStore::INT {
                    return Err(SortError("divisible expects Int".into()));
                }
                bool_
            }
            Op::True
            | Op::False
            | Op::Bv(_)
            | Op::BvWide(_)
            | Op::Num(_)
            | Op::Dec(_)
            | Op::Str(_)
            | Op::Sym(_)
            | Op::Other(_)
            | Op::Annot(_)
            | Op::Forall(_)
            | Op::Exists(_) => {
                return Err(SortError(format!("{} is not built by app", op_name(op))))
            }
        })
    }
}

fn numeric_pair(a: SortId, b: SortId) -> bool {
    let num = |s| s == SortStore::INT || s == SortStore::REAL;
    num(a) && num(b)
}

fn arity_text(lo: usize, hi: usize) -> String {
    if lo == hi {
        lo.to_string()
    } else if hi == usize::MAX {
        format!("at least {lo}")
    } else {
        format!("{lo} to {hi}")
    }
}

fn sorts_text(ss: &SortStore, sorts: &[SortId]) -> String {
    sorts
        .iter()
        .map(|&s| ss.to_text(s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1.500` -> `1.5`, `2.` -> `2.0`, `007.0` -> `7.0`.
pub fn normalise_decimal(text: &str) -> String {
    let (int, frac) = text.split_once('.').unwrap_or((text, "0"));
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let frac = frac.trim_end_matches('0');
    let frac = if frac.is_empty() { "0" } else { frac };
    format!("{int}.{frac}")
}
