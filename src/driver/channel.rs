//! What both driver modes share: one running solver process behind pipes, the framer that
//! cuts its output, where the next byte sent lands, whether it is dead, and the time spent
//! waiting on it. [`super::FramedSolver`] and [`super::LeanSolver`] each own a `Channel`
//! and deref to it for these common calls; what to send and how to read answers is theirs.
//!
//! Invariants:
//! * The process runs in its own process group; [`Channel::kill`] (also run on drop, on
//!   timeout and when the solver is found dead) sends SIGTERM to the whole group, waits
//!   [`KILL_GRACE`], sends SIGKILL and reaps the leader. No solver process outlives its
//!   channel, even one ignoring SIGTERM, except through [`Channel::retire`], whose
//!   SIGTERM goes at once and the rest on a thread of its own (at most [`KILL_GRACE`]
//!   later; the parent-death signal covers smtproxy's own exit meanwhile).
//! * Every byte written is counted into [`Channel::position`] (line, column), the
//!   numbering solvers use in their error messages.
//! * Once the solver is found dead it is reaped and its exit code recorded; every later
//!   call of either mode reports `Died` with that code and the tail of its stderr.

use std::time::{Duration, Instant};

use super::error::DriverError;
use super::process::{Proc, KILL_GRACE};
use super::reader::Framer;
use super::spec::SolverSpec;

/// A running solver process and its output framer (see the module header).
pub struct Channel {
    pub(super) spec: SolverSpec,
    pub(super) proc: Proc,
    pub(super) framer: Framer,
    pub(super) dead: bool,
    /// Exit code recorded when the solver was found dead.
    exit: Option<i32>,
    pub(super) busy: Duration,
    /// Position (1-based line; column counted in characters) of the next byte sent.
    line: usize,
    pub(super) col: usize,
}

impl Channel {
    /// Spawn the solver; its output is cut by `framer`.
    pub(super) fn spawn(spec: &SolverSpec, framer: Framer) -> Result<Channel, DriverError> {
        let proc = Proc::spawn(spec)?;
        Ok(Channel {
            spec: spec.clone(),
            proc,
            framer,
            dead: false,
            exit: None,
            busy: Duration::ZERO,
            line: 1,
            col: 1,
        })
    }

    /// Where the next byte sent lands in the solver's input: (line, column), 1-based,
    /// columns counted in characters. Solvers number their error positions by it.
    pub fn position(&self) -> (usize, usize) {
        (self.line, self.col)
    }

    /// Count `bytes`, about to be sent, into the position.
    pub(super) fn advance(&mut self, bytes: &[u8]) {
        (self.line, self.col) = advanced((self.line, self.col), bytes);
    }

    /// The solver's own CPU time so far, in nanoseconds, where the system tells it.
    pub fn cpu_ns(&self) -> Option<u64> {
        self.proc.cpu_ns()
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

    /// Kill without waiting for the end (`Proc::retire`): for a solver given up whose exit
    /// code nobody reads.
    pub fn retire(&mut self) {
        self.proc.retire();
        self.dead = true;
    }

    /// Last ~64 KB of the solver's stderr.
    pub fn stderr_tail(&self) -> String {
        self.proc.stderr_tail()
    }

    pub fn spec(&self) -> &SolverSpec {
        &self.spec
    }

    /// Cumulative wall time spent waiting on the solver (startup and every call of its
    /// mode that sends or reads).
    pub fn busy_time(&self) -> Duration {
        self.busy
    }

    pub(super) fn ensure_alive(&mut self) -> Result<(), DriverError> {
        if self.dead {
            return Err(self.died_error());
        }
        Ok(())
    }

    pub(super) fn died_error(&self) -> DriverError {
        DriverError::Died {
            exit: self.exit,
            stderr: self.proc.stderr_tail(),
        }
    }

    /// Reap after the solver was found gone (EOF or exited).
    pub(super) fn mark_dead(&mut self) {
        // Give a process that closed stdout a moment to exit on its own so its
        // real exit code is recorded, then make sure the group is gone.
        let until = Instant::now() + Duration::from_millis(100);
        while Instant::now() < until && !self.proc.leader_exited() {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.kill();
        self.proc.settle_stderr(Duration::from_millis(100));
    }

    /// `name { spec, pid, dead }`, for the modes' `Debug`.
    pub(super) fn debug_as(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(name)
            .field("spec", &self.spec)
            .field("pid", &self.pid())
            .field("dead", &self.dead)
            .finish()
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The position (line, column; columns in characters) after `bytes` sent from `at`.
fn advanced(at: (usize, usize), bytes: &[u8]) -> (usize, usize) {
    // Characters: bytes that do not continue a UTF-8 sequence.
    let chars = |b: &[u8]| b.len() - count_bytes(b, |c| (c & 0xC0) == 0x80);
    let breaks = count_bytes(bytes, |c| c == b'\n');
    if breaks == 0 {
        return (at.0, at.1 + chars(bytes));
    }
    // Scans back over the last line only.
    let last = bytes.iter().rposition(|&b| b == b'\n').unwrap_or(0);
    (at.0 + breaks, 1 + chars(&bytes[last + 1..]))
}

/// The bytes of `bytes` that `is` holds for. Counted a block at a time into a byte-wide
/// sum, which the compiler turns into vector code: every byte the lean route sends is
/// counted here (`filter(..).count()` and a scan back for the last line took 13
/// instructions a byte).
fn count_bytes(bytes: &[u8], is: impl Fn(u8) -> bool + Copy) -> usize {
    bytes
        .chunks(255)
        .map(|block| usize::from(block.iter().fold(0u8, |n, &b| n + u8::from(is(b)))))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::{advanced, count_bytes};

    fn newlines(b: &[u8]) -> usize {
        count_bytes(b, |c| c == b'\n')
    }

    #[test]
    fn count_bytes_counts_every_line_break_across_blocks() {
        for text in [
            &b""[..],
            b"no break",
            b"\n",
            b"(check-sat)\n(get-value (x))\n",
        ] {
            assert_eq!(newlines(text), text.iter().filter(|&&b| b == b'\n').count());
        }
        // Whole blocks of breaks (the byte-wide sum at its largest), and blocks that mix.
        let all = vec![b'\n'; 255 * 3 + 7];
        assert_eq!(newlines(&all), all.len());
        let mixed: Vec<u8> = (0..10_000u32)
            .map(|i| {
                if i % 3 == 0 || i % 7 == 0 {
                    b'\n'
                } else {
                    b'a'
                }
            })
            .collect();
        let want = (0..10_000u32).filter(|i| i % 3 == 0 || i % 7 == 0).count();
        assert_eq!(newlines(&mixed), want);
    }

    #[test]
    fn positions_count_lines_and_characters() {
        // One character at a time, as the solver reads them.
        fn naive(mut at: (usize, usize), text: &str) -> (usize, usize) {
            for c in text.chars() {
                at = if c == '\n' {
                    (at.0 + 1, 1)
                } else {
                    (at.0, at.1 + 1)
                };
            }
            at
        }
        let long = "(assert (= x \"\u{e9}t\u{e9}\"))".repeat(40);
        for text in [
            "",
            "(check-sat)",
            "(check-sat)\n",
            "\n(assert (= s \"\u{2603}\"))",
            "(echo \"a\u{1F600}b\")\n(push 1)\n  ",
            long.as_str(),
        ] {
            for at in [(1, 1), (7, 30)] {
                assert_eq!(advanced(at, text.as_bytes()), naive(at, text), "{text:?}");
            }
        }
    }
}
