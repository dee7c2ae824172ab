//! Printing terms back to SMT-LIB. The output parses back to the same term id (the
//! round-trip is tested over the whole corpus): subterms shared in the DAG are bound once
//! with `let` (grouped by level, so nesting stays shallow), literals print in a canonical
//! form. Names come from a `Names` policy: client names for answers, backend names (with
//! internal symbols mapped into the reserved `sp!` namespace) for the solver.
//!
//! Reserved names: every name smtproxy invents starts with `sp!` followed by a letter or
//! digit; a client name that starts with `sp!` is sent to the backend as `sp!!...`, so the
//! two sets never meet.

use crate::term::{Lit, Op, Sort, Sym, TermId, TermStore};
use num_bigint::BigUint;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::fmt::Write;

/// The spelling of names (simple or `|quoted|`) is the term store's (`crate::term::symbol`),
/// so that sort names are written by the same rule.
pub use crate::term::symbol::{is_simple_symbol, quote_symbol};

/// String literals are written by the lexical layer's rule.
pub use super::lex::{string_body, string_literal};

/// The backend name of a store symbol: internal symbols (leading NUL) become `sp!<n>!<base>`;
/// client names starting with `sp!` get one more `!`.
pub fn backend_name(name: &str) -> Cow<'_, str> {
    if let Some(rest) = name.strip_prefix('\0') {
        Cow::Owned(format!("sp!{rest}"))
    } else if let Some(rest) = name.strip_prefix("sp!") {
        Cow::Owned(format!("sp!!{rest}"))
    } else {
        Cow::Borrowed(name)
    }
}

/// Writes `quote_symbol(&backend_name(name))` to `out`, without allocating in the common
/// cases: a simple client name, and an internal name whose rest is simple (`sp!c3`).
pub fn push_backend_symbol(name: &str, out: &mut String) {
    if let Some(rest) = name.strip_prefix('\0') {
        // `sp!` + a simple rest is simple too, and never a reserved word.
        if is_simple_symbol(rest) {
            out.push_str("sp!");
            out.push_str(rest);
            return;
        }
    } else if !name.starts_with("sp!") {
        if let Cow::Borrowed(q) = quote_symbol(name) {
            out.push_str(q);
            return;
        }
    }
    out.push_str(&quote_symbol(&backend_name(name)));
}

/// Inverse of `backend_name` for client names (None for internal names).
pub fn client_name(backend: &str) -> Option<Cow<'_, str>> {
    if let Some(rest) = backend.strip_prefix("sp!!") {
        Some(Cow::Owned(format!("sp!{rest}")))
    } else if backend.starts_with("sp!") {
        None
    } else {
        Some(Cow::Borrowed(backend))
    }
}

/// How symbols are named in printed text.
pub trait Names {
    /// The printed name of the declared symbol `s` at node `t` (unquoted; the printer quotes).
    fn sym<'a>(&'a self, store: &'a TermStore, t: TermId, s: Sym) -> Cow<'a, str>;
    /// A name already standing for the whole term `t` (a CSE macro), if any.
    fn defined(&self, _t: TermId) -> Option<&str> {
        None
    }
    /// Bit-vector literals always in binary (`#b`), as cvc5 and yices print values;
    /// otherwise `#x` when the width is a multiple of 4, as z3 prints them.
    fn binary_bv(&self) -> bool {
        false
    }
    /// A fraction as cvc5 and yices print a rational value, `(/ 1 2)` and `(/ (- 9) 2)`;
    /// otherwise as z3 does, `(/ 1.0 2.0)` and `(- (/ 9.0 2.0))` (integral values are
    /// `2.0` and `(- 3.0)` in all three).
    fn integer_fractions(&self) -> bool {
        false
    }
}

/// Names as the backend sees them (reserved namespace applied).
pub struct BackendNames;
impl Names for BackendNames {
    fn sym<'a>(&'a self, store: &'a TermStore, _t: TermId, s: Sym) -> Cow<'a, str> {
        backend_name(store.sym_name(s))
    }
}

/// Names exactly as the client wrote them.
pub struct ClientNames;
impl Names for ClientNames {
    fn sym<'a>(&'a self, store: &'a TermStore, _t: TermId, s: Sym) -> Cow<'a, str> {
        let n = store.sym_name(s);
        match n.strip_prefix('\0') {
            Some(rest) => Cow::Owned(format!("sp!{rest}")),
            None => Cow::Borrowed(n),
        }
    }
}

