//! Lean passthrough (every passthrough session): the client's commands go to a backend
//! whose print-success is the client's (off unless the client turns it on), as they would
//! to the solver run directly, and the solver's output comes back to the client byte for
//! byte. z3 5.4 runs a stream 35% slower with print-success on, so framing each answer by
//! a `success` line is not an option.
//!
//! [`Passthrough`] owns the passthrough's state (commands in flight, closed batches, the
//! output held for the client, what a replay needs beyond the client's view); the engine
//! lends it the rest through [`Host`] (the backend, the counters, the client's output and
//! view). The engine decides which commands come here (it answers `echo` and `exit`, and
//! leaves passthrough at a reset or pop, see `leave`); this module sends them, reads the
//! solver's output and accounts for every command. Framing (`frame`), attribution of
//! output (`attribute`), the output buffer (`relay`) and the replay after a death
//! (`replay`) are leaves of their own.
//!
//! Framing without per-command answers: commands are written as they arrive, each preceded
//! by the client's own text before it (whitespace, comments), or by whitespace that puts
//! it at the client's line and column; a batch is closed by one marker
//! `(echo "sp!sync-N")` on the line of its last command. A batch is closed before smtproxy
//! waits for the client (the client has no complete command buffered), before anything
//! smtproxy answers itself (`echo`, `exit`, input it cannot frame), after
//! [`frame::GROUP_MAX`] commands, and around any command whose output is not known in
//! shape. At most [`frame::PIPELINE_MAX`] commands are in flight; then the oldest batch is
//! waited for (a governor's probe of this route: at most a few check-sats, see
//! `Passthrough::limit_checks`). Commands are buffered and reach the solver's pipe when a
//! batch is closed.
//! While the client is not waiting (it has sent more, or its input has ended) the solver's
//! output is read [`LAZY_READ`] apart and passed on in large writes: a wake-up per answer
//! the solver writes costs the solver time on a busy machine (yices writes a get-value
//! answer in dozens of small writes). The pause keeps the solver's stdin fed (input the
//! pipe had no room for goes in as it takes it) and is skipped once the solver has read
//! everything sent: a pause then only leaves it idle (a fixed 1 ms sleep left yices idle
//! with its input queued here, about 10 ms of 60 on sbase-expr's solver-queries).
//!
//! Invariants:
//! * Every byte the solver prints reaches the client in order, except markers and the
//!   line break after each; output settled so far is written (and flushed) before
//!   smtproxy waits for the solver or for the client. Markers never reach the client.
//! * The solver's input is the client's stream (apart from `echo`, `exit`, text smtproxy
//!   cannot frame, and markers at the ends of lines), so its error messages carry the
//!   client's line and column numbers. A replay of the client's state (after a restart,
//!   or when a session turns to passthrough) goes on one line, so a later line of the
//!   client's keeps its number; a marker between two commands on one line shifts the
//!   second (`position` moves such errors back to the client's).
//! * Output is attributed to commands once their batch's marker arrives (`attribute`).
//!   Attribution decides only what is tracked for a replay and what check-sat answered,
//!   never what the client sees.
//! * A command's state is tracked (for a replay into a restarted solver) only once the
//!   solver has executed it without an error (`Host::executed`); parsing happens then, in
//!   order, so it sees every declaration before it. Assertions are kept as text, never
//!   parsed here (a passthrough chosen by cost has them parsed when it hands the session
//!   back to the modelled route at a pop).
//! * A death or a deadline: the batch is attributed as far as its output goes; what
//!   follows is unobserved. A check-sat past the deadline answers `unknown`; the solver is
//!   restarted, the client's state replayed, and every unobserved command sent again, each
//!   in a batch of its own, so a further death names its command exactly; a command that
//!   the solver dies on twice while alone in its batch is answered with an error (`unknown`
//!   for a check-sat).
//! * A solver that printed an error, has read all its input, uses no CPU and leaves its
//!   marker unanswered for two looks [`STUCK_PROBE`] apart has stopped executing commands
//!   (z3 swallows the rest of its input after a lexical error right after a parenthesis):
//!   it is treated as dead.
//! * Print-success in the solver is the client's: the client's own `set-option` is sent
//!   (in a batch of its own), `success` lines are relayed like any output, and a replay
//!   ends by setting it as the client had it. Only `echo` (its raw output could not be
//!   framed) and `exit` are answered by smtproxy, after everything before them.
//! * z3 and yices get batches of up to [`frame::GROUP_MAX`] commands; cvc5 and custom
//!   solvers, which exit after many errors or print errors without positions, get one
//!   marker per command, so attribution is exact. cvc5 quotes the input line in parse
//!   errors; the marker text is cut out of error messages.
//! * A solver that prints an error for a client's command and then exits by itself ended
//!   the session (cvc5 after a parse error, yices, run as the client runs it, after a
//!   syntax error or an undefined name): nothing more is sent or answered, and the
//!   client's session ends with the solver's exit code ([`Passthrough::ended`]).
//! * yices runs marker-framed with the client's print-success until the client's first
//!   `check-sat-assuming`; then everything in flight is answered and the client's state
//!   replayed into a new yices in counted mode (`frame::needs_counted`), where it stays.

