//! The fast path for `(assert t)` and `(get-value (t ...))`, nearly every byte of a KLEE
//! log, and for the other commands such a log repeats for every query (`check-sat`,
//! `exit`, `reset`, `get-model`, `set-logic`, `set-option` and `set-info` with an atom,
//! and `declare-fun` of a constant of a built-in sort): one pass from bytes to hash-consed
//! terms, with no s-expression tree in between and an explicit stack (no recursion). It
//! covers the subset those logs use: simple symbols, numerals, `#x`/`#b` literals,
//! `(_ bvN w)`, applications of built-in, indexed and declared operators and of macros, and
//! `let`. For anything else (quoted symbols, strings, annotations, quantifiers, `as`,
//! decimals), and for every error, it gives up and returns `None`; the general parser
//! (`general`) then parses the command as if the fast path did not exist, so every error
//! message is the general parser's. It uses only the lexical layer (`lex`) and the
//! vocabulary it shares with the general parser (`ops`); the entry point (`parser`) calls
//! one, then the other.
//!
//! Invariant: when it returns a command, the general parser returns the same command (the
//! same term ids, the same source text for get-value) and the same trace of signature
//! lookups. Both build terms with the same shared helpers (`lookup_fun`, `apply_def`,
//! `radix_literal`, the store's sort-checking constructors; `(_ bvN w)` is read from the
//! bytes into `mk_bv_u64`, as `small_bv` does from tokens). The tests in `parser` parse
//! random `let` terms both ways and compare; `tests/suite/roundtrip.rs` does so for every
//! command of the shipped corpus, and the reader fuzz target for its inputs.
//! Giving up may leave nodes interned that no command uses; hash-consing makes that
//! invisible to every term built after.

use super::command::Command;
use super::lex::{self, Tok};
use super::ops::{apply_def, builtin_op, indexed_op, lookup_fun, radix_literal, Trace, MAX_DEPTH};
use crate::term::signature::{ArityRule, Signature};
use crate::term::{Op, SortId, SortStore, TermId, TermStore};
use num_bigint::BigUint;
use num_traits::Num;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// The command `text` if it is `(assert t)` with `t` Bool, or `(get-value (t ...))`, and its
/// terms are in the fast path's subset and well sorted; otherwise `None`. Signature lookups
/// are noted in `trace` as the general parser notes them.
pub(super) fn command(
    store: &mut TermStore,
    sig: &Signature,
    trace: &mut Option<Trace>,
    text: &str,
) -> Option<Command> {
    let mut f = Fast {
        store,
        sig,
        trace,
        text,
        pos: 0,
        frames: SmallVec::new(),
        args: SmallVec::new(),
        binds: Vec::new(),
        env: FxHashMap::default(),
        consts: Vec::new(),
    };
    f.ws();
    f.eat(b'(')?;
    f.ws();
    let cmd = match f.symbol()? {
        "assert" => {
            let t = f.term()?;
            if f.store.sort(t) != SortStore::BOOL {
                return None;
            }
            Command::Assert(t, Vec::new())
        }
        "get-value" => {
            f.ws();
            f.eat(b'(')?;
            // Nearly always one term (KLEE asks one value at a time).
            let mut terms = Vec::with_capacity(1);
            loop {
                f.ws();
                if f.peek()? == b')' {
                    f.pos += 1;
                    break;
                }
                let start = f.pos;
                let t = f.term()?;
                terms.push((t, text[start..f.pos].to_string()));
            }
            if terms.is_empty() {
                return None;
            }
            Command::GetValue(terms)
        }
        head @ ("set-option" | "set-info") => {
            // A keyword and at most one atom as its value (as source text).
            f.ws();
            let (Tok::Keyword, k) = f.token()? else {
                return None;
            };
            f.ws();
            let v = match f.peek()? {
                b')' => String::new(),
                _ => f.token()?.1.to_string(),
            };
            if head == "set-option" {
                Command::SetOption(k.to_string(), v)
            } else {
                Command::SetInfo(k.to_string(), v)
            }
        }
        "check-sat" => Command::CheckSat,
        "exit" => Command::Exit,
        "reset" => Command::Reset,
        "get-model" => Command::GetModel,
        "set-logic" => {
            f.ws();
            Command::SetLogic(f.symbol()?.to_string())
        }
        "declare-fun" => {
            // A constant of a built-in sort, under a name not taken (else the general
            // parser reports it).
            f.ws();
            let name = f.symbol()?;
            if f.sig.has_fun(name)
                || builtin_op(name).is_some()
                || name == "true"
                || name == "false"
            {
                return None;
            }
            f.ws();
            f.eat(b'(')?;
            f.ws();
            f.eat(b')')?;
            let ret = f.sort(0)?;
            Command::DeclareFun {
                name: name.to_string(),
                params: Vec::new(),
                ret,
            }
        }
        _ => return None,
    };
    f.ws();
    f.eat(b')')?;
    f.ws();
    (f.pos == text.len()).then_some(cmd)
}

