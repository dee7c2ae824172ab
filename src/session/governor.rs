//! Which route the client's queries take, chosen from what each has cost this session: the
//! modelled engine (caches, models, the planner's backends) or the lean passthrough (the
//! client's stream, pipelined to one solver). A solver that answers a query in a tenth of a
//! millisecond (yices on KLEE queries) is faster alone than smtproxy's own work per query
//! unless the cache answers most of them; z3 and cvc5 on the same queries are not.
//!
//! Invariants:
//! * Only the default strategy is governed (`--strategy` not given); a strategy the user
//!   names is what runs. The governor itself never answers anything: it only says, at a
//!   `(reset)` or a `(pop)`, which route the next window of queries takes. The route it
//!   leaves hands the client's state over: replayed into a new solver for the lean route;
//!   for the modelled route, the client's view the passthrough kept (its assertions
//!   parsed then), and only where no level left holds what smtproxy cannot model (a
//!   command its parser refused, a `:named` assertion, an objective): otherwise the
//!   window goes on to the next pop or reset. The engine asks at a pop of the modelled
//!   route only while the solver's wait has been under half of that route's time since
//!   the session last turned to it (`Engine::govern_modelled`).
//! * A route's cost is the engine's own wall time per KiB of the client's commands over a
//!   window of that route (solver time waited for included, the client's think time
//!   not, nor the waits for the main solver's processes to start: each route pays one
//!   when the session turns to it, inside a window of a few queries, and one start on a
//!   loaded machine outweighed those queries): the last two windows of each route
//!   averaged, so one noisy window does not decide. Per byte, not per check-sat: a
//!   symbolic executor's queries grow as its paths deepen (sbase-expr's solver-queries:
//!   0.7 KB a query in the first window, 1.3 KB in the second, 3 KB after), and a cost
//!   per query charged the route measured second (always the lean one) for the larger
//!   queries it happened to get. Both routes read
//!   every byte (smtproxy's parser, or the solver's), so bytes put windows of different
//!   queries on one scale. Time, check-sats and bytes in a fall-back to passthrough (a
//!   command the modelled engine cannot model, which goes to the solver on either route)
//!   are left out of both.
//! * Each route is measured before one is preferred; the route not taken is measured
//!   again after a run of the other that doubles each time it is confirmed (up to
//!   [`EXPLOIT_MAX`] queries), so a session whose cache starts paying later is noticed.
//!   A switch needs the other route to be cheaper by [`MARGIN`], by a window of its own
//!   run just before (a probe): a cheaper cost measured before the preferred route's
//!   last run is measured again first, since queries change as a session goes.
//! * Exploration is bounded in time: the probes of the route not preferred may cost at
//!   most [`EXPLORE_SHARE`] of the session's governed wall time more than the preferred
//!   route would have (each probe's extra cost, measured, is summed; a probe is put off
//!   while the next one, at the costs known and the last window's bytes per query, would
//!   pass the share; priced at most at what its early end below lets it cost, so one
//!   window that stalled does not put the route's probes off for the session). A route
//!   several times dearer than the other is therefore probed seldom, a close one as
//!   often as above.
//!   The first measurement of each route is not bounded.
//! * Small sessions are never switched: the first window runs modelled, [`WINDOW`]
//!   queries, or [`PROBE_MIN`] where what it has shown by then says the lean route is
//!   likely the cheaper ([`Governor::note_first_window`]): smtproxy answered none of its
//!   queries itself, wholly or in part (no cache or model hit, nothing enumerated, bounded
//!   or guessed: the modelled route then only adds its own work to the solver's; a
//!   yosys-smtbmc session's unsat checks behind yices: 0.5 ms per KiB modelled, 0.17
//!   lean), or the solver's checks so far, one per query at what they cost here, come to
//!   less than [`MARGIN`] times the window's cost (the solver answers faster than
//!   smtproxy plans: cyphert-alu behind yices, 0.26 ms per KiB modelled over its first 64
//!   queries, 0.08 lean). Answers smtproxy finds itself give no such measure (no solver
//!   check), and a probe is not free (z3 builds its context for 16 ms, and behind yices
//!   too the modelled route wins the short KLEE logs it answers from models), so those
//!   windows run whole. A session whose store answers from the start (on-disk or Redis
//!   hits) keeps the whole window: measured after 16 queries, its modelled cost was still
//!   its cold start's, and the lean route won a probe it then lost for 256 queries.
//! * A probe ends early once it cannot change the decision: at once when it has cost
//!   [`HOPELESS`] times what the preferred route costs for a whole window (at the last
//!   window's bytes per query; a solver's start and one hard query against a warm store),
//!   and after [`PROBE_MIN`] queries when its cost per KiB so far is past [`HOPELESS`]
//!   times the preferred route's. It is then measured as it stands (the first lean window
//!   of a session whose cache answers nearly everything costs a solver call per query,
//!   ten times the modelled route's). The rest of the schedule is the same as for a probe
//!   that ran its whole window. A probe of the lean route keeps in flight only the
//!   check-sats that the time left before its early end pays for, at what its answered
//!   ones cost (one until the first answer, at most [`PROBE_MIN`]; the engine caps its
//!   pipeline, [`Governor::probe_cap`]), so that work already sent cannot outrun the
//!   early end: a pipe full of KLEE queries (about 200) is 400 ms of z3 before its first
//!   answer comes back, and even 16 in flight are 100-150 ms of z3 where the early end is
//!   at 12-25 ms.

