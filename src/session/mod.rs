//! The session engine: reads the client's commands one at a time, keeps the client's view
//! (declarations, assertion frames, options, the last check-sat result) and answers each
//! command exactly as the replaced solver would, deciding per check-sat how to get the
//! answer (see `planner`).
//!
//! Invariants:
//! * Every command gets exactly the answer the client expects: `success` only under
//!   `:print-success`, `(error "...")` for bad input after which the session goes on.
//!   Replies the engine words itself where the solver's state is not the client's
//!   (get-option of options set on the backends for smtproxy's own use, `:reason-unknown`,
//!   errors raised while running a parsed command) follow the client's view, in z3's
//!   words and positions for the z3 dialect; options persist across `(reset)` as z3 keeps
//!   them.
//! * A `sat` that did not come from the backend for this very query comes with a model
//!   that was evaluated to true on every active assertion (`planner` enforces it).
//! * Commands the engine cannot interpret (unsupported theories, solver extensions, unsat
//!   cores and proofs) switch the session to passthrough: the client's state is replayed
//!   into one backend and from then on every command is forwarded verbatim. Passthrough
//!   (the strategy or the switch) always runs in `lean` mode: the solver's output goes to
//!   the client byte for byte, answers pipelined while the client has more commands ready.
//! * After a solver crash or deadline the backend is restarted and rebuilt; the client
//!   sees `unknown` for a check-sat that ran out of time, never a wrong answer.

pub mod arena;
pub mod backend;
pub mod cache_stage;
pub mod client;
pub mod config;
pub mod fresh;
pub mod governor;
mod lean;
pub mod miss;
pub mod model_text;
pub mod objective;
pub mod own_model;
pub mod planner;
pub mod portfolio;
mod position;
mod recheck;
mod repeat;
mod set_option;
pub mod stack;
pub mod stats;
pub mod vocab;

/// The options a warmed lean z3 may be given (see `lean::replay::WARM_OPTIONS`): the
/// tests check z3's answers with each against a z3 that was not warmed.
pub use lean::replay::WARM_OPTIONS as LEAN_WARM_OPTIONS;

use crate::driver::{DriverError, Response, SolverKind, SolverSpec};
use crate::smt2::alpha::Block;
use crate::smt2::command::Command;
use crate::smt2::lex::command_parts;
use crate::smt2::lexer::unescape_string;
use crate::smt2::logic::LogicCheck;
use crate::smt2::memo::CommandMemo;
use crate::smt2::parser::{parse_command, ErrorKind};
use crate::smt2::reader::Frame;
use crate::smt2::response::{self, Dialect};
use crate::term::signature::{ArityRule, Signature};
use crate::term::{TermId, TermStore};
pub use config::{ClientFlags, Config, DEFAULT_JOBS};

use backend::{DriverMode, SolverHandle};
use client::{ClientState, Decl};
use lean::leave::{self, unmodelled_option};
use lean::{Passthrough, Tracked, Unmodelled};
use planner::Planner;
use position::{
    argument_offset, argument_position, position_at, run_error_position, token_end, z3_position,
};
pub use stats::Stats;
use std::io::Write;
use std::time::{Duration, Instant};
use vocab::ModelError;
pub use vocab::{Answer, Outcome, Strategy};

/// `:produce-models` before the client sets it: z3 produces models unless told not to,
/// cvc5 and yices only when told to (a command-line flag may say otherwise). cvc5 and
/// yices return to this at `(reset)`.
fn default_produce_models(dialect: Dialect, flags: &ClientFlags) -> bool {
    flags.produce_models.unwrap_or(dialect == Dialect::Z3)
}

/// Who answers the client's commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// smtproxy: every command is parsed into the client's view and each check-sat is
    /// planned (the modelled strategies).
    Modelled,
    /// One lean backend, every command as the client wrote it (see `lean`): the
    /// passthrough strategy, or a flag smtproxy does not model. Nothing ends it.
    Passthrough,
    /// Passthrough after a command smtproxy does not model; a `(reset)`, or a `(pop)` of
    /// every level that holds what smtproxy did not model, ends it when nothing unmodelled
    /// is left behind (`lean::leave`).
    FallBack,
    /// Passthrough because it has been the cheaper route (`governor`); the governor may
    /// end it at a `(reset)`.
    ByCost,
}

/// Where the model of the last sat answer lives.
enum Last {
    None,
    Sat,
    Unsat,
    Unknown,
}

/// The client's last check-sat, answered sat: what a fall-back runs again so that the
/// client can still read its model (`recheck`).
#[derive(Clone)]
struct SatCheck {
    /// The command's text.
    text: String,
    /// Its number among the session's check-sats on any route (`Stats::queries`): a later
    /// check-sat, answered by whichever route, makes it stale.
    query: u64,
    /// The client has read (part of) its model.
    read: bool,
}

/// A check the solver answers this fast on average is cheap: learning it again in a new
/// solver costs little (a lean probe's window of 64 such checks risks about 0.1 s).
const CHEAP_CHECK: Duration = Duration::from_millis(2);

pub struct Engine {
    pub store: TermStore,
    sig: Signature,
    memo: CommandMemo,
    client: ClientState,
    dialect: Dialect,
    /// What the client's logic lets a strict backend (cvc5, yices) take; `None` when
    /// nothing is refused (z3, cvc5 before a set-logic, a logic not judged).
    logic_check: Option<LogicCheck>,
    planner: Planner,
    last: Last,
    /// The assumptions of the last check-sat-assuming (empty after a plain check-sat),
    /// to solve the same query again if the model is lost with its solver.
    last_assumptions: Vec<TermId>,
    /// Who answers the client's commands.
    mode: Mode,
    /// Chooses between the modelled engine and the lean passthrough by measured cost
    /// (the default strategy only, see `set_governed`).
    governor: Option<governor::Governor>,
    /// The client has pushed a level on the modelled route this session (see
    /// `keep_spare`).
    pushed: bool,
    /// Since when the engine has been at work without a pause: from the first command
    /// after a wait for input to the next wait (`idle`) or the end (`finish`). The wall
    /// time is the sum of these spans; reading the clock at pauses only, not twice a
    /// command, keeps the clock out of a session of a million commands.
    busy_since: Option<Instant>,
    /// The wall time and check-sats spent in fall-backs to passthrough so far, and where
    /// the current one began: left out of the governor's windows, since a query the
    /// modelled engine cannot model goes to the solver on either route.
    aside: (std::time::Duration, u64, u64),
    aside_from: Option<(std::time::Duration, u64, u64)>,
    /// Wall time, solver time and solver checks when the session last turned to the
    /// modelled route: what the solver's share of its time is measured from
    /// (`govern_modelled`).
    modelled_from: (Duration, Duration, u64),
    /// Bytes of client commands pushed so far (the governor's measure of work).
    input_bytes: u64,
    pub stats: Stats,
    /// The client's command-line flags.
    flags: ClientFlags,
    /// Per option keyword, the value the backend last accepted (see `interpret`).
    options_taken: rustc_hash::FxHashMap<String, String>,
    /// The passthrough's state: its commands in flight, its backend's (see `lean`). While
    /// one of its methods runs, this holds an empty one (`with_lean`).
    lean: Passthrough,
    out: Box<dyn Write + Send>,
    out_closed: bool,
    /// When the term store is collected (see `arena`).
    arena: arena::Arena,
    /// The name-free key of the commands since the last `(reset)` (`smt2::alpha`), for
    /// the cache stage's models by block; `None` once a command of the block went to
    /// passthrough (the key would leave it out).
    block: Option<Block>,
    /// The client's options when the current fall-back to passthrough began: the main
    /// backend, which the fall-back does not use, holds these.
    fallback_options: Option<Vec<(String, String)>>,
    /// z3's objective, given at level 0 since the last reset (`objective`).
    objective: Option<objective::Objective>,
    /// The optimum found for the last check-sat (`objective`), with the bound whose model
    /// the client reads: a lost model is solved again under it.
    optimum: Option<(TermId, num_bigint::BigUint)>,
    /// The client's last `(set-info :status ...)` value, which z3 and yices answer to
    /// `(get-info :status)` (z3 keeps it across a `(reset)`, yices does not).
    status_info: Option<String>,
    /// The text of the last check-sat under an objective.
    objective_check: Option<String>,
    /// The last check-sat, while it was answered sat and nothing changed the client's
    /// state since (`recheck`).
    sat_check: Option<SatCheck>,
    /// Where the optimum is known to lie when the last check-sat's search ran out of the
    /// client's deadline (it was answered `unknown`).
    optimum_interval: Option<(num_bigint::BigUint, num_bigint::BigUint)>,
    /// The session is over as the solver's would be, with this exit code: the solver
    /// ended it on an error in a client command (see `lean`). Nothing more is answered.
    ended: Option<i32>,
    /// The client has been given an `(error ...)` this session: z3 then exits with 1
    /// (at `(exit)` or the end of input, a `(reset)` in between or not).
    errored: bool,
    /// Texts written to the client other than `success` (how `repeat` tells that a command
    /// ran cleanly).
    said: u64,
    /// The blocks run since a `(reset)`, name-free, with what their check-sat answered
    /// (`repeat`); empty unless the planner has a cache stage.
    repeats: repeat::Repeats,
    /// Where the current block stands in `repeats`; `None` when it is not followed (it
    /// did not begin at a reset, or left the modelled engine's plain path).
    walk: Option<repeat::Walk>,
}

impl Engine {
    pub fn new(cfg: Config, out: Box<dyn Write + Send>) -> Result<Engine, crate::error::Error> {
        let dialect = match cfg.solver.kind {
            SolverKind::Cvc5 => Dialect::Cvc5,
            SolverKind::Yices => Dialect::Yices,
            _ => Dialect::Z3,
        };
        let passthrough = cfg.strategy == Strategy::Passthrough;
        let mut planner = Planner::new(&cfg)?;
        planner.read_models(cfg.client.model_after_sat);
        planner.main.mode = if passthrough {
            DriverMode::Lean
        } else {
            DriverMode::Framed
        };
        Ok(Engine {
            store: TermStore::new(),
            sig: Signature::for_solver(match dialect {
                Dialect::Z3 => ArityRule::Z3,
                Dialect::Cvc5 => ArityRule::Cvc5,
                Dialect::Yices => ArityRule::Yices,
            }),
            memo: CommandMemo::default(),
            logic_check: LogicCheck::without_logic(dialect),
            client: ClientState::with_options(
                cfg.client.print_success,
                default_produce_models(dialect, &cfg.client),
            ),
            dialect,
            planner,
            last: Last::None,
            last_assumptions: Vec::new(),
            mode: if passthrough {
                Mode::Passthrough
            } else {
                Mode::Modelled
            },
            governor: None,
            pushed: false,
            busy_since: None,
            aside: Default::default(),
            aside_from: None,
            modelled_from: Default::default(),
            input_bytes: 0,
            stats: Stats::new(cfg.strategy.name()),
            flags: cfg.client.clone(),
            options_taken: Default::default(),
            // The solver flags smtproxy honours itself (print-success, models) reach a
            // passthrough backend by the replay that a stale state starts with.
            lean: {
                let stale = passthrough
                    && (cfg.client.print_success || cfg.client.produce_models == Some(true));
                let p = Passthrough::new(1, stale);
                if cfg.client.interactive {
                    p.going_on_after_errors()
                } else {
                    p
                }
            },
            out,
            out_closed: false,
            ended: None,
            errored: false,
            said: 0,
            repeats: {
                let mut r = repeat::Repeats::default();
                let disk = cfg
                    .cache
                    .as_ref()
                    .and_then(|c| Some((c.disk.as_ref()?, c.disk_max_bytes)));
                if let Some((path, max)) = disk {
                    // What the answers on the trie's paths depend on beside the blocks.
                    let settings = format!(
                        "{:?}\n{:?}\n{:?}",
                        cfg.solver.kind, cfg.solver.args, cfg.client
                    );
                    r.keep_in(repeat::TrieFile::new(path, max, &settings));
                }
                r
            },
            walk: None,
            arena: arena::Arena::with_floor(arena::collect_floor()),
            block: Some(Block::default()),
            fallback_options: None,
            objective: None,
            optimum: None,
            status_info: None,
            objective_check: None,
            sat_check: None,
            optimum_interval: None,
        })
    }