pub mod attribute;
pub mod frame;
pub mod leave;
pub mod position;
pub mod relay;
pub mod replay;

use crate::driver::reader::command_head;
use crate::driver::{DriverError, LeanEvent};
use crate::session::backend::{DriverMode, SolverHandle};
use crate::session::stats::Stats;
use crate::session::vocab::{Answer, Outcome};
use crate::smt2::response::{self, Dialect};
use attribute::{align, starts_by, FormInfo};
use frame::{
    batch_max, classify, is_check_head, lead_in, needs_counted, Kind, LeanCmd, PIPELINE_MAX,
};
use relay::Relay;
use replay::Replay;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Pause before reading more solver output when the client is not waiting for it.
const LAZY_READ: Duration = Duration::from_millis(1);
/// Output held back for the client, when it is not waiting, before it is written.
const LAZY_OUT: usize = 64 * 1024;

/// How often a solver that printed an error and has not answered its marker is looked at.
const STUCK_PROBE: Duration = Duration::from_millis(200);

/// What the passthrough needs of the session it runs in. While a [`Passthrough`] method
/// runs, the host's methods must not reach that passthrough (the engine lends itself with
/// the passthrough taken out).
pub trait Host {
    /// The lean backend.
    fn backend(&mut self) -> &mut SolverHandle;
    fn stats(&mut self) -> &mut Stats;
    /// Both at once (a replay counts the solver's time in each).
    fn backend_and_stats(&mut self) -> (&mut SolverHandle, &mut Stats);
    /// The client's dialect.
    fn dialect(&self) -> Dialect;
    /// A line smtproxy answers itself (`unknown` past the deadline, an error).
    fn emit(&mut self, text: &str);
    /// The solver's own bytes, written to the client as they are, and flushed.
    fn relay(&mut self, bytes: &[u8]);
    /// The solver printed an `(error ...)` for a client command (the client gets it).
    fn error_printed(&mut self);
    /// A client check-sat answered: count it.
    fn count_check(&mut self, a: Answer);
    /// The solver executed `text` (command `head`: a `set-info`, or a command that changes
    /// state and printed no error): keep the client's view in step, for a replay.
    fn executed(&mut self, text: &str, head: &str) -> Tracked;
    /// The client's state, for a replay into a new backend.
    fn replay(&self) -> Replay;
}

/// What the host made of an executed command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tracked {
    /// A `(set-info :status ...)`.
    pub status: Option<Answer>,
    /// The command changed the state: the last check-sat's model is gone.
    pub model_lost: bool,
    pub unmodelled: Unmodelled,
}

/// What an executed command did to the levels holding state smtproxy did not model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unmodelled {
    /// Nothing (levels, options, a command that changed nothing).
    #[default]
    Untouched,
    /// State went to the solver at this client level.
    At(usize),
    /// A reset: nothing is left.
    Cleared,
}

