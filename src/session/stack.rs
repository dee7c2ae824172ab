//! The stack strategy: one long-lived incremental backend whose push/pop stack mirrors
//! the conjuncts that successive queries share (Liu et al.), with optional common
//! subexpression macros (`stack-cse`).
//!
//! Invariants:
//! * The backend holds `base` at its base level (no scope) and the conjuncts of
//!   `frames[i]` in scope `i + 1` (one conjunct per scope, except the oldest of a query
//!   that brings more than [`SCOPES_MAX`] new ones, which share one; with `one_scope`,
//!   a query's new conjuncts all share one); the mirror is valid
//!   only for backend generation `generation` and is cleared whenever the backend
//!   restarts, so it never describes a solver that is gone.
//! * `base` is the client's own base-level assertions while the client pushes above them
//!   (an SMT-LIB incremental benchmark): z3 simplifies base-level assertions far better
//!   than scoped ones. Only a restart removes a base conjunct, so base mode is dropped
//!   when that keeps happening.
//! * The backend runs with `:global-declarations true`: declarations and CSE macros live at
//!   the base level and survive pops, so a query only ever pushes assertions. Names that
//!   would clash (a client name redeclared with another sort after a reset) get a distinct
//!   reserved name, mapped back by printing through `StackNames`.
//! * New conjuncts are pushed oldest-first (by the first time any query contained them),
//!   one scope each, so the newest branch condition sits on top and the next query on a
//!   sibling path pops as little as possible. Hybrid's stack (`one_scope`) pushes all the
//!   new conjuncts of a query in one scope.
//! * Incremental is not always faster (z3 skips most preprocessing once a push has
//!   happened, which makes some hard queries 10-100x slower). An incremental solve far
//!   slower than recent ones (past its bail-out deadline) is raced against a fresh context
//!   on the auxiliary backend (`--jobs` >= 2; with one job it is killed instead). If the
//!   fresh context wins, the incremental solve finishes in the background and the backend
//!   is used again once it has (a first solve over a hard base is often the only slow
//!   one). After the k-th bail-out, and after an incremental solve much slower than fresh
//!   ones, the next 2^k queries go straight to a fresh context, so a log of hard queries
//!   soon runs almost entirely in fresh contexts while KLEE-like logs stay on the stack.
//! * What a fresh context costs, the yardstick for judging the stack, is measured now and
//!   then (a probe: the 16th query, then every 16 to 512). With a second process
//!   (`--jobs` >= 2) the probe is posed there detached while the stack answers the query,
//!   and its cost (the solver's CPU time) is read at a later query; with one process the
//!   query itself is answered in a fresh context. A probe never answers the client.
//! * A query's pops, declarations, assertions and check-sat go out in one write; their
//!   acknowledgements are read before the check's answer. The cache planner may start a
//!   query ahead of need (`begin`) and then wait for it (`finish`) or drop it
//!   (`drop_inflight`): exactly one of the two follows every `begin`.
//! * While a background check runs (`pending`: a race a fresh context won, or a dropped
//!   speculation), nothing else is sent to the backend; its acknowledgements and answer
//!   are read and dropped first (`settle`, which waits for a dropped speculation up to its
//!   bail-out deadline), or the backend is killed (`abandon`).
//! * The backend is restarted when it has accumulated too many scopes, macros or
//!   declarations.

