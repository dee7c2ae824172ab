//! Tokens of SMT-LIB v2.6 (nom) and the s-expression tree of one command. The tree is a
//! flat arena built with an explicit stack, so nesting depth costs heap, not call stack,
//! and dropping it is not recursive. Every node records its byte offset in the command
//! text, for error positions.

use crate::term::symbol::SYMBOL_BYTE;
use nom::{
    branch::alt,
    bytes::complete::{tag, take_while1},
    character::complete::{char, digit1},
    combinator::{opt, recognize},
    sequence::{pair, preceded},
    IResult,
};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tok {
    Numeral,
    Decimal,
    Hex,
    Binary,
    /// A string literal; the atom text is the raw text with quotes (unescape with `unescape_string`).
    Str,
    Symbol,
    /// `|quoted|`; the atom text is the content without bars.
    Quoted,
    Keyword,
}

#[derive(Clone, Copy, Debug)]
pub enum SNode {
    Atom {
        tok: Tok,
        start: u32,
        end: u32,
    },
    /// Children are `kids[first..first+len]`.
    List {
        first: u32,
        len: u32,
        start: u32,
        end: u32,
    },
}

/// The parsed s-expressions of one command text.
pub struct Sexps<'a> {
    pub text: &'a str,
    pub nodes: Vec<SNode>,
    pub kids: Vec<u32>,
    pub roots: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub offset: usize,
    pub msg: String,
}

/// A character of simple symbols (`term::symbol::SYMBOL_BYTE`; on the hot path of every
/// token).
fn is_simple_sym_char(c: char) -> bool {
    (c as u32) < 128 && SYMBOL_BYTE[c as usize]
}

/// Length of the run of simple-symbol bytes at the start of `b` (all ASCII).
#[inline]
pub(super) fn sym_run(b: &[u8]) -> usize {
    b.iter()
        .position(|&c| !SYMBOL_BYTE[c as usize])
        .unwrap_or(b.len())
}

fn token<'a>(i: &'a str) -> IResult<&'a str, (Tok, &'a str)> {
    // Dispatch on the first byte, then recognise the token of that class (simple symbols
    // and plain numerals, most of every command, by a byte loop; the rest with nom).
    let b = i.as_bytes();
    match b.first() {
        Some(c) if !c.is_ascii_digit() && *c != b'#' && *c != b':' => {
            let n = sym_run(b);
            if n > 0 {
                return Ok((&i[n..], (Tok::Symbol, &i[..n])));
            }
        }
        Some(c) if c.is_ascii_digit() => {
            let n = b
                .iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(b.len());
            if b.get(n) != Some(&b'.') {
                return Ok((&i[n..], (Tok::Numeral, &i[..n])));
            }
        }
        _ => {}
    }
    match b.first() {
        Some(c) if c.is_ascii_digit() => {
            let (r, s) = recognize(pair(digit1, opt(pair(char('.'), digit1))))(i)?;
            // Numerals with leading zeros are accepted leniently, as z3 does.
            Ok((
                r,
                (
                    if s.contains('.') {
                        Tok::Decimal
                    } else {
                        Tok::Numeral
                    },
                    s,
                ),
            ))
        }
        Some(b'#') => alt((
            |i: &'a str| -> IResult<&'a str, (Tok, &'a str)> {
                let (r, s) = recognize(preceded(
                    tag("#x"),
                    take_while1(|c: char| c.is_ascii_hexdigit()),
                ))(i)?;
                Ok((r, (Tok::Hex, s)))
            },
            |i: &'a str| -> IResult<&'a str, (Tok, &'a str)> {
                let (r, s) = recognize(preceded(
                    tag("#b"),
                    take_while1(|c: char| c == '0' || c == '1'),
                ))(i)?;
                Ok((r, (Tok::Binary, s)))
            },
        ))(i),
        Some(b':') => {
            let (r, s) = recognize(preceded(char(':'), take_while1(is_simple_sym_char)))(i)?;
            Ok((r, (Tok::Keyword, s)))
        }
        _ => {
            let (r, s) = take_while1(is_simple_sym_char)(i)?;
            Ok((r, (Tok::Symbol, s)))
        }
    }
}

