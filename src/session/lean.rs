//! Lean passthrough (every passthrough session): the client's commands go to a backend
//! whose print-success is the client's (off unless the client turns it on), as they would
//! to the solver run directly, and the solver's output comes back to the client byte for
//! byte. z3 5.4 runs a stream 35% slower with print-success on, so framing each answer by
//! a `success` line is not an option.
//!
//! Framing without per-command answers: commands are written as they arrive, each preceded
//! by the client's own text before it (whitespace, comments), or by whitespace that puts
//! it at the client's line and column; a batch is closed by one marker
//! `(echo "sp!sync-N")` on the line of its last command. A batch is closed before smtproxy
//! waits for the client (the client has no complete command buffered), before anything
//! smtproxy answers itself (`echo`, `exit`, input it cannot frame), after [`GROUP_MAX`]
//! commands, and around any command whose output is not known in shape. At most
//! [`super::PIPELINE_MAX`] commands are in flight; then the oldest batch is waited for.
//! Commands are buffered and reach the solver's pipe when a batch is closed. While the
//! client is not waiting (it has sent more, or its input has ended) the solver's output
//! is read [`LAZY_READ`] apart and passed on in large writes: a wake-up per answer the
//! solver writes costs the solver time on a busy machine.
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
//!   second, and so does yices' own first command (`LeanSolver::start`) on line 1.
//! * Output is attributed to commands once their batch's marker arrives, by shape: a
//!   `Silent` command prints nothing or one error (or `unsupported`), an `Answer` command
//!   exactly one form, an `Alone` command (anything else) is a batch of its own. When
//!   errors outnumber what the count explains, the error's own position (z3, yices)
//!   names the command; else the earliest silent command takes it. Attribution decides
//!   only what is tracked for a replay and what check-sat answered, never what the client
//!   sees.
//! * A command's state is tracked (for a replay into a restarted solver) only once the
//!   solver has executed it without an error; parsing happens then, in order, so it sees
//!   every declaration before it. Assertions are kept as text, never parsed.
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
//! * Only z3 gets batches of up to [`GROUP_MAX`] commands; cvc5, yices and custom solvers,
//!   which exit after many errors or print errors without positions, get one marker per
//!   command, so attribution is exact. cvc5 quotes the input line in parse errors; the
//!   marker text is cut out of error messages.

use super::backend::DriverMode;
use super::*;
use crate::driver::reader::command_head;
use crate::driver::LeanEvent;
use std::collections::VecDeque;

/// Commands per batch at most.
pub(super) const GROUP_MAX: usize = 64;

/// Pause before reading more solver output when the client is not waiting for it.
const LAZY_READ: Duration = Duration::from_millis(1);
/// Output held back for the client, when it is not waiting, before it is written.
const LAZY_OUT: usize = 64 * 1024;

/// How often a solver that printed an error and has not answered its marker is looked at.
const STUCK_PROBE: Duration = Duration::from_millis(200);

/// What a command prints with print-success off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Nothing on success; one `(error ...)` or `unsupported` otherwise.
    Silent,
    /// Exactly one form: its answer or an error.
    Answer,
    /// Unknown shape (solver extensions, unreadable input): sent in a batch of its own.
    Alone,
}

/// The shape of a command's output; `ps`: print-success is on in the solver when it runs.
pub(super) fn classify(head: &str, ps: bool, dialect: Dialect) -> Kind {
    let kind = match head {
        "set-logic" | "set-option" | "set-info" | "declare-sort" | "define-sort"
        | "declare-fun" | "declare-const" | "define-fun" | "define-fun-rec" | "define-funs-rec"
        | "declare-datatype" | "declare-datatypes" | "push" | "pop" | "assert" | "reset"
        | "reset-assertions" => Kind::Silent,
        "check-sat"
        | "check-sat-assuming"
        | "get-value"
        | "get-model"
        | "get-info"
        | "get-option"
        | "get-assertions"
        | "get-assignment"
        | "get-unsat-core"
        | "get-unsat-assumptions"
        | "get-proof" => Kind::Answer,
        _ => Kind::Alone,
    };
    // With print-success on a silent command prints `success` or an error, except
    // cvc5's `(reset)`, which turns print-success off and prints nothing.
    if kind == Kind::Silent && ps && !(head == "reset" && dialect == Dialect::Cvc5) {
        Kind::Answer
    } else {
        kind
    }
}

/// A command sent to the lean backend and not yet accounted for.
#[derive(Clone, Debug)]
pub(super) struct LeanCmd {
    text: String,
    line: usize,
    col: usize,
    /// The client's text before the command and where it begins (see `lead_in`).
    gap: Option<(String, (usize, usize))>,
    kind: Kind,
    /// Where its first byte landed in the solver's input.
    start: (usize, usize),
    /// Deaths of the solver while this was the first unobserved command.
    attempts: u8,
    /// Counted mode: the client has print-success off, so a `success` it prints is not
    /// passed on.
    quiet: bool,
}

