//! Streaming command framing: reads one top-level s-expression at a time from a byte
//! stream, returning as soon as its closing parenthesis arrives (a client waits for each
//! answer before it sends more, so we must never wait for EOF). White space, comments,
//! strings, quoted symbols and the nesting of parentheses follow the lexical rules of
//! `lex` (`skip_space_from` between commands, `Balance` inside one). Each command carries the line and
//! column where it starts, for error messages, and the exact text between the previous
//! frame and it (whitespace and comments, up to [`GAP_KEEP`] bytes) with the position where
//! that begins, so passthrough can give the solver the client's stream as it was. Invalid
//! UTF-8 and stray tokens become `Frame::Error`; the reader then goes on with the next
//! command. `next_frame_with` calls a hook before every read that needs new bytes (one
//! that may block on the client), so a caller that sent commands ahead can answer them
//! first.
//!
//! Invariants: the frames, their text, positions and gaps, do not depend on how the input
//! is split into reads (each byte is scanned once, in whichever read brings it); a frame
//! that is a command is one balanced s-expression starting with `(`; columns count
//! characters, not bytes.

use super::lex::{self, Balance};
use std::io::BufRead;

/// Longest text between two commands that is kept for [`RawCommand::gap`].
pub const GAP_KEEP: usize = 1 << 16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawCommand {
    pub text: String,
    pub line: usize,
    pub col: usize,
    /// The whitespace and comments before the command since the previous frame (None if
    /// longer than [`GAP_KEEP`]), and where they begin (line, column).
    pub gap: Option<String>,
    pub gap_at: (usize, usize),
}

impl RawCommand {
    /// A command with no recorded text before it.
    pub fn new(text: String, line: usize, col: usize) -> RawCommand {
        RawCommand {
            text,
            line,
            col,
            gap: None,
            gap_at: (line, col),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    Command(RawCommand),
    Error {
        msg: String,
        line: usize,
        col: usize,
        /// An atom at top level where a command should begin (z3's words for it are
        /// `msg`; cvc5 and yices word it, and place it, differently).
        stray: Option<String>,
    },
}

/// Where the framing is, between two bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between commands: in white space, or in a comment.
    Gap { in_comment: bool },
    /// Inside a command.
    In(Balance),
    /// A stray atom at top level.
    Stray,
}

pub struct CommandReader<R> {
    inner: R,
    line: usize,
    col: usize,
    eof: bool,
    /// The current frame's gap so far (reused from frame to frame, so it does not grow
    /// from nothing each time).
    gap_buf: Vec<u8>,
    /// The current command's bytes so far, reused likewise (a command's text is copied
    /// out of it once, at its full length, instead of growing by doubling).
    cmd_buf: Vec<u8>,
}

impl<R: BufRead + Lookahead> CommandReader<R> {
    pub fn new(inner: R) -> Self {
        CommandReader {
            inner,
            line: 1,
            col: 1,
            eof: false,
            gap_buf: Vec::new(),
            cmd_buf: Vec::new(),
        }
    }

    /// The next command, or None at end of input.
    pub fn next_frame(&mut self) -> Option<Frame> {
        self.next_frame_with(&mut || true)
    }

