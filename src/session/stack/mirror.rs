//! The stack mirror: the one long-lived incremental backend, what it holds, and the flow
//! of a query through it (bring the stack to the query's conjuncts, send the check, wait,
//! race a fresh context or bail out).
//!
//! Invariants:
//! * The backend holds `base` at its base level (no scope) and the conjuncts of
//!   `frames[i]` in scope `i + 1` (one conjunct per scope, except the oldest of a query
//!   that brings more than [`SCOPES_MAX`] new ones, which share one; with `one_scope`,
//!   a query's new conjuncts all share one; see `prefix`); the mirror is valid only for
//!   backend generation `generation` and is cleared whenever the backend restarts, so it
//!   never describes a solver that is gone.
//! * `base` is the client's own base-level assertions while the client pushes above them
//!   (an SMT-LIB incremental benchmark): z3 simplifies base-level assertions far better
//!   than scoped ones. Only a restart removes a base conjunct, so base mode is dropped
//!   when that keeps happening.
//! * A query is looked at past what it shares with the last one: `split` holds the
//!   conjuncts of the last query that came this way, and `base` is among them, so a base
//!   conjunct gone is one `split` took out; every conjunct of each of `base_roots` (a
//!   prefix of the client's base assertions) is in `base` (`base_set` holds `base`), and
//!   each of `declared` (a prefix of the last query's declarations) is held by this
//!   generation under the name it prints with. The last three go with the generation;
//!   `declared` also at any rename.
//! * The backend runs with `:global-declarations true` (a client's own setting of it is
//!   not passed on): declarations and CSE macros live at the base level and survive pops,
//!   so a query only ever pushes assertions (see `names`, `cse`). The client's
//!   definitions (declare-sort, datatypes, define-fun-rec: `defs`) go to a backend at its
//!   start, before any declaration; a query with other definitions starts it over, or
//!   goes to a fresh context while such restarts have been frequent (`defs_detour`).
//! * An incremental solve past its bail-out deadline (see `costs`) is raced against a
//!   fresh context on the auxiliary backend (`--jobs` >= 2). If the fresh context wins,
//!   the incremental solve finishes in the background and the backend is used again once
//!   it has (a first solve over a hard base is often the only slow one). With one job it
//!   is waited for while the stack has been measured far cheaper than fresh contexts
//!   (`Costs::sequential_patience`), else killed; the queries after a bail-out go to fresh
//!   contexts for a while only where the bailed-out query's fresh context cost less than
//!   the wait it replaced.
//! * A probe of what a fresh context costs goes, with a second process (`--jobs` >= 2),
//!   there detached while the stack answers the query, and its cost (the solver's CPU
//!   time) is read at a later query; with one process the query itself is answered in a
//!   fresh context. A probe never answers the client.
//! * A query's pops, declarations, assertions and check-sat go out in one write; their
//!   acknowledgements are read before the check's answer. The cache planner may start a
//!   query ahead of need (`begin`) and then wait for it (`finish`) or drop it
//!   (`drop_inflight`): exactly one of the two follows every `begin`.
//! * While a background check runs (`pending`: a race a fresh context won, or a dropped
//!   speculation), nothing else is sent to the backend; its acknowledgements and answer
//!   are read and dropped first (`settle`, which waits for a dropped speculation up to its
//!   bail-out deadline), or the backend is killed (`abandon`).
//! * The backend is restarted when it has accumulated too many scopes, macros, names or
//!   declarations, when a base conjunct is no longer wanted, and when it has grown dear
//!   (see `costs`).
//! * A portfolio member's stack (`send_raced`, `poll_raced`) takes the same way through
//!   the mirror but is raced by the portfolio, not by `costs`: it never probes, bails out,
//!   backs off or runs anything in the background, and a loser is killed (`abandon`), so
//!   the mirror is cleared and the next query rebuilds the stack from its own conjuncts.

use super::cores::{cores_slow_ms, Cores, CORE_MAX_CONJUNCTS};
use super::costs::Costs;
use super::cse::Cse;
use super::names::StackNames;
use super::prefix::{
    frames_kept, scopes, sets_global_declarations, split_conjuncts, Sightings, Split, SplitChange,
};
use super::verbatim;
use crate::driver::{DriverError, Response};
use crate::session::backend::SolverHandle;
use crate::session::client::Decl;
use crate::session::fresh::{fresh_check, fresh_script};
use crate::session::stats::Stats;
use crate::session::vocab::{check_text, response_answer, Answer, Query};
use crate::smt2::printer::write_term;
use crate::term::{TermId, TermStore};
use rustc_hash::FxHashSet;
use std::time::{Duration, Instant};

