//! The lexical rules of SMT-LIB v2.6, as small functions over bytes, for every place that
//! scans SMT-LIB text: the framing of the client's commands (`reader`), the framing of a
//! solver's answers (`crate::driver::reader`), tokens and s-expressions (`lexer`), the
//! one-pass parser (`fast`), and the values the result store keeps
//! (`crate::query::literal`). It uses nothing else in the crate but the spelling of simple
//! symbols (`crate::term::symbol`, itself a leaf).
//!
//! The rules:
//! * white space is space, tab, line feed, carriage return, and (as z3 takes them) vertical
//!   tab and form feed;
//! * a comment runs from `;` to the end of its line, a line feed (`\r\n` ends a line as `\n`
//!   does; a lone `\r` does not, as in z3 and cvc5);
//! * a string literal runs from `"` to the next `"` that is not doubled (`""` stands for one
//!   `"`); everything else, `;`, `|`, parentheses and line breaks included, is its content;
//! * a quoted symbol runs from `|` to the next `|`; `\` may not occur in one, and a `\` ends
//!   a malformed quoted symbol (the lexer reports it; the framers go on after it, as z3
//!   does, so that a stray `|` cannot swallow the rest of a session);
//! * a simple token (symbol, numeral, decimal, `#x`/`#b` literal, keyword) is a run of the
//!   bytes of its class; it must end at a delimiter: white space, `(`, `)`, `;`, `"`, `|`, or
//!   the end of the text;
//! * parentheses nest, and do not count inside string literals, quoted symbols and comments.
//!
//! Invariants: every function takes any bytes (UTF-8 or not) without panicking; a position
//! returned is within the slice (or its length) and, unless it is the length, at one of the
//! ASCII bytes the rules stop at, so slicing a `str` there is slicing on a char boundary.
//! [`Balance`] and [`skip_space_from`] are incremental: scanning a text in pieces finds
//! what scanning it whole finds.

pub use crate::term::symbol::{is_symbol_byte, symbol_len};

/// The kinds of atoms.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tok {
    Numeral,
    Decimal,
    Hex,
    Binary,
    /// A string literal; its text is the raw text with the quotes (see `unescape_string`).
    Str,
    Symbol,
    /// `|quoted|`; its text is the content without the bars.
    Quoted,
    Keyword,
}

