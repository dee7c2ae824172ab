//! Response framing: cuts a solver's stdout byte stream into complete top-level
//! s-expressions (one per response).
//!
//! The [`Framer`] keeps its scanning state between chunks, so every byte is looked
//! at once no matter how the output is split (a multi-megabyte `get-model` answer
//! arriving in 64 KB pieces is scanned in linear time).
//!
//! The lexical rules are those of `crate::smt2::lex`, as for the client's commands:
//! * white space and `;` line comments between responses are skipped (z3 prints
//!   `; ...` comment lines after `unsupported` for an unknown `get-info` key);
//! * a frame is a parenthesised expression (`lex::Balance`: strings, quoted symbols and
//!   comments inside it are respected), a string literal (`""` stands for an embedded
//!   quote), a `|quoted symbol|`, a simple atom (up to the next delimiter: white space,
//!   `(`, `)`, `;`, `"`, `|`), or a stray `)` (which the caller reports).
//!
//! A top-level atom or string literal is complete only once the byte after it has been
//! seen (every solver terminates its answers with a newline), so `uns` + `at\n` frames as
//! `unsat`, never as `uns`, and `"a"` + `"b"\n` as one string.
//!
//! In verbatim mode ([`Framer::verbatim`], used by the lean passthrough) nothing is
//! discarded: [`Framer::next_raw`] returns each frame together with the exact bytes
//! before it, and [`Framer::take_settled`] hands out the bytes that can no longer be part
//! of a frame (whitespace and comments between frames), so a caller can relay the solver's
//! output byte for byte.
//!
//! Invariants: the frames do not depend on how the output is split into chunks; in
//! verbatim mode the gaps, frames and settled bytes handed out are the output itself, in
//! order, without a byte lost or repeated.

use crate::smt2::lex::{self, Balance};

/// Scanner state at `Framer::pos`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between frames: in white space, or in a comment.
    Idle { in_comment: bool },
    /// Inside a top-level simple atom.
    Atom,
    /// Inside a top-level `|quoted symbol|`.
    Quoted,
    /// Inside a top-level string literal; `quote` when the last byte was a `"` that closes
    /// it unless another `"` follows.
    Str { quote: bool },
    /// Inside a parenthesised expression.
    List(Balance),
}

const IDLE: State = State::Idle { in_comment: false };

/// Incremental s-expression framer. Feed bytes with [`Framer::push`], take
/// complete frames with [`Framer::next_frame`].
#[derive(Debug, Clone)]
pub struct Framer {
    buf: Vec<u8>,
    /// Bytes before this offset belong to frames already returned.
    base: usize,
    /// Next byte to scan.
    pos: usize,
    /// Start of the frame being scanned (valid when not idle).
    start: usize,
    depth: usize,
    state: State,
    /// Keep the bytes between frames (see the module docs).
    keep: bool,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new()
    }
}

impl Framer {
    pub fn new() -> Self {
        Framer {
            buf: Vec::new(),
            base: 0,
            pos: 0,
            start: 0,
            depth: 0,
            state: IDLE,
            keep: false,
        }
    }

    /// A framer that keeps every byte for [`Framer::next_raw`] and [`Framer::take_settled`].
    pub fn verbatim() -> Self {
        Framer {
            keep: true,
            ..Framer::new()
        }
    }

    /// Verbatim mode: the next complete frame as (bytes before it since the last frame or
    /// settled take, the frame), or None if more input is needed.
    pub fn next_raw(&mut self) -> Option<(Vec<u8>, Vec<u8>)> {
        let end = self.scan()?;
        let gap = self.buf[self.base..self.start].to_vec();
        let text = self.buf[self.start..end].to_vec();
        self.base = end;
        self.start = end;
        self.depth = 0;
        self.state = IDLE;
        Some((gap, text))
    }

    /// Verbatim mode: the scanned bytes that cannot belong to a frame any more (whitespace
    /// and comments before the frame being scanned, or all scanned bytes when between
    /// frames). They are consumed.
    pub fn take_settled(&mut self) -> Vec<u8> {
        let upto = if self.is_idle() { self.pos } else { self.start };
        if upto <= self.base {
            return Vec::new();
        }
        let s = self.buf[self.base..upto].to_vec();
        self.base = upto;
        s
    }