/// Restart the incremental backend after this many pushes since it started.
const MAX_PUSHES: u64 = 200_000;
/// ... or this many CSE macros.
const MAX_MACROS: usize = 100_000;
/// New conjuncts of one query beyond this many share a scope (the oldest of them): a
/// query of 300,000 conjuncts pushed one scope each kept z3 busy for over ten minutes,
/// where it solves the same query from scratch in 15 s.
const SCOPES_MAX: usize = 64;
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

pub struct StackMirror {
    /// `stack-cse`: what CSE has counted (see `cse`); `None` without macros.
    cse: Option<Cse>,
    /// The new conjuncts of a query go in one scope, not one each: hybrid's stack sees
    /// only cache misses, which share less with the query before than a whole KLEE
    /// stream does, and z3 pays for every scope (hybrid on seven logs, medians of three
    /// runs: 0.78-0.95 of the time with one scope per conjunct).
    one_scope: bool,
    /// Conjuncts asserted at the backend's base level (no scope), never popped: the
    /// assertions the client itself keeps below its own pushes.
    base: Vec<TermId>,
    /// The members of `base`.
    base_set: FxHashSet<TermId>,
    /// Client base assertions (`Query::base`, a prefix of the last query's) every
    /// conjunct of which is in `base`: a query whose base extends them looks only at the
    /// rest.
    base_roots: Vec<TermId>,
    /// Client declarations (a prefix of the last query's `Query::decls`) this generation
    /// holds as they are, no rename made since: a query's declarations past them are the
    /// ones looked up.
    declared: Vec<Decl>,
    /// The last query's conjuncts, kept to split the next one's (see `Split`).
    split: Split,
    /// Backends restarted because a base conjunct was no longer wanted.
    base_drops: u64,
    /// Backends restarted because a query's definitions were not those they started with.
    defs_drops: u64,
    /// The client's own text of a base assertion may be sent (`verbatim`): true until the
    /// backend refuses a command of a batch that held one.
    verbatim: bool,
    /// A client's text went to the backend since its last check was answered.
    verbatim_sent: bool,
    /// The backend refused a batch that held a client's text: the query is posed again,
    /// printed from the terms.
    verbatim_refused: bool,
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
    /// The client's definitions (declare-sort, datatypes, define-fun-rec: `Query::defs`)
    /// sent to this generation at its start, in order; a query with other definitions
    /// starts a new generation.
    defs: Vec<String>,
    preamble: Vec<String>,
    /// When each conjunct was first seen (the order of pushes).
    sightings: Sightings,
    pushes: u64,
    /// The costs measured, and when to probe, bail out or back off (see `costs`).
    costs: Costs,
    /// The backend has grown dear since its first queries (as cvc5 does, keeping memory
    /// across pops) and is to be restarted.
    rebuild_due: bool,
    /// The ms of incremental solves since the base came to hold unnamed conjuncts beside
    /// named ones, while the rebuild that drops the named ones waits for them to have
    /// cost what a rebuild would (see `defer_unnamed_rebuild`).
    named_debt: Option<f64>,
    rename_counter: u64,
    /// Unsat cores (see `cores`). The assertions of a small query are named `sp!u<k>`
    /// (`naming`, `frames_named`, `base_named`); a core is asked for only when every
    /// assertion in the backend is named.
    cores: Cores,
}

impl StackMirror {
    /// `one_scope`: all new conjuncts of a query share one scope (see `one_scope`).
    pub fn new(cse: bool, one_scope: bool) -> Self {
        StackMirror {
            cse: cse.then(Cse::default),
            one_scope,
            base: Vec::new(),
            base_set: FxHashSet::default(),
            base_roots: Vec::new(),
            declared: Vec::new(),
            split: Split::default(),
            base_drops: 0,
            defs_drops: 0,
            pending: None,
            frames: Vec::new(),
            frames_named: Vec::new(),
            base_named: true,
            naming: false,
            generation: u64::MAX,
            names: StackNames::default(),
            defs: Vec::new(),
            preamble: Vec::new(),
            sightings: Sightings::default(),
            pushes: 0,
            costs: Costs::new(),
            rebuild_due: false,
            named_debt: None,
            rename_counter: 0,
            cores: Cores::default(),
            verbatim: true,
            verbatim_sent: false,
            verbatim_refused: false,
        }
    }

    /// Ask for unsat cores (see `cores`): the assertions of small queries are named, so
    /// that an unsat answer can come with a core (`unsat_core`). Takes effect from the
    /// next backend generation on.
    pub fn with_cores(mut self, on: bool) -> Self {
        self.cores.wanted = on;
        self
    }

    /// Whether a client's base assertion may go as written (`verbatim`): only to a solver
    /// of the client's own dialect, for which the client wrote it (not to another member
    /// of a portfolio, which may read the same text otherwise).
    pub fn with_client_text(mut self, on: bool) -> Self {
        self.verbatim = on;
        self
    }

