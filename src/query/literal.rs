//! A value read straight from its literal text, for the models the result store keeps
//! (one value per line, as `Value::to_term` prints them): Bool and bit-vector literals, and
//! arrays of those as a `store` chain over a constant array,
//! `(store (store ((as const (Array I E)) d) i1 e1) i2 e2)`. Nothing is interned in the
//! term store, and a chain of any length is read without recursion.
//!
//! Invariant: `parse` returns either `None` (the text is not of that form, or not of the
//! sort asked: the caller parses it as a term instead, `Value::from_term`) or the value
//! `Value::from_term` gives for the same text and sort. A unit test compares the two on
//! random values.

use super::value::{ArrayVal, Value};
use crate::term::{Sort, SortId, SortStore};

/// The value of sort `sort` that `text` writes, or `None` when it is not one of the forms
/// above (see the module doc).
pub fn parse(text: &str, sort: SortId, sorts: &SortStore) -> Option<Value> {
    let mut r = Reader {
        b: text.trim().as_bytes(),
        pos: 0,
    };
    let v = r.value(sort, sorts)?;
    (r.pos == r.b.len()).then_some(v)
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.b.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    /// `s` next (after blanks), consumed.
    fn eat(&mut self, s: &str) -> Option<()> {
        self.ws();
        self.b[self.pos..]
            .starts_with(s.as_bytes())
            .then(|| self.pos += s.len())
    }

    fn value(&mut self, sort: SortId, sorts: &SortStore) -> Option<Value> {
        match sorts.get(sort) {
            Sort::Array(i, e) => self.array(sort, (*i, *e), sorts),
            _ => self.scalar(sort, sorts),
        }
    }

    /// A Bool or bit-vector literal of sort `sort`.
    fn scalar(&mut self, sort: SortId, sorts: &SortStore) -> Option<Value> {
        self.ws();
        let rest = &self.b[self.pos..];
        let end = rest
            .iter()
            .position(|c| c.is_ascii_whitespace() || *c == b')' || *c == b'(')
            .unwrap_or(rest.len());
        let word = std::str::from_utf8(&rest[..end]).ok()?;
        let v = match sorts.get(sort) {
            Sort::Bool => match word {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return None,
            },
            Sort::BitVec(w) => {
                let w = *w;
                if word.is_empty() {
                    // `(_ bvN w)`
                    self.eat("(")?;
                    self.eat("_")?;
                    self.ws();
                    let rest = &self.b[self.pos..];
                    let n = rest.iter().position(|c| !c.is_ascii_alphanumeric())?;
                    let digits = std::str::from_utf8(&rest[..n]).ok()?.strip_prefix("bv")?;
                    self.pos += n;
                    self.ws();
                    let rest = &self.b[self.pos..];
                    let m = rest.iter().position(|c| !c.is_ascii_digit())?;
                    let width: u32 = std::str::from_utf8(&rest[..m]).ok()?.parse().ok()?;
                    self.pos += m;
                    self.eat(")")?;
                    let x: u64 = digits.parse().ok()?;
                    return (width == w && w <= 64 && x <= super::value::mask64(w))
                        .then(|| Value::bv_u64(w, x));
                }
                let (radix, bits, digits) = if let Some(h) = word.strip_prefix("#x") {
                    (16, 4, h)
                } else if let Some(b) = word.strip_prefix("#b") {
                    (2, 1, b)
                } else {
                    return None;
                };
                if w > 64 || digits.is_empty() || digits.len() as u32 * bits != w {
                    return None;
                }
                Value::bv_u64(w, u64::from_str_radix(digits, radix).ok()?)
            }
            _ => return None,
        };
        self.pos += end;
        Some(v)
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
            self.ws();
            let rest = &self.b[self.pos..];
            if rest.starts_with(b"(store")
                && rest
                    .get(6)
                    .is_some_and(|c| c.is_ascii_whitespace() || *c == b'(')
            {
                self.pos += 6;
                stores += 1;
            } else {
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
        ] {
            let got = parse(text, sort, &store.sorts);
            match text {
                "(_ bv5 8)" | "#x05" => assert_eq!(got, Some(Value::bv_u64(8, 5)), "{text}"),
                _ => assert_eq!(got, None, "{text}"),
            }
        }
    }
}
