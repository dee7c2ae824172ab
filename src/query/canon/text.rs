//! Pass 5 of canonicalisation: the canonical text, printed iteratively with `let` for
//! subterms shared within a term, numbered in structural (post-order) order, so that the text
//! is a function of the terms' structure only.

use super::dag::{Dag, Local};
use crate::smt2::printer::{
    bv_literal, bv_u64, push_backend_symbol, string_literal, write_op_head,
};
use crate::term::{Lit, Op, TermId, TermStore};
use std::fmt::Write;

// ---------------------------------------------------------------- printing

/// Print a term as SMT-LIB, iteratively (any depth), binding subterms that occur more than
/// once with nested `let`s named `sp!l<n>`, numbered in left-to-right post-order. The text
/// depends only on the term's structure (not on term ids). Symbols print with backend
/// names (internal names as `sp!...`).
pub fn print_canonical(store: &TermStore, t: TermId) -> String {
    let dag = Dag::new(store, &[t]);
    let mut out = String::new();
    Printer::new(dag.len()).print(store, dag.view(), dag.local(t), &mut out);
    out
}

/// What printing knows of a node, valid while `stamp` is the current print's.
#[derive(Clone, Copy, Default)]
pub(super) struct Mark {
    stamp: u32,
    /// Reached by more than one tree edge.
    reused: bool,
    /// Placed in the post-order.
    placed: bool,
    /// Its `let` number once bound (`NO_NAME` until then).
    name: u32,
}

pub(super) const NO_NAME: u32 = u32::MAX;

/// Scratch of `print_canonical` over one local DAG, reused from one conjunct to the next.
pub(super) struct Printer {
    marks: Vec<Mark>,
    stamp: u32,
    stack: Vec<u32>,
    post: Vec<(u32, bool)>,
    shared: Vec<u32>,
    /// `tree`'s open applications: node and the number of its arguments written.
    open: Vec<(u32, u32)>,
}

impl Printer {
    pub(super) fn new(n: usize) -> Printer {
        Printer {
            marks: vec![Mark::default(); n],
            stamp: 0,
            stack: Vec::new(),
            post: Vec::new(),
            shared: Vec::new(),
            open: Vec::new(),
        }
    }

    /// Append the text of node `t` of `g` (see `print_canonical`) to `out`.
    pub(super) fn print(&mut self, store: &TermStore, g: Local, t: usize, out: &mut String) {
        self.stamp += 1;
        let stamp = self.stamp;
        // nodes reached more than once (by two tree edges of the DAG), quantifier bodies
        // included
        self.stack.clear();
        self.stack.push(t as u32);
        while let Some(x) = self.stack.pop() {
            let m = &mut self.marks[x as usize];
            if m.stamp == stamp {
                m.reused = true;
            } else {
                *m = Mark {
                    stamp,
                    reused: false,
                    placed: false,
                    name: NO_NAME,
                };
                self.stack.extend_from_slice(g.kids(x as usize));
            }
        }
        // shared non-leaf nodes in post-order
        self.shared.clear();
        self.post.clear();
        self.post.push((t as u32, false));
        while let Some((x, expanded)) = self.post.pop() {
            let m = &mut self.marks[x as usize];
            if expanded {
                if x as usize != t && m.reused && !g.kids(x as usize).is_empty() {
                    self.shared.push(x);
                }
                continue;
            }
            if std::mem::replace(&mut m.placed, true) {
                continue;
            }
            self.post.push((x, true));
            for &a in g.kids(x as usize).iter().rev() {
                self.post.push((a, false));
            }
        }
        for i in 0..self.shared.len() {
            let x = self.shared[i];
            out.push_str("(let ((sp!l");
            push_usize(i, out);
            out.push(' ');
            self.tree(store, g, x, out);
            out.push_str(")) ");
            self.marks[x as usize].name = i as u32;
        }
        self.tree(store, g, t as u32, out);
        for _ in 0..self.shared.len() {
            out.push(')');
        }
    }

