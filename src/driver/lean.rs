//! Lean mode: the solver as passthrough uses it (see `session::lean`), fed the caller's
//! text as it is and read back byte for byte, batches closed by markers.
//!
//! Invariants:
//! * Nothing is sent but the caller's text ([`LeanSolver::write`], buffered, no line break
//!   added) and markers: [`LeanSolver::mark`] appends `(echo "sp!sync-N")` and a line
//!   break to the current line and hands the buffer to the pipe. print-success starts
//!   off, as the solver run directly has it (z3 5.4 runs 35% slower with it on, yices
//!   about 10%). Counted mode (`session::lean::frame::needs_counted`) turns it on again
//!   in a new process by the replay.
//! * yices runs as the client runs it, without the `--interactive` that smtproxy's own
//!   (framed) yices gets ([`lean_spec`]): a syntax error or an undefined name then ends
//!   its session, as it ends the client's yices (`session::lean` ends the client's
//!   session with it), and print-success starts off.
//! * [`LeanSolver::next_event`] cuts the output into [`LeanEvent`]s that together hold
//!   every byte the solver printed, in order, except each marker and the line break after
//!   it (and the `success` cvc5 prints after an echo under print-success, when `mark` was
//!   told it is on). Marker text is cut out of error messages (cvc5 quotes the input
//!   line). Markers arrive in the order sent; another number is a protocol error. Before
//!   each wait an `Idle` event hands over the settled bytes, so the caller can flush
//!   before it blocks.
//! * A wait that passes gives `Silence` with the solver left running: deadlines are the
//!   caller's. EOF gives `Died` after the settled bytes; the solver is reaped.
//!   [`LeanSolver::idle_probe`] tells a solver that has read all its input and is not
//!   running.
//! * Only lean calls exist on a [`LeanSolver`]: the framed mode's are another type
//!   ([`super::FramedSolver`]), so a framed call on a lean solver does not compile.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use super::channel::Channel;
use super::error::DriverError;
use super::process::Chunk;
use super::reader::Framer;
use super::spec::{SolverKind, SolverSpec};

/// One step of reading a lean solver's output (see [`LeanSolver::next_event`]).
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

/// `text` without the markers `mark` appends to lines.
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
    strip_cut_markers(&out)
}

/// `text` without the start of a marker that cvc5 cut off with `...` when it quoted a
/// long input line (`(assert y) (echo "sp!sync-2"...`): the `...` stays.
fn strip_cut_markers(text: &str) -> String {
    const CUT: &str = "...";
    let pat = format!(" (echo \"{MARKER_PREFIX}");
    // Whether `c` is where a marker ` (echo "sp!sync-N")` was cut.
    let cut_marker = |c: &str| -> bool {
        if c.len() <= pat.len() {
            return pat.starts_with(c);
        }
        let Some(rest) = c.strip_prefix(pat.as_str()) else {
            return false;
        };
        let rest = rest.trim_start_matches(|ch: char| ch.is_ascii_digit());
        matches!(rest, "" | "\"" | "\")")
    };
    let longest = pat.len() + 24;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find(CUT) {
        let before = &rest[..k];
        let from = (k.saturating_sub(longest)..k.saturating_sub(1))
            .filter(|&s| before.is_char_boundary(s))
            .find(|&s| cut_marker(&before[s..]));
        out.push_str(&before[..from.unwrap_or(k)]);
        out.push_str(CUT);
        rest = &rest[k + CUT.len()..];
    }
    out.push_str(rest);
    out
}

/// The write buffer is flushed once it holds this much.
const LEAN_WBUF: usize = 64 * 1024;

/// A running solver in lean mode (see the module header): print-success as the caller
/// sets it, output relayed verbatim, batches closed by markers. The calls both modes
/// share (`kill`, `position`, `is_alive`, ...) are [`Channel`]'s, reached through `Deref`.
pub struct LeanSolver {
    ch: Channel,
    /// Bytes not yet handed to the pipe (written at the next marker).
    wbuf: Vec<u8>,
    /// Markers sent / seen.
    marks_sent: u64,
    marks_seen: u64,
    /// For each marker in flight: is it followed by a `success` (cvc5 prints one after an
    /// echo when print-success is on)?
    marks_success: VecDeque<bool>,
    /// Drop the newline that follows a marker in the output.
    skip_nl: bool,
    /// Drop the next form if it is `success` (right after a marker that cvc5 answered
    /// with one; the answer to yices' start-up option).
    skip_success: bool,
    /// An `Idle` event was returned since the last form: the next call waits.
    idle_reported: bool,
    /// The solver's stdout reached EOF (reported after the settled bytes).
    eof: bool,
}

impl Deref for LeanSolver {
    type Target = Channel;
    fn deref(&self) -> &Channel {
        &self.ch
    }
}

impl DerefMut for LeanSolver {
    fn deref_mut(&mut self) -> &mut Channel {
        &mut self.ch
    }
}

/// The command line of a lean solver: the spec's, but for yices without the first
/// `--interactive` (the one smtproxy adds, [`SolverKind::default_args`]): the client's
/// `yices-smt2 --incremental` ends its session at a syntax error or an undefined name and
/// starts with print-success off, and so does the lean one. Without `smt2_models` (the
/// client did not ask for `--smt2-model-format`) the first `--smt2-model-format` goes as
/// well (smtproxy adds it for its own contexts): the client's yices prints its models as
/// `(= x 1)` lines and integral reals bare, and the lean one prints what it is asked.
pub fn lean_spec(spec: &SolverSpec, smt2_models: bool) -> SolverSpec {
    let mut spec = spec.clone();
    if spec.kind == SolverKind::Yices {
        let mut drop = vec!["--interactive"];
        if !smt2_models {
            drop.push("--smt2-model-format");
        }
        for flag in drop {
            if let Some(i) = spec.args.iter().position(|a| a == flag) {
                spec.args.remove(i);
            }
        }
    }
    spec
}