    /// Let the governor choose, per window of queries, between the modelled engine and
    /// the lean passthrough by what each costs (`governor`). Taken only by a modelled
    /// session whose flags ask for nothing smtproxy prints itself (models or statistics
    /// unasked); the proxy turns it on for the default strategy.
    pub fn set_governed(&mut self, on: bool) {
        let f = &self.flags;
        let plain = !(f.model_after_sat || f.model_at_exit || f.stats_at_exit);
        self.governor =
            (on && plain && self.mode == Mode::Modelled).then(governor::Governor::from_env);
        self.keep_spare();
    }

    /// A governed session whose client pushes keeps a warmed lean process ready while it
    /// runs modelled (z3 only, `SolverKind::lean_warm_up`), so that turning to the lean
    /// route at a pop does not wait for the solver to build its context (z3: 15-20 ms, the
    /// most of what a turn cost on yosys-smtbmc's sessions; a turn at a reset does not
    /// take it, `lean::replay::Replay::spare`). None before the client's first push
    /// (KLEE's streams reset and never push), once the session cannot turn (no governor),
    /// with `--jobs 1` (no process runs beside the one answering), nor when the client
    /// has set an option the spare could not take (`lean::replay::WARM_OPTIONS`).
    fn keep_spare(&mut self) {
        let fits = self
            .client
            .options
            .iter()
            .all(|(k, _)| lean::replay::WARM_OPTIONS.contains(&k.as_str()));
        let wanted = self.pushed
            && self.governor.is_some()
            && self.mode == Mode::Modelled
            && self.planner.parallel();
        let main = &mut self.planner.main;
        match main.spec().kind.lean_warm_up() {
            Some(w) if wanted && fits => main.prestart_lean(w),
            _ => main.drop_spare(),
        }
    }

