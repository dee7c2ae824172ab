//! Shared helpers for the criterion benches: loading the shipped KLEE corpus and turning a
//! log into per-query assertion lists in one term store, the way the engine sees them.
#![allow(dead_code)]

use smtproxy::smt2::command::Command;
use smtproxy::smt2::parser::{parse_command, parse_term};
use smtproxy::smt2::reader::{CommandReader, Frame};
use smtproxy::term::signature::Signature;
use smtproxy::term::{TermId, TermStore};
use std::path::{Path, PathBuf};

/// The allocator the binary uses (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The corpus directory (`smt2-corpus/klee` of the repository, beside this package).
pub fn corpus_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("smt2-corpus/klee")
        .join(rel)
}

/// The decompressed text of a corpus log, e.g. `load("sbase-cut/all-queries.smt2.gz")`.
pub fn load(rel: &str) -> String {
    let p = corpus_path(rel);
    smtproxy::corpus::load(&p)
        .unwrap_or_else(|e| panic!("cannot load {}: {e}", p.display()))
        .text
}

/// A short id for a log path (`sbase-cut/all`).
pub fn short(rel: &str) -> String {
    rel.replace("-queries.smt2.gz", "").replace(".smt2.gz", "")
}

/// Update the signature for a command exactly as `session::Engine::declare` does for
/// declarations, and clear it on `(reset)` / `(exit)`. Returns false for a reset.
pub fn track(store: &mut TermStore, sig: &mut Signature, cmd: &Command) -> bool {
    if matches!(cmd, Command::Exit | Command::Reset) {
        sig.clear();
        return false;
    }
    cmd.declare_in(store, sig);
    true
}

/// Frame and parse every command of `text` into `store` (the `reader` bench's unit of work).
/// Returns the number of commands parsed.
pub fn parse_all(store: &mut TermStore, sig: &mut Signature, text: &str) -> usize {
    let mut n = 0;
    for frame in CommandReader::new(text.as_bytes()) {
        if let Frame::Command(raw) = frame {
            if let Ok(cmd) = parse_command(store, sig, &raw.text) {
                track(store, sig, &cmd);
                n += 1;
            }
        }
    }
    n
}

/// `parse_all`, with assertions and get-values parsed before taken from a `CommandMemo`
/// as the engine does.
pub fn parse_all_memo(store: &mut TermStore, sig: &mut Signature, text: &str) -> usize {
    let mut memo = smtproxy::smt2::memo::CommandMemo::default();
    let mut n = 0;
    for frame in CommandReader::new(text.as_bytes()) {
        if let Frame::Command(raw) = frame {
            if let Ok(cmd) = memo.parse(store, sig, &raw.text) {
                track(store, sig, &cmd);
                n += 1;
            }
        }
    }
    n
}

/// One check-sat of a KLEE log.
#[derive(Clone, Debug)]
pub struct Query {
    /// Asserted terms, in order.
    pub assertions: Vec<TermId>,
    /// Declared constants: (name, leaf term) (KLEE: the arrays).
    pub consts: Vec<(String, TermId)>,
    /// Source text of the declarations and assertions (to send to a real solver).
    pub script: Vec<String>,
}

pub struct Parsed {
    pub store: TermStore,
    pub queries: Vec<Query>,
}

/// Parse a KLEE log into one store, one `Query` per check-sat (records separated by `(exit)`).
pub fn parse_queries(text: &str) -> Parsed {
    let mut store = TermStore::new();
    let mut sig = Signature::default();
    let mut cur = Query {
        assertions: Vec::new(),
        consts: Vec::new(),
        script: Vec::new(),
    };
    let mut queries = Vec::new();
    for frame in CommandReader::new(text.as_bytes()) {
        let Frame::Command(raw) = frame else { continue };
        let Ok(cmd) = parse_command(&mut store, &sig, &raw.text) else {
            continue;
        };
        if !track(&mut store, &mut sig, &cmd) {
            cur = Query {
                assertions: Vec::new(),
                consts: Vec::new(),
                script: Vec::new(),
            };
            continue;
        }
        match &cmd {
            Command::DeclareFun { name, params, .. } => {
                if params.is_empty() {
                    let leaf =
                        parse_term(&mut store, &sig, name).expect("declared constant parses");
                    cur.consts.push((name.clone(), leaf));
                }
                cur.script.push(raw.text.clone());
            }
            Command::Assert(t, _) => {
                cur.assertions.push(*t);
                cur.script.push(raw.text.clone());
            }
            Command::CheckSat => queries.push(cur.clone()),
            _ => {}
        }
    }
    Parsed { store, queries }
}

/// The logs the query-level benches (canon, slice) run on.
pub const QUERY_LOGS: &[&str] = &[
    "sbase-cut/all-queries.smt2.gz",
    "sbase-expr/solver-queries.smt2.gz",
    "regexp/solver-queries.smt2.gz",
];

/// Short criterion settings by default (the machine is shared); override on the command line.
pub fn criterion() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3))
        .configure_from_args()
}

pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

pub fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let i = ((v.len() - 1) as f64 * p).round() as usize;
    v[i]
}