/// One output form of a batch, as attribution sees it.
#[derive(Clone, Debug)]
pub(super) struct FormInfo {
    text: String,
    /// `(error ...)` or `unsupported`: what a silent command may print.
    err_like: bool,
    /// The solver's position in an error message (z3, yices), if any.
    pos: Option<(usize, usize)>,
}

impl FormInfo {
    fn new(text: String, dialect: Dialect) -> FormInfo {
        let is_err = text.starts_with("(error");
        let err_like = is_err || text == "unsupported";
        let pos = if is_err && dialect != Dialect::Cvc5 {
            error_position(&text)
        } else {
            None
        };
        FormInfo {
            text,
            err_like,
            pos,
        }
    }
}

/// `line L column C` (z3) or `at line L, column C` (yices) in an error message.
fn error_position(msg: &str) -> Option<(usize, usize)> {
    let num = |s: &str| -> Option<(usize, usize)> {
        let d = s.bytes().take_while(u8::is_ascii_digit).count();
        Some((s.get(..d)?.parse().ok()?, d))
    };
    let i = msg.find("line ")?;
    let rest = &msg[i + 5..];
    let (line, d) = num(rest)?;
    let rest = &rest[d..];
    let j = rest.find("column ")?;
    if j > 3 {
        return None;
    }
    let (col, _) = num(&rest[j + 7..])?;
    Some((line, col))
}

/// Which form (index) each command printed. `complete`: the batch's marker arrived, so
/// every form is known. Returns the assignment and how many commands are observed (the
/// rest of a batch cut short by a death are not).
pub(super) fn align(
    cmds: &[LeanCmd],
    forms: &[FormInfo],
    complete: bool,
) -> (Vec<Vec<usize>>, usize) {
    let n = cmds.len();
    let mut out = vec![Vec::new(); n];
    if n == 1 && cmds[0].kind == Kind::Alone {
        out[0] = (0..forms.len()).collect();
        let observed = usize::from(complete || !forms.is_empty());
        return (out, observed);
    }
    // The command a position falls in: the last one starting at or before it.
    let owner = |p: (usize, usize)| -> Option<usize> {
        let p = (p.0, p.1 + 1);
        let k = cmds.partition_point(|c| c.start <= p);
        k.checked_sub(1)
    };
    let answers = cmds.iter().filter(|c| c.kind != Kind::Silent).count();
    let mut extra = forms.len().saturating_sub(answers);
    let mut answers_left = answers;
    let mut j = 0;
    let mut last_taken = None;
    for (i, c) in cmds.iter().enumerate() {
        let Some(f) = forms.get(j) else { break };
        let take = match c.kind {
            Kind::Answer | Kind::Alone => {
                answers_left -= 1;
                true
            }
            Kind::Silent => {
                if !f.err_like {
                    false
                } else if let Some(o) = f.pos.and_then(owner) {
                    o == i
                } else if complete {
                    extra > 0
                } else {
                    // Cut short: an error goes to the next answering command, if any.
                    answers_left == 0
                }
            }
        };
        if take {
            if c.kind == Kind::Silent {
                extra = extra.saturating_sub(1);
            }
            out[i].push(j);
            j += 1;
            last_taken = Some(i);
        }
    }
    let observed = if complete {
        n
    } else {
        last_taken.map_or(0, |i| i + 1)
    };
    (out, observed)
}

/// Whitespace that moves the solver's input from `(bline, bcol)` to the client's
/// `(line, col)`; a line break when that is behind (after a replay or a marker).
pub(super) fn gap(bline: usize, bcol: usize, line: usize, col: usize) -> String {
    if line > bline {
        let mut s = "\n".repeat(line - bline);
        s.push_str(&" ".repeat(col.saturating_sub(1)));
        s
    } else if line == bline && col > bcol {
        " ".repeat(col - bcol)
    } else if bcol == 1 {
        String::new()
    } else {
        "\n".to_string()
    }
}

/// What to send before a command so it lands where the client had it: the client's own
/// text between the previous frame and the command when the solver's input is at the
/// place where that text began (or at the start of the next line, as after a marker: then
/// the rest of that line is left out), else whitespace from `gap`.
pub(super) fn lead_in(
    b: (usize, usize),
    client_gap: Option<&(String, (usize, usize))>,
    line: usize,
    col: usize,
) -> String {
    if let Some((g, at)) = client_gap {
        if b == *at {
            return g.clone();
        }
        if b == (at.0 + 1, 1) {
            if let Some(i) = g.find('\n') {
                return g[i + 1..].to_string();
            }
        }
    }
    gap(b.0, b.1, line, col)
}