/// Names exactly as the client wrote them, bit-vector literals and fractions in a solver's
/// style: how smtproxy prints the values it answers get-value and get-model with itself.
pub struct ValueNames {
    pub binary_bv: bool,
    pub integer_fractions: bool,
}
impl Names for ValueNames {
    fn sym<'a>(&'a self, store: &'a TermStore, t: TermId, s: Sym) -> Cow<'a, str> {
        ClientNames.sym(store, t, s)
    }
    fn binary_bv(&self) -> bool {
        self.binary_bv
    }
    fn integer_fractions(&self) -> bool {
        self.integer_fractions
    }
}

/// `(/ N.0 M.0)`: the integers N and M (the form `Value::to_term` gives a fraction).
fn fraction(store: &TermStore, t: TermId) -> Option<(&str, &str)> {
    let n = store.node(t);
    let whole = |a: TermId| match (store.op(a), store.args(a).is_empty()) {
        (Op::Dec(l), true) => match store.get_lit(l) {
            Lit::Dec(d) => d
                .strip_suffix(".0")
                .filter(|i| i.bytes().all(|c| c.is_ascii_digit())),
            _ => None,
        },
        _ => None,
    };
    match (n.op, n.args) {
        (Op::RealDiv, &[a, b]) => Some((whole(a)?, whole(b)?)),
        _ => None,
    }
}

pub fn op_name(op: Op) -> &'static str {
    match op {
        Op::Not => "not",
        Op::And => "and",
        Op::Or => "or",
        Op::Xor => "xor",
        Op::Implies => "=>",
        Op::Eq => "=",
        Op::Distinct => "distinct",
        Op::Ite => "ite",
        Op::Select => "select",
        Op::Store => "store",
        Op::Concat => "concat",
        Op::BvNot => "bvnot",
        Op::BvNeg => "bvneg",
        Op::BvAnd => "bvand",
        Op::BvOr => "bvor",
        Op::BvXor => "bvxor",
        Op::BvNand => "bvnand",
        Op::BvNor => "bvnor",
        Op::BvXnor => "bvxnor",
        Op::BvComp => "bvcomp",
        Op::BvAdd => "bvadd",
        Op::BvSub => "bvsub",
        Op::BvMul => "bvmul",
        Op::BvUdiv => "bvudiv",
        Op::BvUrem => "bvurem",
        Op::BvSdiv => "bvsdiv",
        Op::BvSrem => "bvsrem",
        Op::BvSmod => "bvsmod",
        Op::BvShl => "bvshl",
        Op::BvLshr => "bvlshr",
        Op::BvAshr => "bvashr",
        Op::BvUlt => "bvult",
        Op::BvUle => "bvule",
        Op::BvUgt => "bvugt",
        Op::BvUge => "bvuge",
        Op::BvSlt => "bvslt",
        Op::BvSle => "bvsle",
        Op::BvSgt => "bvsgt",
        Op::BvSge => "bvsge",
        Op::Neg | Op::Sub => "-",
        Op::Add => "+",
        Op::Mul => "*",
        Op::RealDiv => "/",
        Op::IntDiv => "div",
        Op::Mod => "mod",
        Op::Abs => "abs",
        Op::Le => "<=",
        Op::Lt => "<",
        Op::Ge => ">=",
        Op::Gt => ">",
        Op::ToReal => "to_real",
        Op::ToInt => "to_int",
        Op::IsInt => "is_int",
        _ => "",
    }
}

/// The head of an application of an operator with a fixed name: `(_ extract 7 0)` for
/// an indexed one, else `op_name` (`bvadd`, `=`, ...). Not for symbols, literals,
/// annotations, binders or const arrays, whose heads need the store.
pub fn write_op_head(op: Op, out: &mut String) {
    let _ = match op {
        Op::Extract(i, j) => write!(out, "(_ extract {i} {j})"),
        Op::ZeroExtend(k) => write!(out, "(_ zero_extend {k})"),
        Op::SignExtend(k) => write!(out, "(_ sign_extend {k})"),
        Op::Repeat(k) => write!(out, "(_ repeat {k})"),
        Op::RotateLeft(k) => write!(out, "(_ rotate_left {k})"),
        Op::RotateRight(k) => write!(out, "(_ rotate_right {k})"),
        Op::Divisible(k) => write!(out, "(_ divisible {k})"),
        op => {
            out.push_str(op_name(op));
            Ok(())
        }
    };
}