use std::time::Duration;

/// Queries in a window that measures a route.
pub const WINDOW: u64 = 64;
/// The longest run of the preferred route before the other is measured again.
pub const EXPLOIT_MAX: u64 = 4096;
/// The other route must cost less than this fraction of the current one to be taken.
pub const MARGIN: f64 = 0.9;
/// The share of the session's wall time that probes of the route not preferred may cost
/// beyond what the preferred route would have cost.
pub const EXPLORE_SHARE: f64 = 0.05;

/// Queries a probe runs before it may end early as hopeless. A new process's first
/// queries cost more than its later ones (yices' first 8 on KLEE's sbase-expr took
/// 1.4-2 ms, the next 8 0.6-1 ms, and 4 ms in 2 of 8 runs on an idle machine, which
/// then ended the probe as hopeless at 8); 16 spread that over twice the queries.
pub const PROBE_MIN: u64 = WINDOW / 4;
/// A probe that costs this many times the preferred route per KiB ends early.
pub const HOPELESS: f64 = 3.0;

/// What the session has shown so far, for the length of the modelled route's first window
/// ([`Governor::note_first_window`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstWindow {
    /// Check-sats since the session began.
    pub queries: u64,
    /// Queries, or parts of queries, smtproxy answered itself, without a solver.
    pub served: u64,
    /// Queries answered from what the result store held before the session.
    pub store_hits: u64,
    /// The governed wall time so far (as [`Governor::due`] is given it).
    pub wall: Duration,
    /// The time waited for the solver so far, over its `checks` check-sats.
    pub solver: Duration,
    pub checks: u64,
}

/// A way to answer the client's queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Parsed into the client's view, each check-sat planned (caches, models, backends).
    Modelled,
    /// The client's commands streamed to one solver as written.
    Lean,
}

/// Cost per KiB of client input of one route: the last two windows.
#[derive(Clone, Copy, Debug, Default)]
struct Cost {
    last: Option<f64>,
    before: Option<f64>,
}

impl Cost {
    fn add(&mut self, per_kib: f64) {
        self.before = self.last;
        self.last = Some(per_kib);
    }
    fn get(&self) -> Option<f64> {
        match (self.last, self.before) {
            (Some(a), Some(b)) => Some((a + b) / 2.0),
            (a, _) => a,
        }
    }
}