/// The lean passthrough's bookkeeping.
#[derive(Default)]
pub(super) struct Lean {
    /// Commands sent and not yet accounted for, oldest first.
    inflight: VecDeque<LeanCmd>,
    /// Closed batches, oldest first: (marker, number of commands).
    batches: VecDeque<(u64, usize)>,
    /// Commands at the back of `inflight` not yet closed by a marker.
    open: usize,
    /// Forms of the oldest batch received so far.
    forms: Vec<FormInfo>,
    /// Solver output for the client not yet written.
    out: Vec<u8>,
    /// print-success as the client has it after the last command sent (in marker mode
    /// the solver has the same).
    ps: bool,
    /// Drop the line break that ends a dropped `success`.
    skip_nl: bool,
    /// The backend must be rebuilt from the client's state before the next command.
    pub(super) stale: bool,
    /// The backend generation the state was last rebuilt into.
    generation: u64,
    /// The last check-sat command, while its `sat` model is current (no state-changing
    /// command since): a rebuilt backend runs it again after the replay, so that
    /// get-value / get-model still find a model.
    pub(super) model_check: Option<String>,
    /// In a fall-back, the lowest assertion level that holds state smtproxy did not model:
    /// the level of the command that sent the session to passthrough, lowered by every
    /// state-changing command since (their assertions are kept as text only). A pop
    /// below it leaves nothing unmodelled in the client's frames (`leave_at_pop`).
    pub(super) unmodelled_from: Option<usize>,
}

impl Lean {
    /// The state of a passthrough whose backend is `generation`; `stale`: rebuild it first.
    pub(super) fn new(generation: u64, stale: bool) -> Lean {
        Lean {
            generation,
            stale,
            ..Default::default()
        }
    }
}

impl Engine {
    /// One client frame in lean passthrough mode.
    pub(super) fn lean_push(&mut self, frame: Frame, more: bool) -> Vec<Outcome> {
        match frame {
            Frame::Error { msg, line, col } => {
                let mut outs = self.lean_sync();
                self.error_at(line, col, &msg);
                outs.push(Outcome::default());
                outs
            }
            Frame::Command(raw) => {
                let gap = raw.gap.map(|g| (g, raw.gap_at));
                self.lean_command(raw.text, raw.line, raw.col, gap, more)
            }
        }
    }

    /// One client command in lean passthrough mode; `more`: the client has another
    /// complete command buffered.
    pub(super) fn lean_command(
        &mut self,
        text: String,
        line: usize,
        col: usize,
        gap: Option<(String, (usize, usize))>,
        more: bool,
    ) -> Vec<Outcome> {
        let head = command_head(&text).unwrap_or("");
        // Answers of the commands before a reset, when it ends a fall-back.
        let mut before = Vec::new();
        if head == "reset" && self.mode == Mode::ByCost {
            // The governor's window may end here; the reset then goes to whichever route
            // it chooses (a lean one is not synced, so the pipeline runs on).
            let q = self.stats.queries;
            if self.governor.as_ref().is_some_and(|g| g.due(q)) {
                before = self.lean_sync();
                let wall = self.wall_now();
                let g = self.governor.as_mut().expect("checked above");
                let route = g.decide(wall, q);
                self.stats.route_switches = g.switches;
                if route == super::governor::Route::Modelled {
                    if self.leave_passthrough() {
                        before.push(self.command(&text, line, col));
                        return before;
                    }
                    // Something the session keeps cannot be modelled: passthrough for good.
                    self.governor = None;
                }
            }
        } else if head == "reset" && self.mode == Mode::FallBack {
            before = self.lean_sync();
            if self.leave_passthrough() {
                before.push(self.command(&text, line, col));
                return before;
            }
        } else if head == "pop" && self.mode == Mode::FallBack {
            before = self.lean_sync();
            if self.leave_at_pop(&text) {
                before.push(self.command(&text, line, col));
                return before;
            }
        }
        let counted = self.counted();
        // print-success as this command leaves it, if it changes it.
        let mut ps_after = None;
        if matches!(head, "echo" | "exit" | "set-option" | "get-option") {
            match parse_command(&mut self.store, &self.sig, &text) {
                Ok(Command::Echo(s)) => {
                    let mut outs = self.lean_sync();
                    self.echo(&s);
                    if self.dialect == Dialect::Cvc5 && self.client.print_success {
                        self.emit("success");
                    }
                    outs.push(Outcome::default());
                    return outs;
                }
                Ok(Command::Exit) => {
                    let mut outs = self.lean_sync();
                    self.success();
                    outs.push(Outcome {
                        exit: true,
                        ..Default::default()
                    });
                    return outs;
                }
                // Counted mode keeps print-success on in the solver: the client's is ours.
                Ok(Command::SetOption(k, v)) if k == ":print-success" && counted => {
                    let mut outs = self.lean_sync();
                    self.client.print_success = v == "true";
                    self.lean.ps = self.client.print_success;
                    self.success();
                    outs.push(Outcome::default());
                    return outs;
                }
                Ok(Command::GetOption(k)) if k == ":print-success" && counted => {
                    let mut outs = self.lean_sync();
                    let v = self.own_option(&k).unwrap_or_default();
                    self.emit(&v);
                    outs.push(Outcome::default());
                    return outs;
                }
                Ok(Command::SetOption(k, v)) if k == ":print-success" => {
                    ps_after = Some(v == "true")
                }
                _ => {}
            }
        }
        let mut outs = before;
        // Between batches, a solver that has died is noticed before anything is written to
        // it (the client's commands then go to a rebuilt one, not into a dead pipe).
        let idle = self.lean.inflight.is_empty();
        let h = &mut self.planner.main;
        if self.lean.stale
            || (idle && !h.is_alive())
            || !h.is_running()
            || h.generation != self.lean.generation
            || h.mode != DriverMode::Lean
        {
            outs.extend(self.lean_sync());
            if let Err(e) = self.lean_rebuild() {
                self.emit(&response::error(&format!("solver failed: {e}")));
                outs.push(Outcome::default());
                return outs;
            }
        }
        let head_is_reset = head == "reset";
        let kind = if counted {
            Kind::Answer
        } else if ps_after.is_some() {
            Kind::Alone
        } else {
            classify(head, self.lean.ps, self.dialect)
        };
        if kind == Kind::Alone {
            self.lean_close();
        }
        let quiet = counted && !self.lean.ps;
        self.lean_send(LeanCmd {
            text,
            line,
            col,
            gap,
            kind,
            start: (0, 0),
            attempts: 0,
            quiet,
        });
        if let Some(ps) = ps_after {
            self.lean.ps = ps;
        } else if head_is_reset && self.dialect == Dialect::Cvc5 {
            self.lean.ps = false;
        }
        if kind == Kind::Alone || self.lean.open >= self.batch_max() || !more {
            self.lean_close();
        }
        if !more {
            outs.extend(self.lean_sync());
        } else if self.lean.inflight.len() >= PIPELINE_MAX {
            let keep = self.lean.batches.len().saturating_sub(1);
            outs.extend(self.lean_drain(keep, true));
        }
        outs
    }

