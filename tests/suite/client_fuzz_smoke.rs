//! Stable-Rust fallback for the cargo-fuzz targets in `fuzz/` (same target functions,
//! included from `fuzz/src/targets.rs`): a deterministic mutation loop over the seed corpus
//! `smt2-corpus/hand/*.smt2` (plus `fuzz/regressions/*`).
//!
//! * `fuzz_smoke_reader`: ~20k mutated inputs through CommandReader + parse_command
//!   (+ the printer round trip), capped at 40 s.
//! * `fuzz_smoke_lex`: ~5k mutated inputs through the lexical layer and both framers (whole
//!   and in pieces), capped at 30 s.
//! * `fuzz_smoke_engine`: ~100 short mutated inputs through the whole engine with the real
//!   z3 (hybrid vs passthrough answers), capped at 20 s.
//! * `fuzz_smoke_engine_mock`: ~400 mutated inputs through the whole engine behind the mock
//!   solver (`fuzz/src/mock_solver.rs`), every strategy, capped at 20 s.
//! * `fuzz_regressions`: replays every saved crash input in `fuzz/regressions/`.
//!
//! A panic found by the loop is saved as `fuzz/regressions/<target>-<hash>.smt2` and the test
//! fails with the message. Knobs: SMTPROXY_FUZZ_ITERS, SMTPROXY_FUZZ_ENGINE_ITERS,
//! SMTPROXY_FUZZ_SECS, SMTPROXY_FUZZ_SEED.

#[path = "../../fuzz/src/targets.rs"]
mod targets;

use crate::common;

use common::rng::Rng;
use common::root;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The files of a directory, in name order.
fn sorted_files(rd: std::fs::ReadDir) -> Vec<PathBuf> {
    let mut files: Vec<_> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in [
        root().join("smt2-corpus/hand"),
        root().join("fuzz/regressions"),
        root().join("fuzz/corpus/seed"),
    ] {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for f in sorted_files(rd) {
            if let Ok(b) = std::fs::read(&f) {
                out.push(b);
            }
        }
    }
    assert!(!out.is_empty(), "no seeds found under smt2-corpus/hand");
    out
}

const DICT: &[&str] = &[
    "(",
    ")",
    "(assert ",
    "(check-sat)",
    "(push 1)",
    "(pop 1)",
    "(pop 2)",
    "(get-model)",
    "(get-value (x))",
    "(declare-fun x () Int)",
    "(declare-const b (_ BitVec 8))",
    "(declare-fun f (Int) Int)",
    "(define-fun g ((a Int)) Int (+ a 1))",
    "(reset)",
    "(reset-assertions)",
    "(set-option :print-success true)",
    "(set-option :global-declarations true)",
    "(check-sat-assuming (p (not q)))",
    "(get-unsat-core)",
    "(echo \"x\")",
    "(exit)",
    " x ",
    " b ",
    " 0 ",
    " -1 ",
    " 1.5 ",
    " #x00 ",
    " #b1 ",
    " #xff ",
    "(_ bv5 8)",
    "(_ bv0 0)",
    "((_ extract 7 0) b)",
    "((_ zero_extend 0) b)",
    "((_ sign_extend 3) b)",
    "((_ repeat 0) b)",
    "((_ rotate_left 9) b)",
    "(bvudiv b #x00)",
    "(bvurem b #x00)",
    "(bvsdiv b #x00)",
    "(bvsmod b #x00)",
    "(div x 0)",
    "(mod x 0)",
    "(/ 1.0 0.0)",
    "(let ((y x)) y)",
    "(let ((x x) (x 1)) x)",
    "(! x :named n)",
    "(forall ((z Int)) (> z x))",
    "(exists ((z Int)) true)",
    "(select a 0)",
    "(store a 0 1)",
    "(Array Int Int)",
    "((as const (Array Int Int)) 0)",
    "(ite c x 0)",
    "(= x x x)",
    "(distinct x)",
    "(and)",
    "(or)",
    "(xor true true true)",
    "(=> p q r)",
    "(concat b b)",
    "(bvadd b)",
    "|quoted sym|",
    "||",
    "\"str\"\"ing\"",
    "; comment\n",
    "\n",
    "\u{0}",
    "\u{ff}",
    "é",
    ":keyword",
    "(_ BitVec 0)",
    "(_ BitVec 4294967296)",
    "(_ bv18446744073709551617 64)",
    "99999999999999999999999",
    "(to_real x)",
    "(to_int 1.5)",
    "(abs x)",
    "(* x x)",
    "(declare-sort U 0)",
    "(declare-sort U 1)",
    "(define-sort S () Int)",
    "(define-sort T (X) (Array X X))",
    "(declare-datatypes ((L 0)) (((nil) (cons (hd Int) (tl L)))))",
    "(set-logic QF_ABV)",
    "(set-logic ALL)",
    "(push 0)",
    "(pop 0)",
    "(push 4294967296)",
    "(get-info :reason-unknown)",
    "(get-option :produce-models)",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    let n_ops = 1 + rng.index(4);
    for _ in 0..n_ops {
        let len = input.len();
        match rng.index(9) {
            0 if len > 0 => {
                let i = rng.index(len);
                input[i] ^= 1 << rng.index(8);
            }
            1 if len > 0 => {
                let a = rng.index(len);
                let b = (a + 1 + rng.index(32)).min(len);
                input.drain(a..b);
            }
            2 if len > 0 => {
                let a = rng.index(len);
                let b = (a + 1 + rng.index(64)).min(len);
                let chunk = input[a..b].to_vec();
                let at = rng.index(input.len() + 1);
                input.splice(at..at, chunk);
            }
            3 | 4 => {
                let tok = DICT[rng.index(DICT.len())].as_bytes();
                let at = rng.index(len + 1);
                input.splice(at..at, tok.iter().copied());
            }
            5 => {
                // splice in a piece of another seed
                let s = &seeds[rng.index(seeds.len())];
                if !s.is_empty() {
                    let a = rng.index(s.len());
                    let b = (a + 1 + rng.index(256)).min(s.len());
                    let at = rng.index(len + 1);
                    input.splice(at..at, s[a..b].iter().copied());
                }
            }
            6 if len > 0 => {
                input.truncate(rng.index(len));
            }
            7 => {
                // unbalance or deepen
                let at = rng.index(len + 1);
                let cap = if rng.index(20) == 0 { 5000 } else { 8 };
                let k = 1 + rng.index(cap);
                let c = if rng.index(2) == 0 { b'(' } else { b')' };
                input.splice(at..at, std::iter::repeat_n(c, k));
            }
            _ if len > 0 => {
                // replace a byte with an interesting one
                let i = rng.index(len);
                const BYTES: &[u8] = b"()|\";\\ \n#_!:0-";
                input[i] = BYTES[rng.index(BYTES.len())];
            }
            _ => {}
        }
    }
}

