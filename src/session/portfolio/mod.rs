//! The portfolio (`--solver z3,yices,cvc5`): the miss path of the modelled strategies
//! with several solvers behind it. [`PortfolioMiss`] wraps the first solver's own miss
//! path (hybrid's incremental stack, or cache's fresh context) and [`Portfolio`] holds one
//! more backend per solver (the first one included). Under hybrid every other member
//! keeps its own long-lived incremental stack (`stack::StackMirror`, the machinery of the
//! first solver's stack: only the difference from the query before is popped and
//! pushed, `send_raced`), so a solver the learner picks for a class answers from its
//! stack; the first solver's own stack is the primary path's, and a race with the first
//! solver in it poses the query there (its time was measured there), beside the others
//! (`PortfolioMiss::race_own_path`). Where that path cannot take it now, and under
//! `cache`, the first solver is posed it in a fresh context (`fresh::fresh_script`), as
//! a member without a stack is. Either way the check goes out without waiting, so that
//! several members can work at once. Per query class the [`learner`] says who answers:
//! the first solver's own path when it has been fastest there, another solver alone (the
//! rest joining once it runs past a threshold learned from its times), or a race.
//!
//! Invariants:
//! * The first definitive answer (sat/unsat) of a race wins and the other racers are
//!   killed (`Portfolio::stop`: the process and its mirror go together); a killed or dead
//!   member is restarted only when it is next needed, and its stack is then rebuilt from
//!   the mirror's view of that query (its conjuncts, pushed afresh), never assumed.
//!   `unknown`, an error, a rejected command or a death is no answer while another member
//!   may still give one: the next member is started instead.
//! * A member's stack has at most one check out (`Member::sent`). A solve started ahead
//!   and dropped is read at the member's next use, waited for `SETTLE_MAX` at most,
//!   else the member is killed; a fresh context on a member that keeps a stack gives the
//!   stack up first (the `(reset)` empties it).
//! * At most `--jobs` members run at once (one, with `--jobs 1`: no race, no escalation).
//! * This path only says `sat`; the cache stage asks `values` of the very process that
//!   answered and serves the sat only with a model it evaluated true on the client's query
//!   (else the query goes to the first solver). Values the client asks for are printed by
//!   smtproxy from that model, in the first solver's dialect.
//! * The first solver, when its start builds a costly context (z3, cvc5:
//!   `SolverKind::warm_up`), is started at the session's first component past the memory
//!   tier, before any query needs it, and told its options, its logic and the warm-up
//!   (`StackMirror::warm`): the first exploring race, which waits for its answer, would
//!   otherwise wait for its context (z3 ~11 ms). The others start when first needed.
//! * While a class is explored the first solver's own path and the others are posed the
//!   query side by side, processes that are not running started together
//!   (`SolverHandle::prestart`: none waits for another's start). Another member's `sat`
//!   that comes first is taken (it is served only with a model smtproxy evaluated), and the
//!   first solver's solve is left to finish in the background; another's `unsat` waits
//!   for the first solver's answer (with `--first-answer-wins` it is taken as a `sat`
//!   is, and trusted as a member's answer is once its class is explored); when the first
//!   solver answers first, the others are waited for (a bounded while) to be measured.
//!   Whenever both are at hand (always for a member's `unsat` while exploring, unless the
//!   first answer wins), a sat whose model smtproxy evaluated true and an
//!   unsat for the same query is a solver bug: it is reported on stderr, counted
//!   (`solver_disagreements`), the sat is answered (the unsat is neither served nor
//!   stored), and the solver that said unsat leaves the portfolio.
//! * A member that fails (cannot be started, refuses a command, dies during a check)
//!   before any of its processes has answered does not run here: it leaves the portfolio
//!   with one warning, never started again. One that has answered is restarted when next
//!   needed. The first solver never leaves (it is the client's).

pub mod learner;

use learner::{ClassKey, Learner, Plan};

use super::backend::SolverHandle;
use super::cache_stage::model_satisfies;
use super::fresh::{fresh_script, values_in};
use super::miss::MissPath;
use super::stack::{InFlight, StackMirror};
use super::stats::{SolverCounts, Stats};
use super::vocab::{model_of_values, response_answer, Answer, Query};
use crate::driver::{DriverError, Response, SolverSpec};
use crate::query::slice::free_symbols_of;
use crate::smt2::printer::BackendNames;
use crate::term::{TermId, TermStore};
use std::time::{Duration, Instant};

/// After the first answer of an exploring race, the others are waited for this many times
/// as long as it took, and at least [`EXPLORE_GRACE_MIN`], at most [`EXPLORE_GRACE_MAX`].
const EXPLORE_GRACE_FACTOR: u32 = 3;
const EXPLORE_GRACE_MIN: Duration = Duration::from_millis(5);
const EXPLORE_GRACE_MAX: Duration = Duration::from_secs(1);
/// How long one look at a racer waits for its answer while others run.
const RACE_SLICE: Duration = Duration::from_millis(1);
/// ... and while it runs alone.
const ALONE_SLICE: Duration = Duration::from_millis(5);
/// A dropped solve still running on a member's stack is waited for this long at its next
/// use (rebuilding the stack costs more than a short wait), then killed.
const SETTLE_MAX: Duration = Duration::from_millis(50);

/// A query's fresh-context text, made the first time a member needs it.
type Script = Option<(Vec<String>, String)>;

