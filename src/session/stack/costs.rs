//! The stack's yardstick: what incremental solves and fresh contexts cost, and the
//! decisions drawn from it (when to probe a fresh context, when a solve is slow enough to
//! bail out of, when to back off to fresh contexts for a while, when the backend has grown
//! dear and is to be rebuilt).
//!
//! Invariants:
//! * Incremental is not always faster (z3 skips most preprocessing once a push has
//!   happened, which makes some hard queries 10-100x slower). A solve past
//!   [`Costs::bailout_deadline`] (20x the median of recent solves, between 250 ms and 2 s;
//!   1 s while there are fewer than 8 samples; never later than the client's deadline) is
//!   given up on. After the k-th bail-out, and after an incremental solve much slower than
//!   fresh ones, the next 2^k queries go straight to a fresh context
//!   ([`Costs::back_off`]), so a log of hard queries soon runs almost entirely in fresh
//!   contexts while KLEE-like logs stay on the stack. With one process (no race), a
//!   stack measured far cheaper than fresh contexts is waited for instead
//!   ([`Costs::sequential_patience`]): a bail-out there kills what the solver learnt.
//! * What a fresh context costs is measured now and then (a probe: the 16th query, then
//!   every 16 to 512, the gap doubling while the stack is clearly cheaper). A probe never
//!   answers the client (the mirror decides how it is posed).
//! * Whole costs are compared by their means once there are enough of both
//!   ([`JUDGE_MIN`] incremental, 3 fresh): the stack clearly dearer backs off, unless it
//!   was cheap while its process was new, which asks for a rebuild instead.
//! * Every window keeps the last 64 samples only; nothing here refers to terms, so it
//!   survives the term store's collection and backend restarts.

use std::time::Duration;

/// The first query solved fresh as a probe, the least and the most queries between probes.
const PROBE_FIRST: u64 = 16;
const PROBE_MAX: u64 = 512;
/// Incremental samples needed before the stack is judged against fresh contexts.
const JUDGE_MIN: usize = 8;

/// The costs measured so far and the query count they are scheduled by.
pub(super) struct Costs {
    /// Queries seen (by the stack's `check` and `begin`).
    pub(super) queries: u64,
    /// Bail-outs so far, and the query number before which queries go straight to a fresh
    /// context (exponential back-off in the number of bail-outs).
    bailouts: u32,
    skip_until: u64,
    recent_ms: Vec<f64>,
    fresh_ms: Vec<f64>,
    /// Whole incremental costs (pushes and assertions sent, plus the check), to compare
    /// with `fresh_ms` (whole fresh contexts).
    inc_cost_ms: Vec<f64>,
    /// Time the current query's pushes and assertions took.
    pub(super) batch_ms: f64,
    /// The next query solved fresh only to measure what a fresh context costs, and the gap
    /// to the one after (doubling while the stack is clearly cheaper).
    next_probe: u64,
    probe_gap: u64,
    /// The last judgement found the stack far cheaper than fresh contexts.
    stack_cheaper: bool,
    /// Costs of the first queries on the current backend process (to tell whether it has
    /// grown dear since, as cvc5 does, keeping memory across pops).
    early_ms: Vec<f64>,
}

impl Costs {
    pub(super) fn new() -> Self {
        Costs {
            queries: 0,
            bailouts: 0,
            skip_until: 0,
            recent_ms: Vec::new(),
            fresh_ms: Vec::new(),
            inc_cost_ms: Vec::new(),
            batch_ms: 0.0,
            next_probe: PROBE_FIRST,
            probe_gap: PROBE_FIRST,
            stack_cheaper: false,
            early_ms: Vec::new(),
        }
    }

    /// A new backend process: its early costs are measured anew.
    pub(super) fn new_process(&mut self) {
        self.early_ms.clear();
    }

    /// The whole cost of the current process's first incremental query (its batch and
    /// check), if it has had one.
    pub(super) fn first_ms(&self) -> Option<f64> {
        self.early_ms.first().copied()
    }

    /// Query number `n` falls in a back-off: it goes straight to a fresh context.
    pub(super) fn backing_off(&self, n: u64) -> bool {
        n < self.skip_until
    }