/// White space.
#[inline]
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The bytes a simple token ends at (white space, `(`, `)`, `;`, `"`, `|`).
const DELIMITER: [bool; 256] = {
    let mut t = [false; 256];
    let d = b" \t\n\r\x0b\x0c();\"|";
    let mut i = 0;
    while i < d.len() {
        t[d[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether a simple token ends before `b`.
#[inline]
pub fn is_delimiter(b: u8) -> bool {
    DELIMITER[b as usize]
}

/// Whether a simple token ending before `next` (None: the end of the text) ends properly.
#[inline]
pub fn ends_token(next: Option<&u8>) -> bool {
    next.is_none_or(|&c| is_delimiter(c))
}

/// Where the comment that `b[i]` is in (or starts) ends: the index of the line feed that
/// ends it, or `b.len()` if it goes on past `b`.
#[inline]
pub fn comment_end(b: &[u8], i: usize) -> usize {
    let i = i.min(b.len());
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |n| i + n)
}

/// The first byte at or after `i` that is neither white space nor in a comment (`b.len()`
/// if there is none).
#[inline(always)]
pub fn skip_space(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if is_space(c) {
            i += 1;
        } else if c == b';' {
            i = skip_comment(b, i);
        } else {
            return i;
        }
    }
    i.min(b.len())
}

/// `comment_end`, out of line: inside commands, where the parsers skip space between
/// every two tokens, comments are rare.
#[cold]
#[inline(never)]
fn skip_comment(b: &[u8], i: usize) -> usize {
    comment_end(b, i)
}

/// [`skip_space`] for a text that arrives in pieces: from `i`, inside a comment if
/// `in_comment`. Returns where it stopped and whether that is inside a comment (which can
/// only be at the end of `b`).
#[inline]
pub fn skip_space_from(b: &[u8], i: usize, in_comment: bool) -> (usize, bool) {
    let mut i = i;
    if in_comment {
        i = comment_end(b, i);
        if i == b.len() {
            return (i, true);
        }
    }
    loop {
        while b.get(i).is_some_and(|&c| is_space(c)) {
            i += 1;
        }
        if b.get(i) != Some(&b';') {
            return (i.min(b.len()), false);
        }
        i = comment_end(b, i);
        if i == b.len() {
            return (i, true);
        }
    }
}

/// `s` after its leading white space and comments.
pub fn skip_ws_comments(s: &str) -> &str {
    &s[skip_space(s.as_bytes(), 0)..]
}

/// The length of the run of ASCII digits at the start of `b`.
#[inline]
pub fn digits_len(b: &[u8]) -> usize {
    b.iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(b.len())
}

/// The simple token at the start of `b`, as its kind and length: a numeral, a decimal
/// (`1.50`; numerals with leading zeros are taken, as z3 does), `#x` with hexadecimal
/// digits, `#b` with binary digits, `:` with symbol bytes, or a run of symbol bytes that
/// does not start with a digit. None when `b` does not start with one (a delimiter, a `#`
/// or `:` alone, a byte of no token). Whether the token ends at a delimiter is the caller's
/// to check (`ends_token`).
#[inline]
pub fn token(b: &[u8]) -> Option<(Tok, usize)> {
    let &c = b.first()?;
    if c.is_ascii_digit() {
        let n = digits_len(b);
        if b.get(n) == Some(&b'.') {
            let m = digits_len(&b[n + 1..]);
            if m > 0 {
                return Some((Tok::Decimal, n + 1 + m));
            }
        }
        return Some((Tok::Numeral, n));
    }
    let (tok, skip, n) = match c {
        b'#' => {
            let (tok, digit): (Tok, fn(&u8) -> bool) = match b.get(1)? {
                b'x' => (Tok::Hex, u8::is_ascii_hexdigit),
                b'b' => (Tok::Binary, |c| *c == b'0' || *c == b'1'),
                _ => return None,
            };
            let rest = &b[2..];
            (
                tok,
                2,
                rest.iter().position(|c| !digit(c)).unwrap_or(rest.len()),
            )
        }
        b':' => (Tok::Keyword, 1, symbol_len(&b[1..])),
        _ => (Tok::Symbol, 0, symbol_len(b)),
    };
    (n > 0).then_some((tok, skip + n))
}

/// The first delimiter at or after `i` (`b.len()` if none): where a simple token (or
/// anything that is not one, up to the next delimiter) starting at `i` ends.
#[inline]
pub fn token_end(b: &[u8], i: usize) -> usize {
    let i = i.min(b.len());
    b[i..]
        .iter()
        .position(|&c| is_delimiter(c))
        .map_or(b.len(), |n| i + n)
}

/// The leading symbol of a command text, `head` in `( head ...`, white space and comments
/// skipped before and after the `(`: the text up to the next delimiter (a quoted head is
/// none: None).
pub fn command_head(text: &str) -> Option<&str> {
    command_parts(text).map(|(head, _)| head)
}

/// The command's name and the offset of what follows it past white space and comments
/// (its first argument, the symbol a declaration declares).
pub fn command_parts(text: &str) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    let i = skip_space(b, 0);
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let i = skip_space(b, i + 1);
    let end = token_end(b, i);
    (end > i).then(|| (&text[i..end], skip_space(b, end)))
}

/// Inside a string literal, from `i`: the next `"` (it closes the literal unless another
/// `"` follows it, the pair standing for one `"`).
#[inline]
pub fn string_quote(b: &[u8], i: usize) -> Option<usize> {
    let i = i.min(b.len());
    b[i..].iter().position(|&c| c == b'"').map(|n| i + n)
}

/// The end (the index after its closing quote) of the string literal whose opening quote
/// is `b[i]`, or None if `b` ends first.
pub fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let q = string_quote(b, j)?;
        if b.get(q + 1) == Some(&b'"') {
            j = q + 2;
        } else {
            return Some(q + 1);
        }
    }
}

/// The content of a string literal's raw text (`"a""b"` -> `a"b`).
pub fn unescape_string(raw: &str) -> String {
    let inner = raw
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(raw);
    inner.replace("\"\"", "\"")
}

/// The string literal at the start of `s` (after white space and comments): its content and
/// the rest of `s` after it; None if there is none or it is not terminated.
pub fn parse_string_literal(s: &str) -> Option<(String, &str)> {
    let b = s.as_bytes();
    let i = skip_space(b, 0);
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let end = string_end(b, i)?;
    Some((unescape_string(&s[i..end]), &s[end..]))
}