/// The governor of one session.
#[derive(Debug)]
pub struct Governor {
    route: Route,
    /// The route that has been cheaper; the other one runs only to be measured.
    preferred: Route,
    modelled: Cost,
    lean: Cost,
    /// The current window: the engine's wall time, check-sat count and client bytes at
    /// its start.
    start_wall: Duration,
    start_queries: u64,
    start_bytes: u64,
    /// KiB of client input per check-sat in the last window (to price a probe ahead).
    kib_per_query: f64,
    /// Queries the current window runs before the next decision.
    length: u64,
    /// Run of the preferred route between measurements of the other.
    exploit: u64,
    /// Route changes made.
    pub switches: u64,
    /// What the probes have cost beyond the preferred route, in ms.
    regret_ms: f64,
    /// Change route after every window of this many queries, whatever the costs
    /// ([`Governor::alternating`]).
    flip: Option<u64>,
}

impl Default for Governor {
    fn default() -> Self {
        Governor {
            route: Route::Modelled,
            preferred: Route::Modelled,
            modelled: Cost::default(),
            lean: Cost::default(),
            start_wall: Duration::ZERO,
            start_queries: 0,
            start_bytes: 0,
            kib_per_query: 0.0,
            length: WINDOW,
            exploit: 4 * WINDOW,
            switches: 0,
            regret_ms: 0.0,
            flip: None,
        }
    }
}

impl Governor {
    /// The governor of a session: [`Governor::default`], or with `SMTPROXY_GOVERNOR_FLIP=N`
    /// in the environment [`Governor::alternating`]`(N)`.
    pub fn from_env() -> Governor {
        let flip = std::env::var("SMTPROXY_GOVERNOR_FLIP").ok();
        match flip.and_then(|v| v.parse::<u64>().ok()) {
            Some(n) => Governor::alternating(n),
            None => Governor::default(),
        }
    }

    /// A governor that changes route at the first reset or pop after every `window`
    /// queries, whatever the routes cost: for tests of the switches themselves (the
    /// answers must not change), never for speed.
    pub fn alternating(window: u64) -> Governor {
        let w = window.max(1);
        Governor {
            length: w,
            flip: Some(w),
            ..Governor::default()
        }
    }

    /// Whether this is an [`Governor::alternating`] one.
    pub fn alternates(&self) -> bool {
        self.flip.is_some()
    }

    pub fn route(&self) -> Route {
        self.route
    }

    /// Check-sats a probe of the lean route may keep in flight at `wall` (the engine's wall
    /// time so far), `queries` check-sats answered and `bytes` of the client's commands
    /// sent: as many as the time left before its early end ([`Governor::due`], at
    /// [`HOPELESS`] times the preferred route's cost for a whole window) pays for at what
    /// its answered ones cost so far, at least one and at most [`PROBE_MIN`]; one until
    /// the first is answered (a new solver's first query is its dearest: z3 builds its
    /// context then). An alternating governor keeps its window in flight. Work sent cannot
    /// be called back: a pipeline the early end does not bound runs on past it (see the
    /// module's invariants).
    pub fn probe_cap(&self, wall: Duration, queries: u64, bytes: u64) -> u64 {
        if let Some(w) = self.flip {
            return w;
        }
        let n = queries.saturating_sub(self.start_queries);
        let Some(limit) = self.hopeless_ms(bytes) else {
            return PROBE_MIN;
        };
        if n == 0 {
            return 1;
        }
        let ms = wall.saturating_sub(self.start_wall).as_secs_f64() * 1e3;
        let per_query = ms / n as f64;
        if per_query <= 0.0 {
            return PROBE_MIN;
        }
        let affordable = ((limit - ms) / per_query).floor();
        (affordable.max(1.0) as u64).min(PROBE_MIN)
    }

