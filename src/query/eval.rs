//! The model evaluator: the value of a term under an assignment of its free symbols,
//! following the SMT-LIB semantics exactly. smtproxy only answers `sat` without the solver
//! when this evaluator says the query is true under a model, so it must never guess:
//! anything it cannot decide (quantifiers, unmodelled operators or sorts, division by zero
//! in Int/Real arithmetic, which SMT-LIB leaves uninterpreted) is an `EvalError`, and a
//! symbol missing from a partial model makes the result undetermined (`Ok(None)`).
//!
//! Evaluation is iterative (an explicit stack over the DAG, memoised per node), so terms
//! of any depth are fine. `ite`, `and`, `or`, `=>` short-circuit (exactly, since SMT-LIB
//! functions are total), and `select` walks `store` chains without building the arrays.
//! Bit-vectors of width <= 64 are computed on `u64`.

use super::value::{mask64, mask_big, ArrayVal, BvVal, Value};
use crate::term::{Lit, Op, Sort, SortId, SortStore, Sym, TermId, TermStore};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A UF interpretation: explicit points plus a value everywhere else.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunTable {
    pub entries: BTreeMap<Vec<Value>, Value>,
    pub default: Option<Value>,
}

/// An assignment of free constants (by the `TermId` of their `Sym` leaf) and interpretations
/// of uninterpreted functions (by symbol).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    vals: BTreeMap<TermId, Value>,
    funs: BTreeMap<Sym, FunTable>,
}

impl Model {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn set(&mut self, leaf: TermId, v: Value) {
        self.vals.insert(leaf, v);
    }
    pub fn get(&self, leaf: TermId) -> Option<&Value> {
        self.vals.get(&leaf)
    }
    pub fn get_mut(&mut self, leaf: TermId) -> Option<&mut Value> {
        self.vals.get_mut(&leaf)
    }
    pub fn remove(&mut self, leaf: TermId) -> Option<Value> {
        self.vals.remove(&leaf)
    }
    pub fn set_fun_entry(&mut self, sym: Sym, args: Vec<Value>, v: Value) {
        self.funs.entry(sym).or_default().entries.insert(args, v);
    }
    pub fn set_fun_default(&mut self, sym: Sym, v: Value) {
        self.funs.entry(sym).or_default().default = Some(v);
    }
    pub fn fun(&self, sym: Sym) -> Option<&FunTable> {
        self.funs.get(&sym)
    }
    /// Constants in ascending `TermId` order.
    pub fn iter(&self) -> impl Iterator<Item = (TermId, &Value)> {
        self.vals.iter().map(|(k, v)| (*k, v))
    }
    /// Function tables in ascending symbol order.
    pub fn funs(&self) -> impl Iterator<Item = (Sym, &FunTable)> {
        self.funs.iter().map(|(k, v)| (*k, v))
    }
    pub fn len(&self) -> usize {
        self.vals.len()
    }
    pub fn is_empty(&self) -> bool {
        self.vals.is_empty() && self.funs.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// Something the evaluator cannot decide: quantifiers, unmodelled operators or sorts,
    /// Int/Real division by zero, a model value of the wrong sort. Fall back to the solver.
    #[error("cannot evaluate: {0}")]
    Unsupported(String),
    /// The evaluation stack outgrew its limit.
    #[error("term too deep to evaluate")]
    Depth,
}

fn unsupported<T>(msg: &str) -> Result<T, EvalError> {
    Err(EvalError::Unsupported(msg.to_string()))
}

/// Frames beyond this many are refused (the stack lives on the heap; this only bounds memory).
const MAX_STACK: usize = 1 << 26;

#[derive(Clone, Copy)]
struct Frame {
    t: TermId,
    /// Next argument (strict ops) or stage (ite, select).
    i: u32,
    /// ite: the chosen branch; select: the array node being walked, or the element term.
    aux: TermId,
    /// and/or/=>: an undetermined argument was seen.
    undet: bool,
}

enum Step {
    Push(TermId),
    Done(Option<Value>),
}

type Memo = FxHashMap<TermId, Option<Value>>;

thread_local! {
    /// Memo tables of dropped evaluators, for the next one (the cache path builds an
    /// evaluator per model it tries; growing each memo from nothing was a measurable
    /// share of it).
    static MEMOS: std::cell::RefCell<Vec<Memo>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The values an evaluator computed, kept to evaluate again after a change to the model
/// ([`Evaluator::resume`]). Whoever changes the model must [`EvalMemo::forget`] every
/// node whose value depends on what changed, and keep the sort of every value (a cell
/// stored into an array has the element sort); the rest stay valid.
pub struct EvalMemo {
    memo: crate::term::visit::Pooled<Memo>,
    arrays_ok: Vec<TermId>,
    /// Whether the values were computed completing the model (a resumed evaluator
    /// completes likewise: a completing memo has no undetermined entry to trust).
    complete: bool,
}

impl EvalMemo {
    /// Drop the value of `t`, returning it (None when there was none).
    pub fn forget(&mut self, t: TermId) -> Option<Option<Value>> {
        self.memo.remove(&t)
    }
    /// Put back a value [`EvalMemo::forget`] returned.
    pub fn restore(&mut self, t: TermId, v: Option<Value>) {
        self.memo.insert(t, v);
    }
}

pub struct Evaluator<'a> {
    store: &'a TermStore,
    model: &'a Model,
    /// Value of each evaluated node; `None` = undetermined (a missing symbol below it).
    memo: crate::term::visit::Pooled<Memo>,
    complete: bool,
    completed: Vec<(TermId, Value)>,
    fun_completed: Vec<(Sym, Value)>,
    checked_funs: FxHashSet<Sym>,
    /// Array constants whose model value was found to have their sort (see `step_select`).
    arrays_ok: Vec<TermId>,
    stack: Vec<Frame>,
    scratch: Vec<Value>,
}

impl<'a> Evaluator<'a> {
    /// `complete`: symbols missing from the model get a default value (false, 0, the zero
    /// bit-vector, the constant array of the element default; for a function without a
    /// default, the default of its result sort), recorded in `completions` /
    /// `fun_completions` so the model served with the answer is the one evaluated.
    /// Not complete: a missing symbol makes `eval` return `Ok(None)` unless the result does
    /// not depend on it.
    pub fn new(store: &'a TermStore, model: &'a Model, complete: bool) -> Self {
        Self::with_memo(
            store,
            model,
            complete,
            crate::term::visit::Pooled::take(&MEMOS),
        )
    }

