//! Per-query planning: how a check-sat gets its answer under each strategy, and where the
//! model of a sat answer lives afterwards (in the backend that solved it, or in a model
//! smtproxy evaluated itself). Invariants: a backend answer of `unknown` or a deadline is
//! answered `unknown` and nothing is stored; a model held in the backend is only asked for
//! while the backend generation that produced it is still running.

use super::backend::SolverHandle;
use super::cached::{CachePlanner, MissPolicy, OwnModel, Planned};
use super::client::Decl;
use super::stack::{StackMirror, Via};
use super::Config;
use crate::driver::{DriverError, Response, SolverKind};
use crate::smt2::lexer::Sexps;
use crate::smt2::printer::{backend_name, print_term, quote_symbol, BackendNames, Names};
use crate::smt2::response::Dialect;
use crate::term::{TermId, TermStore};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Passthrough,
    Fresh,
    Stack,
    StackCse,
    Cache,
    Hybrid,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Passthrough => "passthrough",
            Strategy::Fresh => "fresh",
            Strategy::Stack => "stack",
            Strategy::StackCse => "stack-cse",
            Strategy::Cache => "cache",
            Strategy::Hybrid => "hybrid",
        }
    }
    pub fn parse(s: &str) -> Option<Strategy> {
        Self::all().into_iter().find(|x| x.name() == s)
    }
    pub fn all() -> Vec<Strategy> {
        vec![
            Strategy::Passthrough,
            Strategy::Fresh,
            Strategy::Stack,
            Strategy::StackCse,
            Strategy::Cache,
            Strategy::Hybrid,
        ]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Answer {
    Sat,
    Unsat,
    Unknown,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Sat => "sat",
            Answer::Unsat => "unsat",
            Answer::Unknown => "unknown",
        }
    }
    pub fn parse(s: &str) -> Option<Answer> {
        match s.trim() {
            "sat" => Some(Answer::Sat),
            "unsat" => Some(Answer::Unsat),
            "unknown" => Some(Answer::Unknown),
            _ => None,
        }
    }
}

/// Everything a strategy needs to know about one check-sat.
pub struct Query<'a> {
    pub assertions: &'a [TermId],
    /// The client's base-level assertions while it has scopes of its own pushed (else
    /// empty): what it keeps below its pushes, so the stack keeps it below its own.
    pub base: &'a [TermId],
    pub assumptions: &'a [TermId],
    pub decls: &'a [Decl],
    /// Raw definitions (declare-sort, datatypes, define-fun-rec) in order.
    pub defs: &'a [String],
    /// set-logic and answer-relevant set-option commands, raw.
    pub preamble: &'a [String],
    pub logic: Option<&'a str>,
    /// The client's signature (what each name means).
    pub sig: &'a crate::term::signature::Signature,
}

/// Why the last model could not be read.
#[derive(Debug)]
pub enum ModelError {
    /// The backend process that held it is gone (crashed, killed, deadline): solving the
    /// same query again brings a model back.
    Lost(String),
    /// Anything else (no model, the solver rejected the request, ...).
    Other(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Lost(e) => write!(f, "model lost with the solver: {e}"),
            ModelError::Other(e) => f.write_str(e),
        }
    }
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
}

pub struct Planner {
    strategy: Strategy,
    /// Race slow incremental solves against a fresh context (two backends at once).
    race: bool,
    pub main: SolverHandle,
    aux: SolverHandle,
    stack: StackMirror,
    cached: Option<CachePlanner>,
    model_at: ModelAt,
    /// The solver's answers to set-logic for names outside the common ones.
    logic_replies: rustc_hash::FxHashMap<String, Response>,
}

impl Planner {
    pub fn new(cfg: &Config) -> Result<Planner, crate::error::Error> {
        Ok(Planner {
            strategy: cfg.strategy,
            race: cfg.jobs >= 2,
            main: SolverHandle::new(cfg.solver.clone(), cfg.timeout),
            aux: SolverHandle::new(cfg.solver.clone(), cfg.timeout),
            // Hybrid learns unsat cores (for its counterexample cache) from z3; cvc5 builds
            // cores from proofs, and yices gives them only for check-sat-assuming.
            stack: StackMirror::new(
                cfg.strategy == Strategy::StackCse,
                cfg.strategy == Strategy::Hybrid,
            )
            .with_cores(cfg.strategy == Strategy::Hybrid && cfg.solver.kind == SolverKind::Z3),
            cached: match cfg.strategy {
                Strategy::Cache => Some(CachePlanner::new(cfg.cache.as_ref(), MissPolicy::Fresh)),
                Strategy::Hybrid => Some(CachePlanner::new(
                    cfg.cache.as_ref(),
                    MissPolicy::Stack {
                        race: cfg.jobs >= 2,
                    },
                )),
                _ => None,
            },
            model_at: ModelAt::None,
            logic_replies: Default::default(),
        })
    }