    /// Everything buffered and not yet returned, consumed (the rest of a solver's output
    /// after it exited mid-frame).
    pub fn take_all(&mut self) -> Vec<u8> {
        let s = self.buf[self.base..].to_vec();
        self.buf.clear();
        self.base = 0;
        self.pos = 0;
        self.start = 0;
        self.depth = 0;
        self.state = IDLE;
        s
    }

    /// Whether `n` complete frames are buffered, without taking any (a look at a solver's
    /// progress: its answer behind the acknowledgements of a batch).
    pub fn has_frames(&self, n: usize) -> bool {
        if n == 0 {
            return true;
        }
        let mut probe = self.clone();
        (0..n).all(|_| probe.next_frame().is_some())
    }

    /// Append raw bytes read from the solver.
    pub fn push(&mut self, data: &[u8]) {
        // Compact once per chunk (not once per frame): a chunk holding thousands
        // of `success` answers from a pipelined batch stays linear.
        if self.base > 0 {
            self.buf.drain(..self.base);
            self.pos -= self.base;
            self.start = self.start.saturating_sub(self.base);
            self.base = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// Bytes received but not yet returned as part of a frame (including skipped
    /// whitespace not yet discarded).
    pub fn pending(&self) -> usize {
        self.buf.len() - self.base
    }

    /// True when nothing but whitespace/comments is buffered.
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle { .. })
    }

    /// Return the next complete frame (raw text, lossily decoded as UTF-8, no
    /// surrounding whitespace), or None if more input is needed.
    pub fn next_frame(&mut self) -> Option<String> {
        let end = self.scan()?;
        let text = String::from_utf8_lossy(&self.buf[self.start..end]).into_owned();
        self.base = end;
        self.start = end;
        self.depth = 0;
        self.state = IDLE;
        Some(text)
    }

    /// Flush a pending top-level atom at end of stream (the solver exited without
    /// a trailing newline). Returns it if there is one.
    pub fn finish(&mut self) -> Option<String> {
        if let Some(f) = self.next_frame() {
            return Some(f);
        }
        if matches!(self.state, State::Atom | State::Str { quote: true }) {
            let text = String::from_utf8_lossy(&self.buf[self.start..]).into_owned();
            self.buf.clear();
            self.pos = 0;
            self.start = 0;
            self.base = 0;
            self.state = IDLE;
            return Some(text);
        }
        None
    }

    /// Advance the scan; on a complete frame return its end offset (exclusive).
    fn scan(&mut self) -> Option<usize> {
        let buf = &self.buf;
        let n = buf.len();
        let mut i = self.pos;
        while i < n {
            match &mut self.state {
                State::Idle { in_comment } => {
                    let (end, comment) = lex::skip_space_from(buf, i, *in_comment);
                    *in_comment = comment;
                    i = end;
                    let Some(&b) = buf.get(i) else { break };
                    self.start = i;
                    i += 1;
                    self.state = match b {
                        b'(' => State::List(Balance::opened()),
                        // Stray closing paren: a frame of its own (the caller reports it as a
                        // protocol error).
                        b')' => {
                            self.pos = i;
                            return Some(i);
                        }
                        b'"' => State::Str { quote: false },
                        b'|' => State::Quoted,
                        _ => State::Atom,
                    };
                }
                State::Atom => {
                    i = lex::token_end(buf, i);
                    if i < n {
                        self.pos = i;
                        return Some(i);
                    }
                }
                State::Quoted => match lex::quoted_stop(buf, i) {
                    Some(k) => {
                        self.pos = k + 1;
                        return Some(k + 1);
                    }
                    None => i = n,
                },
                State::Str { quote: true } => {
                    if buf[i] != b'"' {
                        self.pos = i;
                        return Some(i);
                    }
                    // `""`: an escaped quote.
                    self.state = State::Str { quote: false };
                    i += 1;
                }
                State::Str { quote: false } => match lex::string_quote(buf, i) {
                    Some(k) => {
                        self.state = State::Str { quote: true };
                        i = k + 1;
                    }
                    None => i = n,
                },
                State::List(scan) => match scan.scan(&buf[i..]) {
                    Some(k) => {
                        self.pos = i + k;
                        return Some(i + k);
                    }
                    None => i = n,
                },
            }
        }
        self.pos = n;
        if !self.keep && self.is_idle() {
            // Nothing of value is buffered: discard it so the buffer never grows
            // with whitespace/comment noise.
            self.buf.clear();
            self.pos = 0;
            self.start = 0;
            self.base = 0;
        }
        None
    }
}