fn hash(data: &[u8]) -> String {
    // FNV-1a, enough to name a file
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Run one input; a panic or a run longer than `limit` (a hang; its thread is abandoned)
/// is an error with a message.
fn run_with_watchdog(
    target: &(dyn Fn(&[u8]) + Sync),
    input: &[u8],
    limit: Duration,
) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let input_owned = input.to_vec();
    // SAFETY of the 'static: the targets are plain fns wrapped in closures without captures.
    let target: &'static (dyn Fn(&[u8]) + Sync) = unsafe { std::mem::transmute(target) };
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(|| target(&input_owned))).map_err(|p| panic_msg(&*p));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(limit) {
        Ok(r) => r,
        Err(_) => Err(format!(
            "HANG: no result after {limit:?}\ninput:\n{}",
            String::from_utf8_lossy(input)
        )),
    }
}

fn panic_msg(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else {
        "<non-string panic>".into()
    }
}

/// Run `target` over mutated seeds; returns (executions, crashes as (file, message)).
fn fuzz_loop(
    name: &str,
    iters: u64,
    budget: Duration,
    max_len: usize,
    target: &(dyn Fn(&[u8]) + Sync),
) -> (u64, Vec<(PathBuf, String)>) {
    let seeds = seeds();
    let mut rng = Rng(env_num("SMTPROXY_FUZZ_SEED", 0x5eed_1234_abcd_0001) | 1);
    let t0 = Instant::now();
    let mut crashes: Vec<(PathBuf, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut execs = 0;
    // Replay the seeds themselves first (cut to max_len).
    let mut queue: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| s[..s.len().min(max_len)].to_vec())
        .collect();
    while execs < iters && t0.elapsed() < budget {
        let input = if let Some(q) = queue.pop() {
            q
        } else {
            let s = &seeds[rng.index(seeds.len())];
            // a window of the seed, so short inputs reach commands deep in long seeds
            let mut start = if s.len() > max_len {
                rng.index(s.len() - max_len / 2)
            } else {
                0
            };
            while start > 0 && s[start - 1] != b'\n' {
                start -= 1;
            }
            let mut v = s[start..s.len().min(start + max_len)].to_vec();
            mutate(&mut rng, &seeds, &mut v);
            v.truncate(max_len * 2);
            v
        };
        execs += 1;
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = run_with_watchdog(target, &input, Duration::from_secs(20));
        std::panic::set_hook(prev);
        if let Err(msg) = r {
            let key: String = msg.lines().next().unwrap_or("").chars().take(80).collect();
            if seen.insert(key) {
                let dir = root().join("fuzz/regressions");
                std::fs::create_dir_all(&dir).unwrap();
                let path = dir.join(format!("{name}-{}.smt2", hash(&input)));
                std::fs::write(&path, &input).unwrap();
                eprintln!(
                    "{name}: CRASH saved to {}: {}",
                    path.display(),
                    msg.lines().next().unwrap_or("")
                );
                crashes.push((path, msg));
            }
        }
    }
    eprintln!(
        "{name}: {execs} executions in {:.1?}, {} distinct crash(es)",
        t0.elapsed(),
        crashes.len()
    );
    (execs, crashes)
}