    pub fn names(&self) -> &StackNames {
        &self.names
    }

    /// Forget everything about the backend (it will be restarted).
    pub fn clear(&mut self) {
        self.pending = None;
        self.verbatim_sent = false;
        self.costs.new_process();
        self.rebuild_due = false;
        self.named_debt = None;
        self.base.clear();
        self.base_set.clear();
        self.base_roots.clear();
        self.declared.clear();
        self.frames.clear();
        self.frames_named.clear();
        self.base_named = true;
        self.generation = u64::MAX;
        self.names = StackNames::default();
        self.defs.clear();
        self.cores.clear();
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
        self.costs.queries += 1;
        if !self.settle(main, stats) {
            stats.stack_detours += 1;
            if race {
                return self.fresh_while_pending(main, aux, store, q, stats);
            }
            return self.fresh(aux, store, q, stats);
        }
        if self.costs.backing_off(self.costs.queries) || self.defs_detour(main, q) {
            stats.stack_detours += 1;
            return self.fresh(aux, store, q, stats);
        }
        if self.costs.probe_due(self.costs.queries) {
            // Measure a fresh context now and then: the yardstick for judging the stack.
            self.costs.schedule_probe();
            // With a second process, the fresh context is measured there while the stack
            // answers; with one, the query is answered fresh.
            if !(race && self.probe_detached(aux, store, q, stats)) {
                stats.stack_detours += 1;
                return self.fresh(aux, store, q, stats);
            }
        }
        // Only a refusal in this query's own batch asks for it to be posed again.
        self.verbatim_refused = false;
        for attempt in 0..3 {
            match self.try_check(main, aux, race, store, q, stats) {
                Err(DriverError::Died { .. } | DriverError::Io(_)) if attempt == 0 => {
                    stats.note("stack backend died; restarting it".into());
                    self.clear();
                    main.kill();
                }
                Ok((Answer::Unknown, _)) if std::mem::take(&mut self.verbatim_refused) => {}
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
            self.costs
                .bailout_deadline(h.timeout)
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
                    self.refused();
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
                self.costs.back_off();
                true
            }
            Err(_) => {
                self.clear();
                true
            }
        }
    }

