//! Solver processes: start a real SMT solver (z3, cvc5, yices or a custom command)
//! behind pipes, and frame what it prints, in one of two modes.
//!
//! Invariants:
//! * A [`Solver`] runs in its own process group; [`Solver::kill`] (also run on
//!   drop, on timeout and when the solver is found dead) sends SIGTERM to the
//!   whole group, waits [`process::KILL_GRACE`], sends SIGKILL and reaps the
//!   leader. No solver process outlives its `Solver`, even one ignoring SIGTERM.
//! * Every byte written is counted into [`Solver::position`] (line, column), the
//!   numbering solvers use in their error messages.
//! * Nothing read from the solver or the client is `unwrap()`ed.
//!
//! Framed mode ([`Solver::start`]; the strategies that build queries themselves):
//! * `:print-success` is on from the start and kept on: every command sent
//!   yields exactly one response, so responses are never mismatched with
//!   commands. Commands that would break this are handled in the driver:
//!   `(set-option :print-success ...)` is answered `success` locally (printing
//!   `success` to the client is the session's business), `(echo "...")` is
//!   answered locally with the string literal (z3 and yices print echo strings
//!   raw and unquoted, cvc5 prints the quoted string *and* a `success`), and
//!   `(reset)` is followed, on its own line, by a re-enable of print-success and a
//!   `(get-info :name)` sentinel (cvc5 1.0.3 turns print-success off on reset
//!   and prints nothing for it; z3 and yices print `success`).
//! * Responses are framed as whole s-expressions by [`reader::Framer`]; text
//!   between responses that is whitespace or `;` comments is ignored (z3 prints
//!   `; Supported ...` lines after `unsupported` for an unknown get-info key).
//! * Once a call returns `Died` or `Timeout` the solver is dead and reaped;
//!   further calls return `Died` immediately. A solver that exits after
//!   answering (cvc5 and yices-without-`--interactive` exit after a parse
//!   error; cvc5 prints the `(error ...)` first) yields that answer, and the
//!   next call reports `Died`.
//!
//! Lean mode ([`Solver::start_lean`]; passthrough, see `session::lean`):
//! * Nothing is sent but the caller's text ([`Solver::lean_write`], buffered, no
//!   line break added) and markers: [`Solver::lean_mark`] appends
//!   `(echo "sp!sync-N")` and a line break to the current line and hands the buffer
//!   to the pipe. z3 keeps print-success off (z3 5.4 runs 35% slower with it on);
//!   yices gets `(set-option :print-success true)` first (its interactive default),
//!   its `success` dropped.
//! * [`Solver::lean_next`] cuts the output into [`LeanEvent`]s that together hold
//!   every byte the solver printed, in order, except each marker and the line break
//!   after it (and the `success` cvc5 prints after an echo under print-success, when
//!   `lean_mark` was told it is on). Marker text is cut out of error messages (cvc5
//!   quotes the input line). Markers arrive in the order sent; another number is a
//!   protocol error. Before each wait an `Idle` event hands over the settled bytes,
//!   so the caller can flush before it blocks.
//! * A wait that passes gives `Silence` with the solver left running: deadlines are
//!   the caller's. EOF gives `Died` after the settled bytes; the solver is reaped.
//!   [`Solver::idle_probe`] tells a solver that has read all its input and is not
//!   running.

pub mod error;
pub mod process;
pub mod reader;
pub mod spec;

use std::time::{Duration, Instant};

pub use error::DriverError;
pub use spec::{SolverKind, SolverSpec};

use process::{Chunk, Proc, KILL_GRACE};
use reader::Framer;

/// One complete answer from the solver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// `success`
    Success,
    Sat,
    Unsat,
    Unknown,
    /// `unsupported`
    Unsupported,
    /// `(error "msg")`, with `msg` unescaped.
    Error(String),
    /// Any other answer, exactly as the solver printed it (trimmed).
    Other(String),
}

impl Response {
    /// Classify one framed response text.
    pub fn parse(text: &str) -> Response {
        let t = text.trim();
        match t {
            "success" => return Response::Success,
            "sat" => return Response::Sat,
            "unsat" => return Response::Unsat,
            "unknown" => return Response::Unknown,
            "unsupported" => return Response::Unsupported,
            _ => {}
        }
        if let Some(msg) = parse_error(t) {
            return Response::Error(msg);
        }
        Response::Other(t.to_string())
    }

