//! Replay of the client's state into a new lean backend: after the solver died or ran past
//! the deadline, and when a session turns to passthrough.
//!
//! Invariants:
//! * The backend is killed, restarted in lean mode and given the client's state (its
//!   output discarded: it was given to the client when the commands first ran); or, when
//!   the caller allows it and the backend is alive in lean mode with nothing in flight, it
//!   is sent `(reset)` and the options smtproxy sets on it itself, then the state. Then the
//!   last sat check-sat again if the client may still ask for its model, then the client's
//!   print-success (always on in counted mode, see `frame::needs_counted`).
//! * The replay goes on one line (its commands' own line breaks aside), so the client's
//!   next command, on a later line of the client's input, is sent on that same line and
//!   the solver's first error after a replay names the client's line.
//! * With [`Replay::handshake`] a new process (not in counted mode) is waited for (a
//!   marker answered) before anything else is sent to it, and that wait counts as its
//!   start; the replay after it does not. Where [`Replay::spare`] allows it, such a start
//!   takes the backend's spare, a process started ahead and warmed
//!   (`SolverHandle::prestart_lean`), when the client's options are all ones z3 applies
//!   after its context is built ([`WARM_OPTIONS`]); the warm-up's answer is read and
//!   dropped with the handshake's marker. A spare that cannot serve the client's options
//!   is ended.
//! * A replayed command the solver refuses (smtproxy's parser took it, the solver does
//!   not) is left out as the solver would leave it, and noted; the replay runs under the
//!   session's deadline, past which the backend is killed and the error returned.

use crate::driver::{DriverError, LeanEvent, LeanSolver, SolverKind};
use crate::session::backend::{DriverMode, SolverHandle};
use crate::session::stats::Stats;
use std::time::{Duration, Instant};

/// The options a warmed spare (its context built before the client's state is known) may
/// be given: z3 applies each after its context is built as it does before (the same
/// answers, cores and assumptions, values for the same names: a model of its own, as any
/// new z3 given the client's state at a turn finds one;
/// `proxy_governor::z3_warmed_answers_as_z3_for_every_warm_option`). Any other option in the
/// client's state (z3 refuses `:global-declarations` and `:interactive-mode` then, and
/// others may be fixed at the context's creation) starts a process afresh.
pub const WARM_OPTIONS: &[&str] = &[
    ":print-success",
    ":produce-models",
    ":produce-unsat-cores",
    ":produce-unsat-assumptions",
    ":produce-assignments",
];

/// Whether every `set-option` in the replay `log` sets one of [`WARM_OPTIONS`].
fn spare_fits(log: &[String]) -> bool {
    log.iter().all(|c| {
        let c = c.trim_start_matches(|ch: char| ch == '(' || ch.is_whitespace());
        let Some(rest) = c.strip_prefix("set-option") else {
            return true;
        };
        let key = rest.split_whitespace().next().unwrap_or("");
        WARM_OPTIONS.contains(&key.trim_end_matches(')'))
    })
}

/// The client's state as a new backend must be given it.
pub struct Replay {
    /// The commands that rebuild the client's state (`ClientState::replay_log`).
    pub log: Vec<String>,
    /// Whether there is any state (or a level) to rebuild.
    pub has_state: bool,
    /// print-success as the client has it.
    pub print_success: bool,
    /// Whether the client asked for models.
    pub produce_models: bool,
    /// Whether a backend still running in lean mode, with nothing in flight, may be reset
    /// and given the state rather than restarted (the fall-back backend, between
    /// fall-backs).
    pub reuse: bool,
    /// Wait for a new process to answer a marker before anything else goes to it, and
    /// count the wait as its start (`SolverHandle::start_wait`): a governor's window of
    /// this route then measures the queries, not the start.
    pub handshake: bool,
    /// A new process may be the backend's spare, its context built ahead: where the
    /// session keeps that context (a turn at a pop). Not at a reset: z3 builds its context
    /// again at every reset, so a stream that resets gains one build, and its first query,
    /// cheap in the warmed spare, would stand in a probe for the rest, each a build (on
    /// KLEE's regexp log a probe's pipeline, sized by that first query, then held nine
    /// queries of 17 ms where it held three).
    pub spare: bool,
}