    /// Where a probe of the route not preferred ends at once, in ms since its window
    /// began, with `bytes` of the client's commands sent so far: [`HOPELESS`] times what
    /// the preferred route costs for a whole window, at the last window's KiB per query
    /// (or what the probe has sent, when more). None while the preferred route has no
    /// cost yet.
    fn hopeless_ms(&self, bytes: u64) -> Option<f64> {
        let p = self.cost(self.preferred)?;
        let kib = bytes.saturating_sub(self.start_bytes) as f64 / 1024.0;
        let window_kib = (self.kib_per_query * self.length as f64).max(kib);
        (window_kib > 0.0).then_some(HOPELESS * p * window_kib)
    }

    /// Whether the current window is a probe of the route not preferred (every window of
    /// an alternating governor: each is short).
    pub fn probing(&self) -> bool {
        self.route != self.preferred || self.flip.is_some()
    }

    /// The modelled route's first window ends after [`PROBE_MIN`] queries instead of
    /// [`WINDOW`] where what it has shown so far (`first`) says the lean route is likely
    /// the cheaper (see the module's invariants). Call before [`Governor::due`] at each
    /// point where the route may change.
    pub fn note_first_window(&mut self, first: FirstWindow) {
        let starting = self.modelled.get().is_none() && self.lean.get().is_none();
        let n = first.queries.saturating_sub(self.start_queries);
        if !starting
            || self.flip.is_some()
            || self.route != Route::Modelled
            || first.store_hits > 0
            || n < PROBE_MIN
        {
            return;
        }
        let wall_ms = first.wall.saturating_sub(self.start_wall).as_secs_f64() * 1e3;
        let per_check_ms = first.solver.as_secs_f64() * 1e3 / first.checks.max(1) as f64;
        let lean_guess = per_check_ms * n as f64;
        if first.served == 0 || (first.checks > 0 && lean_guess < MARGIN * wall_ms) {
            self.length = self.length.min(PROBE_MIN);
        }
    }

    /// Whether the current window is over at `wall` (the engine's wall time so far) after
    /// `queries` check-sats and `bytes` of the client's commands: it has run its length, or
    /// it is a probe that has already cost [`HOPELESS`] times the preferred route per KiB
    /// over at least [`PROBE_MIN`] queries. `wall` may be short of what the window's
    /// queries will have cost (answers still in the solver's pipeline), never over it, so
    /// a probe that looks hopeless is.
    pub fn due(&self, wall: Duration, queries: u64, bytes: u64) -> bool {
        let n = queries.saturating_sub(self.start_queries);
        if n >= self.length {
            return true;
        }
        if self.flip.is_some() || self.route == self.preferred || n == 0 {
            return false;
        }
        let Some(p) = self.cost(self.preferred) else {
            return false;
        };
        let kib = bytes.saturating_sub(self.start_bytes) as f64 / 1024.0;
        let ms = wall.saturating_sub(self.start_wall).as_secs_f64() * 1e3;
        // Past HOPELESS times what the preferred route costs for a whole window (at the
        // last window's bytes per query): the window can only cost more, so its cost per
        // KiB is past HOPELESS times the preferred route's whatever its later queries are
        // (a solver start and one hard query can be that much).
        if self.hopeless_ms(bytes).is_some_and(|limit| ms > limit) {
            return true;
        }
        n >= PROBE_MIN && kib > 0.0 && ms > HOPELESS * p * kib
    }