/// The lexical functions the driver uses on answers and commands, from the one lexical
/// layer.
pub use crate::smt2::lex::{command_head, parse_string_literal, quote_string, skip_ws_comments};

#[cfg(test)]
mod tests {
    use super::*;

    fn frames_bytewise(input: &str) -> Vec<String> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        for b in input.as_bytes() {
            f.push(std::slice::from_ref(b));
            while let Some(fr) = f.next_frame() {
                out.push(fr);
            }
        }
        out
    }

    fn frames_whole(input: &str) -> Vec<String> {
        let mut f = Framer::new();
        f.push(input.as_bytes());
        let mut out = Vec::new();
        while let Some(fr) = f.next_frame() {
            out.push(fr);
        }
        out
    }

    #[test]
    fn atoms_and_lists() {
        let input = "success\nsat\n((x 1))\n(error \"a \"\"q\"\" (b\")\nunsat\n";
        let want = vec![
            "success",
            "sat",
            "((x 1))",
            "(error \"a \"\"q\"\" (b\")",
            "unsat",
        ];
        assert_eq!(frames_bytewise(input), want);
        assert_eq!(frames_whole(input), want);
    }

    #[test]
    fn atom_needs_delimiter() {
        let mut f = Framer::new();
        f.push(b"uns");
        assert_eq!(f.next_frame(), None);
        f.push(b"at");
        assert_eq!(f.next_frame(), None);
        f.push(b"\n");
        assert_eq!(f.next_frame().as_deref(), Some("unsat"));
        f.push(b"unknown");
        assert_eq!(f.finish().as_deref(), Some("unknown"));
    }

    #[test]
    fn quoted_symbols_comments_strings() {
        let input = "; leading comment (\n(|a ) b| ; c ) \n \"s)\" x)\n\"top \"\" str\"\n|q sym|\nunsupported\n; trailing\n; Supported (\nsat\n";
        let want = vec![
            "(|a ) b| ; c ) \n \"s)\" x)",
            "\"top \"\" str\"",
            "|q sym|",
            "unsupported",
            "sat",
        ];
        assert_eq!(frames_bytewise(input), want);
        assert_eq!(frames_whole(input), want);
    }

    #[test]
    fn string_closing_before_paren() {
        // `"` followed directly by `)` must close both string and list.
        assert_eq!(
            frames_bytewise("(error \"x\")sat\n"),
            vec!["(error \"x\")", "sat"]
        );
        assert_eq!(frames_bytewise("(a \"\")\n"), vec!["(a \"\")"]);
    }

    #[test]
    fn stray_paren_is_own_frame() {
        assert_eq!(frames_whole(") sat\n"), vec![")", "sat"]);
    }

    #[test]
    fn big_model_is_linear() {
        let mut s = String::from("(\n");
        for i in 0..200_000 {
            s.push_str(&format!("  (define-fun x{i} () Int {i})\n"));
        }
        s.push_str(")\n");
        let mut f = Framer::new();
        let t = std::time::Instant::now();
        let mut got = None;
        for chunk in s.as_bytes().chunks(4096) {
            f.push(chunk);
            if let Some(fr) = f.next_frame() {
                got = Some(fr);
            }
        }
        assert_eq!(got.map(|g| g.len()), Some(s.trim_end().len()));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "framing too slow: {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn many_small_frames_in_one_chunk() {
        let n = 200_000;
        let s = "success\n".repeat(n);
        let mut f = Framer::new();
        let t = std::time::Instant::now();
        f.push(s.as_bytes());
        let mut count = 0;
        while let Some(fr) = f.next_frame() {
            assert_eq!(fr, "success");
            count += 1;
        }
        assert_eq!(count, n);
        assert_eq!(f.pending(), 0, "trailing whitespace is discarded");
        f.push(b"sat\n");
        assert_eq!(f.next_frame().as_deref(), Some("sat"));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(1),
            "too slow: {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn helpers() {
        assert_eq!(
            parse_string_literal(" \"a\"\"b\" rest"),
            Some(("a\"b".to_string(), " rest"))
        );
        assert_eq!(parse_string_literal("\"abc"), None);
        assert_eq!(quote_string("a\"b"), "\"a\"\"b\"");
        assert_eq!(command_head("  ; c\n ( echo \"x\")"), Some("echo"));
        assert_eq!(command_head("(check-sat)"), Some("check-sat"));
        assert_eq!(command_head("check-sat"), None);
    }
}