    /// The engine's wall time so far, the current span included.
    pub fn wall_now(&self) -> std::time::Duration {
        self.stats.wall + self.busy_since.map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// The engine is at work from now, if it was not already.
    fn busy(&mut self) {
        if self.busy_since.is_none() {
            self.busy_since = Some(Instant::now());
        }
    }

    /// The engine pauses (the client may be waiting for its answers, or input has
    /// ended): the span so far counts into `stats.wall`.
    fn pause(&mut self) {
        if let Some(t) = self.busy_since.take() {
            self.stats.wall += t.elapsed();
        }
    }

    /// The governor's clock: wall time, check-sats and client bytes so far, fall-backs
    /// and the waits for backend processes to start left out (a route's window pays a
    /// start when the session turns to it, and a slow start outweighed its first
    /// queries, which then looked hopeless).
    fn governed_clock(&self) -> (std::time::Duration, u64, u64) {
        (
            self.wall_now()
                .saturating_sub(self.aside.0)
                .saturating_sub(self.planner.start_waits()),
            self.stats.queries.saturating_sub(self.aside.1),
            self.input_bytes.saturating_sub(self.aside.2),
        )
    }

    /// At a `(reset)` or a `(pop)` (`at_pop`) of the modelled session: if the governor's
    /// window is over and it chooses the lean route, the session goes to passthrough
    /// (`ByCost`); its backend restarts lean at the next command and is given the
    /// client's state (none after a reset), as a fall-back's is. Not under an objective,
    /// whose state in the solver the client's commands do not say whole. At a pop, only
    /// while smtproxy's own work has been most of the modelled route's time since the
    /// session last turned to it (the solver's share under half): the lean route saves
    /// that work, and a new solver given the state at a pop learns again what the
    /// incremental one had learnt (on domain.smt2, whose hard queries are z3's time, a
    /// lean probe of its last 17 queries took 6.7 s to 11 s).
    fn govern_modelled(&mut self, at_pop: bool) {
        if self.objective.is_some() {
            return;
        }
        // At a pop the session stays with a solver that has done most of the modelled
        // route's work (its time measured since the session last turned to it: the lean
        // route's time is nearly all the solver's) on checks that are hard for it: a new
        // solver would have to learn them again. Where its checks are cheap, a probe of the
        // lean route risks little (a window of such checks) and the governor measures it.
        let (wall0, solver0, checks0) = self.modelled_from;
        let solver = self.stats.solver.saturating_sub(solver0);
        let checks = self.stats.solver_checks.saturating_sub(checks0);
        let solver_bound = solver * 2 > self.wall_now().saturating_sub(wall0)
            && solver >= CHEAP_CHECK * checks.clamp(1, u64::from(u32::MAX)) as u32;
        if at_pop && solver_bound && !self.governor.as_ref().is_some_and(|g| g.alternates()) {
            return;
        }
        let (wall, q, bytes) = self.governed_clock();
        let Some(g) = self.governor.as_mut() else {
            return;
        };
        g.note_first_window(governor::FirstWindow {
            queries: q,
            served: self.stats.served_itself(),
            store_hits: self.planner.store_hits(),
            wall,
            solver: self.stats.solver,
            checks: self.stats.solver_checks,
        });
        if !g.due(wall, q, bytes) || g.decide(wall, q, bytes) != governor::Route::Lean {
            return;
        }
        self.stats.route_switches = g.switches;
        self.planner.main.kill();
        self.mode = Mode::ByCost;
        // As at a fall-back: the passthrough's commands do not go into the block of
        // commands since the reset, so it names no block until the next reset.
        self.block = None;
        self.lean = Passthrough::new(self.planner.main.generation, true)
            .measuring_queries()
            .warm_start(at_pop);
    }

    /// Collect the term store at a `(reset)` once it holds `floor` nodes (default
    /// `arena::COLLECT_MIN_TERMS`; tests collect sooner).
    pub fn set_collect_floor(&mut self, floor: usize) {
        self.arena = arena::Arena {
            collect_at: floor,
            floor,
            ..self.arena.clone()
        };
    }

    /// The term store's figures: nodes now, the most it held, collections so far.
    pub fn arena_figures(&self) -> (usize, usize, u64) {
        let a = &self.arena;
        (
            self.store.len(),
            a.peak.max(self.store.len()),
            a.collections,
        )
    }

    /// Start a fresh term store, dropping every table that holds an id of the old one
    /// (see `arena`). Only between commands, with no client term alive: after a reset.
    pub fn collect_terms(&mut self) {
        let before = self.store.len();
        self.store = TermStore::new();
        self.memo = CommandMemo::default();
        self.last_assumptions = Vec::new();
        self.logic_check = LogicCheck::without_logic(self.dialect);
        self.planner.forget_terms();
        self.repeats.forget_terms();
        self.arena.collected(before, self.store.len());
        self.note_arena();
    }

    /// The arena's and the process's memory figures into `stats`.
    fn note_arena(&mut self) {
        self.stats.trie_loaded_nodes = self.repeats.loaded_nodes();
        let (terms, peak, collections) = self.arena_figures();
        self.stats.terms = terms as u64;
        self.stats.terms_peak = peak as u64;
        self.stats.term_collections = collections;
        if let Some(mb) = arena::peak_rss_mb() {
            self.stats.peak_rss_mb = mb;
        }
    }

    /// Whether the backend answers every command (the passthrough strategy or a fall-back).
    pub fn is_passthrough(&self) -> bool {
        self.passing()
    }

    fn passing(&self) -> bool {
        self.mode != Mode::Modelled
    }

    /// Start the backend now (so a missing solver is reported before any input is read).
    pub fn start_backend(&mut self) -> Result<(), DriverError> {
        self.planner.main.start().map(|_| ())
    }

    /// The backend's command line.
    pub fn backend_spec(&self) -> &SolverSpec {
        self.planner.main.spec()
    }

    /// The session ends (`exit` or the end of input): what the solver prints then, as the
    /// client's flags ask (z3 `-model`: the last sat's model; `-st`: statistics).
    pub fn at_exit(&mut self) {
        let _ = self.finish();
        if self.ended.is_some() {
            return;
        }
        if self.flags.model_at_exit
            && !self.passing()
            && matches!(self.last, Last::Sat)
            && self.models_enabled()
        {
            let _ = self.get_model("(get-model)", 1, 1);
        }
        if self.flags.stats_at_exit {
            let text = "(get-info :all-statistics)";
            match self.planner.main_for_client(&mut self.stats).cmd(text) {
                Ok(r) => self.emit(&r.to_text()),
                Err(e) => self.stats.note(format!("statistics at exit: {e}")),
            }
        }
    }

    fn emit(&mut self, text: &str) {
        // Once SIGINT/SIGTERM arrived nothing more is answered: an answer computed while
        // the solvers are being killed could only be a spurious `unknown` or error. Nor
        // once the solver ended the session (commands sent ahead are never answered).
        if self.out_closed || crate::signals::stop_requested() || self.ended.is_some() {
            return;
        }
        self.errored |= text.starts_with("(error");
        if text != "success" {
            self.said += 1;
        }
        let r = self
            .out
            .write_all(text.as_bytes())
            .and_then(|_| self.out.write_all(b"\n"))
            .and_then(|_| self.out.flush());
        if r.is_err() {
            self.out_closed = true;
        }
    }
    pub fn output_closed(&self) -> bool {
        self.out_closed
    }
    /// The exit code of a session the solver ended on an error in a client command (cvc5
    /// exits with 1 after a parse error, yices with 0 after an undefined name): the client
    /// is then answered nothing more and smtproxy exits with that code.
    pub fn ended(&self) -> Option<i32> {
        self.ended
    }
    /// The exit code the solver would end this session with: the one it ended on (see
    /// `ended`), else 1 for z3 after it printed any error (cvc5 and yices exit with 0
    /// after errors they go on from).
    pub fn exit_code(&self) -> i32 {
        match self.ended {
            Some(c) => c,
            None if self.errored && self.dialect == Dialect::Z3 => 1,
            None => 0,
        }
    }
    fn success(&mut self) {
        if self.client.print_success {
            self.emit("success");
        }
    }
    /// An error on which the solver ends its session, exiting with `code` (cvc5 after
    /// `get-unsat-core` without its option): said as the solver says it, and nothing more
    /// is answered (see `ended`).
    fn end_with_error(&mut self, msg: &str, code: i32) {
        self.emit(&response::error(msg));
        self.ended = Some(code);
    }

    /// An error the reader found between commands (`msg` at `line`, `col`, in z3's
    /// words), as the client's solver says it. A `stray` atom where a command should begin:
    /// z3 goes on (its columns 0-based past the first line); cvc5 and yices end the session
    /// (yices `--interactive` goes on), each placing the error just past the atom, cvc5 on
    /// 0-based lines and naming no position on its first line.
    fn frame_error(&mut self, msg: &str, line: usize, col: usize, stray: Option<&str>) {
        let Some(tok) = stray else {
            self.error_at(line, col, msg);
            return;
        };
        let end = col + tok.chars().count();
        match self.dialect {
            Dialect::Z3 => self.error_at(line, position::z3_printed_col(line, col), msg),
            Dialect::Yices => {
                let e = format!("at line {line}, column {end}: syntax error: ( expected");
                if self.flags.interactive {
                    self.emit(&response::error(&e));
                } else {
                    self.end_with_error(&e, 0);
                }
            }
            Dialect::Cvc5 => {
                let at = match line - 1 {
                    0 => String::new(),
                    l => format!("<stdin>:{l}.{}: ", end - 1),
                };
                self.end_with_error(&format!("Parse Error: {at}Unexpected token: '{tok}'."), 1);
            }
        }
    }

    fn error_at(&mut self, line: usize, col: usize, msg: &str) {
        let e = response::error_at(line, col, msg);
        self.emit(&e);
    }

    /// Handle one frame; `more`: the client has already sent at least one more complete
    /// command, so in passthrough this one may be sent without waiting for its answer
    /// (answers are still relayed in order, before anything else is answered). Returns the
    /// outcomes of every command completed by this call, in order.
    pub fn push(&mut self, frame: Frame, more: bool) -> Vec<Outcome> {
        if self.ended.is_some() {
            return vec![Outcome {
                exit: true,
                ..Default::default()
            }];
        }
        self.busy();
        if let Frame::Command(raw) = &frame {
            self.input_bytes += raw.text.len() as u64;
        }
        let mut outs = if self.passing() {
            self.pass_frame(frame, more)
        } else {
            vec![self.handle_now(frame)]
        };
        if self.ended.is_some() {
            if let Some(o) = outs.last_mut() {
                o.exit = true;
            }
        }
        outs
    }

    /// The client has sent nothing more yet: answer everything in flight now (it may be
    /// waiting for those answers before it writes again); under the modelled engine, start
    /// the main solver meanwhile if it never ran.
    pub fn idle(&mut self) {
        if self.passing() {
            self.busy();
            let _ = self.pass_sync(false);
        } else if self.planner.main.generation == 0 {
            // Waiting on the client anyway: the solver starts meanwhile (an interactive
            // client that starts a solver per query, as pySMT does, pauses before its
            // first command). A stream that never pauses starts it at its first use.
            self.planner.main.prestart();
        }
        self.pause();
    }

    /// Answer everything still in flight (at the end of input).
    pub fn finish(&mut self) -> Vec<Outcome> {
        self.busy();
        let outs = self.pass_sync(true);
        self.pause();
        outs
    }

    /// Handle one framed command, waiting for its answer. (Callers that use `push` must
    /// not call this while commands are in flight.)
    pub fn handle(&mut self, frame: Frame) -> Outcome {
        let mut outs = self.push(frame, false);
        outs.pop().unwrap_or_default()
    }

    fn handle_now(&mut self, frame: Frame) -> Outcome {
        match frame {
            Frame::Error {
                msg,
                line,
                col,
                stray,
            } => {
                self.frame_error(&msg, line, col, stray.as_deref());
                Outcome::default()
            }
            Frame::Command(raw) => self.command(&raw.text, raw.line, raw.col),
        }
    }

    fn command(&mut self, text: &str, line: usize, col: usize) -> Outcome {
        let parts = command_parts(text);
        if let Some(b) = self.block.as_mut() {
            b.add_parts(text, parts);
        }
        if self.walk.is_some() {
            return self.walk_command(text, parts, line, col);
        }
        self.run(text, line, col)
    }

    /// One command through the modelled engine: parsed (or found in the memo), checked
    /// against what the solver refuses, and interpreted.
    fn run(&mut self, text: &str, line: usize, col: usize) -> Outcome {
        let cmd = match self.memo.parse(&mut self.store, &self.sig, text) {
            Ok(c) => c,
            Err(e) if e.kind == ErrorKind::Unsupported => {
                // Not modelled: let the solver judge it; if it accepts, go passthrough.
                return self.fall_back(text, line, col, &e.msg);
            }
            Err(e) => {
                if let Some(out) = self.judged_by_solver(&e, text, line, col) {
                    return out;
                }
                let (l, c) = crate::smt2::lexer::line_col(text, e.offset);
                let (l, c) = if l == 1 {
                    (line, col + c - 1)
                } else {
                    (line + l - 1, c)
                };
                self.error_at(l, c, &e.msg);
                return Outcome::default();
            }
        };
        self.run_parsed(cmd, text, line, col)
    }

    /// `run` from the parsed command `cmd` of `text` on.
    fn run_parsed(&mut self, cmd: Command, text: &str, line: usize, col: usize) -> Outcome {
        if self.dialect == Dialect::Yices && yices_refuses(&self.store, &cmd, text) {
            let e = crate::smt2::parser::ParseError {
                offset: 0,
                msg: "syntax error".into(),
                kind: ErrorKind::Syntax,
            };
            if let Some(out) = self.judged_by_solver(&e, text, line, col) {
                return out;
            }
        }
        if let Some(lc) = self.logic_check.as_mut() {
            if lc.outside(&self.store, &cmd) {
                // cvc5 and yices refuse a theory the logic leaves out (z3 takes it): the
                // solver's own error, and its state from there on.
                let why = "the command uses a theory the logic leaves out";
                return self.fall_back(text, line, col, why);
            }
        }
        if self.dialect == Dialect::Yices && self.client.logic.is_none() && yices_needs_logic(&cmd)
        {
            // yices runs no such command before a set-logic (nor after a reset); it reads
            // it first, so a term outside the core theory is its own error (`undefined
            // term: >`), which the solver words.
            let beyond_core = match &cmd {
                Command::GetValue(ts) => ts.iter().any(|&(t, _)| self.term_outside(t)),
                Command::CheckSatAssuming(ts) => ts.iter().any(|&t| self.term_outside(t)),
                _ => false,
            };
            if beyond_core {
                let why = "a term outside the core theory before any set-logic";
                return self.fall_back(text, line, col, why);
            }
            self.emit(&response::error("no logic set"));
            return Outcome::default();
        }
        self.interpret(cmd, text, line, col)
    }

    /// Whether the logic check refuses term `t`.
    fn term_outside(&mut self, t: TermId) -> bool {
        self.logic_check
            .as_mut()
            .is_some_and(|lc| lc.term_outside(&self.store, t))
    }

    /// A command smtproxy's parser refused (`e`), judged by the solver in the client's
    /// context (`Planner::solver_verdict`):
    /// * the solver refuses it too: its error as the solver words it, at the client's
    ///   position, and the end of the session where the solver ends it (cvc5 after any
    ///   parse error, yices after a syntax error unless `--interactive`);
    /// * the solver takes an ill-sorted command that changes the client's state (z3 reads
    ///   `(> x b)` with a Bool b as `(> x (ite b 1 0))`): the client's state must hold it,
    ///   as the solver's would, so the session goes to passthrough.
    ///
    /// None when the solver cannot be asked, or takes a command that leaves the state as
    /// it is: smtproxy's own message is given.
    fn judged_by_solver(
        &mut self,
        e: &crate::smt2::parser::ParseError,
        text: &str,
        line: usize,
        col: usize,
    ) -> Option<Outcome> {
        /// Past this many commands of context the solver is not asked (a replay per error).
        const LOG_MAX: usize = 20_000;
        let head = crate::driver::reader::command_head(text);
        let log = self.client.declarations_log();
        if log.len() > LOG_MAX {
            return None;
        }
        let busy = self.planner.busy();
        let v = self
            .planner
            .solver_verdict(&log, text, head == Some("get-value"));
        self.stats.solver += self.planner.busy().saturating_sub(busy);
        let v = v?;
        match v.response {
            Response::Error(msg) => {
                let msg = match self.dialect {
                    Dialect::Cvc5 => lean::position::cvc5_position(&msg, v.start.0, line, col),
                    _ => lean::position::relocate(&msg, self.dialect, v.start, (line, col))
                        .unwrap_or(msg),
                };
                // The auxiliary yices runs `--interactive`, which outlives a syntax error
                // that ends the client's yices.
                let ended =
                    v.ended || (self.dialect == Dialect::Yices && msg.contains("syntax error"));
                if ended && !self.flags.interactive {
                    // cvc5 exits with 1 after a parse error, yices with 0.
                    let code = i32::from(self.dialect != Dialect::Yices);
                    self.end_with_error(&msg, code);
                } else {
                    self.emit(&response::error(&msg));
                }
                Some(Outcome::default())
            }
            Response::Success
                if e.kind == ErrorKind::Sort
                    && matches!(head, Some("assert" | "define-fun" | "define-const")) =>
            {
                let why = format!("the solver takes what smtproxy refuses ({})", e.msg);
                Some(self.fall_back(text, line, col, &why))
            }
            // A get-value the solver answers (a function asked for as a whole, which z3,
            // cvc5 and yices each print their own way): the solver answers it.
            Response::Other(_) if e.kind == ErrorKind::Sort && head == Some("get-value") => {
                let why = format!("the solver answers what smtproxy refuses ({})", e.msg);
                Some(self.fall_back(text, line, col, &why))
            }
            _ => None,
        }
    }

    /// Switch to passthrough: the client's state is replayed into a lean backend, then
    /// the command is sent.
    fn fall_back(&mut self, text: &str, line: usize, col: usize, why: &str) -> Outcome {
        // The state that goes to the solver holds every assertion the client made.
        self.settle_walk();
        if self.mode == Mode::Modelled {
            self.keep_model_through_fall_back(text);
            self.mode = Mode::FallBack;
            self.block = None;
            self.fallback_options = Some(self.client.options.clone());
            self.aside_from = Some((self.wall_now(), self.stats.queries, self.input_bytes));
            self.lean.fall_back(self.client.depth());
            self.stats.fallbacks_passthrough += 1;
            self.stats.note(format!("switched to passthrough: {why}"));
        }
        self.pass_command(text.to_string(), line, col, None, false)
            .pop()
            .unwrap_or_default()
    }

    /// Before a fall-back at `text`, a command that reads the model of the client's last
    /// check-sat (answered sat): the fall-back's solver runs that check again after the
    /// client's state, under the values the client has read of its model (`recheck`).
    fn keep_model_through_fall_back(&mut self, text: &str) {
        let reads_model = matches!(
            crate::smt2::lex::command_head(text),
            Some("get-value" | "get-model" | "eval")
        );
        let Some(check) = self.sat_check.clone() else {
            return;
        };
        if !reads_model || !matches!(self.last, Last::Sat) || check.query != self.stats.queries {
            return;
        }
        let model = if check.read {
            let busy = self.planner.busy();
            let m = self
                .planner
                .model(&mut self.store, self.client.decls(), self.dialect);
            self.stats.solver += self.planner.busy().saturating_sub(busy);
            match m {
                Ok(m) => Some(m),
                Err(_) => return,
            }
        } else {
            None
        };
        if let Some(cmd) = recheck::recheck(self.dialect, &check.text, model.as_deref()) {
            self.lean.check_again(&cmd);
        }
    }

    /// Options whose value is the client's, not the backend's (the proxy sets them on
    /// the backend for its own use).
    fn own_option(&self, k: &str) -> Option<String> {
        match k {
            ":print-success" => Some(self.client.print_success.to_string()),
            ":produce-models" => Some(self.client.produce_models.to_string()),
            // Set on the backends for smtproxy's own use (the stack's declarations, hybrid's
            // unsat cores): the client's value is not theirs. These produce- options are
            // off here: set, they send the session to passthrough.
            ":global-declarations" => Some(self.sig.global_declarations.to_string()),
            ":global-decls" if self.dialect == Dialect::Z3 => {
                Some(self.sig.global_declarations.to_string())
            }
            ":produce-unsat-cores"
            | ":produce-proofs"
            | ":produce-unsat-assumptions"
            | ":produce-assignments" => Some("false".into()),
            // z3 fixes it when its manager is built, and the backends' are built already.
            ":interactive-mode" | ":produce-assertions" if self.dialect == Dialect::Z3 => {
                let on = self.client.options.iter().rev().find_map(|(k, v)| {
                    matches!(k.as_str(), ":interactive-mode" | ":produce-assertions")
                        .then(|| set_option::bool_value(self.dialect, v) == Some(true))
                });
                Some(on.unwrap_or(false).to_string())
            }
            _ => None,
        }
    }

    fn client_has_state(&self) -> bool {
        !self.client.preamble.is_empty()
            || self.client.frames.iter().any(|f| !f.raw().is_empty())
            || self.client.depth() > 0
    }

    /// Keep the client view in step in passthrough mode (for replay after a crash).
    fn track(&mut self, cmd: Command, text: &str) {
        match &cmd {
            Command::Reset => {
                self.reset_client();
            }
            Command::ResetAssertions => self.reset_assertions(),
            Command::Push(n) => {
                for _ in 0..*n {
                    self.sig.push();
                    self.client.push_frame();
                }
            }
            Command::Pop(n) => {
                for _ in 0..*n {
                    if self.client.depth() == 0 {
                        break;
                    }
                    self.sig.pop();
                    self.client.pop_frame(self.sig.global_declarations);
                }
            }
            Command::SetOption(k, v) => {
                let on = set_option::bool_value(self.dialect, v) == Some(true);
                if k == ":produce-models" {
                    self.client.produce_models = on;
                }
                if k == ":global-declarations"
                    || (k == ":global-decls" && self.dialect == Dialect::Z3)
                {
                    self.sig.global_declarations = on;
                }
                self.client.set_option(k, v, text)
            }
            Command::SetLogic(_) => self.client.preamble.push(text.to_string()),
            c if c.changes_state() => self.keep_declaration(&cmd, text),
            _ => {}
        }
    }

    /// `(set-option k v)`, `text` at (`line`, `col`): refused as the client's solver
    /// refuses it in the client's phase (`set_option`), else kept, modelled or asked of
    /// the backend. Some outcome when the command sent the session to passthrough.
    fn set_option(
        &mut self,
        k: &str,
        v: &str,
        text: &str,
        line: usize,
        col: usize,
    ) -> Option<Outcome> {
        let phase = set_option::Phase {
            initialized: self.client.initialized,
            asserted: self.client.frames.iter().any(|f| !f.assertions.is_empty()),
            global_declarations: self.sig.global_declarations,
        };
        let taken = self.options_taken.contains_key(k);
        if let Some(r) = set_option::refusal(self.dialect, k, v, phase, taken) {
            self.refuse_option(r, text, line, col);
            return None;
        }
        let on = set_option::bool_value(self.dialect, v) == Some(true);
        match k {
            ":print-success" => {
                self.client.print_success = on;
                self.success();
            }
            ":produce-models" => {
                self.client.produce_models = on;
                self.success();
            }
            ":global-declarations" | ":global-decls"
                if k == ":global-declarations" || self.dialect == Dialect::Z3 =>
            {
                self.sig.global_declarations = on;
                self.client.set_option(k, v, text);
                self.success();
            }
            // Taken as z3 takes it before its manager exists (refused above after): the
            // backends' managers exist, so they are not asked; fresh contexts get it with
            // the client's other options.
            ":interactive-mode" | ":produce-assertions" if self.dialect == Dialect::Z3 => {
                self.client.set_option(k, v, text);
                self.success();
            }
            // Answers written elsewhere than stdout would never reach smtproxy from a
            // backend (cvc5 takes `"stdout"` as a file of that name): not taken.
            ":regular-output-channel" if !set_option::is_stdout(self.dialect, v) => {
                self.stats
                    .note(format!("not taken: {text} (answers are written to stdout)"));
                self.emit("unsupported");
            }
            _ if unmodelled_option(k, v) => {
                let why = "unsat cores, proofs or assignments requested";
                return Some(self.fall_back(text, line, col, why));
            }
            // Off (`true` went to passthrough above; where the client's solver refuses
            // either, `set_option` did): not asked of the backend, whose own state (the
            // stack's assertions, named for unsat cores) is not the client's.
            ":produce-unsat-cores" | ":produce-unsat-assumptions" | ":produce-assignments" => {
                self.success();
            }
            ":produce-proofs" if self.dialect != Dialect::Yices => self.success(),
            // The value the backends last took for this option (it survives a reset,
            // after which tools set the same options again): nothing to ask or rebuild.
            _ if self.options_taken.get(k).map(String::as_str) == Some(v) => {
                self.client.set_option(k, v, text);
                self.success();
            }
            _ => {
                // Ask the backend whether it accepts the option; remember it for fresh
                // contexts. Asked in a fresh state where the solver takes the option only
                // early (cvc5 before its first assertion, yices before set-logic): the
                // client's solver is still there (else `set_option` refused it), the
                // backend's state is smtproxy's.
                let fresh = set_option::ask_fresh(self.dialect, k);
                match self.planner.ask_option(text, fresh, &mut self.stats) {
                    Ok(Response::Success) => {
                        self.options_taken.insert(k.to_string(), v.to_string());
                        self.client.set_option(k, v, text);
                        self.planner.invalidate();
                        self.success();
                    }
                    Ok(r) => {
                        // z3 read the command at the start of a line of its own: its
                        // position in an error is moved to where the client wrote it.
                        let t = r.to_text();
                        let moved = lean::position::error_position(&t)
                            .filter(|_| self.dialect == Dialect::Z3)
                            .and_then(|(l, _)| {
                                lean::position::relocate(&t, self.dialect, (l, 1), (line, col))
                            });
                        self.emit(&moved.unwrap_or(t));
                    }
                    Err(e) => self.emit(&response::error(&format!("solver failed: {e}"))),
                }
            }
        }
        None
    }

    /// Say a refusal of `text` (a set-option at `line`, `col`) as the client's solver says
    /// it (z3: at the end of the keyword).
    fn refuse_option(&mut self, r: set_option::Refusal, text: &str, line: usize, col: usize) {
        match r {
            set_option::Refusal::Error(msg) if self.dialect == Dialect::Z3 => {
                let end = token_end(text.as_bytes(), argument_offset(text));
                let (l, c) = z3_position(position_at(text, end, line, col));
                self.error_at(l, c, &msg);
            }
            set_option::Refusal::Error(msg) => self.emit(&response::error(&msg)),
            set_option::Refusal::End(msg) => self.end_with_error(&msg, 1),
            set_option::Refusal::EndIfKnown(msg) => {
                // An option cvc5 does not know is `unsupported` in any state; one it knows
                // ends the session (the backend, asked, may take it: the session ends anyway).
                match self.planner.ask_option(text, false, &mut self.stats) {
                    Ok(r @ Response::Unsupported) => self.emit(&r.to_text()),
                    _ => self.end_with_error(&msg, 1),
                }
            }
        }
    }

    fn reset_client(&mut self) {
        // z3 and yices keep print-success across (reset); cvc5 returns it to false. z3 keeps
        // every other option too (cvc5 and yices, as SMT-LIB says, return them to their
        // defaults): produce-models, global-declarations (so declarations still outlive
        // their scope) and the options given to the backends.
        let ps = if self.dialect == Dialect::Cvc5 {
            self.flags.print_success
        } else {
            self.client.print_success
        };
        self.logic_check = LogicCheck::without_logic(self.dialect);
        if self.dialect == Dialect::Yices {
            self.status_info = None;
        }
        self.objective = None;
        self.optimum = None;
        self.optimum_interval = None;
        self.objective_check = None;
        let kept = (self.dialect == Dialect::Z3).then(|| {
            let preamble: Vec<String> = self
                .client
                .preamble
                .iter()
                .filter(|c| crate::driver::reader::command_head(c) == Some("set-option"))
                .cloned()
                .collect();
            (
                self.client.produce_models,
                self.sig.global_declarations,
                std::mem::take(&mut self.client.options),
                preamble,
            )
        });
        self.client =
            ClientState::with_options(ps, default_produce_models(self.dialect, &self.flags));
        self.sig.clear();
        if let Some((models, global, options, preamble)) = kept {
            self.client.produce_models = models;
            self.sig.global_declarations = global;
            self.client.options = options;
            self.client.preamble = preamble;
        }
        self.last = Last::None;
        self.planner.reset();
        self.block.get_or_insert_with(Block::default).clear();
        // The client's view holds no term now: the moment to collect (see `arena`).
        debug_assert!(!self.client_has_terms());
        if self.arena.due(self.store.len()) {
            self.collect_terms();
        }
    }

    /// Whether the client's view holds a term (an assertion, a named term or a declared
    /// symbol).
    fn client_has_terms(&self) -> bool {
        self.client
            .frames
            .iter()
            .any(|f| !f.assertions.is_empty() || !f.named.is_empty())
            || !self.client.decls().is_empty()
    }

    /// The client's state after reset-assertions: z3 keeps the levels and their
    /// declarations and drops only the assertions; cvc5 and yices (and SMT-LIB) drop the
    /// levels, and the declarations too unless `:global-declarations` is true.
    fn reset_assertions(&mut self) {
        let z3 = self.dialect == Dialect::Z3;
        let global = self.sig.global_declarations;
        self.client.reset_assertions(z3, global);
        if !z3 {
            if global {
                while self.sig.pop() {}
            } else {
                self.sig.clear();
            }
        }
    }

    fn echo(&mut self, raw: &str) {
        match self.dialect {
            Dialect::Cvc5 => self.emit(raw),
            _ => {
                let s = unescape_string(raw);
                self.emit(&s);
            }
        }
    }

    /// Update the signature for a declaration-like command.
    fn declare(&mut self, cmd: &Command) {
        let sym = cmd.declare_in(&mut self.store, &mut self.sig);
        if let (Some(sym), Command::DeclareFun { name, params, ret }) = (sym, cmd) {
            self.client.declare(Decl {
                name: name.clone(),
                sym,
                params: params.clone(),
                ret: *ret,
            });
        }
    }

    /// A declaration or definition `cmd` (`text`) into the client's view: the signature,
    /// the frame's declarations, its raw log and, for what the backend must see verbatim,
    /// its definitions. (Any other command: its raw text only.)
    fn keep_declaration(&mut self, cmd: &Command, text: &str) {
        self.declare(cmd);
        self.client.top().push_raw(text);
        if cmd.is_verbatim_definition() {
            self.client.define(text);
        }
    }

    /// What an assertion does to the session besides adding its term (the assertion
    /// `interpret` runs, and one `repeat` defers).
    fn assertion_effects(&mut self) {
        let assert = Command::Assert(TermStore::TRUE, Vec::new());
        if set_option::initializes(self.dialect, &assert) {
            self.client.initialized = true;
        }
        self.client.asserted = true;
        self.last = Last::None;
    }

    fn count_check(&mut self, a: Answer) {
        self.stats.queries += 1;
        if self.mode == Mode::ByCost {
            self.stats.lean_queries += 1;
        }
        match a {
            Answer::Sat => self.stats.sat += 1,
            Answer::Unsat => self.stats.unsat += 1,
            Answer::Unknown => self.stats.unknown += 1,
        }
    }

    /// The engine's own handling of a parsed command (not passthrough).
    fn interpret(&mut self, cmd: Command, text: &str, line: usize, col: usize) -> Outcome {
        let mut outcome = Outcome::default();
        if cmd.changes_state() {
            // The model of the last check is not run again over another state.
            self.sat_check = None;
        }
        if !matches!(cmd, Command::SetLogic(_)) && set_option::initializes(self.dialect, &cmd) {
            self.client.initialized = true;
        }
        match cmd {
            Command::SetLogic(ref l) => {
                if self.client.logic.is_some() {
                    // z3 (4.8 and 5.x), cvc5 and yices all reject a second set-logic; taking
                    // it would also put it twice into every fresh context, which the
                    // backend rejects, turning every later answer into `unknown`.
                    if self.dialect == Dialect::Z3 {
                        // z3 puts this one a column before the logic's name.
                        let (l, c) = argument_position(text, line, col);
                        self.error_at(l, c.saturating_sub(1), "the logic has already been set");
                    } else {
                        self.error_at(line, col, "logic already set");
                    }
                    return outcome;
                }
                if self.dialect == Dialect::Z3 && self.client.asserted {
                    // z3 puts this one a column before the logic's name.
                    let (l, c) = argument_position(text, line, col);
                    self.error_at(
                        l,
                        c.saturating_sub(1),
                        "logic must be set before initialization",
                    );
                    return outcome;
                }
                // A logic the solver may not know: its own answer (z3: `unsupported`, and
                // the logic is ignored; cvc5, yices: an error).
                match self.planner.logic_reply(text, l) {
                    Response::Unsupported => {
                        self.emit("unsupported");
                        return outcome;
                    }
                    Response::Error(e) => {
                        match self.dialect {
                            Dialect::Z3 => self.error_at(line, col, &e),
                            Dialect::Yices => self.emit(&response::error(&e)),
                            // A parse error to cvc5, which ends the session there.
                            Dialect::Cvc5 => {
                                let e = lean::position::cvc5_position(&e, 0, line, col);
                                self.end_with_error(&e, 1);
                            }
                        }
                        return outcome;
                    }
                    _ => {}
                }
                // yices fixes its context now (not at a logic it refused).
                if set_option::initializes(self.dialect, &cmd) {
                    self.client.initialized = true;
                }
                self.client.logic = Some(l.clone());
                self.logic_check = LogicCheck::new(self.dialect, l);
                if self.dialect == Dialect::Z3 {
                    // z3 keeps its options across a reset: a client that sets the logic
                    // and then the same options after every reset has the same preamble
                    // each time (z3 takes the logic before or after options alike).
                    self.client.preamble.insert(0, text.to_string());
                } else {
                    self.client.preamble.push(text.to_string());
                }
                self.success();
            }
            Command::SetOption(ref k, ref v) => {
                if let Some(o) = self.set_option(k, v, text, line, col) {
                    return o;
                }
            }
            Command::SetInfo(ref k, ref v) => {
                if k == ":status" {
                    let answer = matches!(v.as_str(), "sat" | "unsat" | "unknown");
                    if self.dialect == Dialect::Cvc5 && !answer {
                        let e = format!(
                            "Invalid argument '{v}' for 'value', expected 'sat', 'unsat' or 'unknown'"
                        );
                        self.end_with_error(&e, 1);
                        return outcome;
                    }
                    if self.dialect == Dialect::Z3 && !answer {
                        // z3 takes only the three answers, and points at the value.
                        let at = text.rfind(v.as_str()).unwrap_or(0);
                        let (l, c) = position::position_at(text, at, line, col);
                        self.error_at(l, position::z3_printed_col(l, c), "invalid ':status' attribute");
                        return outcome;
                    }
                    outcome.status = Answer::parse(v);
                    self.status_info = Some(v.clone());
                }
                self.success();
            }
            Command::GetInfo(ref k) if k == ":status" && self.dialect != Dialect::Cvc5 => {
                // cvc5 always says unknown (its backend does); z3 says unknown until told.
                match (&self.status_info, self.dialect) {
                    (Some(v), _) => self.emit(&format!("(:status {v})")),
                    (None, Dialect::Z3) => self.emit("(:status unknown)"),
                    (None, _) => self.emit(&response::error("no info for :status")),
                }
            }
            Command::GetInfo(ref k) if k == ":smtproxy-version" => {
                self.emit(&format!(
                    "(:smtproxy-version \"{}\")",
                    env!("CARGO_PKG_VERSION")
                ));
            }
            // The client's last check-sat, which the backends did not all see (z3's words).
            Command::GetInfo(ref k)
                if k == ":reason-unknown"
                    && self.dialect == Dialect::Z3
                    && !matches!(self.last, Last::Unknown) =>
            {
                let why = match self.last {
                    Last::Sat => "",
                    Last::Unsat => "unknown",
                    _ => "state of the most recent check-sat command is not known",
                };
                self.emit(&format!("(:reason-unknown \"{why}\")"));
            }
            Command::GetInfo(ref k) if k == ":assertion-stack-levels" => {
                // The client's depth: the backends' stacks are smtproxy's own (z3, cvc5
                // and yices all answer this form).
                self.emit(&format!(
                    "(:assertion-stack-levels {})",
                    self.client.depth()
                ));
            }
            Command::GetOption(ref k) if self.own_option(k).is_some() => {
                let v = self.own_option(k).unwrap_or_default();
                self.emit(&v);
            }
            Command::GetInfo(_) | Command::GetOption(_) => {
                match self.planner.main_for_client(&mut self.stats).cmd(text) {
                    Ok(r) => self.emit(&r.to_text()),
                    Err(e) => self.emit(&response::error(&format!("solver failed: {e}"))),
                }
            }
            Command::DeclareSort(..)
            | Command::DefineSort { .. }
            | Command::DeclareFun { .. }
            | Command::DefineFun { .. }
            | Command::DefineFunsRec(_)
            | Command::DeclareDatatypes { .. } => {
                self.keep_declaration(&cmd, text);
                self.success();
            }
            Command::Push(n) => {
                for _ in 0..n {
                    self.sig.push();
                    self.client.push_frame();
                }
                self.last = Last::None;
                self.success();
                if !self.pushed {
                    self.pushed = true;
                    self.keep_spare();
                }
            }
            Command::Pop(n) => {
                if n as usize > self.client.depth() {
                    match self.dialect {
                        // z3's own words, at the argument's position.
                        Dialect::Z3 => {
                            let (l, c) = argument_position(text, line, col);
                            self.error_at(l, c, "invalid pop command, argument is greater than the current stack depth");
                        }
                        Dialect::Cvc5 => {
                            self.end_with_error("Cannot pop beyond first pushed context", 1)
                        }
                        Dialect::Yices => {
                            let msg = match self.client.depth() {
                                0 => "pop not allowed at the bottom level".to_string(),
                                1 => "can't pop more than one level".to_string(),
                                d => format!("can't pop more than {d} levels"),
                            };
                            self.emit(&response::error(&msg));
                        }
                    }
                    return outcome;
                }
                for _ in 0..n {
                    self.sig.pop();
                    self.client.pop_frame(self.sig.global_declarations);
                }
                self.last = Last::None;
                self.success();
                self.govern_modelled(true);
            }
            Command::Assert(t, named) => {
                self.assertion_effects();
                // A `:named` label stands for its term from here on, as a `define-fun`
                // of no arguments would (get-value may ask for it, later terms may use it).
                for (name, term) in &named {
                    self.sig.add_fun(
                        name,
                        crate::term::signature::FunDef::Macro {
                            params: Vec::new(),
                            body: *term,
                        },
                    );
                }
                let top = self.client.top();
                top.assertions.push(t);
                top.named.extend(named);
                top.push_raw(text);
                self.success();
            }
            Command::CheckSat | Command::CheckSatAssuming(_) if self.objective.is_some() => {
                self.sat_check = None;
                let lits = match cmd {
                    Command::CheckSatAssuming(lits) => lits,
                    _ => Vec::new(),
                };
                return self.optimise(&lits, text, line, col);
            }
            Command::CheckSat | Command::CheckSatAssuming(_) => {
                let lits = match cmd {
                    Command::CheckSatAssuming(lits) => lits,
                    _ => Vec::new(),
                };
                // Kept before the answer goes out (a model printed with it is read), and
                // dropped by `answered` unless it is sat.
                self.sat_check = Some(SatCheck {
                    text: text.to_string(),
                    query: self.stats.queries + 1,
                    read: false,
                });
                let a = self.check(&lits);
                outcome.check = Some(a);
            }
            Command::GetValue(terms) => self.get_value(&terms, text, line, col),
            Command::GetModel => return self.get_model(text, line, col),
            // The options these need send the session to passthrough when set, so here
            // they are off.
            Command::GetAssignment
            | Command::GetUnsatCore
            | Command::GetUnsatAssumptions
            | Command::GetProof => match self.dialect {
                Dialect::Z3 => {
                    // z3's answers, word for word: an assignment of no named terms after
                    // sat, else errors naming the option to set.
                    let msg = match cmd {
                        Command::GetAssignment if matches!(self.last, Last::Sat) => {
                            self.emit("()");
                            return outcome;
                        }
                        Command::GetAssignment => "model is not available",
                        Command::GetUnsatCore => "unsat core construction is not enabled, use command (set-option :produce-unsat-cores true)",
                        Command::GetProof => "proof construction is not enabled, use command (set-option :produce-proofs true)",
                        _ => "unsat assumptions construction is not enabled, use command (set-option :produce-unsat-assumptions true)",
                    };
                    self.run_error(text, line, col, msg);
                }
                // cvc5's and yices' words; cvc5 ends its session on most of these
                // (exit code 1), as on a pop past the bottom.
                Dialect::Cvc5 => match cmd {
                    Command::GetAssignment if !self.client.produce_models => self.emit(
                        &response::error("Cannot get value unless model generation is enabled (try --produce-models)"),
                    ),
                    Command::GetAssignment if !matches!(self.last, Last::Sat) => self.emit(
                        &response::error("Cannot get value unless after a SAT or UNKNOWN response."),
                    ),
                    // cvc5 1.0.3's own words after a sat.
                    Command::GetAssignment => self.end_with_error("Invalid kind 'SEXPR', expected PI, REGEXP_NONE, REGEXP_ALL, REGEXP_ALLCHAR or SEP_EMP", 1),
                    Command::GetUnsatCore => self.end_with_error("Cannot get unsat core unless explicitly enabled (try --produce-unsat-cores)", 1),
                    Command::GetProof => self.end_with_error("Cannot get proof unless proofs are enabled (try --produce-proofs)", 1),
                    _ => self.end_with_error("Cannot get unsat assumptions unless explicitly enabled (try --produce-unsat-assumptions)", 1),
                },
                Dialect::Yices => {
                    let msg = match (cmd, &self.last) {
                        (Command::GetAssignment, Last::Sat) => {
                            self.emit("()");
                            return outcome;
                        }
                        (Command::GetAssignment, Last::Unsat) => "the context is unsatisfiable",
                        (Command::GetAssignment, _) => "can't build the assignment. Call (check-sat) first",
                        (Command::GetUnsatCore, _) => "not supported: :produce-unsat-cores is false",
                        (Command::GetProof, _) => "get-proof is not supported",
                        _ => "not supported: :produce-unsat-assumptions is false",
                    };
                    self.emit(&response::error(msg));
                }
            },
            Command::Reset => {
                self.reset_client();
                self.success();
                self.govern_modelled(false);
                self.begin_walk();
            }
            Command::ResetAssertions if self.objective.is_some() => {
                // What z3 keeps of its objectives here is its own to say.
                return self.fall_back(text, line, col, "reset-assertions under an objective");
            }
            Command::ResetAssertions => {
                self.reset_assertions();
                self.last = Last::None;
                self.success();
            }
            Command::Echo(s) => self.echo(&s),
            Command::Exit => {
                self.success();
                outcome.exit = true;
            }
            Command::Other(_) if self.dialect == Dialect::Z3 && objective::is_optimisation(text) => {
                return self.optimisation_command(text, line, col);
            }
            Command::Other(_) => return self.fall_back(text, line, col, "command not interpreted"),
        }
        outcome
    }

    /// z3's `minimize`, `maximize` and `get-objectives`: the plain shape is taken here
    /// (`objective`), anything else goes to the solver.
    fn optimisation_command(&mut self, text: &str, line: usize, col: usize) -> Outcome {
        if crate::smt2::lex::command_head(text) == Some("get-objectives") {
            let known = match (&self.last, &self.objective) {
                (Last::Sat, Some(obj)) => self.optimum.as_ref().map(|(_, v)| obj.report(v)),
                (Last::Unknown, Some(obj)) => {
                    (self.optimum_interval.as_ref()).map(|(lo, hi)| obj.report_interval(lo, hi))
                }
                _ => None,
            };
            return match known {
                Some(r) => {
                    self.emit(&r);
                    Outcome::default()
                }
                // Before a check-sat, or after one that found no optimum: z3's own words,
                // from a solver that ran that check-sat again after the state.
                _ => {
                    if let (Last::Unsat | Last::Unknown, Some(check)) =
                        (&self.last, self.objective_check.take())
                    {
                        self.lean.check_again(&check);
                    }
                    self.fall_back(text, line, col, "get-objectives without an optimum")
                }
            };
        }
        let plain = self.objective.is_none()
            && self.client.depth() == 0
            && !self
                .client
                .options
                .iter()
                .any(|(k, _)| k.starts_with(":opt."));
        let obj = plain
            .then(|| objective::parse(&mut self.store, &self.sig, text))
            .flatten();
        let Some(obj) = obj else {
            return self.fall_back(text, line, col, "an objective smtproxy does not search");
        };
        self.objective = Some(obj);
        // Replayed with the rest of the state if the session falls back later.
        self.client.top().push_raw(text);
        self.last = Last::None;
        self.success();
        Outcome::default()
    }

    /// check-sat under the client's objective: the optimum by a search over bounds
    /// (`objective::search`), or the solver's own answer when the search gives up.
    fn optimise(&mut self, assumptions: &[TermId], text: &str, line: usize, col: usize) -> Outcome {
        let Some(obj) = self.objective.clone() else {
            return Outcome::default();
        };
        self.optimum = None;
        self.optimum_interval = None;
        self.objective_check = Some(text.to_string());
        let deadline = self.planner.deadline();
        // The search reads the objective's value in the model of every sat.
        self.planner.read_models(true);
        let mut oracle = Bounds {
            engine: self,
            obj: &obj,
            assumptions,
            t0: Instant::now(),
            deadline,
        };
        let outcome = objective::search(&obj, &mut oracle);
        self.planner.set_deadline(deadline);
        self.planner.read_models(self.flags.model_after_sat);
        let (a, optimum) = match outcome {
            objective::Outcome::GaveUp => {
                return self.fall_back(text, line, col, "the search for an optimum gave up");
            }
            objective::Outcome::OutOfTime { lo, hi } => {
                self.optimum_interval = Some((lo, hi));
                (Answer::Unknown, None)
            }
            objective::Outcome::Unsat => (Answer::Unsat, None),
            objective::Outcome::Optimum(v) => {
                (Answer::Sat, obj.bound(&mut self.store, &v).map(|b| (b, v)))
            }
        };
        self.stats.optimisations += 1;
        self.answered(a, assumptions);
        self.optimum = optimum;
        Outcome {
            check: Some(a),
            ..Outcome::default()
        }
    }

    fn check(&mut self, assumptions: &[TermId]) -> Answer {
        self.optimum = None;
        self.optimum_interval = None;
        let a = self.solve(assumptions, None);
        self.answered(a, assumptions);
        a
    }

    /// Tell the client `a`, the answer to its check-sat under `assumptions`.
    fn answered(&mut self, a: Answer, assumptions: &[TermId]) {
        if a != Answer::Sat {
            self.sat_check = None;
        }
        self.count_check(a);
        self.last = match a {
            Answer::Sat => Last::Sat,
            Answer::Unsat => Last::Unsat,
            Answer::Unknown => Last::Unknown,
        };
        self.last_assumptions = assumptions.to_vec();
        self.emit(a.as_str());
        if a == Answer::Sat && self.flags.model_after_sat && self.models_enabled() {
            let _ = self.get_model("(get-model)", 1, 1);
        }
    }

    /// The answer to the client's current query under `assumptions`, with `bound` (an
    /// objective's) asserted as well (nothing printed or counted as a client query).
    fn solve(&mut self, assumptions: &[TermId], bound: Option<TermId>) -> Answer {
        let mut assertions = self.client.assertions();
        assertions.extend(bound);
        let base: &[TermId] = if self.client.depth() > 0 {
            &self.client.frames[0].assertions
        } else {
            &[]
        };
        let base_text = if base.is_empty() {
            Vec::new()
        } else {
            self.client.base_assertion_texts()
        };
        let q = vocab::Query {
            assertions: &assertions,
            base,
            base_text: &base_text,
            assumptions,
            decls: self.client.decls(),
            defs: self.client.defs(),
            preamble: &self.client.preamble,
            logic: self.client.logic.as_deref(),
            sig: &self.sig,
            // A bound is not one of the client's commands: the block's key does not say it.
            block: self
                .block
                .as_ref()
                .filter(|b| bound.is_none() && b.repeatable())
                .map(Block::key),
        };
        let r = self.planner.check(&mut self.store, &q, &mut self.stats);
        match r {
            Ok(a) => a,
            Err(e) => {
                self.stats.note(format!("check-sat failed: {e}"));
                Answer::Unknown
            }
        }
    }

    /// The last sat's model cannot be read as it stands (`e`): the solver that held it
    /// died after answering (between the check-sat and a get-value, or during one), or it
    /// was never read (`ModelError::Unread`). Solve the same query again, models read, so
    /// that one is available. True when it is; false for any other error. (Values already
    /// given to the client came from the lost model; the new one satisfies the same
    /// assertions but may differ.)
    fn recover_model(&mut self, e: &ModelError) -> bool {
        match e {
            ModelError::Lost(why) => self.stats.note(format!(
                "the solver holding the model is gone ({why}); solving the query again"
            )),
            ModelError::Unread => {}
            ModelError::Other(_) => return false,
        }
        let assumptions = std::mem::take(&mut self.last_assumptions);
        self.planner.read_models(true);
        let a = self.solve(&assumptions, self.optimum.as_ref().map(|o| o.0));
        self.planner.read_models(self.flags.model_after_sat);
        self.last_assumptions = assumptions;
        if a != Answer::Sat {
            self.last = Last::Unknown;
        }
        a == Answer::Sat
    }

    /// An error found while running the command `text` (parsed at `line`, `col`): where z3
    /// reports it (see `run_error_position`), else at the command's start.
    fn run_error(&mut self, text: &str, line: usize, col: usize, msg: &str) {
        let (l, c) = match self.dialect {
            Dialect::Z3 => run_error_position(text, line, col),
            _ => (line, col),
        };
        self.error_at(l, c, msg);
    }

    /// yices answers get-value and get-model whatever `:produce-models` says.
    fn models_enabled(&self) -> bool {
        self.client.produce_models || self.dialect == Dialect::Yices
    }

    /// Whether get-value or get-model (`what`: "value", "model") is refused now, models
    /// being off or the last check-sat not sat; if so, the error is given as the dialect
    /// words it (z3 with its position, cvc5 and yices without).
    fn model_refused(&mut self, what: &str, text: &str, line: usize, col: usize) -> bool {
        let msg = if !self.models_enabled() {
            match self.dialect {
                // z3, told not to produce models, says only that there is none.
                Dialect::Z3 => "model is not available".to_string(),
                _ => format!(
                    "Cannot get {what} unless model generation is enabled (try --produce-models)"
                ),
            }
        } else if !matches!(self.last, Last::Sat) {
            match (self.dialect, &self.last) {
                (Dialect::Z3, _) => "model is not available".to_string(),
                (Dialect::Cvc5, _) => {
                    format!("Cannot get {what} unless after a SAT or UNKNOWN response.")
                }
                (Dialect::Yices, Last::Unsat) => "the context is unsatisfiable".to_string(),
                (Dialect::Yices, _) => "can't build a model. Call (check-sat) first".to_string(),
            }
        } else {
            return false;
        };
        match self.dialect {
            Dialect::Z3 => self.run_error(text, line, col, &msg),
            _ => self.emit(&response::error(&msg)),
        }
        true
    }

    fn get_value(&mut self, terms: &[(TermId, String)], text: &str, line: usize, col: usize) {
        if self.model_refused("value", text, line, col) {
            return;
        }
        let ts: Vec<TermId> = terms.iter().map(|t| t.0).collect();
        let busy = self.planner.busy();
        let mut r = self.planner.values(&mut self.store, &ts, self.dialect);
        if let Err(e) = &r {
            if self.recover_model(e) {
                r = self.planner.values(&mut self.store, &ts, self.dialect);
            }
        }
        self.stats.solver += self.planner.busy().saturating_sub(busy);
        match r {
            Ok(mut values) => {
                let reals = (self.client.logic.as_deref())
                    .is_some_and(crate::smt2::logic::reals_without_ints);
                if self.dialect == Dialect::Yices && !self.flags.smt2_model_format {
                    for v in &mut values {
                        *v = response::bare_integral_reals(v);
                    }
                }
                if self.dialect == Dialect::Cvc5 && reals {
                    for v in &mut values {
                        if let std::borrow::Cow::Owned(real) = response::cvc5_numeral_as_real(v) {
                            *v = real;
                        }
                    }
                }
                // cvc5 repeats each term as it parsed it, not as the client wrote it.
                let echoed: Vec<std::borrow::Cow<'_, str>> = terms
                    .iter()
                    .map(|(_, src)| match self.dialect {
                        Dialect::Cvc5 => {
                            let label = |n: &str| self.client.label_text(n);
                            crate::smt2::echo::cvc5_term(src, reals, &label).into()
                        }
                        // z3 echoes the client's text; yices re-prints the client's tokens,
                        // laid out with the values by its pretty printer, which
                        // `response::get_value` does from this text (`echo::yices_get_value`:
                        // a string's escapes are undone once, from the client's own text).
                        Dialect::Z3 | Dialect::Yices => src.as_str().into(),
                    })
                    .collect();
                let pairs: Vec<(&str, &str)> = echoed
                    .iter()
                    .zip(&values)
                    .map(|(src, v)| (src.as_ref(), v.as_str()))
                    .collect();
                self.emit(&response::get_value(self.dialect, &pairs));
                self.model_read();
            }
            Err(e) => self.run_error(text, line, col, &e.to_string()),
        }
    }

    fn get_model(&mut self, text: &str, line: usize, col: usize) -> Outcome {
        if self.model_refused("model", text, line, col) {
            return Outcome::default();
        }
        let model_unread =
            (self.sat_check.as_ref()).is_some_and(|c| !c.read && c.query == self.stats.queries);
        if self.dialect == Dialect::Yices && !self.flags.smt2_model_format && model_unread {
            // yices without `--smt2-model-format` prints its model as `(= x 1)` lines in
            // an order of its own, arrays and functions as `@fun_N` blocks: its own words,
            // from the solver that runs the check again (`recheck`).
            return self.fall_back(text, line, col, "yices' own model format");
        }
        let busy = self.planner.busy();
        let mut r = self
            .planner
            .model(&mut self.store, self.client.decls(), self.dialect);
        if let Err(e) = &r {
            if self.recover_model(e) {
                r = self
                    .planner
                    .model(&mut self.store, self.client.decls(), self.dialect);
            }
        }
        self.stats.solver += self.planner.busy().saturating_sub(busy);
        match r {
            Ok(text) => {
                self.emit(&text);
                self.model_read();
            }
            Err(e) => self.run_error(text, line, col, &e.to_string()),
        }
        Outcome::default()
    }

    /// The client has read (part of) the model of its last check-sat.
    fn model_read(&mut self) {
        if let Some(c) = self.sat_check.as_mut() {
            c.read = true;
        }
    }

    /// Drop the session's memos (parsed assertions, answered queries and components,
    /// models, the unsat index): later queries are answered as a new session would answer
    /// them, from the result store. For benches that time a store hit.
    pub fn forget_session(&mut self) {
        self.memo = CommandMemo::default();
        self.planner.forget_session();
    }

    /// Stop the backends and close the result store, at the end of a session: answers
    /// still in flight are relayed first, and nothing is answered after. The trie's last
    /// write goes on while the store closes.
    pub fn shutdown(&mut self) {
        let _ = self.finish();
        self.repeats.end();
        self.planner.shutdown(&mut self.stats);
        self.repeats.wait_saved();
        self.note_arena();
    }
}

/// The passthrough as the engine runs it: which commands go to the lean backend (`lean`),
/// which the engine answers itself (`echo`, `exit`, print-success in counted mode), and
/// when the session leaves passthrough (a reset or pop in a fall-back, the governor at a
/// reset).
impl Engine {
    /// Run `f` on the passthrough with the engine lent as its [`lean::Host`]; meanwhile
    /// `self.lean` holds an empty passthrough, which no host method touches.
    fn with_lean<R>(&mut self, f: impl FnOnce(&mut Passthrough, &mut Engine) -> R) -> R {
        let mut p = std::mem::take(&mut self.lean);
        let r = f(&mut p, self);
        self.ended = self.ended.or(p.ended());
        self.lean = p;
        r
    }

