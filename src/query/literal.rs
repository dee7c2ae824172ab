//! A value read straight from its literal text, for the models the result store keeps
//! (one value per line, as `Value::to_term` prints them): Bool and bit-vector literals, and
//! arrays of those as a `store` chain over a constant array,
//! `(store (store ((as const (Array I E)) d) i1 e1) i2 e2)`. Nothing is interned in the
//! term store, and a chain of any length is read without recursion.
//!
//! The text is scanned by the lexical rules of `crate::smt2::lex` (white space and comments
//! between tokens, tokens ending at delimiters), as the term path scans it.
//!
//! `write` is the other way: a value of those forms as text, exactly as `Value::to_term`
//! and the backend printer write it, without interning the term first.
//!
//! Invariants: `parse` returns either `None` (the text is not of that form, or not of the
//! sort asked: the caller parses it as a term instead, `Value::from_term`) or the value
//! `Value::from_term` gives for the same text and sort. `write` writes either nothing and
//! says so (the caller prints the term, `Value::to_term`) or the very text printing that
//! term gives. Unit tests compare each with the term path on random values.

use super::value::{ArrayVal, BvVal, Value};
use crate::smt2::lex::{self, Tok};
use crate::smt2::printer::bv_u64;
use crate::term::{Sort, SortId, SortStore};

/// Append `v`, of sort `sort`, to `out` as `print_term(v.to_term(sort))` with the backend's
/// names writes it, when it is one of the forms `parse` reads (a Bool, a bit-vector of 1
/// to 64 bits, an array of those of sort `sort`); false, with nothing written, otherwise.
pub fn write(v: &Value, sort: SortId, sorts: &SortStore, out: &mut String) -> bool {
    match (v, sorts.get(sort)) {
        (Value::Array(a), Sort::Array(i, e)) => {
            let (i, e) = (*i, *e);
            let scalars = std::iter::once((a.default_value(), e))
                .chain(a.entries().iter().flat_map(|(k, x)| [(k, i), (x, e)]))
                .all(|(x, s)| writable_scalar(x, s, sorts));
            // `to_term` prints the array under `sort` only where it conforms to it.
            if !scalars || v.conform(sorts, sort).is_none() {
                return false;
            }
            for _ in 0..a.entries().len() {
                out.push_str("(store ");
            }
            out.push_str("((as const ");
            out.push_str(sorts.text(sort));
            out.push_str(") ");
            write_scalar(a.default_value(), out);
            out.push(')');
            for (k, x) in a.entries() {
                out.push(' ');
                write_scalar(k, out);
                out.push(' ');
                write_scalar(x, out);
                out.push(')');
            }
            true
        }
        _ if writable_scalar(v, sort, sorts) => {
            write_scalar(v, out);
            true
        }
        _ => false,
    }
}

/// A Bool, or a bit-vector of 1 to 64 bits, of sort `sort`.
fn writable_scalar(v: &Value, sort: SortId, sorts: &SortStore) -> bool {
    match (v, sorts.get(sort)) {
        (Value::Bool(_), Sort::Bool) => true,
        (
            Value::Bv {
                width,
                v: BvVal::Small(_),
            },
            Sort::BitVec(w),
        ) => width == w && (1..=64).contains(w),
        _ => false,
    }
}

/// A value `writable_scalar` allows.
fn write_scalar(v: &Value, out: &mut String) {
    match v {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Bv {
            width,
            v: BvVal::Small(x),
        } => bv_u64(*x, *width, out),
        _ => unreachable!("only values writable_scalar allows are written"),
    }
}