    /// A `(reset)` in a session that fell back to passthrough, with nothing in flight:
    /// what sent it there is gone unless an option the reset keeps (z3 keeps them all) is
    /// one smtproxy does not model. (A command-line flag smtproxy does not model makes
    /// passthrough the strategy, which a reset does not end.) If so, false;
    /// otherwise the lean backend is stopped and the session is back on the modelled
    /// strategies (the caller then runs the reset as the engine's own).
    pub(super) fn leave_passthrough(&mut self) -> bool {
        if (self.mode == Mode::Passthrough) || !self.lean.inflight.is_empty() {
            return false;
        }
        // z3 keeps every option across a reset (`client.options` after `reset_client`).
        if self.dialect == Dialect::Z3
            && self
                .client
                .options
                .iter()
                .any(|(k, v)| unmodelled_option(k, v))
        {
            return false;
        }
        self.back_to_modelled("(reset)");
        true
    }

    /// A `(pop n)` in a session that fell back to passthrough, with nothing in flight:
    /// whether it takes away every level that holds state smtproxy did not model, so the
    /// frames left are the modelled ones (declarations do not outlive their level, and no
    /// option smtproxy does not model is set: options outlive a pop). If so, the lean
    /// backend is stopped and the session is back on the modelled strategies (the caller
    /// then runs the pop as the engine's own).
    pub(super) fn leave_at_pop(&mut self, text: &str) -> bool {
        if self.mode != Mode::FallBack
            || !self.lean.inflight.is_empty()
            || self.sig.global_declarations
            || self
                .client
                .options
                .iter()
                .any(|(k, v)| unmodelled_option(k, v))
        {
            return false;
        }
        let Ok(Command::Pop(n)) = parse_command(&mut self.store, &self.sig, text) else {
            return false;
        };
        let depth = self.client.depth();
        let Ok(n) = usize::try_from(n) else {
            return false;
        };
        if n == 0 || n > depth {
            return false;
        }
        let after = depth - n;
        if self.lean.unmodelled_from.is_some_and(|from| after >= from) {
            return false;
        }
        self.back_to_modelled("(pop)");
        true
    }

    fn back_to_modelled(&mut self, at: &str) {
        self.planner.main.kill();
        self.planner.main.mode = DriverMode::Framed;
        if self.mode == Mode::FallBack {
            self.stats.note(format!("back from passthrough at {at}"));
        }
        self.mode = Mode::Modelled;
        self.lean = Lean::default();
    }

    /// A state-changing command went to the lean backend at the current level.
    fn note_unmodelled_state(&mut self) {
        let depth = self.client.depth();
        let from = self.lean.unmodelled_from.get_or_insert(depth);
        *from = (*from).min(depth);
    }