/// The lean passthrough: its commands in flight and its backend's state.
#[derive(Default)]
pub struct Passthrough {
    /// Commands sent and not yet accounted for, oldest first.
    inflight: VecDeque<LeanCmd>,
    /// How many of `inflight` are check-sats (kept with it by `send` and `take_inflight`).
    checks_inflight: usize,
    /// Closed batches, oldest first: (marker, number of commands).
    batches: VecDeque<(u64, usize)>,
    /// Commands at the back of `inflight` not yet closed by a marker.
    open: usize,
    /// Forms of the oldest batch received so far.
    forms: Vec<FormInfo>,
    /// Solver output for the client not yet written.
    out: Relay,
    /// print-success as the client has it after the last command sent (in marker mode
    /// the solver has the same).
    ps: bool,
    /// The backend must be rebuilt from the client's state before the next command.
    stale: bool,
    /// Counted mode (`frame::needs_counted`, yices after a check-sat-assuming):
    /// print-success on in the solver, one form per command, no markers between the
    /// client's commands; else batches are closed by markers and print-success is the
    /// client's. Kept across rebuilds (the replay turns print-success on again).
    counted: bool,
    /// The backend generation the state was last rebuilt into.
    generation: u64,
    /// The last check-sat command, while its `sat` model is current (no state-changing
    /// command since): a rebuilt backend runs it again after the replay, so that
    /// get-value / get-model still find a model.
    model_check: Option<String>,
    /// In a fall-back, the lowest assertion level that holds state smtproxy did not model:
    /// the level of the command that sent the session to passthrough, lowered by every
    /// state-changing command since (their assertions are kept as text only). A pop
    /// below it leaves nothing unmodelled in the client's frames (`leave::leaves_at_pop`).
    unmodelled_from: Option<usize>,
    /// The solver ended the session itself, exiting with this code right after an error
    /// in a client command (cvc5 after a parse error, yices after an undefined name):
    /// nothing more is sent, and the client's session ends as the solver's did.
    ended: Option<i32>,
    /// The client's solver goes on after a syntax error (`going_on_after_errors`).
    goes_on: bool,
    /// At most this many check-sats in flight (a governor's probe); None: only
    /// [`PIPELINE_MAX`] commands bound the pipeline.
    checks_max: Option<usize>,
    /// Every new process is waited for before the client's commands go to it, and the wait
    /// counted as its start (`replay::Replay::handshake`): a passthrough the governor
    /// chose, whose cost it measures.
    handshake: bool,
    /// A new process may be the backend's warmed spare (`replay::Replay::spare`).
    spare: bool,
}

impl Passthrough {
    /// The state of a passthrough whose backend is `generation`; `stale`: rebuild it first.
    pub fn new(generation: u64, stale: bool) -> Passthrough {
        Passthrough {
            generation,
            stale,
            ..Default::default()
        }
    }

    /// A passthrough whose cost the governor measures: each new process's start is waited
    /// for on its own and counted as a start, not as the client's queries' time.
    pub fn measuring_queries(mut self) -> Passthrough {
        self.handshake = true;
        self
    }

    /// A new process may be the backend's warmed spare (`replay::Replay::spare`): a turn to
    /// this route at a pop, whose session keeps the context a spare built.
    pub fn warm_start(mut self, on: bool) -> Passthrough {
        self.spare = on;
        self
    }

    /// The client's solver goes on after a syntax error (yices `--interactive`): a solver
    /// that exits after one is restarted with the client's state instead of ending the
    /// session.
    pub fn going_on_after_errors(mut self) -> Passthrough {
        self.goes_on = true;
        self
    }

    /// The session falls back to passthrough at client level `depth`: the client's state
    /// is replayed into a lean backend before the next command.
    pub fn fall_back(&mut self, depth: usize) {
        self.stale = true;
        self.unmodelled_from = Some(depth);
    }

    /// Have the next replay run `check` (the client's last check-sat) again after the
    /// state, whatever it answered: what a command the solver answers next depends on it
    /// (z3's get-objectives).
    pub fn check_again(&mut self, check: &str) {
        self.model_check = Some(check.to_string());
    }

    /// The exit code of a solver that ended the session on a client command's error.
    pub fn ended(&self) -> Option<i32> {
        self.ended
    }

    /// Whether no command is in flight.
    pub fn is_idle(&self) -> bool {
        self.inflight.is_empty()
    }

    /// The lowest client level holding state smtproxy did not model, if any.
    pub fn unmodelled_from(&self) -> Option<usize> {
        self.unmodelled_from
    }

    /// Whether the backend runs in counted mode (then smtproxy answers the client's
    /// print-success itself).
    pub fn counted(&self) -> bool {
        self.counted
    }

