//! The fuzz target functions, shared by the libFuzzer binaries (`fuzz/fuzz_targets/*.rs`,
//! `cargo +nightly fuzz run reader|engine|engine_mock|lex`) and the stable mutation-loop fallback
//! (`tests/suite/client_fuzz_smoke.rs`), which include this file with `#[path]`.
//!
//! A target "fails" by panicking; libFuzzer reports the panic as a crash, the fallback
//! catches it and saves the input under `fuzz/regressions/`.
#![allow(dead_code)]

use smtproxy::driver::reader::Framer;
use smtproxy::session::{Config, Engine, Outcome, Strategy};
use smtproxy::smt2::command::Command;
use smtproxy::smt2::lex::{self, Balance, Tok};
use smtproxy::smt2::lexer::{SNode, Sexps};
use smtproxy::smt2::parser::{check_fast_path, parse_command, parse_term};
use smtproxy::smt2::printer::{print_term, ClientNames};
use smtproxy::smt2::reader::{CommandReader, Frame};
use smtproxy::term::signature::Signature;
use smtproxy::term::TermStore;
use std::time::Duration;

/// Inputs longer than this are cut (keeps the engine target fast; the reader target takes
/// up to 64 KiB).
pub const ENGINE_MAX_LEN: usize = 1500;
pub const READER_MAX_LEN: usize = 64 << 10;