/// Skip white space and comments.
pub(super) fn skip_ws(text: &str, mut pos: usize) -> usize {
    let b = text.as_bytes();
    while pos < b.len() {
        match b[pos] {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => pos += 1,
            b';' => {
                while pos < b.len() && b[pos] != b'\n' {
                    pos += 1;
                }
            }
            _ => break,
        }
    }
    pos
}

impl<'a> Sexps<'a> {
    /// Parse all s-expressions in `text`.
    pub fn parse(text: &'a str) -> Result<Sexps<'a>, LexError> {
        // About one node per 6 bytes of KLEE text: sized once rather than grown.
        let mut s = Sexps {
            text,
            nodes: Vec::with_capacity(text.len() / 6 + 4),
            kids: Vec::with_capacity(text.len() / 6 + 4),
            roots: Vec::with_capacity(1),
        };
        // Open lists: (start offset, where their children begin in `open_kids`).
        let mut stack: Vec<(u32, usize)> = Vec::new();
        let mut open_kids: Vec<u32> = Vec::new();
        let b = text.as_bytes();
        let mut pos = 0usize;
        loop {
            pos = skip_ws(text, pos);
            if pos >= b.len() {
                break;
            }
            let start = pos as u32;
            let id = match b[pos] {
                b'(' => {
                    stack.push((start, open_kids.len()));
                    pos += 1;
                    continue;
                }
                b')' => {
                    pos += 1;
                    let Some((lstart, mark)) = stack.pop() else {
                        return Err(LexError {
                            offset: start as usize,
                            msg: "unexpected ')'".into(),
                        });
                    };
                    let first = s.kids.len() as u32;
                    let len = (open_kids.len() - mark) as u32;
                    s.kids.extend_from_slice(&open_kids[mark..]);
                    open_kids.truncate(mark);
                    s.nodes.push(SNode::List {
                        first,
                        len,
                        start: lstart,
                        end: pos as u32,
                    });
                    (s.nodes.len() - 1) as u32
                }
                b'"' => {
                    let mut p = pos + 1;
                    loop {
                        match b.get(p) {
                            None => {
                                return Err(LexError {
                                    offset: pos,
                                    msg: "unterminated string literal".into(),
                                })
                            }
                            Some(b'"') if b.get(p + 1) == Some(&b'"') => p += 2,
                            Some(b'"') => break,
                            Some(_) => p += 1,
                        }
                    }
                    s.nodes.push(SNode::Atom {
                        tok: Tok::Str,
                        start,
                        end: (p + 1) as u32,
                    });
                    pos = p + 1;
                    (s.nodes.len() - 1) as u32
                }
                b'|' => {
                    let Some(len) = text[pos + 1..].find(['|', '\\']) else {
                        return Err(LexError {
                            offset: pos,
                            msg: "unterminated quoted symbol".into(),
                        });
                    };
                    if b[pos + 1 + len] == b'\\' {
                        return Err(LexError {
                            offset: pos + 1 + len,
                            msg: "'\\' is not allowed in a quoted symbol".into(),
                        });
                    }
                    s.nodes.push(SNode::Atom {
                        tok: Tok::Quoted,
                        start: start + 1,
                        end: (pos + 1 + len) as u32,
                    });
                    pos = pos + len + 2;
                    (s.nodes.len() - 1) as u32
                }
                _ => match token(&text[pos..]) {
                    Ok((rest, (tok, t))) => {
                        let end = pos + t.len();
                        // A token must end at a delimiter.
                        let delimited = match rest.as_bytes().first() {
                            None => true,
                            Some(&c) if c < 128 => {
                                matches!(
                                    c,
                                    b' ' | b'\t'
                                        | b'\n'
                                        | b'\r'
                                        | 0x0b
                                        | 0x0c
                                        | b'('
                                        | b')'
                                        | b';'
                                        | b'"'
                                        | b'|'
                                ) || (c as char).is_whitespace()
                            }
                            Some(_) => false,
                        };
                        if let Some(c) = rest.chars().next().filter(|_| !delimited) {
                            if !c.is_whitespace() {
                                return Err(LexError {
                                    offset: end,
                                    msg: format!("unexpected character '{c}'"),
                                });
                            }
                        }
                        s.nodes.push(SNode::Atom {
                            tok,
                            start,
                            end: end as u32,
                        });
                        pos = end;
                        (s.nodes.len() - 1) as u32
                    }
                    Err(_) => {
                        let c = text[pos..].chars().next().unwrap_or('?');
                        return Err(LexError {
                            offset: pos,
                            msg: format!("unexpected character '{}'", c.escape_default()),
                        });
                    }
                },
            };
            if stack.is_empty() {
                s.roots.push(id);
            } else {
                open_kids.push(id);
            }
        }
        if let Some((start, _)) = stack.last() {
            return Err(LexError {
                offset: *start as usize,
                msg: "unbalanced parentheses: missing ')'".into(),
            });
        }
        Ok(s)
    }

    pub fn node(&self, id: u32) -> SNode {
        self.nodes[id as usize]
    }
    /// Children of a list node (empty for atoms).
    pub fn list(&self, id: u32) -> Option<&[u32]> {
        match self.nodes[id as usize] {
            SNode::List { first, len, .. } => {
                Some(&self.kids[first as usize..(first + len) as usize])
            }
            SNode::Atom { .. } => None,
        }
    }
    /// The atom's token and text.
    pub fn atom(&self, id: u32) -> Option<(Tok, &'a str)> {
        match self.nodes[id as usize] {
            SNode::Atom { tok, start, end } => {
                Some((tok, &self.text[start as usize..end as usize]))
            }
            SNode::List { .. } => None,
        }
    }
    /// A symbol (simple or quoted), as its name.
    pub fn symbol(&self, id: u32) -> Option<&'a str> {
        match self.atom(id) {
            Some((Tok::Symbol | Tok::Quoted, s)) => Some(s),
            _ => None,
        }
    }
    pub fn is_symbol(&self, id: u32, name: &str) -> bool {
        matches!(self.atom(id), Some((Tok::Symbol, s)) if s == name)
    }
    pub fn keyword(&self, id: u32) -> Option<&'a str> {
        match self.atom(id) {
            Some((Tok::Keyword, s)) => Some(s),
            _ => None,
        }
    }
    pub fn offset(&self, id: u32) -> usize {
        match self.nodes[id as usize] {
            SNode::Atom { start, .. } | SNode::List { start, .. } => start as usize,
        }
    }
    /// The source text of a node.
    pub fn source(&self, id: u32) -> &'a str {
        match self.nodes[id as usize] {
            SNode::Atom {
                tok: Tok::Quoted,
                start,
                end,
            } => &self.text[start as usize - 1..end as usize + 1],
            SNode::Atom { start, end, .. } => &self.text[start as usize..end as usize],
            SNode::List { start, end, .. } => &self.text[start as usize..end as usize],
        }
    }
}