    /// How to print it to a client (error text re-escaped: `"` becomes `""`).
    pub fn to_text(&self) -> String {
        match self {
            Response::Success => "success".into(),
            Response::Sat => "sat".into(),
            Response::Unsat => "unsat".into(),
            Response::Unknown => "unknown".into(),
            Response::Unsupported => "unsupported".into(),
            Response::Error(m) => format!("(error {})", reader::quote_string(m)),
            Response::Other(s) => s.clone(),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Response::Error(_))
    }
}

impl std::fmt::Display for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// `(error "msg")` -> msg; `(error <anything else>)` -> that text raw.
fn parse_error(t: &str) -> Option<String> {
    let inner = t.strip_prefix('(')?.strip_suffix(')')?;
    let inner = reader::skip_ws_comments(inner);
    let rest = inner.strip_prefix("error")?;
    if !rest.starts_with(|c: char| c.is_ascii_whitespace() || c == '"') {
        return None;
    }
    if let Some((msg, after)) = reader::parse_string_literal(rest) {
        if reader::skip_ws_comments(after).is_empty() {
            return Some(msg);
        }
    }
    Some(rest.trim().to_string())
}

/// What the driver does with one command.
enum Plan {
    /// Forward; expect one response.
    Send,
    /// Answer locally without touching the solver.
    Local(Response),
    /// `(reset)`: forward with print-success re-enable and a sentinel.
    Reset,
    /// `(exit)`: forward; EOF counts as success; the solver is reaped.
    Exit,
}

fn plan(text: &str) -> Plan {
    match reader::command_head(text) {
        Some("echo") => {
            let s = reader::skip_ws_comments(text);
            let body = s
                .get(1..)
                .map(reader::skip_ws_comments)
                .and_then(|b| b.strip_prefix("echo"));
            match body.and_then(reader::parse_string_literal) {
                Some((msg, rest)) if reader::skip_ws_comments(rest).starts_with(')') => {
                    Plan::Local(Response::Other(reader::quote_string(&msg)))
                }
                _ => Plan::Local(Response::Error("echo expects one string literal".into())),
            }
        }
        Some("set-option") => {
            let s = reader::skip_ws_comments(text);
            let body = s
                .get(1..)
                .map(reader::skip_ws_comments)
                .and_then(|b| b.strip_prefix("set-option"));
            match body.map(reader::skip_ws_comments) {
                Some(b) if b.starts_with(":print-success") => Plan::Local(Response::Success),
                _ => Plan::Send,
            }
        }
        Some("reset") => Plan::Reset,
        Some("exit") => Plan::Exit,
        _ => Plan::Send,
    }
}

const PRINT_SUCCESS: &str = "(set-option :print-success true)\n";
/// Sent after `(reset)`, on the reset's own line (so the solver's line numbers do not
/// move): re-enable print-success and a sentinel.
const RESET_EXTRA: &str = " (set-option :print-success true) (get-info :name)\n";

/// One step of reading a lean solver's output (see [`Solver::lean_next`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeanEvent {
    /// A complete output form. `raw` is exactly what the client must be given: the bytes
    /// since the previous event (whitespace, comment lines) and the form itself.
    Form { raw: Vec<u8>, form: String },
    /// Settled bytes between forms (possibly none), returned once before every wait for
    /// the solver so the caller can pass them on and flush its own output first.
    Idle(Vec<u8>),
    /// Marker `n` arrived: everything sent before it has been executed and answered.
    /// `before` are the bytes between the previous form and the marker, for the client.
    Marker { n: u64, before: Vec<u8> },
    /// The wait passed with no output (the solver is left running).
    Silence,
}

/// What a lean marker looks like in the solver's output: z3 and yices print an echo
/// string raw, cvc5 quoted.
const MARKER_PREFIX: &str = "sp!sync-";

fn marker_id(form: &str) -> Option<u64> {
    let f = form
        .strip_prefix('"')
        .and_then(|f| f.strip_suffix('"'))
        .unwrap_or(form);
    f.strip_prefix(MARKER_PREFIX)?.parse().ok()
}

