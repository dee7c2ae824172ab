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
//! Bit-vectors of width <= 64 are computed on `u64`.//!
//! Layout: this file walks terms (`Evaluator`) and models (`Model`, `FunTable`); `scalar` holds
//! the operations on Bool, Int and Real values, `bv` those on bit-vectors (`narrow` on `u64`,
//! `wide` on `BigUint`).

mod bv;
mod scalar;
#[cfg(test)]
mod tests;

use bv::bv_op;
pub use bv::narrow;
use scalar::{arith, as_bool, bv_width, num_cmp, values_equal};

use crate::query::value::{ArrayVal, Value};
use crate::term::{Lit, Op, Sort, SortId, SortStore, Sym, TermId, TermStore};
use num_bigint::BigInt;
use num_rational::BigRational;

use rustc_hash::{FxHashMap, FxHashSet};
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
