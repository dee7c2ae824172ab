//! The miss path: where the cache stage sends a component it could not answer. The cache
//! stage sees only this trait; the planner hands it the stack (`stack::StackMiss`, the
//! `hybrid` strategy) or a fresh context (`fresh::FreshMiss`, the `cache` strategy).
//!
//! Invariants:
//! * A solve started ahead (`begin`) is given back exactly once, to `solve` or to
//!   `drop_ahead`, before anything else is asked of the path.
//! * `values` and `unsat_core` are about the last `solve` only: they read the very process
//!   that answered it, in the generation that answered it, or give nothing.

use super::stats::Stats;
use super::vocab::{Answer, Query};
use crate::driver::DriverError;
use crate::term::{TermId, TermStore};
use std::time::Duration;

pub trait MissPath {
    /// A solve started ahead of need.
    type Ahead;

    /// Start solving `q` now, while the caller looks for an answer elsewhere; `None` when
    /// this path does not solve ahead, or not now.
    fn begin(&mut self, store: &mut TermStore, q: &Query, stats: &mut Stats)
        -> Option<Self::Ahead>;

    /// A solve started ahead is not needed after all.
    fn drop_ahead(&mut self, ahead: Self::Ahead);

    /// Whether `begin` ever solves ahead on this path (it may still decline a given
    /// query); false for a path that only answers as it blocks.
    fn solves_ahead(&self) -> bool {
        true
    }

    /// Start this path's solver process now without waiting for it to be ready, when none
    /// runs (see `SolverHandle::prestart`); a path without one does nothing.
    fn prestart(&mut self) {}

    /// Start the process of this path that keeps its state (the incremental stack),
    /// where none ever ran, and have it build its context ahead of need (see
    /// `StackMirror::warm`). A path that keeps none does nothing (a fresh context begins
    /// with a reset, which throws a built context away).
    fn warm(&mut self, _q: &Query) {}

    /// The session's first component past the memory tier, `q`, is here. The portfolio
    /// warms its first solver now (`warm`): its first exploring race waits for that
    /// solver's answer, which would otherwise wait for its context (z3's, ~11 ms, where
    /// yices answers in one). A path of one solver waits for its first miss: most KLEE
    /// logs here never reach the solver, and a start would cost the engine the spawn
    /// (~0.3 ms) and z3 its context for nothing.
    fn first_component(&mut self, _q: &Query) {}

    /// Whether `begin` would not wait for its solver, waiting up to `wait`: neither for the
    /// start of the process `prestart` started, nor for a solve of its own still running
    /// (one dropped by `drop_ahead`). A path that cannot tell says true.
    fn free(&mut self, _wait: Duration, _stats: &mut Stats) -> bool {
        true
    }

    /// Whether `ahead`'s answer has come (waiting up to `wait`), so that `solve` would give
    /// it without waiting for the solver. A path that cannot tell says true: its `solve`
    /// is then simply waited for.
    fn ready(&mut self, _ahead: &Self::Ahead, _wait: Duration) -> bool {
        true
    }

    /// The answer to `q`, from `ahead` when it is `q`'s own solve started by `begin`.
    fn solve(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        ahead: Option<Self::Ahead>,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError>;

    /// The solver's values of `terms` after a `sat` from `solve`, as value texts in order;
    /// `Ok(None)` when the solver gave no usable answer, an error when it died since.
    fn values(
        &mut self,
        store: &TermStore,
        terms: &[TermId],
    ) -> Result<Option<Vec<String>>, DriverError>;

    /// The conjuncts of an unsat core of the last `solve`'s `unsat`, where the path learns
    /// cores (the incremental stack under z3); `None` otherwise.
    fn unsat_core(&mut self) -> Option<Vec<TermId>>;

    /// Stop learning cores (they cost solver time and have not been paying).
    fn stop_cores(&mut self);
}
