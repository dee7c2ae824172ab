//! One backend solver process as the session uses it: started lazily, restarted after a
//! crash or a deadline, with the time spent in it counted. Invariant: after any
//! `Died`/`Timeout` the process is gone and `generation` has moved on, so the owner knows
//! that whatever state it pushed into the solver is lost and must be rebuilt. `mode`
//! chooses how the next process is started: a [`FramedSolver`] (print-success on, see
//! `driver`), which the handle's own calls drive, or a [`LeanSolver`] (the passthrough's
//! mode, driven through [`SolverHandle::lean_mut`]). A framed call while a lean process
//! runs fails with a protocol error and sends nothing.
//!
//! A process may be started ahead of its first use (`prestart`: spawned, print-success sent,
//! its `success` not yet read), so that several solvers load side by side; until that
//! `success` is read (by `started`, or by any use, which reads it first) nothing else is
//! read from the process or sent to it through the handle.
//!
//! A handle may carry one detached check (`send_detached`: a fresh context solved only to
//! measure what it costs, while the caller goes on with the other backend). Its responses
//! are read only by `detached_cost` or `detached_answer` (which also gives the answer: the
//! portfolio races fresh contexts this way); any other use of the handle first reads what has
//! arrived and, if the check is still running, kills the process, so no other command's
//! responses are ever confused with the detached check's.

use crate::driver::{Channel, DriverError, FramedSolver, LeanSolver, Response, SolverSpec};
use std::time::{Duration, Instant};

/// How a [`SolverHandle`] starts its next process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverMode {
    /// A [`FramedSolver`]: the handle's calls (`cmd`, `check`, `batch`, ...).
    Framed,
    /// A [`LeanSolver`], driven by the passthrough through `lean_mut`.
    Lean,
}

/// The running process, in the mode it was started in.
enum Running {
    Framed(FramedSolver),
    Lean(LeanSolver),
}

impl Running {
    fn channel(&mut self) -> &mut Channel {
        match self {
            Running::Framed(s) => s,
            Running::Lean(s) => s,
        }
    }

    fn channel_ref(&self) -> &Channel {
        match self {
            Running::Framed(s) => s,
            Running::Lean(s) => s,
        }
    }

    /// The framed solver; a protocol error when the process is lean.
    fn framed(&mut self) -> Result<&mut FramedSolver, DriverError> {
        match self {
            Running::Framed(s) => Ok(s),
            Running::Lean(_) => Err(DriverError::Protocol("framed call on a lean solver".into())),
        }
    }
}

pub struct SolverHandle {
    spec: SolverSpec,
    solver: Option<Running>,
    pub timeout: Option<Duration>,
    /// Bumped every time the process is (re)started.
    pub generation: u64,
    pub restarts: u64,
    pub busy: Duration,
    /// Of `busy` and the callers' time, what was spent waiting for processes to start
    /// (spawned and answering), so that a cost measured over a few queries can leave a
    /// start out (`governor`).
    pub start_wait: Duration,
    pub checks: u64,
    /// How the next process is started.
    pub mode: DriverMode,
    detached: Option<Detached>,
    /// The cost and answer of a detached check that has finished, kept for
    /// `detached_cost` / `detached_answer`.
    detached_done: Option<(Duration, Response)>,
    /// The process was started by `prestart` and its start is not confirmed yet: its
    /// first response (print-success's `success`) is still to be read, before any other.
    unconfirmed: bool,
    /// Of an unconfirmed start, the commands sent right after it (`prestart_with`), whose
    /// responses are read with its `success`.
    ahead: usize,
    /// A lean process started ahead of need and sent the solver's warm-up
    /// (`prestart_lean`), its answer unread; a lean start may take it (`take_spare`).
    spare: Option<LeanSolver>,
    /// Lean processes print models in SMT-LIB's format (yices' `--smt2-model-format`, as
    /// the client asked or not: `driver::lean::lean_spec`).
    pub lean_smt2_models: bool,
}

/// A check sent by `send_detached` whose answer nobody waits for.
struct Detached {
    t0: Instant,
    /// The process's CPU time when it was sent (see `Channel::cpu_ns`).
    cpu0: Option<u64>,
    /// Still reading the reset's answers (up to its sentinel `(:name ...)`).
    in_reset: bool,
    /// Responses to read after the reset's, before the check's answer.
    acks: usize,
    /// One of them was an error: the check's answer is not about the whole query.
    rejected: Option<String>,
}