    /// Time spent waiting on backends so far.
    pub fn busy(&self) -> std::time::Duration {
        self.main.busy + self.aux.busy
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
        stats: &mut super::Stats,
    ) -> Result<Answer, DriverError> {
        self.model_at = ModelAt::None;
        self.stack.take_probe(&mut self.aux);
        let before = self.main.busy + self.aux.busy;
        if let Some(c) = self.cached.as_mut() {
            match c.check(
                &mut self.stack,
                &mut self.main,
                &mut self.aux,
                store,
                q,
                stats,
            )? {
                Planned::Own(a, m) => {
                    stats.solver += (self.main.busy + self.aux.busy) - before;
                    if let Some(m) = m {
                        self.model_at = ModelAt::Own(OwnModel::new(m));
                    }
                    return Ok(a);
                }
                Planned::NotModelled => {}
            }
        }
        let use_stack = matches!(
            self.strategy,
            Strategy::Stack | Strategy::StackCse | Strategy::Hybrid
        );
        let r = match self.strategy {
            _ if use_stack && q.defs.is_empty() => {
                let (a, via) =
                    self.stack
                        .check(&mut self.main, &mut self.aux, self.race, store, q, stats)?;
                self.model_at = match via {
                    Via::Incremental => ModelAt::Main(self.main.generation),
                    Via::Fresh => ModelAt::Aux(self.aux.generation),
                };
                Ok(a)
            }
            _ => {
                if use_stack {
                    // `main` holds the stack's state; this query does not fit the stack.
                    self.stack.abandon(&mut self.main);
                }
                let a = fresh_check(&mut self.main, store, q, stats)?;
                self.model_at = ModelAt::Main(self.main.generation);
                Ok(a)
            }
        };
        stats.solver += (self.main.busy + self.aux.busy) - before;
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
            _ => Err(ModelError::Other("model is not available".into())),
        }
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
        if let ModelAt::Own(m) = &mut self.model_at {
            return m.values(store, terms, dialect).map_err(ModelError::Other);
        }
        let names: &dyn Names = if self.model_in_stack() {
            self.stack.names()
        } else {
            &BackendNames
        };
        let mut cmd = String::from("(get-value (");
        for (i, &t) in terms.iter().enumerate() {
            if i > 0 {
                cmd.push(' ');
            }
            cmd.push_str(&print_term(store, t, names));
        }
        cmd.push_str("))");
        let text = self.model_cmd(&cmd)?;
        split_values(&text, terms.len()).map_err(ModelError::Other)
    }

    /// The last model as get-model text for the client.
    pub fn model(
        &mut self,
        store: &mut TermStore,
        decls: &[Decl],
        dialect: Dialect,
    ) -> Result<String, ModelError> {
        if let ModelAt::Own(m) = &mut self.model_at {
            return m
                .model_text(store, decls, dialect)
                .map_err(ModelError::Other);
        }
        let stack_names = self.model_in_stack();
        let mut names: rustc_hash::FxHashMap<String, super::ModelName> =
            rustc_hash::FxHashMap::default();
        for (index, d) in decls.iter().enumerate() {
            let backend = if stack_names {
                self.stack.names().backend_of(d)
            } else {
                backend_name(&d.name).into_owned()
            };
            let m = super::ModelName {
                client: d.name.clone(),
                index,
                function: !d.params.is_empty(),
            };
            names.insert(backend, m);
        }
        let text = self.model_cmd("(get-model)")?;
        Ok(super::filter_model(&text, &names, dialect))
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

    /// Whether the solver takes `text`, a command smtproxy's parser refused as ill-sorted,
    /// in the client's context: asked of the auxiliary backend after a `(reset)` and `log`,
    /// the client's commands without its assertions (`ClientState::declarations_log`).
    /// `None` when it cannot be asked: the context itself is refused, the backend fails,
    /// or the last model is held there (the reset would lose it).
    pub fn solver_accepts(&mut self, log: &[String], text: &str) -> Option<bool> {
        if matches!(self.model_at, ModelAt::Aux(_)) {
            return None;
        }
        let mut cmds: Vec<String> = Vec::with_capacity(log.len() + 1);
        cmds.push("(reset)".into());
        cmds.extend_from_slice(log);
        match self.aux.batch(&cmds) {
            Ok(Ok(())) => {}
            _ => return None,
        }
        match self.aux.cmd(text) {
            Ok(Response::Success) => Some(true),
            Ok(Response::Error(_)) => Some(false),
            _ => None,
        }
    }

    /// The main backend for a command of the client's own (set-option, get-info,
    /// get-option): nothing of the stack's is still running in it.
    pub fn main_for_client(&mut self, stats: &mut super::Stats) -> &mut SolverHandle {
        self.stack.quiesce(&mut self.main, stats);
        &mut self.main
    }

    /// Drop what this session remembers of earlier queries (not the result store).
    pub fn forget_session(&mut self) {
        if let Some(c) = self.cached.as_mut() {
            c.forget_session();
        }
    }

    pub fn shutdown(&mut self, stats: &mut super::Stats) {
        if let Some(c) = self.cached.as_mut() {
            c.flush();
            if let Some(t) = c.tier_stats() {
                stats.disk_hits = t.disk_hits;
                stats.redis_hits = t.redis_hits;
                stats.store_puts = t.puts;
            }
        }
        stats.restarts = self.main.restarts + self.aux.restarts;
        self.main.kill();
        self.aux.kill();
    }
}