    /// [`next_frame`](Self::next_frame), calling `idle` each time every buffered byte has
    /// been used and more must be read: the read that follows may block until the client
    /// writes again, so whatever the client is owed (answers to commands sent ahead) must be
    /// given first. The reader cannot tell whether a read would block; `idle` can look.
    /// When `idle` returns false nothing more is read: the input ends there (`None`).
    pub fn next_frame_with(&mut self, idle: &mut dyn FnMut() -> bool) -> Option<Frame> {
        if self.eof {
            return None;
        }
        let mut state = State::Gap { in_comment: false };
        let mut cmd = std::mem::take(&mut self.cmd_buf);
        cmd.clear();
        let (mut start_line, mut start_col) = (self.line, self.col);
        let gap_at = (self.line, self.col);
        // The gap is kept while it is at most GAP_KEEP bytes long.
        self.gap_buf.clear();
        let mut gap_kept = true;
        loop {
            if self.inner.buffered().is_empty() && !idle() {
                self.eof = true;
                return None;
            }
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.eof = true;
                    return Some(Frame::Error {
                        msg: format!("read error: {e}"),
                        line: self.line,
                        col: self.col,
                        stray: None,
                    });
                }
            };
            if chunk.is_empty() {
                self.eof = true;
                return match state {
                    State::Gap { .. } => None,
                    State::Stray => Some(self.finish_stray(cmd, start_line, start_col)),
                    State::In(_) => Some(Frame::Error {
                        msg: "unexpected end of input: unbalanced parentheses or unterminated literal".into(),
                        line: start_line,
                        col: start_col,
                        stray: None,
                    }),
                };
            }
            let mut used = 0;
            let mut done = false;
            while used < chunk.len() && !done {
                match &mut state {
                    State::Gap { in_comment } => {
                        let (end, comment) = lex::skip_space_from(chunk, used, *in_comment);
                        *in_comment = comment;
                        let run = &chunk[used..end];
                        advance(&mut self.line, &mut self.col, run);
                        if gap_kept {
                            if self.gap_buf.len() + run.len() <= GAP_KEEP {
                                self.gap_buf.extend_from_slice(run);
                            } else {
                                gap_kept = false;
                            }
                        }
                        used = end;
                        if let Some(&b) = chunk.get(used) {
                            // A command, or a stray atom, starts here.
                            (start_line, start_col) = (self.line, self.col);
                            advance(&mut self.line, &mut self.col, &chunk[used..=used]);
                            used += 1;
                            cmd.push(b);
                            state = if b == b'(' {
                                State::In(Balance::opened())
                            } else {
                                State::Stray
                            };
                        }
                    }
                    State::In(scan) => {
                        // Up to the closing parenthesis, copied in one go.
                        let rest = &chunk[used..];
                        let n = match scan.scan(rest) {
                            Some(n) => {
                                done = true;
                                n
                            }
                            None => rest.len(),
                        };
                        cmd.extend_from_slice(&rest[..n]);
                        if scan.plain() {
                            // One line of ASCII: a column per byte.
                            self.col += n;
                        } else {
                            advance(&mut self.line, &mut self.col, &rest[..n]);
                        }
                        used += n;
                    }
                    State::Stray => {
                        // Up to white space, a parenthesis or a comment; the delimiter is
                        // given back if it starts something.
                        let rest = &chunk[used..];
                        let end = rest
                            .iter()
                            .position(|&c| lex::is_space(c) || matches!(c, b'(' | b')' | b';'));
                        let n = end.unwrap_or(rest.len());
                        cmd.extend_from_slice(&rest[..n]);
                        let n = match end {
                            Some(k) if rest[k] != b'(' && rest[k] != b';' => k + 1,
                            _ => n,
                        };
                        advance(&mut self.line, &mut self.col, &rest[..n]);
                        used += n;
                        done = end.is_some();
                    }
                }
            }
            self.inner.consume(used);
            if done {
                if state == State::Stray {
                    return Some(self.finish_stray(cmd, start_line, start_col));
                }
                // A command scanned as plain is ASCII throughout (`Balance::plain`):
                // valid UTF-8 without a second look at its bytes.
                let text = match state {
                    // SAFETY: every byte of `cmd` is ASCII, so it is valid UTF-8.
                    State::In(scan) if scan.plain() => {
                        Ok(unsafe { std::str::from_utf8_unchecked(&cmd) }.to_owned())
                    }
                    _ => std::str::from_utf8(&cmd).map(str::to_owned),
                };
                if cmd.capacity() <= CMD_BUF_KEEP {
                    self.cmd_buf = cmd;
                }
                return Some(match text {
                    Ok(text) => Frame::Command(RawCommand {
                        text,
                        line: start_line,
                        col: start_col,
                        gap: gap_kept.then(|| match std::str::from_utf8(&self.gap_buf) {
                            Ok(g) => g.to_owned(),
                            Err(_) => String::from_utf8_lossy(&self.gap_buf).into_owned(),
                        }),
                        gap_at,
                    }),
                    Err(_) => Frame::Error {
                        msg: "invalid UTF-8 in input".into(),
                        line: start_line,
                        col: start_col,
                        stray: None,
                    },
                });
            }
        }
    }

    fn finish_stray(&self, cmd: Vec<u8>, line: usize, col: usize) -> Frame {
        Frame::Error {
            msg: "invalid command, '(' expected".into(),
            line,
            col,
            stray: Some(String::from_utf8_lossy(&cmd).into_owned()),
        }
    }
}