impl SolverHandle {
    pub fn new(spec: SolverSpec, timeout: Option<Duration>) -> Self {
        SolverHandle {
            spec,
            solver: None,
            timeout,
            generation: 0,
            restarts: 0,
            busy: Duration::ZERO,
            start_wait: Duration::ZERO,
            checks: 0,
            mode: DriverMode::Framed,
            detached: None,
            detached_done: None,
            unconfirmed: false,
            ahead: 0,
            spare: None,
            lean_smt2_models: true,
        }
    }
    pub fn spec(&self) -> &SolverSpec {
        &self.spec
    }
    pub fn is_running(&self) -> bool {
        self.solver.is_some()
    }
    /// A process is running and has not exited (a dead one is reaped and dropped).
    pub fn is_alive(&mut self) -> bool {
        self.live().is_some()
    }

    /// Start a framed process now without waiting for it to be ready (a solver that loads
    /// a large library takes milliseconds), when none runs: the caller goes on meanwhile,
    /// and the first use (or `started`) waits for the rest of the start. A process that
    /// cannot be started is left for that use to report.
    pub fn prestart(&mut self) {
        if self.solver.is_some() || self.detached.is_some() || self.mode != DriverMode::Framed {
            return;
        }
        if let Ok(s) = FramedSolver::spawn(&self.spec) {
            self.install(Running::Framed(s));
            self.unconfirmed = true;
        }
    }

    /// Start a lean process now, beside whatever runs, and send it `warm` (a command that
    /// builds the solver's context and touches none of its state,
    /// `SolverKind::lean_warm_up`): z3 builds its context, 15-20 ms, while the caller goes
    /// on. The process waits as a spare until a lean start takes it (`take_spare`), or
    /// `drop_spare`. Nothing when a spare is there already or none can be started.
    pub fn prestart_lean(&mut self, warm: &str) {
        if self.spare.is_some() {
            return;
        }
        if let Ok(mut s) = LeanSolver::start(&self.spec, self.lean_smt2_models) {
            s.write(warm);
            s.flush();
            self.spare = Some(s);
        }
    }

    /// The spare (`prestart_lean`) becomes the running process, in lean mode, when it is
    /// alive and no process runs: true. Its first output is the warm-up's answer, which
    /// the caller reads past (a replay's handshake does).
    pub fn take_spare(&mut self) -> bool {
        if self.solver.is_some() || self.detached.is_some() {
            return false;
        }
        let Some(mut s) = self.spare.take() else {
            return false;
        };
        if !s.is_alive() {
            return false;
        }
        self.mode = DriverMode::Lean;
        self.install(Running::Lean(s));
        true
    }

    /// `s` becomes the running process, of a new generation (a restart, unless it is the
    /// handle's first).
    fn install(&mut self, s: Running) {
        if self.generation > 0 {
            self.restarts += 1;
        }
        self.generation += 1;
        self.solver = Some(s);
    }

    /// End the spare, if there is one.
    pub fn drop_spare(&mut self) {
        if let Some(mut s) = self.spare.take() {
            s.retire();
        }
    }

    /// `prestart`, then `cmds` (plain commands: options, the logic, the solver's warm-up)
    /// sent at once, nothing read: the solver works through them while the caller goes on
    /// (z3 builds its context, ~11 ms, at the first command that needs one), and the first
    /// use reads their responses with the start's (a refusal ends the process, and that
    /// use starts another). The new process's generation when `cmds` went to it; `None`
    /// when a process already ran or a start was under way, when none could be started,
    /// or when a command needs special handling (the process may then have been started,
    /// with nothing more sent).
    pub fn prestart_with(&mut self, cmds: &[String]) -> Option<u64> {
        if self.solver.is_some() {
            return None;
        }
        self.prestart();
        let sent = match self.solver.as_mut().map(|s| s.framed()) {
            Some(Ok(s)) => s.send_ahead(cmds),
            _ => return None,
        };
        match self.after(sent) {
            Ok(true) => {
                self.ahead = cmds.len();
                Some(self.generation)
            }
            _ => None,
        }
    }

    /// A start with commands sent ahead of need (`prestart_with`) is still being worked
    /// through.
    pub fn warming(&mut self) -> bool {
        self.ahead > 0 && !self.started(Duration::ZERO)
    }