    /// A probe is due at query number `n`.
    pub(super) fn probe_due(&self, n: u64) -> bool {
        n >= self.next_probe
    }

    /// The probe due now is taken: schedule the next one.
    pub(super) fn schedule_probe(&mut self) {
        if self.stack_cheaper {
            self.probe_gap = (self.probe_gap * 2).min(PROBE_MAX);
        }
        self.next_probe = self.queries + self.probe_gap;
    }

    pub(super) fn back_off(&mut self) {
        self.bailouts += 1;
        self.skip_until = self.queries + (1u64 << self.bailouts.min(10));
    }

    /// Time spent reading the model of the last query: on the stack backend
    /// (`incremental`) or a fresh context; added to that query's cost.
    pub(super) fn add_model_cost(&mut self, incremental: bool, d: Duration) {
        let v = if incremental {
            &mut self.inc_cost_ms
        } else {
            &mut self.fresh_ms
        };
        if let Some(last) = v.last_mut() {
            *last += d.as_secs_f64() * 1000.0;
        }
    }

    /// The time a query took in a fresh context (after a bail-out, during back-off, or a
    /// probe), the yardstick for incremental solves.
    pub(super) fn record_fresh(&mut self, d: Duration) {
        push_window(&mut self.fresh_ms, d.as_secs_f64() * 1000.0);
    }

    fn record(&mut self, ms: f64) {
        push_window(&mut self.recent_ms, ms);
    }

    /// An incremental solve of `ms` finished (its pushes and assertions took `batch_ms`):
    /// note it, and back off to fresh contexts if it was far slower than fresh ones have
    /// been. True when the backend is to be rebuilt (see `judge`).
    pub(super) fn incremental(&mut self, ms: f64) -> bool {
        self.record(ms);
        push_window(&mut self.inc_cost_ms, self.batch_ms + ms);
        if self.early_ms.len() < JUDGE_MIN {
            self.early_ms.push(self.batch_ms + ms);
        }
        if let Some(fresh) = median(&self.fresh_ms) {
            if ms > 100.0 && ms > 3.0 * fresh {
                self.back_off();
                return false;
            }
        }
        self.judge()
    }

    /// Compare what queries cost on the stack with what fresh contexts cost (means, once
    /// there are enough of both). The stack clearly dearer (some solvers, e.g. cvc5 on
    /// small queries, are slower incrementally): back off to fresh contexts and measure
    /// the stack anew afterwards, or, when it was cheap while the process was new, return
    /// true (rebuild it). The stack clearly cheaper: probe fresh contexts less often.
    fn judge(&mut self) -> bool {
        if self.inc_cost_ms.len() < JUDGE_MIN || self.fresh_ms.len() < 3 {
            return false;
        }
        // Means, not medians: a few slow queries can outweigh many fast ones.
        let (inc, fresh) = (mean(&self.inc_cost_ms), mean(&self.fresh_ms));
        self.stack_cheaper = inc < 0.5 * fresh;
        if inc > 1.25 * fresh {
            self.inc_cost_ms.clear();
            self.probe_gap = PROBE_FIRST;
            if self.early_ms.len() == JUDGE_MIN && mean(&self.early_ms) < 0.8 * fresh {
                // It was cheap when the process was new: it has grown, start it afresh.
                return true;
            }
            self.back_off();
        }
        false
    }