/// The largest command buffer kept for the next command (a huge one is freed).
const CMD_BUF_KEEP: usize = 1 << 20;

/// Move the position (`line`, `col`) over the bytes `b`: a line feed starts a new line,
/// the column counts characters (bytes that do not continue a UTF-8 sequence, whose top
/// bits are `10`). Eight bytes at a time, byte by byte only in a word with a line feed.
#[inline]
fn advance(line: &mut usize, col: &mut usize, b: &[u8]) {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let step = |line: &mut usize, col: &mut usize, c: u8| {
        if c == b'\n' {
            *line += 1;
            *col = 1;
        } else if c & 0xC0 != 0x80 {
            *col += 1;
        }
    };
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let nl = w ^ (LO * u64::from(b'\n'));
        if nl.wrapping_sub(LO) & !nl & HI != 0 {
            for c in w.to_le_bytes() {
                step(line, col, c);
            }
        } else {
            *col += 8 - (w & !(w << 1) & HI).count_ones() as usize;
        }
    }
    for &c in words.remainder() {
        step(line, col, c);
    }
}

/// Input whose already-read bytes can be inspected without blocking.
pub trait Lookahead {
    fn buffered(&self) -> &[u8];
}

impl<T: std::io::Read> Lookahead for std::io::BufReader<T> {
    fn buffered(&self) -> &[u8] {
        self.buffer()
    }
}

impl Lookahead for &[u8] {
    fn buffered(&self) -> &[u8] {
        self
    }
}

impl<R: BufRead + Lookahead> CommandReader<R> {
    /// True when a complete next command has already arrived (so answering the current
    /// one can wait without keeping the client waiting). Scans at most 1 MiB.
    pub fn next_ready(&self) -> bool {
        let b = self.inner.buffered();
        let b = &b[..b.len().min(1 << 20)];
        let i = lex::skip_space(b, 0);
        b.get(i) == Some(&b'(') && Balance::opened().scan(&b[i + 1..]).is_some()
    }
}

impl CommandReader<&[u8]> {
    /// For input held whole in memory (a log being replayed): true when anything but
    /// blanks and comments is left, that is, when another command follows (a truncated
    /// one then ends the input as an error frame). Unlike `next_ready` it does not scan
    /// the next command, only what precedes it.
    pub fn more_in_memory(&self) -> bool {
        lex::skip_space(self.inner, 0) < self.inner.len()
    }
}

