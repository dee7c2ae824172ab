//! Counters of one run, serialised as the JSON summary of DESIGN.md's contract. Notes
//! (warnings worth telling the user once) are kept de-duplicated.

use serde::Serialize;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub strategy: String,
    pub queries: u64,
    pub sat: u64,
    pub unsat: u64,
    pub unknown: u64,
    pub solver_checks: u64,
    pub cache_hits: u64,
    pub model_hits: u64,
    pub wall: Duration,
    pub solver: Duration,
    pub timeouts: u64,
    pub restarts: u64,
    pub fallbacks_passthrough: u64,
    /// The default strategy: route changes between the modelled engine and the lean
    /// passthrough (`session::governor`), and check-sats the lean route answered.
    pub route_switches: u64,
    pub lean_queries: u64,
    /// Stack strategy: incremental solves abandoned for a fresh context.
    pub stack_bailouts: u64,
    /// Stack strategy: queries sent straight to a fresh context during back-off.
    pub stack_detours: u64,
    /// Stack strategy: slow incremental solves raced against a fresh context (a bail-out
    /// is counted when the fresh context wins).
    pub stack_races: u64,
    /// Stack strategy: incremental backend restarted because it grew too large.
    pub stack_rebuilds: u64,
    pub pushes: u64,
    pub pops: u64,
    /// Hybrid: component solves started on the stack backend before the result store was
    /// searched, and how many of them were needed.
    pub speculations: u64,
    pub speculations_used: u64,
    /// Cache and hybrid: components the backend found sat whose model, dear to read
    /// (cvc5's on some KLEE logs), was not asked for (`cache_stage::adapt::ModelCost`).
    pub models_unread: u64,
    /// Hybrid: components decided by evaluating every assignment of their few bits
    /// (`query::enumerate`) instead of by a backend.
    pub enumerated: u64,
    /// Hybrid: components found satisfiable by a guessed assignment (`query::enumerate`)
    /// instead of by a backend.
    pub guessed: u64,
    /// Hybrid: components decided by the values their comparisons with literals leave
    /// each word (`query::enumerate::by_bounds`) instead of by a backend.
    pub bounded: u64,
    /// Hybrid on z3: unsat cores learned from the stack backend (smaller than their
    /// component) and kept as refuted sets for counterexample reasoning.
    pub cores: u64,
    /// Components answered from the result store by their exact key (the component as
    /// the client wrote it; no canonical form computed).
    pub exact_hits: u64,
    /// Queries answered by the model of the same block of commands under other names
    /// (counted in `model_hits` too; `cache_stage::hints`).
    pub block_hints: u64,
    /// Queries whose block of commands since a `(reset)` repeated one answered before in
    /// this session up to names, answered without parsing their assertions (counted in
    /// `model_hits` or `cache_hits` too; `session::repeat`).
    pub block_repeats: u64,
    /// Assertions of a repeated block's path built by renaming the term an earlier block
    /// on the path parsed, not by parsing (`session::repeat::terms`).
    pub renamed_assertions: u64,
    /// Nodes of the trie of repeated blocks read from the file an earlier session saved
    /// beside the disk store (`session::repeat::persist`).
    pub trie_loaded_nodes: u64,
    /// Check-sats under a z3 objective answered by a search over bounds
    /// (`session::objective`), not by the solver's optimiser.
    pub optimisations: u64,
    /// Result-store lookups answered by each persistent tier (per component), and
    /// entries written to the store, as of the end of the run.
    pub disk_hits: u64,
    pub redis_hits: u64,
    pub store_puts: u64,
    /// Unsat entries read from Redis and not trusted (no fleet secret, or no valid tag).
    pub redis_untrusted_unsat: u64,
    /// Writes a full Redis refused; entries the disk store's bound evicted.
    pub redis_rejected: u64,
    pub disk_evicted: u64,
    /// The term store: nodes at the end, the most one store held, and how many times it
    /// was collected (`session::arena`).
    pub terms: u64,
    pub terms_peak: u64,
    pub term_collections: u64,
    /// The process's peak resident set (VmHWM), in MB; 0 where the system does not say.
    pub peak_rss_mb: f64,
    /// Portfolio (`--solver a,b,...`): a sat whose model smtproxy evaluated true and an
    /// unsat for the same query (a solver bug; the unsat is never served or stored).
    pub solver_disagreements: u64,
    /// Portfolio: queries on which more than one solver ran at once.
    pub portfolio_races: u64,
    /// Portfolio: each solver's counters, in `--solver` order (empty for one solver).
    pub portfolio: Vec<SolverCounts>,
    pub notes: Vec<String>,
}