    /// Kill, restart in lean mode and replay the client's state (its output discarded:
    /// it was given to the client when the commands first ran).
    fn lean_rebuild(&mut self) -> Result<(), DriverError> {
        let log = self.client.replay_log();
        let has_state = self.client_has_state();
        let kind = self.planner.main.spec().kind;
        let h = &mut self.planner.main;
        h.kill();
        h.mode = DriverMode::Lean;
        h.start()?;
        let gen = h.generation;
        let deadline = h.timeout;
        let t0 = Instant::now();
        let Some(s) = h.lean_mut() else {
            return Err(DriverError::Protocol("solver not running".into()));
        };
        let ps = self.client.print_success;
        // Counted mode (yices) keeps print-success on in the solver whatever the client has.
        let backend_ps = ps || kind == SolverKind::Yices;
        if has_state || ps {
            // Error messages give line numbers (all three solvers): the replay goes on one
            // line (its commands' own line breaks aside), so that the client's next
            // command, on a later line of the client's input, is sent on that same line
            // (see `gap`); a line per command would make the first error after a replay
            // name a later line than the client's.
            let sep = " ";
            // A model for the client's last check-sat (`pass_model_check`) only if the
            // client asked for models: cvc5 without them refuses get-value, as it should.
            if self.client.produce_models {
                s.write("(set-option :produce-models true)");
                s.write(sep);
            }
            for c in &log {
                s.write(c);
                s.write(sep);
            }
            if let Some(check) = &self.lean.model_check {
                // The client may still ask for the model of its last (sat) check-sat; its
                // answer is read and dropped with the rest before the marker.
                s.write(check);
                s.write(sep);
            }
            if backend_ps {
                s.write("(set-option :print-success true)");
                s.write(sep);
            }
            let n = s.mark(backend_ps);
            // Every replayed command was accepted when the client sent it; one the solver
            // refuses now was accepted by smtproxy's parser only. The solver goes on
            // without it, as it would have alone, and the session notes it.
            let mut refused: Option<(usize, String)> = None;
            // Under the session's deadline: the client's own state can hang the solver
            // (an assertion z3 unfolds forever).
            let r = loop {
                let left = deadline.map(|d| d.saturating_sub(t0.elapsed()));
                match s.next_event(left) {
                    Ok(LeanEvent::Marker { n: m, .. }) if m == n => break Ok(()),
                    Ok(LeanEvent::Form { form, .. }) if form.starts_with("(error") => {
                        let r = refused.get_or_insert((0, form));
                        r.0 += 1;
                    }
                    Ok(LeanEvent::Silence) if left.is_some_and(|l| l.is_zero()) => {
                        break Err(DriverError::Timeout {
                            after: deadline.unwrap_or_default(),
                        })
                    }
                    Ok(_) => {}
                    Err(e) => break Err(e),
                }
            };
            let dt = t0.elapsed();
            h.busy += dt;
            self.stats.solver += dt;
            if let Some((k, first)) = refused {
                self.stats.note(format!(
                    "replaying the client's state into passthrough, the solver refused {k} \
                     command(s) smtproxy had accepted (first: {first})"
                ));
            }
            if let Err(e) = r {
                h.kill();
                return Err(e);
            }
        }
        self.lean.ps = ps;
        self.lean.skip_nl = false;
        self.lean.stale = false;
        self.lean.generation = gen;
        Ok(())
    }

    /// Commands per batch: [`GROUP_MAX`] for z3 and in counted mode (yices); one for cvc5
    /// and custom solvers, whose errors do not always say where they are while cvc5 exits
    /// after most of them (so which command failed must be known exactly).
    fn batch_max(&self) -> usize {
        match self.planner.main.spec().kind {
            SolverKind::Z3 | SolverKind::Yices => GROUP_MAX,
            _ => 1,
        }
    }

    /// Counted mode (yices): print-success stays on in the solver, every command prints
    /// exactly one form, and a batch is complete when its forms are there; no markers
    /// (any later token corrupts what yices prints for `get-unsat-assumptions`).
    fn counted(&self) -> bool {
        self.planner.main.spec().kind == SolverKind::Yices
    }

    /// Queue solver output for the client (without the line break of a dropped `success`).
    fn lean_out(&mut self, bytes: &[u8]) {
        let mut b = bytes;
        if self.lean.skip_nl && !b.is_empty() {
            self.lean.skip_nl = false;
            if let Some(r) = b.strip_prefix(b"\r\n").or_else(|| b.strip_prefix(b"\n")) {
                b = r;
            }
        }
        self.lean.out.extend_from_slice(b);
    }

    /// Write one command at the client's position.
    fn lean_send(&mut self, mut c: LeanCmd) {
        if let Some(s) = self.planner.main.lean_mut() {
            // The client's own text only the first time: a resent command follows a replay.
            let g = c.gap.take();
            s.write(&lead_in(s.position(), g.as_ref(), c.line, c.col));
            c.start = s.position();
            s.write(&c.text);
        }
        self.lean.inflight.push_back(c);
        self.lean.open += 1;
    }