    /// A deadline past which the incremental solve is abandoned: far slower than recent
    /// solves (20x the median, between 250 ms and 2 s; 1 s while there are fewer than 8
    /// samples), never later than the client's deadline.
    pub(super) fn bailout_deadline(&self, client: Option<Duration>) -> Duration {
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

    /// With one process (no race), how long an incremental solve is waited for before it
    /// is given up for a fresh context. A bail-out then kills the only process that holds
    /// what the solver has learnt, and the next one learns it again: where the stack has
    /// been measured far cheaper than fresh contexts (its median solve under a quarter of
    /// theirs, over at least [`JUDGE_MIN`] solves and one fresh context), the solve is
    /// waited for up to [`SEQUENTIAL_PATIENCE`], as the solver alone would be. yices on
    /// `domain.smt2` with `--jobs 1`: bail-outs at 20x the usual solve took the session
    /// from yices' own 44-61 s to 232-259 s (the process after a bail-out took 12 s for a
    /// query the first had answered in 8 ms, and 4-14 s for each query after the hard
    /// ones, against 20-130 ms on the process that had solved them). Elsewhere (no
    /// measure yet, or a stack not clearly cheaper: z3's incremental mode makes some hard
    /// queries 10-100x slower) the bail-out `deadline` stands. Never past the client's
    /// deadline.
    pub(super) fn sequential_patience(
        &self,
        deadline: Duration,
        client: Option<Duration>,
    ) -> Duration {
        let stack_far_cheaper = self.recent_ms.len() >= JUDGE_MIN
            && median(&self.recent_ms)
                .zip(median(&self.fresh_ms))
                .is_some_and(|(inc, fresh)| inc * 4.0 < fresh);
        let d = if stack_far_cheaper {
            deadline.max(SEQUENTIAL_PATIENCE)
        } else {
            deadline
        };
        client.map_or(d, |c| d.min(c))
    }
}

/// With one process and a stack measured far cheaper than fresh contexts, how long an
/// incremental solve is waited for (a solver that hangs is still given up).
const SEQUENTIAL_PATIENCE: Duration = Duration::from_secs(60);

/// Samples a window keeps.
const WINDOW: usize = 64;

/// Keep the last [`WINDOW`] samples.
fn push_window(v: &mut Vec<f64>, x: f64) {
    v.push(x);
    if v.len() > WINDOW {
        v.remove(0);
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The upper median of a window (at most [`WINDOW`] samples), without allocating: it is
/// taken at every query.
fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut buf = [0.0; WINDOW];
    let n = v.len().min(WINDOW);
    let w = &mut buf[..n];
    w.copy_from_slice(&v[v.len() - n..]);
    let (_, m, _) = w.select_nth_unstable_by(n / 2, |a, b| a.total_cmp(b));
    Some(*m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The median taken in place is the sorted window's middle sample, for every window
    /// length (duplicates among the samples too).
    #[test]
    fn the_median_is_the_sorted_windows_middle() {
        let mut seed = 0x5eed_u64;
        let mut next = |n: u64| crate::test_rng::xorshift(&mut seed) % n;
        assert_eq!(median(&[]), None);
        for _ in 0..2_000 {
            let len = 1 + next(WINDOW as u64) as usize;
            let v: Vec<f64> = (0..len).map(|_| next(40) as f64 / 4.0).collect();
            let mut sorted = v.clone();
            sorted.sort_by(|a, b| a.total_cmp(b));
            assert_eq!(median(&v), Some(sorted[len / 2]), "{v:?}");
        }
    }

    const DEADLINE: Duration = Duration::from_millis(250);

    #[test]
    fn one_process_waits_for_a_stack_measured_far_cheaper_than_fresh_contexts() {
        let mut c = Costs::new();
        // Nothing measured: the bail-out deadline.
        assert_eq!(c.sequential_patience(DEADLINE, None), DEADLINE);
        for _ in 0..JUDGE_MIN {
            c.incremental(3.0);
        }
        // Incremental solves alone say nothing of fresh contexts.
        assert_eq!(c.sequential_patience(DEADLINE, None), DEADLINE);
        c.record_fresh(Duration::from_millis(500));
        assert_eq!(c.sequential_patience(DEADLINE, None), SEQUENTIAL_PATIENCE);
        // Never past the client's own deadline.
        let client = Duration::from_secs(5);
        assert_eq!(c.sequential_patience(DEADLINE, Some(client)), client);
    }

    #[test]
    fn one_process_bails_out_where_fresh_contexts_are_about_as_cheap() {
        let mut c = Costs::new();
        for _ in 0..JUDGE_MIN {
            c.incremental(3.0);
        }
        c.record_fresh(Duration::from_millis(10));
        assert_eq!(c.sequential_patience(DEADLINE, None), DEADLINE);
    }
}