    /// Answer everything in flight (`lazy`: at the end of the client's input).
    fn pass_sync(&mut self, lazy: bool) -> Vec<Outcome> {
        self.with_lean(|p, e| p.sync_with(e, lazy))
    }

    /// One client frame in lean passthrough mode.
    fn pass_frame(&mut self, frame: Frame, more: bool) -> Vec<Outcome> {
        match frame {
            Frame::Error {
                msg,
                line,
                col,
                stray,
            } => {
                let mut outs = self.pass_sync(false);
                self.frame_error(&msg, line, col, stray.as_deref());
                outs.push(Outcome::default());
                outs
            }
            Frame::Command(raw) => {
                let gap = raw.gap.map(|g| (g, raw.gap_at));
                self.pass_command(raw.text, raw.line, raw.col, gap, more)
            }
        }
    }

    /// One client command in lean passthrough mode; `more`: the client has another
    /// complete command buffered.
    fn pass_command(
        &mut self,
        text: String,
        line: usize,
        col: usize,
        gap: Option<(String, (usize, usize))>,
        more: bool,
    ) -> Vec<Outcome> {
        let head = crate::driver::reader::command_head(&text).unwrap_or("");
        // Answers of the commands before a reset, when it ends a fall-back.
        let mut before = Vec::new();
        if head == "reset" && self.mode == Mode::ByCost {
            // The governor's window may end here; the reset then goes to whichever route
            // it chooses (a lean one is not synced, so the pipeline runs on).
            let (wall, q, bytes) = self.governed_clock();
            if self
                .governor
                .as_ref()
                .is_some_and(|g| g.due(wall, q, bytes))
            {
                before = self.pass_sync(false);
                let (wall, q, bytes) = self.governed_clock();
                let g = self.governor.as_mut().expect("checked above");
                let route = g.decide(wall, q, bytes);
                self.stats.route_switches = g.switches;
                if route == governor::Route::Modelled {
                    if self.leave_passthrough() {
                        before.push(self.command(&text, line, col));
                        return before;
                    }
                    // Something the session keeps cannot be modelled: passthrough for good.
                    self.governor = None;
                    self.keep_spare();
                }
            }
        } else if head == "reset" && self.mode == Mode::FallBack {
            before = self.pass_sync(false);
            if self.leave_passthrough() {
                before.push(self.command(&text, line, col));
                return before;
            }
        } else if head == "pop" && self.mode == Mode::FallBack {
            before = self.pass_sync(false);
            if self.leave_at_pop(&text) {
                before.push(self.command(&text, line, col));
                return before;
            }
        } else if head == "pop" && self.mode == Mode::ByCost {
            // As at a reset, where the modelled engine can take the levels left over
            // (`pop_leaves`); the governor is asked only then, so that what it chooses
            // is what runs. Nothing in flight is waited for where the levels tracked so
            // far already say it cannot.
            let (wall, q, bytes) = self.governed_clock();
            if self
                .governor
                .as_ref()
                .is_some_and(|g| g.due(wall, q, bytes))
                && self.pop_leaves(&text, false).is_some()
            {
                before = self.pass_sync(false);
                if let Some(left) = self.pop_leaves(&text, true) {
                    let (wall, q, bytes) = self.governed_clock();
                    let g = self.governor.as_mut().expect("checked above");
                    let route = g.decide(wall, q, bytes);
                    let switches = g.switches;
                    if route == governor::Route::Modelled {
                        // Counted only once made.
                        if self.model_unparsed(left) {
                            self.stats.route_switches = switches;
                            self.back_to_modelled("(pop)");
                            before.push(self.command(&text, line, col));
                            return before;
                        }
                        // An assertion the solver took and smtproxy's parser does not:
                        // the modelled engine would have passed the session through.
                        self.stats.note(
                            "an assertion smtproxy cannot read: passthrough from here on".into(),
                        );
                        self.governor = None;
                        self.keep_spare();
                    }
                }
            }
        }
        let counted = self.lean.counted();
        // print-success as this command leaves it, if it changes it.
        let mut ps_after = None;
        if matches!(head, "echo" | "exit" | "set-option" | "get-option") {
            match parse_command(&mut self.store, &self.sig, &text) {
                Ok(Command::Echo(s)) => {
                    let mut outs = self.pass_sync(false);
                    self.echo(&s);
                    if self.dialect == Dialect::Cvc5 && self.client.print_success {
                        self.emit("success");
                    }
                    outs.push(Outcome::default());
                    return outs;
                }
                Ok(Command::Exit) => {
                    let mut outs = self.pass_sync(false);
                    self.success();
                    outs.push(Outcome {
                        exit: true,
                        ..Default::default()
                    });
                    return outs;
                }
                // Counted mode keeps print-success on in the solver: the client's is ours.
                Ok(Command::SetOption(k, v)) if k == ":print-success" && counted => {
                    let mut outs = self.pass_sync(false);
                    match set_option::bool_value(self.dialect, &v) {
                        Some(on) => {
                            self.client.print_success = on;
                            self.lean.set_print_success(on);
                            self.success();
                        }
                        None => {
                            let phase = set_option::Phase::default();
                            if let Some(r) = set_option::refusal(self.dialect, &k, &v, phase, false)
                            {
                                self.refuse_option(r, &text, line, col);
                            }
                        }
                    }
                    outs.push(Outcome::default());
                    return outs;
                }
                Ok(Command::GetOption(k)) if k == ":print-success" && counted => {
                    let mut outs = self.pass_sync(false);
                    let v = self.own_option(&k).unwrap_or_default();
                    self.emit(&v);
                    outs.push(Outcome::default());
                    return outs;
                }
                Ok(Command::SetOption(k, v)) if k == ":print-success" => {
                    ps_after = set_option::bool_value(self.dialect, &v)
                }
                _ => {}
            }
        }
        let mut outs = before;
        // A probe of the lean route keeps few check-sats in flight, so that it can end
        // early (`governor`).
        let cap = match &self.governor {
            Some(g) if self.mode == Mode::ByCost && g.probing() => {
                let (wall, q, bytes) = self.governed_clock();
                Some(g.probe_cap(wall, q, bytes) as usize)
            }
            _ => None,
        };
        self.lean.limit_checks(cap);
        outs.extend(self.with_lean(|p, e| p.command(e, text, (line, col), gap, ps_after, more)));
        outs
    }