/// How deeply `Array` sorts may nest in the fast path (deeper ones go to the general
/// parser, which has its own limit).
const MAX_SORT_DEPTH: usize = 64;

/// What an open application applies.
#[derive(Clone, Copy)]
enum Head<'s> {
    Op(Op),
    /// A declared function or a macro, looked up when the arguments are in.
    Fun(&'s str),
}

/// An open parenthesis on the explicit stack.
#[derive(Clone, Copy)]
enum Frame<'s> {
    /// An application whose arguments so far are `args[start..]`.
    App { head: Head<'s>, start: usize },
    /// The binding list of a `let`; its bindings so far are `binds[start..]`.
    LetBinds { start: usize },
    /// The term of the binding `(name term)` of the `let` whose bindings start at `start`.
    LetBind { start: usize, name: &'s str },
    /// The body of a `let` whose bindings, now in scope, are `binds[start..]`.
    LetBody { start: usize },
}

/// A `let` binding; once in scope, `shadowed` is the binding of the same name it hides.
struct Bind<'s> {
    name: &'s str,
    term: TermId,
    shadowed: Option<usize>,
}

struct Fast<'a, 's> {
    store: &'a mut TermStore,
    sig: &'a Signature,
    trace: &'a mut Option<Trace>,
    text: &'s str,
    pos: usize,
    /// Open parentheses and the arguments read so far: on the stack for the terms KLEE sends
    /// (a get-value's term, most assertions), on the heap past that.
    frames: SmallVec<[Frame<'s>; 16]>,
    args: SmallVec<[TermId; 32]>,
    binds: Vec<Bind<'s>>,
    /// The innermost binding in scope of each let-bound name (an index into `binds`).
    env: FxHashMap<&'s str, usize>,
    /// Declared constants (and macros without parameters) already looked up in this
    /// command, and their terms: the signature does not change within a command, and the
    /// trace already notes them. A few names at most (KLEE's arrays).
    consts: Vec<(&'s str, TermId)>,
}

/// How many constants `Fast::consts` remembers.
const MAX_CONSTS: usize = 8;

impl<'a, 's> Fast<'a, 's> {
    #[inline(always)]
    fn ws(&mut self) {
        self.pos = lex::skip_space(self.text.as_bytes(), self.pos);
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.pos += 1)
    }

    /// The token at the current position if it is a simple symbol, a keyword, a numeral, or
    /// a `#x` / `#b` literal, ending at a delimiter (`lex::token`; decimals are left to the
    /// general parser).
    fn token(&mut self) -> Option<(Tok, &'s str)> {
        let b = &self.text.as_bytes()[self.pos..];
        let (tok, n) = lex::token(b)?;
        if tok == Tok::Decimal || !lex::ends_token(b.get(n)) {
            return None;
        }
        let s = &self.text[self.pos..self.pos + n];
        self.pos += n;
        Some((tok, s))
    }

    fn symbol(&mut self) -> Option<&'s str> {
        match self.token()? {
            (Tok::Symbol, s) => Some(s),
            _ => None,
        }
    }

    /// A built-in sort: `Bool`, `Int`, `Real`, `(_ BitVec w)`, `(Array s t)` (nested at most
    /// `MAX_SORT_DEPTH` deep). These names mean the built-in sorts whatever is declared,
    /// as in the general parser.
    fn sort(&mut self, depth: usize) -> Option<SortId> {
        if depth > MAX_SORT_DEPTH {
            return None;
        }
        self.ws();
        if self.peek()? != b'(' {
            return match self.symbol()? {
                "Bool" => Some(SortStore::BOOL),
                "Int" => Some(SortStore::INT),
                "Real" => Some(SortStore::REAL),
                _ => None,
            };
        }
        self.pos += 1;
        self.ws();
        let s = match self.symbol()? {
            "_" => {
                self.ws();
                if self.symbol()? != "BitVec" {
                    return None;
                }
                self.ws();
                let (Tok::Numeral, w) = self.token()? else {
                    return None;
                };
                let w: u32 = w.parse().ok().filter(|&w| w > 0)?;
                self.store.sorts.bv(w)
            }
            "Array" => {
                let i = self.sort(depth + 1)?;
                let e = self.sort(depth + 1)?;
                self.store.sorts.array(i, e)
            }
            _ => return None,
        };
        self.ws();
        self.eat(b')')?;
        Some(s)
    }