/// How a query is raced: `first` are started at once (the rest joining past the learned
/// threshold when `first` is one member, or when a racer fails); `wait_all` waits for every
/// racer (a bounded while) to measure and cross-check them; `ahead` is when `first[0]` was
/// posed the query by `begin`, if it was.
#[derive(Clone, Copy)]
struct Race<'a> {
    first: &'a [usize],
    wait_all: bool,
    ahead: Option<Instant>,
}

/// One solver of the portfolio.
struct Member {
    h: SolverHandle,
    enabled: bool,
    counts: SolverCounts,
    /// The member's own incremental stack in `h` (every member but the first under
    /// hybrid); `None`: queries are posed in fresh contexts.
    stack: Option<StackMirror>,
    /// The check out on `stack`, its answer not read yet.
    sent: Option<InFlight>,
    /// When the last check (on the stack or in a fresh context) went out.
    sent_at: Option<Instant>,
    /// Some process of this member has answered a check (whatever the answer): it runs.
    answered: bool,
}

/// Who answered the last `solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Last {
    None,
    /// The first solver's own miss path.
    Primary,
    /// Member `m`, in this generation of its process; `stacked`: from its stack (whose
    /// names the model is asked in), else a fresh context.
    Member(usize, u64, bool),
}

/// How a race ended.
enum Raced {
    /// `m`'s answer (sat or unsat), from its process of generation `g`, from its stack
    /// or not.
    Answered(Answer, usize, u64, bool),
    /// Every member tried gave no answer (`unknown`, an error, a death).
    NoAnswer,
    /// The session's deadline passed.
    TimedOut,
}

/// The portfolio's solvers and what it learned of them (one per engine).
pub struct Portfolio {
    members: Vec<Member>,
    learner: Learner,
    jobs: usize,
    timeout: Option<Duration>,
    /// Another member's `unsat` that comes before the first solver's answer while a class
    /// is explored is taken at once (`--first-answer-wins`), else held for the first
    /// solver's answer, which cross-checks it.
    first_answer_wins: bool,
    /// Wall time spent racing (what the solvers cost the client).
    pub busy: Duration,
    pub disagreements: u64,
    pub races: u64,
}

impl Portfolio {
    /// Take another member's `unsat` that comes first while exploring at once
    /// (`--first-answer-wins`).
    pub fn with_first_answer_wins(mut self, on: bool) -> Self {
        self.first_answer_wins = on;
        self
    }

    /// Give every member `d` as its deadline for the check-sats that follow.
    pub fn set_deadline(&mut self, d: Option<Duration>) {
        self.timeout = d;
        for m in &mut self.members {
            m.h.timeout = d;
        }
    }