    /// The current window ends at `wall` (the engine's wall time so far) after `queries`
    /// check-sats and `bytes` of the client's commands: record its cost and choose the
    /// route of the next window.
    pub fn decide(&mut self, wall: Duration, queries: u64, bytes: u64) -> Route {
        let n = queries.saturating_sub(self.start_queries);
        let kib = bytes.saturating_sub(self.start_bytes) as f64 / 1024.0;
        let probing = self.route != self.preferred;
        if n > 0 && kib > 0.0 {
            let per = wall.saturating_sub(self.start_wall).as_secs_f64() * 1e3 / kib;
            if probing {
                if let Some(p) = self.cost(self.preferred) {
                    self.regret_ms += kib * (per - p).max(0.0);
                }
            }
            self.cost_mut(self.route).add(per);
            self.kib_per_query = kib / n as f64;
        }
        let other = flip(self.preferred);
        let next = match (self.cost(self.preferred), self.cost(other)) {
            _ if self.flip.is_some() => {
                self.preferred = flip(self.route);
                self.length = self.flip.unwrap_or(WINDOW);
                self.preferred
            }
            (Some(p), Some(o)) => {
                let best = if o < p * MARGIN {
                    other
                } else {
                    self.preferred
                };
                if best != self.preferred && !probing {
                    // The other route looks cheaper, but by a measure taken before the
                    // preferred route's last run (a symbolic executor's queries change as
                    // it goes deeper: a KLEE log's first windows can be a hundred times
                    // cheaper per KiB than its later ones): measure it again first, as a
                    // probe, which ends early if it has become dear.
                    self.length = WINDOW;
                    other
                } else if best != self.preferred {
                    // The other route, just measured, is cheaper: it is preferred from now on.
                    self.preferred = best;
                    self.exploit = 4 * WINDOW;
                    self.length = self.exploit;
                    best
                } else if probing {
                    // A probe of the other route that did not pay: back, for twice as long.
                    self.exploit = (self.exploit * 2).min(EXPLOIT_MAX);
                    self.length = self.exploit;
                    self.preferred
                } else if self.regret_ms + WINDOW as f64 * self.kib_per_query * probe_extra(p, o)
                    > EXPLORE_SHARE * wall.as_secs_f64() * 1e3
                {
                    // A probe now would take exploration past its share of the time:
                    // run the preferred route on.
                    self.length = self.exploit;
                    self.preferred
                } else {
                    // A run of the preferred route ends: measure the other again.
                    self.length = WINDOW;
                    other
                }
            }
            // The other route is not measured yet: measure it.
            _ => {
                self.length = WINDOW;
                other
            }
        };
        if std::env::var_os("SMTPROXY_GOVERNOR_TRACE").is_some() {
            eprintln!(
                "governor: {:?} window of {n} ({kib:.0} KiB) at {:.1} ms: ms/KiB modelled {:?} lean {:?} -> {:?} for {}",
                self.route,
                wall.as_secs_f64() * 1e3,
                self.modelled.get(),
                self.lean.get(),
                next,
                self.length
            );
        }
        if next != self.route {
            self.switches += 1;
        }
        self.route = next;
        self.start_wall = wall;
        self.start_queries = queries;
        self.start_bytes = bytes;
        next
    }

    fn cost(&self, r: Route) -> Option<f64> {
        match r {
            Route::Modelled => self.modelled.get(),
            Route::Lean => self.lean.get(),
        }
    }

    fn cost_mut(&mut self, r: Route) -> &mut Cost {
        match r {
            Route::Modelled => &mut self.modelled,
            Route::Lean => &mut self.lean,
        }
    }
}

/// What a probe of a route measured at `o` ms per KiB may cost beyond the preferred route
/// at `p`, per KiB of its window: no more than the probe's early end lets it
/// ([`Governor::due`]: at [`HOPELESS`] times the preferred route's cost for a whole
/// window), however dear the route once looked. One window that stalled (a solver's first
/// start on a loaded machine) would otherwise put the route's next probe off for longer
/// than the session.
fn probe_extra(p: f64, o: f64) -> f64 {
    // Not `clamp`: it panics on bounds out of order, and this must not.
    (o - p).max(0.0).min((HOPELESS - 1.0) * p)
}

