//! How a name is spelled as an SMT-LIB symbol: which bytes a simple symbol is made of, and
//! when a name must be written `|quoted|`. A leaf (it uses nothing else in the crate): the
//! term store needs it to write sort names (`SortStore`), the reader of SMT-LIB
//! (`crate::smt2::lex`) to scan simple symbols, and the printer to write every name, so the
//! rule is in one place below both.
//!
//! Invariants: `quote_symbol(n)` is `n` itself exactly when `n` is a simple symbol that is
//! not a reserved word (so it reads back as the symbol `n`); otherwise it is `|n|`.
//! `symbol_len` stops at the first byte that is not in `SYMBOL_BYTE`, which holds ASCII
//! bytes only, so a run it measures is ASCII and ends on a character boundary.

use std::borrow::Cow;

/// The bytes of simple symbols, as a table (this is on the hot path of every token): ASCII
/// letters and digits and `~ ! @ $ % ^ & * _ - + = < > . ? /`.
pub const SYMBOL_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 128 {
        t[c] = (c as u8).is_ascii_alphanumeric();
        c += 1;
    }
    let extra = b"~!@$%^&*_-+=<>.?/";
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether `b` may occur in a simple symbol.
#[inline]
pub fn is_symbol_byte(b: u8) -> bool {
    SYMBOL_BYTE[b as usize]
}

/// Length of the run of simple-symbol bytes at the start of `b` (all ASCII).
#[inline]
pub fn symbol_len(b: &[u8]) -> usize {
    b.iter()
        .position(|&c| !SYMBOL_BYTE[c as usize])
        .unwrap_or(b.len())
}

/// Whether `name` is a simple symbol: non-empty, of simple-symbol bytes, not starting with a
/// digit. (Reserved words are simple symbols too; `quote_symbol` quotes them.)
pub fn is_simple_symbol(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && !b[0].is_ascii_digit() && symbol_len(b) == b.len()
}

/// The reserved words that `quote_symbol` writes quoted, so that a name never reads back as
/// syntax.
pub const RESERVED: [&str; 8] = ["let", "forall", "exists", "match", "par", "as", "_", "!"];

/// A symbol as SMT-LIB text: bare when it can be, `|quoted|` otherwise.
pub fn quote_symbol(name: &str) -> Cow<'_, str> {
    if is_simple_symbol(name) && !RESERVED.contains(&name) {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!("|{name}|"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_and_quoted() {
        for n in ["x", "a.b", "+", "<=", "?B1", "sp!c3", "~!@$%^&*_-+=<>.?/"] {
            assert!(is_simple_symbol(n), "{n}");
            assert_eq!(quote_symbol(n), n);
        }
        for (n, q) in [
            ("", "||"),
            ("1x", "|1x|"),
            ("a b", "|a b|"),
            ("\u{e9}", "|\u{e9}|"),
            ("a;b", "|a;b|"),
            ("let", "|let|"),
            ("_", "|_|"),
            ("!", "|!|"),
        ] {
            assert_eq!(quote_symbol(n), q, "{n:?}");
        }
        assert_eq!(symbol_len(b"ab(c"), 2);
        assert_eq!(symbol_len("x\u{e9}".as_bytes()), 1);
        assert_eq!(symbol_len(b""), 0);
    }
}
