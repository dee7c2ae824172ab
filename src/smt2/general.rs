//! The general parser: from the s-expression tree of one command (`lexer::Sexps`) to a
//! `Command` whose terms live in the term store, for every command the fast path (`fast`)
//! leaves to it, and for standalone terms and sorts. `let` is
//! expanded into shared nodes, `define-fun` macros are inlined, quantifier variables and
//! macro parameters get fresh internal symbols (so no later substitution can capture a
//! global of the same name). Every term is sort-checked as it is built. Applications whose
//! number of arguments the solvers disagree on are taken as the client's solver takes
//! them (`Signature::arity`: z3's `(distinct x)` is true, its `(bvadd v)` is `v`, cvc5
//! refuses both; yices takes `(bvsub a b c)`, z3 and cvc5 do not), so the client's state
//! never holds what its solver's would not.
//!
//! An error is one of three kinds: `Syntax` (the input is not SMT-LIB), `Sort` (ill-sorted
//! or unknown names), or `Unsupported` (valid-looking input using theories or constructs
//! smtproxy does not model: the session forwards such a command verbatim and lets the
//! solver decide). Nesting deeper than `MAX_DEPTH` is refused with a clear message.
//!
//! Invariants: the parser works on the tree of `lexer::Sexps` with an explicit depth bound
//! (`MAX_DEPTH` for terms, 1000 for sorts) instead of unbounded recursion; it builds terms
//! only through the store's sort-checking constructors and the shared vocabulary of `ops`,
//! as the fast path does; its trace (when kept) notes every signature lookup it made.

use super::command::Command;
use super::lexer::{unescape_string, Sexps, Tok};
use super::ops::{
    apply_def, builtin_op, coerce_to, err, indexed_op, lookup_fun, lookup_sort, radix_literal,
    small_bv, ErrorKind, PResult, ParseError, Trace, MAX_DEPTH,
};
use crate::term::build::SortError;
use crate::term::signature::{ArityRule, FunDef, Signature, SortDef};
use crate::term::{Op, Sort, SortId, SortStore, TermId, TermStore};
use num_bigint::BigUint;
use num_traits::Num;
use rustc_hash::FxHashMap;

/// The general parser alone: one command from its s-expression tree.
pub(super) fn general(
    store: &mut TermStore,
    sig: &Signature,
    text: &str,
    trace: Option<Trace>,
) -> (PResult<Command>, Option<Trace>) {
    let sx = match one_root(text, "expected exactly one command") {
        Ok(sx) => sx,
        Err(e) => return (Err(e), trace),
    };
    let mut p = Parser::new(store, sig, &sx, trace);
    let r = p.command(sx.roots[0]);
    (r, p.trace.take())
}

/// The s-expressions of `text`, which must be exactly one (else `msg`).
fn one_root<'s>(text: &'s str, msg: &str) -> PResult<Sexps<'s>> {
    let sx = Sexps::parse(text).map_err(|e| ParseError {
        offset: e.offset,
        msg: e.msg,
        kind: ErrorKind::Syntax,
    })?;
    if sx.roots.len() != 1 {
        return err(0, ErrorKind::Syntax, msg);
    }
    Ok(sx)
}

/// Parse a standalone term (used for solver answers, e.g. model values).
pub fn parse_term(store: &mut TermStore, sig: &Signature, text: &str) -> PResult<TermId> {
    let sx = one_root(text, "expected exactly one term")?;
    Parser::new(store, sig, &sx, None).term(sx.roots[0], 0)
}

/// Parse a standalone sort.
pub fn parse_sort(store: &mut TermStore, sig: &Signature, text: &str) -> PResult<SortId> {
    let sx = one_root(text, "expected exactly one sort")?;
    Parser::new(store, sig, &sx, None).sort(sx.roots[0], 0)
}

struct Parser<'a, 's> {
    store: &'a mut TermStore,
    sig: &'a Signature,
    sx: &'a Sexps<'s>,
    /// let-bound names, quantified variables and macro parameters: name -> stack of terms.
    env: FxHashMap<String, Vec<TermId>>,
    named: Vec<(String, TermId)>,
    /// define-sort / datatype parameters in scope.
    sort_params: Vec<(String, SortId)>,
    /// The signature lookups made while building terms, when asked for (`parse_traced`).
    trace: Option<Trace>,
}

impl<'a, 's> Parser<'a, 's> {
    fn new(
        store: &'a mut TermStore,
        sig: &'a Signature,
        sx: &'a Sexps<'s>,
        trace: Option<Trace>,
    ) -> Self {
        Parser {
            store,
            sig,
            sx,
            env: FxHashMap::default(),
            named: Vec::new(),
            sort_params: Vec::new(),
            trace,
        }
    }