impl<R: BufRead + Lookahead> Iterator for CommandReader<R> {
    type Item = Frame;
    fn next(&mut self) -> Option<Frame> {
        self.next_frame()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(s: &[u8]) -> Vec<Frame> {
        CommandReader::new(s).collect()
    }

    #[test]
    fn splits_commands_and_tracks_positions() {
        let f = frames(b"; (c\n(check-sat) (echo \"a)\"\"b\")\n (assert |x)|) ;x\n");
        assert_eq!(f.len(), 3);
        assert_eq!(f[0], cmd("(check-sat)", 2, 1, "; (c\n", (1, 1)));
        assert_eq!(f[1], cmd("(echo \"a)\"\"b\")", 2, 13, " ", (2, 12)));
        assert_eq!(f[2], cmd("(assert |x)|)", 3, 2, "\n ", (2, 27)));
        // Columns count characters, not bytes: after non-ASCII text inside a command, in a
        // string, in a quoted symbol and in a comment between commands.
        let f = frames("(a \u{e9}\u{e9} \"\u{e9}\" |\u{e9}|) (b) ; \u{e9}\u{e9}\n  (c)".as_bytes());
        assert_eq!(f[1], cmd("(b)", 1, 16, " ", (1, 15)));
        assert_eq!(f[2], cmd("(c)", 2, 3, " ; \u{e9}\u{e9}\n  ", (1, 19)));
        // Text between commands longer than GAP_KEEP is not kept.
        let mut long = vec![b' '; GAP_KEEP + 10];
        long.extend_from_slice(b"(check-sat)");
        match &frames(&long)[0] {
            Frame::Command(c) => assert_eq!((c.gap.as_ref(), c.col), (None, GAP_KEEP + 11)),
            f => panic!("{f:?}"),
        }
    }

    #[test]
    fn comments_between_commands_in_any_chunking() {
        let mut text = b"; \xc3\xa9t\xc3\xa9 (x\n(a) ;; y\n;\n  ; z)\n(b\n ; )\n)".to_vec();
        // A gap of exactly GAP_KEEP bytes is kept, a longer one is not.
        text.extend(std::iter::repeat_n(b';', GAP_KEEP - 8));
        text.extend_from_slice(b"\n; long\n(c)");
        text.extend(std::iter::repeat_n(b';', GAP_KEEP));
        text.extend_from_slice(b"\n(d)");
        let whole = frames(&text);
        assert_eq!(whole.len(), 4);
        assert_eq!(whole[0], cmd("(a)", 2, 1, "; \u{e9}t\u{e9} (x\n", (1, 1)));
        assert_eq!(
            whole[1],
            cmd("(b\n ; )\n)", 5, 1, " ;; y\n;\n  ; z)\n", (2, 4))
        );
        assert!(
            matches!(&whole[2], Frame::Command(c) if c.gap.as_ref().map(|g| g.len()) == Some(GAP_KEEP) && c.line == 9)
        );
        assert!(
            matches!(&whole[3], Frame::Command(c) if c.gap.is_none() && (c.line, c.col) == (10, 1))
        );
        for cap in [1, 2, 3, 7, 64] {
            let r = std::io::BufReader::with_capacity(cap, &text[..]);
            let chunked: Vec<Frame> = CommandReader::new(r).collect();
            assert_eq!(chunked, whole, "buffer of {cap} bytes");
        }
    }

    /// Random command streams (deep and shallow nesting, runs of parentheses, strings,
    /// quoted symbols, comments, newlines, multi-byte characters, stray atoms, unbalanced
    /// ends) frame the same, positions included, read whole and read one byte at a time.
    #[test]
    fn framing_whole_and_byte_by_byte_agree() {
        let pieces: [&[u8]; 14] = [
            b"(",
            b"(",
            b"(",
            b")",
            b")",
            b")",
            b" ",
            b"select a (_ bv3 32)",
            b"\"s)(\"",
            b"|q)(|",
            b"; c)(\n",
            b"\n",
            "\u{e9}".as_bytes(),
            b"x",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || crate::test_rng::xorshift(&mut state);
        let mut commands = 0;
        for _ in 0..3_000 {
            let mut text = Vec::new();
            let len = next() % 120;
            for _ in 0..len {
                text.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let whole = frames(&text);
            commands += whole
                .iter()
                .filter(|f| matches!(f, Frame::Command(_)))
                .count();
            let r = std::io::BufReader::with_capacity(1, &text[..]);
            let bytewise: Vec<Frame> = CommandReader::new(r).collect();
            assert_eq!(bytewise, whole, "{:?}", String::from_utf8_lossy(&text));
        }
        assert!(commands > 1_000, "only {commands} commands framed");
    }

    /// A framed command with the text kept before it.
    fn cmd(text: &str, line: usize, col: usize, gap: &str, gap_at: (usize, usize)) -> Frame {
        Frame::Command(RawCommand {
            text: text.into(),
            line,
            col,
            gap: Some(gap.into()),
            gap_at,
        })
    }

    #[test]
    fn stray_tokens_and_eof() {
        let f = frames(b"foo (exit) (assert (a b)");
        assert!(
            matches!(&f[0], Frame::Error { msg, stray: Some(t), .. } if msg == "invalid command, '(' expected" && t == "foo")
        );
        assert!(matches!(&f[1], Frame::Command(c) if c.text == "(exit)"));
        assert!(matches!(&f[2], Frame::Error { msg, .. } if msg.contains("end of input")));
        assert_eq!(f.len(), 3);
    }

    #[test]
    fn lookahead_sees_only_complete_commands() {
        let mut r = CommandReader::new(&b"(a) (b \"x)\") "[..]);
        assert!(matches!(r.next_frame(), Some(Frame::Command(_))));
        assert!(r.next_ready());
        assert!(matches!(r.next_frame(), Some(Frame::Command(_))));
        assert!(!r.next_ready(), "only white space left");
        let mut r = CommandReader::new(&b"(a)\n(b (c"[..]);
        r.next_frame();
        assert!(!r.next_ready(), "a partial command is not ready");
    }

    #[test]
    fn advance_counts_what_a_byte_walk_counts() {
        let walk = |b: &[u8]| {
            let (mut line, mut col) = (3, 5);
            for &c in b {
                if c == b'\n' {
                    (line, col) = (line + 1, 1);
                } else if (c & 0xC0) != 0x80 {
                    col += 1;
                }
            }
            (line, col)
        };
        let words = |b: &[u8]| {
            let (mut line, mut col) = (3, 5);
            advance(&mut line, &mut col, b);
            (line, col)
        };
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for len in 0..300 {
            crate::test_rng::xorshift(&mut state);
            let b: Vec<u8> = (0..len)
                .map(|k| match state.rotate_left(k as u32 * 7) % 11 {
                    0 => b'\n',
                    1 => 0x0a ^ 0x80,
                    2 => 0x09,
                    r => (state.rotate_left(k as u32 * 5) as u8) | if r < 6 { 0x80 } else { 0 },
                })
                .collect();
            assert_eq!(words(&b), walk(&b), "{b:?}");
        }
        assert_eq!(words("\u{e9}t\u{e9} (x) \u{1F600}".as_bytes()), (3, 14));
        assert_eq!(words("ab\ncd\u{e9}\n\nxyz01234567".as_bytes()), (6, 12));
    }

    #[test]
    fn more_in_memory_looks_past_blanks_and_comments_only() {
        let mut r = CommandReader::new(&b"(a)\n; a comment (b)\n  \n(c (d"[..]);
        assert!(r.more_in_memory());
        r.next_frame();
        assert!(
            r.more_in_memory(),
            "a (partial) command follows the comment"
        );
        let mut r = CommandReader::new(&b"(a) ; (b)\n\t; done\n"[..]);
        r.next_frame();
        assert!(!r.more_in_memory(), "only comments left");
        assert!(!CommandReader::new(&b""[..]).more_in_memory());
    }

    #[test]
    fn backslash_ends_a_malformed_quoted_symbol() {
        let f = frames(b"(declare-fun |\\|#a\\|\\|| () Bool)\n(check-sat)\n");
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(matches!(&f[1], Frame::Command(c) if c.text == "(check-sat)"));
    }

    #[test]
    fn invalid_utf8_is_an_error_and_reading_goes_on() {
        let f = frames(b"(echo \"\xff\") (check-sat)");
        assert!(matches!(&f[0], Frame::Error { msg, .. } if msg.contains("UTF-8")));
        assert!(matches!(&f[1], Frame::Command(c) if c.text == "(check-sat)"));
    }

    #[test]
    fn answers_without_waiting_for_eof() {
        // A reader that yields one command then blocks forever would hang this test if the
        // framer waited for more input; here we check that the first frame comes from a
        // partial stream.
        struct Once(Option<Vec<u8>>);
        impl std::io::Read for Once {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                match self.0.take() {
                    Some(v) => {
                        buf[..v.len()].copy_from_slice(&v);
                        Ok(v.len())
                    }
                    None => panic!("read past the first command"),
                }
            }
        }
        let mut r = CommandReader::new(std::io::BufReader::new(Once(Some(
            b"(check-sat)\n".to_vec(),
        ))));
        assert!(matches!(r.next_frame(), Some(Frame::Command(_))));
    }
}