    fn with_memo(
        store: &'a TermStore,
        model: &'a Model,
        complete: bool,
        memo: crate::term::visit::Pooled<Memo>,
    ) -> Self {
        Evaluator {
            store,
            model,
            memo,
            complete,
            completed: Vec::new(),
            fun_completed: Vec::new(),
            checked_funs: FxHashSet::default(),
            arrays_ok: Vec::new(),
            stack: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// An evaluator that starts from the values in `memo`, which must hold under `model`
    /// (see [`EvalMemo`]), and completes the model when the one that made the memo did.
    /// A completing evaluator's completions must be set in the model before it resumes.
    pub fn resume(store: &'a TermStore, model: &'a Model, memo: EvalMemo) -> Self {
        let mut ev = Self::with_memo(store, model, memo.complete, memo.memo);
        ev.arrays_ok = memo.arrays_ok;
        ev
    }

    /// The values computed so far, for [`Evaluator::resume`].
    pub fn into_memo(self) -> EvalMemo {
        EvalMemo {
            memo: self.memo,
            arrays_ok: self.arrays_ok,
            complete: self.complete,
        }
    }

    /// Constants that model completion assigned, in the order they were first needed.
    pub fn completions(&self) -> Vec<(TermId, Value)> {
        self.completed.clone()
    }
    /// Functions whose missing points model completion defaulted, with the value used
    /// (their interpretation is the model's table with this default).
    pub fn fun_completions(&self) -> Vec<(Sym, Value)> {
        self.fun_completed.clone()
    }

    /// True when `t` evaluates to true.
    pub fn is_true(&mut self, t: TermId) -> Result<bool, EvalError> {
        Ok(matches!(self.eval(t)?, Some(Value::Bool(true))))
    }

    /// The value of `t`; `Ok(None)` when it depends on a symbol the (partial) model lacks.
    pub fn eval(&mut self, root: TermId) -> Result<Option<Value>, EvalError> {
        if let Some(v) = self.memo.get(&root) {
            return Ok(v.clone());
        }
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push(Frame {
            t: root,
            i: 0,
            aux: root,
            undet: false,
        });
        let r = self.run(&mut stack);
        self.stack = stack;
        r?;
        Ok(self.memo.get(&root).cloned().flatten())
    }

    fn run(&mut self, stack: &mut Vec<Frame>) -> Result<(), EvalError> {
        while let Some(&top) = stack.last() {
            let mut fr = top;
            match self.step(&mut fr)? {
                Step::Push(a) => {
                    if let Some(last) = stack.last_mut() {
                        *last = fr;
                    }
                    if stack.len() >= MAX_STACK {
                        return Err(EvalError::Depth);
                    }
                    stack.push(Frame {
                        t: a,
                        i: 0,
                        aux: a,
                        undet: false,
                    });
                }
                Step::Done(v) => {
                    stack.pop();
                    let v = match v {
                        Some(Value::Int(i)) if self.store.sort(fr.t) == SortStore::REAL => {
                            Some(Value::Real(BigRational::from_integer(i)))
                        }
                        v => v,
                    };
                    self.memo.insert(fr.t, v);
                }
            }
        }
        Ok(())
    }

    fn step(&mut self, fr: &mut Frame) -> Result<Step, EvalError> {
        let store = self.store;
        let node = store.node(fr.t);
        let args = node.args;
        match node.op {
            Op::Ite => self.step_ite(fr, args),
            Op::And | Op::Or | Op::Implies => self.step_connective(fr, node.op, args),
            Op::Select => self.step_select(fr, args),
            Op::Forall(_) | Op::Exists(_) => unsupported("quantifier"),
            Op::Other(_) => unsupported("unmodelled operator"),
            Op::Str(_) => unsupported("string literal"),
            _ => {
                for (k, &a) in args.iter().enumerate().skip(fr.i as usize) {
                    match self.memo.get(&a) {
                        None => {
                            fr.i = k as u32;
                            return Ok(Step::Push(a));
                        }
                        Some(None) => return Ok(Step::Done(None)),
                        Some(Some(_)) => {}
                    }
                }
                fr.i = args.len() as u32;
                self.compute(fr.t).map(Step::Done)
            }
        }
    }

    fn step_ite(&mut self, fr: &mut Frame, args: &[TermId]) -> Result<Step, EvalError> {
        if fr.i == 0 {
            match self.memo.get(&args[0]) {
                None => return Ok(Step::Push(args[0])),
                Some(Some(Value::Bool(b))) => {
                    fr.i = 1;
                    fr.aux = if *b { args[1] } else { args[2] };
                }
                Some(None) => fr.i = 2,
                Some(Some(_)) => return unsupported("ite condition is not Bool"),
            }
        }
        if fr.i == 1 {
            return Ok(match self.memo.get(&fr.aux) {
                None => Step::Push(fr.aux),
                Some(v) => Step::Done(v.clone()),
            });
        }
        // Undetermined condition: determined only if both branches agree.
        let (Some(a), Some(b)) = (self.memo.get(&args[1]), self.memo.get(&args[2])) else {
            return Ok(Step::Push(if self.memo.contains_key(&args[1]) {
                args[2]
            } else {
                args[1]
            }));
        };
        Ok(Step::Done(match (a, b) {
            (Some(a), Some(b)) if values_equal(a, b) => Some(a.clone()),
            _ => None,
        }))
    }

    fn step_connective(
        &mut self,
        fr: &mut Frame,
        op: Op,
        args: &[TermId],
    ) -> Result<Step, EvalError> {
        let n = args.len();
        for (k, &a) in args.iter().enumerate().skip(fr.i as usize) {
            match self.memo.get(&a) {
                None => {
                    fr.i = k as u32;
                    return Ok(Step::Push(a));
                }
                Some(None) => fr.undet = true,
                Some(Some(Value::Bool(b))) => {
                    let b = if op == Op::Implies && k + 1 < n {
                        !*b
                    } else {
                        *b
                    };
                    match (op, b) {
                        (Op::And, false) => return Ok(Step::Done(Some(Value::Bool(false)))),
                        (Op::Or | Op::Implies, true) => {
                            return Ok(Step::Done(Some(Value::Bool(true))))
                        }
                        _ => {}
                    }
                }
                Some(Some(_)) => return unsupported("connective argument is not Bool"),
            }
        }
        fr.i = n as u32;
        Ok(Step::Done(if fr.undet {
            None
        } else {
            Some(Value::Bool(op == Op::And))
        }))
    }

    /// `select`: stage 0 evaluates the index; stage 1 walks the array term (`aux`) down its
    /// store chain; stage 2 waits for the element term (`aux`).
    fn step_select(&mut self, fr: &mut Frame, args: &[TermId]) -> Result<Step, EvalError> {
        let store = self.store;
        if fr.i == 0 {
            match self.memo.get(&args[1]) {
                None => return Ok(Step::Push(args[1])),
                Some(None) => return Ok(Step::Done(None)),
                Some(Some(_)) => {
                    fr.i = 1;
                    fr.aux = args[0];
                }
            }
        }
        if fr.i == 1 {
            let Some(Some(j)) = self.memo.get(&args[1]) else {
                return unsupported("internal: select index");
            };
            loop {
                let cur = fr.aux;
                match self.memo.get(&cur) {
                    Some(None) => return Ok(Step::Done(None)),
                    Some(Some(Value::Array(a))) => {
                        return Ok(Step::Done(Some(a.select(j).clone())))
                    }
                    Some(Some(_)) => return unsupported("select from a non-array value"),
                    None => {}
                }
                let cargs = store.args(cur);
                match store.op(cur) {
                    Op::Store => match self.memo.get(&cargs[1]) {
                        None => return Ok(Step::Push(cargs[1])),
                        Some(None) => return Ok(Step::Done(None)),
                        Some(Some(iv)) => {
                            if iv == j {
                                fr.i = 2;
                                fr.aux = cargs[2];
                                break;
                            }
                            fr.aux = cargs[0];
                        }
                    },
                    Op::ConstArray => {
                        fr.i = 2;
                        fr.aux = cargs[0];
                        break;
                    }
                    Op::Sym(_) if cargs.is_empty() => {
                        // An array constant the model has, of its sort: read in place
                        // rather than copied whole into the memo (`leaf` would copy it; a
                        // value of another sort or a missing one goes that way).
                        let model: &'a Model = self.model;
                        let Some(v @ Value::Array(a)) = model.get(cur) else {
                            return Ok(Step::Push(cur));
                        };
                        if !self.arrays_ok.contains(&cur) {
                            if !v.has_sort(&store.sorts, store.sort(cur)) {
                                return Ok(Step::Push(cur));
                            }
                            self.arrays_ok.push(cur);
                        }
                        return Ok(Step::Done(Some(a.select(j).clone())));
                    }
                    _ => return Ok(Step::Push(cur)),
                }
            }
        }
        Ok(match self.memo.get(&fr.aux) {
            None => Step::Push(fr.aux),
            Some(v) => Step::Done(v.clone()),
        })
    }

    /// A strict operator whose arguments are all evaluated and determined.
    fn compute(&mut self, t: TermId) -> Result<Option<Value>, EvalError> {
        let store = self.store;
        let node = store.node(t);
        let args = node.args;
        let memo = &self.memo;
        let arg = |k: usize| -> Result<&Value, EvalError> {
            match memo.get(&args[k]) {
                Some(Some(v)) => Ok(v),
                _ => unsupported("internal: argument not evaluated"),
            }
        };
        let v = match node.op {
            Op::True => Value::Bool(true),
            Op::False => Value::Bool(false),
            Op::Bv(x) => Value::bv_u64(bv_width(store, node.sort)?, x),
            Op::BvWide(l) => match store.get_lit(l) {
                Lit::Nat(n) => Value::bv_big(bv_width(store, node.sort)?, n.clone()),
                _ => return unsupported("bad bit-vector literal"),
            },
            Op::Num(l) => match store.get_lit(l) {
                Lit::Nat(n) => Value::Int(BigInt::from(n.clone())),
                _ => return unsupported("bad numeral"),
            },
            Op::Dec(l) => match store.get_lit(l) {
                Lit::Dec(d) => Value::Real(
                    super::value::parse_decimal(d)
                        .ok_or_else(|| EvalError::Unsupported("bad decimal".into()))?,
                ),
                _ => return unsupported("bad decimal"),
            },
            Op::Sym(s) => {
                if args.is_empty() {
                    return self.leaf(t, node.sort);
                }
                return self.apply_fun(t, s);
            }
            Op::Annot(_) => arg(0)?.clone(),
            Op::Not => Value::Bool(!as_bool(arg(0)?)?),
            Op::Xor => {
                let mut r = false;
                for k in 0..args.len() {
                    r ^= as_bool(arg(k)?)?;
                }
                Value::Bool(r)
            }
            Op::Eq => {
                let a0 = arg(0)?;
                let mut r = true;
                for k in 1..args.len() {
                    if !values_equal(a0, arg(k)?) {
                        r = false;
                        break;
                    }
                }
                Value::Bool(r)
            }
            Op::Distinct => {
                let n = args.len();
                let mixed = args.iter().any(|&a| store.sort(a) != store.sort(args[0]));
                let r = if n > 8 && !mixed {
                    let mut vs: Vec<&Value> = Vec::with_capacity(n);
                    for k in 0..n {
                        vs.push(arg(k)?);
                    }
                    vs.sort_unstable();
                    vs.windows(2).all(|w| w[0] != w[1])
                } else {
                    let mut r = true;
                    'outer: for i in 0..n {
                        for j in i + 1..n {
                            if values_equal(arg(i)?, arg(j)?) {
                                r = false;
                                break 'outer;
                            }
                        }
                    }
                    r
                };
                Value::Bool(r)
            }
            Op::ConstArray => {
                let Sort::Array(i, _) = *store.sorts.get(node.sort) else {
                    return unsupported("const array sort");
                };
                let mut a = ArrayVal::constant(arg(0)?.clone());
                if !a.normalise_finite(&store.sorts, i) {
                    return unsupported("array over a finite index sort that cannot be enumerated");
                }
                Value::Array(a)
            }
            Op::Store => {
                let Value::Array(a) = arg(0)? else {
                    return unsupported("store into a non-array value");
                };
                let Sort::Array(isort, _) = *store.sorts.get(node.sort) else {
                    return unsupported("store sort");
                };
                let mut a = a.clone();
                a.store(arg(1)?.clone(), arg(2)?.clone());
                if !a.normalise_finite(&store.sorts, isort) {
                    return unsupported("array over a finite index sort that cannot be enumerated");
                }
                Value::Array(a)
            }
            Op::Select => {
                // Normally handled by step_select; kept for completeness.
                let Value::Array(a) = arg(0)? else {
                    return unsupported("select from a non-array value");
                };
                a.select(arg(1)?).clone()
            }
            Op::Neg
            | Op::Sub
            | Op::Add
            | Op::Mul
            | Op::RealDiv
            | Op::IntDiv
            | Op::Mod
            | Op::Abs
            | Op::ToReal
            | Op::ToInt
            | Op::IsInt
            | Op::Divisible(_) => {
                let mut vals: Vec<&Value> = Vec::with_capacity(args.len());
                for k in 0..args.len() {
                    vals.push(arg(k)?);
                }
                arith(node.op, node.sort, &vals)?
            }
            Op::Le | Op::Lt | Op::Ge | Op::Gt => {
                let mut r = true;
                for k in 0..args.len() - 1 {
                    let o = num_cmp(arg(k)?, arg(k + 1)?)?;
                    let ok = match node.op {
                        Op::Le => o != Ordering::Greater,
                        Op::Lt => o == Ordering::Less,
                        Op::Ge => o != Ordering::Less,
                        _ => o == Ordering::Greater,
                    };
                    if !ok {
                        r = false;
                        break;
                    }
                }
                Value::Bool(r)
            }
            op => match args.len() {
                1 => bv_op(store, op, node.sort, &[arg(0)?])?,
                2 => bv_op(store, op, node.sort, &[arg(0)?, arg(1)?])?,
                _ => {
                    // n-ary bit-vector ops (concat, bvadd, ...)
                    let mut vs: Vec<&Value> = Vec::with_capacity(args.len());
                    for k in 0..args.len() {
                        vs.push(arg(k)?);
                    }
                    bv_op(store, op, node.sort, &vs)?
                }
            },
        };
        Ok(Some(v))
    }

    fn leaf(&mut self, t: TermId, sort: SortId) -> Result<Option<Value>, EvalError> {
        let sorts = &self.store.sorts;
        if let Some(v) = self.model.get(t) {
            if v.has_sort(sorts, sort) {
                return Ok(Some(v.clone()));
            }
            return match v.conform(sorts, sort) {
                Some(v) => Ok(Some(v)),
                None => unsupported("model value does not match the symbol's sort"),
            };
        }
        if !self.complete {
            return Ok(None);
        }
        let Some(d) = Value::default_of(sorts, sort) else {
            return unsupported("symbol of an unmodelled sort");
        };
        self.completed.push((t, d.clone()));
        Ok(Some(d))
    }

    fn apply_fun(&mut self, t: TermId, s: Sym) -> Result<Option<Value>, EvalError> {
        let store = self.store;
        let args = store.args(t);
        let ret = store.sort(t);
        let sorts = &store.sorts;
        if !sorts.is_modelled(ret) || args.iter().any(|&a| !sorts.is_modelled(store.sort(a))) {
            return unsupported("function over an unmodelled sort");
        }
        let table = self.model.fun(s);
        if let Some(tab) = table {
            if !self.checked_funs.contains(&s) {
                let ok = tab.entries.iter().all(|(k, v)| {
                    k.len() == args.len()
                        && k.iter()
                            .zip(args)
                            .all(|(kv, &a)| kv.has_sort(sorts, store.sort(a)))
                        && v.has_sort(sorts, ret)
                }) && tab.default.as_ref().is_none_or(|d| d.has_sort(sorts, ret));
                if !ok {
                    return unsupported("model function table does not match the function's sorts");
                }
                self.checked_funs.insert(s);
            }
            self.scratch.clear();
            for a in args {
                match self.memo.get(a) {
                    Some(Some(v)) => self.scratch.push(v.clone()),
                    _ => return unsupported("internal: argument not evaluated"),
                }
            }
            if let Some(v) = tab.entries.get(&self.scratch[..]) {
                return Ok(Some(v.clone()));
            }
            if let Some(d) = &tab.default {
                return Ok(Some(d.clone()));
            }
        }
        if !self.complete {
            return Ok(None);
        }
        if let Some((_, v)) = self.fun_completed.iter().find(|(f, _)| *f == s) {
            return Ok(Some(v.clone()));
        }
        let Some(d) = Value::default_of(sorts, ret) else {
            return unsupported("function of an unmodelled sort");
        };
        self.fun_completed.push((s, d.clone()));
        Ok(Some(d))
    }
}

fn bv_width(store: &TermStore, s: SortId) -> Result<u32, EvalError> {
    store
        .sorts
        .bv_width(s)
        .ok_or_else(|| EvalError::Unsupported("bit-vector literal of a non-bit-vector sort".into()))
}

fn as_bool(v: &Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => unsupported("expected a Bool value"),
    }
}

/// Equality of two values of one sort (Int and Real compare numerically).
fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(i), Value::Real(r)) | (Value::Real(r), Value::Int(i)) => {
            r.is_integer() && r.numer() == i
        }
        _ => a == b,
    }
}

