//! The `hybrid` strategy's miss path ([`MissPath`]): a cache miss is answered by the
//! incremental stack in `main`, raced against a fresh context in `aux` when `race`.
//!
//! Invariants:
//! * `values` and `unsat_core` ask the backend that answered the last `solve` (`last`):
//!   the stack's names on `main`, the plain backend names on `aux`. A fresh context gives
//!   no core.
//! * A query started ahead of need (`begin`) is either finished by `solve` or dropped by
//!   `drop_ahead`, never both (see `StackMirror::begin`).

use super::mirror::{InFlight, StackMirror, Via};
use crate::driver::DriverError;
use crate::session::backend::SolverHandle;
use crate::session::fresh::values_in;
use crate::session::miss::MissPath;
use crate::session::stats::Stats;
use crate::session::vocab::{Answer, Query};
use crate::smt2::printer::BackendNames;
use crate::term::{TermId, TermStore};
use std::time::Duration;

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

    fn prestart(&mut self) {
        self.main.prestart();
    }

    fn warm(&mut self, q: &Query) {
        self.stack.warm(self.main, q);
    }

    fn free(&mut self, wait: Duration, stats: &mut Stats) -> bool {
        self.main.started(wait) && self.stack.idle(self.main, wait, stats)
    }

    fn ready(&mut self, ahead: &InFlight, wait: Duration) -> bool {
        self.stack.ready(self.main, ahead, wait)
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