impl LeanSolver {
    /// Start the solver in lean mode (`lean_spec`): nothing is sent ahead of the
    /// caller's own text. Nothing is read: a binary that is not an SMT solver shows at the
    /// first wait for output.
    pub fn start(spec: &SolverSpec, smt2_models: bool) -> Result<LeanSolver, DriverError> {
        let spec = lean_spec(spec, smt2_models);
        let s = LeanSolver {
            ch: Channel::spawn(&spec, Framer::verbatim())?,
            wbuf: Vec::new(),
            marks_sent: 0,
            marks_seen: 0,
            marks_success: VecDeque::new(),
            skip_nl: false,
            skip_success: false,
            idle_reported: false,
            eof: false,
        };
        Ok(s)
    }

    /// Queue text for the solver exactly as given (no newline is added). It is handed to
    /// the pipe at the next marker, or once the buffer is large.
    pub fn write(&mut self, text: &str) {
        self.ch.advance(text.as_bytes());
        self.wbuf.extend_from_slice(text.as_bytes());
        if self.wbuf.len() >= LEAN_WBUF {
            self.flush();
        }
    }

    /// Hand what is queued to the pipe (`mark` does it by itself).
    pub fn flush(&mut self) {
        if self.wbuf.is_empty() {
            return;
        }
        // A broken pipe is not reported here: the solver's output is read to its end
        // first (it may have answered before exiting), and EOF reports the death.
        let _ = self.ch.proc.write(&self.wbuf);
        self.wbuf.clear();
    }

    /// Close the text sent so far with a marker, on the same line, and hand everything to
    /// the pipe. `print_success`: the solver has it on at this point. Returns the marker's
    /// number.
    pub fn mark(&mut self, print_success: bool) -> u64 {
        self.marks_sent += 1;
        self.marks_success
            .push_back(print_success && self.ch.spec.kind == SolverKind::Cvc5);
        let m = format!(" (echo \"{MARKER_PREFIX}{}\")\n", self.marks_sent);
        self.ch.advance(m.as_bytes());
        self.wbuf.extend_from_slice(m.as_bytes());
        self.flush();
        self.marks_sent
    }

    /// Markers sent whose answer has not been read yet.
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

    /// The next event of the solver's output (see [`LeanEvent`]). Before every wait an
    /// `Idle` event is returned once; the wait that follows lasts at most `wait` (None: no
    /// limit), then `Silence`. At EOF `Died`; an incomplete form at EOF is dropped.
    pub fn next_event(&mut self, wait: Option<Duration>) -> Result<LeanEvent, DriverError> {
        let t0 = Instant::now();
        let r = self.next_event_inner(wait);
        self.ch.busy += t0.elapsed();
        r
    }

    fn next_event_inner(&mut self, wait: Option<Duration>) -> Result<LeanEvent, DriverError> {
        loop {
            if let Some((gap, form)) = self.ch.framer.next_raw() {
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
                if text.starts_with("(error")
                    && (text.contains(MARKER_PREFIX) || text.contains("..."))
                {
                    // cvc5 quotes the input line in a parse error (cut with `...` when
                    // long): without the marker it is the client's line.
                    let clean = strip_markers(&text);
                    raw.extend_from_slice(clean.as_bytes());
                    return Ok(LeanEvent::Form { raw, form: clean });
                }
                raw.extend_from_slice(&form);
                return Ok(LeanEvent::Form { raw, form: text });
            }
            if !self.idle_reported {
                self.idle_reported = true;
                let settled = self.ch.framer.take_settled();
                let settled = self.strip_marker_nl(settled);
                return Ok(LeanEvent::Idle(settled));
            }
            if self.eof || self.ch.dead {
                self.ch.mark_dead();
                return Err(self.ch.died_error());
            }
            self.flush();
            match self.ch.proc.read_chunk(wait) {
                Chunk::Data(bytes) => {
                    self.ch.framer.push(&bytes);
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

    /// Pause up to `d` before reading more output, the solver's stdin kept fed (see
    /// `Proc::nap`: no pause once it has read everything sent).
    pub fn nap(&mut self, d: Duration) {
        self.flush();
        self.ch.proc.nap(d);
    }

    /// `Some(cpu ticks)` when the solver has read everything sent to it and is not
    /// running; the same value twice over an interval means it is waiting for input while
    /// a marker is unanswered, i.e. it stopped executing commands (z3 swallows the rest of
    /// its input after some lexical errors).
    pub fn idle_probe(&self) -> Option<u64> {
        if !self.wbuf.is_empty() || self.ch.proc.input_pending() > 0 {
            return None;
        }
        match self.ch.proc.sched() {
            Some((state, ticks)) if state != 'R' => Some(ticks),
            _ => None,
        }
    }
}

impl std::fmt::Debug for LeanSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.ch.debug_as("LeanSolver", f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // cvc5 cuts a long line with `...`, maybe inside a marker.
        for cut in [
            "(echo \"sp!sync-2\"",
            "(echo \"sp!sync-2",
            "(echo \"sp!s",
            "(e",
        ] {
            let e = format!("(error \"x\n  ... (assert (bvugt v #x03)) {cut}...\n   ^\n\")");
            assert_eq!(
                strip_markers(&e),
                "(error \"x\n  ... (assert (bvugt v #x03))...\n   ^\n\")",
                "{cut}"
            );
        }
        let e = "(error \"  (assert y) (echo \"sp!sync-3\") and (echo \"sp!sync-x\")\")";
        assert_eq!(
            strip_markers(e),
            "(error \"  (assert y) and (echo \"sp!sync-x\")\")"
        );
    }
}