fn report(crashes: &[(PathBuf, String)]) {
    if !crashes.is_empty() {
        let text: Vec<String> = crashes
            .iter()
            .map(|(p, m)| format!("{}:\n{}", p.display(), m))
            .collect();
        panic!(
            "{} crash(es) found (inputs saved):\n{}",
            crashes.len(),
            text.join("\n\n")
        );
    }
}

#[test]
fn fuzz_smoke_reader() {
    let iters = env_num("SMTPROXY_FUZZ_ITERS", 20_000);
    let secs = env_num("SMTPROXY_FUZZ_SECS", 40);
    let (_, crashes) = fuzz_loop("reader", iters, Duration::from_secs(secs), 4096, &|d| {
        targets::reader(d)
    });
    report(&crashes);
}

#[test]
fn fuzz_smoke_lex() {
    let iters = env_num("SMTPROXY_FUZZ_LEX_ITERS", 5_000);
    let secs = env_num("SMTPROXY_FUZZ_SECS", 30);
    let (execs, crashes) = fuzz_loop("lex", iters, Duration::from_secs(secs), 4096, &|d| {
        targets::lex(d)
    });
    assert!(execs > 100, "only {execs} inputs ran");
    report(&crashes);
}

#[test]
fn fuzz_smoke_engine() {
    common::require("z3");
    let iters = env_num("SMTPROXY_FUZZ_ENGINE_ITERS", 150);
    let secs = env_num("SMTPROXY_FUZZ_SECS", 20);
    let (_, crashes) = fuzz_loop(
        "engine",
        iters,
        Duration::from_secs(secs),
        targets::ENGINE_MAX_LEN,
        &|d| {
            let _ = targets::engine(d);
        },
    );
    report(&crashes);
}

/// The mock solver, built by `cargo test` as an example of the package.
fn mock_solver() -> PathBuf {
    let p =
        targets::mock_solver_path().expect("target/*/examples/mock_solver (cargo test builds it)");
    assert!(p.is_file());
    p
}

/// A libFuzzer input for `engine_mock` from a script: strategy and seed from its hash.
/// (Saved `engine_mock-*` regressions are scripts; `engine_mock_raw-*` are libFuzzer's
/// own inputs, used as they are.)
fn mock_input(script: &[u8]) -> Vec<u8> {
    let h = script.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let mut input = h.to_le_bytes()[..5].to_vec();
    input.extend_from_slice(script);
    input
}

/// The engine behind the mock solver, every strategy: the mock's seed and the strategy
/// come from a hash of the mutated script (the libFuzzer target takes them from the
/// input's first bytes).
#[test]
fn fuzz_smoke_engine_mock() {
    let mock = mock_solver();
    let iters = env_num("SMTPROXY_FUZZ_MOCK_ITERS", 400);
    let secs = env_num("SMTPROXY_FUZZ_SECS", 20);
    let (execs, crashes) = fuzz_loop(
        "engine_mock",
        iters,
        Duration::from_secs(secs),
        targets::ENGINE_MAX_LEN,
        &|d| targets::engine_mock(&mock_input(d), &mock),
    );
    assert!(execs > 50, "only {execs} inputs ran");
    report(&crashes);
}

/// Every saved crash input must now run without a panic through the targets it was found
/// by (the lexical and reader targets take every input).
#[test]
fn fuzz_regressions() {
    common::require("z3");
    let dir = root().join("fuzz/regressions");
    let rd = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut failures = Vec::new();
    for f in sorted_files(rd) {
        let data = std::fs::read(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let run_engine = !name.starts_with("reader-") && !name.starts_with("lex-");
        // engine_mock-* inputs carry the strategy and the mock's seed in their first bytes.
        let mock = name.starts_with("engine_mock").then(mock_solver);
        let raw = name.starts_with("engine_mock_raw-");
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = run_with_watchdog(
            &move |d: &[u8]| {
                if let Some(m) = &mock {
                    if raw {
                        targets::engine_mock(d, m);
                    } else {
                        targets::engine_mock(&mock_input(d), m);
                    }
                    return;
                }
                targets::lex(d);
                targets::reader(d);
                if run_engine {
                    let _ = targets::engine(d);
                }
            },
            &data,
            Duration::from_secs(30),
        );
        std::panic::set_hook(prev);
        if let Err(msg) = r {
            failures.push(format!("{}: {}", f.display(), msg));
        }
    }
    assert!(
        failures.is_empty(),
        "regression inputs still crash:\n{}",
        failures.join("\n\n")
    );
}