    /// One term, parsed with the explicit stack of open parentheses.
    fn term(&mut self) -> Option<TermId> {
        let mut done = self.open()?;
        loop {
            // A finished term goes to the innermost open parenthesis.
            if let Some(t) = done.take() {
                match self.frames.last().copied() {
                    None => return Some(t),
                    Some(Frame::App { .. }) => self.args.push(t),
                    Some(Frame::LetBind { start, name }) => {
                        self.ws();
                        self.eat(b')')?;
                        self.binds.push(Bind {
                            name,
                            term: t,
                            shadowed: None,
                        });
                        self.set_top(Frame::LetBinds { start });
                    }
                    Some(Frame::LetBody { start }) => {
                        self.ws();
                        self.eat(b')')?;
                        self.unbind(start);
                        self.frames.pop();
                        done = Some(t);
                        continue;
                    }
                    Some(Frame::LetBinds { .. }) => return None,
                }
            }
            // The innermost open parenthesis reads its next item or closes.
            self.ws();
            match self.frames.last().copied()? {
                Frame::App { head, start } => {
                    if self.peek()? == b')' {
                        self.pos += 1;
                        self.frames.pop();
                        done = Some(self.apply(head, start)?);
                    } else {
                        done = self.open()?;
                    }
                }
                Frame::LetBinds { start } => match self.peek()? {
                    b')' => {
                        self.pos += 1;
                        self.bind(start);
                        self.set_top(Frame::LetBody { start });
                        done = self.open()?;
                    }
                    b'(' => {
                        self.pos += 1;
                        self.ws();
                        let name = self.symbol()?;
                        self.set_top(Frame::LetBind { start, name });
                        done = self.open()?;
                    }
                    _ => return None,
                },
                Frame::LetBind { .. } | Frame::LetBody { .. } => return None,
            }
        }
    }

    fn set_top(&mut self, f: Frame<'s>) {
        if let Some(top) = self.frames.last_mut() {
            *top = f;
        }
    }

    /// Start the term at the current position: an atom or `(_ bvN w)` is returned whole;
    /// an application or a `let` opens a frame and gives `Some(None)`.
    fn open(&mut self) -> Option<Option<TermId>> {
        if self.frames.len() >= MAX_DEPTH {
            return None;
        }
        self.ws();
        if self.peek()? != b'(' {
            let (tok, s) = self.token()?;
            return self.atom(tok, s).map(Some);
        }
        self.pos += 1;
        self.ws();
        let start = self.args.len();
        if self.peek()? == b'(' {
            // ((_ name i ...) args)
            self.pos += 1;
            self.ws();
            if self.symbol()? != "_" {
                return None;
            }
            self.ws();
            let name = self.symbol()?;
            let mut idx: smallvec::SmallVec<[u32; 2]> = smallvec::SmallVec::new();
            loop {
                self.ws();
                if self.peek()? == b')' {
                    self.pos += 1;
                    break;
                }
                match self.token()? {
                    (Tok::Numeral, n) => idx.push(n.parse().ok()?),
                    _ => return None,
                }
            }
            let op = indexed_op(name, &idx)?;
            self.frames.push(Frame::App {
                head: Head::Op(op),
                start,
            });
            return Some(None);
        }
        let b = self.text.as_bytes();
        if b.get(self.pos) == Some(&b'_') && lex::ends_token(b.get(self.pos + 1)) {
            self.pos += 1;
            return self.bv_literal().map(Some);
        }
        match self.symbol()? {
            "let" => {
                self.ws();
                self.eat(b'(')?;
                self.frames.push(Frame::LetBinds {
                    start: self.binds.len(),
                });
                Some(None)
            }
            "forall" | "exists" | "!" | "match" => None,
            name => {
                let head = builtin_op(name).map_or(Head::Fun(name), Head::Op);
                self.frames.push(Frame::App { head, start });
                Some(None)
            }
        }
    }

