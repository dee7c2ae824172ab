//! The stack strategy: one long-lived incremental backend whose push/pop stack mirrors
//! the conjuncts that successive queries share (Liu et al.), with optional common
//! subexpression macros (`stack-cse`).
//!
//! Invariants:
//! * `frames[i]` is exactly the conjunct asserted in backend scope `i + 1`; the mirror is
//!   valid only for backend generation `generation` and is cleared whenever the backend
//!   restarts, so it never describes a solver that is gone.
//! * The backend runs with `:global-declarations true`: declarations and CSE macros live at
//!   the base level and survive pops, so a query only ever pushes assertions. Names that
//!   would clash (a client name redeclared with another sort after a reset) get a distinct
//!   reserved name, mapped back by printing through `StackNames`.
//! * New conjuncts are pushed oldest-first (by the first time any query contained them),
//!   one scope each, so the newest branch condition sits on top and the next query on a
//!   sibling path pops as little as possible.
//! * An incremental solve that takes far longer than recent ones is abandoned (the backend
//!   is killed and the query goes to a fresh context: z3 skips most preprocessing once a
//!   push has happened, which makes some hard queries 10-100x slower); after the k-th
//!   bail-out the next 2^k queries go straight to a fresh context, then the stack is tried
//!   again, so a log of hard queries soon runs almost entirely in fresh contexts while
//!   KLEE-like logs (no bail-outs) stay on the stack. The backend is also restarted when it has accumulated too many
//!   scopes, macros or declarations.

