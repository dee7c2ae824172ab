//! KQuery, KLEE's own query language (`klee --use-query-log=all:kquery`, kleaver's input),
//! read into the text of a KLEE SMT2 query log, so that `replay` and `bench` take a log in
//! either form.
//!
//! Each `(query [C...] Q [E...] [A...])` becomes one record as KLEE's SMT2 log writes it:
//! the arrays it reads declared, one assertion of the constraints and `(= false Q)` (the
//! query asks whether Q follows from the constraints, so `sat` means it does not),
//! `(check-sat)`, a `get-value` for each byte of each array of A, and `(exit)` (KLEE's SMT2
//! log asks no values for the expressions E of a Value query, and neither does this).
//! Comment lines (`# Query N -- Type: ...`, `#   Validity: 0`) are written in place as `;`
//! comments, so the answers KLEE recorded are read as from an SMT2 log
//! (`corpus::klee_answers`).
//!
//! Invariants:
//! * Widths are KQuery's. A width-1 expression is an SMT-LIB Boolean when it is a
//!   comparison, a Boolean connective or a constant, and a 1-bit vector when it is a read,
//!   an extract or arithmetic; each use converts it to the sort the use needs
//!   (`(= #b1 x)`, `(ite b #b1 #b0)`).
//! * Semantics are KLEE's where SMT-LIB's differ: an arithmetic shift right by the width or
//!   more gives 0, not the sign (KLEE's solver builders and kleaver's printer).
//! * Scopes are those of KLEE's parser: labels (`N0:`, `U0:`) and array declarations hold
//!   until the end of the next query. A label is a `let` name (`?N0`) bound around the
//!   query's assertion, in nested `let`s by depth (a binding uses those of the lets around
//!   it only), as KLEE's printer abbreviates shared terms (written out at each use, the
//!   labels of KLEE's PCRE log would make its text 28 times larger).
//! * Every input error is an [`Error`] with its line and column; nothing panics on input.

use crate::term::symbol::quote_symbol;
use rustc_hash::FxHashMap;
use std::fmt::Write;
use std::rc::Rc;

/// A KQuery text that cannot be read, and where.
#[derive(Debug, thiserror::Error)]
#[error("line {line}, column {col}: {msg}")]
pub struct Error {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

/// Whether a log is KQuery: named `*.kquery` (also gzipped), or its first line that is
/// neither blank nor a `#` comment declares an array or opens a query.
pub fn is_kquery(path: &str, text: &str) -> bool {
    if path.ends_with(".kquery") || path.ends_with(".kquery.gz") {
        return true;
    }
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("array ") || l.starts_with("(query"))
}