    /// A `(reset)` in a session that fell back to passthrough, with nothing in flight:
    /// what sent it there is gone unless an option the reset keeps (z3 keeps them all) is
    /// one smtproxy does not model. (A command-line flag smtproxy does not model makes
    /// passthrough the strategy, which a reset does not end.) If so, false;
    /// otherwise the lean backend is stopped and the session is back on the modelled
    /// strategies (the caller then runs the reset as the engine's own).
    fn leave_passthrough(&mut self) -> bool {
        if (self.mode == Mode::Passthrough) || !self.lean.is_idle() {
            return false;
        }
        // z3 keeps every option across a reset (`client.options` after `reset_client`).
        if !leave::leaves_at_reset(self.dialect, &self.client.options) {
            return false;
        }
        self.back_to_modelled("(reset)");
        true
    }

    /// A `(pop n)` in a session that fell back to passthrough, with nothing in flight:
    /// whether it takes away every level that holds state smtproxy did not model (see
    /// `leave::leaves_at_pop`). If so, the lean backend is stopped and the session is
    /// back on the modelled strategies (the caller then runs the pop as the engine's own).
    fn leave_at_pop(&mut self, text: &str) -> bool {
        if self.mode != Mode::FallBack {
            return false;
        }
        let leaves = self.pop_leaves(text, true).is_some();
        if leaves {
            self.back_to_modelled("(pop)");
        }
        leaves
    }