    /// print-success as the client has it from now on (counted mode, where smtproxy
    /// answers the client's print-success itself).
    pub fn set_print_success(&mut self, ps: bool) {
        self.ps = ps;
    }

    /// Send one client command; `ps_after`: print-success as the command leaves it, if it
    /// is a `set-option` of it; `more`: the client has another complete command buffered.
    /// Returns the outcomes of the commands accounted for meanwhile, in order.
    pub fn command(
        &mut self,
        host: &mut impl Host,
        text: String,
        (line, col): (usize, usize),
        gap: Option<(String, (usize, usize))>,
        ps_after: Option<bool>,
        more: bool,
    ) -> Vec<Outcome> {
        let mut outs = Vec::new();
        let head = command_head(&text).unwrap_or("");
        // Between batches, a solver that has died is noticed before anything is written to
        // it (the client's commands then go to a rebuilt one, not into a dead pipe).
        let idle = self.inflight.is_empty();
        let h = host.backend();
        if self.stale
            || (idle && !h.is_alive())
            || !h.is_running()
            || h.generation != self.generation
            || h.mode != DriverMode::Lean
        {
            outs.extend(self.sync(host));
            if let Err(e) = self.rebuild(host) {
                host.emit(&response::error(&format!("solver failed: {e}")));
                outs.push(Outcome::default());
                return outs;
            }
        }
        if !self.counted && needs_counted(host.backend().spec().kind, head) {
            // Everything before is answered under markers; then the client's state goes
            // into a new process that counts answers from the start, as a restart does
            // (turning print-success on in the running yices after markers made it exit
            // at the next get-unsat-assumptions).
            outs.extend(self.sync(host));
            self.counted = true;
            if let Err(e) = self.rebuild(host) {
                host.emit(&response::error(&format!("solver failed: {e}")));
                outs.push(Outcome::default());
                return outs;
            }
        }
        let counted = self.counted;
        let head_is_reset = head == "reset";
        let dialect = host.dialect();
        let kind = if counted {
            Kind::Answer
        } else if ps_after.is_some() {
            Kind::Alone
        } else {
            classify(head, self.ps, dialect)
        };
        if kind == Kind::Alone {
            self.close(host);
        }
        let quiet = counted && !self.ps;
        self.send(
            host,
            LeanCmd {
                text,
                line,
                col,
                gap,
                kind,
                start: (0, 0),
                attempts: 0,
                quiet,
            },
        );
        if let Some(ps) = ps_after {
            self.ps = ps;
        } else if head_is_reset && dialect == Dialect::Cvc5 {
            self.ps = false;
        }
        if kind == Kind::Alone || self.open >= batch_max(host.backend().spec().kind) || !more {
            self.close(host);
        }
        if !more {
            outs.extend(self.sync(host));
        } else if self.inflight.len() >= PIPELINE_MAX {
            let keep = self.batches.len().saturating_sub(1);
            outs.extend(self.drain(host, keep, true));
        } else if self.checks_max.is_some_and(|m| self.checks_inflight >= m) {
            outs.extend(self.sync(host));
        }
        outs
    }

    /// Keep at most `max` check-sats in flight from the next command on (None: no bound
    /// but [`PIPELINE_MAX`] commands).
    pub fn limit_checks(&mut self, max: Option<usize>) {
        self.checks_max = max;
    }

    /// The oldest `n` commands in flight (all of them if fewer), taken out.
    fn take_inflight(&mut self, n: usize) -> Vec<LeanCmd> {
        let cmds: Vec<LeanCmd> = self.inflight.drain(..n.min(self.inflight.len())).collect();
        let checks = cmds.iter().filter(|c| is_check_head(&c.text)).count();
        self.checks_inflight -= checks;
        cmds
    }

    /// Answer everything in flight (`lazy`: at the end of the client's input).
    pub fn sync_with(&mut self, host: &mut impl Host, lazy: bool) -> Vec<Outcome> {
        self.close(host);
        let outs = self.drain(host, 0, lazy);
        self.flush_out(host);
        outs
    }

    /// Answer everything in flight: the client waits.
    pub fn sync(&mut self, host: &mut impl Host) -> Vec<Outcome> {
        self.sync_with(host, false)
    }

