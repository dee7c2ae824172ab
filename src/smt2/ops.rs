//! The vocabulary both parsers of commands share, the one-pass fast path (`fast`) and the
//! general parser over the s-expression tree (`general`), so that they build the same terms
//! from the same text: the errors they report, the names of built-in and indexed operators,
//! the signature lookups a parse makes (noted in a `Trace`), the application of a declared
//! function or a macro, and the values of literals.
//!
//! Invariants: everything here is a function of its arguments and the store (no parser
//! state), so a term built through it is the same whichever parser asked; every lookup of a
//! function or sort name goes through `lookup_fun` / `lookup_sort`, which note it in the
//! trace when one is kept, so a trace lists every name a parse depended on.

use super::lex::Tok;
use crate::term::signature::{FunDef, Signature, SortDef};
use crate::term::{Op, SortId, SortStore, TermId, TermStore};
use num_bigint::BigUint;
use num_traits::Num;
use rustc_hash::FxHashMap;

/// Terms nested deeper than this are refused (the engine runs on a thread with a large
/// stack sized for this depth).
pub const MAX_DEPTH: usize = 400_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Syntax,
    Sort,
    Unsupported,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub msg: String,
    pub kind: ErrorKind,
}

pub type PResult<T> = Result<T, ParseError>;

pub(super) fn err<T>(offset: usize, kind: ErrorKind, msg: impl Into<String>) -> PResult<T> {
    Err(ParseError {
        offset,
        msg: msg.into(),
        kind,
    })
}

/// What parsing a command looked up in the signature to build its terms: each function
/// and sort name with what it stood for. Parsing the same text again gives the same terms
/// as long as every one of these names still stands for the same thing (see
/// `crate::smt2::memo`). Each list is sorted by name, one entry per name (a command looks
/// up a few names, KLEE's one array: a sorted vector is cheaper to build, keep and check
/// than a hash table, and two parses that looked up the same names in another order have
/// equal traces).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    funs: Vec<(Box<str>, Option<FunDef>)>,
    sorts: Vec<(Box<str>, Option<SortDef>)>,
}

/// Note `name` as standing for `def` in the sorted list `list` unless it is there.
fn note<D: Clone>(list: &mut Vec<(Box<str>, Option<D>)>, name: &str, def: Option<&D>) {
    if list.is_empty() {
        // The usual case, one name: allocated at its size.
        *list = vec![(name.into(), def.cloned())];
    } else if let Err(i) = list.binary_search_by(|(n, _)| (**n).cmp(name)) {
        list.insert(i, (name.into(), def.cloned()));
    }
}

impl Trace {
    /// Every name looked up stands for what it stood for then.
    pub fn holds(&self, sig: &Signature) -> bool {
        self.funs.iter().all(|(n, d)| sig.fun(n) == d.as_ref())
            && self.sorts.iter().all(|(n, d)| sig.sort(n) == d.as_ref())
    }
    /// What the trace holds on the heap, near enough (its names and their definitions).
    pub fn heap_bytes(&self) -> usize {
        let funs: usize = self.funs.iter().map(|(n, _)| n.len()).sum();
        let sorts: usize = self.sorts.iter().map(|(n, _)| n.len()).sum();
        funs + sorts
            + self.funs.capacity() * std::mem::size_of::<(Box<str>, Option<FunDef>)>()
            + self.sorts.capacity() * std::mem::size_of::<(Box<str>, Option<SortDef>)>()
    }
    /// Names looked up.
    pub fn len(&self) -> usize {
        self.funs.len() + self.sorts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[inline]
pub fn builtin_op(name: &str) -> Option<Op> {
    Some(match name {
        "not" => Op::Not,
        "and" => Op::And,
        "or" => Op::Or,
        "xor" => Op::Xor,
        "=>" => Op::Implies,
        "=" => Op::Eq,
        "distinct" => Op::Distinct,
        "ite" => Op::Ite,
        "select" => Op::Select,
        "store" => Op::Store,
        "concat" => Op::Concat,
        "bvnot" => Op::BvNot,
        "bvneg" => Op::BvNeg,
        "bvand" => Op::BvAnd,
        "bvor" => Op::BvOr,
        "bvxor" => Op::BvXor,
        "bvnand" => Op::BvNand,
        "bvnor" => Op::BvNor,
        "bvxnor" => Op::BvXnor,
        "bvcomp" => Op::BvComp,
        "bvadd" => Op::BvAdd,
        "bvsub" => Op::BvSub,
        "bvmul" => Op::BvMul,
        "bvudiv" => Op::BvUdiv,
        "bvurem" => Op::BvUrem,
        "bvsdiv" => Op::BvSdiv,
        "bvsrem" => Op::BvSrem,
        "bvsmod" => Op::BvSmod,
        "bvshl" => Op::BvShl,
        "bvlshr" => Op::BvLshr,
        "bvashr" => Op::BvAshr,
        "bvult" => Op::BvUlt,
        "bvule" => Op::BvUle,
        "bvugt" => Op::BvUgt,
        "bvuge" => Op::BvUge,
        "bvslt" => Op::BvSlt,
        "bvsle" => Op::BvSle,
        "bvsgt" => Op::BvSgt,
        "bvsge" => Op::BvSge,
        "-" => Op::Sub,
        "+" => Op::Add,
        "*" => Op::Mul,
        "/" => Op::RealDiv,
        "div" => Op::IntDiv,
        "mod" => Op::Mod,
        "abs" => Op::Abs,
        "<=" => Op::Le,
        "<" => Op::Lt,
        ">=" => Op::Ge,
        ">" => Op::Gt,
        "to_real" => Op::ToReal,
        "to_int" => Op::ToInt,
        "is_int" => Op::IsInt,
        _ => return None,
    })
}

#[inline]
pub(super) fn indexed_op(name: &str, idx: &[u32]) -> Option<Op> {
    Some(match (name, idx) {
        ("extract", [i, j]) => Op::Extract(*i, *j),
        ("zero_extend", [k]) => Op::ZeroExtend(*k),
        ("sign_extend", [k]) => Op::SignExtend(*k),
        ("repeat", [k]) => Op::Repeat(*k),
        ("rotate_left", [k]) => Op::RotateLeft(*k),
        ("rotate_right", [k]) => Op::RotateRight(*k),
        ("divisible", [k]) => Op::Divisible(*k),
        _ => return None,
    })
}

/// `sig.fun(name)`, noted in `trace` when one is kept.
#[inline]
pub(super) fn lookup_fun<'a>(
    sig: &'a Signature,
    trace: &mut Option<Trace>,
    name: &str,
) -> Option<&'a FunDef> {
    let d = sig.fun(name);
    if let Some(t) = trace.as_mut() {
        note(&mut t.funs, name, d);
    }
    d
}

