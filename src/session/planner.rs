//! Per-query planning: how a check-sat gets its answer under each strategy, and where the
//! model of a sat answer lives afterwards (in the backend that solved it, or in a model
//! smtproxy evaluated itself). Invariants: a backend answer of `unknown` or a deadline is
//! answered `unknown` and nothing is stored; a model held in the backend is only asked for
//! while the backend generation that produced it is still running. With a portfolio
//! (`Config::portfolio`), the cache stage's misses go through `portfolio::PortfolioMiss`
//! around the strategy's own miss path; everything else stays with the first solver.

use super::backend::SolverHandle;
use super::cache_stage::{model_satisfies, BlockText, CachePlanner, Planned};
use super::client::Decl;
use super::config::Config;
use super::fresh::{fresh_check, get_value_text, FreshMiss};
use super::model_text::{filter_model, ModelName};
use super::own_model::OwnModel;
use super::portfolio::{Portfolio, PortfolioMiss};
use super::stack::{StackMirror, StackMiss, Via};
use super::stats::Stats;
use super::vocab::{model_of_values, split_values, Answer, ModelError, Query, Strategy};
use crate::driver::{DriverError, Response, SolverKind};
use crate::query::eval::Model;
use crate::smt2::printer::{backend_name, BackendNames, Names};
use crate::smt2::response::Dialect;
use crate::term::{TermId, TermStore};
use std::time::{Duration, Instant};

/// A sat whose model the cache stage left unread (`Planned::SatUnread`).
struct Unread {
    leaves: Vec<TermId>,
    query: Vec<TermId>,
}

/// Where the last sat answer's model is.
enum ModelAt {
    None,
    /// The main backend, in this generation.
    Main(u64),
    /// The auxiliary (fresh-context) backend of the stack strategy.
    Aux(u64),
    /// A model smtproxy validated itself.
    Own(OwnModel),
    /// A sat whose model is had only by solving the query again (`ModelError::Unread`):
    /// the cache stage did not read it and the backend that answered is not kept.
    Unread,
}

/// What the solver said of a command smtproxy's parser refused (`Planner::solver_verdict`).
#[derive(Debug)]
pub struct Verdict {
    /// Its answer.
    pub response: Response,
    /// Where the command started in the solver's input (line, 1-based column): error
    /// positions are counted from there.
    pub start: (usize, usize),
    /// Whether the solver ended its process on the command.
    pub ended: bool,
}

pub struct Planner {
    strategy: Strategy,
    /// Race slow incremental solves against a fresh context (two backends at once).
    race: bool,
    pub main: SolverHandle,
    aux: SolverHandle,
    /// The backend of fall-backs to passthrough (`lean_backend`).
    fallback: SolverHandle,
    stack: StackMirror,
    cached: Option<CachePlanner>,
    /// The other solvers of `--solver a,b,...` (modelled strategies only).
    portfolio: Option<Portfolio>,
    model_at: ModelAt,
    /// Read the model of every sat the cache stage gets from a backend, dear or not: set
    /// while the model of each answer is needed (`read_models`).
    read_models: bool,
    /// The last model is a backend's (`model_at`), of a query the cache stage answered
    /// without reading it (`Planned::SatUnread`): read whole and evaluated before any
    /// value is given (`read_unread`).
    unread: Option<Unread>,
    /// The solver's answers to set-logic for names outside the common ones.
    logic_replies: rustc_hash::FxHashMap<String, Response>,
}

impl Planner {
    /// Whether a second solver process may run beside the one answering (`--jobs` 2 or
    /// more).
    pub fn parallel(&self) -> bool {
        self.race
    }