/// `text` without the markers `lean_mark` appends to lines.
fn strip_markers(text: &str) -> String {
    let pat = format!(" (echo \"{MARKER_PREFIX}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(&pat) {
        let after = &rest[i + pat.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[digits..].strip_prefix("\")") {
            Some(tail) if digits > 0 => {
                out.push_str(&rest[..i]);
                rest = tail;
            }
            _ => {
                out.push_str(&rest[..i + pat.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Lean mode flushes its write buffer once it holds this much.
const LEAN_WBUF: usize = 64 * 1024;

/// A running solver process.
pub struct Solver {
    spec: SolverSpec,
    proc: Proc,
    framer: Framer,
    dead: bool,
    /// Exit code recorded when the solver was found dead.
    exit: Option<i32>,
    busy: Duration,
    /// Lean mode: print-success off, output relayed verbatim, batches closed by markers.
    lean: bool,
    /// Lean mode: bytes not yet handed to the pipe (written at the next marker).
    wbuf: Vec<u8>,
    /// Position (1-based line; column counted in characters) of the next byte sent.
    line: usize,
    col: usize,
    /// Lean markers sent / seen.
    marks_sent: u64,
    marks_seen: u64,
    /// For each marker in flight: is it followed by a `success` (cvc5 prints one after an
    /// echo when print-success is on)?
    marks_success: std::collections::VecDeque<bool>,
    /// Drop the newline that follows a marker in the output.
    skip_nl: bool,
    /// Drop the next form if it is `success` (right after a marker that cvc5 answered
    /// with one; the answer to yices' start-up option).
    skip_success: bool,
    /// An `Idle` event was returned since the last form: the next call waits.
    idle_reported: bool,
    /// The solver's stdout reached EOF (lean mode reports it after the settled bytes).
    eof: bool,
}

impl Solver {
    /// Start the solver, turn on print-success and consume its `success`.
    pub fn start(spec: &SolverSpec) -> Result<Solver, DriverError> {
        let mut s = Solver::spawn(spec, false)?;
        // Generous bound so a wedged binary cannot hang startup forever.
        let t0 = Instant::now();
        let limit = Some(Duration::from_secs(30));
        s.send_raw(PRINT_SUCCESS)?;
        let r = s.read_response(t0, limit)?;
        s.busy += t0.elapsed();
        match r {
            Response::Success => Ok(s),
            other => {
                s.kill();
                Err(DriverError::Protocol(format!(
                    "{} answered `{}` to (set-option :print-success true); is it an SMT-LIB solver?",
                    s.spec.command_line(),
                    other.to_text()
                )))
            }
        }
    }

    fn spawn(spec: &SolverSpec, lean: bool) -> Result<Solver, DriverError> {
        let proc = Proc::spawn(spec)?;
        Ok(Solver {
            spec: spec.clone(),
            proc,
            framer: if lean {
                Framer::verbatim()
            } else {
                Framer::new()
            },
            dead: false,
            exit: None,
            busy: Duration::ZERO,
            lean,
            wbuf: Vec::new(),
            line: 1,
            col: 1,
            marks_sent: 0,
            marks_seen: 0,
            marks_success: std::collections::VecDeque::new(),
            skip_nl: false,
            skip_success: false,
            idle_reported: false,
            eof: false,
        })
    }

    /// Start the solver in lean mode: nothing is sent ahead of the caller's own text, but
    /// for yices `(set-option :print-success true)` (its interactive mode's default, made
    /// sure of), without a line break, so line numbers in its messages still match the
    /// caller's. Nothing is read: a binary that is not an SMT solver shows at the first
    /// wait for output.
    pub fn start_lean(spec: &SolverSpec) -> Result<Solver, DriverError> {
        let mut s = Solver::spawn(spec, true)?;
        if spec.kind == SolverKind::Yices {
            s.lean_write("(set-option :print-success true)");
            // Its `success` is not the caller's.
            s.skip_success = true;
            // Nor is its place: the caller's first command goes right after it, as if at
            // column 1 (else the caller's text would start on a second line, and every
            // line number in yices' messages would be one too many, as before session
            // 14). Columns on line 1 are off by the prefix's length.
            s.col = 1;
        }
        Ok(s)
    }

    pub fn is_lean(&self) -> bool {
        self.lean
    }

    /// Where the next byte sent lands in the solver's input: (line, column), 1-based,
    /// columns counted in characters. Solvers number their error positions by it.
    pub fn position(&self) -> (usize, usize) {
        (self.line, self.col)
    }

    fn advance(&mut self, bytes: &[u8]) {
        let chars = |b: &[u8]| b.iter().filter(|&&c| (c & 0xC0) != 0x80).count();
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(i) => {
                self.line += bytes.iter().filter(|&&b| b == b'\n').count();
                self.col = 1 + chars(&bytes[i + 1..]);
            }
            None => self.col += chars(bytes),
        }
    }

    /// Lean mode: queue text for the solver exactly as given (no newline is added). It is
    /// handed to the pipe at the next marker, or once the buffer is large.
    pub fn lean_write(&mut self, text: &str) {
        self.advance(text.as_bytes());
        self.wbuf.extend_from_slice(text.as_bytes());
        if self.wbuf.len() >= LEAN_WBUF {
            self.lean_flush();
        }
    }

    /// Lean mode: hand what is queued to the pipe (`lean_mark` does it by itself).
    pub fn lean_flush(&mut self) {
        if self.wbuf.is_empty() {
            return;
        }
        // A broken pipe is not reported here: the solver's output is read to its end
        // first (it may have answered before exiting), and EOF reports the death.
        let _ = self.proc.write(&self.wbuf);
        self.wbuf.clear();
    }

    /// Lean mode: close the text sent so far with a marker, on the same line, and hand
    /// everything to the pipe. `print_success`: the solver has it on at this point.
    /// Returns the marker's number.
    pub fn lean_mark(&mut self, print_success: bool) -> u64 {
        self.marks_sent += 1;
        self.marks_success
            .push_back(print_success && self.spec.kind == SolverKind::Cvc5);
        let m = format!(" (echo \"{MARKER_PREFIX}{}\")\n", self.marks_sent);
        self.advance(m.as_bytes());
        self.wbuf.extend_from_slice(m.as_bytes());
        self.lean_flush();
        self.marks_sent
    }

    /// Lean mode: markers sent whose answer has not been read yet.
    pub fn marks_pending(&self) -> u64 {
        self.marks_sent - self.marks_seen
    }

    /// Drop the line break that ends a marker's output line.
    fn strip_marker_nl(&mut self, mut bytes: Vec<u8>) -> Vec<u8> {
        if self.skip_nl && !bytes.is_empty() {
            self.skip_nl = false;
            if bytes.starts_with(b"\r\n") {
                bytes.drain(..2);
            } else if bytes.starts_with(b"\n") {
                bytes.drain(..1);
            }
        }
        bytes
    }

    /// Lean mode: the next event of the solver's output (see [`LeanEvent`]). Before every
    /// wait an `Idle` event is returned once; the wait that follows lasts at most `wait`
    /// (None: no limit), then `Silence`. At EOF `Died`; an incomplete form at EOF is
    /// dropped.
    pub fn lean_next(&mut self, wait: Option<Duration>) -> Result<LeanEvent, DriverError> {
        let t0 = Instant::now();
        let r = self.lean_next_inner(wait);
        self.busy += t0.elapsed();
        r
    }

    fn lean_next_inner(&mut self, wait: Option<Duration>) -> Result<LeanEvent, DriverError> {
        loop {
            if let Some((gap, form)) = self.framer.next_raw() {
                self.idle_reported = false;
                let gap = self.strip_marker_nl(gap);
                let text = String::from_utf8_lossy(&form).into_owned();
                if let Some(n) = marker_id(&text) {
                    if n != self.marks_seen + 1 {
                        self.kill();
                        return Err(DriverError::Protocol(format!(
                            "marker {n} arrived, {} expected",
                            self.marks_seen + 1
                        )));
                    }
                    self.marks_seen = n;
                    self.skip_nl = true;
                    self.skip_success = self.marks_success.pop_front().unwrap_or(false);
                    return Ok(LeanEvent::Marker { n, before: gap });
                }
                if std::mem::take(&mut self.skip_success)
                    && text == "success"
                    && gap.iter().all(u8::is_ascii_whitespace)
                {
                    self.skip_nl = true;
                    continue;
                }
                if text == ")" {
                    self.kill();
                    return Err(DriverError::Protocol(
                        "unbalanced `)` in solver output".into(),
                    ));
                }
                let mut raw = gap;
                if text.starts_with("(error") && text.contains(MARKER_PREFIX) {
                    // cvc5 quotes the input line in a parse error: without the marker it
                    // is the client's line.
                    let clean = strip_markers(&text);
                    raw.extend_from_slice(clean.as_bytes());
                    return Ok(LeanEvent::Form { raw, form: clean });
                }
                raw.extend_from_slice(&form);
                return Ok(LeanEvent::Form { raw, form: text });
            }
            if !self.idle_reported {
                self.idle_reported = true;
                let settled = self.framer.take_settled();
                let settled = self.strip_marker_nl(settled);
                return Ok(LeanEvent::Idle(settled));
            }
            if self.eof || self.dead {
                self.mark_dead();
                return Err(self.died_error());
            }
            self.lean_flush();
            match self.proc.read_chunk(wait) {
                Chunk::Data(bytes) => {
                    self.framer.push(&bytes);
                    self.idle_reported = false;
                }
                Chunk::Eof => {
                    // Settled bytes (the line break after a last answer) still go out.
                    self.eof = true;
                    self.idle_reported = false;
                }
                Chunk::Timeout => {
                    self.idle_reported = false;
                    return Ok(LeanEvent::Silence);
                }
                Chunk::Err(e) => {
                    self.kill();
                    return Err(DriverError::Io(e));
                }
            }
        }
    }

    /// Lean mode: `Some(cpu ticks)` when the solver has read everything sent to it and is
    /// not running; the same value twice over an interval means it is waiting for input
    /// while a marker is unanswered, i.e. it stopped executing commands (z3 swallows the
    /// rest of its input after some lexical errors).
    pub fn idle_probe(&self) -> Option<u64> {
        if !self.wbuf.is_empty() || self.proc.input_pending() > 0 {
            return None;
        }
        match self.proc.sched() {
            Some((state, ticks)) if state != 'R' => Some(ticks),
            _ => None,
        }
    }

    /// Send one complete command (a newline is appended) and read exactly one
    /// response. `deadline` bounds the wait; past it the solver is killed and
    /// `Timeout` returned.
    pub fn command(
        &mut self,
        text: &str,
        deadline: Option<Duration>,
    ) -> Result<Response, DriverError> {
        self.ensure_framed()?;
        let t0 = Instant::now();
        let r = self.command_inner(text, t0, deadline);
        self.busy += t0.elapsed();
        r
    }

    fn command_inner(
        &mut self,
        text: &str,
        t0: Instant,
        deadline: Option<Duration>,
    ) -> Result<Response, DriverError> {
        match plan(text) {
            Plan::Local(r) => Ok(r),
            Plan::Send => {
                self.send_command(text)?;
                self.read_response(t0, deadline)
            }
            Plan::Reset => {
                self.send_reset(text)?;
                // Up to three answers: reset's (absent on cvc5), print-success's,
                // and the sentinel's `(:name ...)`.
                self.read_reset(t0, deadline)
            }
            Plan::Exit => {
                self.send_command(text)?;
                let r = match self
                    .read_response(t0, Some(deadline.unwrap_or(Duration::from_secs(2))))
                {
                    Ok(r) => r,
                    Err(DriverError::Died { .. }) | Err(DriverError::Timeout { .. }) => {
                        Response::Success
                    }
                    Err(e) => return Err(e),
                };
                self.kill();
                Ok(r)
            }
        }
    }

    /// Send one command without waiting for its response (a check-sat raced against
    /// another solver). Exactly one `poll_response` that returns an answer must follow
    /// before anything else is sent.
    pub fn send_nowait(&mut self, text: &str) -> Result<(), DriverError> {
        self.ensure_alive()?;
        self.send_command(text)
    }

    /// The response to the command sent with `send_nowait`, if it arrives within `wait`;
    /// `Ok(None)` when it has not (the solver is left running, unlike a deadline).
    pub fn poll_response(&mut self, wait: Duration) -> Result<Option<Response>, DriverError> {
        let t0 = Instant::now();
        let r = self.poll_inner(wait);
        self.busy += t0.elapsed();
        r
    }

    fn poll_inner(&mut self, wait: Duration) -> Result<Option<Response>, DriverError> {
        let t0 = Instant::now();
        loop {
            if let Some(frame) = self.framer.next_frame() {
                if frame == ")" {
                    return Err(DriverError::Protocol(
                        "unbalanced `)` in solver output".into(),
                    ));
                }
                return Ok(Some(Response::parse(&frame)));
            }
            // At least one read, even with no time left (`wait` zero: what is there now).
            let left = wait.saturating_sub(t0.elapsed());
            match self.proc.read_chunk(Some(left)) {
                Chunk::Data(bytes) => self.framer.push(&bytes),
                Chunk::Timeout => return Ok(None),
                Chunk::Eof => {
                    if let Some(frame) = self.framer.finish() {
                        return Ok(Some(Response::parse(&frame)));
                    }
                    self.mark_dead();
                    return Err(self.died_error());
                }
                Chunk::Err(e) => {
                    self.kill();
                    return Err(DriverError::Io(e));
                }
            }
        }
    }

    /// The answers to `(reset)`, print-success and the sentinel: up to three, ending with
    /// the sentinel's `(:name ...)`; the first error if any, else `Success`.
    fn read_reset(
        &mut self,
        t0: Instant,
        deadline: Option<Duration>,
    ) -> Result<Response, DriverError> {
        let mut first_err = None;
        for _ in 0..3 {
            let r = self.read_response(t0, deadline)?;
            if let Response::Other(s) = &r {
                if s.starts_with("(:name") {
                    break;
                }
            }
            if r.is_error() && first_err.is_none() {
                first_err = Some(r);
            }
        }
        Ok(first_err.unwrap_or(Response::Success))
    }

    /// Send several commands, then read one response each (pipelined). Stops at
    /// the first `Died`/`Timeout`, returning that error. `deadline` bounds the
    /// whole batch.
    pub fn batch(
        &mut self,
        cmds: &[String],
        deadline: Option<Duration>,
    ) -> Result<Vec<Response>, DriverError> {
        self.ensure_framed()?;
        let t0 = Instant::now();
        let r = self.batch_inner(cmds, t0, deadline);
        self.busy += t0.elapsed();
        r
    }

    fn batch_inner(
        &mut self,
        cmds: &[String],
        t0: Instant,
        deadline: Option<Duration>,
    ) -> Result<Vec<Response>, DriverError> {
        let mut out = Vec::with_capacity(cmds.len());
        let mut i = 0;
        while i < cmds.len() {
            // Pipeline the run of plain commands starting at i.
            let mut j = i;
            let mut payload = String::new();
            while j < cmds.len() && matches!(plan(&cmds[j]), Plan::Send) {
                push_command(&mut payload, &cmds[j]);
                j += 1;
            }
            if j > i {
                self.send_raw(&payload)?;
                for _ in i..j {
                    out.push(self.read_response(t0, deadline)?);
                }
                i = j;
            } else {
                // A special command: handled one at a time.
                let r = self.command_inner(&cmds[i], t0, deadline)?;
                out.push(r);
                i += 1;
            }
        }
        Ok(out)
    }

    /// Send plain commands and then `last` in one write, without reading anything: the
    /// solver works on them while the caller does something else. Returns how many
    /// responses precede `last`'s (read them with `read_acks`), or `None`, having sent
    /// nothing, when a command needs special handling (use `batch`).
    pub fn send_batch_nowait(
        &mut self,
        cmds: &[String],
        last: &str,
    ) -> Result<Option<usize>, DriverError> {
        self.send_plain_nowait(String::new(), cmds, last)
    }

    /// `(reset)`, then plain commands and `last`, in one write without reading anything (a
    /// fresh context measured while the caller works on): the reset's answers end with
    /// the sentinel `(:name ...)`, then come `cmds.len()` responses and `last`'s. `None`,
    /// having sent nothing, when a command needs special handling.
    pub fn send_reset_batch_nowait(
        &mut self,
        cmds: &[String],
        last: &str,
    ) -> Result<Option<usize>, DriverError> {
        self.send_plain_nowait(format!("(reset){RESET_EXTRA}"), cmds, last)
    }

    /// `payload` (what goes first), then `cmds` and `last`, in one write (see
    /// `send_batch_nowait`).
    fn send_plain_nowait(
        &mut self,
        mut payload: String,
        cmds: &[String],
        last: &str,
    ) -> Result<Option<usize>, DriverError> {
        self.ensure_framed()?;
        if !cmds.iter().all(|c| matches!(plan(c), Plan::Send)) {
            return Ok(None);
        }
        payload.reserve(cmds.iter().map(|c| c.len() + 1).sum::<usize>() + last.len() + 1);
        for c in cmds {
            push_command(&mut payload, c);
        }
        push_command(&mut payload, last);
        self.send_raw(&payload)?;
        Ok(Some(cmds.len()))
    }

    /// The solver's own CPU time so far, in nanoseconds, where the system tells it.
    pub fn cpu_ns(&self) -> Option<u64> {
        self.proc.cpu_ns()
    }

    /// The `n` responses to commands sent by `send_batch_nowait`, under `deadline` (past it
    /// the solver is killed and `Timeout` returned).
    pub fn read_acks(
        &mut self,
        n: usize,
        deadline: Option<Duration>,
    ) -> Result<Vec<Response>, DriverError> {
        let t0 = Instant::now();
        let mut out = Vec::with_capacity(n);
        let r = (|| {
            for _ in 0..n {
                out.push(self.read_response(t0, deadline)?);
            }
            Ok(())
        })();
        self.busy += t0.elapsed();
        r.map(|()| out)
    }

    /// True while the solver process is running. Detects exits without a call.
    pub fn is_alive(&mut self) -> bool {
        if self.dead {
            return false;
        }
        if self.proc.leader_exited() {
            self.mark_dead();
            return false;
        }
        true
    }

    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// SIGTERM the group, grace, SIGKILL, reap. Idempotent.
    pub fn kill(&mut self) {
        self.proc.kill(KILL_GRACE);
        if !self.dead {
            self.dead = true;
            self.exit = self.proc.status().and_then(|s| s.code());
        }
    }

    /// Last ~64 KB of the solver's stderr.
    pub fn stderr_tail(&self) -> String {
        self.proc.stderr_tail()
    }

    pub fn spec(&self) -> &SolverSpec {
        &self.spec
    }

    /// Cumulative wall time spent in `command`/`batch` (and startup).
    pub fn busy_time(&self) -> Duration {
        self.busy
    }

    // ---- internals ----

    fn ensure_alive(&mut self) -> Result<(), DriverError> {
        if self.dead {
            return Err(self.died_error());
        }
        Ok(())
    }

    /// The framed calls (`command`, `send_plain`, `batch`) need print-success on.
    fn ensure_framed(&mut self) -> Result<(), DriverError> {
        self.ensure_alive()?;
        if self.lean {
            return Err(DriverError::Protocol("framed call on a lean solver".into()));
        }
        Ok(())
    }

    fn died_error(&self) -> DriverError {
        DriverError::Died {
            exit: self.exit,
            stderr: self.proc.stderr_tail(),
        }
    }

    /// Reap after the solver was found gone (EOF or exited).
    fn mark_dead(&mut self) {
        // Give a process that closed stdout a moment to exit on its own so its
        // real exit code is recorded, then make sure the group is gone.
        let until = Instant::now() + Duration::from_millis(100);
        while Instant::now() < until && !self.proc.leader_exited() {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.kill();
        self.proc.settle_stderr(Duration::from_millis(100));
    }

    fn send_command(&mut self, text: &str) -> Result<(), DriverError> {
        let mut s = String::with_capacity(text.len() + 1);
        push_command(&mut s, text);
        self.send_raw(&s)
    }

    fn send_reset(&mut self, text: &str) -> Result<(), DriverError> {
        let mut s = String::with_capacity(text.len() + RESET_EXTRA.len());
        s.push_str(text);
        s.push_str(RESET_EXTRA);
        self.send_raw(&s)
    }

    fn send_raw(&mut self, text: &str) -> Result<(), DriverError> {
        self.advance(text.as_bytes());
        if self.proc.write(text.as_bytes()) {
            Ok(())
        } else {
            self.mark_dead();
            Err(self.died_error())
        }
    }

    /// Read one framed response; `deadline` counts from `t0`.
    fn read_response(
        &mut self,
        t0: Instant,
        deadline: Option<Duration>,
    ) -> Result<Response, DriverError> {
        loop {
            if let Some(frame) = self.framer.next_frame() {
                if frame == ")" {
                    return Err(DriverError::Protocol(
                        "unbalanced `)` in solver output".into(),
                    ));
                }
                return Ok(Response::parse(&frame));
            }
            let chunk = self
                .proc
                .read_chunk(deadline.map(|d| d.saturating_sub(t0.elapsed())));
            if let (Chunk::Timeout, Some(d)) = (&chunk, deadline) {
                self.kill();
                return Err(DriverError::Timeout { after: d });
            }
            match chunk {
                Chunk::Data(bytes) => self.framer.push(&bytes),
                Chunk::Eof => {
                    // A final atom without trailing newline still counts.
                    if let Some(frame) = self.framer.finish() {
                        return Ok(Response::parse(&frame));
                    }
                    self.mark_dead();
                    return Err(self.died_error());
                }
                Chunk::Err(e) => {
                    self.kill();
                    return Err(DriverError::Io(e));
                }
                Chunk::Timeout => {}
            }
        }
    }
}

fn push_command(buf: &mut String, text: &str) {
    buf.push_str(text);
    buf.push('\n');
}

impl Drop for Solver {
    fn drop(&mut self) {
        self.kill();
    }
}

impl std::fmt::Debug for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solver")
            .field("spec", &self.spec)
            .field("pid", &self.pid())
            .field("dead", &self.dead)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_responses() {
        assert_eq!(Response::parse("success"), Response::Success);
        assert_eq!(Response::parse(" sat\n"), Response::Sat);
        assert_eq!(Response::parse("unsat"), Response::Unsat);
        assert_eq!(Response::parse("unknown"), Response::Unknown);
        assert_eq!(Response::parse("unsupported"), Response::Unsupported);
        assert_eq!(
            Response::parse("(error \"a \"\"b\"\"\")"),
            Response::Error("a \"b\"".into())
        );
        assert_eq!(
            Response::parse("(error \"line 1\nmore\")"),
            Response::Error("line 1\nmore".into())
        );
        assert_eq!(
            Response::parse("((x 1))"),
            Response::Other("((x 1))".into())
        );
        assert_eq!(
            Response::parse("(errors x)"),
            Response::Other("(errors x)".into())
        );
        assert_eq!(
            Response::parse("(error |odd|)"),
            Response::Error("|odd|".into())
        );
    }

    #[test]
    fn error_round_trip() {
        let r = Response::Error("say \"hi\"".into());
        assert_eq!(r.to_text(), "(error \"say \"\"hi\"\"\")");
        assert_eq!(Response::parse(&r.to_text()), r);
    }

    #[test]
    fn local_plans() {
        match plan("(echo \"a\"\"b\")") {
            Plan::Local(Response::Other(s)) => assert_eq!(s, "\"a\"\"b\""),
            _ => panic!("echo not local"),
        }
        assert!(matches!(
            plan("( set-option  :print-success false)"),
            Plan::Local(Response::Success)
        ));
        assert!(matches!(
            plan("(set-option :produce-models true)"),
            Plan::Send
        ));
        assert!(matches!(plan("(reset)"), Plan::Reset));
        assert!(matches!(plan("(reset-assertions)"), Plan::Send));
        assert!(matches!(plan("(exit)"), Plan::Exit));
        assert!(matches!(plan("(echo x)"), Plan::Local(Response::Error(_))));
    }

    #[test]
    fn markers() {
        assert_eq!(marker_id("sp!sync-12"), Some(12));
        assert_eq!(marker_id("\"sp!sync-3\""), Some(3));
        assert_eq!(marker_id("sp!sync-"), None);
        assert_eq!(marker_id("sat"), None);
        // cvc5 quotes the input line, quotes unescaped.
        let e = "(error \"Parse Error: <stdin>:2.12: x\n\n  (assert (> y 0)) (echo \"sp!sync-3\")\n             ^\n\")";
        assert_eq!(
            strip_markers(e),
            "(error \"Parse Error: <stdin>:2.12: x\n\n  (assert (> y 0))\n             ^\n\")"
        );
        let e = "(error \"  (assert y) (echo \"sp!sync-3\") and (echo \"sp!sync-x\")\")";
        assert_eq!(
            strip_markers(e),
            "(error \"  (assert y) and (echo \"sp!sync-x\")\")"
        );
    }

    #[test]
    fn not_installed_message_is_one_line() {
        let e = DriverError::NotInstalled {
            solver: "z3".into(),
            hint: SolverKind::Z3.install_hint().into(),
        };
        let m = e.to_string();
        assert!(!m.contains('\n'));
        assert!(m.contains("pip install z3-solver"), "{m}");
    }
}