use super::backend::SolverHandle;
use super::planner::{check_text, declare_text, response_answer, Answer, Query};
use super::Stats;
use crate::driver::DriverError;
use crate::smt2::printer::{backend_name, write_term, Names};
use crate::term::{Op, SortId, Sym, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// Restart the incremental backend after this many pushes since it started.
const MAX_PUSHES: u64 = 200_000;
/// ... or this many CSE macros.
const MAX_MACROS: usize = 100_000;
/// A CSE candidate must have at least this many nodes.
const CSE_MIN_NODES: u32 = 4;

/// Names in the stack backend: client names, with redeclared ones renamed, and CSE macros.
#[derive(Default)]
pub struct StackNames {
    renamed: FxHashMap<(Sym, SortId), String>,
    macros: FxHashMap<TermId, String>,
}

impl StackNames {
    /// The backend name of a client declaration.
    pub fn backend_of(&self, d: &super::client::Decl) -> String {
        match self.renamed.get(&(d.sym, d.ret)) {
            Some(n) => n.clone(),
            None => backend_name(&d.name).into_owned(),
        }
    }
}

impl Names for StackNames {
    fn sym<'a>(&'a self, store: &'a TermStore, t: TermId, s: Sym) -> Cow<'a, str> {
        if let Some(n) = self.renamed.get(&(s, store.sort(t))) {
            return Cow::Borrowed(n);
        }
        backend_name(store.sym_name(s))
    }
    fn defined(&self, t: TermId) -> Option<&str> {
        self.macros.get(&t).map(|s| s.as_str())
    }
}

pub struct StackMirror {
    cse: bool,
    frames: Vec<TermId>,
    generation: u64,
    names: StackNames,
    /// backend name -> declaration text sent
    declared: FxHashMap<String, String>,
    preamble: Vec<String>,
    first_seen: FxHashMap<TermId, u64>,
    seen_counter: u64,
    /// For CSE: in how many distinct conjuncts each subterm occurs.
    occurrences: FxHashMap<TermId, u32>,
    sizes: FxHashMap<TermId, u32>,
    pushes: u64,
    recent_ms: Vec<f64>,
    fresh_ms: Vec<f64>,
    macro_counter: u64,
    rename_counter: u64,
    /// Queries seen, bail-outs so far, and the query number before which queries go
    /// straight to a fresh context (exponential back-off in the number of bail-outs).
    queries: u64,
    bailouts: u32,
    skip_until: u64,
}

impl StackMirror {
    pub fn new(cse: bool) -> Self {
        StackMirror {
            cse,
            frames: Vec::new(),
            generation: u64::MAX,
            names: StackNames::default(),
            declared: FxHashMap::default(),
            preamble: Vec::new(),
            first_seen: FxHashMap::default(),
            seen_counter: 0,
            occurrences: FxHashMap::default(),
            sizes: FxHashMap::default(),
            pushes: 0,
            recent_ms: Vec::new(),
            fresh_ms: Vec::new(),
            macro_counter: 0,
            rename_counter: 0,
            queries: 0,
            bailouts: 0,
            skip_until: 0,
        }
    }

    pub fn names(&self) -> &StackNames {
        &self.names
    }

    /// Forget everything about the backend (it will be restarted).
    pub fn clear(&mut self) {
        self.frames.clear();
        self.generation = u64::MAX;
        self.names = StackNames::default();
        self.declared.clear();
        self.pushes = 0;
    }

    /// Answer the query incrementally. `Ok(None)`: the solve was abandoned as too slow for
    /// the incremental context; the caller solves it fresh.
    pub fn check(
        &mut self,
        h: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<Option<Answer>, DriverError> {
        self.queries += 1;
        if self.queries < self.skip_until {
            stats.stack_detours += 1;
            return Ok(None);
        }
        for attempt in 0..2 {
            match self.try_check(h, store, q, stats) {
                Err(DriverError::Died { .. } | DriverError::Io(_)) if attempt == 0 => {
                    stats.note("stack backend died; restarting it".into());
                    self.clear();
                    h.kill();
                }
                r => return r,
            }
        }
        Ok(Some(Answer::Unknown))
    }

    fn too_large(&self) -> bool {
        self.pushes > MAX_PUSHES || self.names.macros.len() > MAX_MACROS || self.declared.len() > MAX_MACROS
    }

    fn try_check(
        &mut self,
        h: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<Option<Answer>, DriverError> {
        let options: Vec<String> = q.preamble.to_vec();
        if self.too_large() || (h.is_running() && self.generation == h.generation && options != self.preamble) {
            if self.too_large() {
                stats.stack_rebuilds += 1;
            }
            h.kill();
            self.clear();
        }
        let gen = h.start()?;
        let mut cmds: Vec<String> = Vec::new();
        if gen != self.generation {
            self.clear();
            self.generation = gen;
            self.preamble = options.clone();
            cmds.push("(set-option :produce-models true)".into());
            cmds.push("(set-option :global-declarations true)".into());
            cmds.extend(options.iter().cloned());
        }
        let conjuncts = split_conjuncts(store, q.assertions);
        for &c in &conjuncts {
            if !self.first_seen.contains_key(&c) {
                self.first_seen.insert(c, self.seen_counter);
                self.seen_counter += 1;
                if self.cse {
                    self.count_subterms(store, c);
                }
            }
        }
        let want: FxHashSet<TermId> = conjuncts.iter().copied().collect();
        let keep = self.frames.iter().take_while(|c| want.contains(c)).count();
        let npop = self.frames.len() - keep;
        if npop > 0 {
            cmds.push(format!("(pop {npop})"));
            self.frames.truncate(keep);
            stats.pops += npop as u64;
        }
        let kept: FxHashSet<TermId> = self.frames.iter().copied().collect();
        let mut new: Vec<TermId> = conjuncts.iter().copied().filter(|c| !kept.contains(c)).collect();
        new.sort_by_key(|c| (self.first_seen.get(c).copied().unwrap_or(u64::MAX), *c));
        // Declarations (global).
        for d in q.decls {
            let key = (d.sym, d.ret);
            let mut name = self.names.renamed.get(&key).cloned().unwrap_or_else(|| backend_name(&d.name).into_owned());
            let mut text = declare_text(store, d, &name);
            match self.declared.get(&name) {
                Some(t) if *t == text => continue,
                Some(_) => {
                    self.rename_counter += 1;
                    name = format!("sp!d{}!{}", self.rename_counter, d.name);
                    text = declare_text(store, d, &name);
                    self.names.renamed.insert(key, name.clone());
                }
                None => {}
            }
            self.declared.insert(name, text.clone());
            cmds.push(text);
        }
        for &c in &new {
            cmds.push("(push 1)".into());
            if self.cse {
                self.define_macros(store, c, &mut cmds);
            }
            let mut s = String::from("(assert ");
            write_term(store, c, &self.names, &mut s);
            s.push(')');
            cmds.push(s);
            self.frames.push(c);
            self.pushes += 1;
            stats.pushes += 1;
        }
        match h.batch(&cmds) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                // The backend refused something: its state is uncertain; start over.
                stats.note(format!("stack backend rejected a command: {e}"));
                h.kill();
                self.clear();
                return Ok(Some(Answer::Unknown));
            }
            Err(e) => return Err(e),
        }
        let check = check_text(store, q.assumptions, &self.names);
        let deadline = self.bailout_deadline(h.timeout);
        stats.solver_checks += 1;
        let t0 = Instant::now();
        let r = h.check_with(&check, deadline);
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        match r {
            Ok(resp) => {
                self.record(ms);
                // Much slower than the same kind of query in a fresh context: back off as
                // after a bail-out (the answer stands; the next queries go fresh).
                if let Some(fresh) = median(&self.fresh_ms) {
                    if ms > 100.0 && ms > 3.0 * fresh {
                        self.back_off();
                    }
                }
                Ok(Some(response_answer(&resp)))
            }
            Err(DriverError::Timeout { after }) => {
                self.clear();
                if Some(after) == h.timeout || deadline == h.timeout {
                    stats.timeouts += 1;
                    Ok(Some(Answer::Unknown))
                } else {
                    stats.stack_bailouts += 1;
                    self.back_off();
                    Ok(None)
                }
            }
            Err(e) => Err(e),
        }
    }

    fn back_off(&mut self) {
        self.bailouts += 1;
        self.skip_until = self.queries + (1u64 << self.bailouts.min(10));
    }

    /// The time a query took in a fresh context (after a bail-out or during back-off), the
    /// yardstick for incremental solves.
    pub fn record_fresh(&mut self, d: Duration) {
        self.fresh_ms.push(d.as_secs_f64() * 1000.0);
        if self.fresh_ms.len() > 64 {
            self.fresh_ms.remove(0);
        }
    }

    fn record(&mut self, ms: f64) {
        self.recent_ms.push(ms);
        if self.recent_ms.len() > 64 {
            self.recent_ms.remove(0);
        }
    }

    /// A deadline past which the incremental solve is abandoned: far slower than recent
    /// solves (20x the median, between 250 ms and 2 s; 1 s while there are fewer than 8
    /// samples),
    /// never later than the client's deadline.
    fn bailout_deadline(&self, client: Option<Duration>) -> Option<Duration> {
        if self.recent_ms.len() < 8 {
            let d = Duration::from_secs(1);
            return Some(match client {
                Some(c) if c < d => c,
                _ => d,
            });
        }
        let median = median(&self.recent_ms).unwrap_or(0.0);
        let d = Duration::from_secs_f64((median * 20.0).clamp(250.0, 2000.0) / 1000.0);
        Some(match client {
            Some(c) if c < d => c,
            _ => d,
        })
    }

    fn count_subterms(&mut self, store: &TermStore, c: TermId) {
        let mut seen: FxHashSet<TermId> = FxHashSet::default();
        let mut stack = vec![c];
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            if matches!(store.op(t), Op::Forall(_) | Op::Exists(_)) {
                continue;
            }
            *self.occurrences.entry(t).or_insert(0) += 1;
            stack.extend(store.args(t).iter().copied());
        }
        let mut ids: Vec<TermId> = seen.into_iter().collect();
        ids.sort_unstable();
        for t in ids {
            if !self.sizes.contains_key(&t) {
                let s = 1 + store.args(t).iter().map(|a| self.sizes.get(a).copied().unwrap_or(1)).sum::<u32>();
                self.sizes.insert(t, s.min(1 << 20));
            }
        }
    }

    /// Define, before asserting `c`, a macro for each repeated subterm of `c` that has none.
    fn define_macros(&mut self, store: &TermStore, c: TermId, cmds: &mut Vec<String>) {
        let mut seen: FxHashSet<TermId> = FxHashSet::default();
        let mut stack = vec![c];
        let mut cands: Vec<TermId> = Vec::new();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) || self.names.macros.contains_key(&t) {
                continue;
            }
            if matches!(store.op(t), Op::Forall(_) | Op::Exists(_) | Op::Annot(_)) {
                continue;
            }
            if t != c
                && !store.args(t).is_empty()
                && self.occurrences.get(&t).copied().unwrap_or(0) >= 2
                && self.sizes.get(&t).copied().unwrap_or(0) >= CSE_MIN_NODES
            {
                cands.push(t);
            }
            stack.extend(store.args(t).iter().copied());
        }
        cands.sort_unstable();
        for t in cands {
            let name = format!("sp!m{}", self.macro_counter);
            self.macro_counter += 1;
            let mut s = format!("(define-fun {name} () ");
            store.sorts.print(store.sort(t), &mut s);
            s.push(' ');
            write_term(store, t, &self.names, &mut s);
            s.push(')');
            cmds.push(s);
            self.names.macros.insert(t, name);
        }
    }
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some(v[v.len() / 2])
}


/// The conjuncts of the assertions: top-level `and` split, annotations stripped at the top,
/// `(= false X)` read as `(not X)`, `true` dropped, duplicates removed (first kept).
pub fn split_conjuncts(store: &mut TermStore, assertions: &[TermId]) -> Vec<TermId> {
    let mut out = Vec::new();
    let mut seen = FxHashSet::default();
    let mut stack: Vec<TermId> = assertions.iter().rev().copied().collect();
    while let Some(t) = stack.pop() {
        match store.op(t) {
            Op::And => stack.extend(store.args(t).iter().rev().copied()),
            Op::Annot(_) => stack.push(store.args(t)[0]),
            Op::True => {}
            Op::Eq if store.args(t).len() == 2 && store.args(t)[0] == TermStore::FALSE => {
                let x = store.args(t)[1];
                let n = store.mk_not(x);
                if seen.insert(n) {
                    out.push(n);
                }
            }
            _ => {
                if seen.insert(t) {
                    out.push(t);
                }
            }
        }
    }
    out
}