    pub fn new(cfg: &Config) -> Result<Planner, crate::error::Error> {
        // The handles that run lean processes print models as the client's solver would.
        let lean_handle = || {
            let mut h = SolverHandle::new(cfg.solver.clone(), cfg.timeout);
            h.lean_smt2_models = cfg.client.smt2_model_format;
            h
        };
        Ok(Planner {
            strategy: cfg.strategy,
            race: cfg.jobs >= 2,
            main: lean_handle(),
            aux: SolverHandle::new(cfg.solver.clone(), cfg.timeout),
            fallback: lean_handle(),
            // Hybrid learns unsat cores (for its counterexample cache) from z3; cvc5 builds
            // cores from proofs, and yices gives them only for check-sat-assuming.
            stack: StackMirror::new(
                cfg.strategy == Strategy::StackCse,
                cfg.strategy == Strategy::Hybrid,
            )
            .with_cores(cfg.strategy == Strategy::Hybrid && cfg.solver.kind == SolverKind::Z3),
            // The cache stage decides small components itself and solves ahead of need
            // under hybrid only: `cache` keeps the design it measures.
            cached: match cfg.strategy {
                Strategy::Cache => Some(CachePlanner::new(cfg.cache.as_ref(), false)),
                Strategy::Hybrid => Some(CachePlanner::new(cfg.cache.as_ref(), true)),
                _ => None,
            },
            portfolio: match cfg.strategy {
                Strategy::Cache | Strategy::Hybrid if !cfg.portfolio.is_empty() => {
                    let mut specs = vec![cfg.solver.clone()];
                    specs.extend(cfg.portfolio.iter().cloned());
                    // Under hybrid every other solver keeps an incremental stack of its own.
                    let stacks = cfg.strategy == Strategy::Hybrid;
                    let p = Portfolio::new(&specs, cfg.jobs, cfg.timeout, stacks);
                    Some(p.with_first_answer_wins(cfg.first_answer_wins))
                }
                _ => None,
            },
            model_at: ModelAt::None,
            read_models: false,
            unread: None,
            logic_replies: Default::default(),
        })
    }

    /// The deadline each backend gives a check-sat (the client's `-t:` and the like).
    pub fn deadline(&self) -> Option<Duration> {
        self.main.timeout
    }

    /// Give every backend `d` as its deadline for the check-sats that follow.
    pub fn set_deadline(&mut self, d: Option<Duration>) {
        for h in [&mut self.main, &mut self.aux, &mut self.fallback] {
            h.timeout = d;
        }
        if let Some(p) = &mut self.portfolio {
            p.set_deadline(d);
        }
    }

    /// Time spent waiting on backends so far.
    pub fn busy(&self) -> std::time::Duration {
        self.main.busy
            + self.aux.busy
            + self.fallback.busy
            + self
                .portfolio
                .as_ref()
                .map_or_else(Default::default, |p| p.busy)
    }

    /// Queries, or parts of queries, answered by the result store's on-disk and Redis
    /// tiers: early in a session, what earlier sessions (or other processes) put there,
    /// since this session's own answers are found in its memory tier first.
    pub fn store_hits(&self) -> u64 {
        self.cached
            .as_ref()
            .and_then(|c| c.tier_stats())
            .map_or(0, |t| t.disk_hits + t.redis_hits)
    }

    /// Whether check-sats go through the cache stage (the cache and hybrid strategies).
    pub fn caches(&self) -> bool {
        self.cached.is_some()
    }

    /// The model of the last check-sat when smtproxy validated it itself.
    pub fn own_model(&self) -> Option<&Model> {
        match &self.model_at {
            ModelAt::Own(m) => Some(m.model()),
            _ => None,
        }
    }

    /// The last check-sat's model as a block's model text (`cache_stage::model_to_text`),
    /// when the cache stage has one for the model smtproxy holds.
    pub fn model_block_text(&self) -> Option<&BlockText> {
        match &self.model_at {
            ModelAt::Own(_) => self.cached.as_ref()?.block_text(),
            _ => None,
        }
    }

    /// Take `m`, a model smtproxy validated for the client's current query, as the last
    /// check-sat's (None: that check-sat has no model).
    pub fn hold(&mut self, m: Option<Model>) {
        self.model_at = m.map_or(ModelAt::None, |m| ModelAt::Own(OwnModel::new(m)));
        self.unread = None;
        if let Some(c) = self.cached.as_mut() {
            // The text of the cache stage's last answer is not this model's.
            c.forget_hint();
        }
    }