/// The value of sort `sort` that `text` writes, or `None` when it is not one of the forms
/// above (see the module doc).
pub fn parse(text: &str, sort: SortId, sorts: &SortStore) -> Option<Value> {
    let mut r = Reader {
        b: text.as_bytes(),
        pos: 0,
    };
    let v = r.value(sort, sorts)?;
    r.ws();
    (r.pos == r.b.len()).then_some(v)
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        self.pos = lex::skip_space(self.b, self.pos);
    }

    /// `s` next (after blanks), consumed; if it ends with a symbol byte, the token it ends
    /// must end there too.
    fn eat(&mut self, s: &str) -> Option<()> {
        self.ws();
        let end = self.pos + s.len();
        let whole = !s.as_bytes().last().is_some_and(|&c| lex::is_symbol_byte(c))
            || lex::ends_token(self.b.get(end));
        (self.b[self.pos..].starts_with(s.as_bytes()) && whole).then(|| self.pos = end)
    }

    /// The simple token of kind `tok` next (after blanks), consumed.
    fn token(&mut self, tok: Tok) -> Option<&str> {
        self.ws();
        let rest = &self.b[self.pos..];
        let (_, n) = lex::token(rest).filter(|&(t, n)| t == tok && lex::ends_token(rest.get(n)))?;
        self.pos += n;
        std::str::from_utf8(&rest[..n]).ok()
    }

    fn value(&mut self, sort: SortId, sorts: &SortStore) -> Option<Value> {
        match sorts.get(sort) {
            Sort::Array(i, e) => self.array(sort, (*i, *e), sorts),
            _ => self.scalar(sort, sorts),
        }
    }

    /// A Bool or bit-vector literal of sort `sort`.
    fn scalar(&mut self, sort: SortId, sorts: &SortStore) -> Option<Value> {
        match sorts.get(sort) {
            Sort::Bool => match self.token(Tok::Symbol)? {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            Sort::BitVec(w) => {
                let w = *w;
                self.ws();
                if self.b.get(self.pos) == Some(&b'(') {
                    // `(_ bvN w)`
                    self.eat("(")?;
                    self.eat("_")?;
                    let digits = self.token(Tok::Symbol)?.strip_prefix("bv")?;
                    if !digits.bytes().all(|c| c.is_ascii_digit()) {
                        return None;
                    }
                    let x: u64 = digits.parse().ok()?;
                    let width: u32 = self.token(Tok::Numeral)?.parse().ok()?;
                    self.eat(")")?;
                    return (width == w && w <= 64 && x <= super::value::mask64(w))
                        .then(|| Value::bv_u64(w, x));
                }
                let (radix, bits, word) = match self.b.get(self.pos..self.pos + 2)? {
                    b"#x" => (16, 4, self.token(Tok::Hex)?),
                    b"#b" => (2, 1, self.token(Tok::Binary)?),
                    _ => return None,
                };
                let digits = &word[2..];
                if w > 64 || digits.len() as u32 * bits != w {
                    return None;
                }
                Some(Value::bv_u64(w, u64::from_str_radix(digits, radix).ok()?))
            }
            _ => None,
        }
    }

    /// `(store ... ((as const S) d) i e) ... )` of the array sort `sort` (`S` must be its
    /// text), with scalar indices and elements (`scalar` refuses any other).
    fn array(
        &mut self,
        sort: SortId,
        (isort, esort): (SortId, SortId),
        sorts: &SortStore,
    ) -> Option<Value> {
        let mut stores = 0usize;
        loop {
            let at = self.pos;
            if self.eat("(").and_then(|()| self.eat("store")).is_some() {
                stores += 1;
            } else {
                self.pos = at;
                break;
            }
        }
        self.eat("(")?;
        self.eat("(")?;
        self.eat("as")?;
        self.eat("const")?;
        self.eat(sorts.text(sort))?;
        self.eat(")")?;
        let d = self.scalar(esort, sorts)?;
        self.eat(")")?;
        let mut a = ArrayVal::constant(d);
        for _ in 0..stores {
            let i = self.scalar(isort, sorts)?;
            let e = self.scalar(esort, sorts)?;
            self.eat(")")?;
            a.store(i, e);
        }
        if !a.normalise_finite(sorts, isort) {
            return None;
        }
        Some(Value::Array(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt2::parser::parse_term;
    use crate::smt2::printer::{print_term, BackendNames};
    use crate::term::signature::Signature;
    use crate::term::TermStore;

    /// What the term path reads from `text`.
    fn by_term(store: &mut TermStore, text: &str, sort: SortId) -> Option<Value> {
        let t = parse_term(store, &Signature::default(), text).ok()?;
        Value::from_term(store, t).filter(|v| v.has_sort(&store.sorts, sort))
    }

    /// Random values of every kind, each written under its own sort or another one:
    /// `write` writes the text the term path prints, or nothing.
    #[test]
    fn writes_what_the_term_path_prints() {
        use num_bigint::{BigInt, BigUint};
        use num_rational::BigRational;
        let mut store = TermStore::new();
        let widths = [1u32, 3, 8, 32, 64, 65];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| crate::test_rng::xorshift(&mut seed) % n;
        let (mut written, mut arrays) = (0, 0);
        for round in 0..4000 {
            let w = widths[next(widths.len() as u64) as usize];
            let ew = widths[next(widths.len() as u64) as usize];
            let bv = store.sorts.bv(w);
            let ebv = store.sorts.bv(ew);
            let scalar = |k: u64, w: u32, x: u64| match k {
                0 => Value::Bool(x % 2 == 1),
                1 => Value::Int(BigInt::from(x as i64 - 8)),
                2 => Value::Real(BigRational::new(
                    BigInt::from(x as i64 - 8),
                    BigInt::from(3),
                )),
                _ if w > 64 => Value::bv_big(w, BigUint::from(x)),
                _ => Value::bv_u64(w, x),
            };
            let (sort, v) = match next(6) {
                0 => (SortStore::BOOL, Value::Bool(next(2) == 1)),
                1 => (SortStore::INT, scalar(1, 0, next(16))),
                2 => (SortStore::REAL, scalar(next(3), 0, next(16))),
                3 => (bv, scalar(3, w, next(u64::MAX))),
                _ => {
                    // Mostly bit-vector arrays; now and then Int elements, or a sort the
                    // value does not have.
                    let (ek, esort) = match next(8) {
                        0 => (1, SortStore::INT),
                        _ => (3, ebv),
                    };
                    let mut a = ArrayVal::constant(scalar(ek, ew, next(4)));
                    for _ in 0..next(20) {
                        a.store(scalar(3, w, next(16)), scalar(ek, ew, next(4)));
                    }
                    if !a.normalise_finite(&store.sorts, bv) {
                        continue;
                    }
                    arrays += 1;
                    let s = match next(8) {
                        0 => store.sorts.array(SortStore::INT, esort),
                        1 => bv,
                        _ => store.sorts.array(bv, esort),
                    };
                    (s, Value::Array(a))
                }
            };
            let mut text = String::new();
            let t = v.to_term(&mut store, sort);
            let printed = print_term(&store, t, &BackendNames);
            if write(&v, sort, &store.sorts, &mut text) {
                assert_eq!(text, printed, "round {round}");
                written += 1;
            } else {
                assert!(text.is_empty(), "round {round}");
            }
        }
        assert!(
            written > 1500 && arrays > 1000,
            "{written} written, {arrays} arrays"
        );
    }

    /// Random Bool, bit-vector and array values, printed as the store prints them: read
    /// here, they are what the term path reads.
    #[test]
    fn reads_what_the_term_path_reads() {
        let mut store = TermStore::new();
        let widths = [1u32, 3, 8, 32, 64];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| crate::test_rng::xorshift(&mut seed) % n;
        let mut arrays = 0;
        for round in 0..3000 {
            let w = widths[next(widths.len() as u64) as usize];
            let ew = widths[next(widths.len() as u64) as usize];
            let bv = store.sorts.bv(w);
            let ebv = store.sorts.bv(ew);
            let (sort, v) = match next(3) {
                0 => (SortStore::BOOL, Value::Bool(next(2) == 1)),
                1 => (bv, Value::bv_u64(w, next(u64::MAX))),
                _ => {
                    let s = store.sorts.array(bv, ebv);
                    let mut a = ArrayVal::constant(Value::bv_u64(ew, next(4)));
                    for _ in 0..next(20) {
                        a.store(Value::bv_u64(w, next(16)), Value::bv_u64(ew, next(4)));
                    }
                    if !a.normalise_finite(&store.sorts, bv) {
                        continue;
                    }
                    arrays += 1;
                    (s, Value::Array(a))
                }
            };
            let t = v.to_term(&mut store, sort);
            let text = print_term(&store, t, &BackendNames);
            let fast = parse(&text, sort, &store.sorts);
            assert_eq!(fast, Some(v), "round {round}: {text}");
            assert_eq!(
                fast,
                by_term(&mut store, &text, sort),
                "round {round}: {text}"
            );
        }
        assert!(arrays > 500);
        // Other forms and other sorts are left to the term path.
        let b8 = store.sorts.bv(8);
        let b32 = store.sorts.bv(32);
        let a = store.sorts.array(b32, b8);
        for (text, sort) in [
            ("(_ bv5 8)", b8),
            ("#x05", b8),
            ("#x005", b8),
            ("#b101", b8),
            ("5", SortStore::INT),
            ("((as const (Array (_ BitVec 32) (_ BitVec 16))) #x0000)", a),
            (
                "(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000001)",
                a,
            ),
            (
                "(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000001 #x01) x",
                a,
            ),
            ("(_ as-array k!0)", a),
            // Tokens end at delimiters, white space and comments go between them, as in
            // the term path.
            (" ( _ bv5\n8 ) ; five", b8),
            ("#x05;c", b8),
            ("#x+5", b8),
            ("(_ bv+5 8)", b8),
            ("(_bv5 8)", b8),
            ("#x05|a|", b8),
            ("true", SortStore::BOOL),
            ("truex", SortStore::BOOL),
            (
                "( store( (as const (Array (_ BitVec 32) (_ BitVec 8))) #x00)#x00000001 #x01)",
                a,
            ),
            ("((asconst (Array (_ BitVec 32) (_ BitVec 8))) #x00)", a),
        ] {
            let got = parse(text, sort, &store.sorts);
            match text {
                "(_ bv5 8)" | "#x05" | " ( _ bv5\n8 ) ; five" | "#x05;c" => {
                    assert_eq!(got, Some(Value::bv_u64(8, 5)), "{text}")
                }
                "true" => assert_eq!(got, Some(Value::Bool(true))),
                t if t.starts_with("( store") => assert!(got.is_some(), "{text}"),
                _ => assert_eq!(got, None, "{text}"),
            }
            if got.is_some() {
                assert_eq!(got, by_term(&mut store, text, sort), "{text}");
            }
        }
    }
}