    /// Before a passthrough chosen by cost hands the session back at a pop that leaves
    /// levels `0..=left`: parse the assertions it kept as text in those levels
    /// (`ClientFrame::unparsed`), in order, against the declarations in scope now (each
    /// name it used was declared before it and is still in scope; the solver refuses a
    /// second declaration of a name). All or nothing: false, with nothing changed, when
    /// one does not parse.
    fn model_unparsed(&mut self, left: usize) -> bool {
        let mut parsed = Vec::new();
        for (level, f) in self.client.frames.iter().enumerate().take(left + 1) {
            for &i in &f.unparsed {
                let Some(raw) = f.raw().get(i) else {
                    return false;
                };
                match parse_command(&mut self.store, &self.sig, raw) {
                    Ok(Command::Assert(t, named)) if named.is_empty() => parsed.push((level, t)),
                    _ => return false,
                }
            }
        }
        for (level, t) in parsed {
            self.client.frames[level].assertions.push(t);
        }
        for f in &mut self.client.frames {
            f.unparsed.clear();
        }
        true
    }

    /// Whether the passthrough, with nothing in flight, may hand the session back to the
    /// modelled strategies at the `(pop n)` in `text` (see `leave::leaves_at_pop`): if
    /// so, the deepest level the pop leaves. `settled` false: by what has been tracked so
    /// far, with commands maybe in flight (a hint only).
    fn pop_leaves(&mut self, text: &str, settled: bool) -> Option<usize> {
        if settled && !self.lean.is_idle() {
            return None;
        }
        let (store, sig) = (&mut self.store, &self.sig);
        let mut popped = None;
        let n = || {
            popped = match parse_command(store, sig, text) {
                Ok(Command::Pop(n)) => usize::try_from(n).ok(),
                _ => None,
            };
            popped
        };
        let depth = self.client.depth();
        let leaves = leave::leaves_at_pop(
            n,
            depth,
            self.sig.global_declarations,
            &self.client.options,
            self.lean.unmodelled_from(),
        );
        // `leaves_at_pop` read the pop (0 < n <= depth) before it said yes.
        popped.filter(|_| leaves).map(|n| depth - n)
    }