    /// Whether `begin` would find the backend free, waiting up to `wait`: no check of its
    /// own is still running in it (a dropped speculation is read once it has answered).
    pub fn idle(&mut self, h: &mut SolverHandle, wait: Duration, stats: &mut Stats) -> bool {
        match self.pending {
            Some(p) if p.generation == h.generation && h.is_running() => {
                h.responses_ready(p.acks + 1, wait) && self.settle(h, stats)
            }
            _ => true,
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
        self.split.forget_terms();
        self.sightings.forget_terms();
        if let Some(cse) = self.cse.as_mut() {
            cse.forget_terms();
        }
    }

    /// The backend is still busy with a check left in the background (a race's loser): the
    /// query is solved fresh on `aux`, and once the background check is over it is posed
    /// to the stack as well, the two raced as in `race`. A hard base's first incremental
    /// solve is what makes the ones after it cheap, so the queries that come while it
    /// finishes are not all left to fresh contexts (each of which pays the base again).
    fn fresh_while_pending(
        &mut self,
        main: &mut SolverHandle,
        aux: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<(Answer, Via), DriverError> {
        let fresh_t0 = Instant::now();
        if !start_fresh(aux, store, q, stats) {
            return self.fresh(aux, store, q, stats);
        }
        loop {
            if main.timeout.is_some_and(|c| fresh_t0.elapsed() >= c) {
                aux.kill();
                stats.timeouts += 1;
                return Ok((Answer::Unknown, Via::Fresh));
            }
            match aux.poll(RACE_SLICE) {
                Ok(Some(resp)) => {
                    self.costs.record_fresh(fresh_t0.elapsed());
                    return Ok((response_answer(&resp), Via::Fresh));
                }
                Ok(None) => {}
                // The fresh context died: posed again the usual way (a restart, once).
                Err(_) => return self.fresh(aux, store, q, stats),
            }
            if self.pending.is_none() || !self.settle(main, stats) {
                continue;
            }
            // The background check is over: the stack joins in.
            match self.try_begin(main, store, q, stats) {
                Ok(InFlight::Sent { t0, acks, .. }) => match main.acks(acks) {
                    Ok(Ok(())) => {
                        self.verbatim_sent = false;
                        return self.race(main, aux, store, q, stats, t0, Some(fresh_t0));
                    }
                    refused_or_dead => {
                        if matches!(refused_or_dead, Ok(Err(_))) {
                            // No more client texts; the fresh context answers this query.
                            self.refused();
                            self.verbatim_refused = false;
                        }
                        main.kill();
                        self.clear();
                    }
                },
                Ok(InFlight::Done(a)) if a != Answer::Unknown => {
                    aux.kill();
                    return Ok((a, Via::Incremental));
                }
                _ => {
                    // Dead or out of time: the fresh context answers alone, and the stack
                    // starts over at the next query.
                    main.kill();
                    self.clear();
                }
            }
        }
    }

    /// The backend refused a command: if a client's text was among those sent, no more
    /// texts go this session, and the query is posed again (`check`, `finish`).
    fn refused(&mut self) {
        if self.verbatim_sent {
            self.verbatim = false;
            self.verbatim_refused = true;
        }
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
        self.costs.record_fresh(t0.elapsed());
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
            self.costs.record_fresh(d);
        } else if let Some(age) = aux.detached_age().filter(|&a| a > BACKGROUND_MAX) {
            aux.kill();
            self.costs.record_fresh(age);
        }
    }

    fn too_large(&self) -> bool {
        self.pushes > MAX_PUSHES
            || self.names.macros.len() > MAX_MACROS
            || self.names.declared.len() > MAX_MACROS
            || self.cores.len() > MAX_MACROS
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
        let next = self.costs.queries + 1;
        // A process still building its context (`warm`) would make this wait for it.
        if main.warming()
            || !self.settle(main, stats)
            || self.costs.backing_off(next)
            || self.costs.probe_due(next)
            || self.defs_detour(main, q)
        {
            return None;
        }
        self.costs.queries = next;
        match self.try_begin(main, store, q, stats) {
            Ok(f) => Some(f),
            Err(_) => {
                // Nothing is pending on a dead or failed backend; `check` restarts it.
                self.costs.queries -= 1;
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
                self.verbatim_refused = false;
                match self.wait(main, aux, race, store, q, stats, t0, deadline, acks, now) {
                    Err(DriverError::Died { .. } | DriverError::Io(_)) => {
                        stats.note("stack backend died; restarting it".into());
                        self.clear();
                        main.kill();
                        self.costs.queries -= 1;
                        self.check(main, aux, race, store, q, stats)
                    }
                    Ok((Answer::Unknown, _)) if std::mem::take(&mut self.verbatim_refused) => {
                        self.costs.queries -= 1;
                        self.check(main, aux, race, store, q, stats)
                    }
                    r => r,
                }
            }
            InFlight::Sent { .. } => {
                self.costs.queries -= 1;
                self.check(main, aux, race, store, q, stats)
            }
        }
    }

    /// Pose `q` to this stack without waiting, for a portfolio member raced against other
    /// solvers (`portfolio`): the stack is brought to the query's conjuncts and the check
    /// sent as `begin` does, but none of the stack's own yardstick applies (no probe,
    /// bail-out or back-off: the portfolio's learner measures each member, and a loser is
    /// killed). A background check still out is given up first. Read the answer with
    /// `poll_raced`; a member killed since (`abandon`) is rebuilt here, from the query.
    pub fn send_raced(
        &mut self,
        h: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<InFlight, DriverError> {
        if self.pending.is_some() {
            self.abandon(h);
        }
        self.try_begin(h, store, q, stats)
    }

    /// One look, waiting up to `wait`, at a check sent by `send_raced`: `Ok(None)` while it
    /// runs, else the solver's answer to it (a refused command of the query comes back as
    /// that error, and the backend is given up: its state is not what the mirror says).
    /// An error when the process died or is not the one the check went to.
    pub fn poll_raced(
        &mut self,
        h: &mut SolverHandle,
        f: &mut InFlight,
        wait: Duration,
    ) -> Result<Option<Response>, DriverError> {
        let acks = match f {
            InFlight::Done(a) => {
                return Ok(Some(match a {
                    Answer::Sat => Response::Sat,
                    Answer::Unsat => Response::Unsat,
                    Answer::Unknown => Response::Unknown,
                }))
            }
            InFlight::Sent {
                generation, acks, ..
            } if *generation == self.generation && *generation == h.generation => acks,
            InFlight::Sent { .. } => {
                return Err(DriverError::Died {
                    exit: None,
                    stderr: "the solver process the check went to is gone".into(),
                })
            }
        };
        let until = Instant::now() + wait;
        loop {
            match h.poll(until.saturating_duration_since(Instant::now())) {
                Ok(Some(Response::Error(e))) if *acks > 0 => {
                    self.refused();
                    self.abandon(h);
                    return Ok(Some(Response::Error(e)));
                }
                Ok(Some(_)) if *acks > 0 => *acks -= 1,
                Ok(r) => return Ok(r),
                Err(e) => {
                    self.clear();
                    return Err(e);
                }
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

    /// Whether the answer to `f` has come (waiting up to `wait`), so that `finish` would
    /// not wait for the solver; nothing is read. True for an answer already known, or a
    /// process that is not the one `f` went to (`finish` then says so at once).
    pub fn ready(&mut self, main: &mut SolverHandle, f: &InFlight, wait: Duration) -> bool {
        match *f {
            InFlight::Done(_) => true,
            InFlight::Sent {
                generation, acks, ..
            } if generation == main.generation && generation == self.generation => {
                main.responses_ready(acks + 1, wait)
            }
            InFlight::Sent { .. } => true,
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
        let mut split = std::mem::take(&mut self.split);
        let change = split.update(store, q.assertions);
        let r = self.begin_split(h, store, q, &split, change, stats);
        self.split = split;
        r
    }

    /// Mirror a new process of generation `gen`, empty: `cmds` gets what every process is
    /// told first (models, global declarations, cores where they are learned, the client's
    /// options and logic, its definitions), for `q`.
    fn open_generation(
        &mut self,
        gen: u64,
        q: &Query,
        options: Vec<String>,
        cmds: &mut Vec<String>,
    ) {
        self.clear();
        self.generation = gen;
        cmds.push("(set-option :produce-models true)".into());
        cmds.push("(set-option :global-declarations true)".into());
        if self.cores.start(q.logic) {
            cmds.push("(set-option :produce-unsat-cores true)".into());
        }
        cmds.extend(options.iter().cloned());
        cmds.extend(q.defs.iter().cloned());
        self.defs = q.defs.to_vec();
        self.preamble = options;
    }

    /// Start `h`'s first process ahead of need, told what `try_begin` would tell it for
    /// `q` first (`open_generation`) and the solver's warm-up (`SolverKind::warm_up`), so
    /// that it builds its context while smtproxy answers queries itself: z3 takes about
    /// 11 ms there, which the first query it is sent would otherwise wait for. Nothing is
    /// read; the first use reads it all (`SolverHandle::prestart_with`). Only a solver
    /// that has a warm-up (a start costs the engine ~0.3 ms, and yices' own start is less
    /// than its context's) and a handle that never ran a process: a restart happens where
    /// the process is needed anyway.
    pub fn warm(&mut self, h: &mut SolverHandle, q: &Query) {
        let Some(warm_up) = h.spec().kind.warm_up() else {
            return;
        };
        if h.generation != 0 || h.is_running() {
            return;
        }
        let mut cmds = Vec::new();
        // The process `prestart_with` starts is generation 1, the handle's first.
        self.open_generation(1, q, backend_options(q), &mut cmds);
        cmds.push(warm_up.into());
        match h.prestart_with(&cmds) {
            Some(gen) => self.generation = gen,
            None => self.clear(),
        }
    }

    /// `try_begin` with the query's conjuncts split (`split`, `change` what changed since
    /// the last query's).
    fn begin_split(
        &mut self,
        h: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        split: &Split,
        change: SplitChange,
        stats: &mut Stats,
    ) -> Result<InFlight, DriverError> {
        let options = backend_options(q);
        let conjuncts = split.conjuncts();
        // Base-level conjuncts can only be dropped by starting over. The base holds
        // conjuncts of the last query only, so a conjunct gone is one taken out of it.
        let base_gone = change
            .removed
            .iter()
            .any(|c| self.base_set.contains(c) && !split.contains(*c));
        if base_gone {
            self.base_drops += 1;
        }
        // First sightings: of the conjuncts split anew (the others were seen when they
        // were), or of all when the table starts over.
        let seen_from = if self.sightings.bound(conjuncts.len()) {
            0
        } else {
            change.added_from
        };
        if let Some(cse) = self.cse.as_mut() {
            cse.bound();
        }
        for &c in &conjuncts[seen_from..] {
            if self.sightings.see(c) {
                if let Some(cse) = self.cse.as_mut() {
                    cse.count_subterms(store, c);
                }
            }
        }
        // Definitions go to a backend at its start only, before any declaration: the
        // client's text names its symbols as written, and a name a popped definition or
        // declaration left in the backend could clash with it. A query whose definitions
        // are not those the backend started with starts it over.
        let defs_changed = self.defs_changed(h, q);
        if defs_changed {
            self.defs_drops += 1;
        }
        let rebuild = self.too_large() || base_gone || defs_changed || self.rebuild_due;
        if rebuild || (self.describes(h) && options != self.preamble) {
            if rebuild {
                stats.stack_rebuilds += 1;
            }
            h.kill();
            self.clear();
        }
        let gen = h.start()?;
        let mut cmds: Vec<String> = Vec::new();
        if gen != self.generation {
            self.open_generation(gen, q, options, &mut cmds);
        }
        // The client's own base-level assertions (it pushes above them) go to the backend's
        // base level too: z3 simplifies base-level assertions far better than scoped ones.
        // Adding to the base means popping every scope first.
        // Each client assertion's new conjuncts, with its text when all of them are new.
        // The client's base assertions come first among the query's; once each has its
        // conjuncts in the base, only those past the ones looked at last time are new.
        let base_first = q.assertions.starts_with(q.base);
        let base_from = if q.base.starts_with(&self.base_roots) {
            self.base_roots.len()
        } else {
            0
        };
        let mut new_base: Vec<(Option<&str>, Vec<TermId>)> = Vec::new();
        let base_whole = base_first && self.base_allowed();
        if self.base_allowed() {
            let mut added: FxHashSet<TermId> = FxHashSet::default();
            for (i, &root) in q.base.iter().enumerate().skip(base_from) {
                let all = split_conjuncts(store, &[root]);
                let fresh: Vec<TermId> = all
                    .iter()
                    .copied()
                    .filter(|&c| {
                        split.contains(c) && !self.base_set.contains(&c) && added.insert(c)
                    })
                    .collect();
                if fresh.is_empty() {
                    continue;
                }
                let text = q.base_text.get(i).copied().flatten();
                let whole = self.verbatim && fresh.len() == all.len();
                new_base.push((text.filter(|_| whole), fresh));
            }
        }
        let keep = if new_base.is_empty() {
            frames_kept(&self.frames, split.set())
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
            .chain(new_base.iter().flat_map(|(_, cs)| cs.iter()))
            .copied()
            .collect();
        // The conjuncts of the client's base assertions are all in the base now when each
        // of those was looked at (`base_whole`).
        let scan_from = if base_whole {
            split.end_of(q.base.len())
        } else {
            0
        };
        let mut new: Vec<TermId> = conjuncts[scan_from..]
            .iter()
            .copied()
            .filter(|c| !self.base_set.contains(c) && !kept.contains(c))
            .collect();
        self.sightings.oldest_first(&mut new);
        // Declarations (global): those past the ones this generation holds as they are.
        let common = self
            .declared
            .iter()
            .zip(q.decls)
            .take_while(|(a, b)| a == b)
            .count();
        self.declared.truncate(common);
        let renames = self.rename_counter;
        for d in &q.decls[common..] {
            if let Some(text) = self.names.declare(store, d, &mut self.rename_counter) {
                cmds.push(text);
            }
        }
        if self.rename_counter == renames {
            self.declared.extend_from_slice(&q.decls[common..]);
        } else {
            // A rename changes the name an earlier declaration prints under.
            self.declared.clear();
        }
        // Named (for cores) only when the query is small: naming costs z3 time on every
        // assertion (sbase-expr/all, about 110 conjuncts a check: 0.24 s of z3 CPU plain,
        // 0.31 s named), and the small components are where cores recur. Nor once the
        // base holds an unnamed conjunct: no core is asked for in this backend again.
        self.naming = self.cores.on && self.base_named && conjuncts.len() <= CORE_MAX_CONJUNCTS;
        // Named conjuncts in the base that no core can name from now on (below).
        let named_base = self.cores.on && self.base_named && !self.base.is_empty();
        for (text, cs) in &new_base {
            match text.filter(|t| verbatim::usable(t, store, q.sig, &self.names)) {
                Some(t) => {
                    // As the client wrote it (unnamed: no core can name these).
                    cmds.push(t.to_string());
                    self.base_named = false;
                    self.verbatim_sent = true;
                }
                None => {
                    for &c in cs {
                        self.assert_text(store, c, &mut cmds);
                    }
                }
            }
            self.base.extend(cs.iter().copied());
            self.base_set.extend(cs.iter().copied());
        }
        if base_whole {
            // Every conjunct of the client's base assertions is in the base.
            self.base_roots.truncate(base_from);
            self.base_roots.extend_from_slice(&q.base[base_from..]);
        } else {
            self.base_roots.clear();
        }
        if !new_base.is_empty() {
            self.base_named &= self.naming;
        }
        if named_base && !self.base_named {
            // The base, never popped, now holds unnamed conjuncts beside named ones: no
            // core can be asked in this backend again, and its named conjuncts cost z3
            // time on every later check (a yosys-smtbmc session asserting each step at
            // the base: 370 ms of z3 for 1,200 checks with 19 named conjuncts left there,
            // 187 ms without them). Cores go off, and the backend is rebuilt without them
            // once that pays.
            self.defer_unnamed_rebuild();
        }
        // The oldest new conjuncts share one scope when there are very many of them.
        let max_scopes = if self.one_scope { 1 } else { SCOPES_MAX };
        for group in scopes(&new, max_scopes) {
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
        let deadline = self.costs.bailout_deadline(h.timeout);
        let generation = self.generation;
        // Pops, declarations, assertions and the check in one write, nothing read yet: the
        // solver works through them while the caller goes on (z3 spends about as long on
        // a KLEE query's pops and assertions as on its check).
        let t0 = Instant::now();
        if let Some(acks) = h.send_with_check(&cmds, &check)? {
            stats.solver_checks += 1;
            self.costs.batch_ms = 0.0;
            return Ok(InFlight::Sent {
                t0,
                deadline,
                generation,
                acks,
            });
        }
        let sent = h.batch(&cmds);
        self.costs.batch_ms = t0.elapsed().as_secs_f64() * 1000.0;
        match sent {
            Ok(Ok(())) => self.verbatim_sent = false,
            Ok(Err(e)) => {
                // The backend refused something: its state is uncertain; start over.
                stats.note(format!("stack backend rejected a command: {e}"));
                self.refused();
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

    /// The answer to the check sent at `t0`: within the bail-out `deadline` (with one
    /// process, the patience a far cheaper stack earns), else raced against a fresh context
    /// or abandoned for one. Its cost is counted from `cost_from`.
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
            Ok(Ok(())) => self.verbatim_sent = false,
            Ok(Err(e)) => {
                // The backend refused something: its state is uncertain; start over.
                stats.note(format!("stack backend rejected a command: {e}"));
                self.refused();
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
        // With one process, a stack far cheaper than fresh contexts is waited for longer
        // (`Costs::sequential_patience`): a bail-out there kills what the solver learnt.
        let limit = if race {
            deadline
        } else {
            self.costs.sequential_patience(deadline, h.timeout)
        };
        if let Some(resp) = h.poll(limit.saturating_sub(t0.elapsed()))? {
            return Ok((self.incremental_answer(&resp, cost_from), Via::Incremental));
        }
        if Some(limit) == h.timeout {
            // The client's own deadline.
            h.kill();
            self.clear();
            stats.timeouts += 1;
            return Ok((Answer::Unknown, Via::Incremental));
        }
        if race {
            return self.race(h, aux, store, q, stats, t0, None);
        }
        let waited = t0.elapsed();
        h.kill();
        let cores_on = self.cores.on;
        self.clear();
        stats.stack_bailouts += 1;
        let fresh_t0 = Instant::now();
        let answered = self.fresh(aux, store, q, stats)?;
        if cores_on {
            // Judged again without named assertions (see `incremental_answer`).
            self.cores_off();
        } else if fresh_t0.elapsed() < waited {
            // The fresh context paid: the next queries go to fresh contexts for a while.
            // Where it cost more than the solve given up had, backing off would make every
            // one of those queries pay it.
            self.costs.back_off();
        }
        Ok(answered)
    }

    /// The incremental solve finished: note its time, and back off to fresh contexts if it
    /// was far slower than fresh ones have been (the answer stands).
    fn incremental_answer(&mut self, resp: &Response, t0: Instant) -> Answer {
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        if self.cores.on && ms > cores_slow_ms() {
            // Slow with named assertions: the stack is judged again without them, so this
            // solve counts neither towards its costs nor towards a back-off.
            self.cores_off();
            return response_answer(resp);
        }
        if self.costs.incremental(ms) {
            self.rebuild_due = true;
        }
        if let Some(debt) = self.named_debt.as_mut() {
            *debt += ms;
            // What a rebuild costs, about: this process's first query, which sent it the
            // base and waited for its context. None measured: rebuild now.
            if self.costs.first_ms().is_none_or(|rebuild| *debt >= rebuild) {
                self.rebuild_due = true;
            }
        }
        response_answer(resp)
    }

    /// The incremental solve on `h` is past its bail-out deadline: solve the query fresh on
    /// `aux` meanwhile and answer with whichever comes first. If the fresh context wins,
    /// the incremental solve is left running in the background (`pending`): the first
    /// incremental solve over a hard base can take 100x a fresh one while the ones after it
    /// take a tenth (z3 keeps what it learnt), so it is worth finishing on the other core;
    /// meanwhile queries go to fresh contexts. `fresh`: the fresh context of this query
    /// already running on `aux` since then (`fresh_while_pending`), else it is started
    /// here. The client's deadline counts from whichever began first.
    #[allow(clippy::too_many_arguments)]
    fn race(
        &mut self,
        h: &mut SolverHandle,
        aux: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
        t0: Instant,
        fresh: Option<Instant>,
    ) -> Result<(Answer, Via), DriverError> {
        stats.stack_races += 1;
        let (fresh_t0, mut fresh_running) = match fresh {
            Some(at) => (at, true),
            None => (Instant::now(), start_fresh(aux, store, q, stats)),
        };
        let began = fresh_t0.min(t0);
        let mut incremental_running = true;
        loop {
            if h.timeout.is_some_and(|c| began.elapsed() >= c) {
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
                        if self.cores.on {
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
                        self.costs.record_fresh(fresh_t0.elapsed());
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
        if let Some(cse) = self.cse.as_mut() {
            cse.define_macros(store, c, &mut self.names, cmds);
        }
        let mut s = String::from("(assert ");
        if self.naming {
            let k = self.cores.name(c);
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
        self.cores.stop();
    }

    /// No more unsat cores this session; a backend that has them on (or whose rebuild
    /// without them was deferred) is rebuilt without.
    fn cores_off(&mut self) {
        self.rebuild_due |= self.cores.off() || self.named_debt.is_some();
    }

    /// No more unsat cores this session, the base now holding unnamed conjuncts beside
    /// named ones: the backend is rebuilt without the named ones once the incremental
    /// solves since have cost what a rebuild costs (its process's first query), not at
    /// once. The named conjuncts cost the solver a share of each check; a rebuild costs a
    /// new context and the base again, which a session that leaves the modelled route
    /// soon, or checks little, never earns back (yosys-smtbmc's 1,200 steps behind z3:
    /// rebuilt after its seventh query and passed through to a new z3 after its
    /// sixteenth, 144 ms against 129 without the rebuild, z3 alone 104). Paying the
    /// overhead up to the rebuild's cost first costs at most twice the better choice.
    fn defer_unnamed_rebuild(&mut self) {
        if self.cores.off() {
            self.named_debt.get_or_insert(0.0);
        }
    }

    /// The conjuncts of an unsat core of the backend's last check, which it has just
    /// answered `unsat` (call before anything else is sent to it). Only with cores on, in
    /// the generation the mirror describes, and only a core made wholly of this
    /// generation's names: then the core's conjuncts are unsatisfiable by themselves.
    /// Never empty (an empty core would refute everything: a backend giving one is not
    /// believed).
    pub fn unsat_core(&mut self, h: &mut SolverHandle) -> Option<Vec<TermId>> {
        if !self.cores.on
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
        let core = self.cores.conjuncts(&text)?;
        (!core.is_empty()).then_some(core)
    }

    /// Whether `h` runs the backend generation this mirror describes.
    fn describes(&self, h: &SolverHandle) -> bool {
        h.is_running() && self.generation == h.generation
    }

    /// Whether `q`'s definitions are not those the running backend started with.
    fn defs_changed(&self, h: &SolverHandle, q: &Query) -> bool {
        self.describes(h) && q.defs != self.defs.as_slice()
    }

    /// Whether `q` goes to a fresh context rather than restart the backend for its
    /// definitions: when such restarts have been frequent (a client that declares a sort
    /// or datatype in the scope of each query), each would cost a solver's start.
    fn defs_detour(&self, h: &SolverHandle, q: &Query) -> bool {
        self.defs_changed(h, q) && self.defs_drops > self.costs.queries / 8
    }

    /// Base-level assertions are used unless dropping them (a restart each time) has been
    /// frequent: more than one drop per 16 queries, as when the components of a sliced
    /// query take turns on the backend.
    fn base_allowed(&self) -> bool {
        self.base_drops <= self.costs.queries / 16
    }

    /// Time spent reading the model of the last query: on the stack backend
    /// (`incremental`) or a fresh context; added to that query's cost.
    pub fn add_model_cost(&mut self, incremental: bool, d: Duration) {
        self.costs.add_model_cost(incremental, d);
    }
}

/// The client's options and logic as a backend is told them. The client's own
/// `:global-declarations` is modelled by smtproxy; the backend keeps its own (true, see
/// `open_generation`): a client's `false` there would let a pop drop declarations the
/// mirror still counts as made.
fn backend_options(q: &Query) -> Vec<String> {
    q.preamble
        .iter()
        .filter(|c| !sets_global_declarations(c))
        .cloned()
        .collect()
}

/// Send `q` in a fresh context to `aux` and its check-sat, without waiting for the answer
/// (`aux.poll` reads it). False when it could not go out (the backend refused the query,
/// or died).
fn start_fresh(aux: &mut SolverHandle, store: &TermStore, q: &Query, stats: &mut Stats) -> bool {
    let (cmds, check) = fresh_script(store, q);
    let sent = match aux.batch(&cmds) {
        Ok(Ok(())) => aux.send_check(&check).is_ok(),
        Ok(Err(e)) => {
            stats.note(format!("backend rejected the query: {e}"));
            false
        }
        Err(_) => false,
    };
    if sent {
        stats.solver_checks += 1;
    }
    sent
}
