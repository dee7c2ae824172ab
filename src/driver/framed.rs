//! Framed mode: the solver as the strategies that build queries themselves use it, one
//! command in, exactly one response out.
//!
//! Invariants:
//! * `:print-success` is on from the start and kept on: every command sent yields exactly
//!   one response, so responses are never mismatched with commands. Commands that would
//!   break this are handled here: `(set-option :print-success ...)` is answered `success`
//!   locally (printing `success` to the client is the session's business), `(echo "...")`
//!   is answered locally with the string literal (z3 and yices print echo strings raw and
//!   unquoted, cvc5 prints the quoted string *and* a `success`), and `(reset)` is
//!   followed, on its own line, by a re-enable of print-success and a `(get-info :name)`
//!   sentinel (cvc5 1.0.3 turns print-success off on reset and prints nothing for it; z3
//!   and yices print `success`).
//! * Responses are framed as whole s-expressions by [`Framer`]; text between responses
//!   that is whitespace or `;` comments is ignored (z3 prints `; Supported ...` lines after
//!   `unsupported` for an unknown get-info key).
//! * Once a call returns `Died` or `Timeout` the solver is dead and reaped; further calls
//!   return `Died` immediately. A solver that exits after answering (cvc5 and
//!   yices-without-`--interactive` exit after a parse error; cvc5 prints the `(error ...)`
//!   first) yields that answer, and the next call reports `Died`.
//! * Only framed calls exist on a [`FramedSolver`]: the lean mode's are another type
//!   ([`super::LeanSolver`]), so a framed call on a lean solver does not compile.

use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use super::channel::Channel;
use super::error::DriverError;
use super::process::Chunk;
use super::reader::{self, Framer};
use super::response::Response;
use super::spec::SolverSpec;

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

/// A running solver in framed mode (see the module header). The calls both modes share
/// (`kill`, `position`, `is_alive`, ...) are [`Channel`]'s, reached through `Deref`.
pub struct FramedSolver {
    ch: Channel,
}

impl Deref for FramedSolver {
    type Target = Channel;
    fn deref(&self) -> &Channel {
        &self.ch
    }
}

impl DerefMut for FramedSolver {
    fn deref_mut(&mut self) -> &mut Channel {
        &mut self.ch
    }
}

impl FramedSolver {
    /// Start the solver, turn on print-success and consume its `success`.
    pub fn start(spec: &SolverSpec) -> Result<FramedSolver, DriverError> {
        let mut s = FramedSolver::spawn(spec)?;
        s.confirm_start(None, 0)?;
        Ok(s)
    }

    /// Start the solver and turn on print-success without waiting for it to answer (a
    /// solver that loads a large library takes milliseconds to); [`Self::confirm_start`]
    /// must read the `success` before any other call.
    pub fn spawn(spec: &SolverSpec) -> Result<FramedSolver, DriverError> {
        let mut s = FramedSolver {
            ch: Channel::spawn(spec, Framer::new())?,
        };
        s.send_raw(PRINT_SUCCESS)?;
        Ok(s)
    }

    /// Read the `success` that ends a start (`spawn`), and then the responses to the
    /// `then` commands sent ahead after it (`send_ahead`): `Ok(false)` when they have not
    /// all come within `wait` (None: wait for them, 30 s at most, so a wedged binary cannot
    /// hang the start for ever); an error, the process killed, when the solver answered
    /// anything else to print-success, refused a command sent ahead, or died.
    pub fn confirm_start(
        &mut self,
        wait: Option<Duration>,
        then: usize,
    ) -> Result<bool, DriverError> {
        if let Some(w) = wait {
            if !self.responses_ready(1 + then, w) {
                return Ok(false);
            }
        }
        let t0 = Instant::now();
        let bound = Some(Duration::from_secs(30));
        let r = self.read_response(t0, bound)?;
        if r != Response::Success {
            self.kill();
            return Err(DriverError::Protocol(format!(
                "{} answered `{}` to (set-option :print-success true); is it an SMT-LIB solver?",
                self.spec().command_line(),
                r.to_text()
            )));
        }
        for _ in 0..then {
            if let Response::Error(e) = self.read_response(t0, bound)? {
                self.kill();
                return Err(DriverError::Protocol(format!(
                    "{} refused a command sent at its start: {e}",
                    self.spec().command_line()
                )));
            }
        }
        self.ch.busy += t0.elapsed();
        Ok(true)
    }