fn num_cmp(a: &Value, b: &Value) -> Result<Ordering, EvalError> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Real(x), Value::Real(y)) => x.cmp(y),
        (Value::Int(x), Value::Real(y)) => BigRational::from_integer(x.clone()).cmp(y),
        (Value::Real(x), Value::Int(y)) => x.cmp(&BigRational::from_integer(y.clone())),
        _ => return unsupported("comparison of non-numeric values"),
    })
}

fn rat(v: &Value) -> Result<Cow<'_, BigRational>, EvalError> {
    match v {
        Value::Real(r) => Ok(Cow::Borrowed(r)),
        Value::Int(i) => Ok(Cow::Owned(BigRational::from_integer(i.clone()))),
        _ => unsupported("expected a numeric value"),
    }
}

fn int(v: &Value) -> Result<&BigInt, EvalError> {
    match v {
        Value::Int(i) => Ok(i),
        _ => unsupported("expected an Int value"),
    }
}

/// SMT-LIB Int division: q with a = b*q + r, 0 <= r < |b|.
fn euclid_div_mod(a: &BigInt, b: &BigInt) -> Result<(BigInt, BigInt), EvalError> {
    if b.is_zero() {
        return unsupported("division by zero");
    }
    let r = a.mod_floor(&b.abs());
    let q = (a - &r) / b;
    Ok((q, r))
}