/// Bit-vector literal text: `#x` when the width is a multiple of 4, else `#b`.
pub fn bv_literal(v: &BigUint, width: u32, out: &mut String) {
    if width.is_multiple_of(4) {
        let s = v.to_str_radix(16);
        out.push_str("#x");
        for _ in s.len()..(width / 4) as usize {
            out.push('0');
        }
        out.push_str(&s);
    } else {
        let s = v.to_str_radix(2);
        out.push_str("#b");
        for _ in s.len()..width as usize {
            out.push('0');
        }
        out.push_str(&s);
    }
}

/// Bit-vector literal text in binary (`#b`) whatever the width, as cvc5 and yices print
/// values.
pub fn bv_binary(v: &BigUint, width: u32, out: &mut String) {
    let s = v.to_str_radix(2);
    out.push_str("#b");
    for _ in s.len()..width as usize {
        out.push('0');
    }
    out.push_str(&s);
}

/// `bv_literal` of a value that fits in 64 bits, without formatting machinery (it is on the
/// path of every printed KLEE query): zero-padded to the width, never truncated.
pub(crate) fn bv_u64(v: u64, width: u32, out: &mut String) {
    if width.is_multiple_of(4) {
        bv_u64_digits(v, width, "#x", 4, out)
    } else {
        bv_u64_digits(v, width, "#b", 1, out)
    }
}

/// `bv_binary` of a value that fits in 64 bits.
pub(crate) fn bv_u64_binary(v: u64, width: u32, out: &mut String) {
    bv_u64_digits(v, width, "#b", 1, out)
}

/// `v` after `prefix` in digits of `bits` bits (1 or 4), zero-padded to `width` bits.
fn bv_u64_digits(v: u64, width: u32, prefix: &str, bits: u32, out: &mut String) {
    let digits = (width / bits) as usize;
    let used = ((64 - v.leading_zeros()).div_ceil(bits) as usize).max(1);
    out.push_str(prefix);
    for _ in used..digits {
        out.push('0');
    }
    let mask = (1u64 << bits) - 1;
    for k in (0..used).rev() {
        let d = ((v >> (k as u32 * bits)) & mask) as u8;
        out.push(char::from(if d < 10 { b'0' + d } else { b'a' + d - 10 }));
    }
}

/// Print `t` with `let` for shared subterms.
pub fn print_term(store: &TermStore, t: TermId, names: &dyn Names) -> String {
    let mut out = String::new();
    write_term(store, t, names, &mut out);
    out
}

/// Print `t` as a tree, with no `let` (for small terms and values).
pub fn print_tree(store: &TermStore, t: TermId, names: &dyn Names) -> String {
    let mut out = String::new();
    write_tree(store, t, names, &mut out);
    out
}

/// `t` as a tree, with no `let`, appended to `out`.
fn write_tree(store: &TermStore, t: TermId, names: &dyn Names, out: &mut String) {
    let p = Printer {
        store,
        names,
        bound: FxHashMap::default(),
    };
    p.node(t, out);
}