    /// `specs[0]` is the first (client-facing) solver; the others follow in order.
    /// `stacks`: every member but the first keeps an incremental stack (hybrid's miss
    /// path; the first solver's stack is the primary path's).
    pub fn new(
        specs: &[SolverSpec],
        jobs: usize,
        timeout: Option<Duration>,
        stacks: bool,
    ) -> Portfolio {
        let members: Vec<Member> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| Member {
                h: SolverHandle::new(s.clone(), timeout),
                enabled: true,
                counts: SolverCounts {
                    solver: s.name().to_string(),
                    ..Default::default()
                },
                // One scope per query, as hybrid's own stack: it sees only cache misses.
                // The client's text is the first solver's dialect: printed for the others.
                stack: (stacks && i > 0)
                    .then(|| StackMirror::new(false, true).with_client_text(false)),
                sent: None,
                sent_at: None,
                answered: false,
            })
            .collect();
        Portfolio {
            learner: Learner::new(members.len(), jobs),
            members,
            jobs: jobs.max(1),
            timeout,
            first_answer_wins: false,
            busy: Duration::ZERO,
            disagreements: 0,
            races: 0,
        }
    }

    fn enabled(&self) -> Vec<bool> {
        self.members.iter().map(|m| m.enabled).collect()
    }

    /// Each member's counters, in `--solver` order.
    pub fn counts(&self) -> Vec<SolverCounts> {
        self.members.iter().map(|m| m.counts.clone()).collect()
    }

    /// Processes restarted (after a kill or a death).
    pub fn restarts(&self) -> u64 {
        self.members.iter().map(|m| m.h.restarts).sum()
    }

    pub fn shutdown(&mut self) {
        for m in 0..self.members.len() {
            self.stop(m);
        }
    }

    /// The term store is being replaced: the members' stacks are named by its ids, so
    /// each is given up (rebuilt when next needed).
    pub fn forget_terms(&mut self) {
        for m in &mut self.members {
            m.sent = None;
            if let Some(s) = m.stack.as_mut() {
                s.forget_terms(&mut m.h);
            }
        }
    }

    /// Kill member `m`'s process; its stack's mirror goes with it.
    fn stop(&mut self, m: usize) {
        let member = &mut self.members[m];
        member.sent = None;
        if let Some(s) = member.stack.as_mut() {
            s.abandon(&mut member.h);
        }
        member.h.kill();
    }

    /// A check still out on member `m` (a solve started ahead and dropped) is not the
    /// next query's: read it (waiting [`SETTLE_MAX`] at most on a stack), else kill `m`.
    fn settle(&mut self, m: usize) {
        let member = &mut self.members[m];
        if let Some(mut f) = member.sent.take() {
            let done = match member.stack.as_mut() {
                Some(s) => matches!(s.poll_raced(&mut member.h, &mut f, SETTLE_MAX), Ok(Some(_))),
                None => false,
            };
            member.answered |= done;
            if !done {
                member.counts.kills += 1;
                self.stop(m);
            }
            return;
        }
        if member.h.detached_age().is_some() {
            if member.h.detached_answer(Duration::ZERO).is_some() {
                member.answered = true;
            } else if member.h.detached_age().is_some() {
                // A solve started ahead and dropped, still running: it is not this query.
                member.counts.kills += 1;
                self.stop(m);
            }
        }
    }

    /// Pose `q` to member `m` without waiting: on its stack when it keeps one, else in a
    /// fresh context (`fresh`, made once per query); false when it cannot take it (it is
    /// then out of this race, or of the portfolio when it does not start).
    fn start(
        &mut self,
        m: usize,
        store: &mut TermStore,
        q: &Query,
        fresh: &mut Script,
        stats: &mut Stats,
    ) -> bool {
        self.settle(m);
        let member = &mut self.members[m];
        let sent = match member.stack.as_mut() {
            Some(s) => match s.send_raced(&mut member.h, store, q, stats) {
                Ok(f) => {
                    // (`send_raced` counted the solver check.)
                    member.sent = Some(f);
                    Ok(true)
                }
                Err(e) => Err(e),
            },
            _ => {
                if let Some(s) = member.stack.as_mut() {
                    // A fresh context resets the process: the stack is gone with it.
                    s.abandon(&mut member.h);
                }
                let (cmds, check) = fresh.get_or_insert_with(|| fresh_script(store, q));
                let r = member.h.send_detached(cmds, check);
                if let Ok(true) = r {
                    stats.solver_checks += 1;
                }
                r
            }
        };
        match sent {
            Ok(true) => {
                member.counts.checks += 1;
                member.sent_at = Some(Instant::now());
                true
            }
            // A command that needs special handling: this member sits this query out.
            Ok(false) => false,
            Err(e) => {
                self.stop(m);
                self.leave_unless_it_ran(m, &e.to_string(), stats);
                false
            }
        }
    }

    /// Member `m` failed (a command it was sent, or its process died during a check): if
    /// no process of it has ever answered, it does not run here (missing, refusing its
    /// command line, dying at start), and it leaves the portfolio with one warning; one
    /// that has answered before is started again when next needed. The first solver
    /// never leaves.
    fn leave_unless_it_ran(&mut self, m: usize, why: &str, stats: &mut Stats) {
        let member = &mut self.members[m];
        if member.answered || m == 0 || !member.enabled {
            return;
        }
        member.enabled = false;
        let msg = format!(
            "portfolio: {} did not start ({why}); going on without it",
            member.counts.solver
        );
        eprintln!("smtproxy: warning: {msg}");
        stats.note(msg);
    }

    /// Solve `q` as `how` says. The answer and who gave it.
    fn race(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        key: &ClassKey,
        how: &Race<'_>,
        stats: &mut Stats,
    ) -> Raced {
        let Race {
            first,
            wait_all,
            ahead,
        } = *how;
        let t0 = ahead.unwrap_or_else(Instant::now);
        let mut fresh: Script = None;
        let enabled = self.enabled();
        let mut queue: Vec<usize> = first.to_vec();
        queue.extend(self.learner.others(key, &enabled, first));
        let mut running: Vec<usize> = Vec::new();
        let mut started: Vec<usize> = Vec::new();
        if ahead.is_some() {
            // `first[0]` was posed the query by `begin`, at `t0`.
            let m = queue.remove(0);
            running.push(m);
            started.push(m);
        }
        let escalate_at = match first {
            [m] => self.learner.escalate_after(key, *m),
            _ => Duration::ZERO,
        };
        // (member, answer, ms, generation, from its stack), in the order they came.
        let mut answers: Vec<Answered> = Vec::new();
        let mut first_answer: Option<Duration> = None;
        let mut timed_out = false;
        // The most members that ran at once.
        let mut most = 0;
        // Start `first` now.
        let mut budget = first.len().min(self.jobs).saturating_sub(running.len());
        loop {
            // Start who is due: `first` at once; the others past the threshold (or when
            // nobody runs any more, e.g. every racer failed), within `--jobs`.
            let due = t0.elapsed() >= escalate_at && first_answer.is_none();
            while !queue.is_empty()
                && running.len() < self.jobs
                && (budget > 0 || due || running.is_empty())
                && (!running.is_empty() || answers.is_empty())
            {
                let m = queue.remove(0);
                budget = budget.saturating_sub(1);
                if self.start(m, store, q, &mut fresh, stats) {
                    running.push(m);
                    started.push(m);
                }
            }
            if running.is_empty() {
                break;
            }
            most = most.max(running.len());
            let slice = if running.len() > 1 {
                RACE_SLICE
            } else {
                ALONE_SLICE
            };
            let got = self.sweep(key, &mut running, t0, (slice, false), !wait_all, stats);
            if !got.is_empty() {
                answers.extend(got);
                first_answer.get_or_insert(t0.elapsed());
                if !wait_all {
                    break;
                }
            }
            if let Some(fa) = first_answer {
                let grace = (fa * EXPLORE_GRACE_FACTOR).clamp(EXPLORE_GRACE_MIN, EXPLORE_GRACE_MAX);
                if t0.elapsed() >= fa + grace {
                    break;
                }
            }
            if self.timeout.is_some_and(|t| t0.elapsed() >= t) {
                timed_out = true;
                break;
            }
        }
        self.stop_losers(key, running, t0, answers.first().map(|x| x.2));
        if most > 1 {
            self.races += 1;
            stats.portfolio_races += 1;
            for &m in &started {
                self.members[m].counts.races += 1;
            }
        }
        self.busy += t0.elapsed();
        if timed_out && answers.is_empty() {
            stats.timeouts += 1;
            return Raced::TimedOut;
        }
        match self.winner(store, q, &answers, stats) {
            Some((m, a, _, g, stacked)) => Raced::Answered(a, m, g, stacked),
            None => Raced::NoAnswer,
        }
    }

    /// The checks of `running` (posed at `t0`) lost the race to an answer that took
    /// `beaten_in` ms (None: none came): each is stopped, and known to take at least as
    /// long as it ran (`Learner::lost`).
    fn stop_losers(
        &mut self,
        key: &ClassKey,
        running: Vec<usize>,
        t0: Instant,
        beaten_in: Option<f64>,
    ) {
        for m in running {
            let ran = self.ran_ms(m, t0);
            self.stop(m);
            self.members[m].counts.kills += 1;
            self.learner.lost(key, m, ran, beaten_in);
        }
    }

    /// Which of the racers' definitive `answers` (in the order they came) wins, counted as
    /// its win: the first, unless a `sat` and an `unsat` are both there, which are
    /// cross-checked (`disagree`) and the `sat` wins.
    fn winner(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        answers: &[Answered],
        stats: &mut Stats,
    ) -> Option<Answered> {
        let sat = answers.iter().find(|x| x.1 == Answer::Sat).copied();
        let unsat = answers.iter().find(|x| x.1 == Answer::Unsat).copied();
        let w = match (sat, unsat) {
            (Some(s), Some(u)) => {
                let holds = model_holds(store, q, |store, leaves| {
                    self.values(s.0, s.3, s.4, store, leaves).ok().flatten()
                });
                self.disagree(s.0, holds, u.0, stats);
                s
            }
            _ => *answers.first()?,
        };
        self.members[w.0].counts.wins += 1;
        Some(w)
    }

    /// The first definitive answer of the checks of `running` (posed at `t0`), waited for
    /// until the session's deadline; whoever is left then is stopped.
    fn first_of(
        &mut self,
        key: &ClassKey,
        mut running: Vec<usize>,
        t0: Instant,
        stats: &mut Stats,
    ) -> Option<Answered> {
        let mut got = None;
        while got.is_none() && !running.is_empty() && self.timeout.is_none_or(|t| t0.elapsed() < t)
        {
            got = self
                .sweep(key, &mut running, t0, (RACE_SLICE, false), true, stats)
                .pop();
        }
        self.stop_losers(key, running, t0, got.map(|x| x.2));
        got
    }

    /// One look at each check of `running` (posed at `t0`), waiting up to `wait.0` on
    /// each (`wait.1`: an answer found is taken to have come earlier, see `poll`): a check
    /// that failed leaves `running`, one answered leaves it for the answers returned, in
    /// the order looked at (`first`: the look ends at the first answer).
    fn sweep(
        &mut self,
        key: &ClassKey,
        running: &mut Vec<usize>,
        t0: Instant,
        wait: (Duration, bool),
        first: bool,
        stats: &mut Stats,
    ) -> Vec<Answered> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < running.len() {
            match self.poll(key, running[i], t0, wait.0, wait.1, stats) {
                Poll::Running => i += 1,
                Poll::Failed => {
                    running.remove(i);
                }
                Poll::Answered(a, ms, g, stacked) => {
                    out.push((running.remove(i), a, ms, g, stacked));
                    if first {
                        break;
                    }
                }
            }
        }
        out
    }

    /// Member `s` said sat and member `u` unsat on `q`; `holds`: smtproxy evaluated `s`'s
    /// model true on `q`. Then `u` is wrong: reported, counted, and (unless it is the
    /// first solver) left out from now on. Either way the sat goes on to the cache stage,
    /// which serves it only with a model it evaluated true, else asks the first solver.
    /// True for a disagreement found.
    fn disagree(&mut self, s: usize, holds: bool, u: usize, stats: &mut Stats) -> bool {
        let (sn, un) = (
            self.members[s].counts.solver.clone(),
            self.members[u].counts.solver.clone(),
        );
        if !holds {
            let msg = format!(
                "portfolio: {sn} answered sat and {un} unsat on the same query; \
                 {sn}'s model could not be checked, so neither is trusted alone"
            );
            eprintln!("smtproxy: warning: {msg}");
            stats.note(msg);
            return false;
        }
        self.disagreements += 1;
        stats.solver_disagreements += 1;
        let out = if u != 0 {
            self.members[u].enabled = false;
            self.stop(u);
            format!("; {un} leaves the portfolio")
        } else {
            String::new()
        };
        let msg = format!(
            "solver disagreement: {un} answered unsat where {sn}'s model satisfies the \
             query (a bug in {un}); answering sat{out}"
        );
        eprintln!("smtproxy: warning: {msg}");
        stats.note(msg);
        true
    }

    /// Wait for the checks of `running` (sent at `t0`), the first answer having come at
    /// `answered_at`, for the exploring grace at most; kill who is left. Their definitive
    /// answers.
    fn collect(
        &mut self,
        key: &ClassKey,
        mut running: Vec<usize>,
        t0: Instant,
        answered_at: Duration,
        stats: &mut Stats,
    ) -> Vec<Answered> {
        let grace =
            (answered_at * EXPLORE_GRACE_FACTOR).clamp(EXPLORE_GRACE_MIN, EXPLORE_GRACE_MAX);
        let mut out = Vec::new();
        // An answer already there came before the first one (when exactly is not known;
        // the solver's CPU time is counted in clock ticks): it is taken to have cost half.
        let mut before = true;
        while !running.is_empty() && t0.elapsed() < answered_at + grace {
            let wait = if before { Duration::ZERO } else { RACE_SLICE };
            out.extend(self.sweep(key, &mut running, t0, (wait, before), false, stats));
            before = false;
        }
        let beaten_in = answered_at.as_secs_f64() * 1000.0;
        self.stop_losers(key, running, t0, Some(beaten_in));
        self.busy += t0.elapsed().saturating_sub(answered_at);
        out
    }

    /// Member `m`'s values of `terms` after its answer in generation `g` (`stacked`: on
    /// its stack, whose names the terms are printed in).
    fn values(
        &mut self,
        m: usize,
        g: u64,
        stacked: bool,
        store: &TermStore,
        terms: &[TermId],
    ) -> Result<Option<Vec<String>>, DriverError> {
        let member = &mut self.members[m];
        match member.stack.as_ref() {
            Some(s) if stacked => values_in(&mut member.h, g, store, terms, s.names()),
            Some(_) => Ok(None),
            None => values_in(&mut member.h, g, store, terms, &BackendNames),
        }
    }

    /// How long member `m`'s check has been out: from when it was sent (a process
    /// started for it is not counted: that is paid once, not per query), else from `t0`.
    fn ran_ms(&self, m: usize, t0: Instant) -> f64 {
        self.members[m]
            .sent_at
            .unwrap_or(t0)
            .elapsed()
            .as_secs_f64()
            * 1000.0
    }

    /// One look at member `m`'s check (sent at `t0`, or its own `sent_at`), waiting up to
    /// `wait`. `late`: an answer found now came some time before (the caller was busy
    /// elsewhere) and is taken to have cost half the time it has been out.
    fn poll(
        &mut self,
        key: &ClassKey,
        m: usize,
        t0: Instant,
        wait: Duration,
        late: bool,
        stats: &mut Stats,
    ) -> Poll {
        let member = &mut self.members[m];
        let stacked = member.sent.is_some();
        let got = match (member.sent.as_mut(), member.stack.as_mut()) {
            (Some(f), Some(s)) => match s.poll_raced(&mut member.h, f, wait) {
                Ok(Some(r)) => {
                    member.sent = None;
                    Some(r)
                }
                Ok(None) => None,
                Err(_) => {
                    // Dead, or not the process the check went to: lost (see below).
                    self.stop(m);
                    None
                }
            },
            _ => member.h.detached_answer(wait).map(|(_, r)| r),
        };
        // Read after the wait: an answer that came during it took until now (give or take
        // the wait's own granularity), not until the look began.
        let ran = self.ran_ms(m, t0);
        let member = &mut self.members[m];
        let lost = if stacked {
            member.sent.is_none()
        } else {
            member.h.detached_age().is_none()
        };
        match got {
            Some(r) => {
                member.answered = true;
                let ms = if late { ran / 2.0 } else { ran };
                if let Response::Error(e) = &r {
                    stats.note(format!(
                        "portfolio: {} rejected the query: {e}",
                        member.counts.solver
                    ));
                }
                match response_answer(&r) {
                    Answer::Unknown => {
                        self.learner.failed(key, m);
                        Poll::Failed
                    }
                    a => {
                        self.learner.answered(key, m, ms);
                        member.counts.answered(ms);
                        Poll::Answered(a, ms, member.h.generation, stacked)
                    }
                }
            }
            None if lost => {
                // Lost: the process died (it is restarted when next needed, unless it never
                // answered at all).
                self.stop(m);
                let member = &mut self.members[m];
                stats.note(format!(
                    "portfolio: {} died during a check; restarting it when needed",
                    member.counts.solver
                ));
                self.learner.failed(key, m);
                self.leave_unless_it_ran(
                    m,
                    "it exited during a check, never having answered",
                    stats,
                );
                Poll::Failed
            }
            None => Poll::Running,
        }
    }
}