    /// The rest of `(_ bvN w)` after its `_`, read straight from the bytes: what the
    /// tokens `bvN`, `w` and `)` give through `small_bv` (`N` of 1 to 19 digits, `w` a
    /// positive `u32`), or `None` where that would give up. Every KLEE query holds dozens.
    fn bv_literal(&mut self) -> Option<TermId> {
        self.ws();
        let b = self.text.as_bytes();
        if b.get(self.pos..self.pos + 2)? != b"bv" {
            return None;
        }
        let (v, n) = digits_u64(&b[self.pos + 2..], 19)?;
        self.pos += 2 + n;
        if !lex::ends_token(b.get(self.pos)) {
            return None;
        }
        self.ws();
        let (w, n) = digits_u64(&b[self.pos..], 10)?;
        self.pos += n;
        if !lex::ends_token(b.get(self.pos)) {
            return None;
        }
        let w = u32::try_from(w).ok().filter(|&w| w > 0)?;
        self.ws();
        self.eat(b')')?;
        Some(self.store.mk_bv_u64(v, w))
    }

    fn atom(&mut self, tok: Tok, s: &'s str) -> Option<TermId> {
        match tok {
            Tok::Numeral => Some(self.store.mk_num(BigUint::from_str_radix(s, 10).ok()?)),
            Tok::Hex | Tok::Binary => radix_literal(self.store, tok, s).ok(),
            Tok::Symbol => {
                if let Some(&i) = self.env.get(s) {
                    return Some(self.binds[i].term);
                }
                match s {
                    "true" => return Some(TermStore::TRUE),
                    "false" => return Some(TermStore::FALSE),
                    _ => {}
                }
                if let Some(&(_, t)) = self.consts.iter().find(|&&(n, _)| n == s) {
                    return Some(t);
                }
                // A function that takes arguments, used as a constant, fails apply_def's arity
                // check: the general parser gives the error.
                let def = lookup_fun(self.sig, self.trace, s)?;
                let t = apply_def(self.store, s, def, Vec::new()).ok()?;
                if self.consts.len() < MAX_CONSTS {
                    self.consts.push((s, t));
                }
                Some(t)
            }
            _ => None,
        }
    }

    /// Close the application of `head` to `args[start..]`.
    fn apply(&mut self, head: Head<'s>, start: usize) -> Option<TermId> {
        let args = &self.args[start..];
        let t = match head {
            Head::Op(Op::Sub) if args.len() == 1 => self.store.app_slice(Op::Neg, args).ok(),
            // What these take depends on the solver (`Signature::arity`): the general
            // parser decides.
            Head::Op(Op::Xor | Op::Add | Op::Mul | Op::Concat)
                if args.len() == 1 && self.sig.arity == ArityRule::Cvc5 =>
            {
                None
            }
            Head::Op(Op::BvSub) if args.len() > 2 => None,
            Head::Op(op) => self.store.app_slice(op, args).ok(),
            Head::Fun(name) => {
                let def = lookup_fun(self.sig, self.trace, name)?;
                apply_def(self.store, name, def, args.to_vec()).ok()
            }
        };
        self.args.truncate(start);
        t
    }

    /// Bring the bindings `binds[start..]` into scope, in order (a later one of the same
    /// name hides an earlier one, as in the general parser).
    fn bind(&mut self, start: usize) {
        for i in start..self.binds.len() {
            self.binds[i].shadowed = self.env.insert(self.binds[i].name, i);
        }
    }

    /// Take the bindings `binds[start..]` out of scope, restoring what they hid.
    fn unbind(&mut self, start: usize) {
        while self.binds.len() > start {
            let Some(b) = self.binds.pop() else { break };
            match b.shadowed {
                Some(i) => self.env.insert(b.name, i),
                None => self.env.remove(b.name),
            };
        }
    }
}

/// The value and length of the run of decimal digits at the start of `b`, if it has 1 to
/// `max` digits (`max` at most 19, so that the value fits in a `u64`).
fn digits_u64(b: &[u8], max: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    let mut n = 0;
    while let Some(&c) = b.get(n) {
        if !c.is_ascii_digit() {
            break;
        }
        if n == max {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
        n += 1;
    }
    (n > 0).then_some((v, n))
}