pub fn write_term(store: &TermStore, t: TermId, names: &dyn Names, out: &mut String) {
    if store.args(t).is_empty() {
        // A leaf (a constant, a literal: most get-value answers) has nothing to share.
        return write_tree(store, t, names, out);
    }
    // Count references within the DAG (stopping at quantifiers and defined names).
    let mut refs: FxHashMap<TermId, u32> = FxHashMap::default();
    let mut stack = vec![t];
    let mut order: Vec<TermId> = Vec::new();
    while let Some(x) = stack.pop() {
        let c = refs.entry(x).or_insert(0);
        *c += 1;
        if *c > 1 {
            continue;
        }
        if names.defined(x).is_some() && x != t {
            continue;
        }
        order.push(x);
        if matches!(store.op(x), Op::Forall(_) | Op::Exists(_)) {
            continue;
        }
        stack.extend(store.args(x).iter().copied());
    }
    let mut shared: Vec<TermId> = order
        .into_iter()
        .filter(|&x| {
            x != t && refs[&x] > 1 && !store.args(x).is_empty() && names.defined(x).is_none()
        })
        .collect();
    if shared.is_empty() {
        return write_tree(store, t, names, out);
    }
    shared.sort_unstable();
    // Level of each shared node: 1 + the highest level of a shared node below it.
    let shared_set: FxHashMap<TermId, usize> =
        shared.iter().enumerate().map(|(i, &x)| (x, i)).collect();
    let mut level: FxHashMap<TermId, u32> = FxHashMap::default();
    let mut below: FxHashMap<TermId, u32> = FxHashMap::default();
    // Compute for all nodes reachable (ids are topological: process ascending).
    let mut all: Vec<TermId> = refs.keys().copied().collect();
    all.sort_unstable();
    for &x in &all {
        let mut m = 0;
        if !matches!(store.op(x), Op::Forall(_) | Op::Exists(_)) && names.defined(x).is_none() {
            for a in store.args(x) {
                let l = level
                    .get(a)
                    .copied()
                    .unwrap_or_else(|| below.get(a).copied().unwrap_or(0));
                m = m.max(l);
            }
        }
        if shared_set.contains_key(&x) {
            level.insert(x, m + 1);
        } else {
            below.insert(x, m);
        }
    }
    let mut by_level: Vec<Vec<TermId>> = Vec::new();
    for &x in &shared {
        let l = level[&x] as usize;
        if by_level.len() < l {
            by_level.resize(l, Vec::new());
        }
        by_level[l - 1].push(x);
    }
    let mut p = Printer {
        store,
        names,
        bound: FxHashMap::default(),
    };
    let mut closing = 0;
    let mut n = 0usize;
    for group in &by_level {
        out.push_str("(let (");
        for (i, &x) in group.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let name = format!("sp!l{n}");
            n += 1;
            out.push('(');
            out.push_str(&name);
            out.push(' ');
            p.node(x, out);
            out.push(')');
            p.bound.insert(x, name);
        }
        out.push_str(") ");
        closing += 1;
    }
    p.node(t, out);
    for _ in 0..closing {
        out.push(')');
    }
}

struct Printer<'a> {
    store: &'a TermStore,
    names: &'a dyn Names,
    bound: FxHashMap<TermId, String>,
}