impl Stats {
    /// Queries, or parts of queries, smtproxy answered itself, without a solver: store and
    /// model hits, components enumerated, bounded or guessed, objectives searched.
    pub fn served_itself(&self) -> u64 {
        self.cache_hits
            + self.model_hits
            + self.exact_hits
            + self.enumerated
            + self.bounded
            + self.guessed
            + self.optimisations
    }
}

/// One portfolio member's counters.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SolverCounts {
    /// Its name (`z3`, `yices`, `cvc5`, or a custom program's file name).
    pub solver: String,
    /// Queries it was asked (for the first solver, those of its own miss path too).
    pub checks: u64,
    /// Queries whose answer (sat or unsat) it gave.
    pub wins: u64,
    /// Races it took part in (it and another solver on the same query at once).
    pub races: u64,
    /// Times it was killed because another solver answered first (or past a deadline).
    pub kills: u64,
    /// Its definitive answers that were timed (a race's losers that answered too), and
    /// their times summed, in ms: each from the check's send to its answer, as the
    /// portfolio's learner measured it.
    pub answers: u64,
    pub answer_ms: f64,
    /// Its models read after its `sat`, and the reads' times summed, in ms.
    pub model_reads: u64,
    pub model_read_ms: f64,
}

impl SolverCounts {
    /// An answer of this solver, timed at `ms`.
    pub fn answered(&mut self, ms: f64) {
        self.answers += 1;
        self.answer_ms += ms;
    }

    /// A read of this solver's model, timed at `ms`.
    pub fn model_read(&mut self, ms: f64) {
        self.model_reads += 1;
        self.model_read_ms += ms;
    }
}

#[derive(Clone, Serialize)]
pub struct Summary {
    pub strategy: String,
    /// `bench` with several solvers: the solver(s) of this run (`z3`, `z3,yices` for the
    /// portfolio, `vbs` for the virtual best solver); absent otherwise.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub solver: String,
    pub log: String,
    pub queries: u64,
    pub sat: u64,
    pub unsat: u64,
    pub unknown: u64,
    pub solver_checks: u64,
    pub cache_hits: u64,
    pub model_hits: u64,
    pub wall_ms: f64,
    pub solver_ms: f64,
    pub expected_mismatches: u64,
    pub cross_mismatches: u64,
    pub timeouts: u64,
    pub restarts: u64,
    pub stack_bailouts: u64,
    pub stack_rebuilds: u64,
    pub stack_detours: u64,
    pub stack_races: u64,
    /// Scopes pushed to and popped from the incremental backend.
    pub pushes: u64,
    pub pops: u64,
    pub speculations: u64,
    pub speculations_used: u64,
    pub enumerated: u64,
    pub models_unread: u64,
    pub guessed: u64,
    pub bounded: u64,
    pub cores: u64,
    pub exact_hits: u64,
    pub block_hints: u64,
    pub block_repeats: u64,
    pub renamed_assertions: u64,
    pub trie_loaded_nodes: u64,
    pub optimisations: u64,
    pub fallbacks_passthrough: u64,
    pub route_switches: u64,
    pub lean_queries: u64,
    pub disk_hits: u64,
    pub redis_hits: u64,
    pub store_puts: u64,
    pub redis_untrusted_unsat: u64,
    pub redis_rejected: u64,
    pub disk_evicted: u64,
    /// The term store's nodes at the end, the most one store held, its collections.
    pub terms: u64,
    pub terms_peak: u64,
    pub term_collections: u64,
    /// Peak resident set of the whole process (VmHWM on Linux, else 0), in MB.
    pub peak_rss_mb: f64,
    /// `bench --rounds N` with N > 1: the wall time of every run, in round order (the
    /// summary itself is the median run's; its mismatches are those of all runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wall_ms_rounds: Vec<f64>,
    /// Portfolio: see `Stats::solver_disagreements`, `Stats::portfolio_races`, and each
    /// solver's counters (absent for one solver).
    pub solver_disagreements: u64,
    pub portfolio_races: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub solvers: Vec<SolverCounts>,
    /// The time of each check-sat of a replay (from the previous answer to this one), in
    /// ms: what the virtual best solver is computed from. Not serialised.
    #[serde(skip)]
    pub check_ms: Vec<f64>,
    /// Of each `check_ms`, the time waited for solvers (not serialised).
    #[serde(skip)]
    pub check_solver_ms: Vec<f64>,
}