/// A racer's definitive answer: (member, answer, ms, generation, from its stack).
type Answered = (usize, Answer, f64, u64, bool);

/// What one look at a racer found.
enum Poll {
    Running,
    /// A definitive answer, after `ms`, from the process of this generation, from the
    /// member's stack or not.
    Answered(Answer, f64, u64, bool),
    /// `unknown`, an error, or a death.
    Failed,
}

/// Whether a model satisfies every assertion of `q`: `values` gives the solver's value of
/// each free constant (as text), which smtproxy parses and evaluates itself.
fn model_holds(
    store: &mut TermStore,
    q: &Query,
    values: impl FnOnce(&TermStore, &[TermId]) -> Option<Vec<String>>,
) -> bool {
    let mut all: Vec<TermId> = q.assertions.to_vec();
    all.extend_from_slice(q.assumptions);
    let leaves = free_symbols_of(store, &all);
    let values = if leaves.is_empty() {
        Vec::new()
    } else {
        match values(store, &leaves) {
            Some(v) if v.len() == leaves.len() => v,
            _ => return false,
        }
    };
    model_of_values(store, &leaves, &values).is_some_and(|m| model_satisfies(store, &m, &all))
}

/// The miss path with a portfolio behind it: `primary` is the first solver's own path.
pub struct PortfolioMiss<'a, M: MissPath> {
    pub primary: M,
    pub portfolio: &'a mut Portfolio,
    last: Last,
    /// The class of the last query solved (its answerer's model read is timed for it).
    last_key: Option<ClassKey>,
}

