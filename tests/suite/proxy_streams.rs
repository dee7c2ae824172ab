//! Random sessions of rich bit-vector and array terms in KLEE's and Manticore's fragment,
//! with blocks asked again after a `(reset)` under fresh names, run through the real solver
//! and through smtproxy.
//!
//! A script is a run of blocks, each after a `(reset)` (but the first): `:produce-models`,
//! the logic (QF_AUFBV, or ALL with Int), declarations of Bool, bit-vector (widths 1, 3, 8,
//! 13, 16, 32, 64) and `(Array (_ BitVec 32) (_ BitVec 8))` constants, `define-fun` macros
//! with and without parameters, and assertions over every bit-vector operator (shifts past
//! the width, division by zero, `#xab`, `#xAB`, `#b` and `(_ bvN w)` literals at the
//! edges), every predicate, the Bool connectives (chained `=`, `=>` and `xor` too), KLEE's
//! `(= false X)`, `let`s with `?` names (some binding a declared constant's own name), byte
//! and word reads at literal and symbolic indices, store chains, now and then
//! `(= arr (store ...))`; with Int, linear terms with `div`, `mod` (by 0 too) and `abs`.
//! Some blocks are flat (KLEE's and Manticore's), others nest push and pop with their own
//! declarations; every check-sat is followed by a get-value of one to three declared
//! constants or byte reads, mostly ones the assertions name. Nearly half the blocks after
//! the first are an earlier block again: as it was, under fresh names (or with its
//! constants given each other's names, whatever their sorts), or renamed with one assertion
//! added, dropped, one literal changed (in an assertion or a macro's body), or two
//! declarations or assertions swapped; so the canonical cache, the store, the
//! counterexample reasoning and the trie of repeated blocks meet the same query and its
//! near neighbours.
//!
//! * `random_streams_answer_as_z3`: each script through `z3 -in` and through smtproxy with
//!   one result store per test (shared by every strategy and seed) under hybrid, cache,
//!   stack, stack-cse, fresh, the default strategy and the `z3,yices` portfolio: the same
//!   responses as z3 in order (errors as `(error)`, get-value answers with their values
//!   masked), the same exit code, and every set of values smtproxy gives after a sat
//!   satisfying that check's declarations, definitions and assertions in scope (z3
//!   checks); at least 15% of the checks sat and 15% unsat;
//! * `random_streams_with_int_answer_as_z3`: the same under ALL with Int constants (z3
//!   only, no portfolio);
//! * `random_streams_answer_as_cvc5` / `_yices`: the QF_AUFBV scripts (a get-value only
//!   after z3's sats: cvc5 ends a session at an error) against `cvc5 --incremental` and
//!   `yices-smt2 --incremental`, through `--solver cvc5` / `--solver yices` with those
//!   flags under hybrid and stack; for yices without the `let`s that bind a declared
//!   name (yices 2.6.5 answers `unsat` to
//!   `(and (not (= y x)) (let ((x y) (z (concat #b01111 y))) b))` with `(bvult x y)`).
//!
//! Fixed seeds; `SMTPROXY_STREAMS_SEED=N` runs one other seed, `SMTPROXY_STREAMS_RUNS=K`
//! seeds 1 to K (for long runs by hand: failures are also printed as they come, and a line
//! every 100 seeds). A failing script is written to `target/proxy_streams-<seed>.smt2`
//! (`proxy_streams-int-`, `-cvc5-`, `-yices-<seed>` for the other tests); every script,
//! with `SMTPROXY_STREAMS_DUMP=1`.

use crate::common;

use common::rng::Rng;
use common::{root, run_prog};
use std::fmt::Write;
use std::time::Duration;

/// Deadline of one run (z3 answers a script in well under a second).
const T: Duration = Duration::from_secs(60);

/// Bit-vector widths of constants and subterms (8 most often: bytes).
const WIDTHS: &[u32] = &[1, 3, 8, 8, 8, 13, 16, 32, 32, 64];