/// Run `f` on a thread with a big stack, as the smtproxy binary runs its engine (1 GiB
/// there; deep nesting is expected to be handled), re-raising a panic on this thread.
pub fn with_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let h = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawn fuzz thread");
    match h.join() {
        Ok(v) => v,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Target (a): frame the bytes into commands, parse each into one term store and signature
/// (declarations, definitions and push/pop applied as the engine does, so later commands
/// see earlier symbols), and check the printer invariant: an asserted term printed with
/// the client's names parses back to the same term id.
pub fn reader(data: &[u8]) {
    let data = &data[..data.len().min(READER_MAX_LEN)];
    let data = data.to_vec();
    with_big_stack(move || reader_inner(&data));
}

fn reader_inner(data: &[u8]) {
    let mut store = TermStore::new();
    let mut sig = Signature::default();
    let mut n = 0usize;
    for frame in CommandReader::new(data) {
        n += 1;
        if n > 10_000 {
            break;
        }
        let raw = match frame {
            Frame::Command(raw) => raw,
            Frame::Error { line, col, .. } => {
                assert!(line >= 1 && col >= 1, "error position must be 1-based");
                continue;
            }
        };
        // The framed text must be one balanced command that starts with '('.
        assert!(
            raw.text.trim_start().starts_with('('),
            "framed command does not start with '(': {:?}",
            raw.text
        );
        // Where the one-pass parser (src/smt2/fast.rs) takes a command, it must give
        // exactly what the general parser gives.
        if let Err(e) = check_fast_path(&mut store, &sig, &raw.text) {
            panic!("{e}");
        }
        let Ok(cmd) = parse_command(&mut store, &sig, &raw.text) else {
            continue;
        };
        cmd.declare_in(&mut store, &mut sig);
        match &cmd {
            Command::Push(k) => {
                for _ in 0..(*k).min(64) {
                    sig.push();
                }
            }
            Command::Pop(k) => {
                for _ in 0..(*k).min(64) {
                    sig.pop();
                }
            }
            Command::Reset => {
                sig.clear();
            }
            Command::Assert(t, _) => {
                let text = print_term(&store, *t, &ClientNames);
                // Internal (macro parameter) names print as `sp!...` and are not client symbols.
                if !text.contains("sp!") && text.len() < 200_000 {
                    match parse_term(&mut store, &sig, &text) {
                        Ok(t2) => assert_eq!(
                            t2, *t,
                            "printer round trip gave a different term\ncommand: {}\nprinted: {text}",
                            raw.text
                        ),
                        Err(e) => panic!("printed term does not parse back: {}\ncommand: {}\nprinted: {text}", e.msg, raw.text),
                    }
                    // The same through the command parser (the fast path when it applies).
                    match parse_command(&mut store, &sig, &format!("(assert {text})")) {
                        Ok(Command::Assert(t2, _)) => assert_eq!(t2, *t, "printed: {text}"),
                        other => panic!("printed term does not parse back as an assertion: {other:?}\nprinted: {text}"),
                    }
                }
            }
            _ => {}
        }
    }
}

#[derive(Clone, Default)]
struct SharedOut(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
impl std::io::Write for SharedOut {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An engine for `strategy` behind `spec` with a memory-only cache (cache and hybrid)
/// and the given deadline, writing to `out`.
fn fuzz_engine(
    strategy: Strategy,
    spec: smtproxy::driver::SolverSpec,
    timeout: Duration,
    out: SharedOut,
) -> Option<Engine> {
    let cache = match strategy {
        Strategy::Hybrid | Strategy::Cache => Some(smtproxy::cache::tiered::CacheConfig {
            mem_entries: 1000,
            mem_bytes: 16 << 20,
            disk: None,
            redis: None,
            ..Default::default()
        }),
        _ => None,
    };
    let cfg = Config {
        strategy,
        solver: spec,
        portfolio: Vec::new(),
        timeout: Some(timeout),
        cache,
        jobs: smtproxy::session::DEFAULT_JOBS,
        first_answer_wins: false,
        client: Default::default(),
    };
    Engine::new(cfg, Box::new(out)).ok()
}

fn z3_engine(strategy: Strategy, out: SharedOut) -> Option<Engine> {
    let spec = smtproxy::driver::SolverSpec::resolve(Some("z3")).ok()?;
    fuzz_engine(strategy, spec, Duration::from_secs(2), out)
}

/// One run of `data` through an engine.
struct Run {
    /// The answers (sat/unsat/unknown) of the check-sats.
    answers: Vec<&'static str>,
    /// The engine printed an `(error ...)` (then z3 dialect differences, e.g. z3 5.x
    /// accepting Int/Bool mixes that smtproxy rejects, make runs incomparable).
    errors: bool,
    /// Each command's name and what was printed while it was handled.
    replies: Vec<(String, String)>,
}

fn run_engine(strategy: Strategy, data: &[u8]) -> Option<Run> {
    let out = SharedOut::default();
    let mut e = z3_engine(strategy, out.clone())?;
    let mut answers = Vec::new();
    let mut replies = Vec::new();
    for frame in CommandReader::new(data) {
        let head = match &frame {
            Frame::Command(c) => smtproxy::driver::reader::command_head(&c.text)
                .unwrap_or("")
                .to_string(),
            Frame::Error { .. } => String::new(),
        };
        let before = out.0.lock().unwrap().len();
        let o: Outcome = e.handle(frame);
        let printed = String::from_utf8_lossy(&out.0.lock().unwrap()[before..]).into_owned();
        replies.push((head, printed));
        if let Some(a) = o.check {
            answers.push(a.as_str());
        }
        if o.exit || answers.len() > 50 {
            break;
        }
    }
    e.shutdown();
    let text = String::from_utf8_lossy(&out.0.lock().unwrap()).into_owned();
    Some(Run {
        answers,
        errors: text.contains("(error"),
        replies,
    })
}

/// Commands whose replies may rightly differ between smtproxy and z3: models (any model
/// will do), statistics, and the reason for an `unknown`.
fn reply_may_differ(head: &str, reply: &str) -> bool {
    matches!(
        head,
        "get-value" | "get-model" | "get-assignment" | "get-unsat-core" | "get-proof" | "exit"
    ) || reply.contains(":all-statistics")
        || reply.contains(":reason-unknown")
        || reply.contains("unknown")
        || reply.trim_start().starts_with("(:")
            && (reply.contains(":time") || reply.contains(":memory"))
}

/// Target (b): the whole session engine with the real z3 behind it (no mock backend
/// exists: the engine needs a driver process). Strategy hybrid with a memory-only cache,
/// then the same input in passthrough (z3 itself); a definite answer (sat/unsat) that
/// differs is a bug, as is any panic. When neither run printed an error, every other
/// reply must be the same too (success, get-info, get-option, echo, ...), except those
/// that may rightly differ (`reply_may_differ`). Returns (hybrid answers, passthrough
/// answers).
pub fn engine(data: &[u8]) -> Option<(Vec<&'static str>, Vec<&'static str>)> {
    let data = data[..data.len().min(ENGINE_MAX_LEN)].to_vec();
    with_big_stack(move || {
        let got = run_engine(Strategy::Hybrid, &data)?;
        let want = run_engine(Strategy::Passthrough, &data)?;
        if got.errors || want.errors {
            return Some((got.answers, want.answers));
        }
        for (i, (g, w)) in got.answers.iter().zip(want.answers.iter()).enumerate() {
            if *g != "unknown" && *w != "unknown" {
                assert_eq!(
                    g,
                    w,
                    "check-sat #{} answered {g} by hybrid but {w} by z3 (passthrough)\ninput:\n{}",
                    i + 1,
                    String::from_utf8_lossy(&data)
                );
            }
        }
        assert_eq!(
            got.answers.len(),
            want.answers.len(),
            "hybrid answered {} check-sats, passthrough {}\ninput:\n{}",
            got.answers.len(),
            want.answers.len(),
            String::from_utf8_lossy(&data)
        );
        for (i, ((head, g), (_, w))) in got.replies.iter().zip(want.replies.iter()).enumerate() {
            if reply_may_differ(head, g) || reply_may_differ(head, w) {
                continue;
            }
            assert_eq!(
                g,
                w,
                "command #{} ({head}) replied {g:?} by hybrid but {w:?} by z3 (passthrough)\ninput:\n{}",
                i + 1,
                String::from_utf8_lossy(&data)
            );
        }
        Some((got.answers, want.answers))
    })
}

/// The mock solver binary (`fuzz/src/mock_solver.rs`): beside the running fuzz binary
/// (cargo fuzz builds it with the targets), else the smtproxy package's example build.
pub fn mock_solver_path() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        dir.join("mock_solver"),
        dir.join("../examples/mock_solver"),
        dir.join("examples/mock_solver"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Target (c): the whole session engine behind a mock solver that answers at random from
/// a seed (`mock_solver.rs`): wrong models, errors, deaths and hangs included. Byte 0
/// picks the strategy, bytes 1..5 the mock's seed, the rest is the client's script. No
/// answer can be checked against a solver that decides nothing; what must hold is that
/// the engine neither panics nor hangs (libFuzzer's -timeout), that every check-sat gets
/// exactly one sat/unsat/unknown, and that smtproxy's own framing (`sp!` markers) never
/// reaches the client.
pub fn engine_mock(data: &[u8], mock: &std::path::Path) {
    if data.len() < 5 {
        return;
    }
    let all = Strategy::all();
    let strategy = all[data[0] as usize % all.len()];
    let seed = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let script = data[5..data.len().min(5 + ENGINE_MAX_LEN)].to_vec();
    let cmd = format!("'{}' {seed}", mock.display());
    with_big_stack(move || engine_mock_inner(strategy, &cmd, &script));
}

fn engine_mock_inner(strategy: Strategy, solver: &str, script: &[u8]) {
    let Ok(spec) = smtproxy::driver::SolverSpec::resolve(Some(solver)) else {
        panic!("mock solver not runnable: {solver}");
    };
    let out = SharedOut::default();
    // The mock's hang (300 ms) runs past the deadline.
    let Some(mut e) = fuzz_engine(strategy, spec, Duration::from_millis(200), out.clone()) else {
        return;
    };
    let mut checks = 0usize;
    let mut answered = 0usize;
    for frame in CommandReader::new(script) {
        let cmd_text = match &frame {
            Frame::Command(raw) => raw.text.clone(),
            Frame::Error { msg, .. } => format!("<{msg}>"),
        };
        let is_check = matches!(
            smtproxy::driver::reader::command_head(&cmd_text),
            Some("check-sat" | "check-sat-assuming")
        );
        let before = out.0.lock().unwrap().len();
        let o: Outcome = e.handle(frame);
        if let Some(a) = o.check {
            answered += 1;
            // A definite answer is what the client reads (unknown may reach it as the
            // solver's own word or error, as the solver would have given it).
            let text = String::from_utf8_lossy(&out.0.lock().unwrap()[before..]).into_owned();
            assert!(
                a.as_str() == "unknown" || text.split_whitespace().any(|w| w == a.as_str()),
                "check-sat answered {} inside the engine but the client got {text:?} for {cmd_text}",
                a.as_str()
            );
        }
        if is_check {
            checks += 1;
        }
        if o.exit || checks > 50 {
            break;
        }
    }
    e.shutdown();
    let text = String::from_utf8_lossy(&out.0.lock().unwrap()).into_owned();
    // (Unless the client wrote such text itself: it may come back in an error message.)
    let own = String::from_utf8_lossy(script).matches("sp!sync-").count();
    assert!(
        text.matches("sp!sync-").count() <= own,
        "a framing marker reached the client:\n{text}"
    );
    assert!(
        answered <= checks,
        "{answered} check-sat outcomes for {checks} check-sat commands"
    );
}

/// Target (d): the lexical layer (`smtproxy::smt2::lex`) and the framers built on it. What
/// must hold, for any bytes:
/// * the client's framing (`CommandReader`) gives the same frames, text, positions and gaps
///   included, whether the input arrives whole, a byte at a time, or in pieces of sizes
///   taken from the input; `next_ready` and `more_in_memory` say what the next frame is;
/// * a framed command is where a plain byte-by-byte state machine (the rules written out
///   once more, naively) says it ends, and where the s-expression lexer takes it whole, it
///   is one list spanning the text whose head `command_head` finds;
/// * the solver's side (`Framer`) frames the same whole, bytewise and in pieces, and in
///   verbatim mode hands back every byte, in order;
/// * every function of `lex` stays in range and stops where its rule says.
pub fn lex(data: &[u8]) {
    let data = &data[..data.len().min(READER_MAX_LEN)];
    let whole: Vec<Frame> = CommandReader::new(data).collect();
    for sizes in piece_sizes(data) {
        let r = std::io::BufReader::with_capacity(
            1 << 16,
            Pieces {
                data,
                sizes,
                at: 0,
                k: 0,
            },
        );
        let pieces: Vec<Frame> = CommandReader::new(r).take(whole.len() + 1).collect();
        assert_eq!(
            pieces,
            whole,
            "framing in pieces differs: {:?}",
            String::from_utf8_lossy(data)
        );
    }
    let mut r = CommandReader::new(data);
    for want in &whole {
        let (ready, more) = (r.next_ready(), r.more_in_memory());
        let got = r.next_frame();
        assert_eq!(got.as_ref(), Some(want));
        assert!(more, "more_in_memory said no before {want:?}");
        let complete = match want {
            Frame::Command(_) => true,
            Frame::Error { msg, .. } => msg.contains("UTF-8"),
        };
        assert_eq!(ready, complete, "next_ready said {ready} before {want:?}");
    }
    assert!(!r.more_in_memory() && !r.next_ready() && r.next_frame().is_none());
    for f in &whole {
        if let Frame::Command(c) = f {
            command_agrees(&c.text);
        }
    }
    // Every `(` of the input, as the start of a command (a few hundred at most).
    for (i, _) in data
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == b'(')
        .take(300)
    {
        assert_eq!(
            Balance::opened().scan(&data[i + 1..]).map(|n| i + 1 + n),
            naive_end(&data[i..]).map(|n| i + n),
            "at {i}: {:?}",
            String::from_utf8_lossy(data)
        );
    }
    framer_agrees(data);
    functions_keep_their_rules(data);
}

/// Sizes of the pieces an input is read in: 1, 2, 3, 7, and sizes from its own bytes.
fn piece_sizes(data: &[u8]) -> Vec<Vec<usize>> {
    let own: Vec<usize> = data.iter().take(64).map(|&c| 1 + c as usize % 13).collect();
    let mut v = vec![vec![1], vec![2], vec![3], vec![7]];
    if !own.is_empty() {
        v.push(own);
    }
    v
}

/// A reader that returns `data` in pieces of the given sizes, in turn.
struct Pieces<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    at: usize,
    k: usize,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.k % self.sizes.len()];
        self.k += 1;
        let n = size.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Where the s-expression starting at `b[0] == '('` ends, byte by byte: the rules of
/// `lex` written out once more without its fast paths.
fn naive_end(b: &[u8]) -> Option<usize> {
    #[derive(PartialEq)]
    enum S {
        Code,
        Str,
        Quoted,
        Comment,
    }
    let mut s = S::Code;
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate() {
        s = match (s, c) {
            (S::Code, b'(') => {
                depth += 1;
                S::Code
            }
            (S::Code, b')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
                S::Code
            }
            (S::Code, b'"') => S::Str,
            (S::Code, b'|') => S::Quoted,
            (S::Code, b';') => S::Comment,
            (S::Str, b'"') | (S::Quoted, b'|' | b'\\') | (S::Comment, b'\n') => S::Code,
            (s, _) => s,
        };
    }
    None
}

/// A framed command, as the s-expression lexer and `command_head` see it.
fn command_agrees(text: &str) {
    assert!(text.starts_with('(') && text.ends_with(')'), "{text:?}");
    assert_eq!(naive_end(text.as_bytes()), Some(text.len()), "{text:?}");
    let Ok(sx) = Sexps::parse(text) else {
        return;
    };
    assert_eq!(sx.roots.len(), 1, "{text:?}");
    let SNode::List { start, end, .. } = sx.node(sx.roots[0]) else {
        panic!("a framed command is not a list: {text:?}");
    };
    assert_eq!((start as usize, end as usize), (0, text.len()), "{text:?}");
    let kids = sx.list(sx.roots[0]).unwrap_or(&[]);
    let head = kids.first().and_then(|&k| match sx.atom(k) {
        Some((Tok::Str | Tok::Quoted, _)) | None => None,
        Some((_, s)) => Some(s),
    });
    assert_eq!(lex::command_head(text), head, "{text:?}");
}

/// The solver side's framer: whole, bytewise and in pieces alike; verbatim, lossless.
fn framer_agrees(data: &[u8]) {
    let frames = |sizes: &[usize]| {
        let mut f = Framer::new();
        let mut out = Vec::new();
        let (mut at, mut k) = (0, 0);
        while at < data.len() {
            let n = sizes[k % sizes.len()].min(data.len() - at);
            f.push(&data[at..at + n]);
            (at, k) = (at + n, k + 1);
            while let Some(fr) = f.next_frame() {
                out.push(fr);
            }
        }
        out.extend(f.finish());
        out
    };
    let whole = frames(&[data.len().max(1)]);
    for sizes in piece_sizes(data) {
        assert_eq!(frames(&sizes), whole, "{:?}", String::from_utf8_lossy(data));
    }
    // Verbatim: gaps, frames and settled bytes are the input, in order.
    let mut f = Framer::verbatim();
    let mut back = Vec::new();
    for (k, piece) in data.chunks(5).enumerate() {
        f.push(piece);
        while let Some((gap, text)) = f.next_raw() {
            assert!(!text.is_empty());
            back.extend(gap);
            back.extend(text);
        }
        if k % 3 == 0 {
            back.extend(f.take_settled());
        }
    }
    back.extend(f.take_all());
    assert_eq!(back, data, "verbatim framing lost or repeated bytes");
}

/// Each function of `lex` at (a sample of) every offset.
fn functions_keep_their_rules(b: &[u8]) {
    let step = 1 + b.len() / 512;
    for i in (0..=b.len()).step_by(step) {
        let s = lex::skip_space(b, i);
        assert!(s >= i.min(b.len()) && s <= b.len());
        assert!(s == b.len() || !lex::is_space(b[s]) && b[s] != b';');
        let mut j = i.min(b.len());
        while j < b.len() && (lex::is_space(b[j]) || b[j] == b';') {
            if b[j] == b';' {
                while j < b.len() && b[j] != b'\n' {
                    j += 1;
                }
            } else {
                j += 1;
            }
        }
        assert_eq!(s, j, "skip_space from {i}");
        let (t, c) = lex::skip_space_from(b, i, false);
        assert_eq!(t, s);
        assert!(!c || t == b.len());
        let e = lex::token_end(b, i);
        assert!(e >= i.min(b.len()) && (e == b.len() || lex::is_delimiter(b[e])));
        assert!(b[i.min(b.len())..e].iter().all(|&c| !lex::is_delimiter(c)));
        if let Some((_, n)) = lex::token(&b[i.min(b.len())..]) {
            assert!(n > 0 && i + n <= b.len());
            assert!(b[i..i + n].iter().all(|&c| !lex::is_delimiter(c)));
        }
        if let Some(q) = lex::quoted_stop(b, i) {
            assert!(matches!(b[q], b'|' | b'\\'));
            assert!(!b[i..q].iter().any(|&c| matches!(c, b'|' | b'\\')));
        }
        if b.get(i) == Some(&b'"') {
            if let Some(end) = lex::string_end(b, i) {
                assert_eq!(b[end - 1], b'"');
                assert!(end == b.len() || b[end] != b'"');
                if let Ok(raw) = std::str::from_utf8(&b[i..end]) {
                    let content = lex::unescape_string(raw);
                    assert_eq!(lex::quote_string(&content), raw);
                }
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(b) {
        let rest = lex::skip_ws_comments(text);
        assert!(text.ends_with(rest));
        if let Some((content, rest)) = lex::parse_string_literal(text) {
            assert!(text.ends_with(rest));
            let q = lex::quote_string(&content);
            assert_eq!(lex::parse_string_literal(&q), Some((content, "")));
        }
    }
}
