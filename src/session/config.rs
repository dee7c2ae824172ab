//! How an engine is set up: the strategy, the backend, deadlines, the result store, and
//! what the solver's command line says the client sees. Plain data, a leaf of `session`
//! (the command line, `cli`, fills it in).

use super::vocab::Strategy;
use crate::driver::SolverSpec;
use std::time::Duration;

/// `--jobs` when not given.
pub const DEFAULT_JOBS: usize = 2;

/// How an engine is set up.
#[derive(Clone, Debug)]
pub struct Config {
    pub strategy: Strategy,
    /// The first (client-facing) solver: its dialect, and the only one of the lean
    /// passthrough and of whatever the modelled strategies do not model.
    pub solver: SolverSpec,
    /// The other solvers of a portfolio (`--solver z3,yices,...`), in order; empty for one
    /// solver. The modelled strategies' misses are raced among all of them
    /// (`session::portfolio`).
    pub portfolio: Vec<SolverSpec>,
    pub timeout: Option<Duration>,
    pub cache: Option<crate::cache::tiered::CacheConfig>,
    /// Backend processes that may solve at once (>= 2: a slow incremental solve is raced
    /// against a fresh context).
    pub jobs: usize,
    /// Portfolio: another solver's `unsat` that comes first while a query class is
    /// explored is taken at once, not held for the first solver's cross-check
    /// (`--first-answer-wins`).
    pub first_answer_wins: bool,
    /// What the solver's command-line flags say the client sees (initial options, models
    /// and statistics printed unasked).
    pub client: ClientFlags,
}

/// What the client's flags say about the session as the client sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientFlags {
    /// `:print-success` on from the start (cvc5 `--print-success`, yices `--interactive`).
    pub print_success: bool,
    /// `:produce-models` from the start, where a flag sets it (cvc5 `-m`, z3 `model=`).
    pub produce_models: Option<bool>,
    /// Print the model after every `sat` (cvc5 `--dump-models`, z3 `dump_models=true`).
    pub model_after_sat: bool,
    /// Print the model of the last `sat` when the session ends (z3 `-model`).
    pub model_at_exit: bool,
    /// Print the solver's statistics when the session ends (z3 `-st`).
    pub stats_at_exit: bool,
    /// yices `--interactive`: the session goes on after a syntax error (a lean yices that
    /// exits on one is restarted with the client's state).
    pub interactive: bool,
    /// yices `--smt2-model-format`: values and models as SMT-LIB prints them (integral
    /// reals as `2.0`, models as `define-fun`s); without it yices prints integral reals
    /// as `2`. smtproxy's own yices always runs with it.
    pub smt2_model_format: bool,
    /// A flag turned on what smtproxy does not model from the start (cvc5
    /// `--produce-unsat-cores` and the like): the whole session is passed through to a
    /// backend run with it.
    pub passthrough: bool,
}