/// `sig.sort(name)`, noted in `trace` when one is kept.
pub(super) fn lookup_sort<'a>(
    sig: &'a Signature,
    trace: &mut Option<Trace>,
    name: &str,
) -> Option<&'a SortDef> {
    let d = sig.sort(name);
    if let Some(t) = trace.as_mut() {
        note(&mut t.sorts, name, d);
    }
    d
}

/// `t` as an argument of sort `want`: as it is, or an Int widened to Real. The error is a
/// sort-mismatch message.
pub(super) fn coerce_to(store: &mut TermStore, t: TermId, want: SortId) -> Result<TermId, String> {
    let got = store.sort(t);
    if got == want || got == SortStore::UNKNOWN || want == SortStore::UNKNOWN {
        Ok(t)
    } else if got == SortStore::INT && want == SortStore::REAL {
        store.app(Op::ToReal, vec![t]).map_err(|e| e.0)
    } else {
        Err(format!(
            "sort mismatch: expected {}, got {}",
            store.sorts.to_text(want),
            store.sorts.to_text(got)
        ))
    }
}

/// The application of the function `name`, defined by `def`, to `args`: its arity and
/// argument sorts checked, a macro expanded. Every error is a sort error.
pub(super) fn apply_def(
    store: &mut TermStore,
    name: &str,
    def: &FunDef,
    args: Vec<TermId>,
) -> Result<TermId, String> {
    let arity = |n: usize| {
        if n == args.len() {
            Ok(())
        } else {
            Err(format!("invalid number of arguments to '{name}'"))
        }
    };
    match def {
        FunDef::Declared {
            sym, params, ret, ..
        } => {
            arity(params.len())?;
            let mut a2 = Vec::with_capacity(args.len());
            for (&a, &p) in args.iter().zip(params) {
                a2.push(coerce_to(store, a, p)?);
            }
            Ok(store.mk_sym_app(*sym, a2, *ret))
        }
        FunDef::Macro { params, body } => {
            arity(params.len())?;
            let mut map = FxHashMap::default();
            for (&a, &(psym, psort)) in args.iter().zip(params) {
                let a = coerce_to(store, a, psort)?;
                let pt = store.mk_sym_app(psym, vec![], psort);
                map.insert(pt, a);
            }
            Ok(store.substitute(*body, &map))
        }
    }
}

/// `(_ bvN w)` with N below 2^64 (at most 19 digits) and w a positive u32: the literal.
/// None for anything else, which the caller handles in full.
pub(super) fn small_bv(store: &mut TermStore, name: &str, width: &str) -> Option<TermId> {
    let digits = name.strip_prefix("bv")?;
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v = digits.parse::<u64>().ok()?;
    let w = width.parse::<u32>().ok().filter(|&w| w > 0)?;
    Some(store.mk_bv_u64(v, w))
}

/// A `#x...` or `#b...` literal (`tok` says which); its width is 4 or 1 bits per digit.
#[inline]
pub(super) fn radix_literal(
    store: &mut TermStore,
    tok: Tok,
    text: &str,
) -> Result<TermId, (ErrorKind, &'static str)> {
    let (radix, bits) = if tok == Tok::Hex { (16, 4) } else { (2, 1) };
    let digits = &text[2..];
    let w =
        u32::try_from(digits.len() * bits).map_err(|_| (ErrorKind::Sort, "literal too wide"))?;
    if (1..=64).contains(&w) && !digits.starts_with('+') {
        // The usual widths without a big integer (the lexer gave digits of the radix only).
        if let Ok(v) = u64::from_str_radix(digits, radix) {
            return Ok(store.mk_bv_u64(v, w));
        }
    }
    let v = BigUint::from_str_radix(digits, radix)
        .map_err(|_| (ErrorKind::Syntax, "invalid literal"))?;
    Ok(store.mk_bv(&v, w))
}