impl Printer<'_> {
    fn node(&self, t: TermId, out: &mut String) {
        let store = self.store;
        let n = store.node(t);
        match n.op {
            Op::True => return out.push_str("true"),
            Op::False => return out.push_str("false"),
            Op::Bv(v) => {
                let w = store.sorts.bv_width(n.sort).unwrap_or(64);
                return if self.names.binary_bv() {
                    bv_u64_binary(v, w, out)
                } else {
                    bv_u64(v, w, out)
                };
            }
            Op::BvWide(l) | Op::Num(l) | Op::Dec(l) | Op::Str(l) => {
                match (n.op, store.get_lit(l)) {
                    (Op::BvWide(_), Lit::Nat(v)) => {
                        let w = store.sorts.bv_width(n.sort).unwrap_or(0);
                        if self.names.binary_bv() {
                            bv_binary(v, w, out)
                        } else {
                            bv_literal(v, w, out)
                        }
                    }
                    (_, Lit::Nat(v)) => out.push_str(&v.to_string()),
                    (_, Lit::Dec(d)) => out.push_str(d),
                    (_, Lit::Str(s)) => string_literal(s, out),
                    (_, Lit::Raw(r)) => out.push_str(r),
                }
                return;
            }
            _ => {}
        }
        if let Some(name) = self.bound.get(&t) {
            return out.push_str(name);
        }
        if let Some(name) = self.names.defined(t) {
            return out.push_str(&quote_symbol(name));
        }
        let args = &n.args;
        if self.names.integer_fractions() {
            let (neg, f) = match (n.op, *args) {
                (Op::Neg, [a]) => (true, fraction(store, *a)),
                _ => (false, fraction(store, t)),
            };
            if let Some((num, den)) = f {
                out.push_str("(/ ");
                if neg {
                    out.push_str("(- ");
                    out.push_str(num);
                    out.push(')');
                } else {
                    out.push_str(num);
                }
                out.push(' ');
                out.push_str(den);
                return out.push(')');
            }
        }
        // The head, for symbols and unmodelled operators (`write_op_head` for the rest).
        let head: Option<Cow<str>> = match n.op {
            Op::Sym(s) => {
                let nm = self.names.sym(store, t, s);
                let q = quote_symbol(&nm).into_owned();
                if args.is_empty() {
                    return out.push_str(&q);
                }
                Some(Cow::Owned(q))
            }
            Op::Other(l) => {
                let h = match store.get_lit(l) {
                    Lit::Raw(r) => r.clone(),
                    _ => String::new(),
                };
                if args.is_empty() {
                    return out.push_str(&h);
                }
                Some(Cow::Owned(h))
            }
            Op::Annot(l) => {
                out.push_str("(! ");
                self.node(args[0], out);
                out.push(' ');
                if let Lit::Raw(r) = store.get_lit(l) {
                    out.push_str(r);
                }
                return out.push(')');
            }
            Op::Forall(b) | Op::Exists(b) => {
                out.push_str(if matches!(n.op, Op::Forall(_)) {
                    "(forall ("
                } else {
                    "(exists ("
                });
                for (i, (s, sort)) in store.binders[b as usize].iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push('(');
                    out.push_str(&quote_symbol(&self.names.sym(store, t, *s)));
                    out.push(' ');
                    store.sorts.print(*sort, out);
                    out.push(')');
                }
                out.push_str(") ");
                write_term(store, args[0], self.names, out);
                return out.push(')');
            }
            Op::ConstArray => {
                out.push_str("((as const ");
                store.sorts.print(n.sort, out);
                out.push_str(") ");
                self.node(args[0], out);
                return out.push(')');
            }
            _ => None,
        };
        out.push('(');
        match head {
            Some(h) => out.push_str(&h),
            None => write_op_head(n.op, out),
        }
        for &a in args.iter() {
            out.push(' ');
            self.node(a, out);
        }
        out.push(')');
    }
}

/// Print a sort (re-exported for convenience).
pub fn print_sort(store: &TermStore, s: crate::term::SortId) -> String {
    store.sorts.to_text(s)
}

/// True when the sort is an array whose values need `(as const ...)` to print.
pub fn is_array(store: &TermStore, s: crate::term::SortId) -> bool {
    matches!(store.sorts.get(s), Sort::Array(..))
}

#[cfg(test)]
mod tests {
    #[test]
    fn push_backend_symbol_is_quote_of_backend_name() {
        use super::{backend_name, push_backend_symbol, quote_symbol};
        for name in [
            "x", "re", "sp!x", "sp!", "let", "_", "!", "a b", "|", "1x", "", "\0c12", "\0l3",
            "\0a b", "\0", "sp!!y", "ü", "x.y", "\0sp!c",
        ] {
            let mut out = String::from("<");
            push_backend_symbol(name, &mut out);
            assert_eq!(
                out,
                format!("<{}", quote_symbol(&backend_name(name))),
                "{name:?}"
            );
        }
    }

    #[test]
    fn bv_u64_is_bv_literal() {
        // (0x123, 4): a value wider than its width prints whole, as bv_literal does.
        for &(v, w) in &[
            (0u64, 1u32),
            (1, 1),
            (0, 8),
            (0xAB, 8),
            (5, 3),
            (0x1F, 12),
            (u64::MAX, 64),
            (1 << 63, 64),
            (6, 63),
            (0x123, 4),
        ] {
            let (mut a, mut b) = (String::new(), String::new());
            super::bv_u64(v, w, &mut a);
            super::bv_literal(&num_bigint::BigUint::from(v), w, &mut b);
            assert_eq!(a, b, "{v} width {w}");
            let (mut a, mut b) = (String::new(), String::new());
            super::bv_u64_binary(v, w, &mut a);
            super::bv_binary(&num_bigint::BigUint::from(v), w, &mut b);
            assert_eq!(a, b, "{v} width {w}, binary");
            let bits = a.strip_prefix("#b").expect("binary");
            assert!(bits.len() >= w as usize && bits.bytes().all(|c| c == b'0' || c == b'1'));
            assert_eq!(u64::from_str_radix(bits, 2), Ok(v), "{a}");
        }
    }
}