    /// Kill, restart in lean mode and replay the client's state (see `replay`).
    fn rebuild(&mut self, host: &mut impl Host) -> Result<(), DriverError> {
        let mut r = host.replay();
        r.handshake = self.handshake;
        r.spare = self.spare;
        let (h, stats) = host.backend_and_stats();
        replay::rebuild(h, stats, &r, self.model_check.as_deref(), self.counted)?;
        self.ps = r.print_success;
        self.out.new_solver();
        self.stale = false;
        self.generation = host.backend().generation;
        Ok(())
    }

    /// A form of the solver's as the client is to see it: an error about a command that
    /// the solver read elsewhere than the client wrote it (after a replay or a marker)
    /// gets the client's position (`position::relocate`).
    fn for_client(&self, raw: Vec<u8>, info: &FormInfo, dialect: Dialect) -> Vec<u8> {
        let Some(p) = info.pos() else {
            return raw;
        };
        let k = self.inflight.partition_point(|c| starts_by(c, p));
        let Some(c) = k.checked_sub(1).and_then(|k| self.inflight.get(k)) else {
            return raw;
        };
        let moved = std::str::from_utf8(&raw)
            .ok()
            .and_then(|m| position::relocate(m, dialect, c.start, (c.line, c.col)));
        moved.map_or(raw, String::into_bytes)
    }

    /// Write one command at the client's position.
    fn send(&mut self, host: &mut impl Host, mut c: LeanCmd) {
        if let Some(s) = host.backend().lean_mut() {
            // The client's own text only the first time: a resent command follows a replay.
            let g = c.gap.take();
            s.write(&lead_in(s.position(), g.as_ref(), c.line, c.col));
            c.start = s.position();
            s.write(&c.text);
        }
        self.checks_inflight += usize::from(is_check_head(&c.text));
        self.inflight.push_back(c);
        self.open += 1;
    }

    /// Close the open batch with a marker.
    fn close(&mut self, host: &mut impl Host) {
        if self.open == 0 {
            return;
        }
        let ps = self.ps;
        let counted = self.counted;
        let h = host.backend();
        let n = match h.lean_mut() {
            Some(s) if counted => {
                // yices executes a command once the line it is on is complete.
                if s.position().1 != 1 {
                    s.write("\n");
                }
                s.flush();
                0
            }
            Some(s) => s.mark(ps),
            None => 0,
        };
        self.batches.push_back((n, self.open));
        self.open = 0;
    }

    fn flush_out(&mut self, host: &mut impl Host) {
        if self.out.is_empty() {
            return;
        }
        host.relay(self.out.bytes());
        self.out.clear();
    }

