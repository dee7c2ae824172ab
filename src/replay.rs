//! Replaying recorded logs through the same engine the proxy uses, in-process. Each
//! check-sat answer is compared with the answer recorded in the log (`--check`): KLEE's
//! result comments, or `(set-info :status ...)` before the check-sat in plain scripts. An
//! `unknown` where an answer was recorded counts as a mismatch: it is not wrong, but it is
//! not the answer either. The time of each check-sat is kept too (the engine's time from
//! the previous answer, or the start, to its own: the commands that posed it included;
//! reading the log not), for `bench`'s virtual best solver.

use crate::corpus::{Log, LogKind};
use crate::session::vocab::Answer;
use crate::session::Engine;
use crate::smt2::reader::{CommandReader, Frame};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar on stderr when stderr is a terminal.
pub fn progress_bar(len: u64, label: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg:40!} {bar:30} {pos}/{len} {elapsed}") {
        b.set_style(style);
    }
    b.set_message(label.to_string());
    Some(b)
}

#[derive(Clone, Debug, Default)]
pub struct ReplayResult {
    /// The engine's answer to each check-sat, in order.
    pub answers: Vec<Answer>,
    /// The recorded answer of each check-sat, where there is one.
    pub expected: Vec<Option<Answer>>,
    pub expected_mismatches: u64,
    /// (check-sat index, expected, got) for the first mismatches.
    pub mismatch_examples: Vec<(usize, Answer, Answer)>,
    /// The time of each check-sat, in ms: the engine's own wall time (`Stats::wall`, what
    /// the run's `wall_ms` sums) from the previous answer (or the start) to its own, so
    /// the per-check times of a run never add up to more than its wall time.
    pub check_ms: Vec<f64>,
    /// Of each `check_ms`, the time the engine waited for solvers (`Stats::solver` over
    /// the same span), in ms; the rest is smtproxy's own work.
    pub check_solver_ms: Vec<f64>,
}

/// Run every command of `log` through `engine`; a KLEE record's `(exit)` acts as `(reset)`.
pub fn replay(log: &Log, engine: &mut Engine, mut progress: impl FnMut(usize)) -> ReplayResult {
    let mut res = ReplayResult::default();
    let mut status: Option<Answer> = None;
    let mut seen_checks = 0usize;
    let mut reader = CommandReader::new(log.text.as_bytes());
    let mut done = false;
    // The engine's wall time at the last check-sat's answer.
    let mut at_last = engine.wall_now();
    let mut solver_at_last = engine.stats.solver;
    while !done {
        let outs = match reader.next_frame() {
            Some(frame) => {
                let frame = match frame {
                    Frame::Command(mut c) if log.kind == LogKind::Klee && c.text == "(exit)" => {
                        c.text = "(reset)".into();
                        Frame::Command(c)
                    }
                    f => f,
                };
                let more = reader.more_in_memory();
                engine.push(frame, more)
            }
            None => {
                done = true;
                engine.finish()
            }
        };
        for out in outs {
            if let Some(s) = out.status {
                status = Some(s);
            }
            if let Some(a) = out.check {
                let idx = res.answers.len();
                let expected = match log.kind {
                    LogKind::Klee => log.klee_expected.get(idx).copied().flatten(),
                    LogKind::Script => status.take(),
                };
                if let Some(e) = expected {
                    if e != Answer::Unknown && e != a {
                        res.expected_mismatches += 1;
                        if res.mismatch_examples.len() < 10 {
                            res.mismatch_examples.push((idx, e, a));
                        }
                    }
                }
                res.answers.push(a);
                res.expected.push(expected);
                let wall = engine.wall_now();
                res.check_ms
                    .push(wall.saturating_sub(at_last).as_secs_f64() * 1000.0);
                at_last = wall;
                let solver = engine.stats.solver;
                res.check_solver_ms
                    .push(solver.saturating_sub(solver_at_last).as_secs_f64() * 1000.0);
                solver_at_last = solver;
                seen_checks += 1;
                progress(seen_checks);
            }
            if out.exit || engine.output_closed() {
                done = true;
            }
        }
    }
    res
}

/// Number of check-sat commands in a log (for progress bars).
pub fn count_checks(log: &Log) -> usize {
    log.text.matches("(check-sat").count()
}