/// The smtproxy strategies each z3 script goes through (`None`: the default).
const STRATEGIES: &[Option<&str>] = &[
    Some("hybrid"),
    Some("cache"),
    Some("stack"),
    Some("stack-cse"),
    Some("fresh"),
    None,
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sort {
    Bool,
    Bv(u32),
    /// `(Array (_ BitVec 32) (_ BitVec 8))`: KLEE's and Manticore's memory.
    Arr,
    Int,
}

impl Sort {
    fn smt(self) -> String {
        match self {
            Sort::Bool => "Bool".to_string(),
            Sort::Bv(w) => format!("(_ BitVec {w})"),
            Sort::Arr => "(Array (_ BitVec 32) (_ BitVec 8))".to_string(),
            Sort::Int => "Int".to_string(),
        }
    }
}

/// A literal, kept as a value so that a replay can change it.
#[derive(Clone, Debug)]
enum Lit {
    Bool(bool),
    /// `style`: 0 `#xab` and 3 `#xAB` (widths that are multiples of 4 only), 1 `#b`,
    /// 2 `(_ bvN w)`.
    Bv {
        width: u32,
        value: u64,
        style: u8,
    },
    Int(i64),
}

impl Lit {
    fn text(&self) -> String {
        match *self {
            Lit::Bool(b) => b.to_string(),
            Lit::Bv {
                width,
                value,
                style,
            } => match style {
                0 => format!("#x{value:0w$x}", w = (width / 4) as usize),
                3 => format!("#x{value:0w$X}", w = (width / 4) as usize),
                1 => format!("#b{value:0w$b}", w = width as usize),
                _ => format!("(_ bv{value} {width})"),
            },
            Lit::Int(v) if v < 0 => format!("(- {})", v.unsigned_abs()),
            Lit::Int(v) => v.to_string(),
        }
    }
}

#[derive(Clone, Debug)]
enum Term {
    /// A declared constant or a macro without parameters: an index into `Block::syms`.
    Sym(usize),
    /// A `let`-bound `?` name or a macro's parameter.
    Var(String),
    Lit(Lit),
    /// `(HEAD ARGS...)`; HEAD may be indexed: `(_ extract 7 0)`.
    App(String, Vec<Term>),
    /// A macro with parameters applied: an index into `Block::syms`.
    Call(usize, Vec<Term>),
    Let(Vec<(Binder, Term)>, Box<Term>),
}

/// The name a `let` binds.
#[derive(Clone, Debug)]
enum Binder {
    /// A `?B` name of its own.
    Fresh(String),
    /// The name of a declared constant of the same sort (an index into `Block::syms`),
    /// shadowed in the body: its uses there (`Term::Sym`) are the bound term.
    Shadow(usize),
}

impl Term {
    fn app(head: &str, args: Vec<Term>) -> Term {
        Term::App(head.to_string(), args)
    }

    fn write(&self, names: &[String], out: &mut String) {
        match self {
            Term::Sym(s) => out.push_str(&names[*s]),
            Term::Var(v) => out.push_str(v),
            Term::Lit(l) => out.push_str(&l.text()),
            Term::App(head, args) => Term::write_app(head, args, names, out),
            Term::Call(m, args) => Term::write_app(&names[*m], args, names, out),
            Term::Let(binds, body) => {
                out.push_str("(let (");
                for (i, (v, t)) in binds.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    let v = match v {
                        Binder::Fresh(v) => v,
                        Binder::Shadow(s) => &names[*s],
                    };
                    let _ = write!(out, "({v} ");
                    t.write(names, out);
                    out.push(')');
                }
                out.push_str(") ");
                body.write(names, out);
                out.push(')');
            }
        }
    }

    fn write_app(head: &str, args: &[Term], names: &[String], out: &mut String) {
        out.push('(');
        out.push_str(head);
        for a in args {
            out.push(' ');
            a.write(names, out);
        }
        out.push(')');
    }

    fn text(&self, names: &[String]) -> String {
        let mut s = String::new();
        self.write(names, &mut s);
        s
    }

    fn count_lits(&self) -> usize {
        match self {
            Term::Sym(_) | Term::Var(_) => 0,
            Term::Lit(_) => 1,
            Term::App(_, args) | Term::Call(_, args) => args.iter().map(Term::count_lits).sum(),
            Term::Let(binds, body) => {
                binds.iter().map(|(_, t)| t.count_lits()).sum::<usize>() + body.count_lits()
            }
        }
    }

    /// The `k`th literal (in writing order), if there are that many; `k` is counted down.
    fn lit_mut(&mut self, k: &mut usize) -> Option<&mut Lit> {
        match self {
            Term::Sym(_) | Term::Var(_) => None,
            Term::Lit(l) => {
                if *k == 0 {
                    Some(l)
                } else {
                    *k -= 1;
                    None
                }
            }
            Term::App(_, args) | Term::Call(_, args) => args.iter_mut().find_map(|a| a.lit_mut(k)),
            Term::Let(binds, body) => {
                for (_, t) in binds.iter_mut() {
                    if let Some(l) = t.lit_mut(k) {
                        return Some(l);
                    }
                }
                body.lit_mut(k)
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Sym {
    Const(Sort),
    Macro {
        params: Vec<Sort>,
        ret: Sort,
        body: Term,
    },
}

#[derive(Clone, Debug)]
enum Item {
    Declare(usize),
    Define(usize),
    Assert(Term),
    Push(u32),
    Pop(u32),
    /// check-sat, then get-value of these terms (none: no get-value).
    Check(Vec<Term>),
}

/// What follows one `(reset)`: its constants and macros (named by `names`), and its
/// commands.
#[derive(Clone, Debug)]
struct Block {
    syms: Vec<Sym>,
    names: Vec<String>,
    items: Vec<Item>,
    /// The next `?B` number of a `let` in this block.
    next_let: u32,
}

/// What a script's blocks are made of.
#[derive(Clone, Copy)]
struct Config {
    /// Int constants and linear arithmetic (logic ALL, z3 only).
    int: bool,
    /// `let`s that bind a declared constant's own name (yices 2.6.5 answers a wrong unsat
    /// when such a `let` has a second binding, and refuses one in a macro's body).
    shadowing: bool,
}

impl Config {
    fn logic(self) -> &'static str {
        if self.int {
            "ALL"
        } else {
            "QF_AUFBV"
        }
    }
}

/// The scripts of z3, cvc5 and the portfolio.
const QF_AUFBV: Config = Config {
    int: false,
    shadowing: true,
};

/// A fresh name for a symbol: KLEE's `arrN`, Manticore's `a_N`, ...
fn fresh_name(sym: &Sym, style: u64, fresh: &mut u64) -> String {
    *fresh += 1;
    let n = *fresh;
    match sym {
        Sym::Const(Sort::Arr) if style == 0 => format!("arr{n}"),
        Sym::Const(Sort::Arr) => format!("const_arr{n}"),
        Sym::Const(Sort::Bool) => format!("b_{n}"),
        Sym::Const(Sort::Int) => format!("i_{n}"),
        Sym::Const(Sort::Bv(_)) if style == 0 => format!("a_{n}"),
        Sym::Const(Sort::Bv(_)) => format!("BITVEC_{n}"),
        Sym::Macro { .. } => format!("m_{n}"),
    }
}

/// The symbols visible and the assertions in scope (indices into `items`) before
/// `items[pos]`.
fn scope_at(b: &Block, pos: usize) -> (Vec<usize>, Vec<usize>) {
    let mut frames: Vec<(Vec<usize>, Vec<usize>)> = vec![(Vec::new(), Vec::new())];
    for (i, item) in b.items[..pos].iter().enumerate() {
        match item {
            Item::Declare(s) | Item::Define(s) => frames.last_mut().expect("base").0.push(*s),
            Item::Assert(_) => frames.last_mut().expect("base").1.push(i),
            Item::Push(n) => {
                for _ in 0..*n {
                    frames.push((Vec::new(), Vec::new()));
                }
            }
            Item::Pop(n) => frames.truncate(frames.len() - *n as usize),
            Item::Check(_) => {}
        }
    }
    let syms = frames.iter().flat_map(|f| f.0.iter().copied()).collect();
    let asserts = frames.iter().flat_map(|f| f.1.iter().copied()).collect();
    (syms, asserts)
}

/// Makes well-sorted terms over the symbols visible at one point of a block.
struct Gen<'a> {
    r: &'a mut Rng,
    syms: &'a [Sym],
    visible: &'a [usize],
    /// `let`-bound names and macro parameters in scope.
    vars: Vec<(String, Sort)>,
    /// The number of the last `let` name made (`?B<n>`), from the block's: a caller that
    /// keeps the names it makes puts it back in the block.
    next_let: u32,
    cfg: Config,
}

impl<'a> Gen<'a> {
    /// A generator over `b`'s symbols visible at `visible`, with `vars` in scope.
    fn over(
        r: &'a mut Rng,
        b: &'a Block,
        visible: &'a [usize],
        vars: Vec<(String, Sort)>,
        cfg: Config,
    ) -> Self {
        Gen {
            r,
            syms: &b.syms,
            visible,
            vars,
            next_let: b.next_let,
            cfg,
        }
    }

    fn consts_of(&self, sort: Sort) -> Vec<usize> {
        self.visible
            .iter()
            .copied()
            .filter(|&s| matches!(self.syms[s], Sym::Const(t) if t == sort))
            .collect()
    }

    fn bv_consts(&self) -> Vec<(usize, u32)> {
        self.visible
            .iter()
            .filter_map(|&s| match self.syms[s] {
                Sym::Const(Sort::Bv(w)) => Some((s, w)),
                _ => None,
            })
            .collect()
    }

    fn macros_returning(&self, sort: Sort) -> Vec<usize> {
        self.visible
            .iter()
            .copied()
            .filter(|&s| matches!(&self.syms[s], Sym::Macro { ret, .. } if *ret == sort))
            .collect()
    }

    fn vars_of(&self, sort: Sort) -> Vec<String> {
        self.vars
            .iter()
            .filter(|(_, s)| *s == sort)
            .map(|(v, _)| v.clone())
            .collect()
    }

    /// A width to compare or combine at: mostly a visible constant's (or a byte's).
    fn width(&mut self) -> u32 {
        let ws: Vec<u32> = self.bv_consts().iter().map(|c| c.1).collect();
        if !ws.is_empty() && self.r.below(10) < 6 {
            *self.r.pick(&ws)
        } else if !self.consts_of(Sort::Arr).is_empty() && self.r.below(2) == 0 {
            8
        } else {
            *self.r.pick(WIDTHS)
        }
    }

    fn var_or_none(&mut self, sort: Sort) -> Option<Term> {
        let vs = self.vars_of(sort);
        (!vs.is_empty() && self.r.below(10) < 5).then(|| Term::Var(self.r.pick(&vs).clone()))
    }

    fn call(&mut self, sort: Sort, depth: u32) -> Option<Term> {
        let ms = self.macros_returning(sort);
        if ms.is_empty() {
            return None;
        }
        let m = *self.r.pick(&ms);
        let Sym::Macro { params, .. } = &self.syms[m] else {
            unreachable!("macros_returning gives macros")
        };
        if params.is_empty() {
            return Some(Term::Sym(m));
        }
        let params = params.clone();
        let args = params.iter().map(|&p| self.term(p, depth)).collect();
        Some(Term::Call(m, args))
    }

    fn term(&mut self, sort: Sort, depth: u32) -> Term {
        match sort {
            Sort::Bool => self.boolean(depth),
            Sort::Bv(w) => self.bv(w, depth),
            Sort::Arr => self.array(depth),
            Sort::Int => self.int(depth),
        }
    }

    /// `(let ((?Bk t) ...) body)` with a body of `sort` that may use the new names.
    fn let_term(&mut self, sort: Sort, depth: u32) -> Term {
        let mut binds = Vec::new();
        let mut shadowed = Vec::new();
        for _ in 0..1 + self.r.below(2) {
            // Now and then a declared constant's own name, bound to another term of its
            // sort in the body (legal, if no tool of KLEE's or Manticore's does it).
            let shadow: Vec<usize> = self
                .visible
                .iter()
                .copied()
                .filter(|&c| {
                    matches!(self.syms[c], Sym::Const(Sort::Bool | Sort::Bv(_)))
                        && !shadowed.contains(&c)
                })
                .collect();
            if self.cfg.shadowing && !shadow.is_empty() && self.r.below(5) == 0 {
                let c = *self.r.pick(&shadow);
                let Sym::Const(s) = self.syms[c] else {
                    unreachable!("filtered to constants")
                };
                let t = self.term(s, depth.saturating_sub(1));
                shadowed.push(c);
                binds.push((Binder::Shadow(c), t, None));
                continue;
            }
            let s = if self.r.below(4) == 0 {
                Sort::Bool
            } else {
                Sort::Bv(self.width())
            };
            self.next_let += 1;
            let name = format!("?B{}", self.next_let);
            let t = self.term(s, depth.saturating_sub(1));
            binds.push((Binder::Fresh(name), t, Some(s)));
        }
        let before = self.vars.len();
        for (n, _, s) in &binds {
            if let (Binder::Fresh(n), Some(s)) = (n, s) {
                self.vars.push((n.clone(), *s));
            }
        }
        let body = self.term(sort, depth);
        self.vars.truncate(before);
        Term::Let(
            binds.into_iter().map(|(n, t, _)| (n, t)).collect(),
            Box::new(body),
        )
    }

    // ---- bit-vectors ----

    fn bv_lit(&mut self, w: u32) -> Lit {
        let mask = mask(w);
        let value = match self.r.below(10) {
            0 => 0,
            1 => 1,
            2 => mask,
            3 => 1 << (w - 1),
            4 => mask >> 1,
            5 | 6 => self.r.below(16) & mask,
            _ => self.r.next() & mask,
        };
        Lit::Bv {
            width: w,
            value,
            style: self.lit_style(w),
        }
    }

    fn lit_style(&mut self, w: u32) -> u8 {
        if w.is_multiple_of(4) {
            self.r.below(4) as u8
        } else {
            1 + self.r.below(2) as u8
        }
    }

    /// A shift amount: at or past the width now and then.
    fn shift_lit(&mut self, w: u32) -> Lit {
        let value = match self.r.below(5) {
            0 => u64::from(w) & mask(w),
            1 => u64::from(w + 1) & mask(w),
            2 => mask(w),
            _ => self.r.below(u64::from(w)),
        };
        Lit::Bv {
            width: w,
            value,
            style: self.lit_style(w),
        }
    }

    /// The index of a byte read: mostly small.
    fn index_lit(&mut self) -> Term {
        let value = if self.r.below(8) == 0 {
            self.r.next() & 0xffff_ffff
        } else {
            self.r.below(12)
        };
        let style = if self.r.below(6) == 0 { 2 } else { 0 };
        Term::Lit(Lit::Bv {
            width: 32,
            value,
            style,
        })
    }

    fn array_read(&mut self, depth: u32) -> Option<Term> {
        if self.consts_of(Sort::Arr).is_empty() {
            return None;
        }
        let arr = self.array(depth.saturating_sub(1));
        let idx = if depth > 0 && self.r.below(4) == 0 {
            self.bv(32, depth - 1)
        } else {
            self.index_lit()
        };
        Some(Term::app("select", vec![arr, idx]))
    }

    /// KLEE's read of a little-endian word: `(concat (select a #x..03) (concat ...))`.
    fn klee_read(&mut self, w: u32) -> Option<Term> {
        let arrs = self.consts_of(Sort::Arr);
        if arrs.is_empty() || !w.is_multiple_of(8) {
            return None;
        }
        let a = *self.r.pick(&arrs);
        let base = self.r.below(8) * 4;
        let bytes = u64::from(w / 8);
        let byte = |k: u64| {
            Term::app(
                "select",
                vec![
                    Term::Sym(a),
                    Term::Lit(Lit::Bv {
                        width: 32,
                        value: base + k,
                        style: 0,
                    }),
                ],
            )
        };
        let mut t = byte(0);
        for k in 1..bytes {
            t = Term::app("concat", vec![byte(k), t]);
        }
        Some(t)
    }

    /// A visible constant of width `w`, or one of another width cut or extended to `w`.
    fn bv_const(&mut self, w: u32) -> Option<Term> {
        let all = self.bv_consts();
        if all.is_empty() {
            return None;
        }
        let exact: Vec<usize> = all.iter().filter(|c| c.1 == w).map(|c| c.0).collect();
        if !exact.is_empty() && self.r.below(10) < 7 {
            return Some(Term::Sym(*self.r.pick(&exact)));
        }
        let (c, v) = *self.r.pick(&all);
        let t = Term::Sym(c);
        Some(if v == w {
            t
        } else if v > w {
            let lo = self.r.below(u64::from(v - w) + 1) as u32;
            Term::app(&format!("(_ extract {} {lo})", lo + w - 1), vec![t])
        } else if self.r.coin() {
            let op = if self.r.coin() {
                "zero_extend"
            } else {
                "sign_extend"
            };
            Term::app(&format!("(_ {op} {})", w - v), vec![t])
        } else {
            let pad = Term::Lit(self.bv_lit(w - v));
            Term::app("concat", vec![pad, t])
        })
    }

    fn bv_leaf(&mut self, w: u32) -> Term {
        if let Some(v) = self.var_or_none(Sort::Bv(w)) {
            return v;
        }
        match self.r.below(10) {
            0..=6 => self.bv_const(w),
            7 if w == 8 => self.array_read(0),
            7 => self.klee_read(w).or_else(|| self.bv_const(w)),
            _ => None,
        }
        .unwrap_or_else(|| Term::Lit(self.bv_lit(w)))
    }

    fn bv(&mut self, w: u32, depth: u32) -> Term {
        if depth == 0 {
            return self.bv_leaf(w);
        }
        let d = depth - 1;
        let t = match self.r.below(100) {
            0..=29 => Some(self.bv_binary(w, d)),
            30..=36 => {
                let op = *self.r.pick(&["bvshl", "bvlshr", "bvashr"]);
                let x = self.bv(w, d);
                let by = if self.r.below(2) == 0 {
                    Term::Lit(self.shift_lit(w))
                } else {
                    self.bv(w, d)
                };
                Some(Term::app(op, vec![x, by]))
            }
            37..=42 => {
                let op = *self.r.pick(&["bvnot", "bvneg"]);
                Some(Term::app(op, vec![self.bv(w, d)]))
            }
            43..=49 if w >= 2 => {
                let hi = 1 + self.r.below(u64::from(w - 1)) as u32;
                let a = self.bv(hi, d);
                let b = self.bv(w - hi, d);
                Some(Term::app("concat", vec![a, b]))
            }
            50..=56 => {
                let wider: Vec<u32> = [w + 1, w + 3, w + 8, 8, 16, 32, 64]
                    .into_iter()
                    .filter(|&v| v > w && v <= 64)
                    .collect();
                (!wider.is_empty()).then(|| {
                    let v = *self.r.pick(&wider);
                    let lo = self.r.below(u64::from(v - w) + 1) as u32;
                    let x = self.bv(v, d);
                    Term::app(&format!("(_ extract {} {lo})", lo + w - 1), vec![x])
                })
            }
            57..=62 if w >= 2 => {
                let v = 1 + self.r.below(u64::from(w - 1)) as u32;
                let op = if self.r.coin() {
                    "zero_extend"
                } else {
                    "sign_extend"
                };
                let x = self.bv(v, d);
                Some(Term::app(&format!("(_ {op} {})", w - v), vec![x]))
            }
            63..=67 => {
                let op = if self.r.coin() {
                    "rotate_left"
                } else {
                    "rotate_right"
                };
                let k = self.r.below(2 * u64::from(w) + 1);
                let x = self.bv(w, d);
                Some(Term::app(&format!("(_ {op} {k})"), vec![x]))
            }
            68..=71 => {
                let divisors: Vec<u32> = (1..=w)
                    .filter(|p| w.is_multiple_of(*p) && *p <= 16)
                    .collect();
                let part = *self.r.pick(&divisors);
                let x = self.bv(part, d);
                Some(Term::app(&format!("(_ repeat {})", w / part), vec![x]))
            }
            72..=79 => {
                let c = self.boolean(d);
                let a = self.bv(w, d);
                let b = self.bv(w, d);
                Some(Term::app("ite", vec![c, a, b]))
            }
            80..=84 => self.call(Sort::Bv(w), d),
            85..=88 => Some(self.let_term(Sort::Bv(w), d)),
            89..=92 if w == 1 => {
                let v = self.width();
                let a = self.bv(v, d);
                let b = self.bv(v, d);
                Some(Term::app("bvcomp", vec![a, b]))
            }
            93..=99 if w == 8 => self.array_read(depth),
            93..=99 => self.klee_read(w),
            _ => None,
        };
        t.unwrap_or_else(|| self.bv_leaf(w))
    }

    fn bv_binary(&mut self, w: u32, d: u32) -> Term {
        const OPS: &[&str] = &[
            "bvadd", "bvsub", "bvmul", "bvudiv", "bvurem", "bvsdiv", "bvsrem", "bvsmod", "bvand",
            "bvor", "bvxor", "bvnand", "bvnor", "bvxnor",
        ];
        let op = *self.r.pick(OPS);
        let heavy = matches!(
            op,
            "bvmul" | "bvudiv" | "bvurem" | "bvsdiv" | "bvsrem" | "bvsmod"
        );
        // A multiplication or division past 16 bits has a literal operand: every solver
        // must answer in milliseconds (cvc5 takes minutes to show
        // `(bvule y (bvurem x y))` unsat with 32-bit `x` and `y > 2`).
        let a = self.bv(w, d);
        let b = if heavy && (w > 16 || self.r.below(3) == 0) {
            // Division by zero now and then.
            if self.r.below(3) == 0 {
                Term::Lit(Lit::Bv {
                    width: w,
                    value: 0,
                    style: self.lit_style(w),
                })
            } else {
                Term::Lit(self.bv_lit(w))
            }
        } else {
            self.bv(w, d)
        };
        let mut args = vec![a, b];
        if matches!(op, "bvadd" | "bvand" | "bvor" | "bvxor") && self.r.below(6) == 0 {
            args.push(self.bv(w, d));
        }
        Term::app(op, args)
    }

    // ---- Bool ----

    fn comparison(&mut self, d: u32) -> Term {
        const PREDS: &[&str] = &[
            "=", "=", "distinct", "bvult", "bvule", "bvugt", "bvuge", "bvslt", "bvsle", "bvsgt",
            "bvsge",
        ];
        let w = self.width();
        let p = *self.r.pick(PREDS);
        let a = self.bv(w, d);
        let mut b = if self.r.below(3) == 0 {
            Term::Lit(self.bv_lit(w))
        } else {
            self.bv(w, d)
        };
        if format!("{a:?}") == format!("{b:?}") {
            // `(bvult x x)` is decided by its text alone: mostly compare with another term.
            b = self.bv(w, d + 1);
        }
        let mut args = vec![a, b];
        // `(distinct a b c)`, and `=` chained.
        if (p == "distinct" && self.r.below(3) == 0) || (p == "=" && self.r.below(6) == 0) {
            args.push(self.bv(w, d));
        }
        Term::app(p, args)
    }

    fn int_comparison(&mut self, d: u32) -> Term {
        let p = *self.r.pick(&["<", "<=", ">", ">=", "=", "distinct"]);
        let a = self.int(d);
        let b = self.int(d);
        Term::app(p, vec![a, b])
    }

    fn bool_leaf(&mut self) -> Term {
        if let Some(v) = self.var_or_none(Sort::Bool) {
            return v;
        }
        let bools = self.consts_of(Sort::Bool);
        match self.r.below(20) {
            0 => Term::Lit(Lit::Bool(self.r.coin())),
            1..=5 if !bools.is_empty() => Term::Sym(*self.r.pick(&bools)),
            6..=8 if self.cfg.int && !self.consts_of(Sort::Int).is_empty() => {
                self.int_comparison(0)
            }
            _ => self.comparison(0),
        }
    }

    fn boolean(&mut self, depth: u32) -> Term {
        if depth == 0 {
            return self.bool_leaf();
        }
        let d = depth - 1;
        let t = match self.r.below(100) {
            0..=31 => Some(self.comparison(d)),
            32..=40 => Some(Term::app("not", vec![self.boolean(d)])),
            41..=50 => {
                let op = if self.r.coin() { "and" } else { "or" };
                let n = 2 + self.r.below(2);
                let args = (0..n).map(|_| self.boolean(d)).collect();
                Some(Term::app(op, args))
            }
            51..=55 => {
                // Left-associative xor, right-associative `=>`.
                let op = if self.r.coin() { "xor" } else { "=>" };
                let n = if self.r.below(4) == 0 { 3 } else { 2 };
                let args = (0..n).map(|_| self.boolean(d)).collect();
                Some(Term::app(op, args))
            }
            56..=60 => {
                let c = self.boolean(d);
                let a = self.boolean(d);
                let b = self.boolean(d);
                Some(Term::app("ite", vec![c, a, b]))
            }
            // KLEE's negation.
            61..=67 => {
                let x = self.boolean(d);
                Some(Term::app("=", vec![Term::Lit(Lit::Bool(false)), x]))
            }
            68..=70 => {
                let n = if self.r.below(4) == 0 { 3 } else { 2 };
                let args = (0..n).map(|_| self.boolean(d)).collect();
                Some(Term::app("=", args))
            }
            71..=76 => self.call(Sort::Bool, d),
            77..=80 => Some(self.let_term(Sort::Bool, d)),
            81..=82 if !self.consts_of(Sort::Arr).is_empty() => {
                // `(= arr (store ...))`, rarely.
                let a = self.array(0);
                let b = self.array(depth);
                Some(Term::app("=", vec![a, b]))
            }
            83..=90 if self.cfg.int => Some(self.int_comparison(d)),
            _ => None,
        };
        t.unwrap_or_else(|| self.bool_leaf())
    }

    // ---- arrays and Int ----

    fn array(&mut self, depth: u32) -> Term {
        let arrs = self.consts_of(Sort::Arr);
        let base = Term::Sym(*self.r.pick(&arrs));
        if depth == 0 || self.r.below(3) != 0 {
            return base;
        }
        let d = depth - 1;
        if self.r.below(8) == 0 {
            let c = self.boolean(d);
            let a = self.array(d);
            return Term::app("ite", vec![c, a, base]);
        }
        let mut t = base;
        for _ in 0..1 + self.r.below(3) {
            let idx = if self.r.below(5) == 0 {
                self.bv(32, d)
            } else {
                self.index_lit()
            };
            let v = self.bv(8, d);
            t = Term::app("store", vec![t, idx, v]);
        }
        t
    }

    fn int_lit(&mut self) -> Term {
        let v = match self.r.below(6) {
            0 => 0,
            1 => -(self.r.below(10) as i64),
            _ => self.r.below(40) as i64,
        };
        Term::Lit(Lit::Int(v))
    }

    fn int(&mut self, depth: u32) -> Term {
        if let Some(v) = self.var_or_none(Sort::Int) {
            return v;
        }
        let ints = self.consts_of(Sort::Int);
        if depth == 0 {
            return if !ints.is_empty() && self.r.below(3) != 0 {
                Term::Sym(*self.r.pick(&ints))
            } else {
                self.int_lit()
            };
        }
        let d = depth - 1;
        match self.r.below(10) {
            0..=2 => {
                let n = 2 + self.r.below(2);
                let args = (0..n).map(|_| self.int(d)).collect();
                Term::app("+", args)
            }
            3 => {
                let a = self.int(d);
                let b = self.int(d);
                Term::app("-", vec![a, b])
            }
            4 => Term::app("-", vec![self.int(d)]),
            5 | 6 => {
                let k = self.int_lit();
                let x = self.int(d);
                if self.r.coin() {
                    Term::app("*", vec![k, x])
                } else {
                    Term::app("*", vec![x, k])
                }
            }
            7 => {
                let c = self.boolean(d);
                let a = self.int(d);
                let b = self.int(d);
                Term::app("ite", vec![c, a, b])
            }
            // By a literal (linear); by 0 now and then, which SMT-LIB leaves unspecified
            // (some function of the dividend, the same at every use).
            8 => {
                let op = if self.r.coin() { "div" } else { "mod" };
                let x = self.int(d);
                let k = match self.r.below(8) {
                    0 => 0,
                    1 => -(1 + self.r.below(5) as i64),
                    _ => 1 + self.r.below(9) as i64,
                };
                Term::app(op, vec![x, Term::Lit(Lit::Int(k))])
            }
            _ => Term::app("abs", vec![self.int(d)]),
        }
    }

    // ---- assertions ----

    /// An assertion; `earlier` are assertions in scope, some of which it may contradict
    /// (negated, KLEE's `(= false X)`, one literal changed) so that checks come out unsat.
    fn assertion(&mut self, earlier: &[&Term]) -> Term {
        match self.r.below(100) {
            0..=11 if !earlier.is_empty() => {
                let t = (*self.r.pick(earlier)).clone();
                match self.r.below(3) {
                    0 => Term::app("not", vec![t]),
                    1 => Term::app("=", vec![Term::Lit(Lit::Bool(false)), t]),
                    _ => {
                        let mut t = t;
                        change_literal(self.r, &mut t);
                        t
                    }
                }
            }
            // A constant pinned or bounded by a literal (as a path condition does).
            12..=25 => {
                let w = self.width();
                let x = self.bv_leaf(w);
                let p = *self.r.pick(&["=", "bvult", "bvugt", "bvsle", "bvuge"]);
                let k = Term::Lit(self.bv_lit(w));
                Term::app(p, vec![x, k])
            }
            _ => {
                let depth = *self.r.pick(&[1, 2, 2, 2, 3, 3, 3, 4]);
                self.boolean(depth)
            }
        }
    }
}

fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Change one literal of `t` to another value of its sort (if `t` has any).
fn change_literal(r: &mut Rng, t: &mut Term) -> bool {
    let n = t.count_lits();
    if n == 0 {
        return false;
    }
    let mut k = r.index(n);
    let Some(lit) = t.lit_mut(&mut k) else {
        unreachable!("count_lits counted it")
    };
    match lit {
        Lit::Bool(b) => *b = !*b,
        Lit::Bv { width, value, .. } => {
            let m = mask(*width);
            let new = match r.below(4) {
                0 => *value ^ 1,
                1 => value.wrapping_add(1 + r.below(4)) & m,
                2 => !*value & m,
                _ => r.next() & m,
            };
            *value = if new == *value { *value ^ 1 } else { new };
        }
        Lit::Int(v) => *v += 1 + r.below(3) as i64,
    }
    true
}

/// The sort of a new constant.
fn const_sort(r: &mut Rng, cfg: Config) -> Sort {
    match r.below(100) {
        0..=17 => Sort::Arr,
        18..=27 => Sort::Bool,
        28..=49 if cfg.int => Sort::Int,
        _ => Sort::Bv(*r.pick(WIDTHS)),
    }
}

/// Add a symbol (named afresh) to `b`.
fn add_sym(b: &mut Block, sym: Sym, style: u64, fresh: &mut u64) -> usize {
    let name = fresh_name(&sym, style, fresh);
    b.syms.push(sym);
    b.names.push(name);
    b.syms.len() - 1
}

/// A `define-fun` over the symbols visible: no parameters, or one or two.
fn new_macro(r: &mut Rng, b: &Block, visible: &[usize], cfg: Config) -> Sym {
    let mut params = Vec::new();
    for _ in 0..r.below(3) {
        params.push(if r.below(4) == 0 {
            Sort::Bool
        } else {
            Sort::Bv(*r.pick(WIDTHS))
        });
    }
    let ret = if r.coin() {
        Sort::Bool
    } else {
        Sort::Bv(*r.pick(WIDTHS))
    };
    let vars = params
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("p{i}"), *s))
        .collect();
    let mut g = Gen::over(r, b, visible, vars, cfg);
    let body = g.term(ret, 2);
    Sym::Macro { params, ret, body }
}