    /// Whether the checks that follow must leave a model readable after every sat (the
    /// client asks for one after each, an objective search reads them, or a model left
    /// unread is being asked for); otherwise the cache stage may leave a model unread
    /// where reading it costs several solves.
    pub fn read_models(&mut self, on: bool) {
        self.read_models = on;
    }

    /// The client reset: nothing in the backends is lost (the stack strategy keeps its
    /// prefix), but no model is available.
    pub fn reset(&mut self) {
        self.model_at = ModelAt::None;
    }
    /// Options changed: incremental state must be rebuilt.
    pub fn invalidate(&mut self) {
        self.stack.abandon(&mut self.main);
        self.model_at = ModelAt::None;
    }

    pub fn check(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError> {
        self.model_at = ModelAt::None;
        self.unread = None;
        self.stack.take_probe(&mut self.aux);
        let before = self.busy();
        let rm = self.read_models;
        if let Some(c) = self.cached.as_mut() {
            // Hybrid's misses go to the incremental stack, the cache strategy's to a
            // fresh context; with a portfolio, through it.
            // `last`: the backend of the miss path's last solve, where it is one of this
            // planner's own (not a portfolio member's): main (the stack's, or the cache
            // strategy's fresh contexts) or aux (a fresh context that won a race).
            let (planned, last) = if self.strategy == Strategy::Hybrid {
                let mut miss = StackMiss {
                    stack: &mut self.stack,
                    main: &mut self.main,
                    aux: &mut self.aux,
                    race: self.race,
                    last: Via::Incremental,
                };
                match self.portfolio.as_mut() {
                    Some(p) => (
                        c.check(&mut PortfolioMiss::new(miss, p), store, q, rm, stats)?,
                        None,
                    ),
                    None => (c.check(&mut miss, store, q, rm, stats)?, Some(miss.last)),
                }
            } else {
                let miss = FreshMiss {
                    backend: &mut self.main,
                };
                match self.portfolio.as_mut() {
                    Some(p) => (
                        c.check(&mut PortfolioMiss::new(miss, p), store, q, rm, stats)?,
                        None,
                    ),
                    None => (
                        c.check(&mut { miss }, store, q, rm, stats)?,
                        Some(Via::Incremental),
                    ),
                }
            };
            match planned {
                Planned::Own(a, m) => {
                    stats.solver += self.busy() - before;
                    if let Some(m) = m {
                        self.model_at = ModelAt::Own(OwnModel::new(m));
                    }
                    return Ok(a);
                }
                Planned::SatUnread { leaves, query } => {
                    // The query's one component was the miss path's last solve: its model
                    // is the query's, still in that backend (a portfolio member's is not
                    // kept: the query is solved again for it).
                    stats.solver += self.busy() - before;
                    self.model_at = match last {
                        Some(Via::Incremental) => ModelAt::Main(self.main.generation),
                        Some(Via::Fresh) => ModelAt::Aux(self.aux.generation),
                        None => ModelAt::Unread,
                    };
                    self.unread = Some(Unread { leaves, query });
                    return Ok(Answer::Sat);
                }
                Planned::NotModelled => {}
            }
        }
        let r = match self.strategy {
            Strategy::Stack | Strategy::StackCse | Strategy::Hybrid => {
                let (a, via) =
                    self.stack
                        .check(&mut self.main, &mut self.aux, self.race, store, q, stats)?;
                // An unsat leaves no model to keep (and a fresh context's process is free
                // again, for `solver_verdict`).
                self.model_at = match via {
                    _ if a == Answer::Unsat => ModelAt::None,
                    Via::Incremental => ModelAt::Main(self.main.generation),
                    Via::Fresh => ModelAt::Aux(self.aux.generation),
                };
                Ok(a)
            }
            _ => {
                let a = fresh_check(&mut self.main, store, q, stats)?;
                self.model_at = ModelAt::Main(self.main.generation);
                Ok(a)
            }
        };
        stats.solver += self.busy() - before;
        r
    }

    /// True when the last model is held by the incremental stack backend (whose names
    /// differ from plain backend names for renamed declarations and CSE macros).
    fn model_in_stack(&self) -> bool {
        matches!(self.model_at, ModelAt::Main(_))
            && matches!(
                self.strategy,
                Strategy::Stack | Strategy::StackCse | Strategy::Hybrid
            )
    }

    /// The backend holding the last model and the generation it must still be in.
    fn model_backend(&mut self) -> Result<(&mut SolverHandle, u64), ModelError> {
        match self.model_at {
            ModelAt::Main(g) => Ok((&mut self.main, g)),
            ModelAt::Aux(g) => Ok((&mut self.aux, g)),
            ModelAt::Unread => Err(ModelError::Unread),
            _ => Err(ModelError::Other("model is not available".into())),
        }
    }

    /// The model of a sat the cache stage left unread (`unread`), read now: the values of
    /// the query's constants from the backend that answered, evaluated on the query, and
    /// kept as smtproxy's own model from here on (so every value and model given for this
    /// check-sat comes from it), and by the cache stage as a backend's model is. The
    /// backend knows only those constants (and may hold a name the client declared
    /// otherwise under another declaration), so nothing else is asked of it.
    /// `ModelError::Unread` when the model cannot be had so (a portfolio member answered;
    /// the values do not read back or do not satisfy the query): the query is then to be
    /// solved again.
    fn read_unread(&mut self, store: &mut TermStore) -> Result<(), ModelError> {
        let Some(u) = self.unread.take() else {
            return Ok(());
        };
        let unread = |p: &mut Planner| {
            p.model_at = ModelAt::Unread;
            ModelError::Unread
        };
        if matches!(self.model_at, ModelAt::Unread) {
            return Err(ModelError::Unread);
        }
        let names: &dyn Names = if self.model_in_stack() {
            self.stack.names()
        } else {
            &BackendNames
        };
        let text = match self.model_cmd(&get_value_text(store, &u.leaves, names)) {
            Ok(t) => t,
            Err(ModelError::Other(_)) => return Err(unread(self)),
            Err(e) => return Err(e),
        };
        let Ok(values) = split_values(&text, u.leaves.len()) else {
            return Err(unread(self));
        };
        let Some(m) = model_of_values(store, &u.leaves, &values) else {
            return Err(unread(self));
        };
        if !model_satisfies(store, &m, &u.query) {
            return Err(unread(self));
        }
        if let Some(c) = self.cached.as_mut() {
            c.model_read(store, &m);
        }
        self.model_at = ModelAt::Own(OwnModel::new(m));
        Ok(())
    }

    /// A command about the last model, to the very process that produced it.
    fn model_cmd(&mut self, text: &str) -> Result<String, ModelError> {
        let on_main = matches!(self.model_at, ModelAt::Main(_));
        let (h, g) = self.model_backend()?;
        let t0 = Instant::now();
        let r = h.cmd_in_generation(g, text);
        if matches!(self.strategy, Strategy::Stack | Strategy::StackCse) {
            // Reading a model is part of what a query costs each way.
            self.stack.add_model_cost(on_main, t0.elapsed());
        }
        match r {
            Ok(Response::Other(text)) => Ok(text),
            Ok(Response::Error(e)) => Err(ModelError::Other(e)),
            Ok(r) => Err(ModelError::Other(format!(
                "unexpected solver answer {}",
                r.to_text()
            ))),
            Err(
                e @ (DriverError::Died { .. } | DriverError::Io(_) | DriverError::Timeout { .. }),
            ) => {
                self.model_at = ModelAt::None;
                Err(ModelError::Lost(e.to_string()))
            }
            Err(e) => Err(ModelError::Other(format!("solver failed: {e}"))),
        }
    }

    /// Values of `terms` in the last model, as text (as `dialect`'s solver prints them when
    /// smtproxy prints them itself).
    pub fn values(
        &mut self,
        store: &mut TermStore,
        terms: &[TermId],
        dialect: Dialect,
    ) -> Result<Vec<String>, ModelError> {
        self.read_unread(store)?;
        if let ModelAt::Own(m) = &mut self.model_at {
            return m.values(store, terms, dialect).map_err(ModelError::Other);
        }
        let names: &dyn Names = if self.model_in_stack() {
            self.stack.names()
        } else {
            &BackendNames
        };
        let text = self.model_cmd(&get_value_text(store, terms, names))?;
        split_values(&text, terms.len()).map_err(ModelError::Other)
    }

    /// The last model as get-model text for the client.
    pub fn model(
        &mut self,
        store: &mut TermStore,
        decls: &[Decl],
        dialect: Dialect,
    ) -> Result<String, ModelError> {
        self.read_unread(store)?;
        if let ModelAt::Own(m) = &mut self.model_at {
            return m
                .model_text(store, decls, dialect)
                .map_err(ModelError::Other);
        }
        let stack_names = self.model_in_stack();
        let mut names: rustc_hash::FxHashMap<String, ModelName> = rustc_hash::FxHashMap::default();
        for (index, d) in decls.iter().enumerate() {
            let backend = if stack_names {
                self.stack.names().backend_of(d)
            } else {
                backend_name(&d.name).into_owned()
            };
            let m = ModelName {
                client: d.name.clone(),
                index,
                function: !d.params.is_empty(),
            };
            names.insert(backend, m);
        }
        let text = self.model_cmd("(get-model)")?;
        Ok(filter_model(&text, &names, dialect))
    }

    /// What the solver answers to the client's `set-logic` command `text` for `logic`:
    /// `Success` for the common SMT-LIB logics every supported solver knows; any other
    /// name is asked of the auxiliary backend once, after a `(reset)` (it serves only
    /// fresh contexts, which begin with one), and the answer kept. A backend that cannot be
    /// asked counts as accepting it.
    pub fn logic_reply(&mut self, text: &str, logic: &str) -> Response {
        const COMMON: &[&str] = &[
            "QF_AX",
            "QF_BV",
            "QF_ABV",
            "QF_AUFBV",
            "QF_UF",
            "QF_UFBV",
            "QF_IDL",
            "QF_RDL",
            "QF_LIA",
            "QF_LRA",
            "QF_NIA",
            "QF_NRA",
            "QF_UFIDL",
            "QF_UFLIA",
            "QF_UFLRA",
            "QF_ALIA",
            "QF_AUFLIA",
        ];
        if COMMON.contains(&logic) {
            return Response::Success;
        }
        if let Some(r) = self.logic_replies.get(logic) {
            return r.clone();
        }
        let r = match self.aux.cmd("(reset)").and_then(|_| self.aux.cmd(text)) {
            Ok(r @ (Response::Unsupported | Response::Error(_))) => r,
            _ => Response::Success,
        };
        self.logic_replies.insert(logic.to_string(), r.clone());
        r
    }

    /// What the solver says of `text`, a command smtproxy's parser refused, in the
    /// client's context: asked of the auxiliary backend after a `(reset)` and `log`, the
    /// client's commands without its assertions (`ClientState::declarations_log`), and a
    /// `(check-sat)` first when `needs_model` (a get-value's terms are judged before its
    /// model is asked for, and the assertions left out make that check trivial). `None`
    /// when it cannot be asked: the context itself is refused, the backend fails before
    /// the command, or the last model is held there (the reset would lose it).
    pub fn solver_verdict(
        &mut self,
        log: &[String],
        text: &str,
        needs_model: bool,
    ) -> Option<Verdict> {
        if matches!(self.model_at, ModelAt::Aux(_)) {
            return None;
        }
        let mut cmds: Vec<String> = Vec::with_capacity(log.len() + 2);
        cmds.push("(reset)".into());
        if needs_model {
            // A reset puts the options back (cvc5 then refuses any get-value).
            cmds.push("(set-option :produce-models true)".into());
        }
        cmds.extend_from_slice(log);
        self.aux.batch(&cmds).ok()?.ok()?;
        if needs_model && !matches!(self.aux.cmd("(check-sat)"), Ok(Response::Sat)) {
            return None;
        }
        let start = self.aux.position()?;
        let generation = self.aux.generation;
        let response = self.aux.cmd(text).ok()?;
        // A solver that ends its session on an error (cvc5 after a parse error, yices
        // after a syntax error) has exited or is exiting: the next command to that same
        // process finds it gone.
        let ended = matches!(response, Response::Error(_))
            && matches!(
                self.aux.cmd_in_generation(generation, "(get-info :name)"),
                Err(DriverError::Died { .. })
            );
        Some(Verdict {
            response,
            start,
            ended,
        })
    }

    /// The backend the lean passthrough runs on: the main one for passthrough as the
    /// strategy or by cost; for a fall-back (`fallback`), one of its own, so the main
    /// backend (the stack's prefix, the options it was given) outlives the fall-back, kept
    /// running between fall-backs (the next one resets it rather than start a process:
    /// `lean::replay::rebuild`).
    /// What the engine has waited for the processes of its main and race backends to
    /// start (`SolverHandle::start_wait`); the fall-back backend's time is set apart whole.
    pub fn start_waits(&self) -> Duration {
        self.main.start_wait + self.aux.start_wait
    }

    pub fn lean_backend(&mut self, fallback: bool) -> &mut SolverHandle {
        if fallback {
            &mut self.fallback
        } else {
            &mut self.main
        }
    }

    /// A client's `set-option` asked of the main backend. `fresh`: after a `(reset)`, for
    /// an option the solver takes only before it is initialized (cvc5 takes most options
    /// only before its first assertion, and the backend's state is smtproxy's, not the
    /// client's); the stack and a model held there are given up for it.
    pub fn ask_option(
        &mut self,
        text: &str,
        fresh: bool,
        stats: &mut Stats,
    ) -> Result<Response, DriverError> {
        self.stack.quiesce(&mut self.main, stats);
        if fresh {
            self.invalidate();
            self.main.cmd("(reset)")?;
        }
        self.main.cmd(text)
    }

    /// The main backend for a command of the client's own (set-option, get-info,
    /// get-option): nothing of the stack's is still running in it.
    pub fn main_for_client(&mut self, stats: &mut Stats) -> &mut SolverHandle {
        self.stack.quiesce(&mut self.main, stats);
        &mut self.main
    }

    /// The term store is being replaced (`Engine::collect_terms`): drop everything that
    /// holds one of its ids (the cache stage's memos and models, the stack's mirror and the
    /// backend it describes, the last model).
    pub fn forget_terms(&mut self) {
        if let Some(c) = self.cached.as_mut() {
            c.forget_terms();
        }
        self.stack.forget_terms(&mut self.main);
        if let Some(p) = self.portfolio.as_mut() {
            p.forget_terms();
        }
        self.model_at = ModelAt::None;
    }

    /// Drop what this session remembers of earlier queries (not the result store).
    pub fn forget_session(&mut self) {
        if let Some(c) = self.cached.as_mut() {
            c.forget_session();
        }
    }

    /// The end of the session: the result store's counters into `stats`, the store
    /// closed (its writes done), every backend stopped.
    pub fn shutdown(&mut self, stats: &mut Stats) {
        if let Some(c) = self.cached.as_mut() {
            c.flush();
            if let Some(t) = c.tier_stats() {
                stats.disk_hits = t.disk_hits;
                stats.redis_hits = t.redis_hits;
                stats.store_puts = t.puts;
                stats.redis_untrusted_unsat = t.redis_untrusted_unsat;
                stats.redis_rejected = t.redis_rejected;
                stats.disk_evicted = t.disk_evicted;
            }
            c.close_store();
        }
        stats.restarts = self.main.restarts + self.aux.restarts + self.fallback.restarts;
        if let Some(p) = self.portfolio.as_mut() {
            stats.restarts += p.restarts();
            stats.portfolio = p.counts();
            p.shutdown();
        }
        self.main.kill();
        self.main.drop_spare();
        self.aux.kill();
        self.fallback.kill();
    }
}
