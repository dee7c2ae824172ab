//! The s-expression tree of one command, its atoms scanned by the lexical rules of `lex`.
//! The tree is a flat arena built with an explicit stack, so nesting depth costs heap, not
//! call stack, and dropping it is not recursive. Every node records its byte offset in the
//! command text, for error positions.
//!
//! Invariants: `Sexps::parse` accepts a text exactly when it is a sequence of balanced
//! s-expressions of well-formed atoms (each simple token ending at a delimiter, string
//! literals and quoted symbols terminated, no `\` in a quoted symbol), and otherwise gives
//! the offset of the first error. It agrees with the framers on where literals, comments and
//! lists end, since all of them scan with `lex`.

use super::lex;
pub use super::lex::{unescape_string, Tok};

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
            pos = lex::skip_space(b, pos);
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
                    let Some(end) = lex::string_end(b, pos) else {
                        return Err(LexError {
                            offset: pos,
                            msg: "unterminated string literal".into(),
                        });
                    };
                    s.nodes.push(SNode::Atom {
                        tok: Tok::Str,
                        start,
                        end: end as u32,
                    });
                    pos = end;
                    (s.nodes.len() - 1) as u32
                }
                b'|' => {
                    let Some(stop) = lex::quoted_stop(b, pos + 1) else {
                        return Err(LexError {
                            offset: pos,
                            msg: "unterminated quoted symbol".into(),
                        });
                    };
                    if b[stop] == b'\\' {
                        return Err(LexError {
                            offset: stop,
                            msg: "'\\' is not allowed in a quoted symbol".into(),
                        });
                    }
                    s.nodes.push(SNode::Atom {
                        tok: Tok::Quoted,
                        start: start + 1,
                        end: stop as u32,
                    });
                    pos = stop + 1;
                    (s.nodes.len() - 1) as u32
                }
                _ => match lex::token(&b[pos..]) {
                    Some((tok, n)) => {
                        let end = pos + n;
                        // A token must end at a delimiter. (A non-ASCII white space is let
                        // through here, to be refused as the next token.)
                        if !lex::ends_token(b.get(end)) {
                            let c = text[end..].chars().next().unwrap_or('?');
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
                    None => {
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