fn arith(op: Op, sort: SortId, vals: &[&Value]) -> Result<Value, EvalError> {
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

// ---------------------------------------------------------------------------------------
// Bit-vectors

fn bv_parts(v: &Value) -> Result<(u32, &BvVal), EvalError> {
    match v {
        Value::Bv { width, v } => Ok((*width, v)),
        _ => unsupported("expected a bit-vector value"),
    }
}

fn small(v: &Value) -> Result<u64, EvalError> {
    match v {
        Value::Bv {
            v: BvVal::Small(x), ..
        } => Ok(*x),
        _ => unsupported("expected a narrow bit-vector value"),
    }
}

fn big(v: &Value) -> Result<Cow<'_, BigUint>, EvalError> {
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
fn sx(a: u64, w: u32) -> i64 {
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
mod wide {
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
fn bv_op(store: &TermStore, op: Op, sort: SortId, vals: &[&Value]) -> Result<Value, EvalError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt2::command::Command;
    use crate::smt2::parser::{parse_command, parse_term};
    use crate::term::signature::{DeclKind, FunDef, Signature};

    struct Env {
        store: TermStore,
        sig: Signature,
    }

    impl Env {
        fn new() -> Self {
            Env {
                store: TermStore::new(),
                sig: Signature::default(),
            }
        }
        /// Declare with SMT-LIB text; returns the leaf for constants (or the app-less Sym term).
        fn declare(&mut self, text: &str) -> (Sym, SortId) {
            let Ok(Command::DeclareFun { name, params, ret }) =
                parse_command(&mut self.store, &self.sig, text)
            else {
                panic!("bad declaration {text}")
            };
            let sym = self.store.sym(&name);
            self.sig.add_fun(
                &name,
                FunDef::Declared {
                    sym,
                    params,
                    ret,
                    kind: DeclKind::Free,
                },
            );
            (sym, ret)
        }
        fn constant(&mut self, text: &str) -> TermId {
            let (sym, ret) = self.declare(text);
            self.store.mk_sym_app(sym, vec![], ret)
        }
        fn term(&mut self, text: &str) -> TermId {
            parse_term(&mut self.store, &self.sig, text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
        }
        fn value(&mut self, text: &str) -> Value {
            let t = self.term(text);
            Value::from_term(&self.store, t).unwrap_or_else(|| panic!("not a value: {text}"))
        }
        fn eval_in(
            &mut self,
            model: &Model,
            complete: bool,
            text: &str,
        ) -> Result<Option<Value>, EvalError> {
            let t = self.term(text);
            Evaluator::new(&self.store, model, complete).eval(t)
        }
        fn eval(&mut self, text: &str) -> Value {
            let m = Model::new();
            self.eval_in(&m, false, text)
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .unwrap_or_else(|| panic!("{text}: undetermined"))
        }
        /// Assert that `text` evaluates to the value of the literal `expect`.
        fn check(&mut self, text: &str, expect: &str) {
            let got = self.eval(text);
            let want = self.value(expect);
            assert_eq!(got, want, "{text} should be {expect}");
        }
    }

    #[test]
    fn bv_division_by_zero() {
        let mut e = Env::new();
        e.check("(bvudiv #x05 #x00)", "#xff");
        e.check("(bvurem #x05 #x00)", "#x05");
        e.check("(bvudiv #b1 #b0)", "#b1");
        e.check("(bvurem #b1 #b0)", "#b1");
        e.check(
            "(bvudiv #x0000000000000007 #x0000000000000000)",
            "#xffffffffffffffff",
        );
        e.check(
            "(bvurem #x0000000000000007 #x0000000000000000)",
            "#x0000000000000007",
        );
        e.check(
            "(bvudiv (_ bv7 65) (_ bv0 65))",
            "#b11111111111111111111111111111111111111111111111111111111111111111",
        );
        e.check("(bvurem (_ bv7 65) (_ bv0 65))", "(_ bv7 65)");
        e.check(
            "(bvudiv (_ bv7 128) (_ bv0 128))",
            "#xffffffffffffffffffffffffffffffff",
        );
        // signed: by zero, positive dividend -> all ones; negative dividend -> 1
        e.check("(bvsdiv #x05 #x00)", "#xff");
        e.check("(bvsdiv #xfb #x00)", "#x01");
        e.check("(bvsdiv #x00 #x00)", "#xff");
        e.check("(bvsrem #xfb #x00)", "#xfb");
        e.check("(bvsmod #xfb #x00)", "#xfb");
        e.check("(bvsmod #x05 #x00)", "#x05");
        e.check(
            "(bvsdiv (_ bv5 65) (_ bv0 65))",
            "(_ bv36893488147419103231 65)",
        );
        e.check("(bvsdiv (bvneg (_ bv5 128)) (_ bv0 128))", "(_ bv1 128)");
        e.check("(bvsdiv #b1 #b0)", "#b1");
        e.check("(bvsdiv #b0 #b0)", "#b1");
    }

    #[test]
    fn bv_signed_division() {
        let mut e = Env::new();
        // -7 / 2 = -3 (truncating), -7 rem 2 = -1, -7 smod 2 = 1
        e.check("(bvsdiv #xf9 #x02)", "#xfd");
        e.check("(bvsrem #xf9 #x02)", "#xff");
        e.check("(bvsmod #xf9 #x02)", "#x01");
        // 7 / -2 = -3, 7 rem -2 = 1, 7 smod -2 = -1
        e.check("(bvsdiv #x07 #xfe)", "#xfd");
        e.check("(bvsrem #x07 #xfe)", "#x01");
        e.check("(bvsmod #x07 #xfe)", "#xff");
        // -7 / -2 = 3, rem -1, smod -1
        e.check("(bvsdiv #xf9 #xfe)", "#x03");
        e.check("(bvsrem #xf9 #xfe)", "#xff");
        e.check("(bvsmod #xf9 #xfe)", "#xff");
        // overflow: MIN / -1 = MIN
        e.check("(bvsdiv #x80 #xff)", "#x80");
        e.check("(bvsrem #x80 #xff)", "#x00");
        e.check("(bvsmod #x80 #xff)", "#x00");
        e.check(
            "(bvsdiv #x8000000000000000 #xffffffffffffffff)",
            "#x8000000000000000",
        );
        e.check(
            "(bvsdiv (concat #b1 (_ bv0 64)) (bvnot (_ bv0 65)))",
            "(_ bv18446744073709551616 65)",
        );
        e.check("(bvsmod (bvneg (_ bv7 128)) (_ bv2 128))", "(_ bv1 128)");
        e.check(
            "(bvsrem (bvneg (_ bv7 128)) (_ bv2 128))",
            "#xffffffffffffffffffffffffffffffff",
        );
        e.check(
            "(bvsmod (_ bv7 65) (bvneg (_ bv2 65)))",
            "(_ bv36893488147419103231 65)",
        );
        // width 1: #b1 is -1
        e.check("(bvsdiv #b1 #b1)", "#b1");
        e.check("(bvsrem #b1 #b1)", "#b0");
        e.check("(bvsmod #b1 #b1)", "#b0");
    }

    #[test]
    fn bv_shifts_and_rotates() {
        let mut e = Env::new();
        e.check("(bvshl #x01 #x07)", "#x80");
        e.check("(bvshl #x01 #x08)", "#x00");
        e.check("(bvshl #xff #xff)", "#x00");
        e.check("(bvlshr #x80 #x07)", "#x01");
        e.check("(bvlshr #x80 #x08)", "#x00");
        e.check("(bvashr #x80 #x03)", "#xf0");
        e.check("(bvashr #x80 #x08)", "#xff");
        e.check("(bvashr #x80 #xff)", "#xff");
        e.check("(bvashr #x40 #x09)", "#x00");
        e.check(
            "(bvshl #x0000000000000001 #x0000000000000040)",
            "#x0000000000000000",
        );
        e.check(
            "(bvshl #x0000000000000001 #x000000000000003f)",
            "#x8000000000000000",
        );
        e.check(
            "(bvashr #x8000000000000000 #x000000000000003f)",
            "#xffffffffffffffff",
        );
        e.check(
            "(bvashr #x8000000000000000 #xffffffffffffffff)",
            "#xffffffffffffffff",
        );
        e.check(
            "(bvlshr #x8000000000000000 #x0000000000000040)",
            "#x0000000000000000",
        );
        e.check(
            "(bvshl (_ bv1 65) (_ bv64 65))",
            "(_ bv18446744073709551616 65)",
        );
        e.check("(bvshl (_ bv1 65) (_ bv65 65))", "(_ bv0 65)");
        e.check(
            "(bvashr (concat #b1 (_ bv0 64)) (_ bv64 65))",
            "(_ bv36893488147419103231 65)",
        );
        e.check(
            "(bvashr (concat #b1 (_ bv0 64)) (_ bv1 65))",
            "(_ bv27670116110564327424 65)",
        );
        e.check(
            "(bvashr (concat #b1 (_ bv0 64)) (_ bv100 65))",
            "(_ bv36893488147419103231 65)",
        );
        e.check("(bvlshr (bvnot (_ bv0 128)) (_ bv127 128))", "(_ bv1 128)");
        e.check("(bvshl #b1 #b1)", "#b0");
        e.check("(bvashr #b1 #b1)", "#b1");
        e.check("((_ rotate_left 3) #x81)", "#x0c");
        e.check("((_ rotate_left 8) #x81)", "#x81");
        e.check("((_ rotate_left 11) #x81)", "#x0c");
        e.check("((_ rotate_right 1) #x81)", "#xc0");
        e.check("((_ rotate_right 9) #x81)", "#xc0");
        e.check(
            "((_ rotate_left 1) #x8000000000000001)",
            "#x0000000000000003",
        );
        e.check(
            "((_ rotate_right 1) (_ bv1 65))",
            "(_ bv18446744073709551616 65)",
        );
        e.check("((_ rotate_left 5) #b1)", "#b1");
    }

    #[test]
    fn bv_structure_ops() {
        let mut e = Env::new();
        e.check("(concat #x12 #x34)", "#x1234");
        e.check("(concat #b1 #x12 #b0)", "#b1000100100");
        e.check(
            "(concat #xffffffffffffffff #x0000000000000001)",
            "#xffffffffffffffff0000000000000001",
        );
        e.check("(concat #x0000000000000001 #b1)", "(_ bv3 65)");
        e.check("((_ extract 7 4) #xa5)", "#xa");
        e.check("((_ extract 0 0) #xa5)", "#b1");
        e.check("((_ extract 63 63) #x8000000000000000)", "#b1");
        e.check(
            "((_ extract 64 1) (concat #b1 #x0000000000000003))",
            "#x8000000000000001",
        );
        e.check(
            "((_ extract 127 64) #xffffffffffffffff0000000000000001)",
            "#xffffffffffffffff",
        );
        e.check("((_ zero_extend 8) #xff)", "#x00ff");
        e.check("((_ zero_extend 0) #xff)", "#xff");
        e.check("((_ sign_extend 8) #xff)", "#xffff");
        e.check("((_ sign_extend 8) #x7f)", "#x007f");
        e.check("((_ sign_extend 63) #b1)", "#xffffffffffffffff");
        e.check(
            "((_ sign_extend 1) #x8000000000000000)",
            "(_ bv27670116110564327424 65)",
        );
        e.check(
            "((_ sign_extend 64) #x8000000000000000)",
            "#xffffffffffffffff8000000000000000",
        );
        e.check(
            "((_ zero_extend 64) #x8000000000000000)",
            "#x00000000000000008000000000000000",
        );
        e.check("((_ repeat 3) #b10)", "#b101010");
        e.check(
            "((_ repeat 2) #xdeadbeefdeadbeef)",
            "#xdeadbeefdeadbeefdeadbeefdeadbeef",
        );
        e.check("((_ repeat 1) #xab)", "#xab");
        e.check("(bvcomp #xab #xab)", "#b1");
        e.check("(bvcomp #xab #xac)", "#b0");
        e.check("(bvcomp (_ bv3 65) (_ bv3 65))", "#b1");
    }

    #[test]
    fn bv_arith_and_logic() {
        let mut e = Env::new();
        e.check("(bvadd #xff #x01)", "#x00");
        e.check("(bvadd #x01 #x02 #x03)", "#x06");
        e.check("(bvsub #x00 #x01)", "#xff");
        // yices takes bvsub of three (left-associative); z3 and cvc5 do not.
        e.sig.arity = crate::term::signature::ArityRule::Yices;
        e.check("(bvsub #x10 #x01 #x02)", "#x0d");
        e.sig.arity = crate::term::signature::ArityRule::Z3;
        e.check("(bvmul #x10 #x10)", "#x00");
        e.check(
            "(bvmul #xffffffffffffffff #xffffffffffffffff)",
            "#x0000000000000001",
        );
        e.check(
            "(bvadd #xffffffffffffffff #x0000000000000001)",
            "#x0000000000000000",
        );
        e.check("(bvadd (bvnot (_ bv0 65)) (_ bv1 65))", "(_ bv0 65)");
        e.check(
            "(bvsub (_ bv0 128) (_ bv1 128))",
            "#xffffffffffffffffffffffffffffffff",
        );
        e.check(
            "(bvmul (bvnot (_ bv0 128)) (bvnot (_ bv0 128)))",
            "(_ bv1 128)",
        );
        e.check("(bvneg #x80)", "#x80");
        e.check("(bvneg #x00)", "#x00");
        e.check("(bvneg #b1)", "#b1");
        e.check("(bvneg (_ bv1 65))", "(_ bv36893488147419103231 65)");
        e.check("(bvnot #b0)", "#b1");
        e.check("(bvnot #x0f)", "#xf0");
        e.check("(bvand #x0f #x3c #xff)", "#x0c");
        e.check("(bvor #x0f #x30)", "#x3f");
        e.check("(bvxor #x0f #x3c)", "#x33");
        e.check("(bvnand #x0f #x3c)", "#xf3");
        e.check("(bvnor #x0f #x30)", "#xc0");
        e.check("(bvxnor #x0f #x3c)", "#xcc");
        e.check(
            "(bvxnor (_ bv5 65) (_ bv5 65))",
            "(_ bv36893488147419103231 65)",
        );
        e.check("(bvudiv #x07 #x02)", "#x03");
        e.check("(bvurem #x07 #x02)", "#x01");
        e.check(
            "(bvudiv #xffffffffffffffffffffffffffffffff #x00000000000000000000000000000010)",
            "#x0fffffffffffffffffffffffffffffff",
        );
    }

    #[test]
    fn bv_comparisons() {
        let mut e = Env::new();
        for (t, v) in [
            ("(bvult #x00 #xff)", true),
            ("(bvslt #x00 #xff)", false),
            ("(bvslt #x80 #x7f)", true),
            ("(bvsle #x80 #x80)", true),
            ("(bvsgt #x7f #x80)", true),
            ("(bvsge #x80 #x7f)", false),
            ("(bvuge #x80 #x7f)", true),
            ("(bvugt #x80 #x80)", false),
            ("(bvule #x80 #x80)", true),
            ("(bvslt #b1 #b0)", true),
            ("(bvult #b1 #b0)", false),
            ("(bvslt #x8000000000000000 #x7fffffffffffffff)", true),
            ("(bvult #x8000000000000000 #x7fffffffffffffff)", false),
            ("(bvslt (concat #b1 (_ bv0 64)) (_ bv1 65))", true),
            ("(bvsle (_ bv1 65) (concat #b1 (_ bv0 64)))", false),
            ("(bvsgt (bvnot (_ bv0 128)) (_ bv0 128))", false),
            ("(bvsge (_ bv0 128) (bvnot (_ bv0 128)))", true),
            ("(bvugt (bvnot (_ bv0 128)) (_ bv0 128))", true),
        ] {
            assert_eq!(e.eval(t), Value::Bool(v), "{t}");
        }
    }

    #[test]
    fn core_connectives() {
        let mut e = Env::new();
        for (t, v) in [
            ("(=> false true false)", true), // right-assoc: false => (...)
            ("(=> true true false)", false),
            ("(=> true false true)", true),
            ("(xor true true true)", true),
            ("(xor true true)", false),
            ("(and true)", true),
            ("(or false)", false),
            ("(and true true false)", false),
            ("(or false false true)", true),
            ("(= true true true)", true),
            ("(= #x01 #x01 #x02)", false),
            ("(distinct #x01 #x02 #x03)", true),
            ("(distinct #x01 #x02 #x01)", false),
            ("(distinct 1 2 3 4 5 6 7 8 9 10 11 1)", false),
            ("(distinct 1 2 3 4 5 6 7 8 9 10 11 12)", true),
            ("(ite (= #x01 #x01) false true)", false),
            ("(not (ite false true false))", true),
            ("(! (= 1 1) :named a1)", true),
        ] {
            assert_eq!(e.eval(t), Value::Bool(v), "{t}");
        }
        e.check("(ite (bvult #x01 #x02) #x0a #x0b)", "#x0a");
    }

    #[test]
    fn int_real_arith() {
        let mut e = Env::new();
        e.check("(div 7 2)", "3");
        e.check("(div (- 7) 2)", "(- 4)");
        e.check("(mod (- 7) 2)", "1");
        e.check("(div 7 (- 2))", "(- 3)");
        e.check("(mod 7 (- 2))", "1");
        e.check("(div (- 7) (- 2))", "4");
        e.check("(mod (- 7) (- 2))", "1");
        e.check("(div 100 3 2)", "16");
        e.check("(abs (- 5))", "5");
        e.check("(- 5 2 1)", "2");
        e.check("(- 5)", "(- 5)");
        e.check("(+ 1 2 3)", "6");
        e.check("(* 2 3 4)", "24");
        e.check("(+ 1 0.5)", "1.5");
        e.check("(/ 1 3)", "(/ 1 3)");
        e.check("(/ 1 3 2)", "(/ 1.0 6.0)");
        e.check("(- (/ 1 3))", "(- (/ 1 3))");
        e.check("(* 0.5 4)", "2.0");
        e.check("(to_real 3)", "3.0");
        e.check("(to_int 1.5)", "1");
        e.check("(to_int (- 1.5))", "(- 2)");
        e.check("(to_int (- 2.0))", "(- 2)");
        e.check("(ite true 1 2.5)", "1.0");
        for (t, v) in [
            ("(is_int 1.5)", false),
            ("(is_int 2.0)", true),
            ("((_ divisible 3) 9)", true),
            ("((_ divisible 3) (- 10))", false),
            ("(< 1 2 3)", true),
            ("(< 1 3 2)", false),
            ("(<= 1 1 2)", true),
            ("(> 3 2 2)", false),
            ("(>= 3 2 2)", true),
            ("(= 1 1.0)", true),
            ("(= 1 1.5)", false),
            ("(< 1 1.5)", true),
            ("(distinct 1 1.0)", false),
        ] {
            assert_eq!(e.eval(t), Value::Bool(v), "{t}");
        }
    }

    #[test]
    fn division_by_zero_is_unsupported() {
        let mut e = Env::new();
        let m = Model::new();
        for t in [
            "(div 1 0)",
            "(mod 1 0)",
            "(/ 1.0 0.0)",
            "(/ 1 0)",
            "(/ 2 1 0)",
            "(= (div 5 (- 1 1)) 3)",
        ] {
            assert!(
                matches!(e.eval_in(&m, true, t), Err(EvalError::Unsupported(_))),
                "{t}"
            );
        }
        // not needed in an untaken branch or a decided connective
        e.check("(ite true 1 (div 1 0))", "1");
        assert_eq!(e.eval("(and false (= (div 1 0) 1))"), Value::Bool(false));
        assert_eq!(e.eval("(or (= 1 1) (= (mod 1 0) 1))"), Value::Bool(true));
    }

    #[test]
    fn unsupported_constructs() {
        let mut e = Env::new();
        let m = Model::new();
        for t in ["(forall ((x Int)) (> x 0))", "(exists ((b Bool)) b)"] {
            assert!(
                matches!(e.eval_in(&m, true, t), Err(EvalError::Unsupported(_))),
                "{t}"
            );
        }
        e.sig
            .add_sort("U", crate::term::signature::SortDef::Declared(0));
        e.constant("(declare-fun u () U)");
        for t in ["(= u u)", "(ite true u u)"] {
            assert!(
                matches!(e.eval_in(&m, true, t), Err(EvalError::Unsupported(_))),
                "{t}"
            );
            assert!(
                matches!(
                    e.eval_in(&m, false, t),
                    Err(EvalError::Unsupported(_)) | Ok(None)
                ),
                "{t}"
            );
        }
        let s = e.store.mk_str("abc");
        let t = e.store.mk_other("str.len", vec![s], SortStore::INT);
        assert!(matches!(
            Evaluator::new(&e.store, &m, true).eval(t),
            Err(EvalError::Unsupported(_))
        ));
    }

    #[test]
    fn partial_models_and_completion() {
        let mut e = Env::new();
        let x = e.constant("(declare-fun x () (_ BitVec 8))");
        let p = e.constant("(declare-fun p () Bool)");
        let a = e.constant("(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))");
        let mut m = Model::new();
        assert_eq!(
            e.eval_in(&m, false, "(and p false)"),
            Ok(Some(Value::Bool(false)))
        );
        assert_eq!(
            e.eval_in(&m, false, "(or true p)"),
            Ok(Some(Value::Bool(true)))
        );
        assert_eq!(e.eval_in(&m, false, "(and p true)"), Ok(None));
        assert_eq!(e.eval_in(&m, false, "(bvadd x #x01)"), Ok(None));
        assert_eq!(
            e.eval_in(&m, false, "(ite p #x01 #x01)"),
            Ok(Some(Value::bv_u64(8, 1)))
        );
        assert_eq!(e.eval_in(&m, false, "(ite p #x01 #x02)"), Ok(None));
        assert_eq!(
            e.eval_in(&m, false, "(select (store a #x00000001 #x07) #x00000001)"),
            Ok(Some(Value::bv_u64(8, 7)))
        );
        assert_eq!(
            e.eval_in(&m, false, "(select (store a #x00000001 #x07) #x00000002)"),
            Ok(None)
        );
        // completion
        let t = e.term("(and (= x #x00) (not p) (= (select a #x00000005) #x00))");
        let mut ev = Evaluator::new(&e.store, &m, true);
        assert!(ev.is_true(t).unwrap());
        let mut c = ev.completions();
        c.sort();
        assert_eq!(
            c,
            vec![
                (x, Value::bv_u64(8, 0)),
                (p, Value::Bool(false)),
                (a, Value::Array(ArrayVal::constant(Value::bv_u64(8, 0)))),
            ]
            .into_iter()
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect::<Vec<_>>()
        );
        // with values
        m.set(x, Value::bv_u64(8, 3));
        m.set(p, Value::Bool(true));
        let t = e.term("(and p (= (bvmul x x) #x09))");
        let mut ev = Evaluator::new(&e.store, &m, false);
        assert!(ev.is_true(t).unwrap());
        assert!(ev.completions().is_empty());
        // wrong sort in the model is refused
        m.set(x, Value::Bool(true));
        assert!(matches!(
            Evaluator::new(&e.store, &m, false).eval(t),
            Err(EvalError::Unsupported(_))
        ));
        m.set(x, Value::bv_u64(16, 3));
        assert!(matches!(
            Evaluator::new(&e.store, &m, false).eval(t),
            Err(EvalError::Unsupported(_))
        ));
    }

    #[test]
    fn int_model_value_promoted_for_real_symbol() {
        let mut e = Env::new();
        let r = e.constant("(declare-fun r () Real)");
        let mut m = Model::new();
        m.set(r, Value::Int(BigInt::from(2)));
        assert_eq!(
            e.eval_in(&m, false, "(= (* r 1.5) 3.0)"),
            Ok(Some(Value::Bool(true)))
        );
        assert_eq!(
            e.eval_in(&m, false, "r"),
            Ok(Some(Value::Real(BigRational::from_integer(2.into()))))
        );
    }

    #[test]
    fn a_select_reads_a_model_array_as_its_leaf_would() {
        let mut e = Env::new();
        let a = e.constant("(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))");
        let mut m = Model::new();
        // Of the array's sort: read in place, the same value twice over.
        m.set(
            a,
            e.value("(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000001 #x05)"),
        );
        let five = Ok(Some(Value::bv_u64(8, 5)));
        assert_eq!(e.eval_in(&m, false, "(select a #x00000001)"), five);
        assert_eq!(
            e.eval_in(
                &m,
                false,
                "(ite (= (select a #x00000002) #x00) (select a #x00000001) #x07)"
            ),
            five
        );
        // Of another sort: refused, as evaluating the constant itself is.
        m.set(a, e.value("((as const (Array Int Int)) 7)"));
        assert!(e.eval_in(&m, false, "a").is_err());
        assert!(e.eval_in(&m, false, "(select a #x00000001)").is_err());
        // Missing: undetermined, or the default under completion.
        let m = Model::new();
        assert_eq!(e.eval_in(&m, false, "(select a #x00000001)"), Ok(None));
        assert_eq!(
            e.eval_in(&m, true, "(select a #x00000001)"),
            Ok(Some(Value::bv_u64(8, 0)))
        );
    }

    #[test]
    fn arrays() {
        let mut e = Env::new();
        let a = e.constant("(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))");
        let b = e.constant("(declare-fun b () (Array Int Int))");
        let mut m = Model::new();
        let av =
            e.value("(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000001 #x05)");
        m.set(a, av.clone());
        m.set(b, e.value("((as const (Array Int Int)) 7)"));
        let check = |e: &mut Env, t: &str, v: bool| {
            assert_eq!(e.eval_in(&m, false, t), Ok(Some(Value::Bool(v))), "{t}")
        };
        check(&mut e, "(= (select a #x00000001) #x05)", true);
        check(&mut e, "(= (select a #x00000002) #x00)", true);
        check(
            &mut e,
            "(= (select (store a #x00000002 #x09) #x00000002) #x09)",
            true,
        );
        check(
            &mut e,
            "(= (store a #x00000001 #x00) ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00))",
            true,
        );
        check(&mut e, "(= (store a #x00000001 #x05) a)", true);
        check(&mut e, "(= (store a #x00000003 #x05) a)", false);
        check(
            &mut e,
            "(= (store (store a #x00000003 #x05) #x00000003 #x00) a)",
            true,
        );
        check(&mut e, "(= b ((as const (Array Int Int)) 7))", true);
        check(&mut e, "(= (store b 1 7) b)", true);
        check(&mut e, "(= (select (store (store b 1 2) 1 3) 1) 3)", true);
        check(&mut e, "(distinct (store b 1 8) b)", true);
        // finite index sorts: extensional equality across different defaults
        check(
            &mut e,
            "(= (store (store ((as const (Array Bool Bool)) false) true true) false true) ((as const (Array Bool Bool)) true))",
            true,
        );
        check(
            &mut e,
            "(= (store (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x00) #b0 #x01) #b1 #x02) (store (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x07) #b1 #x02) #b0 #x01))",
            true,
        );
        check(
            &mut e,
            "(= (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x00) #b0 #x01) (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x01) #b1 #x00))",
            true,
        );
        // value of a store chain
        let v = e
            .eval_in(
                &m,
                false,
                "(store (store a #x00000002 #x09) #x00000001 #x00)",
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            v,
            e.value("(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000002 #x09)")
        );
        // nested arrays
        check(
            &mut e,
            "(= (select (store ((as const (Array Int (Array Int Int))) ((as const (Array Int Int)) 0)) 1 b) 1) b)",
            true,
        );
    }

    #[test]
    fn uninterpreted_functions() {
        let mut e = Env::new();
        let (f, _) = e.declare("(declare-fun f ((_ BitVec 8) Int) (_ BitVec 8))");
        let (g, _) = e.declare("(declare-fun g (Int) Int)");
        let mut m = Model::new();
        m.set_fun_entry(
            f,
            vec![Value::bv_u64(8, 1), Value::Int(2.into())],
            Value::bv_u64(8, 9),
        );
        assert_eq!(
            e.eval_in(&m, false, "(f #x01 2)"),
            Ok(Some(Value::bv_u64(8, 9)))
        );
        assert_eq!(e.eval_in(&m, false, "(f #x01 3)"), Ok(None));
        m.set_fun_default(f, Value::bv_u64(8, 4));
        assert_eq!(
            e.eval_in(&m, false, "(f #x01 3)"),
            Ok(Some(Value::bv_u64(8, 4)))
        );
        assert_eq!(
            e.eval_in(&m, false, "(f (bvadd #x00 #x01) (+ 1 1))"),
            Ok(Some(Value::bv_u64(8, 9)))
        );
        // completion of a function without a table
        let t = e.term("(= (g 5) (g 6))");
        let mut ev = Evaluator::new(&e.store, &m, true);
        assert!(ev.is_true(t).unwrap());
        assert_eq!(ev.fun_completions(), vec![(g, Value::Int(0.into()))]);
        // ill-sorted table refused
        m.set_fun_entry(f, vec![Value::bv_u64(8, 1)], Value::bv_u64(8, 9));
        assert!(matches!(
            e.eval_in(&m, false, "(f #x01 2)"),
            Err(EvalError::Unsupported(_))
        ));
    }

    #[test]
    fn value_terms_round_trip() {
        let mut e = Env::new();
        for text in [
            "true",
            "#x0a",
            "#b101",
            "(_ bv5 65)",
            "#xffffffffffffffffffffffffffffffff",
            "5",
            "(- 5)",
            "1.5",
            "(- 2.0)",
            "(/ 1 3)",
            "(- (/ 1 3))",
            "(/ (- 1) 3)",
            "(/ 1.0 3.0)",
            "((as const (Array Int Int)) 0)",
            "(store (store ((as const (Array Int Int)) 0) 3 4) 1 2)",
            "(store ((as const (Array (_ BitVec 4) Real)) 0.5) #x1 (/ 1 3))",
            "(store ((as const (Array Bool Bool)) false) true true)",
        ] {
            let t = e.term(text);
            let v = Value::from_term(&e.store, t).unwrap_or_else(|| panic!("{text}"));
            let sort = e.store.sort(t);
            let back = v.to_term(&mut e.store, sort);
            assert_eq!(e.store.sort(back), sort, "{text}");
            assert_eq!(Value::from_term(&e.store, back), Some(v.clone()), "{text}");
        }
        assert_eq!(
            e.value("(- (/ 1 3))"),
            Value::Real(BigRational::new((-1).into(), 3.into()))
        );
        assert_eq!(
            e.value("(/ 6 4)"),
            Value::Real(BigRational::new(3.into(), 2.into()))
        );
        assert_eq!(e.value("(- 5)"), Value::Int((-5).into()));
        // deterministic store order, default entries dropped
        let v = e.value("(store (store (store ((as const (Array Int Int)) 0) 3 4) 1 2) 5 0)");
        let ii = e.store.sorts.array(SortStore::INT, SortStore::INT);
        let t = v.to_term(&mut e.store, ii);
        assert_eq!(
            crate::smt2::printer::print_tree(&e.store, t, &crate::smt2::printer::ClientNames),
            "(store (store ((as const (Array Int Int)) 0) 1 2) 3 4)"
        );
        let v = Value::Real(BigRational::new((-1).into(), 3.into()));
        let t = v.to_term(&mut e.store, SortStore::REAL);
        assert_eq!(
            crate::smt2::printer::print_tree(&e.store, t, &crate::smt2::printer::ClientNames),
            "(- (/ 1.0 3.0))"
        );
        // not values
        let x = e.constant("(declare-fun x () Int)");
        assert_eq!(Value::from_term(&e.store, x), None);
        let t = e.term("(+ 1 2)");
        assert_eq!(Value::from_term(&e.store, t), None);
        let t = e.term("(store ((as const (Array Int Int)) 0) x 1)");
        assert_eq!(Value::from_term(&e.store, t), None);
        assert!(parse_term(&mut e.store, &e.sig, "(_ as-array k!0)").is_err());
        let t = e.term("(/ 1 0)");
        assert_eq!(Value::from_term(&e.store, t), None);
    }

    #[test]
    fn deep_term_does_not_overflow() {
        let mut store = TermStore::new();
        let bv8 = store.sorts.bv(8);
        let x = store.mk_const("x", bv8);
        let mut t = x;
        for _ in 0..200_000 {
            t = store.app(Op::BvNot, vec![t]).unwrap();
        }
        let mut u = t;
        for i in 0..100_000u64 {
            let c = store.mk_bv_u64(i & 1, 8);
            u = store.app(Op::BvAdd, vec![u, c]).unwrap();
        }
        let f = store.mk_eq(u, x).unwrap();
        let mut m = Model::new();
        m.set(x, Value::bv_u64(8, 0x5a));
        let mut ev = Evaluator::new(&store, &m, false);
        assert_eq!(ev.eval(t).unwrap(), Some(Value::bv_u64(8, 0x5a)));
        // 50_000 additions of 1 = 0x50 mod 256
        assert_eq!(
            ev.eval(u).unwrap(),
            Some(Value::bv_u64(8, (0x5a + 50_000u64) & 0xff))
        );
        assert!(!ev.is_true(f).unwrap());
        // deep Boolean chain through the short-circuit path
        let p = store.mk_const("p", SortStore::BOOL);
        let mut b = p;
        for _ in 0..200_000 {
            let nb = store.mk_not(b);
            b = store.mk_and(vec![nb, TermStore::TRUE]);
        }
        m.set(p, Value::Bool(true));
        assert_eq!(
            Evaluator::new(&store, &m, false).eval(b).unwrap(),
            Some(Value::Bool(true))
        );
    }

    #[test]
    fn klee_like_query_is_fast() {
        // ~300 nodes: byte reads from an array, concatenated into words, arithmetic and comparisons.
        let mut e = Env::new();
        let a = e.constant("(declare-fun arr () (Array (_ BitVec 32) (_ BitVec 8)))");
        let mut conj = Vec::new();
        for i in 0..12u32 {
            let rd = |k: u32| format!("(select arr #x{:08x})", 4 * i + k);
            let word = format!(
                "(concat {} (concat {} (concat {} {})))",
                rd(3),
                rd(2),
                rd(1),
                rd(0)
            );
            conj.push(format!(
                "(not (bvslt (bvadd ((_ sign_extend 32) {word}) #x{:016x}) (bvmul ((_ zero_extend 32) {word}) #x0000000000000003)))",
                i
            ));
        }
        let text = format!("(and {})", conj.join(" "));
        let t = e.term(&text);
        let mut arr = ArrayVal::constant(Value::bv_u64(8, 0));
        for k in 0..48u64 {
            arr.store(Value::bv_u64(32, k), Value::bv_u64(8, k * 7));
        }
        let mut m = Model::new();
        m.set(a, Value::Array(arr));
        let mut times = Vec::new();
        let mut r = None;
        for _ in 0..200 {
            let start = std::time::Instant::now();
            let mut ev = Evaluator::new(&e.store, &m, false);
            r = Some(ev.eval(t).unwrap());
            times.push(start.elapsed());
        }
        times.sort();
        let median = times[times.len() / 2];
        eprintln!(
            "klee-like query ({} nodes in store): median {:?}",
            e.store.len(),
            median
        );
        assert!(r.unwrap().is_some());
        assert!(
            median < std::time::Duration::from_millis(2),
            "median {median:?}"
        );
    }
}