    /// Read the solver's output until at most `keep` batches are in flight. `lazy`: the
    /// client is not waiting for an answer (it has sent more, or its input ended): the
    /// solver's output is taken [`LAZY_READ`] apart rather than at each answer it writes
    /// (a wake-up per answer costs the solver time too), and passed on in large writes.
    fn drain(&mut self, host: &mut impl Host, keep: usize, lazy: bool) -> Vec<Outcome> {
        let mut outs = Vec::new();
        let mut progress = Instant::now();
        let mut probe = None;
        let dialect = host.dialect();
        let counted = self.counted;
        while self.batches.len() > keep {
            let timeout = host.backend().timeout;
            let mut wait = timeout.map(|t| t.saturating_sub(progress.elapsed()));
            // After an error the solver may have stopped executing commands: look at it
            // every STUCK_PROBE while its marker is missing.
            let suspicious = self.forms.iter().any(|f| f.err_like);
            if suspicious {
                wait = Some(wait.map_or(STUCK_PROBE, |w| w.min(STUCK_PROBE)));
            }
            let t0 = Instant::now();
            let ev = match host.backend().lean_mut() {
                Some(s) => s.next_event(wait),
                None => Err(DriverError::Protocol("solver not running".into())),
            };
            let dt = t0.elapsed();
            host.backend().busy += dt;
            host.stats().solver += dt;
            match ev {
                Ok(LeanEvent::Form { raw, form }) => {
                    let info = FormInfo::new(form, dialect);
                    if info.text.starts_with("(error") {
                        host.error_printed();
                    }
                    let raw = self.for_client(raw, &info, dialect);
                    let form = &info.text;
                    let quiet = self.inflight.get(self.forms.len()).is_some_and(|c| c.quiet);
                    if quiet && form == "success" && raw.ends_with(b"success") {
                        self.out.push(&raw[..raw.len() - 7]);
                        self.out.skip_line_break();
                    } else if counted {
                        // The batch may be complete with this form: its line break is
                        // given now (the solver's own is dropped when it comes).
                        self.out.push(&raw);
                        self.out.push(b"\n");
                        self.out.skip_line_break();
                    } else {
                        self.out.push(&raw);
                    }
                    self.forms.push(info);
                    progress = Instant::now();
                    probe = None;
                    if counted
                        && self
                            .batches
                            .front()
                            .is_some_and(|b| b.1 == self.forms.len())
                    {
                        outs.extend(self.settle_front(host));
                    }
                }
                Ok(LeanEvent::Silence) => {
                    let failure = if let Some(t) = timeout.filter(|&t| progress.elapsed() >= t) {
                        Some(DriverError::Timeout { after: t })
                    } else if suspicious {
                        let p = host.backend().lean_mut().and_then(|s| s.idle_probe());
                        let stuck = p.is_some() && p == probe;
                        probe = p;
                        stuck.then(|| {
                            DriverError::Protocol(
                                "solver stopped executing commands after an error".into(),
                            )
                        })
                    } else {
                        None
                    };
                    if let Some(e) = failure {
                        self.flush_out(host);
                        outs.extend(self.failed(host, e));
                        progress = Instant::now();
                        probe = None;
                    }
                }
                Ok(LeanEvent::Idle(bytes)) => {
                    self.out.push(&bytes);
                    if !lazy || self.out.len() >= LAZY_OUT {
                        self.flush_out(host);
                    }
                    if lazy {
                        // A pause, not a sleep: input the pipe had no room for goes on
                        // into it, and none is taken once the solver has read it all.
                        if let Some(s) = host.backend().lean_mut() {
                            s.nap(LAZY_READ);
                        }
                    }
                }
                Ok(LeanEvent::Marker { n, before }) => {
                    self.out.push(&before);
                    progress = Instant::now();
                    probe = None;
                    debug_assert_eq!(
                        self.batches.front().map(|b| b.0),
                        Some(n),
                        "markers answered in order"
                    );
                    outs.extend(self.settle_front(host));
                }
                Err(e) => {
                    self.flush_out(host);
                    outs.extend(self.failed(host, e));
                    progress = Instant::now();
                    probe = None;
                }
            }
        }
        outs
    }

    /// The oldest batch is complete: attribute its forms and account for its commands.
    fn settle_front(&mut self, host: &mut impl Host) -> Vec<Outcome> {
        let Some((_, count)) = self.batches.pop_front() else {
            return Vec::new();
        };
        let cmds = self.take_inflight(count);
        let forms = std::mem::take(&mut self.forms);
        let (assign, _) = align(&cmds, &forms, true);
        let mut outs = Vec::with_capacity(cmds.len());
        for (c, idx) in cmds.iter().zip(&assign) {
            let form = idx.first().map(|&k| &forms[k]);
            outs.push(self.settle(host, c, form));
        }
        outs
    }

    /// The answer smtproxy gives for a command the solver did not answer: `unknown` for
    /// a check-sat (counted as one), else the error `msg`.
    fn unanswered(host: &mut impl Host, c: &LeanCmd, msg: &str) -> Outcome {
        let mut o = Outcome::default();
        if is_check_head(&c.text) {
            host.count_check(Answer::Unknown);
            o.check = Some(Answer::Unknown);
            host.emit("unknown");
        } else {
            host.emit(&response::error(msg));
        }
        o
    }