fn flip(r: Route) -> Route {
    match r {
        Route::Modelled => Route::Lean,
        Route::Lean => Route::Modelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> Duration {
        Duration::from_secs_f64(x / 1e3)
    }

    /// Runs windows where a query of 1 KiB costs `m` ms modelled and `l` ms lean; returns
    /// the share of queries that ran lean.
    fn run(m: f64, l: f64, total: u64) -> f64 {
        run_sized(m, l, total, |_| 1024)
    }

    /// As `run`, with query `q`'s size `size(q)` bytes and its cost in proportion.
    fn run_sized(m: f64, l: f64, total: u64, size: impl Fn(u64) -> u64) -> f64 {
        let (_, lean_q) = simulate(m, l, 0.0, total, size);
        lean_q as f64 / total as f64
    }

    /// `total` queries of `size(q)` bytes, each costing `m` ms per KiB modelled and `l`
    /// lean, the first lean one `start` ms more (the solver's start): the governor at the
    /// end, and the queries that ran lean.
    fn simulate(
        m: f64,
        l: f64,
        start: f64,
        total: u64,
        size: impl Fn(u64) -> u64,
    ) -> (Governor, u64) {
        let mut g = Governor::default();
        let (mut wall, mut q, mut bytes, mut lean_q) = (0.0, 0u64, 0u64, 0u64);
        while q < total {
            let b = size(q);
            let lean = g.route() == Route::Lean;
            wall += if lean { l } else { m } * b as f64 / 1024.0;
            if lean && lean_q == 0 {
                wall += start;
            }
            lean_q += lean as u64;
            q += 1;
            bytes += b;
            if g.due(ms(wall), q, bytes) {
                g.decide(ms(wall), q, bytes);
            }
        }
        (g, lean_q)
    }

    #[test]
    fn growing_queries_do_not_count_against_the_route_measured_second() {
        // Lean 20% cheaper per byte; queries grow 2% each, so the lean window's queries
        // are 3.6x the first window's. Per query the lean window looked 2.9x dearer.
        let share = run_sized(1.0, 0.8, 300, |q| (700.0 * 1.02f64.powi(q as i32)) as u64);
        assert!(share > 0.7, "lean share {share}");
        // And the other way: modelled cheaper per byte stays modelled after its probe.
        let share = run_sized(0.8, 1.0, 300, |q| (700.0 * 1.02f64.powi(q as i32)) as u64);
        assert!(share < 0.3, "lean share {share}");
    }

    /// A log whose first queries are cheap both ways and whose later ones are dear both
    /// ways, the lean route twice as dear (the PCRE KQuery log through cvc5, where the
    /// cache pays: 0.16 ms per KiB modelled in the first window, 14 lean in the probe
    /// after it, then 24 modelled over 512 queries): the lean route's measure from the
    /// cheap start is not trusted for the dear part, only probed again.
    #[test]
    fn a_measure_from_a_cheaper_start_is_probed_before_it_is_trusted() {
        let mut g = Governor::default();
        let (mut wall, mut bytes, mut lean_dear) = (0.0, 0u64, 0u64);
        let total = 3000;
        for q in 1..=total {
            let lean = g.route() == Route::Lean;
            let dear = q > 100;
            wall += match (dear, lean) {
                (false, false) => 0.2,
                (false, true) => 5.0,
                (true, false) => 20.0,
                (true, true) => 40.0,
            };
            lean_dear += u64::from(dear && lean);
            bytes += 1024;
            if g.due(ms(wall), q, bytes) {
                g.decide(ms(wall), q, bytes);
            }
        }
        // One probe of a window, and what exploration's share allows later.
        assert!(lean_dear <= 2 * WINDOW, "{lean_dear} dear queries ran lean");
    }

    #[test]
    fn cheap_solver_goes_lean() {
        assert!(run(0.5, 0.2, 20_000) > 0.9);
    }

    #[test]
    fn paying_cache_stays_modelled() {
        assert!(run(0.1, 2.0, 20_000) < 0.1);
    }

    #[test]
    fn small_session_never_switches() {
        let g = Governor::default();
        for q in 1..WINDOW {
            assert!(!g.due(ms(1e6 * q as f64), q, 1024 * q));
        }
        assert_eq!(g.route(), Route::Modelled);
    }

    /// Queries until the first decision, with what the session has shown after `q`
    /// queries at 1 ms each given by `shown(q)` (its `queries` and `wall` set here).
    fn first_decision(shown: impl Fn(u64) -> FirstWindow) -> u64 {
        let mut g = Governor::default();
        for q in 1..=2 * WINDOW {
            g.note_first_window(FirstWindow {
                queries: q,
                wall: ms(q as f64),
                ..shown(q)
            });
            if g.due(ms(q as f64), q, 1024 * q) {
                g.decide(ms(q as f64), q, 1024 * q);
                return q;
            }
        }
        u64::MAX
    }

    /// `served` queries answered by smtproxy itself, `checks` solver checks at `each_ms`.
    fn shown(served: u64, checks: u64, each_ms: f64) -> FirstWindow {
        FirstWindow {
            served,
            checks,
            solver: ms(each_ms * checks as f64),
            ..FirstWindow::default()
        }
    }

    #[test]
    fn a_first_window_is_short_where_the_lean_route_looks_cheaper() {
        assert_eq!(first_decision(|_| shown(0, 0, 0.0)), PROBE_MIN);
        // One query answered itself, even the last one before PROBE_MIN: the whole window,
        // with no solver check to measure the lean route by...
        assert_eq!(
            first_decision(|q| shown(u64::from(q >= PROBE_MIN), 0, 0.0)),
            WINDOW
        );
        assert_eq!(first_decision(|_| shown(1, 0, 0.0)), WINDOW);
        // ...or with checks that cost the solver, one per query, more than the window has.
        assert_eq!(first_decision(|q| shown(q / 2, q / 2, 1.5)), WINDOW);
        // Cheap checks (a query at 0.2 ms of the solver against 1 ms modelled): short.
        assert_eq!(first_decision(|q| shown(q / 2, q / 2, 0.2)), PROBE_MIN);
        // Unless the store answers from what it held before the session.
        let warm = |q| FirstWindow {
            store_hits: 1,
            ..shown(q / 2, q / 2, 0.2)
        };
        assert_eq!(first_decision(warm), WINDOW);
        // Only the first window: later windows keep their lengths.
        let mut g = Governor::default();
        g.decide(ms(1.0), WINDOW, 1024 * WINDOW);
        let length = g.length;
        g.note_first_window(FirstWindow {
            queries: WINDOW + PROBE_MIN,
            ..shown(0, 0, 0.0)
        });
        assert_eq!(g.length, length);
        // An alternating governor keeps its own windows.
        let mut g = Governor::alternating(3);
        g.note_first_window(FirstWindow {
            queries: 1,
            ..shown(0, 0, 0.0)
        });
        assert!(!g.due(ms(1.0), 2, 2048));
        assert!(g.due(ms(1.0), 3, 3072));
    }

    #[test]
    fn far_dearer_route_is_probed_seldom() {
        // A warm store (0.5 ms a query modelled) in front of a solver taking 15 ms: the
        // first lean window is all the exploration the share allows here.
        let share = run(0.5, 15.0, 20_000);
        assert!(share <= WINDOW as f64 / 20_000.0, "lean share {share}");
    }

    #[test]
    fn a_probe_sends_no_more_than_its_early_end_pays_for() {
        // A first modelled window of 64 queries of 1 KiB at 0.1 ms each: a lean probe
        // ends at once past 3 x 6.4 = 19.2 ms.
        let mut g = Governor::default();
        let (w, b) = (WINDOW, 1024 * WINDOW);
        assert_eq!(
            g.probe_cap(ms(6.4), w, b),
            PROBE_MIN,
            "no probe, no cost yet"
        );
        assert_eq!(g.decide(ms(6.4), w, b), Route::Lean);
        // Nothing answered yet: one query, whatever its start costs.
        assert_eq!(g.probe_cap(ms(6.4), w, b + 1024), 1);
        // A cheap solver (0.2 ms a query): as many as a probe keeps.
        assert_eq!(g.probe_cap(ms(6.4 + 0.8), w + 4, b + 4096), PROBE_MIN);
        // A first answer in 4 ms: the 15.2 ms left pay for 3 more. In 8 ms (a context
        // built): for one. Past the early end: still one, never none.
        assert_eq!(g.probe_cap(ms(6.4 + 4.0), w + 1, b + 1024), 3);
        assert_eq!(g.probe_cap(ms(6.4 + 8.0), w + 1, b + 1024), 1);
        assert_eq!(g.probe_cap(ms(6.4 + 18.0), w + 2, b + 2048), 1);
        // An alternating governor keeps its window in flight.
        assert_eq!(Governor::alternating(5).probe_cap(ms(1.0), 0, 0), 5);
    }

    #[test]
    fn hopeless_probe_ends_early() {
        // The first lean window at 10x the modelled cost ends after PROBE_MIN queries
        // (it ran WINDOW of them before), and the session stays modelled.
        let (g, lean_q) = simulate(1.0, 10.0, 0.0, 2 * WINDOW, |_| 1024);
        assert_eq!(lean_q, PROBE_MIN);
        assert_eq!(g.route(), Route::Modelled);
        // A probe merely dearer than HOPELESS times runs its whole window.
        assert!(run(1.0, 2.5, WINDOW * 2) >= 0.5 - 1e-9);
    }

    #[test]
    fn probe_dearer_than_a_window_ends_at_once() {
        // A warm store answers a query in 0.1 ms; the solver takes 30 ms for one (its
        // start included): the probe ends after its first query.
        let (g, lean_q) = simulate(0.1, 30.0, 0.0, 2 * WINDOW, |_| 1024);
        assert_eq!(lean_q, 1);
        assert_eq!(g.route(), Route::Modelled);
        // A cheap solver's start (5 ms) does not end a probe that pays (0.05 ms a query
        // against 0.5 modelled): the session goes lean.
        let (g, _) = simulate(0.5, 0.05, 5.0, 4 * WINDOW, |_| 1024);
        assert_eq!(g.route(), Route::Lean);
    }

    #[test]
    fn exploration_stays_within_its_share() {
        // Probes beyond the first measurements cost at most EXPLORE_SHARE of the time.
        for (m, l) in [(0.5, 3.0), (2.0, 0.3), (1.0, 1.5)] {
            let total = 50_000u64;
            let lean = run(m, l, total);
            let (best, worst) = if m <= l { (m, l) } else { (l, m) };
            let dear = if m <= l { lean } else { 1.0 - lean };
            let extra = dear * total as f64 * (worst - best);
            let first = WINDOW as f64 * (worst - best);
            let wall = total as f64 * best;
            assert!(
                extra <= first + EXPLORE_SHARE * wall * 1.1,
                "m {m} l {l}: probes cost {extra:.0} ms of {wall:.0}"
            );
        }
    }

    #[test]
    fn one_stalled_window_does_not_decide_the_session() {
        // The first modelled window stalls for 5 s (a solver's first start on a loaded
        // machine, a store's first open); modelled is 0.4 ms per KiB after it, lean 2.5.
        // The session is back on the modelled route within a few thousand queries.
        let mut g = Governor::default();
        let (mut wall, mut q, mut bytes, mut lean_q) = (0.0, 0u64, 0u64, 0u64);
        while q < 19_000 {
            let lean = g.route() == Route::Lean;
            wall += if lean { 2.5 } else { 0.4 } * 1.2;
            if q == 10 {
                wall += 5000.0;
            }
            lean_q += lean as u64;
            q += 1;
            bytes += 1229;
            if g.due(ms(wall), q, bytes) {
                g.decide(ms(wall), q, bytes);
            }
        }
        assert_eq!(g.route(), Route::Modelled);
        assert!(lean_q < 3_000, "{lean_q} of 19000 queries ran lean");
    }

    #[test]
    fn tie_keeps_modelled_mostly() {
        assert!(run(1.0, 1.0, 20_000) < 0.2);
    }
}