/// The constants (no macros) and byte reads at literal indices that `t` names.
fn named_in(t: &Term, b: &Block, out: &mut Vec<Term>) {
    match t {
        Term::Sym(s) if matches!(b.syms[*s], Sym::Const(_)) => out.push(t.clone()),
        Term::App(head, args)
            if head == "select" && matches!(args[..], [Term::Sym(_), Term::Lit(_)]) =>
        {
            out.push(t.clone())
        }
        Term::App(_, args) | Term::Call(_, args) => args.iter().for_each(|a| named_in(a, b, out)),
        Term::Let(binds, body) => {
            binds.iter().for_each(|(_, t)| named_in(t, b, out));
            named_in(body, b, out);
        }
        Term::Sym(_) | Term::Var(_) | Term::Lit(_) => {}
    }
}

/// One to three get-value terms: declared constants (no arrays) and byte reads, mostly
/// ones the assertions in scope (`asserted`) name, so that their values are not free.
fn value_terms(r: &mut Rng, b: &Block, visible: &[usize], asserted: &[&Term]) -> Vec<Term> {
    let mut named = Vec::new();
    for t in asserted {
        named_in(t, b, &mut named);
    }
    // Array constants are not asked for (their values may be `as-array` terms).
    named.retain(|t| !matches!(t, Term::Sym(s) if matches!(b.syms[*s], Sym::Const(Sort::Arr))));
    let mut candidates = Vec::new();
    for &s in visible {
        match b.syms[s] {
            Sym::Const(Sort::Arr) => {
                let words: Vec<usize> = visible
                    .iter()
                    .copied()
                    .filter(|&c| matches!(b.syms[c], Sym::Const(Sort::Bv(32))))
                    .collect();
                // A byte at a literal index (KLEE's), now and then at a symbolic one.
                let idx = if !words.is_empty() && r.below(4) == 0 {
                    Term::Sym(*r.pick(&words))
                } else {
                    Term::Lit(Lit::Bv {
                        width: 32,
                        value: r.below(12),
                        style: 0,
                    })
                };
                candidates.push(Term::app("select", vec![Term::Sym(s), idx]));
            }
            Sym::Const(_) => candidates.push(Term::Sym(s)),
            Sym::Macro { .. } => {}
        }
    }
    let mut terms: Vec<Term> = Vec::new();
    for _ in 0..1 + r.below(3) {
        let from = if !named.is_empty() && r.below(5) != 0 {
            &mut named
        } else {
            &mut candidates
        };
        if from.is_empty() {
            break;
        }
        let t = from.remove(r.index(from.len()));
        // Not twice the same term (names are unique, so the text tells).
        if !terms.iter().any(|u| u.text(&b.names) == t.text(&b.names)) {
            terms.push(t);
        }
    }
    terms
}