impl Sexps<'_> {
    /// The node's text with comments and layout dropped: atoms as written, lists as `(`
    /// children separated by one space `)`. Unlike `source`, safe to splice into one line.
    pub fn flat_source(&self, id: u32) -> String {
        let mut out = String::new();
        // (node, index of the next child to print; usize::MAX for "not opened yet")
        let mut stack: Vec<(u32, usize)> = vec![(id, usize::MAX)];
        while let Some((n, i)) = stack.pop() {
            match self.list(n) {
                None => out.push_str(self.source(n)),
                Some(kids) => {
                    let i = if i == usize::MAX {
                        out.push('(');
                        0
                    } else {
                        i
                    };
                    if i < kids.len() {
                        if i > 0 {
                            out.push(' ');
                        }
                        stack.push((n, i + 1));
                        stack.push((kids[i], usize::MAX));
                    } else {
                        out.push(')');
                    }
                }
            }
        }
        out
    }
}

/// Skip whitespace and `;` comments at the start of `s`.
pub fn skip_ws_comments(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix(';') {
            s = match rest.find(['\n', '\r']) {
                Some(i) => &rest[i..],
                None => "",
            };
        } else {
            return s;
        }
    }
}

/// The leading symbol of a command text `( head ...`, after whitespace/comments.
pub fn command_head(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    if b.first() == Some(&b'(') && b.get(1).is_some_and(|c| c.is_ascii_graphic() && *c != b';') {
        // The common case, `(head`, by bytes: the delimiters are ASCII, so the end found
        // is where the general path below finds it.
        let end = b[1..]
            .iter()
            .position(|&c| c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'"' | b';'))
            .map_or(b.len(), |n| n + 1);
        return (end > 1).then(|| &text[1..end]);
    }
    command_head_general(text)
}