impl<'a, M: MissPath> PortfolioMiss<'a, M> {
    pub fn new(primary: M, portfolio: &'a mut Portfolio) -> Self {
        PortfolioMiss {
            primary,
            portfolio,
            last: Last::None,
            last_key: None,
        }
    }

    fn key(q: &Query) -> ClassKey {
        ClassKey::new(
            q.logic,
            q.assertions.len() + q.assumptions.len(),
            q.decls.len(),
        )
    }

    /// `q` through the first solver's own path, timed for the learner from `t0`: when its
    /// solve was sent, ahead (a member's time runs from its send too), or now, the send
    /// then counted (a few printed assertions: small beside a solve).
    fn on_primary(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        ahead: Option<M::Ahead>,
        key: &ClassKey,
        stats: &mut Stats,
        t0: Instant,
    ) -> Result<Answer, DriverError> {
        let a = self.primary.solve(store, q, ahead, stats)?;
        let pf = &mut *self.portfolio;
        pf.members[0].counts.checks += 1;
        match a {
            Answer::Unknown => pf.learner.failed(key, 0),
            _ => {
                let ms = t0.elapsed().as_secs_f64() * 1000.0;
                pf.learner.answered(key, 0, ms);
                pf.members[0].counts.answered(ms);
                pf.members[0].counts.wins += 1;
            }
        }
        self.last = Last::Primary;
        Ok(a)
    }
}