    fn back_to_modelled(&mut self, at: &str) {
        let options_kept = self.fallback_options.take().as_ref() == Some(&self.client.options);
        if self.mode == Mode::FallBack {
            self.stats.note(format!("back from passthrough at {at}"));
        }
        // No model from before the passthrough is read again.
        self.planner.reset();
        if self.mode != Mode::FallBack || !options_kept {
            // The main backend ran the passthrough, or lacks options the client set
            // meanwhile: it starts again, framed, when next needed.
            self.planner.main.kill();
            self.planner.main.mode = DriverMode::Framed;
        }
        if let Some((wall, queries, bytes)) = self.aside_from.take() {
            self.aside.0 += self.wall_now().saturating_sub(wall);
            self.aside.1 += self.stats.queries.saturating_sub(queries);
            self.aside.2 += self.input_bytes.saturating_sub(bytes);
        }
        self.mode = Mode::Modelled;
        self.lean = Passthrough::default();
        self.modelled_from = (self.wall_now(), self.stats.solver, self.stats.solver_checks);
        self.keep_spare();
    }
}

/// What the passthrough needs of the engine: its backend, counters and output, and the
/// client's view, kept in step with what the solver executed (`track`).
impl lean::Host for Engine {
    /// A fall-back runs on the planner's fall-back backend, so the main one keeps its
    /// state; passthrough as the strategy, or by cost, on the main backend.
    fn backend(&mut self) -> &mut SolverHandle {
        self.planner.lean_backend(self.mode == Mode::FallBack)
    }