/// `command_head` by chars: whitespace and comments skipped before and after `(`.
fn command_head_general(text: &str) -> Option<&str> {
    let s = skip_ws_comments(text);
    let s = s.strip_prefix('(')?;
    let s = skip_ws_comments(s);
    let end = s
        .find(|c: char| c.is_ascii_whitespace() || matches!(c, '(' | ')' | '"' | ';'))
        .unwrap_or(s.len());
    if end == 0 {
        None
    } else {
        Some(&s[..end])
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

/// Line and column (1-based) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map(|p| p + 1).unwrap_or(0) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `command_head` by bytes agrees with the general path (whitespace, comments and
    /// delimiters skipped by chars) on every string of up to four symbols of a small
    /// alphabet.
    #[test]
    fn command_head_by_bytes_agrees_with_the_general_path() {
        let alphabet = [
            "(", ")", " ", "\n", ";", "\"", "a", "-", "\u{a0}", "\u{e9}", "|",
        ];
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |a| format!("{t}{a}")))
                .collect();
            texts.extend(longer);
        }
        for t in &texts {
            assert_eq!(command_head(t), command_head_general(t), "{t:?}");
        }
        assert_eq!(command_head("(get-value ((x)))"), Some("get-value"));
    }

    #[test]
    fn atoms_and_lists() {
        let s = Sexps::parse("(assert (= |a b| #x0F \"x\"\"y\" 1.50 12 :named))").unwrap();
        assert_eq!(s.roots.len(), 1);
        let top = s.list(s.roots[0]).unwrap();
        assert!(s.is_symbol(top[0], "assert"));
        let eq = s.list(top[1]).unwrap();
        assert_eq!(s.symbol(eq[1]), Some("a b"));
        assert_eq!(s.atom(eq[2]), Some((Tok::Hex, "#x0F")));
        assert_eq!(unescape_string(s.atom(eq[3]).unwrap().1), "x\"y");
        assert_eq!(s.atom(eq[4]), Some((Tok::Decimal, "1.50")));
        assert_eq!(s.keyword(eq[6]), Some(":named"));
        assert_eq!(s.source(top[1]), "(= |a b| #x0F \"x\"\"y\" 1.50 12 :named)");
    }

    #[test]
    fn errors_have_offsets() {
        assert_eq!(Sexps::parse("(a (b)").err().unwrap().offset, 0);
        assert_eq!(
            Sexps::parse("(a \"xx)").err().unwrap().msg,
            "unterminated string literal"
        );
        assert!(Sexps::parse("(a b))").is_err());
        assert!(Sexps::parse("(a #b012)").is_err());
    }

    #[test]
    fn deep_nesting_is_iterative() {
        let n = 200_000;
        let text = format!("{}x{}", "(".repeat(n), ")".repeat(n));
        let s = Sexps::parse(&text).unwrap();
        assert_eq!(s.nodes.len(), n + 1);
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