    /// `sig.fun`, noted in the trace.
    fn fun_def(&mut self, name: &str) -> Option<&'a FunDef> {
        lookup_fun(self.sig, &mut self.trace, name)
    }

    /// `sig.sort`, noted in the trace.
    fn sort_def(&mut self, name: &str) -> Option<&'a SortDef> {
        lookup_sort(self.sig, &mut self.trace, name)
    }

    fn off(&self, id: u32) -> usize {
        self.sx.offset(id)
    }
    fn kids(&self, id: u32) -> &'a [u32] {
        self.sx.list(id).unwrap_or(&[])
    }
    fn sym(&self, id: u32, what: &str) -> PResult<&'s str> {
        match self.sx.symbol(id) {
            Some(s) => Ok(s),
            None => err(
                self.off(id),
                ErrorKind::Syntax,
                format!("invalid {what}, symbol expected"),
            ),
        }
    }
    fn numeral(&self, id: u32) -> PResult<u32> {
        match self.sx.atom(id) {
            Some((Tok::Numeral, s)) => s.parse::<u32>().or_else(|_| {
                err(
                    self.off(id),
                    ErrorKind::Sort,
                    format!("numeral {s} is too large"),
                )
            }),
            _ => err(self.off(id), ErrorKind::Syntax, "numeral expected"),
        }
    }
    fn sort_err(&self, id: u32, e: SortError) -> ParseError {
        ParseError {
            offset: self.off(id),
            msg: e.0,
            kind: ErrorKind::Sort,
        }
    }

    fn command(&mut self, root: u32) -> PResult<Command> {
        let items = match self.sx.list(root) {
            Some(k) if !k.is_empty() => k,
            _ => {
                return err(
                    self.off(root),
                    ErrorKind::Syntax,
                    "invalid command, '(' <command> expected",
                )
            }
        };
        let head = self.sym(items[0], "command")?;
        let args = &items[1..];
        let n = args.len();
        let want = |k: usize| -> PResult<()> {
            if n == k {
                Ok(())
            } else {
                err(
                    self.off(root),
                    ErrorKind::Syntax,
                    format!("invalid {head} command, expected {k} argument(s)"),
                )
            }
        };
        Ok(match head {
            "set-logic" => {
                want(1)?;
                Command::SetLogic(self.sym(args[0], "logic")?.to_string())
            }
            "set-option" | "set-info" => {
                if n < 1 {
                    return err(
                        self.off(root),
                        ErrorKind::Syntax,
                        format!("invalid {head} command, keyword expected"),
                    );
                }
                let Some(k) = self.sx.keyword(args[0]) else {
                    return err(self.off(args[0]), ErrorKind::Syntax, "keyword expected");
                };
                let v = args
                    .get(1)
                    .map(|&v| self.sx.source(v).to_string())
                    .unwrap_or_default();
                if head == "set-option" {
                    Command::SetOption(k.to_string(), v)
                } else {
                    Command::SetInfo(k.to_string(), v)
                }
            }
            "get-info" | "get-option" => {
                want(1)?;
                let Some(k) = self.sx.keyword(args[0]) else {
                    return err(self.off(args[0]), ErrorKind::Syntax, "keyword expected");
                };
                if head == "get-info" {
                    Command::GetInfo(k.to_string())
                } else {
                    Command::GetOption(k.to_string())
                }
            }
            "declare-sort" => {
                if !(1..=2).contains(&n) {
                    return err(
                        self.off(root),
                        ErrorKind::Syntax,
                        "invalid declare-sort command",
                    );
                }
                let name = self.sym(args[0], "sort name")?;
                if self.sig.sort(name).is_some() {
                    return err(
                        self.off(args[0]),
                        ErrorKind::Sort,
                        "invalid sort declaration, sort already declared/defined",
                    );
                }
                let arity = if n == 2 { self.numeral(args[1])? } else { 0 };
                Command::DeclareSort(name.to_string(), arity)
            }
            "define-sort" => {
                want(3)?;
                let name = self.sym(args[0], "sort name")?;
                if self.sig.sort(name).is_some() {
                    return err(
                        self.off(args[0]),
                        ErrorKind::Sort,
                        "invalid sort definition, sort already declared/defined",
                    );
                }
                let mut params = Vec::new();
                for &p in self.kids(args[1]) {
                    params.push(self.sym(p, "sort parameter")?.to_string());
                }
                // Check the body now, with the parameters as opaque sorts.
                let saved = self.sort_params.len();
                for p in &params {
                    let s = self.store.sorts.intern(Sort::Named {
                        name: p.clone(),
                        indices: vec![],
                        args: vec![],
                    });
                    self.sort_params.push((p.clone(), s));
                }
                let r = self.sort(args[2], 0);
                self.sort_params.truncate(saved);
                r?;
                Command::DefineSort {
                    name: name.to_string(),
                    params,
                    body: self.sx.source(args[2]).to_string(),
                }
            }
            "declare-fun" => {
                want(3)?;
                let name = self.sym(args[0], "function name")?;
                let mut params = Vec::new();
                let Some(ps) = self.sx.list(args[1]) else {
                    return err(self.off(args[1]), ErrorKind::Syntax, "sort list expected");
                };
                for &p in ps {
                    params.push(self.sort(p, 0)?);
                }
                let ret = self.sort(args[2], 0)?;
                self.check_fresh(args[0], name)?;
                Command::DeclareFun {
                    name: name.to_string(),
                    params,
                    ret,
                }
            }
            "declare-const" => {
                want(2)?;
                let name = self.sym(args[0], "constant name")?;
                let ret = self.sort(args[1], 0)?;
                self.check_fresh(args[0], name)?;
                Command::DeclareFun {
                    name: name.to_string(),
                    params: vec![],
                    ret,
                }
            }
            "define-fun" => {
                want(4)?;
                let name = self.sym(args[0], "function name")?;
                let params = self.sorted_vars(args[1])?;
                let ret = self.sort(args[2], 0)?;
                let (body, _) = self.with_vars(&params, |p| p.term(args[3], 0))?;
                let body = self.coerce(args[3], body, ret)?;
                self.check_fresh(args[0], name)?;
                let params = params
                    .into_iter()
                    .map(|(n, s, t)| (n, s, self.store.op_sym(t)))
                    .collect();
                Command::DefineFun {
                    name: name.to_string(),
                    params,
                    ret,
                    body,
                }
            }
            "define-fun-rec" => {
                want(4)?;
                let name = self.sym(args[0], "function name")?;
                let params = self.sorted_vars(args[1])?;
                let ret = self.sort(args[2], 0)?;
                Command::DefineFunsRec(vec![(
                    name.to_string(),
                    params.into_iter().map(|p| p.1).collect(),
                    ret,
                )])
            }
            "define-funs-rec" => {
                want(2)?;
                let mut decls = Vec::new();
                for &d in self.kids(args[0]) {
                    let k = self.kids(d);
                    if k.len() != 3 {
                        return err(
                            self.off(d),
                            ErrorKind::Syntax,
                            "invalid function declaration",
                        );
                    }
                    let name = self.sym(k[0], "function name")?;
                    let params = self.sorted_vars(k[1])?;
                    let ret = self.sort(k[2], 0)?;
                    decls.push((
                        name.to_string(),
                        params.into_iter().map(|p| p.1).collect(),
                        ret,
                    ));
                }
                Command::DefineFunsRec(decls)
            }
            "declare-datatype" | "declare-datatypes" => self.datatypes(head, args, root)?,
            "push" | "pop" => {
                if n > 1 {
                    return err(
                        self.off(root),
                        ErrorKind::Syntax,
                        format!("invalid {head} command"),
                    );
                }
                let k = if n == 1 { self.numeral(args[0])? } else { 1 };
                if head == "push" {
                    Command::Push(k)
                } else {
                    Command::Pop(k)
                }
            }
            "assert" => {
                want(1)?;
                let t = self.term(args[0], 0)?;
                if self.store.sort(t) != SortStore::BOOL {
                    return err(
                        self.off(args[0]),
                        ErrorKind::Sort,
                        "assert expects a Bool term",
                    );
                }
                Command::Assert(t, std::mem::take(&mut self.named))
            }
            "check-sat" => {
                want(0)?;
                Command::CheckSat
            }
            "check-sat-assuming" => {
                want(1)?;
                let Some(ls) = self.sx.list(args[0]) else {
                    return err(
                        self.off(args[0]),
                        ErrorKind::Syntax,
                        "list of literals expected",
                    );
                };
                let mut lits = Vec::new();
                for &l in ls {
                    let t = self.term(l, 0)?;
                    if self.store.sort(t) != SortStore::BOOL {
                        return err(
                            self.off(l),
                            ErrorKind::Sort,
                            "check-sat-assuming expects Bool literals",
                        );
                    }
                    lits.push(t);
                }
                Command::CheckSatAssuming(lits)
            }
            "get-value" => {
                want(1)?;
                let Some(ts) = self.sx.list(args[0]) else {
                    return err(
                        self.off(args[0]),
                        ErrorKind::Syntax,
                        "list of terms expected",
                    );
                };
                if ts.is_empty() {
                    return err(
                        self.off(args[0]),
                        ErrorKind::Syntax,
                        "get-value expects at least one term",
                    );
                }
                let mut out = Vec::new();
                for &t in ts {
                    let id = self.term(t, 0)?;
                    out.push((id, self.sx.source(t).to_string()));
                }
                Command::GetValue(out)
            }
            "get-model" => simple(want(0), Command::GetModel)?,
            "get-assignment" => simple(want(0), Command::GetAssignment)?,
            "get-unsat-core" => simple(want(0), Command::GetUnsatCore)?,
            "get-unsat-assumptions" => simple(want(0), Command::GetUnsatAssumptions)?,
            "get-proof" => simple(want(0), Command::GetProof)?,
            "reset" => simple(want(0), Command::Reset)?,
            "reset-assertions" => simple(want(0), Command::ResetAssertions)?,
            "exit" => simple(want(0), Command::Exit)?,
            "echo" => {
                want(1)?;
                match self.sx.atom(args[0]) {
                    Some((Tok::Str, s)) => Command::Echo(s.to_string()),
                    _ => {
                        return err(
                            self.off(args[0]),
                            ErrorKind::Syntax,
                            "string literal expected",
                        )
                    }
                }
            }
            _ => Command::Other(self.sx.text.to_string()),
        })
    }

    fn check_fresh(&self, id: u32, name: &str) -> PResult<()> {
        if self.sig.has_fun(name) || builtin_op(name).is_some() || name == "true" || name == "false"
        {
            return err(self.off(id), ErrorKind::Sort, format!("invalid declaration, function '{name}' (with the given signature) already declared"));
        }
        Ok(())
    }

    fn datatypes(&mut self, head: &str, args: &[u32], root: u32) -> PResult<Command> {
        // Collect (name, arity, constructor-decl-list node)
        let mut dts: Vec<(String, u32, u32)> = Vec::new();
        if head == "declare-datatype" {
            if args.len() != 2 {
                return err(
                    self.off(root),
                    ErrorKind::Syntax,
                    "invalid declare-datatype command",
                );
            }
            dts.push((self.sym(args[0], "datatype name")?.to_string(), 0, args[1]));
        } else {
            if args.len() != 2 {
                return err(
                    self.off(root),
                    ErrorKind::Syntax,
                    "invalid declare-datatypes command",
                );
            }
            let decls = self.kids(args[0]);
            let bodies = self.kids(args[1]);
            if decls.len() != bodies.len() {
                return err(
                    self.off(root),
                    ErrorKind::Syntax,
                    "datatype declarations and definitions differ in number",
                );
            }
            for (&d, &b) in decls.iter().zip(bodies) {
                let k = self.kids(d);
                if k.len() != 2 {
                    return err(self.off(d), ErrorKind::Syntax, "invalid sort declaration");
                }
                dts.push((
                    self.sym(k[0], "datatype name")?.to_string(),
                    self.numeral(k[1])?,
                    b,
                ));
            }
        }
        let sorts: Vec<(String, u32)> = dts.iter().map(|(n, a, _)| (n.clone(), *a)).collect();
        let mut funs = Vec::new();
        for (name, arity, body) in &dts {
            // Parametric datatypes: (par (T ...) (ctors)). Constructors are then polymorphic,
            // which smtproxy does not model.
            let ctors = self.kids(*body);
            if *arity > 0 || ctors.first().is_some_and(|&c| self.sx.is_symbol(c, "par")) {
                return err(
                    self.off(*body),
                    ErrorKind::Unsupported,
                    "parametric datatypes are forwarded",
                );
            }
            let dt = self.store.sorts.intern(Sort::Named {
                name: name.clone(),
                indices: vec![],
                args: vec![],
            });
            for &c in ctors {
                let (cname, fields) = match self.sx.symbol(c) {
                    Some(s) => (s, &[][..]),
                    None => {
                        let k = self.kids(c);
                        if k.is_empty() {
                            return err(self.off(c), ErrorKind::Syntax, "constructor expected");
                        }
                        (self.sym(k[0], "constructor")?, &k[1..])
                    }
                };
                let mut field_sorts = Vec::new();
                for &f in fields {
                    let fk = self.kids(f);
                    if fk.len() != 2 {
                        return err(self.off(f), ErrorKind::Syntax, "selector expected");
                    }
                    let sel = self.sym(fk[0], "selector")?;
                    // A field may mention any datatype of this declaration.
                    let fs = self.sort_with_pending(fk[1], &sorts)?;
                    funs.push((sel.to_string(), vec![dt], fs));
                    field_sorts.push(fs);
                }
                funs.push((cname.to_string(), field_sorts, dt));
                funs.push((format!("is-{cname}"), vec![dt], SortStore::BOOL));
            }
        }
        Ok(Command::DeclareDatatypes { sorts, funs })
    }

    fn sort_with_pending(&mut self, id: u32, pending: &[(String, u32)]) -> PResult<SortId> {
        if let Some(s) = self.sx.symbol(id) {
            if pending.iter().any(|(n, _)| n == s) {
                return Ok(self.store.sorts.intern(Sort::Named {
                    name: s.to_string(),
                    indices: vec![],
                    args: vec![],
                }));
            }
        }
        self.sort(id, 0)
    }

    /// `((x S) ...)`, with fresh internal symbols for each variable.
    fn sorted_vars(&mut self, id: u32) -> PResult<Vec<(String, SortId, TermId)>> {
        let Some(vs) = self.sx.list(id) else {
            return err(
                self.off(id),
                ErrorKind::Syntax,
                "sorted variable list expected",
            );
        };
        let mut out = Vec::new();
        for &v in vs {
            let k = self.kids(v);
            if k.len() != 2 {
                return err(
                    self.off(v),
                    ErrorKind::Syntax,
                    "sorted variable (name sort) expected",
                );
            }
            let name = self.sym(k[0], "variable name")?;
            let s = self.sort(k[1], 0)?;
            let sym = self.store.fresh_sym(name);
            let t = self.store.mk_sym_app(sym, vec![], s);
            out.push((name.to_string(), s, t));
        }
        Ok(out)
    }

    fn with_vars<T>(
        &mut self,
        vars: &[(String, SortId, TermId)],
        f: impl FnOnce(&mut Self) -> PResult<T>,
    ) -> PResult<(T, Vec<TermId>)> {
        for (n, _, t) in vars {
            self.env.entry(n.clone()).or_default().push(*t);
        }
        let r = f(self);
        for (n, _, _) in vars {
            if let Some(v) = self.env.get_mut(n) {
                v.pop();
                if v.is_empty() {
                    self.env.remove(n);
                }
            }
        }
        Ok((r?, vars.iter().map(|v| v.2).collect()))
    }

    /// Accept an Int where a Real is wanted (as solvers do), refuse other mismatches.
    fn coerce(&mut self, id: u32, t: TermId, want: SortId) -> PResult<TermId> {
        coerce_to(self.store, t, want).map_err(|msg| self.sort_err(id, SortError(msg)))
    }

    fn sort(&mut self, id: u32, depth: usize) -> PResult<SortId> {
        if depth > 1000 {
            return err(self.off(id), ErrorKind::Syntax, "sort nested too deeply");
        }
        if let Some(name) = self.sx.symbol(id) {
            if let Some((_, s)) = self.sort_params.iter().rev().find(|(n, _)| n == name) {
                return Ok(*s);
            }
            return match name {
                "Bool" => Ok(SortStore::BOOL),
                "Int" => Ok(SortStore::INT),
                "Real" => Ok(SortStore::REAL),
                _ => self.named_sort(id, name, &[], depth),
            };
        }
        let k = self.kids(id);
        if k.is_empty() {
            return err(self.off(id), ErrorKind::Syntax, "sort expected");
        }
        if self.sx.is_symbol(k[0], "_") {
            if k.len() == 3 && self.sx.is_symbol(k[1], "BitVec") {
                let w = self.numeral(k[2])?;
                if w == 0 {
                    return err(
                        self.off(k[2]),
                        ErrorKind::Sort,
                        "bit-vector width must be positive",
                    );
                }
                return Ok(self.store.sorts.bv(w));
            }
            return err(
                self.off(id),
                ErrorKind::Unsupported,
                format!("sort {} is not modelled", self.sx.source(id)),
            );
        }
        let name = self.sym(k[0], "sort")?;
        let mut args = Vec::new();
        for &a in &k[1..] {
            args.push(self.sort(a, depth + 1)?);
        }
        if name == "Array" {
            if args.len() != 2 {
                return err(self.off(id), ErrorKind::Sort, "Array expects two sorts");
            }
            return Ok(self.store.sorts.array(args[0], args[1]));
        }
        self.named_sort(id, name, &args, depth)
    }

    /// A declared sort or an alias expanded; `depth` counts alias expansions too, so an
    /// alias that (after a redefinition) refers to itself ends in an error, not a loop.
    fn named_sort(
        &mut self,
        id: u32,
        name: &str,
        args: &[SortId],
        depth: usize,
    ) -> PResult<SortId> {
        match self.sort_def(name) {
            Some(SortDef::Declared(arity)) => {
                if *arity as usize != args.len() {
                    return err(
                        self.off(id),
                        ErrorKind::Sort,
                        format!("sort {name} expects {arity} argument(s)"),
                    );
                }
                Ok(self.store.sorts.intern(Sort::Named {
                    name: name.to_string(),
                    indices: vec![],
                    args: args.to_vec(),
                }))
            }
            Some(SortDef::Alias { params, body }) => {
                if params.len() != args.len() {
                    return err(
                        self.off(id),
                        ErrorKind::Sort,
                        format!("sort {name} expects {} argument(s)", params.len()),
                    );
                }
                let body = body.clone();
                let sx = Sexps::parse(&body).map_err(|e| ParseError {
                    offset: self.off(id),
                    msg: e.msg,
                    kind: ErrorKind::Syntax,
                })?;
                let mut p = Parser {
                    store: self.store,
                    sig: self.sig,
                    sx: &sx,
                    env: FxHashMap::default(),
                    named: Vec::new(),
                    sort_params: params.iter().cloned().zip(args.iter().copied()).collect(),
                    // The body's own lookups are part of this parse's.
                    trace: self.trace.take(),
                };
                let root = sx.roots.first().copied().unwrap_or(0);
                let r = p.sort(root, depth + 1).map_err(|mut e| {
                    e.offset = self.sx.offset(id);
                    e
                });
                self.trace = p.trace.take();
                r
            }
            None => err(
                self.off(id),
                ErrorKind::Unsupported,
                format!("unknown sort '{name}'"),
            ),
        }
    }

    fn term(&mut self, id: u32, depth: usize) -> PResult<TermId> {
        if depth > MAX_DEPTH {
            return err(
                self.off(id),
                ErrorKind::Syntax,
                format!("term nested deeper than {MAX_DEPTH} levels"),
            );
        }
        if let Some((tok, text)) = self.sx.atom(id) {
            return self.atom(id, tok, text);
        }
        let k = self.kids(id);
        if k.is_empty() {
            return err(self.off(id), ErrorKind::Syntax, "term expected, got '()'");
        }
        // (_ bvN w) literal, or an indexed identifier used as a constant
        if self.sx.is_symbol(k[0], "_") {
            return self.indexed_const(id, k);
        }
        if let Some(h) = self.sx.symbol(k[0]) {
            match h {
                "let" if self.sx.atom(k[0]).map(|a| a.0) == Some(Tok::Symbol) => {
                    return self.let_term(id, k, depth)
                }
                "forall" | "exists" if self.sx.atom(k[0]).map(|a| a.0) == Some(Tok::Symbol) => {
                    if k.len() != 3 {
                        return err(self.off(id), ErrorKind::Syntax, format!("invalid {h}"));
                    }
                    let vars = self.sorted_vars(k[1])?;
                    let vs: Vec<_> = vars.iter().map(|v| (self.store.op_sym(v.2), v.1)).collect();
                    let (body, _) = self.with_vars(&vars, |p| p.term(k[2], depth + 1))?;
                    return self
                        .store
                        .mk_quant(h == "forall", vs, body)
                        .map_err(|e| self.sort_err(id, e));
                }
                "!" => {
                    if k.len() < 3 {
                        return err(self.off(id), ErrorKind::Syntax, "invalid annotation");
                    }
                    let t = self.term(k[1], depth + 1)?;
                    let mut i = 2;
                    while i < k.len() {
                        if self.sx.keyword(k[i]) == Some(":named") {
                            let Some(&nid) = k.get(i + 1) else {
                                return err(
                                    self.off(k[i]),
                                    ErrorKind::Syntax,
                                    ":named expects a symbol",
                                );
                            };
                            let n = self.sym(nid, "name")?;
                            self.named.push((n.to_string(), t));
                        }
                        i += 1;
                    }
                    // Attributes as one line without comments (a `;` comment kept in
                    // the text would swallow the `)` the printer puts after it).
                    let attrs = k[2..]
                        .iter()
                        .map(|&a| self.sx.flat_source(a))
                        .collect::<Vec<_>>()
                        .join(" ");
                    return Ok(self.store.mk_annot(t, &attrs));
                }
                "match" => return err(self.off(id), ErrorKind::Unsupported, "match is forwarded"),
                _ => {}
            }
        }
        // Qualified or indexed function heads.
        let head = k[0];
        let mut args: smallvec::SmallVec<[TermId; 4]> =
            smallvec::SmallVec::with_capacity(k.len() - 1);
        for &a in &k[1..] {
            args.push(self.term(a, depth + 1)?);
        }
        if let Some(hk) = self.sx.list(head) {
            if hk.len() == 3 && self.sx.is_symbol(hk[0], "as") && self.sx.is_symbol(hk[1], "const")
            {
                let s = self.sort(hk[2], 0)?;
                if args.len() != 1 {
                    return err(
                        self.off(id),
                        ErrorKind::Sort,
                        "constant array expects one value",
                    );
                }
                return self
                    .store
                    .mk_const_array(s, args[0])
                    .map_err(|e| self.sort_err(id, e));
            }
            if !hk.is_empty() && self.sx.is_symbol(hk[0], "_") && hk.len() >= 3 {
                let name = self.sym(hk[1], "indexed identifier")?;
                let mut idx = Vec::new();
                for &i in &hk[2..] {
                    match self.sx.atom(i) {
                        Some((Tok::Numeral, _)) => idx.push(self.numeral(i)?),
                        _ => {
                            return err(self.off(head), ErrorKind::Unsupported, "non-numeral index")
                        }
                    }
                }
                if let Some(op) = indexed_op(name, &idx) {
                    return self
                        .store
                        .app_slice(op, &args)
                        .map_err(|e| self.sort_err(id, e));
                }
            }
            return err(
                self.off(head),
                ErrorKind::Unsupported,
                format!("function {} is not modelled", self.sx.source(head)),
            );
        }
        let name = self.sym(head, "function")?;
        if let Some(op) = builtin_op(name) {
            let op = if op == Op::Sub && args.len() == 1 {
                Op::Neg
            } else {
                op
            };
            if let Some(t) = self.as_solver_takes(id, op, &args)? {
                return Ok(t);
            }
            return self
                .store
                .app_slice(op, &args)
                .map_err(|e| self.sort_err(id, e));
        }
        self.apply(id, name, args.into_vec())
    }

    /// An application whose number of arguments the solvers disagree on, as the client's
    /// solver takes it (`Signature::arity`): `Some` term it means, an error where the
    /// solver refuses it, `None` where it is built as it is (and sort-checked, as for
    /// every solver).
    fn as_solver_takes(&mut self, id: u32, op: Op, args: &[TermId]) -> PResult<Option<TermId>> {
        let rule = self.sig.arity;
        if op == Op::BvSub && args.len() > 2 && rule != ArityRule::Yices {
            return err(
                self.off(id),
                ErrorKind::Sort,
                format!("BvSub expects 2 argument(s), got {}", args.len()),
            );
        }
        let &[a] = args else {
            return Ok(None);
        };
        let bv_assoc = matches!(op, Op::BvAdd | Op::BvAnd | Op::BvOr | Op::BvXor | Op::BvMul);
        let t = match (rule, op) {
            // z3 checks no sort here: `(< b)` with a Bool b is true too.
            (ArityRule::Z3, Op::Distinct | Op::Lt | Op::Le | Op::Gt | Op::Ge) => {
                return Ok(Some(TermStore::TRUE))
            }
            (ArityRule::Z3, Op::IntDiv) => a,
            (ArityRule::Z3, Op::RealDiv) if self.store.sort(a) == SortStore::REAL => a,
            (ArityRule::Z3 | ArityRule::Yices, _) if bv_assoc => a,
            (ArityRule::Z3, Op::BvXnor) => {
                // Checked as the binary operator would be, then negated.
                self.store
                    .check_app(op, &[a, a])
                    .map_err(|e| self.sort_err(id, e))?;
                return self
                    .store
                    .app_slice(Op::BvNot, &[a])
                    .map(Some)
                    .map_err(|e| self.sort_err(id, e));
            }
            (ArityRule::Cvc5, Op::Xor | Op::Add | Op::Mul | Op::Concat) => {
                return err(
                    self.off(id),
                    ErrorKind::Sort,
                    format!("{op:?} expects at least 2 argument(s), got 1"),
                );
            }
            _ => return Ok(None),
        };
        // The argument's sort as the operator wants it: checked as if given twice.
        self.store
            .check_app(op, &[a, a])
            .map_err(|e| self.sort_err(id, e))?;
        Ok(Some(t))
    }

    fn apply(&mut self, id: u32, name: &str, args: Vec<TermId>) -> PResult<TermId> {
        match self.fun_def(name) {
            Some(def) => {
                apply_def(self.store, name, def, args).map_err(|m| self.sort_err(id, SortError(m)))
            }
            None => err(
                self.off(id),
                ErrorKind::Unsupported,
                format!("unknown function '{name}'"),
            ),
        }
    }

    fn let_term(&mut self, id: u32, k: &[u32], depth: usize) -> PResult<TermId> {
        if k.len() != 3 {
            return err(self.off(id), ErrorKind::Syntax, "invalid let");
        }
        let Some(binds) = self.sx.list(k[1]) else {
            return err(self.off(k[1]), ErrorKind::Syntax, "let bindings expected");
        };
        let mut vals = Vec::with_capacity(binds.len());
        for &b in binds {
            let bk = self.kids(b);
            if bk.len() != 2 {
                return err(
                    self.off(b),
                    ErrorKind::Syntax,
                    "let binding (name term) expected",
                );
            }
            let n = self.sym(bk[0], "let variable")?;
            let v = self.term(bk[1], depth + 1)?;
            vals.push((n, v));
        }
        for (n, v) in &vals {
            self.env.entry(n.to_string()).or_default().push(*v);
        }
        let r = self.term(k[2], depth + 1);
        for (n, _) in &vals {
            if let Some(s) = self.env.get_mut(*n) {
                s.pop();
                if s.is_empty() {
                    self.env.remove(*n);
                }
            }
        }
        r
    }

    fn atom(&mut self, id: u32, tok: Tok, text: &str) -> PResult<TermId> {
        match tok {
            Tok::Numeral => {
                let n = BigUint::from_str_radix(text, 10).map_err(|_| ParseError {
                    offset: self.off(id),
                    msg: "invalid numeral".into(),
                    kind: ErrorKind::Syntax,
                })?;
                Ok(self.store.mk_num(n))
            }
            Tok::Decimal => Ok(self.store.mk_dec(text)),
            Tok::Hex | Tok::Binary => {
                radix_literal(self.store, tok, text).map_err(|(kind, msg)| ParseError {
                    offset: self.off(id),
                    msg: msg.into(),
                    kind,
                })
            }
            Tok::Str => Ok(self.store.mk_str(&unescape_string(text))),
            Tok::Keyword => err(
                self.off(id),
                ErrorKind::Syntax,
                format!("unexpected keyword {text}"),
            ),
            Tok::Symbol | Tok::Quoted => {
                if let Some(t) = self.env.get(text).and_then(|v| v.last()) {
                    return Ok(*t);
                }
                if tok == Tok::Symbol {
                    if text == "true" {
                        return Ok(TermStore::TRUE);
                    }
                    if text == "false" {
                        return Ok(TermStore::FALSE);
                    }
                }
                match self.fun_def(text) {
                    Some(def) if def.arity() == 0 => self.apply(id, text, vec![]),
                    Some(_) => err(
                        self.off(id),
                        ErrorKind::Sort,
                        format!("function '{text}' expects arguments"),
                    ),
                    None => {
                        if builtin_op(text).is_some() {
                            err(
                                self.off(id),
                                ErrorKind::Sort,
                                format!("operator '{text}' used without arguments"),
                            )
                        } else {
                            err(
                                self.off(id),
                                ErrorKind::Unsupported,
                                format!("unknown constant '{text}'"),
                            )
                        }
                    }
                }
            }
        }
    }

    /// `(_ bvN w)`, or another indexed constant (forwarded).
    fn indexed_const(&mut self, id: u32, k: &[u32]) -> PResult<TermId> {
        if k.len() == 3 {
            if let Some(name) = self.sx.symbol(k[1]) {
                if let Some((Tok::Numeral, w)) = self.sx.atom(k[2]) {
                    if let Some(t) = small_bv(self.store, name, w) {
                        return Ok(t);
                    }
                }
                if let Some(digits) = name.strip_prefix("bv") {
                    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                        let v = BigUint::from_str_radix(digits, 10).map_err(|_| ParseError {
                            offset: self.off(id),
                            msg: "invalid bit-vector literal".into(),
                            kind: ErrorKind::Syntax,
                        })?;
                        let w = self.numeral(k[2])?;
                        if w == 0 {
                            return err(
                                self.off(id),
                                ErrorKind::Sort,
                                "bit-vector width must be positive",
                            );
                        }
                        return Ok(self.store.mk_bv(&v, w));
                    }
                }
            }
        }
        err(
            self.off(id),
            ErrorKind::Unsupported,
            format!("indexed constant {} is not modelled", self.sx.source(id)),
        )
    }
}

fn simple(r: PResult<()>, c: Command) -> PResult<Command> {
    r.map(|_| c)
}

impl TermStore {
    /// The symbol of a `Sym` leaf.
    pub fn op_sym(&self, t: TermId) -> crate::term::Sym {
        match self.op(t) {
            Op::Sym(s) => s,
            _ => crate::term::Sym(u32::MAX),
        }
    }
}