    /// Plain commands sent in one write right after `spawn`, nothing read: the solver
    /// works through them while the caller goes on, and `confirm_start` reads their
    /// responses. False, having sent nothing, when a command needs special handling.
    pub fn send_ahead(&mut self, cmds: &[String]) -> Result<bool, DriverError> {
        if !cmds.iter().all(|c| matches!(plan(c), Plan::Send)) {
            return Ok(false);
        }
        let mut payload = String::new();
        for c in cmds {
            push_command(&mut payload, c);
        }
        self.send_raw(&payload)?;
        Ok(true)
    }

    /// Send one complete command (a newline is appended) and read exactly one
    /// response. `deadline` bounds the wait; past it the solver is killed and
    /// `Timeout` returned.
    pub fn command(
        &mut self,
        text: &str,
        deadline: Option<Duration>,
    ) -> Result<Response, DriverError> {
        self.ch.ensure_alive()?;
        let t0 = Instant::now();
        let r = self.command_inner(text, t0, deadline);
        self.ch.busy += t0.elapsed();
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
        self.ch.ensure_alive()?;
        self.send_command(text)
    }

    /// The response to the command sent with `send_nowait`, if it arrives within `wait`;
    /// `Ok(None)` when it has not (the solver is left running, unlike a deadline).
    pub fn poll_response(&mut self, wait: Duration) -> Result<Option<Response>, DriverError> {
        let t0 = Instant::now();
        let r = self.poll_inner(wait);
        self.ch.busy += t0.elapsed();
        r
    }

    /// Whether the next `n` responses have all come, waiting up to `wait` for them (stdin
    /// kept fed meanwhile); none is taken. True as well when the solver's output ended or
    /// failed: reading the responses then gives that at once.
    pub fn responses_ready(&mut self, n: usize, wait: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            if self.ch.framer.has_frames(n) {
                return true;
            }
            // At least one read, even with no time left.
            let left = wait.saturating_sub(t0.elapsed());
            match self.ch.proc.read_chunk(Some(left)) {
                Chunk::Data(bytes) => self.ch.framer.push(&bytes),
                Chunk::Timeout => return false,
                Chunk::Eof | Chunk::Err(_) => return true,
            }
        }
    }

    fn poll_inner(&mut self, wait: Duration) -> Result<Option<Response>, DriverError> {
        let t0 = Instant::now();
        loop {
            if let Some(frame) = self.ch.framer.next_frame() {
                if frame == ")" {
                    return Err(DriverError::Protocol(
                        "unbalanced `)` in solver output".into(),
                    ));
                }
                return Ok(Some(Response::parse(&frame)));
            }
            // At least one read, even with no time left (`wait` zero: what is there now).
            let left = wait.saturating_sub(t0.elapsed());
            match self.ch.proc.read_chunk(Some(left)) {
                Chunk::Data(bytes) => self.ch.framer.push(&bytes),
                Chunk::Timeout => return Ok(None),
                Chunk::Eof => {
                    if let Some(frame) = self.ch.framer.finish() {
                        return Ok(Some(Response::parse(&frame)));
                    }
                    self.ch.mark_dead();
                    return Err(self.ch.died_error());
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
        self.ch.ensure_alive()?;
        let t0 = Instant::now();
        let r = self.batch_inner(cmds, t0, deadline);
        self.ch.busy += t0.elapsed();
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
        self.ch.ensure_alive()?;
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
        self.ch.busy += t0.elapsed();
        r.map(|()| out)
    }

    // ---- internals ----

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
        self.ch.advance(text.as_bytes());
        if self.ch.proc.write(text.as_bytes()) {
            Ok(())
        } else {
            self.ch.mark_dead();
            Err(self.ch.died_error())
        }
    }

    /// Read one framed response; `deadline` counts from `t0`.
    fn read_response(
        &mut self,
        t0: Instant,
        deadline: Option<Duration>,
    ) -> Result<Response, DriverError> {
        loop {
            if let Some(frame) = self.ch.framer.next_frame() {
                if frame == ")" {
                    return Err(DriverError::Protocol(
                        "unbalanced `)` in solver output".into(),
                    ));
                }
                return Ok(Response::parse(&frame));
            }
            let chunk = self
                .ch
                .proc
                .read_chunk(deadline.map(|d| d.saturating_sub(t0.elapsed())));
            if let (Chunk::Timeout, Some(d)) = (&chunk, deadline) {
                self.kill();
                return Err(DriverError::Timeout { after: d });
            }
            match chunk {
                Chunk::Data(bytes) => self.ch.framer.push(&bytes),
                Chunk::Eof => {
                    // A final atom without trailing newline still counts.
                    if let Some(frame) = self.ch.framer.finish() {
                        return Ok(Response::parse(&frame));
                    }
                    self.ch.mark_dead();
                    return Err(self.ch.died_error());
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

impl std::fmt::Debug for FramedSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.ch.debug_as("FramedSolver", f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