    fn stats(&mut self) -> &mut Stats {
        &mut self.stats
    }

    fn backend_and_stats(&mut self) -> (&mut SolverHandle, &mut Stats) {
        (
            self.planner.lean_backend(self.mode == Mode::FallBack),
            &mut self.stats,
        )
    }

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn emit(&mut self, text: &str) {
        Engine::emit(self, text);
    }

    fn relay(&mut self, bytes: &[u8]) {
        if !self.out_closed {
            let r = self.out.write_all(bytes).and_then(|_| self.out.flush());
            if r.is_err() {
                self.out_closed = true;
            }
        }
    }

    fn error_printed(&mut self) {
        self.errored = true;
    }

    fn count_check(&mut self, a: Answer) {
        Engine::count_check(self, a);
    }

    fn executed(&mut self, text: &str, head: &str) -> Tracked {
        let mut t = Tracked::default();
        match head {
            "set-info" => {
                if let Ok(Command::SetInfo(k, v)) = parse_command(&mut self.store, &self.sig, text)
                {
                    if k == ":status" {
                        t.status = Answer::parse(&v);
                    }
                }
            }
            "assert" => {
                t.model_lost = true;
                // z3 and cvc5 fix some options at an assertion (`set_option`).
                self.client.initialized |= self.dialect != Dialect::Yices;
                self.client.asserted = true;
                let depth = self.client.depth();
                let by_cost = self.mode == Mode::ByCost;
                let top = self.client.top();
                top.push_raw(text);
                // Chosen by cost, the passthrough keeps the assertion as text, to be parsed
                // if the session goes back to the modelled route at a pop
                // (`model_unparsed`); not a `:named` one, whose label later commands use.
                if by_cost && !text.contains(":named") {
                    top.unparsed.push(top.raw().len() - 1);
                } else {
                    t.unmodelled = Unmodelled::At(depth);
                }
            }
            _ => match parse_command(&mut self.store, &self.sig, text) {
                Ok(Command::SetOption(k, v)) if k == ":print-success" => {
                    self.client.print_success =
                        set_option::bool_value(self.dialect, &v) == Some(true);
                }
                Ok(cmd) => {
                    t.model_lost = cmd.changes_state() || matches!(cmd, Command::Reset);
                    self.client.initialized |= set_option::initializes(self.dialect, &cmd);
                    // Levels and options are not state of a level (options are checked
                    // when leaving).
                    let (pops, resets) = (
                        matches!(
                            cmd,
                            Command::Push(_)
                                | Command::Pop(_)
                                | Command::SetOption(..)
                                | Command::SetInfo(..)
                        ),
                        matches!(cmd, Command::Reset),
                    );
                    // Declarations and definitions are tracked whole (`track`), and
                    // what keeps no state leaves none: a passthrough chosen by cost can
                    // hand the levels they are in to the modelled route.
                    let whole =
                        self.mode == Mode::ByCost && (!cmd.changes_state() || cmd.is_declaration());
                    self.track(cmd, text);
                    if resets {
                        t.unmodelled = Unmodelled::Cleared;
                    } else if !pops && !whole {
                        t.unmodelled = Unmodelled::At(self.client.depth());
                    }
                }
                // The solver took what smtproxy cannot read: replay it as it is.
                Err(_) if !matches!(head, "push" | "pop" | "reset" | "reset-assertions") => {
                    self.client.top().push_raw(text);
                    t.unmodelled = Unmodelled::At(self.client.depth());
                }
                Err(_) => {}
            },
        }
        t
    }

    fn replay(&self) -> lean::replay::Replay {
        lean::replay::Replay {
            log: self.client.replay_log(),
            has_state: self.client_has_state(),
            print_success: self.client.print_success,
            produce_models: self.client.produce_models,
            reuse: self.mode == Mode::FallBack,
            handshake: false,
            spare: false,
        }
    }
}

/// Resolve the solver and build an engine writing to `out`.
pub fn engine_for(
    strategy: Strategy,
    solver: Option<&str>,
    timeout: Option<Duration>,
    cache: Option<crate::cache::tiered::CacheConfig>,
    out: Box<dyn Write + Send>,
) -> Result<Engine, crate::error::Error> {
    let spec = SolverSpec::resolve(solver)?;
    Engine::new(
        Config {
            strategy,
            solver: spec,
            portfolio: Vec::new(),
            timeout,
            cache,
            jobs: DEFAULT_JOBS,
            first_answer_wins: false,
            client: ClientFlags::default(),
        },
        out,
    )
}

/// The engine as the objective search's oracle: the client's query with a bound. The
/// client's deadline (`deadline`, from `t0`) is the whole search's: each check gets what
/// is left of it. The caller puts the backends' deadline back afterwards.
struct Bounds<'a> {
    engine: &'a mut Engine,
    obj: &'a objective::Objective,
    assumptions: &'a [TermId],
    t0: Instant,
    deadline: Option<Duration>,
}

impl objective::Oracle for Bounds<'_> {
    fn check(&mut self, bound: Option<&num_bigint::BigUint>) -> Answer {
        if self.out_of_time() {
            return Answer::Unknown;
        }
        let b = match bound {
            None => None,
            Some(v) => match self.obj.bound(&mut self.engine.store, v) {
                Some(b) => Some(b),
                None => return Answer::Unknown,
            },
        };
        let left = self.deadline.map(|d| d.saturating_sub(self.t0.elapsed()));
        self.engine.planner.set_deadline(left);
        self.engine.solve(self.assumptions, b)
    }

    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| self.t0.elapsed() >= d)
    }

    fn value(&mut self) -> Option<num_bigint::BigUint> {
        let e = &mut *self.engine;
        let v = e
            .planner
            .values(&mut e.store, &[self.obj.term], e.dialect)
            .ok()?;
        objective::bv_value(v.first()?)
    }
}

/// A command yices answers with `no logic set` before any `set-logic` (and after a
/// `reset`), once it has read it.
fn yices_needs_logic(cmd: &Command) -> bool {
    matches!(
        cmd,
        Command::DeclareSort(..)
            | Command::DefineSort { .. }
            | Command::DeclareFun { .. }
            | Command::DefineFun { .. }
            | Command::Push(_)
            | Command::Pop(_)
            | Command::Assert(..)
            | Command::CheckSat
            | Command::CheckSatAssuming(_)
            | Command::GetValue(_)
            | Command::GetModel
            | Command::GetAssignment
            | Command::GetUnsatCore
            | Command::GetUnsatAssumptions
            | Command::GetProof
    )
}

/// A command SMT-LIB (and smtproxy's parser) takes that yices reads as a syntax error:
/// `push` and `pop` without their numeral, `check-sat-assuming` of anything but Boolean
/// constants and their negations, and the commands yices does not have (datatypes,
/// recursive definitions: `declare-datatypes is not a command`).
fn yices_refuses(store: &TermStore, cmd: &Command, text: &str) -> bool {
    let constant =
        |t: TermId| matches!(store.op(t), crate::term::Op::Sym(_)) && store.args(t).is_empty();
    match cmd {
        Command::Push(_) | Command::Pop(_) => {
            text.as_bytes().get(position::argument_offset(text)) == Some(&b')')
        }
        Command::CheckSatAssuming(lits) => !lits.iter().all(|&l| {
            constant(l) || (store.op(l) == crate::term::Op::Not && constant(store.args(l)[0]))
        }),
        Command::DeclareDatatypes { .. } | Command::DefineFunsRec(_) => true,
        _ => false,
    }
}