    /// Node `t` as a tree, with the nodes named so far written as their names.
    fn tree(&mut self, store: &TermStore, g: Local, t: u32, out: &mut String) {
        if !self.head(store, g, t as usize, out) {
            return;
        }
        let open = &mut self.open;
        open.clear();
        open.push((t, 0));
        while let Some(top) = open.last_mut() {
            let (x, k) = *top;
            let kids = g.kids(x as usize);
            if k as usize == kids.len() {
                open.pop();
                close(store, g, x as usize, out);
                continue;
            }
            top.1 += 1;
            let a = kids[k as usize];
            out.push(' ');
            let name = self.marks[a as usize].name;
            if name != NO_NAME {
                out.push_str("sp!l");
                push_usize(name as usize, out);
            } else if head_of(store, g, a as usize, out) {
                open.push((a, 0));
            }
        }
    }

    /// Node `x`'s name if it has one, else `head_of`.
    fn head(&self, store: &TermStore, g: Local, x: usize, out: &mut String) -> bool {
        let name = self.marks[x].name;
        if name != NO_NAME {
            out.push_str("sp!l");
            push_usize(name as usize, out);
            return false;
        }
        head_of(store, g, x, out)
    }
}

/// Decimal digits of `v`, appended.
pub(super) fn push_usize(v: usize, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = v;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| d as char));
}

/// Write node `x`'s own text: a leaf whole (false), or the opening of an application,
/// `(head` without a space after it (true: its arguments follow, each after a space, then
/// `close`).
pub(super) fn head_of(store: &TermStore, g: Local, x: usize, out: &mut String) -> bool {
    let n = store.node(g.term[x]);
    // Leaves; everything else is `(head args)`.
    match n.op {
        Op::True => {
            out.push_str("true");
            return false;
        }
        Op::False => {
            out.push_str("false");
            return false;
        }
        Op::Bv(v) => {
            bv_u64(v, store.sorts.bv_width(n.sort).unwrap_or(64), out);
            return false;
        }
        Op::BvWide(l) | Op::Num(l) | Op::Dec(l) | Op::Str(l) => {
            match (n.op, store.get_lit(l)) {
                (Op::BvWide(_), Lit::Nat(v)) => {
                    bv_literal(v, store.sorts.bv_width(n.sort).unwrap_or(0), out)
                }
                (_, Lit::Nat(v)) => {
                    let _ = write!(out, "{v}");
                }
                (_, Lit::Dec(d)) => out.push_str(d),
                (_, Lit::Str(s)) => string_literal(s, out),
                (_, Lit::Raw(r)) => out.push_str(r),
            }
            return false;
        }
        Op::Sym(_) | Op::Other(_) if n.args.is_empty() => {}
        // (! t attrs): the attributes are written by `close`.
        Op::Annot(_) => {
            out.push_str("(!");
            return true;
        }
        _ => out.push('('),
    }
    match n.op {
        Op::Sym(s) => push_backend_symbol(store.sym_name(s), out),
        Op::Other(l) => {
            if let Lit::Raw(r) = store.get_lit(l) {
                out.push_str(r);
            }
        }
        Op::Forall(b) | Op::Exists(b) => {
            out.push_str(if matches!(n.op, Op::Forall(_)) {
                "forall ("
            } else {
                "exists ("
            });
            for (i, (s, sort)) in store.binders[b as usize].iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push('(');
                push_backend_symbol(store.sym_name(*s), out);
                out.push(' ');
                out.push_str(store.sorts.text(*sort));
                out.push(')');
            }
            out.push(')');
        }
        Op::ConstArray => {
            out.push_str("(as const ");
            out.push_str(store.sorts.text(n.sort));
            out.push(')');
        }
        op => write_op_head(op, out),
    }
    // A constant or an unmodelled nullary operator is its head alone.
    !(matches!(n.op, Op::Sym(_) | Op::Other(_)) && n.args.is_empty())
}

/// The end of an application `head_of` opened: `)`, after an annotation's attributes.
pub(super) fn close(store: &TermStore, g: Local, x: usize, out: &mut String) {
    if let Op::Annot(l) = store.op(g.term[x]) {
        if let Lit::Raw(r) = store.get_lit(l) {
            out.push(' ');
            out.push_str(r);
        }
    }
    out.push(')');
}