/// The SMT2 query log text of a KQuery log.
pub fn to_smt2(text: &str) -> Result<String, Error> {
    let mut p = Parser::new(text)?;
    let mut out = String::with_capacity(text.len() * 2);
    loop {
        for c in p.comments.drain(..) {
            out.push(';');
            out.push_str(c);
            out.push('\n');
        }
        match p.tok {
            Tok::Eof => break,
            Tok::KwArray => p.array_decl()?,
            Tok::LParen => p.query(&mut out)?,
            _ => return Err(p.error("expected `array` or `(query`")),
        }
    }
    Ok(out)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    LParen,
    RParen,
    LSquare,
    RSquare,
    Colon,
    Comma,
    Equals,
    At,
    Arrow,
    Number(&'a str),
    Width(u32),
    Ident(&'a str),
    KwArray,
    KwQuery,
    KwSymbolic,
    KwTrue,
    KwFalse,
    Eof,
}

/// How a width-1 expression is written (see the module's invariants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sort {
    Bool,
    Bv(u32),
}

/// A translated expression: its SMT-LIB text, sort, and value when it is a constant that
/// fits 128 bits.
#[derive(Clone, Debug)]
struct Expr {
    text: Rc<str>,
    sort: Sort,
    value: Option<u128>,
}

impl Expr {
    fn width(&self) -> u32 {
        match self.sort {
            Sort::Bool => 1,
            Sort::Bv(w) => w,
        }
    }
    fn bv(text: String, width: u32) -> Expr {
        Expr {
            text: text.into(),
            sort: Sort::Bv(width),
            value: None,
        }
    }
    fn boolean(text: String) -> Expr {
        Expr {
            text: text.into(),
            sort: Sort::Bool,
            value: None,
        }
    }
    /// The text as a bit-vector.
    fn as_bv(&self) -> String {
        match self.sort {
            Sort::Bool => format!("(ite {} #b1 #b0)", self.text),
            Sort::Bv(_) => self.text.to_string(),
        }
    }
}

/// An array as a `Read` sees it: the array itself or an update list over it.
#[derive(Clone, Debug)]
struct Version {
    text: Rc<str>,
    domain: u32,
    range: u32,
}

#[derive(Clone, Debug)]
struct ArrayDecl {
    domain: u32,
    range: u32,
    size: u64,
    /// The contents of a constant array, as SMT-LIB constants.
    values: Option<Vec<String>>,
}

/// A number token before its width is known, or an expression.
enum NumOrExpr<'a> {
    Num(&'a str, (usize, usize)),
    Expr(Expr),
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    col: usize,
    tok: Tok<'a>,
    /// Where `tok` starts.
    at: (usize, usize),
    /// Comment texts (after the `#`) read past since the last top-level command.
    comments: Vec<&'a str>,
    arrays: FxHashMap<&'a str, ArrayDecl>,
    /// Arrays the query being read uses, in order of first use.
    used: Vec<&'a str>,
    exprs: FxHashMap<&'a str, Expr>,
    versions: FxHashMap<&'a str, Version>,
    /// The query's labels as `let` bindings: name (`?N0`), text, depth (1 + the deepest
    /// label its text uses).
    bindings: Vec<(String, Rc<str>, usize)>,
}

fn const_text(value: u128, width: u32) -> Expr {
    if width == 1 {
        return Expr {
            text: if value == 1 { "true" } else { "false" }.into(),
            sort: Sort::Bool,
            value: Some(value),
        };
    }
    Expr {
        text: format!("(_ bv{value} {width})").into(),
        sort: Sort::Bv(width),
        value: Some(value),
    }
}

fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Result<Parser<'a>, Error> {
        let mut p = Parser {
            src,
            pos: 0,
            line: 1,
            col: 1,
            tok: Tok::Eof,
            at: (1, 1),
            comments: Vec::new(),
            arrays: FxHashMap::default(),
            used: Vec::new(),
            exprs: FxHashMap::default(),
            versions: FxHashMap::default(),
            bindings: Vec::new(),
        };
        p.bump()?;
        Ok(p)
    }

    fn error(&self, msg: impl Into<String>) -> Error {
        Error {
            line: self.at.0,
            col: self.at.1,
            msg: msg.into(),
        }
    }

    fn error_at(at: (usize, usize), msg: impl Into<String>) -> Error {
        Error {
            line: at.0,
            col: at.1,
            msg: msg.into(),
        }
    }

    fn peek_byte(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn advance(&mut self) {
        if let Some(b) = self.peek_byte() {
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
                self.col = 1;
            } else {
                self.col += 1;
            }
        }
    }

    /// Reads the next token into `tok`; comments on the way go to `comments`.
    fn bump(&mut self) -> Result<(), Error> {
        loop {
            while self.peek_byte().is_some_and(|b| b.is_ascii_whitespace()) {
                self.advance();
            }
            self.at = (self.line, self.col);
            let start = self.pos;
            let Some(b) = self.peek_byte() else {
                self.tok = Tok::Eof;
                return Ok(());
            };
            self.advance();
            let tok = match b {
                b'#' => {
                    while self.peek_byte().is_some_and(|b| b != b'\n') {
                        self.advance();
                    }
                    self.comments.push(&self.src[start + 1..self.pos]);
                    continue;
                }
                b'(' => Tok::LParen,
                b')' => Tok::RParen,
                b'[' => Tok::LSquare,
                b']' => Tok::RSquare,
                b':' => Tok::Colon,
                b',' => Tok::Comma,
                b'=' => Tok::Equals,
                b'@' => Tok::At,
                b'-' if self.peek_byte() == Some(b'>') => {
                    self.advance();
                    Tok::Arrow
                }
                b'-' | b'+' | b'0'..=b'9' => {
                    if !b.is_ascii_digit() && !self.peek_byte().is_some_and(|c| c.is_ascii_digit())
                    {
                        return Err(self.error(format!("unexpected `{}`", b as char)));
                    }
                    while self
                        .peek_byte()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                    {
                        self.advance();
                    }
                    Tok::Number(&self.src[start..self.pos])
                }
                b if b.is_ascii_alphabetic() || b == b'_' => {
                    while self.peek_byte().is_some_and(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
                    }) {
                        self.advance();
                    }
                    let word = &self.src[start..self.pos];
                    match word {
                        "array" => Tok::KwArray,
                        "query" => Tok::KwQuery,
                        "symbolic" => Tok::KwSymbolic,
                        "true" => Tok::KwTrue,
                        "false" => Tok::KwFalse,
                        _ => match word.strip_prefix('w').map(str::parse::<u32>) {
                            Some(Ok(w)) if w > 0 => Tok::Width(w),
                            _ => Tok::Ident(word),
                        },
                    }
                }
                _ => {
                    let c = self.src[start..].chars().next().unwrap_or('?');
                    return Err(self.error(format!("unexpected `{c}`")));
                }
            };
            self.tok = tok;
            return Ok(());
        }
    }

    fn expect(&mut self, want: Tok<'static>, what: &str) -> Result<(), Error> {
        if self.tok != want {
            return Err(self.error(format!("expected {what}")));
        }
        self.bump()
    }

    fn width(&mut self) -> Result<u32, Error> {
        match self.tok {
            Tok::Width(w) => {
                self.bump()?;
                Ok(w)
            }
            _ => Err(self.error("expected a width (`w8`, `w32`, ...)")),
        }
    }

    /// The value of a number token at `width` bits (wrapped, as KLEE reads it).
    fn number(s: &str, width: u32, at: (usize, usize)) -> Result<Expr, Error> {
        let (neg, digits) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (radix, digits) = match digits.get(..2) {
            Some("0b") => (2, &digits[2..]),
            Some("0o") => (8, &digits[2..]),
            Some("0x") => (16, &digits[2..]),
            _ => (10, digits),
        };
        let bad = || Parser::error_at(at, format!("invalid number `{s}`"));
        let mut v: u128 = 0;
        let mut any = false;
        for c in digits.chars() {
            if c == '_' {
                continue;
            }
            let d = c.to_digit(radix).ok_or_else(bad)?;
            v = v
                .checked_mul(radix as u128)
                .and_then(|v| v.checked_add(d as u128))
                .ok_or_else(|| Parser::error_at(at, format!("number `{s}` past 128 bits")))?;
            any = true;
        }
        if !any {
            return Err(bad());
        }
        if neg {
            if width > 128 {
                return Err(Parser::error_at(
                    at,
                    format!("negative number `{s}` wider than 128 bits"),
                ));
            }
            v = v.wrapping_neg();
        }
        Ok(const_text(v & mask(width), width))
    }

    fn num_or_expr(&mut self) -> Result<NumOrExpr<'a>, Error> {
        if let Tok::Number(s) = self.tok {
            let at = self.at;
            self.bump()?;
            return Ok(NumOrExpr::Num(s, at));
        }
        Ok(NumOrExpr::Expr(self.expr(None)?))
    }

    fn coerce(n: NumOrExpr<'_>, width: u32, what: &str) -> Result<Expr, Error> {
        match n {
            NumOrExpr::Num(s, at) => Parser::number(s, width, at),
            NumOrExpr::Expr(e) if e.width() == width => Ok(e),
            NumOrExpr::Expr(e) => Err(Error {
                line: 0,
                col: 0,
                msg: format!("{what} has width {}, expected {width}", e.width()),
            }),
        }
    }

    /// `expr = true | false | number | label | label ':' paren-expr | paren-expr`
    fn expr(&mut self, expected: Option<u32>) -> Result<Expr, Error> {
        let at = self.at;
        let e = match self.tok {
            Tok::KwTrue | Tok::KwFalse => {
                let v = u128::from(self.tok == Tok::KwTrue);
                self.bump()?;
                const_text(v, 1)
            }
            Tok::Number(s) => {
                let Some(w) = expected else {
                    return Err(self.error(format!("cannot infer the width of `{s}`")));
                };
                self.bump()?;
                Parser::number(s, w, at)?
            }
            Tok::Ident(name) => {
                self.bump()?;
                if self.tok == Tok::Colon {
                    self.bump()?;
                    let mut e = self.paren_expr()?;
                    e.text = self.bind(name, e.text, at)?;
                    self.exprs.insert(name, e.clone());
                    e
                } else {
                    self.exprs
                        .get(name)
                        .cloned()
                        .ok_or_else(|| Parser::error_at(at, format!("unknown label `{name}`")))?
                }
            }
            _ => self.paren_expr()?,
        };
        match expected {
            Some(w) if e.width() != w => Err(Parser::error_at(
                at,
                format!("expression has width {}, expected {w}", e.width()),
            )),
            _ => Ok(e),
        }
    }

    /// Binds label `name` (defined at `at`) to `text`; returns the name the label's uses
    /// are written as. Expression and update-list labels share the `let` names, so a name
    /// is one label of either kind per query.
    fn bind(&mut self, name: &str, text: Rc<str>, at: (usize, usize)) -> Result<Rc<str>, Error> {
        let var = format!("?{name}");
        if self.bindings.iter().any(|b| b.0 == var) {
            return Err(Parser::error_at(
                at,
                format!("label `{name}` defined twice"),
            ));
        }
        let depth = 1 + Self::names_in(&text)
            .filter_map(|n| self.bindings.iter().find(|b| b.0 == n).map(|b| b.2))
            .max()
            .unwrap_or(0);
        self.bindings.push((var.clone(), text, depth));
        Ok(var.into())
    }

    /// The `?` names in a translated text (KQuery's own names never start with `?`).
    fn names_in(text: &str) -> impl Iterator<Item = &str> {
        text.match_indices('?').map(move |(i, _)| {
            let rest = &text[i..];
            let end = rest[1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
                .map_or(rest.len(), |e| e + 1);
            &rest[..end]
        })
    }

    /// The expression as a Boolean.
    fn as_bool(&self, e: &Expr, at: (usize, usize)) -> Result<String, Error> {
        match e.sort {
            Sort::Bool => Ok(e.text.to_string()),
            Sort::Bv(1) => Ok(format!("(= #b1 {})", e.text)),
            Sort::Bv(w) => Err(Parser::error_at(at, format!("expected width 1, got {w}"))),
        }
    }

    /// Two operands of one width: `expected`'s, else the one of the operand that is not a
    /// bare number.
    fn matched_args(&mut self, expected: Option<u32>) -> Result<(Expr, Expr), Error> {
        if let Some(w) = expected {
            let a = self.expr(Some(w))?;
            let b = self.expr(Some(w))?;
            return Ok((a, b));
        }
        let at = self.at;
        match self.num_or_expr()? {
            NumOrExpr::Num(s, nat) => match self.num_or_expr()? {
                NumOrExpr::Num(..) => Err(Parser::error_at(at, "both operands are bare numbers")),
                NumOrExpr::Expr(b) => Ok((Parser::number(s, b.width(), nat)?, b)),
            },
            NumOrExpr::Expr(a) => {
                let b = self.expr(Some(a.width()))?;
                Ok((a, b))
            }
        }
    }

    /// `paren-expr = '(' width number ')' | '(' kind [width] args ')'`
    fn paren_expr(&mut self) -> Result<Expr, Error> {
        let at = self.at;
        self.expect(Tok::LParen, "an expression")?;
        if let Tok::Width(w) = self.tok {
            self.bump()?;
            let Tok::Number(s) = self.tok else {
                return Err(self.error("a width coerces a number only"));
            };
            let nat = self.at;
            self.bump()?;
            self.expect(Tok::RParen, "`)`")?;
            return Parser::number(s, w, nat);
        }
        let Tok::Ident(kind) = self.tok else {
            return Err(self.error("expected an expression kind"));
        };
        self.bump()?;
        let ty = match self.tok {
            Tok::Width(w) => {
                self.bump()?;
                Some(w)
            }
            _ => None,
        };
        let w = ty.unwrap_or(1);
        let need_ty = |p: &Parser| ty.ok_or_else(|| p.error(format!("`{kind}` needs a width")));
        let e = match kind {
            "Add" | "Sub" | "Mul" | "UDiv" | "SDiv" | "URem" | "SRem" | "Shl" | "LShr" | "AShr"
            | "And" | "Or" | "Xor" => {
                let (a, b) = self.matched_args(Some(w))?;
                self.binary(kind, w, &a, &b, at)?
            }
            "Eq" | "Ne" | "Ult" | "Ule" | "Ugt" | "Uge" | "Slt" | "Sle" | "Sgt" | "Sge" => {
                let (a, b) = self.matched_args(None)?;
                self.compare(kind, &a, &b, at)?
            }
            "Not" => {
                let a = self.expr(Some(w))?;
                if w == 1 {
                    Expr::boolean(format!("(not {})", self.as_bool(&a, at)?))
                } else {
                    Expr::bv(format!("(bvnot {})", a.text), w)
                }
            }
            "ZExt" | "SExt" => {
                let w = need_ty(self)?;
                let a = self.expr(None)?;
                Parser::extend(kind == "SExt", w, &a)
            }
            "Select" => {
                let c = self.expr(Some(1))?;
                let c = self.as_bool(&c, at)?;
                let (a, b) = self.matched_args(Some(w))?;
                if w == 1 {
                    let (a, b) = (self.as_bool(&a, at)?, self.as_bool(&b, at)?);
                    Expr::boolean(format!("(ite {c} {a} {b})"))
                } else {
                    Expr::bv(format!("(ite {c} {} {})", a.text, b.text), w)
                }
            }
            "Concat" => {
                let w = need_ty(self)?;
                let mut kids = Vec::new();
                while self.tok != Tok::RParen {
                    kids.push(self.expr(None)?);
                }
                let sum: u64 = kids.iter().map(|k| u64::from(k.width())).sum();
                if kids.is_empty() || sum != u64::from(w) {
                    return Err(Parser::error_at(
                        at,
                        format!("Concat of {sum} bits declared w{w}"),
                    ));
                }
                Parser::concat(&kids)
            }
            "Extract" => {
                let w = need_ty(self)?;
                let Tok::Number(s) = self.tok else {
                    return Err(self.error("Extract needs a bit offset"));
                };
                let off = Parser::number(s, 32, self.at)?.value.unwrap_or(0) as u32;
                self.bump()?;
                let a = self.expr(None)?;
                if u64::from(off) + u64::from(w) > u64::from(a.width()) {
                    return Err(Parser::error_at(at, "Extract past its operand's width"));
                }
                if off == 0 && w == a.width() {
                    a
                } else {
                    Expr::bv(
                        format!("((_ extract {} {off}) {})", off + w - 1, a.as_bv()),
                        w,
                    )
                }
            }
            "Read" | "ReadLSB" | "ReadMSB" => {
                let w = need_ty(self)?;
                let index = self.num_or_expr()?;
                let v = self.version()?;
                let index = Parser::coerce(index, v.domain, "a read's index")
                    .map_err(|e| Parser::error_at(at, e.msg))?;
                self.read(kind, w, &index, &v, at)?
            }
            _ => {
                return Err(Parser::error_at(
                    at,
                    format!("unknown expression kind `{kind}`"),
                ))
            }
        };
        self.expect(Tok::RParen, "`)`")?;
        Ok(e)
    }

    fn binary(
        &self,
        kind: &str,
        w: u32,
        a: &Expr,
        b: &Expr,
        at: (usize, usize),
    ) -> Result<Expr, Error> {
        if w == 1 && matches!(kind, "And" | "Or" | "Xor") {
            let op = match kind {
                "And" => "and",
                "Or" => "or",
                _ => "xor",
            };
            return Ok(Expr::boolean(format!(
                "({op} {} {})",
                self.as_bool(a, at)?,
                self.as_bool(b, at)?
            )));
        }
        let (x, y) = (a.as_bv(), b.as_bv());
        if kind == "AShr" {
            // KLEE: a shift by the width or more gives 0.
            return Ok(match b.value {
                Some(s) if s >= u128::from(w) => const_text(0, w),
                Some(_) => Expr::bv(format!("(bvashr {x} {y})"), w),
                None => Expr::bv(
                    format!("(ite (bvuge {y} (_ bv{w} {w})) (_ bv0 {w}) (bvashr {x} {y}))"),
                    w,
                ),
            });
        }
        let op = match kind {
            "Add" => "bvadd",
            "Sub" => "bvsub",
            "Mul" => "bvmul",
            "UDiv" => "bvudiv",
            "SDiv" => "bvsdiv",
            "URem" => "bvurem",
            "SRem" => "bvsrem",
            "Shl" => "bvshl",
            "LShr" => "bvlshr",
            "And" => "bvand",
            "Or" => "bvor",
            _ => "bvxor",
        };
        Ok(Expr::bv(format!("({op} {x} {y})"), w))
    }

    fn compare(&self, kind: &str, a: &Expr, b: &Expr, at: (usize, usize)) -> Result<Expr, Error> {
        if matches!(kind, "Eq" | "Ne") {
            let eq = if a.width() == 1 {
                format!("(= {} {})", self.as_bool(a, at)?, self.as_bool(b, at)?)
            } else {
                format!("(= {} {})", a.text, b.text)
            };
            return Ok(Expr::boolean(if kind == "Eq" {
                eq
            } else {
                format!("(not {eq})")
            }));
        }
        let op = match kind {
            "Ult" => "bvult",
            "Ule" => "bvule",
            "Ugt" => "bvugt",
            "Uge" => "bvuge",
            "Slt" => "bvslt",
            "Sle" => "bvsle",
            "Sgt" => "bvsgt",
            _ => "bvsge",
        };
        Ok(Expr::boolean(format!("({op} {} {})", a.as_bv(), b.as_bv())))
    }

    fn extend(signed: bool, w: u32, a: &Expr) -> Expr {
        let aw = a.width();
        if a.sort == Sort::Bool {
            let ones = if signed {
                format!("(bvnot (_ bv0 {w}))")
            } else {
                format!("(_ bv1 {w})")
            };
            return Expr::bv(format!("(ite {} {ones} (_ bv0 {w}))", a.text), w);
        }
        if w == aw {
            return a.clone();
        }
        if w < aw {
            return Expr::bv(format!("((_ extract {} 0) {})", w - 1, a.text), w);
        }
        let op = if signed { "sign_extend" } else { "zero_extend" };
        Expr::bv(format!("((_ {op} {}) {})", w - aw, a.text), w)
    }

    fn concat(kids: &[Expr]) -> Expr {
        let mut it = kids.iter().rev();
        let Some(last) = it.next() else {
            return const_text(0, 1);
        };
        let mut acc = last.clone();
        let mut width = last.width();
        for k in it {
            width += k.width();
            acc = Expr::bv(format!("(concat {} {})", k.as_bv(), acc.as_bv()), width);
        }
        acc
    }

    /// `Read`, or the `ReadLSB`/`ReadMSB` of `w / range` consecutive cells.
    fn read(
        &self,
        kind: &str,
        w: u32,
        index: &Expr,
        v: &Version,
        at: (usize, usize),
    ) -> Result<Expr, Error> {
        let one = |i: u32| -> Expr {
            let idx = if i == 0 {
                index.text.to_string()
            } else if let Some(base) = index.value {
                const_text(base.wrapping_add(u128::from(i)) & mask(v.domain), v.domain)
                    .text
                    .to_string()
            } else {
                format!("(bvadd {} (_ bv{i} {}))", index.text, v.domain)
            };
            Expr::bv(format!("(select {} {idx})", v.text), v.range)
        };
        if kind == "Read" {
            if w != v.range {
                return Err(Parser::error_at(
                    at,
                    format!("Read w{w} of an array of w{}", v.range),
                ));
            }
            return Ok(one(0));
        }
        if !w.is_multiple_of(v.range) {
            return Err(Parser::error_at(
                at,
                format!("{kind} w{w} is no multiple of w{}", v.range),
            ));
        }
        let n = w / v.range;
        let mut cells: Vec<Expr> = (0..n).map(one).collect();
        if kind == "ReadLSB" {
            cells.reverse();
        }
        Ok(Parser::concat(&cells))
    }

    /// `version = name | label ':' update-list | update-list`
    fn version(&mut self) -> Result<Version, Error> {
        let at = self.at;
        match self.tok {
            Tok::Ident(name) => {
                self.bump()?;
                if self.tok == Tok::Colon {
                    self.bump()?;
                    let mut v = self.update_list()?;
                    v.text = self.bind(name, v.text, at)?;
                    self.versions.insert(name, v.clone());
                    return Ok(v);
                }
                if let Some(v) = self.versions.get(name) {
                    return Ok(v.clone());
                }
                let Some(a) = self.arrays.get(name) else {
                    return Err(Parser::error_at(at, format!("unknown array `{name}`")));
                };
                let v = Version {
                    text: quote_symbol(name).into(),
                    domain: a.domain,
                    range: a.range,
                };
                if !self.used.contains(&name) {
                    self.used.push(name);
                }
                Ok(v)
            }
            _ => self.update_list(),
        }
    }

    /// `update-list = '[' [index '=' value {',' index '=' value}] ']' '@' version`: the
    /// first write listed is the last made.
    fn update_list(&mut self) -> Result<Version, Error> {
        self.expect(Tok::LSquare, "an array or an update list")?;
        let mut writes = Vec::new();
        while self.tok != Tok::RSquare {
            let at = self.at;
            let index = self.num_or_expr()?;
            self.expect(Tok::Equals, "`=`")?;
            let value = self.num_or_expr()?;
            writes.push((index, value, at));
            if self.tok == Tok::Comma {
                self.bump()?;
            } else {
                break;
            }
        }
        self.expect(Tok::RSquare, "`]`")?;
        self.expect(Tok::At, "`@`")?;
        let base = self.version()?;
        let mut text = base.text.to_string();
        for (index, value, at) in writes.into_iter().rev() {
            let i = Parser::coerce(index, base.domain, "a write's index")
                .map_err(|e| Parser::error_at(at, e.msg))?;
            let v = Parser::coerce(value, base.range, "a written value")
                .map_err(|e| Parser::error_at(at, e.msg))?;
            text = format!("(store {text} {} {})", i.as_bv(), v.as_bv());
        }
        Ok(Version {
            text: text.into(),
            ..base
        })
    }

    /// `array NAME '[' [SIZE] ']' ':' DOMAIN '->' RANGE '=' ('symbolic' | '[' VALUE* ']')`
    fn array_decl(&mut self) -> Result<(), Error> {
        self.bump()?;
        let Tok::Ident(name) = self.tok else {
            return Err(self.error("expected an array name"));
        };
        self.bump()?;
        self.expect(Tok::LSquare, "`[`")?;
        let mut size = None;
        if let Tok::Number(s) = self.tok {
            size = Parser::number(s, 64, self.at)?.value.map(|v| v as u64);
            self.bump()?;
        }
        self.expect(Tok::RSquare, "`]`")?;
        self.expect(Tok::Colon, "`:`")?;
        let domain = self.width()?;
        self.expect(Tok::Arrow, "`->`")?;
        let range = self.width()?;
        self.expect(Tok::Equals, "`=`")?;
        let values = match self.tok {
            Tok::KwSymbolic => {
                self.bump()?;
                None
            }
            Tok::LSquare => {
                self.bump()?;
                let mut vs = Vec::new();
                while self.tok != Tok::RSquare {
                    let Tok::Number(s) = self.tok else {
                        return Err(self.error("expected a number in a constant array"));
                    };
                    vs.push(Parser::number(s, range, self.at)?.as_bv());
                    self.bump()?;
                    if self.tok == Tok::Comma {
                        self.bump()?;
                    }
                }
                self.bump()?;
                Some(vs)
            }
            _ => return Err(self.error("expected `symbolic` or `[`")),
        };
        let size = size
            .or(values.as_ref().map(|v| v.len() as u64))
            .unwrap_or(0);
        self.arrays.insert(
            name,
            ArrayDecl {
                domain,
                range,
                size,
                values,
            },
        );
        Ok(())
    }

    /// `'(' 'query' '[' constraint* ']' expr ['[' expr* ']' ['[' array* ']']] ')'`, written
    /// to `out` as one record of an SMT2 query log.
    fn query(&mut self, out: &mut String) -> Result<(), Error> {
        self.bump()?;
        self.expect(Tok::KwQuery, "`query`")?;
        self.expect(Tok::LSquare, "`[` before the constraints")?;
        let mut asserts = Vec::new();
        while self.tok != Tok::RSquare {
            let at = self.at;
            let c = self.expr(Some(1))?;
            asserts.push(self.as_bool(&c, at)?);
        }
        self.bump()?;
        let at = self.at;
        let q = self.expr(Some(1))?;
        if q.value != Some(0) {
            asserts.push(format!("(= false {})", self.as_bool(&q, at)?));
        }
        let mut objects = Vec::new();
        if self.tok == Tok::LSquare {
            self.bump()?;
            while self.tok != Tok::RSquare {
                self.expr(None)?;
            }
            self.bump()?;
            if self.tok == Tok::LSquare {
                self.bump()?;
                while let Tok::Ident(name) = self.tok {
                    if !self.arrays.contains_key(name) {
                        return Err(self.error(format!("unknown array `{name}`")));
                    }
                    objects.push(name);
                    if !self.used.contains(&name) {
                        self.used.push(name);
                    }
                    self.bump()?;
                }
                self.expect(Tok::RSquare, "`]`")?;
            }
        }
        self.expect(Tok::RParen, "`)` after the query")?;
        let assertion = self.assertion(asserts);
        self.write_record(out, &assertion, &objects);
        self.used.clear();
        self.exprs.clear();
        self.versions.clear();
        self.bindings.clear();
        self.arrays.clear();
        Ok(())
    }

    /// The conjunction of `conjuncts` inside the query's `let`s, shallowest outermost.
    fn assertion(&self, conjuncts: Vec<String>) -> String {
        let mut body = match conjuncts.len() {
            0 => "true".to_string(),
            1 => conjuncts.concat(),
            _ => format!("(and {})", conjuncts.join(" ")),
        };
        let deepest = self.bindings.iter().map(|b| b.2).max().unwrap_or(0);
        for depth in (1..=deepest).rev() {
            let mut lets = String::new();
            for (name, text, _) in self.bindings.iter().filter(|b| b.2 == depth) {
                let _ = write!(
                    lets,
                    "{}({name} {text})",
                    if lets.is_empty() { "" } else { " " }
                );
            }
            body = format!("(let ({lets}) {body})");
        }
        body
    }

    fn write_record(&self, out: &mut String, assertion: &str, objects: &[&str]) {
        if !objects.is_empty() {
            out.push_str("(set-option :produce-models true)\n");
        }
        out.push_str("(set-logic QF_AUFBV )\n");
        for &name in &self.used {
            let Some(a) = self.arrays.get(name) else {
                continue;
            };
            let q = quote_symbol(name);
            let _ = writeln!(
                out,
                "(declare-fun {q} () (Array (_ BitVec {}) (_ BitVec {}) ) )",
                a.domain, a.range
            );
            for (i, v) in a.values.iter().flatten().enumerate() {
                let _ = writeln!(out, "(assert (= (select {q} (_ bv{i} {})) {v}))", a.domain);
            }
        }
        let _ = writeln!(out, "(assert {assertion})");
        out.push_str("(check-sat)\n");
        for &name in objects {
            if let Some(a) = self.arrays.get(name) {
                for i in 0..a.size {
                    let _ = writeln!(
                        out,
                        "(get-value ( (select {} (_ bv{i} {}) ) ) )",
                        quote_symbol(name),
                        a.domain
                    );
                }
            }
        }
        out.push_str("(exit)\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(kq: &str) -> String {
        to_smt2(kq).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn klee_ashr_test_as_kleaver_prints_it() {
        // KLEE's test/Solver/AShr_to_smtlib.kquery: the shift past the width gives 0.
        let s = body(
            "array value[1] : w32 -> w8 = symbolic\n\
             array shift[1] : w32 -> w8 = symbolic\n\
             (query [(Ule 8 (Read w8 0 shift))] (Eq 0 (AShr w8 (Read w8 0 value) (Read w8 0 shift))) )\n",
        );
        assert_eq!(
            s,
            "(set-logic QF_AUFBV )\n\
             (declare-fun shift () (Array (_ BitVec 32) (_ BitVec 8) ) )\n\
             (declare-fun value () (Array (_ BitVec 32) (_ BitVec 8) ) )\n\
             (assert (and (bvule (_ bv8 8) (select shift (_ bv0 32))) (= false (= (_ bv0 8) (ite (bvuge (select shift (_ bv0 32)) (_ bv8 8)) (_ bv0 8) (bvashr (select value (_ bv0 32)) (select shift (_ bv0 32))))))))\n\
             (check-sat)\n(exit)\n"
        );
    }

    #[test]
    fn comments_stay_in_place_and_labels_are_let_names() {
        // Query 4 of KLEE's utils/data/Queries/pcresymperf-3.kquery, shortened.
        let s = body(
            "# Query 4 -- Type: Value, Instructions: 3033\n\
             array arr219[3] : w32 -> w8 = symbolic\n\
             (query [(Not (Eq 0 N0:(Read w8 0 arr219)))\n\
                     (Not (Eq 0 N2:(Read w8 1 arr219)))\n\
                     (Not (Ule (Add w32 4294967254 N1:(ZExt w32 N0)) 1))]\n\
                    false\n\
                    [N1])\n\
             #   OK -- Elapsed: 6.29425e-05\n\
             #   Result: 2\n",
        );
        assert_eq!(
            s,
            "; Query 4 -- Type: Value, Instructions: 3033\n\
             (set-logic QF_AUFBV )\n\
             (declare-fun arr219 () (Array (_ BitVec 32) (_ BitVec 8) ) )\n\
             (assert (let ((?N0 (select arr219 (_ bv0 32))) (?N2 (select arr219 (_ bv1 32)))) \
             (let ((?N1 ((_ zero_extend 24) ?N0))) (and (not (= (_ bv0 8) ?N0)) (not (= (_ bv0 8) ?N2)) \
             (not (bvule (bvadd (_ bv4294967254 32) ?N1) (_ bv1 32)))))))\n\
             (check-sat)\n\
             (exit)\n\
             ;   OK -- Elapsed: 6.29425e-05\n\
             ;   Result: 2\n"
        );
        assert_eq!(
            crate::corpus::klee_answers(&s),
            vec![Some(crate::session::vocab::Answer::Sat)]
        );
    }

    #[test]
    fn reads_updates_and_width_one_values() {
        let s = body(
            "array a[4] : w32 -> w8 = symbolic\n\
             array c[2] : w32 -> w8 = [7 255]\n\
             (query [(Eq (ReadLSB w16 2 U0:[1=3, 0=(Read w8 0 c)] @ a) (ReadMSB w16 0 U0))\n\
                     (Eq (Extract w1 0 (Read w8 1 a)) (Slt (Read w8 0 a) 0))\n\
                     (Eq (ZExt w8 (Ult 1 (Read w8 3 a))) (SExt w8 (Extract w1 7 (Read w8 3 a))))]\n\
                    false [] [a])\n",
        );
        // The first write listed is the last made; ReadLSB puts the lowest index last.
        let u = "(store (store a (_ bv0 32) (select c (_ bv0 32))) (_ bv1 32) (_ bv3 8))";
        assert!(
            s.contains(&format!(
                "(assert (let ((?U0 {u})) (and (= (concat (select ?U0 (_ bv3 32)) (select ?U0 (_ bv2 32))) \
                 (concat (select ?U0 (_ bv0 32)) (select ?U0 (_ bv1 32)))) \
                 (= (= #b1 ((_ extract 0 0) (select a (_ bv1 32)))) (bvslt (select a (_ bv0 32)) (_ bv0 8))) \
                 (= (ite (bvult (_ bv1 8) (select a (_ bv3 32))) (_ bv1 8) (_ bv0 8)) \
                 ((_ sign_extend 7) ((_ extract 7 7) (select a (_ bv3 32))))))))\n"
            )),
            "{s}"
        );
        assert!(s.starts_with("(set-option :produce-models true)\n"), "{s}");
        assert!(
            s.contains("(assert (= (select c (_ bv1 32)) (_ bv255 8)))"),
            "{s}"
        );
        assert_eq!(s.matches("(get-value ( (select a (_ bv").count(), 4);
    }

    #[test]
    fn numbers_in_every_radix_and_sign() {
        for (t, v) in [
            ("10", 10u128),
            ("0x1f", 31),
            ("0b101", 5),
            ("0o17", 15),
            ("-1", 255),
            ("+3", 3),
            ("1_000", 1000 & 255),
        ] {
            let e = Parser::number(t, 8, (1, 1)).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert_eq!(e.value, Some(v & 255), "{t}");
        }
        assert!(Parser::number("0x", 8, (1, 1)).is_err());
        assert!(Parser::number("12a", 8, (1, 1)).is_err());
    }

    #[test]
    fn errors_say_where() {
        for (kq, want) in [
            (
                "(query [] (Eq 1 2))",
                "line 1, column 15: both operands are bare numbers",
            ),
            (
                "array a[1] : w32 -> w8 = symbolic\n(query [(Eq 0 (Read w8 0 b))] false)",
                "line 2, column 26: unknown array `b`",
            ),
            (
                "(query [(Foo w8 1 2)] false)",
                "line 1, column 9: unknown expression kind `Foo`",
            ),
            ("(query [N0] false)", "line 1, column 9: unknown label `N0`"),
            (
                "array a[2] : w32 -> w8 = symbolic\n\
                 (query [(Eq N0:(Read w8 0 a) (Read w8 1 N0:[0=1] @ a))] false)",
                "line 2, column 41: label `N0` defined twice",
            ),
            (
                "(query [(Eq (w8 1) (w16 1))] false)",
                "line 1, column 20: expression has width 16, expected 8",
            ),
            (
                "(query [] false",
                "line 1, column 16: expected `)` after the query",
            ),
            ("select", "line 1, column 1: expected `array` or `(query`"),
        ] {
            match to_smt2(kq) {
                Ok(s) => panic!("{kq:?} read as {s:?}"),
                Err(e) => assert_eq!(e.to_string(), want, "{kq:?}"),
            }
        }
    }

    #[test]
    fn kquery_is_told_from_smt2() {
        assert!(is_kquery("x.kquery.gz", ""));
        assert!(is_kquery(
            "x",
            "# Query 0\narray a[1] : w32 -> w8 = symbolic\n"
        ));
        assert!(is_kquery("x", "\n(query [] false)\n"));
        assert!(!is_kquery(
            "x.smt2",
            "; Query 0 -- Type: Truth\n(set-logic QF_AUFBV )\n"
        ));
    }
}