impl<M: MissPath> PortfolioMiss<'_, M> {
    /// `solve` for a query of class `key`: who answers, as the learner plans (or as a solve
    /// begun ahead began it).
    fn solve_in(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        key: &ClassKey,
        ahead: Option<Ahead<M::Ahead>>,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError> {
        let enabled = self.portfolio.enabled();
        // Planned here even when a solve was started ahead: this counts the query in its
        // class (`begin` only peeked), whoever answers it.
        let plan = self.portfolio.learner.plan(key, &enabled, false);
        let ahead_at = match ahead {
            Some(Ahead::Primary(a, sent)) => {
                return self.on_primary(store, q, Some(a), key, stats, sent)
            }
            Some(Ahead::Member(m, t0)) => Some((m, t0)),
            None => None,
        };
        if let Some((m, t0)) = ahead_at {
            let how = Race {
                first: &[m],
                wait_all: false,
                ahead: Some(t0),
            };
            return self.answer(store, q, key, &how, stats);
        }
        let (first, wait_all) = match plan {
            Plan::Alone(0) => return self.on_primary(store, q, None, key, stats, Instant::now()),
            Plan::Race {
                first,
                wait_all: true,
            } if first.contains(&0) => {
                return self.race_own_path(store, q, key, &first, true, stats)
            }
            Plan::Race {
                first,
                wait_all: false,
            } if first.contains(&0) && self.primary.solves_ahead() => {
                return self.race_own_path(store, q, key, &first, false, stats)
            }
            Plan::Alone(m) => (vec![m], false),
            Plan::Race { first, wait_all } => (first, wait_all),
        };
        let how = Race {
            first: &first,
            wait_all,
            ahead: None,
        };
        self.answer(store, q, key, &how, stats)
    }

    /// The race's answer (see `Portfolio::race`); when nobody answered, the first
    /// solver's own path has the last word (it may still say unknown, never stored).
    fn answer(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        key: &ClassKey,
        how: &Race<'_>,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError> {
        match self.portfolio.race(store, q, key, how, stats) {
            Raced::Answered(a, m, g, stacked) => {
                self.last = Last::Member(m, g, stacked);
                Ok(a)
            }
            Raced::NoAnswer => self.on_primary(store, q, None, key, stats, Instant::now()),
            Raced::TimedOut => Ok(Answer::Unknown),
        }
    }

    /// Race the first solver's own path against the others: its path is started ahead
    /// (`MissPath::begin`) once its process is free, while the others solve the query
    /// detached on the other cores, and all are watched. The first solver is raced on
    /// the path its times were measured on: posed in a fresh context in a second process
    /// (as races of an explored class once did) it lost what its stack had learnt, on
    /// domain.smt2 0.7 s a query against 10-17 ms. `exploring` (the class is being
    /// measured):
    /// * The first solver answers first: the others are waited for (the exploring grace)
    ///   to be measured, and every answer is cross-checked against its own.
    /// * Another answers `sat` first: that answer is taken at once (it is served only with
    ///   a model the cache stage evaluated true); the first solver's solve is left to
    ///   finish in the background (its path reads it at its next use) and counted as lost,
    ///   its time bounded below by what it ran.
    /// * Another answers `unsat` first: the first solver's answer is waited for and
    ///   cross-checks it, as in the first case (an `unsat` cannot be checked by smtproxy
    ///   itself, so one member's is never taken over the first solver's unseen), unless
    ///   the first answer wins (`--first-answer-wins`): then it is taken as a `sat` is.
    ///
    /// Not `exploring` (a race of a class explored, slow enough to be raced from its
    /// first query, `learner::SLOW_MS`, on a path that solves ahead: under `cache` the
    /// first solver races in a fresh context, `Portfolio::race`): the first definitive
    /// answer wins, a member's `unsat` included, as in `Portfolio::race`, and the others
    /// are stopped.
    ///
    /// Where the first solver's path does not solve ahead (or not this query: a probe of
    /// its own due, its process still building its context), it answers as it blocks,
    /// and the others are waited for as in the first case (exploring), or stopped.
    fn race_own_path(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        key: &ClassKey,
        first: &[usize],
        exploring: bool,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError> {
        let t0 = Instant::now();
        let room = self.portfolio.jobs.saturating_sub(1);
        let racers: Vec<usize> = first
            .iter()
            .copied()
            .filter(|&m| m != 0)
            .take(room)
            .collect();
        // Processes that are not running start side by side (z3 takes milliseconds to
        // load, yices a fraction of one): none waits for another's start.
        if !racers.is_empty() {
            self.primary.prestart();
        }
        let pf = &mut *self.portfolio;
        for &m in &racers {
            pf.settle(m);
            pf.members[m].h.prestart();
        }
        let mut fresh: Script = None;
        let mut running: Vec<usize> = Vec::new();
        for &m in &racers {
            if pf.start(m, store, q, &mut fresh, stats) {
                running.push(m);
            }
        }
        if !running.is_empty() {
            pf.races += 1;
            stats.portfolio_races += 1;
            pf.members[0].counts.races += 1;
            for &m in &running {
                pf.members[m].counts.races += 1;
            }
        }
        // The others' definitive answers that came before the first solver's.
        let mut early: Vec<Answered> = Vec::new();
        let a0 = if running.is_empty() {
            self.on_primary(store, q, None, key, stats, t0)?
        } else {
            match self.watch(
                store,
                q,
                key,
                &mut running,
                &mut early,
                t0,
                !exploring,
                stats,
            )? {
                Some(a0) => a0,
                None => return Ok(self.early_answer(store, q, key, running, &early, t0, stats)),
            }
        };
        let pf = &mut *self.portfolio;
        if !exploring {
            if a0 != Answer::Unknown {
                let beaten_in = t0.elapsed().as_secs_f64() * 1000.0;
                pf.stop_losers(key, running, t0, Some(beaten_in));
                return Ok(a0);
            }
            // The first solver gave no answer: the others still may (any definitive
            // answer that came before the first solver's was taken by `watch`).
            let got = pf.first_of(key, running, t0, stats);
            return Ok(match got.and_then(|x| pf.winner(store, q, &[x], stats)) {
                Some((m, a, _, g, stacked)) => {
                    self.last = Last::Member(m, g, stacked);
                    a
                }
                None => a0,
            });
        }
        let mut others = early;
        others.extend(pf.collect(key, running, t0, t0.elapsed(), stats));
        let sat = others.iter().find(|x| x.1 == Answer::Sat).copied();
        let unsat = others.iter().find(|x| x.1 == Answer::Unsat).copied();
        match (a0, sat, unsat) {
            (Answer::Unsat, Some((m, _, _, g, stacked)), _) => {
                let holds = model_holds(store, q, |store, leaves| {
                    pf.values(m, g, stacked, store, leaves).ok().flatten()
                });
                if pf.disagree(m, holds, 0, stats) {
                    pf.members[m].counts.wins += 1;
                    self.last = Last::Member(m, g, stacked);
                    return Ok(Answer::Sat);
                }
            }
            (Answer::Sat, _, Some((m, _, _, _, _))) => {
                let primary = &mut self.primary;
                let holds = model_holds(store, q, |store, leaves| {
                    primary.values(store, leaves).ok().flatten()
                });
                self.portfolio.disagree(0, holds, m, stats);
            }
            (Answer::Unknown, _, _) => {
                if let Some(&(m, a, _, g, stacked)) = others.first() {
                    self.portfolio.members[m].counts.wins += 1;
                    self.last = Last::Member(m, g, stacked);
                    return Ok(a);
                }
            }
            _ => {}
        }
        Ok(a0)
    }

    /// Pose `q` to the first solver's own path, ahead (`MissPath::begin`), once its process
    /// is up and free, and watch it and the others (`running`, posed at `t0`), moving the
    /// others' definitive answers to `early`. The first solver's answer when it comes
    /// before any other's `sat` (`trust`: before any other's definitive answer), or nobody
    /// else is left; `None` when such an answer came first, the first solver's solve (if
    /// it was posed) then left to finish in the background. The first solver's time for
    /// the learner runs from its send, as a member's does (neither counts a start: z3's
    /// is made ahead, `first_component`); a query another member answered before the
    /// first solver was free to be posed it tells the learner nothing of the first
    /// solver. The time watched counts in the portfolio's `busy`; the first solver's path
    /// counts its own solve in its handle's.
    #[allow(clippy::too_many_arguments)]
    fn watch(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        key: &ClassKey,
        running: &mut Vec<usize>,
        early: &mut Vec<Answered>,
        t0: Instant,
        trust: bool,
        stats: &mut Stats,
    ) -> Result<Option<Answer>, DriverError> {
        let mut ahead: Option<M::Ahead> = None;
        // When the first solver's solve went out: its time runs from there, as a member's
        // from its send (the others' sends and the wait for its process to be free are
        // not its solve).
        let mut begun: Option<Instant> = None;
        loop {
            // Nothing else can come that would be taken before the first solver's answer.
            let alone = running.is_empty();
            let deadline = self.portfolio.timeout.is_some_and(|t| t0.elapsed() >= t);
            if begun.is_none() && (alone || deadline || self.primary.free(RACE_SLICE, stats)) {
                let at = Instant::now();
                ahead = self.primary.begin(store, q, stats);
                if ahead.is_none() {
                    // This path does not solve ahead now: it answers as it blocks.
                    self.portfolio.busy += t0.elapsed();
                    return self.on_primary(store, q, None, key, stats, at).map(Some);
                }
                begun = Some(Instant::now());
            }
            if let (Some(a), Some(at)) = (ahead.take(), begun) {
                if alone || deadline || self.primary.ready(&a, RACE_SLICE) {
                    // Its answer is there, or nothing else can come first: its path
                    // finishes the solve (under its own deadline, in its own time).
                    self.portfolio.busy += t0.elapsed();
                    return self.on_primary(store, q, Some(a), key, stats, at).map(Some);
                }
                ahead = Some(a);
            }
            let pf = &mut *self.portfolio;
            early.extend(pf.sweep(key, running, t0, (RACE_SLICE, false), false, stats));
            // A `sat` is taken at once (it is served only with a model the cache stage
            // evaluated true); while exploring, an `unsat` waits for the first solver,
            // whose answer cross-checks it, as when the first solver answers first, unless
            // the first answer wins (then it is trusted as it is once the class is
            // explored, and in a race after that: `trust`).
            let taken = early
                .iter()
                .find(|x| trust || pf.first_answer_wins || x.1 == Answer::Sat);
            if let Some(&(_, _, beaten_in, _, _)) = taken {
                if let (Some(a), Some(at)) = (ahead, begun) {
                    self.primary.drop_ahead(a);
                    pf.members[0].counts.checks += 1;
                    let ran = at.elapsed().as_secs_f64() * 1000.0;
                    pf.learner.lost(key, 0, ran, Some(beaten_in));
                }
                return Ok(None);
            }
        }
    }

    /// The answer of another member that came before the first solver's (`early`, see
    /// `watch`), as a race's winner; the members still running are stopped.
    #[allow(clippy::too_many_arguments)]
    fn early_answer(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        key: &ClassKey,
        running: Vec<usize>,
        early: &[Answered],
        t0: Instant,
        stats: &mut Stats,
    ) -> Answer {
        let pf = &mut *self.portfolio;
        pf.stop_losers(key, running, t0, early.first().map(|x| x.2));
        pf.busy += t0.elapsed();
        let Some((m, a, _, g, stacked)) = pf.winner(store, q, early, stats) else {
            unreachable!("`watch` gives up the first solver only for an answer");
        };
        self.last = Last::Member(m, g, stacked);
        a
    }
}

/// A solve started ahead of need (`MissPath::begin`).
pub enum Ahead<A> {
    /// By the first solver's own path, sent at the instant given.
    Primary(A, Instant),
    /// By member `m`, alone (on its stack, or in a fresh context), posed at `t0`.
    Member(usize, Instant),
}

impl<M: MissPath> MissPath for PortfolioMiss<'_, M> {
    type Ahead = Ahead<M::Ahead>;

    /// Solve ahead where one solver would answer alone: the first solver's own path, or
    /// the member learned fastest (detached, in a fresh context).
    fn begin(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Option<Self::Ahead> {
        let pf = &mut *self.portfolio;
        let enabled = pf.enabled();
        match pf.learner.plan(&Self::key(q), &enabled, true) {
            Plan::Alone(0) => {
                let a = self.primary.begin(store, q, stats)?;
                Some(Ahead::Primary(a, Instant::now()))
            }
            Plan::Alone(m) => {
                let t0 = Instant::now();
                pf.start(m, store, q, &mut None, stats)
                    .then_some(Ahead::Member(m, t0))
            }
            Plan::Race { .. } => None,
        }
    }

    /// The first solver's path only: while a class is explored, another member's `unsat`
    /// waits for the first solver's answer (`race_own_path`), so the first solver's context is
    /// the one a race waits for. The others start when first needed: a member warmed
    /// ahead would be measured against others paying their start, and the learner would
    /// take that start for their solve time.
    fn first_component(&mut self, q: &Query) {
        self.primary.warm(q);
    }

    fn drop_ahead(&mut self, ahead: Self::Ahead) {
        match ahead {
            Ahead::Primary(a, _) => self.primary.drop_ahead(a),
            // Left to finish: the member's next use reads or ends it (`Portfolio::settle`).
            Ahead::Member(..) => {}
        }
    }

    fn solve(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        ahead: Option<Self::Ahead>,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError> {
        self.last = Last::None;
        let key = Self::key(q);
        let a = self.solve_in(store, q, &key, ahead, stats)?;
        if a != Answer::Unknown {
            self.portfolio.learner.outcome(&key, a == Answer::Sat);
        }
        self.last_key = Some(key);
        Ok(a)
    }

    fn values(
        &mut self,
        store: &TermStore,
        terms: &[TermId],
    ) -> Result<Option<Vec<String>>, DriverError> {
        let t0 = Instant::now();
        let (m, v) = match self.last {
            Last::Primary => (0, self.primary.values(store, terms)),
            Last::Member(m, g, stacked) => (m, self.portfolio.values(m, g, stacked, store, terms)),
            Last::None => return Ok(None),
        };
        // What reading this member's model cost counts against it in the class where it
        // answered (see `learner`): the cache stage reads the model of each sat it is given.
        if let (Ok(Some(_)), Some(key)) = (&v, &self.last_key) {
            let ms = t0.elapsed().as_secs_f64() * 1000.0;
            self.portfolio.learner.model_read(key, m, ms);
            self.portfolio.members[m].counts.model_read(ms);
        }
        v
    }

    fn unsat_core(&mut self) -> Option<Vec<TermId>> {
        match self.last {
            Last::Primary => self.primary.unsat_core(),
            _ => None,
        }
    }

    fn stop_cores(&mut self) {
        self.primary.stop_cores();
    }
}