/// `s` as the content of a string literal: every `"` doubled.
pub fn string_body(s: &str, out: &mut String) {
    let mut rest = s;
    while let Some(i) = rest.find('"') {
        out.push_str(&rest[..=i]);
        out.push('"');
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

/// `s` as a string literal: in double quotes, every `"` doubled.
pub fn string_literal(s: &str, out: &mut String) {
    out.push('"');
    string_body(s, out);
    out.push('"');
}

/// [`string_literal`] as a new string.
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    string_literal(s, &mut out);
    out
}

/// Inside a quoted symbol, from `i`: the byte that ends it, the closing `|` or a `\` (which
/// may not occur in a quoted symbol and ends a malformed one); None if `b` ends first.
#[inline]
pub fn quoted_stop(b: &[u8], i: usize) -> Option<usize> {
    let i = i.min(b.len());
    b[i..]
        .iter()
        .position(|&c| c == b'|' || c == b'\\')
        .map(|n| i + n)
}

/// The bytes [`Balance`] stops at outside literals and comments: those that matter to the
/// nesting, and (for `Balance::plain`) line feeds and non-ASCII bytes.
const CODE_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0x80;
    while c < 256 {
        t[c] = true;
        c += 1;
    }
    t[b'(' as usize] = true;
    t[b')' as usize] = true;
    t[b'"' as usize] = true;
    t[b'|' as usize] = true;
    t[b';' as usize] = true;
    t[b'\n' as usize] = true;
    t
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Code,
    Str,
    Quoted,
    Comment,
}

/// Finds where a parenthesised s-expression ends, in a text that may arrive in pieces: the
/// scan keeps its depth and whether it is inside a string literal, quoted symbol or comment
/// from one piece to the next, so every byte is looked at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Balance {
    depth: usize,
    mode: Mode,
    plain: bool,
}

impl Balance {
    /// The scan of an s-expression whose opening `(` has been read.
    pub fn opened() -> Balance {
        Balance {
            depth: 1,
            mode: Mode::Code,
            plain: true,
        }
    }

    /// Parentheses open so far (0 once the s-expression has closed).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Whether the scan stopped inside a string literal, a quoted symbol or a comment.
    pub fn in_literal(&self) -> bool {
        self.mode != Mode::Code
    }

    /// Whether the text scanned so far is one line of ASCII outside any literal or comment
    /// (no line feed, no non-ASCII byte, no string literal, quoted symbol or comment, whose
    /// content is not looked at byte by byte): then its length in bytes is its width in
    /// characters, and a caller that counts lines and columns need not look at it again.
    pub fn plain(&self) -> bool {
        self.plain
    }