impl Stats {
    pub fn new(strategy: &str) -> Self {
        Stats {
            strategy: strategy.to_string(),
            ..Default::default()
        }
    }
    pub fn note(&mut self, n: String) {
        if !self.notes.contains(&n) && self.notes.len() < 100 {
            self.notes.push(n);
        }
    }
    pub fn summary(&self, log: &str, expected_mismatches: u64, cross_mismatches: u64) -> Summary {
        Summary {
            strategy: self.strategy.clone(),
            log: log.to_string(),
            queries: self.queries,
            sat: self.sat,
            unsat: self.unsat,
            unknown: self.unknown,
            solver_checks: self.solver_checks,
            cache_hits: self.cache_hits,
            model_hits: self.model_hits,
            wall_ms: self.wall.as_secs_f64() * 1000.0,
            solver_ms: self.solver.as_secs_f64() * 1000.0,
            expected_mismatches,
            cross_mismatches,
            timeouts: self.timeouts,
            restarts: self.restarts,
            stack_bailouts: self.stack_bailouts,
            stack_rebuilds: self.stack_rebuilds,
            stack_detours: self.stack_detours,
            stack_races: self.stack_races,
            pushes: self.pushes,
            pops: self.pops,
            speculations: self.speculations,
            speculations_used: self.speculations_used,
            enumerated: self.enumerated,
            models_unread: self.models_unread,
            guessed: self.guessed,
            bounded: self.bounded,
            cores: self.cores,
            exact_hits: self.exact_hits,
            block_hints: self.block_hints,
            block_repeats: self.block_repeats,
            renamed_assertions: self.renamed_assertions,
            trie_loaded_nodes: self.trie_loaded_nodes,
            optimisations: self.optimisations,
            fallbacks_passthrough: self.fallbacks_passthrough,
            route_switches: self.route_switches,
            lean_queries: self.lean_queries,
            disk_hits: self.disk_hits,
            redis_hits: self.redis_hits,
            store_puts: self.store_puts,
            redis_untrusted_unsat: self.redis_untrusted_unsat,
            redis_rejected: self.redis_rejected,
            disk_evicted: self.disk_evicted,
            terms: self.terms,
            terms_peak: self.terms_peak,
            term_collections: self.term_collections,
            peak_rss_mb: (self.peak_rss_mb * 10.0).round() / 10.0,
            wall_ms_rounds: Vec::new(),
            solver_disagreements: self.solver_disagreements,
            portfolio_races: self.portfolio_races,
            solvers: self.portfolio.clone(),
            solver: String::new(),
            check_ms: Vec::new(),
            check_solver_ms: Vec::new(),
        }
    }
}