/// Kill, restart in lean mode and replay `r` (and `model_check`, the client's last sat
/// check-sat, when its model may still be asked for); `counted`: the passthrough is in
/// counted mode, so print-success ends on whatever the client has. The solver's time goes to `busy`
/// and `stats.solver`.
pub fn rebuild(
    h: &mut SolverHandle,
    stats: &mut Stats,
    r: &Replay,
    model_check: Option<&str>,
    counted: bool,
) -> Result<(), DriverError> {
    // yices is not reused: its framing (print-success on or off) is chosen when it
    // starts, and changing it in a running yices breaks the session.
    let reused =
        r.reuse && h.spec().kind != SolverKind::Yices && h.mode == DriverMode::Lean && h.is_alive();
    if !reused {
        h.kill();
        h.mode = DriverMode::Lean;
        let handshake = r.handshake && !counted;
        let warm = handshake
            && r.spare
            && if spare_fits(&r.log) {
                h.take_spare()
            } else {
                h.drop_spare();
                false
            };
        if !warm {
            h.start()?;
        }
        // Not in counted mode: a marker before print-success is turned on in yices made it
        // exit later (`frame::needs_counted`).
        if handshake {
            // The new process answers a marker (on the replay's line) before anything
            // else goes to it: the wait is its start, apart from the replay's work. A
            // spare's warm-up answer comes before it and is dropped.
            let t0 = Instant::now();
            let deadline = h.timeout;
            let result = match h.lean_mut() {
                Some(s) => {
                    let n = s.mark(false);
                    await_marker(s, n, deadline, t0).map(|_| ())
                }
                None => Err(DriverError::Protocol("solver not running".into())),
            };
            let dt = t0.elapsed();
            h.busy += dt;
            h.start_wait += dt;
            stats.solver += dt;
            if let Err(e) = result {
                h.kill();
                return Err(e);
            }
        }
    }
    let deadline = h.timeout;
    let t0 = Instant::now();
    let Some(s) = h.lean_mut() else {
        return Err(DriverError::Protocol("solver not running".into()));
    };
    let ps = r.print_success;
    // Counted mode keeps print-success on in the solver whatever the client has.
    let backend_ps = ps || counted;
    if !(r.has_state || backend_ps || reused) {
        return Ok(());
    }
    // Error messages give line numbers (all three solvers): the replay goes on one line
    // (its commands' own line breaks aside), so that the client's next command, on a
    // later line of the client's input, is sent on that same line (see `frame::gap`); a
    // line per command would make the first error after a replay name a later line than
    // the client's.
    let sep = " ";
    if reused {
        // The solver's own state goes; so do the options smtproxy set on it itself, which
        // z3 keeps across a reset (the client's come back with its log).
        s.write("(reset)");
        s.write(sep);
        if !backend_ps {
            s.write("(set-option :print-success false)");
            s.write(sep);
        }
        if !r.produce_models {
            s.write("(set-option :produce-models false)");
            s.write(sep);
        }
    }
    // A model for the client's last check-sat only if the client asked for models: cvc5
    // without them refuses get-value, as it should.
    if r.produce_models {
        s.write("(set-option :produce-models true)");
        s.write(sep);
    }
    for c in &r.log {
        s.write(c);
        s.write(sep);
    }
    if let Some(check) = model_check {
        // The client may still ask for the model of its last (sat) check-sat; its answer
        // is read and dropped with the rest before the marker.
        s.write(check);
        s.write(sep);
    }
    if backend_ps {
        s.write("(set-option :print-success true)");
        s.write(sep);
    }
    let n = s.mark(backend_ps);
    // Every replayed command was accepted when the client sent it; one the solver refuses
    // now was accepted by smtproxy's parser only. The solver goes on without it, as it
    // would have alone, and the session notes it.
    let result = await_marker(s, n, deadline, t0);
    let dt = t0.elapsed();
    h.busy += dt;
    stats.solver += dt;
    let refused = match result {
        Ok(refused) => refused,
        Err(e) => {
            h.kill();
            return Err(e);
        }
    };
    if let Some((k, first)) = refused {
        stats.note(format!(
            "replaying the client's state into passthrough, the solver refused {k} \
             command(s) smtproxy had accepted (first: {first})"
        ));
    }
    Ok(())
}

/// Read the solver's output until marker `n`, under the session's `deadline` counted from
/// `t0` (the client's own state can hang the solver: an assertion z3 unfolds forever).
/// Returns the errors printed meanwhile: how many, and the first.
fn await_marker(
    s: &mut LeanSolver,
    n: u64,
    deadline: Option<Duration>,
    t0: Instant,
) -> Result<Option<(usize, String)>, DriverError> {
    let mut refused: Option<(usize, String)> = None;
    loop {
        let left = deadline.map(|d| d.saturating_sub(t0.elapsed()));
        match s.next_event(left) {
            Ok(LeanEvent::Marker { n: m, .. }) if m == n => return Ok(refused),
            Ok(LeanEvent::Form { form, .. }) if form.starts_with("(error") => {
                let r = refused.get_or_insert((0, form));
                r.0 += 1;
            }
            Ok(LeanEvent::Silence) if left.is_some_and(|l| l.is_zero()) => {
                return Err(DriverError::Timeout {
                    after: deadline.unwrap_or_default(),
                })
            }
            Ok(_) => {}
            Err(e) => return Err(e),
        }
    }
}