    /// Whether a use now would not wait for the process to start, waiting up to `wait`
    /// for it: true once a `prestart`ed process has answered, and when none is starting.
    pub fn started(&mut self, wait: Duration) -> bool {
        if !self.unconfirmed {
            return true;
        }
        match self.confirm(Some(wait)).unwrap_or(Ok(true)) {
            Ok(false) => false,
            Ok(true) => {
                self.unconfirmed = false;
                true
            }
            Err(_) => {
                // The next use starts a process again and reports what fails.
                self.kill();
                true
            }
        }
    }

    /// `FramedSolver::confirm_start` on the running framed process (None when there is
    /// none), the wait counted in `start_wait`.
    fn confirm(&mut self, wait: Option<Duration>) -> Option<Result<bool, DriverError>> {
        let t0 = Instant::now();
        let r = match self.solver.as_mut().map(|s| s.framed()) {
            Some(Ok(s)) => Some(s.confirm_start(wait, self.ahead)),
            _ => None,
        };
        if matches!(r, Some(Ok(true))) {
            self.ahead = 0;
        }
        self.start_wait += t0.elapsed();
        r
    }

    /// The running process, after reaping and dropping it if it has exited. Never starts one
    /// (one `prestart`ed is waited for here).
    fn live(&mut self) -> Option<&mut Running> {
        self.end_detached();
        if self.unconfirmed {
            let confirmed = self.confirm(None).is_some_and(|r| r.is_ok());
            self.unconfirmed = false;
            if !confirmed {
                self.kill();
            }
        }
        if self
            .solver
            .as_mut()
            .is_some_and(|s| !s.channel().is_alive())
        {
            self.kill();
        }
        self.solver.as_mut()
    }

    fn ensure(&mut self) -> Result<&mut Running, DriverError> {
        self.end_detached();
        if self.live().is_none() {
            let t0 = Instant::now();
            let s = match self.mode {
                DriverMode::Lean => {
                    Running::Lean(LeanSolver::start(&self.spec, self.lean_smt2_models)?)
                }
                DriverMode::Framed => Running::Framed(FramedSolver::start(&self.spec)?),
            };
            self.start_wait += t0.elapsed();
            self.install(s);
        }
        self.solver
            .as_mut()
            .ok_or_else(|| DriverError::Protocol("solver not running".into()))
    }

    /// Make sure a process is running; returns its generation.
    pub fn start(&mut self) -> Result<u64, DriverError> {
        self.ensure()?;
        Ok(self.generation)
    }

    /// The running process if it is lean, without checking that it is still alive (lean
    /// mode learns of a death when it reads the solver's output).
    pub fn lean_mut(&mut self) -> Option<&mut LeanSolver> {
        self.end_detached();
        match self.solver.as_mut() {
            Some(Running::Lean(s)) => Some(s),
            _ => None,
        }
    }

    /// Where the next byte sent to the running process lands (line, column).
    pub fn position(&self) -> Option<(usize, usize)> {
        self.solver.as_ref().map(|s| s.channel_ref().position())
    }

    /// One command (declarations, assertions, get-value) under the session's deadline:
    /// an assertion can make z3 unfold a definition forever, and a confused solver may
    /// never finish an answer.
    pub fn cmd(&mut self, text: &str) -> Result<Response, DriverError> {
        let (t0, deadline) = (Instant::now(), self.timeout);
        let r = self.ensure()?.framed()?.command(text, deadline);
        self.busy += t0.elapsed();
        self.after(r)
    }

    /// One command (under the session's deadline) to the process of generation `gen`
    /// only: when that process is gone (crashed, killed, replaced) this fails with `Died` instead of
    /// starting a new solver, which would not hold the state the command is about (a
    /// get-value after a check-sat must never be answered by a solver that has not seen
    /// the query).
    pub fn cmd_in_generation(&mut self, gen: u64, text: &str) -> Result<Response, DriverError> {
        let gone = || DriverError::Died {
            exit: None,
            stderr: "the solver process that answered the check-sat is gone".into(),
        };
        if self.generation != gen {
            return Err(gone());
        }
        let (t0, deadline) = (Instant::now(), self.timeout);
        let r = match self.live() {
            Some(s) => s.framed().and_then(|s| s.command(text, deadline)),
            None => return Err(gone()),
        };
        self.busy += t0.elapsed();
        self.after(r)
    }

    /// A check-sat (or check-sat-assuming) under the deadline.
    pub fn check(&mut self, text: &str) -> Result<Response, DriverError> {
        self.check_with(text, self.timeout)
    }