    /// The solver died or ran past the deadline while batches were in flight.
    fn failed(&mut self, host: &mut impl Host, e: DriverError) -> Vec<Outcome> {
        let mut outs = Vec::new();
        host.backend().kill();
        self.stale = true;
        let front = self.batches.front().map_or(0, |b| b.1);
        let mut all = self.take_inflight(usize::MAX);
        self.batches.clear();
        self.open = 0;
        let forms = std::mem::take(&mut self.forms);
        let front = front.min(all.len());
        let (assign, observed) = align(&all[..front], &forms, false);
        for (c, idx) in all[..observed].iter().zip(&assign) {
            let form = idx.first().map(|&k| &forms[k]);
            outs.push(self.settle(host, c, form));
        }
        let mut rest = all.split_off(observed);
        if let DriverError::Died {
            exit: Some(code), ..
        } = e
        {
            let last = forms.len().checked_sub(1);
            // yices --interactive goes on after a syntax error, not after an undefined name.
            let goes_on = |f: &FormInfo| self.goes_on && f.text.contains("syntax error");
            let erred = last.is_some_and(|k| forms[k].err_like && !goes_on(&forms[k]))
                && observed > 0
                && assign[observed - 1].last() == last.as_ref();
            if erred {
                // The solver printed an error for the client's command and exited by
                // itself: it ended the session (cvc5 and yices do on some errors when
                // they read a script). The client's session ends the same way; the
                // commands after it were never run.
                host.stats().note(format!(
                    "the solver ended the session after an error (exit code {code})"
                ));
                self.ended = Some(code);
                outs.push(Outcome {
                    exit: true,
                    ..Default::default()
                });
                return outs;
            }
        }
        match e {
            DriverError::Timeout { .. } if !rest.is_empty() => {
                host.stats().timeouts += 1;
                // The first answering command is what ran out of time; silent ones before
                // it are taken as done (their state is replayed).
                let k = rest
                    .iter()
                    .position(|c| c.kind != Kind::Silent)
                    .unwrap_or(0);
                for c in rest.drain(..k) {
                    outs.push(self.settle(host, &c, None));
                }
                let c = rest.remove(0);
                outs.push(Self::unanswered(host, &c, "solver timed out"));
            }
            e => {
                host.stats()
                    .note(format!("solver failed under a pipeline: {e}; resending"));
                // Only a command alone in its batch is surely the one the solver died on
                // (commands resent after a failure go one per batch).
                if let Some(c) = rest.first_mut().filter(|_| front == 1) {
                    c.attempts += 1;
                    if c.attempts >= 2 {
                        let c = rest.remove(0);
                        outs.push(Self::unanswered(host, &c, &format!("solver died: {e}")));
                    }
                }
            }
        }
        if rest.is_empty() {
            return outs;
        }
        if let Err(e) = self.rebuild(host) {
            for c in rest {
                host.emit(&response::error(&format!("solver failed: {e}")));
                let mut o = Outcome::default();
                if is_check_head(&c.text) {
                    host.count_check(Answer::Unknown);
                    o.check = Some(Answer::Unknown);
                }
                outs.push(o);
            }
            return outs;
        }
        // Each in a batch of its own: a second failure names its command.
        for c in rest {
            self.send(host, c);
            self.close(host);
        }
        outs
    }

    /// Account for one executed command: what its form says, and its state if it succeeded.
    fn settle(&mut self, host: &mut impl Host, c: &LeanCmd, form: Option<&FormInfo>) -> Outcome {
        let mut o = Outcome::default();
        let head = command_head(&c.text).unwrap_or("");
        let failed = form.is_some_and(|f| f.err_like);
        let tracked = match head {
            "check-sat" | "check-sat-assuming" => {
                let a = match form.map(|f| f.text.as_str()) {
                    Some("sat") => Answer::Sat,
                    Some("unsat") => Answer::Unsat,
                    _ => Answer::Unknown,
                };
                host.count_check(a);
                host.stats().solver_checks += 1;
                host.backend().checks += 1;
                o.check = Some(a);
                // After a crash, the rebuilt solver checks it again so the model is there.
                self.model_check = (a == Answer::Sat).then(|| c.text.clone());
                return o;
            }
            "set-info" => host.executed(&c.text, head),
            // What changes the solver's state is what does not answer (with print-success
            // off).
            _ if !failed && classify(head, false, host.dialect()) != Kind::Answer => {
                host.executed(&c.text, head)
            }
            _ => return o,
        };
        o.status = tracked.status;
        if tracked.model_lost {
            self.model_check = None;
        }
        match tracked.unmodelled {
            Unmodelled::Untouched => {}
            Unmodelled::At(depth) => {
                let from = self.unmodelled_from.get_or_insert(depth);
                *from = (*from).min(depth);
            }
            Unmodelled::Cleared => self.unmodelled_from = None,
        }
        o
    }
}