/// The value texts of a get-value answer `((t1 v1) (t2 v2) ...)`.
pub fn split_values(text: &str, n: usize) -> Result<Vec<String>, String> {
    let sx = Sexps::parse(text).map_err(|e| format!("cannot read solver values: {}", e.msg))?;
    let root = *sx.roots.first().ok_or("empty get-value answer")?;
    let pairs = sx.list(root).ok_or("malformed get-value answer")?;
    if pairs.len() != n {
        return Err(format!(
            "solver gave {} values for {} terms",
            pairs.len(),
            n
        ));
    }
    pairs
        .iter()
        .map(|&p| match sx.list(p) {
            Some([_, v]) => Ok(sx.source(*v).to_string()),
            _ => Err("malformed get-value pair".to_string()),
        })
        .collect()
}

/// `(declare-fun name (params) ret)` for the backend.
pub fn declare_text(store: &TermStore, d: &Decl, name: &str) -> String {
    let mut s = format!("(declare-fun {} (", quote_symbol(name));
    for (i, p) in d.params.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        store.sorts.print(*p, &mut s);
    }
    s.push_str(") ");
    store.sorts.print(d.ret, &mut s);
    s.push(')');
    s
}

/// Solve the query in a clean context: `(reset)`, options, logic, definitions,
/// declarations, assertions, check. A solver that dies is restarted once.
pub fn fresh_check(
    h: &mut SolverHandle,
    store: &TermStore,
    q: &Query,
    stats: &mut super::Stats,
) -> Result<Answer, DriverError> {
    let (cmds, check) = fresh_script(store, q);

    for attempt in 0..2 {
        match h.batch(&cmds) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                stats.note(format!("backend rejected the query: {e}"));
                return Ok(Answer::Unknown);
            }
            Err(DriverError::Timeout { .. }) => {
                stats.timeouts += 1;
                return Ok(Answer::Unknown);
            }
            Err(DriverError::Died { .. } | DriverError::Io(_)) if attempt == 0 => continue,
            Err(e) => return Err(e),
        }
        stats.solver_checks += 1;
        match h.check(&check) {
            Ok(r) => return Ok(response_answer(&r)),
            Err(DriverError::Timeout { .. }) => {
                stats.timeouts += 1;
                return Ok(Answer::Unknown);
            }
            Err(DriverError::Died { .. } | DriverError::Io(_)) if attempt == 0 => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(Answer::Unknown)
}

/// The commands that pose `q` in a fresh context (from `(reset)` on), and its check.
pub fn fresh_script(store: &TermStore, q: &Query) -> (Vec<String>, String) {
    let mut cmds: Vec<String> = Vec::with_capacity(q.decls.len() + q.assertions.len() + 4);
    cmds.push("(reset)".into());
    cmds.push("(set-option :produce-models true)".into());
    cmds.extend(q.preamble.iter().cloned());
    cmds.extend(q.defs.iter().cloned());
    for d in q.decls {
        cmds.push(declare_text(store, d, &backend_name(&d.name)));
    }
    for &a in q.assertions {
        let mut s = String::from("(assert ");
        s.push_str(&print_term(store, a, &BackendNames));
        s.push(')');
        cmds.push(s);
    }
    (cmds, check_text(store, q.assumptions, &BackendNames))
}

/// `(check-sat)`, or `(check-sat-assuming (...))` with the assumptions in backend names.
pub fn check_text(store: &TermStore, assumptions: &[TermId], names: &dyn Names) -> String {
    if assumptions.is_empty() {
        return "(check-sat)".into();
    }
    let mut s = String::from("(check-sat-assuming (");
    for (i, &a) in assumptions.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&print_term(store, a, names));
    }
    s.push_str("))");
    s
}

pub fn response_answer(r: &Response) -> Answer {
    match r {
        Response::Sat => Answer::Sat,
        Response::Unsat => Answer::Unsat,
        _ => Answer::Unknown,
    }
}