    /// A check-sat under a given deadline.
    pub fn check_with(
        &mut self,
        text: &str,
        deadline: Option<Duration>,
    ) -> Result<Response, DriverError> {
        let t0 = Instant::now();
        self.checks += 1;
        let r = self.ensure()?.framed()?.command(text, deadline);
        self.busy += t0.elapsed();
        self.after(r)
    }

    /// Send a check-sat without waiting for its answer (see `poll`).
    /// Never starts a process (the caller put state into this one).
    pub fn send_check(&mut self, text: &str) -> Result<(), DriverError> {
        self.checks += 1;
        let r = match self.live() {
            Some(s) => s.framed().and_then(|s| s.send_nowait(text)),
            None => Err(DriverError::Died {
                exit: None,
                stderr: "the solver process is gone".into(),
            }),
        };
        self.after(r)
    }

    /// The answer to the check sent by `send_check`, if it comes within `wait`.
    pub fn poll(&mut self, wait: Duration) -> Result<Option<Response>, DriverError> {
        let t0 = Instant::now();
        let r = match self.solver.as_mut() {
            Some(s) => s.framed().and_then(|s| s.poll_response(wait)),
            None => Err(DriverError::Protocol("solver not running".into())),
        };
        self.busy += t0.elapsed();
        self.after(r)
    }

    /// Whether the next `n` responses (a batch's acknowledgements and its check's answer)
    /// have all come, waiting up to `wait`; none is taken. True when there is no process
    /// to wait for: reading then says why at once. A look, not counted in `busy`: the
    /// caller that watches several solvers counts its own wait.
    pub fn responses_ready(&mut self, n: usize, wait: Duration) -> bool {
        match self.solver.as_mut().map(|s| s.framed()) {
            Some(Ok(s)) => s.responses_ready(n, wait),
            _ => true,
        }
    }

    /// `cmds` and then the check-sat `check`, sent at once without waiting (see
    /// `FramedSolver::send_batch_nowait`): `Some(n)`, the number of responses to read with
    /// `acks` before `poll` gives the check's answer; `None` when nothing was sent.
    /// Never starts a process.
    pub fn send_with_check(
        &mut self,
        cmds: &[String],
        check: &str,
    ) -> Result<Option<usize>, DriverError> {
        let r = match self.live() {
            Some(s) => s.framed().and_then(|s| s.send_batch_nowait(cmds, check)),
            None => Err(DriverError::Died {
                exit: None,
                stderr: "the solver process is gone".into(),
            }),
        };
        let r = self.after(r)?;
        if r.is_some() {
            self.checks += 1;
        }
        Ok(r)
    }