    /// Scan `b`, the bytes after those already scanned: `Some(n)` when the s-expression
    /// closes with `b[n - 1]`, None when it goes on past `b`.
    #[inline]
    pub fn scan(&mut self, b: &[u8]) -> Option<usize> {
        let mut i = 0;
        loop {
            match self.mode {
                Mode::Code => {
                    // The depth in a local (a register) in the loop over the bytes.
                    let mut depth = self.depth;
                    let mut next = Mode::Code;
                    while let Some(&c) = b.get(i) {
                        i += 1;
                        if !CODE_STOP[c as usize] {
                            continue;
                        }
                        if c == b'(' {
                            depth += 1;
                        } else if c == b')' {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        } else if c == b'"' {
                            next = Mode::Str;
                            break;
                        } else if c == b'|' {
                            next = Mode::Quoted;
                            break;
                        } else if c == b';' {
                            next = Mode::Comment;
                            break;
                        } else {
                            // A line feed or a non-ASCII byte.
                            self.plain = false;
                        }
                    }
                    self.depth = depth;
                    if depth == 0 {
                        return Some(i);
                    }
                    if next == Mode::Code {
                        return None;
                    }
                    self.mode = next;
                }
                // A `""` in a string closes it and opens it again at once.
                Mode::Str => {
                    self.plain = false;
                    i = string_quote(b, i)? + 1;
                    self.mode = Mode::Code;
                }
                Mode::Quoted => {
                    self.plain = false;
                    i = quoted_stop(b, i)? + 1;
                    self.mode = Mode::Code;
                }
                Mode::Comment => {
                    self.plain = false;
                    i = comment_end(b, i);
                    if i == b.len() {
                        return None;
                    }
                    self.mode = Mode::Code;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_and_comments() {
        let b = b" \t\r\n\x0b\x0c; \"a |b (\n x";
        assert_eq!(skip_space(b, 0), b.len() - 1);
        assert_eq!(skip_space(b"x", 0), 0);
        assert_eq!(skip_space(b"", 0), 0);
        assert_eq!(skip_space(b"  ; no end", 0), 10);
        assert_eq!(skip_space(b"ab", 5), 2);
        // CRLF ends a comment line; a lone CR does not.
        assert_eq!(skip_space(b";c\r\nx", 0), 4);
        assert_eq!(skip_space(b";c\rx\ny", 0), 5);
        // Non-ASCII white space is not white space.
        assert_eq!(skip_space("\u{a0}x".as_bytes(), 0), 0);
        assert_eq!(skip_ws_comments(" ;a\n ;b\n(x"), "(x");
        // In pieces.
        assert_eq!(skip_space_from(b" ; a", 0, false), (4, true));
        assert_eq!(skip_space_from(b"a\n x", 0, true), (3, false));
        assert_eq!(skip_space_from(b"a b", 0, true), (3, true));
        assert_eq!(skip_space_from(b"  ", 0, false), (2, false));
        assert_eq!(skip_space_from(b";\n;\n(", 0, false), (4, false));
    }

    #[test]
    fn tokens() {
        let t = |s: &str| token(s.as_bytes());
        assert_eq!(t("abc def"), Some((Tok::Symbol, 3)));
        assert_eq!(t("a|b|"), Some((Tok::Symbol, 1)));
        assert_eq!(t("12)"), Some((Tok::Numeral, 2)));
        assert_eq!(t("007"), Some((Tok::Numeral, 3)));
        assert_eq!(t("1.50 "), Some((Tok::Decimal, 4)));
        assert_eq!(t("1."), Some((Tok::Numeral, 1)));
        assert_eq!(t("1.x"), Some((Tok::Numeral, 1)));
        assert_eq!(t("#x0fG"), Some((Tok::Hex, 4)));
        assert_eq!(t("#b012"), Some((Tok::Binary, 4)));
        assert_eq!(t(":named x"), Some((Tok::Keyword, 6)));
        for none in [
            "", "#x", "#b2", "#o1", "#", ":", ": x", "(", "|a|", "\"", "\u{e9}", "\\",
        ] {
            assert_eq!(t(none), None, "{none:?}");
        }
        assert!(ends_token(None) && ends_token(Some(&b'|')) && ends_token(Some(&b'"')));
        assert!(!ends_token(Some(&b'.')) && !ends_token(Some(&0xc2)));
        assert_eq!(token_end(b"ab;c", 0), 2);
        assert_eq!(token_end(b"ab|c|", 1), 2);
        assert_eq!(token_end(b"abc", 1), 3);
    }

    #[test]
    fn heads() {
        assert_eq!(command_head("  ; c\n ( echo \"x\")"), Some("echo"));
        assert_eq!(command_head("(check-sat)"), Some("check-sat"));
        assert_eq!(command_head("(assert(= a b))"), Some("assert"));
        assert_eq!(command_head("(\r\n;(x\r\nexit)"), Some("exit"));
        assert_eq!(command_head("(get-value ((x)))"), Some("get-value"));
        assert_eq!(command_head("(push|x|)"), Some("push"));
        assert_eq!(command_head("check-sat"), None);
        assert_eq!(command_head("(|check-sat|)"), None);
        assert_eq!(command_head("( )"), None);
        assert_eq!(command_head(""), None);
    }

    #[test]
    fn string_literals() {
        let b = br#""a""b" x"#;
        assert_eq!(string_end(b, 0), Some(6));
        assert_eq!(string_end(br#""""#, 0), Some(2));
        assert_eq!(string_end(br#""""""#, 0), Some(4));
        assert_eq!(string_end(br#""a;b|c(\""#, 0), Some(9));
        assert_eq!(string_end(br#""abc"#, 0), None);
        assert_eq!(
            string_end(br#""a"""#, 0),
            None,
            "a doubled quote at the end"
        );
        assert_eq!(unescape_string(r#""a""b""#), "a\"b");
        assert_eq!(
            parse_string_literal(" ;c\n \"a\"\"b\" rest"),
            Some(("a\"b".to_string(), " rest"))
        );
        assert_eq!(parse_string_literal("\"abc"), None);
        assert_eq!(parse_string_literal("x \"abc\""), None);
        assert_eq!(quote_string("a\"b"), "\"a\"\"b\"");
        for s in ["", "\"", "a\"\"b", "\u{e9}\"\n;|"] {
            let q = quote_string(s);
            assert_eq!(string_end(q.as_bytes(), 0), Some(q.len()), "{q}");
            assert_eq!(unescape_string(&q), s);
        }
    }

    #[test]
    fn quoted_symbols() {
        assert_eq!(quoted_stop(b"|a;b| c", 1), Some(4));
        assert_eq!(quoted_stop(b"|a\"b(|", 1), Some(5));
        assert_eq!(quoted_stop(b"|a\\|b|", 1), Some(2));
        assert_eq!(quoted_stop(b"|abc", 1), None);
        assert_eq!(quoted_stop(b"|", 1), None);
        assert_eq!(quoted_stop(b"", 3), None);
    }

    /// Where a command closes, scanned whole and split at every point.
    fn ends(text: &str) -> Option<usize> {
        let b = text.as_bytes();
        assert_eq!(b[0], b'(');
        let whole = Balance::opened().scan(&b[1..]).map(|n| n + 1);
        for cut in 1..b.len() {
            let mut s = Balance::opened();
            let split = match s.scan(&b[1..cut]) {
                Some(n) => Some(n + 1),
                None => s.scan(&b[cut..]).map(|n| n + cut),
            };
            assert_eq!(split, whole, "{text:?} cut at {cut}");
        }
        // Byte by byte.
        let mut s = Balance::opened();
        let bytewise = (1..b.len())
            .find(|&i| s.scan(&b[i..=i]).is_some())
            .map(|i| i + 1);
        assert_eq!(bytewise, whole, "{text:?} byte by byte");
        whole
    }

    #[test]
    fn balanced_ends() {
        assert_eq!(ends("(a (b) c) (d)"), Some(9));
        assert_eq!(ends("(a |b)(;| c) x"), Some(12));
        assert_eq!(ends("(a \"b)\"\")\" c)"), Some(13));
        assert_eq!(ends("(a ; b) \"| \n c)"), Some(15));
        assert_eq!(ends("(a ;) \r\n)"), Some(9));
        assert_eq!(ends("(a ;) \r)\n)"), Some(10));
        // A backslash ends a (malformed) quoted symbol.
        assert_eq!(ends("(|\\|#a\\|\\|| () Bool)"), Some(20));
        assert_eq!(ends("(|a\\) b|"), Some(5));
        assert_eq!(ends("(\"\u{e9})\")"), Some(7));
        // Not closed: unbalanced, or an unterminated literal or comment at the end.
        for open in ["(a (b)", "(a \"b)", "(a |b)", "(a ; b)", "(a \"b\"\")"] {
            assert_eq!(ends(open), None, "{open}");
        }
        let mut s = Balance::opened();
        assert_eq!(s.scan(b"a \"b)"), None);
        assert!(s.in_literal());
        assert_eq!(s.scan(b"\" (c"), None);
        assert!(!s.in_literal());
        assert_eq!(s.depth(), 2);
        assert_eq!(s.scan(b"))"), Some(2));
        assert_eq!(s.depth(), 0);
        // Plain: one line of ASCII, no literal or comment.
        for (text, plain) in [
            ("(a (b c) #x0f)", true),
            ("(a\n)", false),
            ("(a \u{e9})", false),
            ("(a \"b\")", false),
            ("(a |b|)", false),
            ("(a ;b\n)", false),
        ] {
            let mut s = Balance::opened();
            assert!(s.scan(&text.as_bytes()[1..]).is_some(), "{text}");
            assert_eq!(s.plain(), plain, "{text}");
        }
    }

    #[test]
    fn deep_nesting() {
        let n = 1_000_000;
        let text = format!("{}x{}", "(".repeat(n), ")".repeat(n));
        let b = text.as_bytes();
        let mut s = Balance::opened();
        assert_eq!(s.scan(&b[1..]), Some(b.len() - 1));
        let mut s = Balance::opened();
        assert_eq!(s.scan(&b[1..b.len() - 1]), None);
        assert_eq!(s.depth(), 1);
    }

    /// Any bytes: no panic, positions in range and at the bytes the rules stop at.
    #[test]
    fn any_bytes() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let alphabet = b"()\"|;\\ \n\rax#:0.\xc3\xa9";
        for len in 0..300 {
            let b: Vec<u8> = (0..len)
                .map(|_| alphabet[(crate::test_rng::xorshift(&mut state) % 17) as usize])
                .collect();
            for i in 0..=b.len() + 1 {
                let s = skip_space(&b, i);
                assert!(s <= b.len());
                assert!(s == b.len() || s >= i && !is_space(b[s]) && b[s] != b';');
                let e = token_end(&b, i);
                assert!(e == b.len() || is_delimiter(b[e]));
                if let Some(q) = quoted_stop(&b, i) {
                    assert!(matches!(b[q], b'|' | b'\\'));
                }
                if let Some((_, n)) = token(&b[i.min(b.len())..]) {
                    assert!(i + n <= b.len());
                }
            }
            if b.first() == Some(&b'(') {
                if let Some(n) = Balance::opened().scan(&b[1..]) {
                    assert_eq!(b[n], b')');
                }
            }
        }
    }
}