    /// Close the open batch with a marker.
    fn lean_close(&mut self) {
        if self.lean.open == 0 {
            return;
        }
        let ps = self.lean.ps;
        let counted = self.counted();
        let n = match self.planner.main.lean_mut() {
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
        self.lean.batches.push_back((n, self.lean.open));
        self.lean.open = 0;
    }

    /// Answer everything in flight (`lazy`: at the end of the client's input).
    pub(super) fn lean_sync_with(&mut self, lazy: bool) -> Vec<Outcome> {
        self.lean_close();
        let outs = self.lean_drain(0, lazy);
        self.lean_flush_out();
        outs
    }

    /// Answer everything in flight: the client waits.
    pub(super) fn lean_sync(&mut self) -> Vec<Outcome> {
        self.lean_sync_with(false)
    }

    fn lean_flush_out(&mut self) {
        if self.lean.out.is_empty() {
            return;
        }
        if !self.out_closed {
            let r = self
                .out
                .write_all(&self.lean.out)
                .and_then(|_| self.out.flush());
            if r.is_err() {
                self.out_closed = true;
            }
        }
        self.lean.out.clear();
    }

    /// Read the solver's output until at most `keep` batches are in flight. `lazy`: the
    /// client is not waiting for an answer (it has sent more, or its input ended): the
    /// solver's output is taken [`LAZY_READ`] apart rather than at each answer it writes
    /// (a wake-up per answer costs the solver time too), and passed on in large writes.
    fn lean_drain(&mut self, keep: usize, lazy: bool) -> Vec<Outcome> {
        let mut outs = Vec::new();
        let mut progress = Instant::now();
        let mut probe = None;
        while self.lean.batches.len() > keep {
            let timeout = self.planner.main.timeout;
            let mut wait = timeout.map(|t| t.saturating_sub(progress.elapsed()));
            // After an error the solver may have stopped executing commands: look at it
            // every STUCK_PROBE while its marker is missing.
            let suspicious = self.lean.forms.iter().any(|f| f.err_like);
            if suspicious {
                wait = Some(wait.map_or(STUCK_PROBE, |w| w.min(STUCK_PROBE)));
            }
            let t0 = Instant::now();
            let ev = match self.planner.main.lean_mut() {
                Some(s) => s.next_event(wait),
                None => Err(DriverError::Protocol("solver not running".into())),
            };
            let dt = t0.elapsed();
            self.planner.main.busy += dt;
            self.stats.solver += dt;
            match ev {
                Ok(LeanEvent::Form { raw, form }) => {
                    let quiet = self
                        .lean
                        .inflight
                        .get(self.lean.forms.len())
                        .is_some_and(|c| c.quiet);
                    if quiet && form == "success" && raw.ends_with(b"success") {
                        self.lean_out(&raw[..raw.len() - 7]);
                        self.lean.skip_nl = true;
                    } else if self.counted() {
                        // The batch may be complete with this form: its line break is
                        // given now (the solver's own is dropped when it comes).
                        self.lean_out(&raw);
                        self.lean_out(b"\n");
                        self.lean.skip_nl = true;
                    } else {
                        self.lean_out(&raw);
                    }
                    self.lean.forms.push(FormInfo::new(form, self.dialect));
                    progress = Instant::now();
                    probe = None;
                    if self.counted()
                        && self
                            .lean
                            .batches
                            .front()
                            .is_some_and(|b| b.1 == self.lean.forms.len())
                    {
                        outs.extend(self.lean_settle_front());
                    }
                }
                Ok(LeanEvent::Silence) => {
                    let failure = if let Some(t) = timeout.filter(|&t| progress.elapsed() >= t) {
                        Some(DriverError::Timeout { after: t })
                    } else if suspicious {
                        let p = self.planner.main.lean_mut().and_then(|s| s.idle_probe());
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
                        self.lean_flush_out();
                        outs.extend(self.lean_failed(e));
                        progress = Instant::now();
                        probe = None;
                    }
                }
                Ok(LeanEvent::Idle(bytes)) => {
                    self.lean_out(&bytes);
                    if !lazy || self.lean.out.len() >= LAZY_OUT {
                        self.lean_flush_out();
                    }
                    if lazy {
                        std::thread::sleep(LAZY_READ);
                    }
                }
                Ok(LeanEvent::Marker { n, before }) => {
                    self.lean_out(&before);
                    progress = Instant::now();
                    probe = None;
                    debug_assert_eq!(
                        self.lean.batches.front().map(|b| b.0),
                        Some(n),
                        "markers answered in order"
                    );
                    outs.extend(self.lean_settle_front());
                }
                Err(e) => {
                    self.lean_flush_out();
                    outs.extend(self.lean_failed(e));
                    progress = Instant::now();
                    probe = None;
                }
            }
        }
        outs
    }

    /// The oldest batch is complete: attribute its forms and account for its commands.
    fn lean_settle_front(&mut self) -> Vec<Outcome> {
        let Some((_, count)) = self.lean.batches.pop_front() else {
            return Vec::new();
        };
        let cmds: Vec<LeanCmd> = self
            .lean
            .inflight
            .drain(..count.min(self.lean.inflight.len()))
            .collect();
        let forms = std::mem::take(&mut self.lean.forms);
        let (assign, _) = align(&cmds, &forms, true);
        let mut outs = Vec::with_capacity(cmds.len());
        for (c, idx) in cmds.iter().zip(&assign) {
            let form = idx.first().map(|&k| &forms[k]);
            outs.push(self.lean_settle(c, form));
        }
        outs
    }

    /// The solver died or ran past the deadline while batches were in flight.
    fn lean_failed(&mut self, e: DriverError) -> Vec<Outcome> {
        let mut outs = Vec::new();
        self.planner.main.kill();
        self.lean.stale = true;
        let front = self.lean.batches.front().map_or(0, |b| b.1);
        let mut all: Vec<LeanCmd> = self.lean.inflight.drain(..).collect();
        self.lean.batches.clear();
        self.lean.open = 0;
        let forms = std::mem::take(&mut self.lean.forms);
        let front = front.min(all.len());
        let (assign, observed) = align(&all[..front], &forms, false);
        for (c, idx) in all[..observed].iter().zip(&assign) {
            let form = idx.first().map(|&k| &forms[k]);
            outs.push(self.lean_settle(c, form));
        }
        let mut rest = all.split_off(observed);
        match e {
            DriverError::Timeout { .. } if !rest.is_empty() => {
                self.stats.timeouts += 1;
                // The first answering command is what ran out of time; silent ones before
                // it are taken as done (their state is replayed).
                let k = rest
                    .iter()
                    .position(|c| c.kind != Kind::Silent)
                    .unwrap_or(0);
                for c in rest.drain(..k) {
                    outs.push(self.lean_settle(&c, None));
                }
                let c = rest.remove(0);
                let mut o = Outcome::default();
                if is_check_head(&c.text) {
                    self.count_check(Answer::Unknown);
                    o.check = Some(Answer::Unknown);
                    self.emit("unknown");
                } else {
                    self.emit(&response::error("solver timed out"));
                }
                outs.push(o);
            }
            e => {
                self.stats
                    .note(format!("solver failed under a pipeline: {e}; resending"));
                // Only a command alone in its batch is surely the one the solver died on
                // (commands resent after a failure go one per batch).
                if let Some(c) = rest.first_mut().filter(|_| front == 1) {
                    c.attempts += 1;
                    if c.attempts >= 2 {
                        let c = rest.remove(0);
                        let mut o = Outcome::default();
                        if is_check_head(&c.text) {
                            self.count_check(Answer::Unknown);
                            o.check = Some(Answer::Unknown);
                            self.emit("unknown");
                        } else {
                            self.emit(&response::error(&format!("solver died: {e}")));
                        }
                        outs.push(o);
                    }
                }
            }
        }
        if rest.is_empty() {
            return outs;
        }
        if let Err(e) = self.lean_rebuild() {
            for c in rest {
                self.emit(&response::error(&format!("solver failed: {e}")));
                let mut o = Outcome::default();
                if is_check_head(&c.text) {
                    self.count_check(Answer::Unknown);
                    o.check = Some(Answer::Unknown);
                }
                outs.push(o);
            }
            return outs;
        }
        // Each in a batch of its own: a second failure names its command.
        for c in rest {
            self.lean_send(c);
            self.lean_close();
        }
        outs
    }

    /// Account for one executed command: what its form says, and its state if it succeeded.
    fn lean_settle(&mut self, c: &LeanCmd, form: Option<&FormInfo>) -> Outcome {
        let mut o = Outcome::default();
        let head = command_head(&c.text).unwrap_or("");
        let failed = form.is_some_and(|f| f.err_like);
        match head {
            "check-sat" | "check-sat-assuming" => {
                let a = match form.map(|f| f.text.as_str()) {
                    Some("sat") => Answer::Sat,
                    Some("unsat") => Answer::Unsat,
                    _ => Answer::Unknown,
                };
                self.count_check(a);
                self.stats.solver_checks += 1;
                self.planner.main.checks += 1;
                o.check = Some(a);
                // After a crash, the rebuilt solver checks it again so the model is there.
                self.lean.model_check = (a == Answer::Sat).then(|| c.text.clone());
            }
            "set-info" => {
                if let Ok(Command::SetInfo(k, v)) =
                    parse_command(&mut self.store, &self.sig, &c.text)
                {
                    if k == ":status" {
                        o.status = Answer::parse(&v);
                    }
                }
            }
            "assert" if !failed => {
                self.lean.model_check = None;
                self.client.top().raw.push(c.text.clone());
                self.note_unmodelled_state();
            }
            // What changes the solver's state is what does not answer (with print-success off).
            _ if !failed && classify(head, false, self.dialect) != Kind::Answer => {
                match parse_command(&mut self.store, &self.sig, &c.text) {
                    Ok(Command::SetOption(k, v)) if k == ":print-success" => {
                        self.client.print_success = v == "true";
                    }
                    Ok(cmd) => {
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
                        self.track(cmd, &c.text);
                        if resets {
                            self.lean.unmodelled_from = None;
                        } else if !pops {
                            self.note_unmodelled_state();
                        }
                    }
                    // The solver took what smtproxy cannot read: replay it as it is.
                    Err(_) if !matches!(head, "push" | "pop" | "reset" | "reset-assertions") => {
                        self.client.top().raw.push(c.text.clone());
                        self.note_unmodelled_state();
                    }
                    Err(_) => {}
                }
            }
            _ => {}
        }
        o
    }
}

fn is_check_head(text: &str) -> bool {
    matches!(command_head(text), Some("check-sat" | "check-sat-assuming"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(text: &str, start: (usize, usize)) -> LeanCmd {
        let kind = classify(command_head(text).unwrap_or(""), false, Dialect::Z3);
        LeanCmd {
            text: text.into(),
            line: start.0,
            col: start.1,
            gap: None,
            kind,
            start,
            attempts: 0,
            quiet: false,
        }
    }
    fn form(t: &str) -> FormInfo {
        FormInfo::new(t.into(), Dialect::Z3)
    }

    #[test]
    fn positions_in_error_messages() {
        assert_eq!(
            error_position("(error \"line 3 column 12: unknown constant y\")"),
            Some((3, 12))
        );
        assert_eq!(
            error_position("(error \"at line 6, column 15: invalid token #\")"),
            Some((6, 15))
        );
        assert_eq!(error_position("(error \"the logic is already set\")"), None);
        assert_eq!(
            error_position("(error \"line 3 of the file, then column 5\")"),
            None
        );
    }

    #[test]
    fn gaps_reproduce_positions() {
        assert_eq!(gap(1, 1, 1, 1), "");
        assert_eq!(gap(1, 1, 3, 4), "\n\n   ");
        assert_eq!(gap(2, 10, 2, 12), "  ");
        assert_eq!(gap(5, 10, 2, 1), "\n");
        assert_eq!(gap(5, 1, 2, 1), "");
    }

    #[test]
    fn lead_in_keeps_the_clients_text() {
        let g = ("  ; note (\n\n".to_string(), (3, 12));
        assert_eq!(lead_in((3, 12), Some(&g), 5, 1), "  ; note (\n\n");
        // After a marker ended line 3: the rest of the text.
        assert_eq!(lead_in((4, 1), Some(&g), 5, 1), "\n");
        // Anywhere else: whitespace.
        assert_eq!(lead_in((9, 3), Some(&g), 5, 1), "\n");
        assert_eq!(lead_in((2, 1), None, 5, 3), "\n\n\n  ");
    }

    #[test]
    fn count_attribution() {
        // KLEE's shape: silent commands, check-sat, get-values (one failing).
        let cmds = vec![
            cmd("(declare-fun a () Int)", (1, 1)),
            cmd("(assert (> a 0))", (2, 1)),
            cmd("(check-sat)", (3, 1)),
            cmd("(get-value (a))", (4, 1)),
        ];
        let forms = vec![
            form("unsat"),
            form("(error \"line 4 column 11: model is not available\")"),
        ];
        let (a, obs) = align(&cmds, &forms, true);
        assert_eq!(a, vec![vec![], vec![], vec![0], vec![1]]);
        assert_eq!(obs, 4);
    }

    #[test]
    fn positions_name_the_failing_silent_command() {
        let cmds = vec![
            cmd("(declare-fun a () Int)", (1, 1)),
            cmd("(assert (> b 0))", (2, 1)),
            cmd("(assert (> a 0))", (3, 1)),
            cmd("(check-sat)", (4, 1)),
        ];
        let forms = vec![
            form("(error \"line 2 column 12: unknown constant b\")"),
            form("sat"),
        ];
        let (a, _) = align(&cmds, &forms, true);
        assert_eq!(a, vec![vec![], vec![0], vec![], vec![1]]);
        // Without a position the earliest silent command takes it.
        let forms = vec![form("(error \"unknown constant b\")"), form("sat")];
        let (a, _) = align(&cmds, &forms, true);
        assert_eq!(a, vec![vec![0], vec![], vec![], vec![1]]);
    }

    #[test]
    fn cut_short_batches() {
        let cmds = vec![
            cmd("(declare-fun a () Int)", (1, 1)),
            cmd("(assert (> a #zz))", (2, 1)),
            cmd("(assert (> a 0))", (3, 1)),
            cmd("(check-sat)", (4, 1)),
        ];
        // z3 exits after a lexer error: the position names the command; what follows is
        // unobserved.
        let forms = vec![form(
            "(error \"line 2 column 14: invalid bit-vector literal\")",
        )];
        let (a, obs) = align(&cmds, &forms, false);
        assert_eq!(a[1], vec![0]);
        assert_eq!(obs, 2);
        // No output at all: nothing observed.
        let (_, obs) = align(&cmds, &[], false);
        assert_eq!(obs, 0);
        // An error without position while an answering command is pending goes to it.
        let (a, obs) = align(&cmds, &[form("(error \"boom\")")], false);
        assert_eq!(a[3], vec![0]);
        assert_eq!(obs, 4);
    }

    #[test]
    fn alone_takes_everything() {
        let cmds = vec![cmd("(display x)", (1, 1))];
        let (a, obs) = align(&cmds, &[form("x"), form("y")], true);
        assert_eq!(a, vec![vec![0, 1]]);
        assert_eq!(obs, 1);
    }
}