    /// The responses to the `n` commands sent before a check by `send_with_check`, under
    /// the session's deadline; the first error response as `Ok(Err(text))`.
    pub fn acks(&mut self, n: usize) -> Result<Result<(), String>, DriverError> {
        if n == 0 {
            return Ok(Ok(()));
        }
        let t0 = Instant::now();
        let deadline = self.timeout;
        let r = match self.solver.as_mut() {
            Some(s) => s.framed().and_then(|s| s.read_acks(n, deadline)),
            None => Err(DriverError::Protocol("solver not running".into())),
        };
        self.busy += t0.elapsed();
        let rs = self.after(r)?;
        for r in rs {
            if let Response::Error(e) = r {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }

    /// Pipelined commands under the session's deadline (an assertion can hang a solver:
    /// z3 unfolds recursive definitions when asserting); the first error response is
    /// returned as `Ok(Err(text))`.
    pub fn batch(&mut self, cmds: &[String]) -> Result<Result<(), String>, DriverError> {
        if cmds.is_empty() {
            return Ok(Ok(()));
        }
        let t0 = Instant::now();
        let deadline = self.timeout;
        let r = self.ensure()?.framed()?.batch(cmds, deadline);
        self.busy += t0.elapsed();
        let rs = self.after(r)?;
        for (c, r) in cmds.iter().zip(rs) {
            if let Response::Error(e) = r {
                return Ok(Err(format!("{e} (in {})", abbreviate(c))));
            }
        }
        Ok(Ok(()))
    }

    fn after<T>(&mut self, r: Result<T, DriverError>) -> Result<T, DriverError> {
        if matches!(
            r,
            Err(DriverError::Died { .. } | DriverError::Timeout { .. } | DriverError::Io(_))
        ) {
            self.kill();
        }
        r
    }

    /// Pose a query in a fresh context (`cmds` from `planner::fresh_script`, starting with
    /// `(reset)`, then its check) without waiting: the process solves it while the caller
    /// goes on, and `detached_cost` later tells what it cost. Starts the process if none
    /// runs. `false`, having sent nothing, when a detached check is already out or a
    /// command needs special handling.
    pub fn send_detached(&mut self, cmds: &[String], check: &str) -> Result<bool, DriverError> {
        let Some(rest) = cmds.strip_prefix(&["(reset)".to_string()]) else {
            return Ok(false);
        };
        if self.detached.is_some() {
            return Ok(false);
        }
        let s = self.ensure()?.framed()?;
        let cpu0 = s.cpu_ns();
        let r = s.send_reset_batch_nowait(rest, check);
        let Some(acks) = self.after(r)? else {
            return Ok(false);
        };
        self.checks += 1;
        self.detached = Some(Detached {
            t0: Instant::now(),
            cpu0,
            in_reset: true,
            acks,
            rejected: None,
        });
        Ok(true)
    }

    /// How long the detached check has been out, while it is not answered.
    pub fn detached_age(&self) -> Option<Duration> {
        self.detached.as_ref().map(|d| d.t0.elapsed())
    }

    /// What a detached check cost, once it has been answered (reads what has arrived,
    /// never waits): the process's CPU time for it where the system tells it, else the
    /// time until its answer was seen. `None` while it runs, or when it was lost (the
    /// process died or was killed).
    pub fn detached_cost(&mut self) -> Option<Duration> {
        self.read_detached(Duration::ZERO);
        self.detached_done.take().map(|(cost, _)| cost)
    }

    /// The answer of the detached check once it has come (waiting up to `wait` for what
    /// has not arrived), with its cost as `detached_cost` tells it; an error response when
    /// the solver rejected one of the query's commands. `None` while it runs, or when it
    /// was lost (then `detached_age` is `None` too).
    pub fn detached_answer(&mut self, wait: Duration) -> Option<(Duration, Response)> {
        self.read_detached(wait);
        self.detached_done.take()
    }

    /// Read the detached check's responses that have arrived; when its answer is among
    /// them, its cost goes to `detached_done`. On any failure the process is killed.
    fn read_detached(&mut self, wait: Duration) {
        let (Some(d), Some(Running::Framed(s))) = (self.detached.as_mut(), self.solver.as_mut())
        else {
            self.detached = None;
            return;
        };
        let t0 = Instant::now();
        loop {
            match s.poll_response(wait.saturating_sub(t0.elapsed())) {
                Ok(Some(r)) => {
                    if d.in_reset {
                        d.in_reset = !matches!(&r, Response::Other(t) if t.starts_with("(:name"));
                    } else if d.acks > 0 {
                        if let (Response::Error(e), None) = (&r, &d.rejected) {
                            d.rejected = Some(e.clone());
                        }
                        d.acks -= 1;
                    } else {
                        let cpu = s.cpu_ns().zip(d.cpu0).map(|(b, a)| b.saturating_sub(a));
                        let cost = match cpu {
                            Some(ns) if ns > 0 => Duration::from_nanos(ns),
                            _ => d.t0.elapsed(),
                        };
                        let r = match d.rejected.take() {
                            Some(e) => Response::Error(e),
                            None => r,
                        };
                        self.detached = None;
                        // An error or `unknown` still measured a fresh context.
                        self.detached_done = Some((cost, r));
                        return;
                    }
                }
                Ok(None) => return,
                Err(_) => {
                    self.detached = None;
                    self.kill();
                    return;
                }
            }
        }
    }

    /// Before any other use: read what the detached check has answered; if it still
    /// runs, kill the process (the caller needs it now, and its pending responses
    /// would be taken for the caller's).
    fn end_detached(&mut self) {
        if self.detached.is_some() {
            self.read_detached(Duration::ZERO);
            if self.detached.take().is_some() {
                self.kill();
            }
        }
    }

    pub fn kill(&mut self) {
        self.detached = None;
        self.unconfirmed = false;
        self.ahead = 0;
        if let Some(mut s) = self.solver.take() {
            s.channel().retire();
        }
    }
}

fn abbreviate(s: &str) -> String {
    if s.len() > 80 {
        let mut end = 80;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s.to_string()
    }
}