use super::backend::SolverHandle;
use super::client::Decl;
use super::fresh::{fresh_check, fresh_script, values_in};
use super::miss::MissPath;
use super::stats::Stats;
use super::vocab::{check_text, declare_text, response_answer, Answer, Query};
use crate::driver::{DriverError, Response};
use crate::smt2::printer::{backend_name, write_term, BackendNames, Names};
use crate::term::{Op, SortId, Sym, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// Restart the incremental backend after this many pushes since it started.
const MAX_PUSHES: u64 = 200_000;
/// ... or this many CSE macros.
const MAX_MACROS: usize = 100_000;
/// New conjuncts of one query beyond this many share a scope (the oldest of them): a
/// query of 300,000 conjuncts pushed one scope each kept z3 busy for over ten minutes,
/// where it solves the same query from scratch in 15 s.
const SCOPES_MAX: usize = 64;
/// Queries of at most this many conjuncts have their assertions named for cores.
const CORE_MAX_CONJUNCTS: usize = 16;
/// An incremental solve slower than this turns unsat cores off (see `StackMirror::cores`).
const CORES_SLOW_MS: f64 = 50.0;

/// `CORES_SLOW_MS`, or `SMTPROXY_CORES_SLOW_MS` when set: tests that show what cores do
/// set it high, so that a loaded machine's slow solve does not turn them off.
fn cores_slow_ms() -> f64 {
    static MS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *MS.get_or_init(|| {
        std::env::var("SMTPROXY_CORES_SLOW_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(CORES_SLOW_MS)
    })
}
/// Bound on the conjuncts whose first sight is kept, and on the subterms whose occurrences
/// and sizes are counted for CSE (each table is emptied when exceeded).
const SEEN_MAX: usize = 1 << 20;
/// A CSE candidate must have at least this many nodes.
const CSE_MIN_NODES: u32 = 4;
/// The first query solved fresh as a probe, the least and the most queries between probes.
const PROBE_FIRST: u64 = 16;
const PROBE_MAX: u64 = 512;
/// Incremental samples needed before the stack is judged against fresh contexts.
const JUDGE_MIN: usize = 8;
/// A background incremental check (see `StackMirror::pending`) is killed after this long.
const BACKGROUND_MAX: Duration = Duration::from_secs(30);
/// How long a race waits on one solver before looking at the other.
const RACE_SLICE: Duration = Duration::from_millis(2);

/// Which backend answered a query (and so holds its model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The incremental backend, in its current generation.
    Incremental,
    /// The auxiliary backend, in a fresh context.
    Fresh,
}

/// A check running on the incremental backend whose answer nobody waits for.
#[derive(Clone, Copy, Debug)]
struct Pending {
    t0: Instant,
    generation: u64,
    /// Responses to read before the check's answer (see `InFlight::Sent`).
    acks: usize,
    /// Started ahead of need by the cache planner and not needed after all (rather than
    /// left behind by a race that a fresh context won): it is waited for, up to its
    /// bail-out deadline, before the backend is used again.
    speculative: bool,
}

/// A query sent to the incremental backend by `StackMirror::begin`.
#[derive(Debug)]
pub enum InFlight {
    /// The check-sat is out; its answer has not been read.
    Sent {
        t0: Instant,
        /// The bail-out deadline, from `t0`.
        deadline: Duration,
        generation: u64,
        /// Responses to the commands sent before the check, still to be read.
        acks: usize,
    },
    /// Answered already (the backend refused the query or ran out of time setting it up).
    Done(Answer),
}

/// Names in the stack backend: client names, with redeclared ones renamed, and CSE macros.
#[derive(Default)]
pub struct StackNames {
    renamed: FxHashMap<(Sym, SortId), String>,
    macros: FxHashMap<TermId, String>,
}

impl StackNames {
    /// The backend name of a client declaration.
    pub fn backend_of(&self, d: &Decl) -> String {
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
    /// The new conjuncts of a query go in one scope, not one each: hybrid's stack sees
    /// only cache misses, which share less with the query before than a whole KLEE
    /// stream does, and z3 pays for every scope (hybrid on seven logs, medians of three
    /// runs: 0.78-0.95 of the time with one scope per conjunct).
    one_scope: bool,
    /// Conjuncts asserted at the backend's base level (no scope), never popped: the
    /// assertions the client itself keeps below its own pushes.
    base: Vec<TermId>,
    /// Backends restarted because a base conjunct was no longer wanted.
    base_drops: u64,
    /// An incremental check still running after a fresh context answered its query (start
    /// time, backend generation). Its answer is read and dropped before the backend is used
    /// again; until then queries go to fresh contexts.
    pending: Option<Pending>,
    frames: Vec<Vec<TermId>>,
    /// Whether the assertions of each frame, and all of the base, were named (see `cores`).
    frames_named: Vec<bool>,
    base_named: bool,
    /// Name the assertions being sent now.
    naming: bool,
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
    /// Whole incremental costs (pushes and assertions sent, plus the check), to compare
    /// with `fresh_ms` (whole fresh contexts).
    inc_cost_ms: Vec<f64>,
    /// Time the current query's pushes and assertions took.
    batch_ms: f64,
    /// The next query solved fresh only to measure what a fresh context costs, and the gap
    /// to the one after (doubling while the stack is clearly cheaper).
    next_probe: u64,
    probe_gap: u64,
    /// The last judgement found the stack far cheaper than fresh contexts.
    stack_cheaper: bool,
    /// Costs of the first queries on the current backend process, and whether it has grown
    /// dear since (as cvc5 does, keeping memory across pops) and should be restarted.
    early_ms: Vec<f64>,
    rebuild_due: bool,
    macro_counter: u64,
    rename_counter: u64,
    /// Unsat cores (hybrid on z3, array logics; see `cores_pay_in`): `cores` is wanted,
    /// `cores_on` is on in this generation (`:produce-unsat-cores` in its preamble). The
    /// assertions of a small query are named `sp!u<k>` (`naming`, `frames_named`,
    /// `base_named`); a core is asked for only when every assertion in the backend is
    /// named, so its conjuncts are unsatisfiable by themselves (declarations and macros
    /// are definitions). `core_names[k]` is the conjunct named `sp!u<k>` in this
    /// generation; names are never reused (`:global-declarations` keeps them defined). A
    /// solve slower than `CORES_SLOW_MS` turns cores off for the session (the backend is
    /// rebuilt without them): core tracking costs z3 its preprocessing on hard queries.
    cores: bool,
    cores_on: bool,
    core_names: FxHashMap<u64, TermId>,
    core_counter: u64,
    /// Queries seen, bail-outs so far, and the query number before which queries go
    /// straight to a fresh context (exponential back-off in the number of bail-outs).
    queries: u64,
    bailouts: u32,
    skip_until: u64,
}

impl StackMirror {
    /// `one_scope`: all new conjuncts of a query share one scope (see `one_scope`).
    pub fn new(cse: bool, one_scope: bool) -> Self {
        StackMirror {
            cse,
            one_scope,
            base: Vec::new(),
            base_drops: 0,
            pending: None,
            frames: Vec::new(),
            frames_named: Vec::new(),
            base_named: true,
            naming: false,
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
            inc_cost_ms: Vec::new(),
            batch_ms: 0.0,
            next_probe: PROBE_FIRST,
            probe_gap: PROBE_FIRST,
            stack_cheaper: false,
            early_ms: Vec::new(),
            rebuild_due: false,
            macro_counter: 0,
            rename_counter: 0,
            cores: false,
            cores_on: false,
            core_names: FxHashMap::default(),
            core_counter: 0,
            queries: 0,
            bailouts: 0,
            skip_until: 0,
        }
    }

    /// Ask for unsat cores (see `cores`): the assertions of small queries are named, so
    /// that an unsat answer can come with a core (`unsat_core`). Takes effect from the
    /// next backend generation on.
    pub fn with_cores(mut self, on: bool) -> Self {
        self.cores = on;
        self
    }

    pub fn names(&self) -> &StackNames {
        &self.names
    }

    /// Forget everything about the backend (it will be restarted).
    pub fn clear(&mut self) {
        self.pending = None;
        self.early_ms.clear();
        self.rebuild_due = false;
        self.base.clear();
        self.frames.clear();
        self.frames_named.clear();
        self.base_named = true;
        self.generation = u64::MAX;
        self.names = StackNames::default();
        self.declared.clear();
        self.core_names.clear();
        self.cores_on = false;
        self.pushes = 0;
    }

    /// Answer the query: incrementally, or in a fresh context on `aux` during a back-off or
    /// after a bail-out. `race`: a slow incremental solve keeps running while `aux` solves
    /// the query fresh, and the first answer wins (else the incremental solve is abandoned).
    pub fn check(
        &mut self,
        main: &mut SolverHandle,
        aux: &mut SolverHandle,
        race: bool,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<(Answer, Via), DriverError> {
        self.queries += 1;
        if !self.settle(main, stats) || self.queries < self.skip_until {
            stats.stack_detours += 1;
            return self.fresh(aux, store, q, stats);
        }
        if self.queries >= self.next_probe {
            // Measure a fresh context now and then: the yardstick for `judge`.
            if self.stack_cheaper {
                self.probe_gap = (self.probe_gap * 2).min(PROBE_MAX);
            }
            self.next_probe = self.queries + self.probe_gap;
            // With a second process, the fresh context is measured there while the stack
            // answers; with one, the query is answered fresh.
            if !(race && self.probe_detached(aux, store, q, stats)) {
                stats.stack_detours += 1;
                return self.fresh(aux, store, q, stats);
            }
        }
        for attempt in 0..2 {
            match self.try_check(main, aux, race, store, q, stats) {
                Err(DriverError::Died { .. } | DriverError::Io(_)) if attempt == 0 => {
                    stats.note("stack backend died; restarting it".into());
                    self.clear();
                    main.kill();
                }
                r => return r,
            }
        }
        Ok((Answer::Unknown, Via::Incremental))
    }

    /// Whether the incremental backend is free: a pending background check is read if it
    /// has finished, and killed (with a back-off) once it has run for `BACKGROUND_MAX`.
    fn settle(&mut self, h: &mut SolverHandle, stats: &mut Stats) -> bool {
        let Some(p) = self.pending else {
            return true;
        };
        if p.generation != h.generation || !h.is_running() {
            self.clear();
            return true;
        }
        // A dropped speculation is waited for like any incremental solve, up to its
        // bail-out deadline; past that it is a slow solve left in the background.
        let wait = if p.speculative {
            self.bailout_deadline(h.timeout)
                .saturating_sub(p.t0.elapsed())
        } else {
            Duration::ZERO
        };
        let until = Instant::now() + wait;
        let mut left = p.acks;
        let r = loop {
            match h.poll(until.saturating_duration_since(Instant::now())) {
                Ok(Some(Response::Error(_))) if left > 0 => {
                    // A refused command: the backend's state is not what the mirror says.
                    h.kill();
                    self.clear();
                    return true;
                }
                Ok(Some(_)) if left > 0 => left -= 1,
                r => break r,
            }
        };
        if let Some(q) = self.pending.as_mut() {
            q.acks = left;
        }
        match r {
            Ok(Some(_)) => {
                self.pending = None;
                true
            }
            Ok(None) if p.t0.elapsed() < BACKGROUND_MAX => {
                if let Some(q) = self.pending.as_mut() {
                    q.speculative = false;
                }
                false
            }
            Ok(None) => {
                stats.note(format!(
                    "an incremental solve ran {} s in the background; restarting the stack backend",
                    BACKGROUND_MAX.as_secs()
                ));
                h.kill();
                self.clear();
                self.back_off();
                true
            }
            Err(_) => {
                self.clear();
                true
            }
        }
    }

    /// Make the backend free for a command of the client's own (set-option, get-info): a
    /// check still running in it (a dropped speculation, a race's loser) is waited for as
    /// `settle` does, else abandoned, so that the next response read is that command's.
    pub fn quiesce(&mut self, h: &mut SolverHandle, stats: &mut Stats) {
        if self.pending.is_some() && !self.settle(h, stats) {
            self.abandon(h);
        }
    }

    /// Give the backend up (it is about to be used for something else, or its options
    /// changed): kill it, so that neither a background check still running in it nor
    /// anything sent to it later can be mistaken for the mirror's state.
    pub fn abandon(&mut self, h: &mut SolverHandle) {
        if self.generation == h.generation {
            h.kill();
        }
        self.clear();
    }

    /// The term store is being replaced: the backend's scopes and macros are named by its
    /// ids, so the backend is abandoned (restarted when next needed) and every table keyed
    /// by an id is dropped. What the stack learnt of costs (probes, back-off) stays.
    pub fn forget_terms(&mut self, h: &mut SolverHandle) {
        self.abandon(h);
        self.first_seen = FxHashMap::default();
        self.occurrences = FxHashMap::default();
        self.sizes = FxHashMap::default();
    }

    fn fresh(
        &mut self,
        aux: &mut SolverHandle,
        store: &TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<(Answer, Via), DriverError> {
        let t0 = Instant::now();
        let a = fresh_check(aux, store, q, stats)?;
        self.record_fresh(t0.elapsed());
        Ok((a, Via::Fresh))
    }

    /// Send `q` in a fresh context to `aux` without waiting (see
    /// `SolverHandle::send_detached`); its cost is taken by `take_probe` at a later query.
    /// `false` when it could not go out that way.
    fn probe_detached(
        &mut self,
        aux: &mut SolverHandle,
        store: &TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> bool {
        if aux.detached_age().is_some() {
            // The last probe still runs: it stands for this one.
            return true;
        }
        let (cmds, check) = fresh_script(store, q);
        match aux.send_detached(&cmds, &check) {
            Ok(sent) => {
                stats.solver_checks += u64::from(sent);
                sent
            }
            Err(_) => false,
        }
    }

    /// The cost of a detached probe (`probe_detached`) that has been answered. One still
    /// running after `BACKGROUND_MAX` is killed, and that time counts as its cost (at
    /// least what the fresh context would have cost). Called at every client check-sat
    /// (`Planner::check`), also those the cache answers, so a hard probe does not hold a
    /// core for the rest of a session.
    pub fn take_probe(&mut self, aux: &mut SolverHandle) {
        if let Some(d) = aux.detached_cost() {
            self.record_fresh(d);
        } else if let Some(age) = aux.detached_age().filter(|&a| a > BACKGROUND_MAX) {
            aux.kill();
            self.record_fresh(age);
        }
    }

    fn too_large(&self) -> bool {
        self.pushes > MAX_PUSHES
            || self.names.macros.len() > MAX_MACROS
            || self.declared.len() > MAX_MACROS
            || self.core_names.len() > MAX_MACROS
    }

    fn try_check(
        &mut self,
        h: &mut SolverHandle,
        aux: &mut SolverHandle,
        race: bool,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<(Answer, Via), DriverError> {
        match self.try_begin(h, store, q, stats)? {
            InFlight::Done(a) => Ok((a, Via::Incremental)),
            InFlight::Sent {
                t0, deadline, acks, ..
            } => self.wait(h, aux, race, store, q, stats, t0, deadline, acks, t0),
        }
    }

    /// Start answering the query incrementally ahead of need (the cache planner's
    /// speculation: the solver works on the other core while the result store is
    /// searched). `None` when the stack would not take the query now (a background check,
    /// a back-off or a probe is due): `check` routes it then. The result must be given to
    /// `finish` or `drop_inflight` before the backend is used for anything else.
    pub fn begin(
        &mut self,
        main: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Option<InFlight> {
        let next = self.queries + 1;
        if !self.settle(main, stats) || next < self.skip_until || next >= self.next_probe {
            return None;
        }
        self.queries = next;
        match self.try_begin(main, store, q, stats) {
            Ok(f) => Some(f),
            Err(_) => {
                // Nothing is pending on a dead or failed backend; `check` restarts it.
                self.queries -= 1;
                self.clear();
                main.kill();
                None
            }
        }
    }

    /// The answer to a query started by `begin` (as `check` would give it).
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        &mut self,
        f: InFlight,
        main: &mut SolverHandle,
        aux: &mut SolverHandle,
        race: bool,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<(Answer, Via), DriverError> {
        match f {
            InFlight::Done(a) => Ok((a, Via::Incremental)),
            InFlight::Sent {
                t0,
                deadline,
                generation,
                acks,
            } if generation == main.generation && generation == self.generation => {
                // What the query costs from here on: the solver worked while the caller did.
                let now = Instant::now();
                match self.wait(main, aux, race, store, q, stats, t0, deadline, acks, now) {
                    Err(DriverError::Died { .. } | DriverError::Io(_)) => {
                        stats.note("stack backend died; restarting it".into());
                        self.clear();
                        main.kill();
                        self.queries -= 1;
                        self.check(main, aux, race, store, q, stats)
                    }
                    r => r,
                }
            }
            InFlight::Sent { .. } => {
                self.queries -= 1;
                self.check(main, aux, race, store, q, stats)
            }
        }
    }

    /// A query started by `begin` is not needed after all: its answer is read and dropped
    /// before the backend is used again (see `settle`).
    pub fn drop_inflight(&mut self, f: InFlight) {
        if let InFlight::Sent {
            t0,
            generation,
            acks,
            ..
        } = f
        {
            if generation == self.generation {
                self.pending = Some(Pending {
                    t0,
                    generation,
                    acks,
                    speculative: true,
                });
            }
        }
    }

    /// Bring the backend to the query's conjuncts (pops, declarations, pushes) and send
    /// its check-sat without waiting for the answer.
    fn try_begin(
        &mut self,
        h: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<InFlight, DriverError> {
        // The client's own `:global-declarations` is modelled by smtproxy; the backend
        // keeps its own (true, set below): a client's `false` there would let a pop drop
        // declarations the mirror still counts as made.
        let options: Vec<String> = q
            .preamble
            .iter()
            .filter(|c| !sets_global_declarations(c))
            .cloned()
            .collect();
        let conjuncts = split_conjuncts(store, q.assertions);
        let want: FxHashSet<TermId> = conjuncts.iter().copied().collect();
        // Base-level conjuncts can only be dropped by starting over.
        let base_gone = self.base.iter().any(|c| !want.contains(c));
        if base_gone {
            self.base_drops += 1;
        }
        let rebuild = self.too_large() || base_gone || self.rebuild_due;
        if rebuild
            || (h.is_running() && self.generation == h.generation && options != self.preamble)
        {
            if rebuild {
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
            self.cores_on = self.cores && cores_pay_in(q.logic);
            if self.cores_on {
                cmds.push("(set-option :produce-unsat-cores true)".into());
            }
            cmds.extend(options.iter().cloned());
        }
        if self.first_seen.len() + conjuncts.len() > SEEN_MAX {
            // Only an order of pushes: a conjunct seen again is then new.
            self.first_seen = FxHashMap::default();
        }
        if self.sizes.len() > SEEN_MAX || self.occurrences.len() > SEEN_MAX {
            // Only which subterms get macros: counting starts over.
            self.sizes = FxHashMap::default();
            self.occurrences = FxHashMap::default();
        }
        for &c in &conjuncts {
            if !self.first_seen.contains_key(&c) {
                self.first_seen.insert(c, self.seen_counter);
                self.seen_counter += 1;
                if self.cse {
                    self.count_subterms(store, c);
                }
            }
        }
        // The client's own base-level assertions (it pushes above them) go to the backend's
        // base level too: z3 simplifies base-level assertions far better than scoped ones.
        // Adding to the base means popping every scope first.
        let new_base: Vec<TermId> = if self.base_allowed() {
            let have: FxHashSet<TermId> = self.base.iter().copied().collect();
            split_conjuncts(store, q.base)
                .into_iter()
                .filter(|c| want.contains(c) && !have.contains(c))
                .collect()
        } else {
            Vec::new()
        };
        let keep = if new_base.is_empty() {
            self.frames
                .iter()
                .take_while(|f| f.iter().all(|c| want.contains(c)))
                .count()
        } else {
            0
        };
        let npop = self.frames.len() - keep;
        if npop > 0 {
            cmds.push(format!("(pop {npop})"));
            self.frames.truncate(keep);
            self.frames_named.truncate(keep);
            stats.pops += npop as u64;
        }
        let kept: FxHashSet<TermId> = self
            .frames
            .iter()
            .flatten()
            .chain(self.base.iter())
            .chain(new_base.iter())
            .copied()
            .collect();
        let mut new: Vec<TermId> = conjuncts
            .iter()
            .copied()
            .filter(|c| !kept.contains(c))
            .collect();
        new.sort_by_key(|c| (self.first_seen.get(c).copied().unwrap_or(u64::MAX), *c));
        // Declarations (global).
        for d in q.decls {
            let key = (d.sym, d.ret);
            let mut name = self
                .names
                .renamed
                .get(&key)
                .cloned()
                .unwrap_or_else(|| backend_name(&d.name).into_owned());
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
        // Named (for cores) only when the query is small: naming costs z3 time on every
        // assertion (sbase-expr/all, about 110 conjuncts a check: 0.24 s of z3 CPU plain,
        // 0.31 s named), and the small components are where cores recur.
        self.naming = self.cores_on && conjuncts.len() <= CORE_MAX_CONJUNCTS;
        for &c in &new_base {
            self.assert_text(store, c, &mut cmds);
            self.base.push(c);
        }
        if !new_base.is_empty() {
            self.base_named &= self.naming;
        }
        // The oldest new conjuncts share one scope when there are very many of them.
        let max_scopes = if self.one_scope { 1 } else { SCOPES_MAX };
        let shared = new.len().saturating_sub(max_scopes - 1);
        let scopes = std::iter::once(&new[..shared])
            .filter(|g| !g.is_empty())
            .chain(new[shared..].chunks(1));
        for group in scopes {
            cmds.push("(push 1)".into());
            for &c in group {
                self.assert_text(store, c, &mut cmds);
            }
            self.frames.push(group.to_vec());
            self.frames_named.push(self.naming);
            self.pushes += 1;
            stats.pushes += 1;
        }
        let check = check_text(store, q.assumptions, &self.names);
        let deadline = self.bailout_deadline(h.timeout);
        let generation = self.generation;
        // Pops, declarations, assertions and the check in one write, nothing read yet: the
        // solver works through them while the caller goes on (z3 spends about as long on
        // a KLEE query's pops and assertions as on its check).
        let t0 = Instant::now();
        if let Some(acks) = h.send_with_check(&cmds, &check)? {
            stats.solver_checks += 1;
            self.batch_ms = 0.0;
            return Ok(InFlight::Sent {
                t0,
                deadline,
                generation,
                acks,
            });
        }
        let sent = h.batch(&cmds);
        self.batch_ms = t0.elapsed().as_secs_f64() * 1000.0;
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                // The backend refused something: its state is uncertain; start over.
                stats.note(format!("stack backend rejected a command: {e}"));
                h.kill();
                self.clear();
                return Ok(InFlight::Done(Answer::Unknown));
            }
            Err(DriverError::Timeout { .. }) => {
                self.clear();
                stats.timeouts += 1;
                return Ok(InFlight::Done(Answer::Unknown));
            }
            Err(e) => return Err(e),
        }
        stats.solver_checks += 1;
        let t0 = Instant::now();
        h.send_check(&check)?;
        Ok(InFlight::Sent {
            t0,
            deadline,
            generation,
            acks: 0,
        })
    }

    /// The answer to the check sent at `t0`: within the bail-out `deadline`, else raced
    /// against a fresh context or abandoned for one. Its cost is counted from `cost_from`.
    #[allow(clippy::too_many_arguments)]
    fn wait(
        &mut self,
        h: &mut SolverHandle,
        aux: &mut SolverHandle,
        race: bool,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
        t0: Instant,
        deadline: Duration,
        acks: usize,
        cost_from: Instant,
    ) -> Result<(Answer, Via), DriverError> {
        match h.acks(acks) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                // The backend refused something: its state is uncertain; start over.
                stats.note(format!("stack backend rejected a command: {e}"));
                h.kill();
                self.clear();
                return Ok((Answer::Unknown, Via::Incremental));
            }
            Err(DriverError::Timeout { .. }) => {
                self.clear();
                stats.timeouts += 1;
                return Ok((Answer::Unknown, Via::Incremental));
            }
            Err(e) => return Err(e),
        }
        let left = deadline.saturating_sub(t0.elapsed());
        if let Some(resp) = h.poll(left)? {
            return Ok((self.incremental_answer(&resp, cost_from), Via::Incremental));
        }
        if Some(deadline) == h.timeout {
            // The client's own deadline.
            h.kill();
            self.clear();
            stats.timeouts += 1;
            return Ok((Answer::Unknown, Via::Incremental));
        }
        if race {
            return self.race(h, aux, store, q, stats, t0);
        }
        h.kill();
        let cores_on = self.cores_on;
        self.clear();
        stats.stack_bailouts += 1;
        if cores_on {
            // Judged again without named assertions (see `incremental_answer`).
            self.cores_off();
        } else {
            self.back_off();
        }
        self.fresh(aux, store, q, stats)
    }

    /// The incremental solve finished: note its time, and back off to fresh contexts if it
    /// was far slower than fresh ones have been (the answer stands).
    fn incremental_answer(&mut self, resp: &Response, t0: Instant) -> Answer {
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        if self.cores_on && ms > cores_slow_ms() {
            // Slow with named assertions: the stack is judged again without them, so this
            // solve counts neither towards its costs nor towards a back-off.
            self.cores_off();
            return response_answer(resp);
        }
        self.record(ms);
        push_window(&mut self.inc_cost_ms, self.batch_ms + ms);
        if self.early_ms.len() < JUDGE_MIN {
            self.early_ms.push(self.batch_ms + ms);
        }
        if let Some(fresh) = median(&self.fresh_ms) {
            if ms > 100.0 && ms > 3.0 * fresh {
                self.back_off();
                return response_answer(resp);
            }
        }
        self.judge();
        response_answer(resp)
    }

    /// Compare what queries cost on the stack with what fresh contexts cost (means, once
    /// there are enough of both). The stack clearly dearer (some solvers, e.g. cvc5 on
    /// small queries, are slower incrementally): back off to fresh contexts and measure
    /// the stack anew afterwards. The stack clearly cheaper: probe fresh contexts less often.
    fn judge(&mut self) {
        if self.inc_cost_ms.len() < JUDGE_MIN || self.fresh_ms.len() < 3 {
            return;
        }
        // Means, not medians: a few slow queries can outweigh many fast ones.
        let (inc, fresh) = (mean(&self.inc_cost_ms), mean(&self.fresh_ms));
        self.stack_cheaper = inc < 0.5 * fresh;
        if inc > 1.25 * fresh {
            self.inc_cost_ms.clear();
            self.probe_gap = PROBE_FIRST;
            if self.early_ms.len() == JUDGE_MIN && mean(&self.early_ms) < 0.8 * fresh {
                // It was cheap when the process was new: it has grown, start it afresh.
                self.rebuild_due = true;
            } else {
                self.back_off();
            }
        }
    }

    /// The incremental solve on `h` is past its bail-out deadline: solve the query fresh on
    /// `aux` meanwhile and answer with whichever comes first. If the fresh context wins,
    /// the incremental solve is left running in the background (`pending`): the first
    /// incremental solve over a hard base can take 100x a fresh one while the ones after it
    /// take a tenth (z3 keeps what it learnt), so it is worth finishing on the other core;
    /// meanwhile queries go to fresh contexts.
    fn race(
        &mut self,
        h: &mut SolverHandle,
        aux: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
        t0: Instant,
    ) -> Result<(Answer, Via), DriverError> {
        stats.stack_races += 1;
        let fresh_t0 = Instant::now();
        let (cmds, check) = fresh_script(store, q);
        let mut fresh_running = match aux.batch(&cmds) {
            Ok(Ok(())) => aux.send_check(&check).is_ok(),
            Ok(Err(e)) => {
                stats.note(format!("backend rejected the query: {e}"));
                false
            }
            Err(_) => false,
        };
        if fresh_running {
            stats.solver_checks += 1;
        }
        let mut incremental_running = true;
        loop {
            if h.timeout.is_some_and(|c| t0.elapsed() >= c) {
                h.kill();
                aux.kill();
                self.clear();
                stats.timeouts += 1;
                return Ok((Answer::Unknown, Via::Incremental));
            }
            if incremental_running {
                match h.poll(RACE_SLICE) {
                    Ok(Some(resp)) => {
                        if fresh_running {
                            aux.kill();
                        }
                        return Ok((self.incremental_answer(&resp, t0), Via::Incremental));
                    }
                    Ok(None) => {}
                    Err(e) => {
                        self.clear();
                        if !fresh_running {
                            return Err(e);
                        }
                        incremental_running = false;
                    }
                }
            }
            if fresh_running {
                match aux.poll(RACE_SLICE) {
                    Ok(Some(resp)) => {
                        stats.stack_bailouts += 1;
                        if self.cores_on {
                            // Slow with named assertions: rebuilt without them rather than
                            // waited for (see `incremental_answer`).
                            self.cores_off();
                            h.kill();
                            self.clear();
                        } else {
                            // The incremental solve goes on in the background (see
                            // `pending`).
                            self.pending = Some(Pending {
                                t0,
                                generation: h.generation,
                                acks: 0,
                                speculative: false,
                            });
                        }
                        self.record_fresh(fresh_t0.elapsed());
                        return Ok((response_answer(&resp), Via::Fresh));
                    }
                    Ok(None) => {}
                    Err(e) => {
                        if !incremental_running {
                            return Err(e);
                        }
                        fresh_running = false;
                    }
                }
            }
        }
    }

    /// `(assert c)`, after the CSE macros it needs.
    fn assert_text(&mut self, store: &TermStore, c: TermId, cmds: &mut Vec<String>) {
        if self.cse {
            self.define_macros(store, c, cmds);
        }
        let mut s = String::from("(assert ");
        if self.naming {
            let k = self.core_counter;
            self.core_counter += 1;
            self.core_names.insert(k, c);
            s.push_str("(! ");
            write_term(store, c, &self.names, &mut s);
            s.push_str(" :named sp!u");
            s.push_str(&k.to_string());
            s.push(')');
        } else {
            write_term(store, c, &self.names, &mut s);
        }
        s.push(')');
        cmds.push(s);
    }

    /// No more unsat cores this session, without a rebuild: nothing more is named (the
    /// option stays on in this backend, which costs nothing by itself).
    pub fn stop_cores(&mut self) {
        self.cores = false;
        self.cores_on = false;
    }

    /// No more unsat cores this session; a backend that has them on is rebuilt without.
    fn cores_off(&mut self) {
        if self.cores {
            self.cores = false;
            self.rebuild_due |= self.cores_on;
        }
    }

    /// The conjuncts of an unsat core of the backend's last check, which it has just
    /// answered `unsat` (call before anything else is sent to it). Only with cores on, in
    /// the generation the mirror describes, and only a core made wholly of this
    /// generation's names: then the core's conjuncts are unsatisfiable by themselves.
    /// Never empty (an empty core would refute everything: a backend giving one is not
    /// believed).
    pub fn unsat_core(&mut self, h: &mut SolverHandle) -> Option<Vec<TermId>> {
        if !self.cores_on
            || self.pending.is_some()
            || h.generation != self.generation
            || !self.base_named
            || !self.frames_named.iter().all(|&n| n)
        {
            return None;
        }
        let text = match h.cmd_in_generation(self.generation, "(get-unsat-core)") {
            Ok(Response::Other(t)) => t,
            _ => return None,
        };
        let core = core_conjuncts(&text, &self.core_names)?;
        (!core.is_empty()).then_some(core)
    }

    /// Base-level assertions are used unless dropping them (a restart each time) has been
    /// frequent: more than one drop per 16 queries, as when the components of a sliced
    /// query take turns on the backend.
    fn base_allowed(&self) -> bool {
        self.base_drops <= self.queries / 16
    }

    fn back_off(&mut self) {
        self.bailouts += 1;
        self.skip_until = self.queries + (1u64 << self.bailouts.min(10));
    }

    /// The time a query took in a fresh context (after a bail-out or during back-off), the
    /// yardstick for incremental solves.
    /// Time spent reading the model of the last query: on the stack backend
    /// (`incremental`) or a fresh context; added to that query's cost.
    pub fn add_model_cost(&mut self, incremental: bool, d: Duration) {
        let v = if incremental {
            &mut self.inc_cost_ms
        } else {
            &mut self.fresh_ms
        };
        if let Some(last) = v.last_mut() {
            *last += d.as_secs_f64() * 1000.0;
        }
    }

    fn record_fresh(&mut self, d: Duration) {
        push_window(&mut self.fresh_ms, d.as_secs_f64() * 1000.0);
    }

    fn record(&mut self, ms: f64) {
        push_window(&mut self.recent_ms, ms);
    }

    /// A deadline past which the incremental solve is abandoned: far slower than recent
    /// solves (20x the median, between 250 ms and 2 s; 1 s while there are fewer than 8
    /// samples),
    /// never later than the client's deadline.
    fn bailout_deadline(&self, client: Option<Duration>) -> Duration {
        let d = if self.recent_ms.len() < 8 {
            Duration::from_secs(1)
        } else {
            let median = median(&self.recent_ms).unwrap_or(0.0);
            Duration::from_secs_f64((median * 20.0).clamp(250.0, 2000.0) / 1000.0)
        };
        match client {
            Some(c) if c < d => c,
            _ => d,
        }
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
                let s = 1 + store
                    .args(t)
                    .iter()
                    .map(|a| self.sizes.get(a).copied().unwrap_or(1))
                    .sum::<u32>();
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

/// Whether unsat cores are worth asking for under this logic: with arrays (KLEE's path
/// conditions over input bytes, where refuted branch conditions recur with small cores;
/// sort/all: 52 solver checks without them, 43 with), or no logic said. Not for pure
/// bit-vector or arithmetic logics: hard QF_BV queries lose z3's preprocessing to core
/// tracking (domain.smt2: 13 s of CPU without cores, 28 s with).
fn cores_pay_in(logic: Option<&str>) -> bool {
    match logic {
        None => true,
        Some(l) => l.starts_with("QF_A") || l == "ALL",
    }
}

/// The conjuncts named in a `(get-unsat-core)` answer, `(sp!u3 sp!u7)`: None unless it is
/// a list of `sp!u<k>` names all in `names` (deduplicated, in the answer's order).
fn core_conjuncts(text: &str, names: &FxHashMap<u64, TermId>) -> Option<Vec<TermId>> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut out: Vec<TermId> = Vec::new();
    for tok in inner.split_ascii_whitespace() {
        let k: u64 = tok.strip_prefix("sp!u")?.parse().ok()?;
        let c = *names.get(&k)?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Some(out)
}

/// Keep the last 64 samples.
fn push_window(v: &mut Vec<f64>, x: f64) {
    v.push(x);
    if v.len() > 64 {
        v.remove(0);
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some(v[v.len() / 2])
}

/// The `hybrid` strategy's miss path: the incremental stack in `main`, raced against a
/// fresh context in `aux` when `race`.
pub struct StackMiss<'a> {
    pub stack: &'a mut StackMirror,
    pub main: &'a mut SolverHandle,
    pub aux: &'a mut SolverHandle,
    pub race: bool,
    /// Which backend answered the last `solve`.
    pub last: Via,
}

impl MissPath for StackMiss<'_> {
    type Ahead = InFlight;

    fn begin(&mut self, store: &mut TermStore, q: &Query, stats: &mut Stats) -> Option<InFlight> {
        self.stack.begin(self.main, store, q, stats)
    }

    fn drop_ahead(&mut self, ahead: InFlight) {
        self.stack.drop_inflight(ahead);
    }

    fn solve(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        ahead: Option<InFlight>,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError> {
        let (a, via) = match ahead {
            Some(f) => self
                .stack
                .finish(f, self.main, self.aux, self.race, store, q, stats)?,
            None => self
                .stack
                .check(self.main, self.aux, self.race, store, q, stats)?,
        };
        self.last = via;
        Ok(a)
    }

    fn values(
        &mut self,
        store: &TermStore,
        terms: &[TermId],
    ) -> Result<Option<Vec<String>>, DriverError> {
        match self.last {
            Via::Incremental => {
                let generation = self.main.generation;
                values_in(self.main, generation, store, terms, self.stack.names())
            }
            Via::Fresh => {
                let generation = self.aux.generation;
                values_in(self.aux, generation, store, terms, &BackendNames)
            }
        }
    }

    fn unsat_core(&mut self) -> Option<Vec<TermId>> {
        match self.last {
            Via::Incremental => self.stack.unsat_core(self.main),
            Via::Fresh => None,
        }
    }

    fn stop_cores(&mut self) {
        self.stack.stop_cores();
    }
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

/// Whether the command `text` sets `:global-declarations` (or z3's `:global-decls`).
fn sets_global_declarations(text: &str) -> bool {
    let mut words = text
        .trim_start_matches(|c: char| c == '(' || c.is_whitespace())
        .split(|c: char| c.is_whitespace() || c == ')')
        .filter(|w| !w.is_empty());
    words.next() == Some("set-option")
        && matches!(words.next(), Some(":global-declarations" | ":global-decls"))
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_client_s_global_declarations_are_not_the_backend_s() {
        assert!(sets_global_declarations("(set-option :global-decls false)"));
        assert!(sets_global_declarations(
            "( set-option\n :global-declarations true)"
        ));
        assert!(!sets_global_declarations(
            "(set-option :global-declarations-x true)"
        ));
        assert!(!sets_global_declarations(
            "(set-option :produce-models true)"
        ));
        assert!(!sets_global_declarations("(set-logic QF_BV)"));
    }

    use super::*;

    #[test]
    fn core_answers_map_to_named_conjuncts_only() {
        let names: FxHashMap<u64, TermId> = [(3, TermId(30)), (7, TermId(70)), (9, TermId(70))]
            .into_iter()
            .collect();
        assert_eq!(
            core_conjuncts("(sp!u3 sp!u7)", &names),
            Some(vec![TermId(30), TermId(70)])
        );
        // Two names of one conjunct (asserted twice): once.
        assert_eq!(
            core_conjuncts(" (sp!u7\n sp!u9 sp!u3) ", &names),
            Some(vec![TermId(70), TermId(30)])
        );
        assert_eq!(core_conjuncts("()", &names), Some(vec![]));
        // A name of another generation, a client's name, a term, not a list: nothing.
        assert_eq!(core_conjuncts("(sp!u3 sp!u4)", &names), None);
        assert_eq!(core_conjuncts("(sp!u3 a1)", &names), None);
        assert_eq!(core_conjuncts("(sp!u3 (not x))", &names), None);
        assert_eq!(core_conjuncts("(sp!ux)", &names), None);
        assert_eq!(core_conjuncts("unsupported", &names), None);
        assert_eq!(
            core_conjuncts("(error \"unsat core is not available\")", &names),
            None
        );
    }

    #[test]
    fn cores_only_under_array_logics() {
        for l in ["QF_ABV", "QF_AUFBV", "QF_AX", "QF_ALIA", "ALL"] {
            assert!(cores_pay_in(Some(l)), "{l}");
        }
        assert!(cores_pay_in(None));
        for l in ["QF_BV", "QF_LIA", "QF_UFBV", "QF_S", "LIA"] {
            assert!(!cores_pay_in(Some(l)), "{l}");
        }
    }
}