/// The terms of the assertions `items[i]` of `b`.
fn asserted_terms<'a>(b: &'a Block, items: &[usize]) -> Vec<&'a Term> {
    items
        .iter()
        .filter_map(|&i| match &b.items[i] {
            Item::Assert(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// A new block: declarations, then assertions, check-sats, more declarations, macros and,
/// unless it is flat (no push or pop, as KLEE's and Manticore's blocks), nested scopes.
fn new_block(r: &mut Rng, cfg: Config, fresh: &mut u64) -> Block {
    let style = r.below(2);
    let mut b = Block {
        syms: Vec::new(),
        names: Vec::new(),
        items: Vec::new(),
        next_let: 0,
    };
    let flat = r.below(5) < 2;
    for _ in 0..2 + r.below(4) {
        let s = add_sym(&mut b, Sym::Const(const_sort(r, cfg)), style, fresh);
        b.items.push(Item::Declare(s));
    }
    let mut depth = 0u32;
    let mut since_check = 0;
    let ops = 4 + r.below(12);
    for op in 0..ops {
        let (visible, asserts) = scope_at(&b, b.items.len());
        let last = op + 1 == ops;
        match r.below(100) {
            _ if last => {}
            0..=44 if asserts.len() < 5 => {
                let earlier = asserted_terms(&b, &asserts);
                let mut g = Gen::over(&mut *r, &b, &visible, Vec::new(), cfg);
                let t = g.assertion(&earlier);
                b.next_let = g.next_let;
                b.items.push(Item::Assert(t));
                since_check += 1;
                continue;
            }
            50..=59 if !flat && depth < 3 => {
                let n = if r.below(5) == 0 { 2 } else { 1 };
                b.items.push(Item::Push(n));
                depth += n;
                continue;
            }
            60..=69 if !flat && depth > 0 => {
                let n = if depth >= 2 && r.below(4) == 0 { 2 } else { 1 };
                b.items.push(Item::Pop(n));
                depth -= n;
                continue;
            }
            70..=77 => {
                let s = add_sym(&mut b, Sym::Const(const_sort(r, cfg)), style, fresh);
                b.items.push(Item::Declare(s));
                continue;
            }
            78..=83 => {
                let m = new_macro(r, &b, &visible, cfg);
                let s = add_sym(&mut b, m, style, fresh);
                b.items.push(Item::Define(s));
                continue;
            }
            _ if since_check == 0 => continue,
            _ => {}
        }
        let asserted = asserted_terms(&b, &asserts);
        let terms = value_terms(r, &b, &visible, &asserted);
        b.items.push(Item::Check(terms));
        since_check = 0;
    }
    b
}

/// Rename every symbol of `b` afresh, or (now and then) give its constants each other's
/// names (and its macros each other's), whatever their sorts: the same text then means
/// something else, as in no earlier block.
fn rename(r: &mut Rng, b: &mut Block, style: u64, fresh: &mut u64) {
    if r.below(4) == 0 {
        for macros in [false, true] {
            let of_kind: Vec<usize> = (0..b.syms.len())
                .filter(|&i| matches!(b.syms[i], Sym::Macro { .. }) == macros)
                .collect();
            let mut names: Vec<String> = of_kind.iter().map(|&i| b.names[i].clone()).collect();
            for k in (1..names.len()).rev() {
                names.swap(k, r.index(k + 1));
            }
            for (&i, n) in of_kind.iter().zip(names) {
                b.names[i] = n;
            }
        }
        return;
    }
    for (i, s) in b.syms.iter().enumerate() {
        b.names[i] = fresh_name(s, style, fresh);
    }
}

/// An earlier block again: as it was, renamed, or (mostly renamed) with one assertion
/// added, dropped, one literal changed, or two declarations or assertions swapped.
fn replay(r: &mut Rng, earlier: &Block, cfg: Config, fresh: &mut u64) -> Block {
    let mut b = earlier.clone();
    let style = r.below(2);
    let kind = match r.below(100) {
        0..=11 => "identical",
        12..=36 => "renamed",
        37..=52 => "added",
        53..=66 => "dropped",
        67..=87 => "changed",
        _ => "reordered",
    };
    if kind != "identical" && r.below(5) != 0 {
        rename(r, &mut b, style, fresh);
    }
    let checks: Vec<usize> = (0..b.items.len())
        .filter(|&i| matches!(b.items[i], Item::Check(_)))
        .collect();
    let asserts: Vec<usize> = (0..b.items.len())
        .filter(|&i| matches!(b.items[i], Item::Assert(_)))
        .collect();
    match kind {
        "added" if !checks.is_empty() => {
            let pos = *r.pick(&checks);
            let (visible, _) = scope_at(&b, pos);
            let mut g = Gen::over(&mut *r, &b, &visible, Vec::new(), cfg);
            let depth = g.r.below(3) as u32;
            let t = g.boolean(depth);
            b.next_let = g.next_let;
            b.items.insert(pos, Item::Assert(t));
        }
        "dropped" if !asserts.is_empty() => {
            b.items.remove(*r.pick(&asserts));
        }
        "changed" => {
            // The first assertion or macro body (from a random one on) that has a
            // literal: a macro's uses read as they did, meaning something else.
            let mut bodies: Vec<&mut Term> = Vec::new();
            for item in b.items.iter_mut() {
                if let Item::Assert(t) = item {
                    bodies.push(t);
                }
            }
            for sym in b.syms.iter_mut() {
                if let Sym::Macro { body, .. } = sym {
                    bodies.push(body);
                }
            }
            let n = bodies.len();
            let start = r.index(n);
            for k in 0..n {
                if change_literal(r, bodies[(start + k) % n]) {
                    break;
                }
            }
        }
        "reordered" => {
            // Two neighbouring declarations (or assertions) swapped: the same query, its
            // constants declared (or its conjuncts asserted) in another order.
            let pairs: Vec<usize> = (1..b.items.len())
                .filter(|&i| {
                    matches!(
                        (&b.items[i - 1], &b.items[i]),
                        (Item::Declare(_), Item::Declare(_)) | (Item::Assert(_), Item::Assert(_))
                    )
                })
                .collect();
            if !pairs.is_empty() {
                let i = *r.pick(&pairs);
                b.items.swap(i - 1, i);
            }
        }
        _ => {}
    }
    b
}

/// A script: its blocks and how many of them are earlier blocks asked again.
struct Script {
    blocks: Vec<Block>,
    replays: usize,
}

fn script(seed: u64, cfg: Config) -> Script {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut fresh = 0;
    let mut blocks: Vec<Block> = Vec::new();
    let mut replays = 0;
    for i in 0..5 + r.below(5) {
        if i > 0 && r.below(100) < 45 {
            let src = if r.coin() {
                blocks.len() - 1
            } else {
                r.index(blocks.len())
            };
            let b = replay(&mut r, &blocks[src], cfg, &mut fresh);
            blocks.push(b);
            replays += 1;
        } else {
            blocks.push(new_block(&mut r, cfg, &mut fresh));
        }
    }
    Script { blocks, replays }
}

/// A response the script asks for.
enum Expect {
    /// The answer to check-sat number `check`.
    Answer { check: usize },
    /// The get-value after check-sat number `check`: its terms, and the declarations,
    /// definitions and assertions in scope (the text that must be sat with the values).
    Values {
        check: usize,
        terms: Vec<String>,
        context: String,
    },
}

impl Expect {
    fn check(&self) -> usize {
        match self {
            Expect::Answer { check } | Expect::Values { check, .. } => *check,
        }
    }
}

struct Rendered {
    text: String,
    expects: Vec<Expect>,
    checks: usize,
}

/// The script's text, each block after a `(reset)` (but the first). With `sat`, a
/// get-value only after the checks it says are sat (for solvers that end the session at
/// the error a get-value after unsat gives).
fn render(blocks: &[Block], logic: &str, sat: Option<&[bool]>) -> Rendered {
    let mut text = String::new();
    let mut expects = Vec::new();
    let mut check = 0;
    for (bi, b) in blocks.iter().enumerate() {
        if bi > 0 {
            text.push_str("(reset)\n");
        }
        let _ = writeln!(
            text,
            "(set-option :produce-models true)\n(set-logic {logic})"
        );
        // Declarations, definitions and assertions per scope level.
        let mut frames: Vec<Vec<String>> = vec![Vec::new()];
        for item in &b.items {
            let line = match item {
                Item::Declare(s) => {
                    let Sym::Const(sort) = b.syms[*s] else {
                        unreachable!("declared symbols are constants")
                    };
                    let l = format!("(declare-fun {} () {})", b.names[*s], sort.smt());
                    frames.last_mut().expect("base").push(l.clone());
                    l
                }
                Item::Define(s) => {
                    let Sym::Macro { params, ret, body } = &b.syms[*s] else {
                        unreachable!("defined symbols are macros")
                    };
                    let ps: Vec<String> = params
                        .iter()
                        .enumerate()
                        .map(|(i, p)| format!("(p{i} {})", p.smt()))
                        .collect();
                    let l = format!(
                        "(define-fun {} ({}) {} {})",
                        b.names[*s],
                        ps.join(" "),
                        ret.smt(),
                        body.text(&b.names)
                    );
                    frames.last_mut().expect("base").push(l.clone());
                    l
                }
                Item::Assert(t) => {
                    let l = format!("(assert {})", t.text(&b.names));
                    frames.last_mut().expect("base").push(l.clone());
                    l
                }
                Item::Push(n) => {
                    for _ in 0..*n {
                        frames.push(Vec::new());
                    }
                    format!("(push {n})")
                }
                Item::Pop(n) => {
                    frames.truncate(frames.len() - *n as usize);
                    format!("(pop {n})")
                }
                Item::Check(terms) => {
                    let mut l = "(check-sat)".to_string();
                    expects.push(Expect::Answer { check });
                    let ask = sat.map(|s| s[check]).unwrap_or(true);
                    if ask && !terms.is_empty() {
                        let ts: Vec<String> = terms.iter().map(|t| t.text(&b.names)).collect();
                        let _ = write!(l, "\n(get-value ({}))", ts.join(" "));
                        let mut context = format!("(set-logic {logic})\n");
                        for f in &frames {
                            for d in f {
                                context.push_str(d);
                                context.push('\n');
                            }
                        }
                        expects.push(Expect::Values {
                            check,
                            terms: ts,
                            context,
                        });
                    }
                    check += 1;
                    l
                }
            };
            text.push_str(&line);
            text.push('\n');
        }
    }
    Rendered {
        text,
        expects,
        checks: check,
    }
}

// ---- responses ----

/// A response as an s-expression: an atom (with its quotes or bars) or a list.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sx {
    Atom(String),
    List(Vec<Sx>),
}

impl Sx {
    fn write(&self, out: &mut String) {
        match self {
            Sx::Atom(a) => out.push_str(a),
            Sx::List(xs) => {
                out.push('(');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    x.write(out);
                }
                out.push(')');
            }
        }
    }

    fn text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    /// The `(term value)` pairs of a get-value answer.
    fn pairs(&self) -> Option<Vec<(&Sx, &Sx)>> {
        let Sx::List(xs) = self else { return None };
        if xs.is_empty() {
            return None;
        }
        xs.iter()
            .map(|p| match p {
                Sx::List(kv) if kv.len() == 2 => Some((&kv[0], &kv[1])),
                _ => None,
            })
            .collect()
    }

    /// The response as two runs must agree on it: an error as `(error)`, a get-value
    /// answer with its values as `_`.
    fn shape(&self) -> String {
        match self {
            Sx::List(xs) if xs.first() == Some(&Sx::Atom("error".to_string())) => {
                "(error)".to_string()
            }
            _ => match self.pairs() {
                Some(ps) => {
                    let masked: Vec<String> = ps
                        .iter()
                        .map(|(t, _)| format!("({} _)", t.text()))
                        .collect();
                    format!("({})", masked.join(" "))
                }
                None => self.text(),
            },
        }
    }
}

/// Split a run's stdout into its top-level s-expressions (`;` comments left out).
fn responses(text: &str) -> Result<Vec<Sx>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut stack: Vec<Vec<Sx>> = vec![Vec::new()];
    let mut i = 0;
    let atom_end = |i: usize, stop: &dyn Fn(char) -> bool| {
        let mut j = i;
        while j < chars.len() && !stop(chars[j]) {
            j += 1;
        }
        j
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            ';' => i = atom_end(i, &|c| c == '\n'),
            '(' => {
                stack.push(Vec::new());
                i += 1;
            }
            ')' => {
                let list = stack.pop().expect("the top level is never popped");
                let Some(parent) = stack.last_mut() else {
                    return Err(format!("unbalanced ')' at character {i}"));
                };
                parent.push(Sx::List(list));
                i += 1;
            }
            '|' => {
                let j = atom_end(i + 1, &|c| c == '|');
                if j >= chars.len() {
                    return Err("unterminated |symbol|".to_string());
                }
                push_atom(&mut stack, chars[i..=j].iter().collect());
                i = j + 1;
            }
            '"' => {
                // A string literal; `""` is a quote inside it.
                let mut j = i + 1;
                loop {
                    if j >= chars.len() {
                        return Err("unterminated string".to_string());
                    }
                    if chars[j] == '"' {
                        if chars.get(j + 1) == Some(&'"') {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j += 1;
                }
                push_atom(&mut stack, chars[i..=j].iter().collect());
                i = j + 1;
            }
            _ => {
                let j = atom_end(i, &|c| {
                    c.is_whitespace() || matches!(c, '(' | ')' | '|' | '"' | ';')
                });
                push_atom(&mut stack, chars[i..j].iter().collect());
                i = j;
            }
        }
    }
    if stack.len() != 1 {
        return Err(format!("{} unclosed '('", stack.len() - 1));
    }
    Ok(stack.pop().expect("the top level"))
}

fn push_atom(stack: &mut [Vec<Sx>], atom: String) {
    stack
        .last_mut()
        .expect("the top level is never popped")
        .push(Sx::Atom(atom));
}

// ---- running ----

/// What the runs of one test found.
#[derive(Default)]
struct Tally {
    scripts: usize,
    checks: usize,
    sat: usize,
    unsat: usize,
    blocks: usize,
    replays: usize,
    runs: usize,
    values_verified: usize,
    /// Sat components whose models smtproxy left unread (`models_unread`), where counted.
    unread: u64,
    failures: Vec<String>,
}

impl Tally {
    fn fail(&mut self, tag: &str, seed: u64, text: &str, msg: String) {
        let path = root().join(format!("target/proxy_streams-{tag}{seed}.smt2"));
        let _ = std::fs::write(&path, text);
        let failure = format!("seed {seed}: {msg}\n  script: {}", path.display());
        // At once as well: a long run by hand shows its failures as it goes.
        eprintln!("proxy_streams FAILURE {tag}{failure}");
        self.failures.push(failure);
    }

    fn report(&self, what: &str) {
        let pct = |n: usize| 100.0 * n as f64 / self.checks.max(1) as f64;
        println!(
            "proxy_streams {what}: {} scripts ({} blocks, {} replayed), {} checks ({} sat {:.0}%, {} unsat {:.0}%), {} smtproxy runs, {} get-value answers verified, {} failures",
            self.scripts,
            self.blocks,
            self.replays,
            self.checks,
            self.sat,
            pct(self.sat),
            self.unsat,
            pct(self.unsat),
            self.runs,
            self.values_verified,
            self.failures.len()
        );
    }

    fn assert_ok(&self) {
        assert!(
            self.failures.is_empty(),
            "{} failures:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

/// The seeds of a run: `SMTPROXY_STREAMS_SEED`, `1..=SMTPROXY_STREAMS_RUNS`, or `default`.
fn seeds(default: std::ops::RangeInclusive<u64>) -> Vec<u64> {
    if let Ok(s) = std::env::var("SMTPROXY_STREAMS_SEED") {
        return vec![s.parse().expect("SMTPROXY_STREAMS_SEED is a number")];
    }
    match std::env::var("SMTPROXY_STREAMS_RUNS") {
        Ok(k) => (1..=k.parse().expect("SMTPROXY_STREAMS_RUNS is a number")).collect(),
        Err(_) => default.collect(),
    }
}

/// A line every 100 seeds, for long runs by hand.
fn progress(tag: &str, seed: u64, tally: &Tally) {
    if seed.is_multiple_of(100) {
        eprintln!(
            "proxy_streams {tag}seed {seed}: {} checks, {} failures so far",
            tally.checks,
            tally.failures.len()
        );
    }
}

fn dump(tag: &str, seed: u64, text: &str) {
    if std::env::var_os("SMTPROXY_STREAMS_DUMP").is_some() {
        let _ = std::fs::write(
            root().join(format!("target/proxy_streams-{tag}{seed}.smt2")),
            text,
        );
    }
}

/// A solver's own run of a script: its responses, which must be exactly the ones asked
/// for, errors only where a get-value follows an unsat, every answer `sat` or `unsat`
/// (else the generator is wrong). Returns the responses and which checks are sat.
fn reference(
    solver: &str,
    out: &common::Out,
    r: &Rendered,
) -> Result<(Vec<Sx>, Vec<bool>), String> {
    let got = responses(&out.stdout_str()).map_err(|e| {
        format!(
            "{solver}'s output does not parse ({e}):\n{}",
            out.stdout_str()
        )
    })?;
    if out.timed_out || got.len() != r.expects.len() {
        return Err(format!(
            "{solver} gave {} responses for {} asked (timed out: {}):\n{}\n{}",
            got.len(),
            r.expects.len(),
            out.timed_out,
            common::tail(&out.stdout_str()),
            common::tail(&out.stderr_str())
        ));
    }
    let mut sat = Vec::new();
    for (i, (e, g)) in r.expects.iter().zip(&got).enumerate() {
        match e {
            Expect::Answer { .. } => match g.text().as_str() {
                "sat" => sat.push(true),
                "unsat" => sat.push(false),
                other => return Err(format!("{solver}: response {i} is {other}")),
            },
            Expect::Values { check, .. } => {
                let ok = if sat[*check] {
                    g.pairs().is_some()
                } else {
                    g.shape() == "(error)"
                };
                if !ok {
                    return Err(format!(
                        "{solver}: response {i} (get-value after check {check}) is {}",
                        g.text()
                    ));
                }
            }
        }
    }
    Ok((got, sat))
}

/// Compare smtproxy's run `out` with the solver's responses `want`: the first difference
/// (by check-sat number), else the verification chunks (one `(check-sat)` each, to be
/// sat) of the values it gave, with their labels.
fn compare(
    label: &str,
    out: &common::Out,
    want_code: Option<i32>,
    want: &[Sx],
    r: &Rendered,
) -> Result<Vec<(String, String)>, String> {
    if out.timed_out {
        return Err(format!(
            "{label}: smtproxy hung (killed after {:?}); last output:\n{}",
            out.elapsed,
            common::tail(&out.stdout_str())
        ));
    }
    if out.hung_or_panicked() {
        return Err(format!(
            "{label}: smtproxy panicked (status {:?}):\n{}",
            out.status,
            common::tail(&out.stderr_str())
        ));
    }
    let got = responses(&out.stdout_str()).map_err(|e| {
        format!(
            "{label}: output does not parse ({e}):\n{}",
            out.stdout_str()
        )
    })?;
    for i in 0..want.len().max(got.len()) {
        let (w, g) = (want.get(i), got.get(i));
        if w.map(Sx::shape) != g.map(Sx::shape) {
            let at = r
                .expects
                .get(i)
                .map(|e| format!("check {} (response {i})", e.check()))
                .unwrap_or_else(|| format!("response {i}, past the last asked"));
            return Err(format!(
                "{label}: first difference at {at}: the solver said {}, smtproxy {}\nstderr:\n{}",
                w.map(Sx::text).unwrap_or_else(|| "nothing".to_string()),
                g.map(Sx::text).unwrap_or_else(|| "nothing".to_string()),
                common::tail(&out.stderr_str())
            ));
        }
    }
    if out.code() != want_code {
        return Err(format!(
            "{label}: exit code {:?}, the solver's {want_code:?}",
            out.code()
        ));
    }
    let mut chunks = Vec::new();
    for (e, g) in r.expects.iter().zip(&got) {
        let (
            Expect::Values {
                check,
                terms,
                context,
            },
            Some(pairs),
        ) = (e, g.pairs())
        else {
            continue;
        };
        let mut chunk = format!("(reset)\n(set-option :produce-models true)\n{context}");
        if pairs.len() != terms.len() {
            return Err(format!(
                "{label}: check {check}: {} values for {} terms: {}",
                pairs.len(),
                terms.len(),
                g.text()
            ));
        }
        for (t, (_, v)) in terms.iter().zip(pairs) {
            let _ = writeln!(chunk, "(assert (= {t} {}))", v.text());
        }
        chunk.push_str("(check-sat)\n");
        chunks.push((
            format!("{label}: check {check}: values {}", g.text()),
            chunk,
        ));
    }
    Ok(chunks)
}

/// Ask z3 whether each chunk (values asserted in their scope) is sat; every one that is
/// not is a failure.
fn verify(tally: &mut Tally, tag: &str, seed: u64, text: &str, chunks: &[(String, String)]) {
    if chunks.is_empty() {
        return;
    }
    // Each chunk after an echo of its number, so that what z3 says is told apart per chunk.
    let mut all = String::new();
    for (i, (_, chunk)) in chunks.iter().enumerate() {
        let _ = writeln!(all, "(echo \"chunk {i}\")");
        all.push_str(chunk);
    }
    let out = run_prog("z3", &["-in"], all.as_bytes(), T);
    let mut said: Vec<String> = Vec::new();
    for l in out.stdout_str().lines() {
        if l.starts_with("chunk ") {
            said.push(String::new());
        } else if let Some(s) = said.last_mut() {
            s.push_str(l);
        }
    }
    tally.values_verified += chunks.len();
    for (i, (label, chunk)) in chunks.iter().enumerate() {
        let v = said.get(i).map(String::as_str).unwrap_or("nothing");
        if v != "sat" {
            tally.fail(
                tag,
                seed,
                text,
                format!("{label} do not satisfy the check (z3 says {v}):\n{chunk}"),
            );
            return;
        }
    }
}

/// smtproxy's command line: the solver, the strategy (`None`: the default), the store,
/// then the client's own flags for its solver.
fn proxy_args<'a>(
    solver: &'a str,
    strategy: Option<&'a str>,
    store: &'a str,
    client: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["--solver", solver];
    if let Some(s) = strategy {
        args.extend(["--strategy", s]);
    }
    args.extend(["--cache", store]);
    args.extend_from_slice(client);
    args
}

/// Every seed's script through z3 and through smtproxy (every strategy, and with
/// `portfolio` the `z3,yices` portfolio under hybrid). `unread`: instead, under hybrid and
/// cache with every model dear (`SMTPROXY_MODELS_UNREAD=1`: no sat component's model is
/// read unless the query's model is needed), so that the sat answers smtproxy gives
/// without a model, the queries it solves whole for one, and the values it reads only when
/// the client asks are held to the same comparison and verification.
fn streams_as_z3(
    cfg: Config,
    tag: &str,
    default_seeds: std::ops::RangeInclusive<u64>,
    unread: bool,
) -> Tally {
    common::require("z3");
    let portfolio = !cfg.int && !unread;
    if portfolio {
        common::require("yices-smt2");
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = dir.path().join("store.sqlite3");
    let store = store.to_str().expect("a UTF-8 path");
    let mut tally = Tally::default();
    for seed in seeds(default_seeds) {
        progress(tag, seed, &tally);
        let s = script(seed, cfg);
        let r = render(&s.blocks, cfg.logic(), None);
        dump(tag, seed, &r.text);
        tally.scripts += 1;
        tally.blocks += s.blocks.len();
        tally.replays += s.replays;
        let direct = run_prog("z3", &["-in"], r.text.as_bytes(), T);
        let (want, sat) = match reference("z3", &direct, &r) {
            Ok(x) => x,
            Err(e) => {
                tally.fail(tag, seed, &r.text, format!("generator: {e}"));
                continue;
            }
        };
        tally.checks += r.checks;
        tally.sat += sat.iter().filter(|s| **s).count();
        tally.unsat += sat.iter().filter(|s| !**s).count();
        let mut runs: Vec<Run> = if unread {
            ["hybrid", "cache"]
                .into_iter()
                .map(|st| Run {
                    label: format!("z3 under {st}, models unread"),
                    args: proxy_args("z3", Some(st), store, &["--stats"]),
                    env: &[("SMTPROXY_MODELS_UNREAD", "1")],
                })
                .collect()
        } else {
            STRATEGIES
                .iter()
                .map(|&st| Run {
                    label: format!("z3 under {}", st.unwrap_or("the default strategy")),
                    args: proxy_args("z3", st, store, &[]),
                    env: &[],
                })
                .collect()
        };
        if portfolio {
            runs.push(Run {
                label: "z3,yices under hybrid".to_string(),
                args: proxy_args("z3,yices", Some("hybrid"), store, &[]),
                env: &[],
            });
        }
        through_smtproxy(&mut tally, tag, seed, &r, &direct, &want, runs);
    }
    tally
}

/// One run of smtproxy on a script: what it is called in a failure, its arguments and
/// environment.
struct Run<'a> {
    label: String,
    args: Vec<&'a str>,
    env: &'a [(&'a str, &'a str)],
}

/// The script `r` through smtproxy once per run of `runs`: each run compared with the
/// solver's own run `direct` (responses `want`), then every set of values the runs gave
/// checked in z3. Failures go to `tally`, and the models left unread of a run with
/// `--stats` too.
fn through_smtproxy(
    tally: &mut Tally,
    tag: &str,
    seed: u64,
    r: &Rendered,
    direct: &common::Out,
    want: &[Sx],
    runs: Vec<Run>,
) {
    let mut chunks = Vec::new();
    for Run { label, args, env } in runs {
        let mut cmd = std::process::Command::new(common::bin());
        cmd.args(&args).envs(env.iter().copied());
        let out = common::run_cmd(cmd, r.text.as_bytes(), T);
        tally.runs += 1;
        if args.contains(&"--stats") {
            tally.unread += common::field(&common::summary(&out.stderr_str()), "models_unread");
        }
        match compare(&label, &out, direct.code(), want, r) {
            Ok(c) => chunks.extend(c),
            Err(e) => tally.fail(tag, seed, &r.text, e),
        }
    }
    verify(tally, tag, seed, &r.text, &chunks);
}

/// Every seed's QF_AUFBV script through `cmd` (cvc5 or yices itself) and through smtproxy
/// with `--solver solver` under hybrid and stack, the client's flags passed on; a
/// get-value only after the checks z3 says are sat.
fn streams_as(solver: &str, cmd: &[&str], tag: &str, cfg: Config) -> Tally {
    common::require("z3");
    let (prog, flags) = cmd.split_first().expect("a solver command");
    common::require(prog);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = dir.path().join("store.sqlite3");
    let store = store.to_str().expect("a UTF-8 path");
    let mut tally = Tally::default();
    for seed in seeds(1..=10) {
        progress(tag, seed, &tally);
        let s = script(seed, cfg);
        let plain = render(&s.blocks, cfg.logic(), None);
        let z3 = run_prog("z3", &["-in"], plain.text.as_bytes(), T);
        let sat = match reference("z3", &z3, &plain) {
            Ok((_, sat)) => sat,
            Err(e) => {
                tally.fail(tag, seed, &plain.text, format!("generator: {e}"));
                continue;
            }
        };
        let r = render(&s.blocks, cfg.logic(), Some(&sat));
        dump(tag, seed, &r.text);
        tally.scripts += 1;
        tally.blocks += s.blocks.len();
        tally.replays += s.replays;
        tally.checks += r.checks;
        tally.sat += sat.iter().filter(|s| **s).count();
        tally.unsat += sat.iter().filter(|s| !**s).count();
        let direct = run_prog(prog, flags, r.text.as_bytes(), T);
        let want = match reference(solver, &direct, &r) {
            Ok((want, theirs)) if theirs == sat => want,
            Ok((_, theirs)) => {
                let at = theirs.iter().zip(&sat).position(|(a, b)| a != b);
                tally.fail(
                    tag,
                    seed,
                    &r.text,
                    format!("{solver} itself disagrees with z3 at check {at:?}"),
                );
                continue;
            }
            Err(e) => {
                tally.fail(tag, seed, &r.text, format!("generator: {e}"));
                continue;
            }
        };
        let runs = ["hybrid", "stack"]
            .into_iter()
            .map(|st| Run {
                label: format!("{solver} under {st}"),
                args: proxy_args(solver, Some(st), store, flags),
                env: &[],
            })
            .collect();
        through_smtproxy(&mut tally, tag, seed, &r, &direct, &want, runs);
    }
    tally
}

#[test]
fn random_streams_answer_as_z3() {
    let tally = streams_as_z3(QF_AUFBV, "", 1..=24, false);
    tally.report("QF_AUFBV through z3");
    tally.assert_ok();
    // The scripts must be about something: both answers, often; blocks asked again.
    let (checks, sat, unsat) = (tally.checks.max(1), tally.sat, tally.unsat);
    assert!(
        sat * 100 >= 15 * checks && unsat * 100 >= 15 * checks,
        "{sat} sat, {unsat} unsat of {checks} checks"
    );
    assert!(tally.replays > 0 && tally.values_verified > 0);
}

#[test]
fn random_streams_with_int_answer_as_z3() {
    let tally = streams_as_z3(
        Config {
            int: true,
            shadowing: true,
        },
        "int-",
        1..=8,
        false,
    );
    tally.report("ALL with Int through z3");
    tally.assert_ok();
    assert!(tally.sat > 0 && tally.unsat > 0);
}

#[test]
fn random_streams_with_unread_models_answer_as_z3() {
    let tally = streams_as_z3(QF_AUFBV, "unread-", 1..=12, true);
    tally.report("QF_AUFBV through z3, models unread");
    println!("proxy_streams: {} sat components left unread", tally.unread);
    tally.assert_ok();
    assert!(
        tally.unread > 0 && tally.values_verified > 0,
        "{} unread",
        tally.unread
    );
}

#[test]
fn random_streams_answer_as_cvc5() {
    let tally = streams_as(
        "cvc5",
        &["cvc5", "--lang", "smt2", "--incremental"],
        "cvc5-",
        QF_AUFBV,
    );
    tally.report("QF_AUFBV through cvc5");
    tally.assert_ok();
}

#[test]
fn random_streams_answer_as_yices() {
    let cfg = Config {
        shadowing: false,
        ..QF_AUFBV
    };
    let tally = streams_as("yices", &["yices-smt2", "--incremental"], "yices-", cfg);
    tally.report("QF_AUFBV through yices");
    tally.assert_ok();
}
