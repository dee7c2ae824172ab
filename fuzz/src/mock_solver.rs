//! A mock SMT solver for fuzzing the session engine: it speaks the SMT-LIB command
//! language on stdin/stdout as `z3 -in` does, but decides nothing. Its answers come from a
//! pseudo-random stream seeded by its first argument, so the fuzzer controls how it
//! behaves: check-sat answers sat, unsat or unknown at random (or errors, or the solver
//! dies, or it hangs for a while); get-value and get-model give values of random kinds
//! (right or wrong sort, malformed); print-success is followed as the client sets it;
//! `echo` is always answered correctly (smtproxy frames output with it, and a solver that
//! does not echo is covered by the death and hang cases). It starts in about a millisecond,
//! where z3 takes about 20: the engine fuzz target runs hundreds of inputs a second with it.
//!
//! It is a cargo example of the smtproxy package (`cargo build --examples`; `cargo test`
//! builds it too) and a binary of the fuzz crate. Arguments: `SEED [FLAGS]`; flags:
//! `calm` (never die, hang or give malformed output).

use smtproxy::smt2::reader::{CommandReader, Frame};
use std::io::{BufReader, Write};
use std::time::Duration;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64: every seed, including 0, gives a usable stream.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The items of a list's text `( a (b c) "d" )`, as texts; None when it is not a list.
fn list_items(text: &str) -> Option<Vec<String>> {
    let t = text.trim();
    let inner = t.strip_prefix('(')?.strip_suffix(')')?;
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let (mut in_str, mut in_bar) = (false, false);
    for ch in inner.chars() {
        match ch {
            '"' if !in_bar => in_str = !in_str,
            '|' if !in_str => in_bar = !in_bar,
            '(' if !in_str && !in_bar => depth += 1,
            ')' if !in_str && !in_bar => depth -= 1,
            c if c.is_whitespace() && depth == 0 && !in_str && !in_bar => {
                if !cur.is_empty() {
                    items.push(std::mem::take(&mut cur));
                }
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.is_empty() {
        items.push(cur);
    }
    Some(items)
}

/// A value of a random kind (the mock does not know sorts).
fn value(rng: &mut Rng, calm: bool) -> String {
    match rng.below(if calm { 7 } else { 9 }) {
        0 => "true".into(),
        1 => "false".into(),
        2 => rng.below(100).to_string(),
        3 => format!("(- {})", rng.below(100)),
        4 => format!("#x{:02x}", rng.below(256)),
        5 => format!("#b{:08b}", rng.below(256)),
        6 => format!("(_ bv{} 32)", rng.below(1000)),
        7 => "(/ 1 0)".into(),
        _ => "|not a value".into(),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let calm = args.any(|a| a == "calm");
    let mut rng = Rng(seed ^ 0x5EED);
    let mut ps = false;
    let mut declared: Vec<String> = Vec::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let reader = CommandReader::new(BufReader::new(std::io::stdin()));
    for frame in reader {
        let text = match frame {
            Frame::Command(raw) => raw.text,
            Frame::Error { msg, .. } => {
                let _ = writeln!(out, "(error \"{}\")", msg.replace('"', "'"));
                let _ = out.flush();
                continue;
            }
        };
        let items = list_items(&text).unwrap_or_default();
        let head = items.first().map(String::as_str).unwrap_or("");
        let reply: Option<String> = match head {
            "exit" => {
                if ps {
                    let _ = writeln!(out, "success");
                }
                let _ = out.flush();
                return;
            }
            "echo" => Some(items.get(1).cloned().unwrap_or_else(|| "\"\"".into())),
            "set-option" if items.get(1).map(String::as_str) == Some(":print-success") => {
                ps = items.get(2).map(String::as_str) == Some("true");
                ps.then(|| "success".into())
            }
            "declare-const" | "declare-fun" => {
                if let Some(n) = items.get(1) {
                    declared.push(n.clone());
                }
                ps.then(|| "success".into())
            }
            "check-sat" | "check-sat-assuming" => {
                let r = rng.below(if calm { 30 } else { 34 });
                match r {
                    0..=13 => Some("sat".into()),
                    14..=25 => Some("unsat".into()),
                    26..=29 => Some("unknown".into()),
                    30 => Some("(error \"mock: check-sat failed\")".into()),
                    31 => {
                        // Dies in the middle of its answer.
                        let _ = write!(out, "sa");
                        let _ = out.flush();
                        std::process::exit(1);
                    }
                    32 => {
                        // Hangs for a while, then answers (past short deadlines).
                        std::thread::sleep(Duration::from_millis(300));
                        Some("sat".into())
                    }
                    _ => Some("timeout".into()),
                }
            }
            "get-value" => {
                let terms = items.get(1).and_then(|t| list_items(t)).unwrap_or_default();
                let pairs: Vec<String> = terms
                    .iter()
                    .map(|t| format!("({t} {})", value(&mut rng, calm)))
                    .collect();
                Some(format!("({})", pairs.join("\n ")))
            }
            "get-model" => {
                let mut s = String::from("(\n");
                for n in &declared {
                    if rng.below(4) != 0 {
                        s.push_str(&format!(
                            "  (define-fun {n} () Int {})\n",
                            value(&mut rng, calm)
                        ));
                    }
                }
                s.push(')');
                Some(s)
            }
            "get-info" => Some(match items.get(1).map(String::as_str) {
                Some(":version") => "(:version \"0.0-mock\")".into(),
                Some(":name") => "(:name \"mock\")".into(),
                Some(k) => format!("({k} unsupported)"),
                None => "(error \"mock: get-info needs a keyword\")".into(),
            }),
            "get-option" => Some("unsupported".into()),
            "get-unsat-core" | "get-unsat-assumptions" => Some("()".into()),
            "get-assignment" => Some("()".into()),
            "get-proof" => Some("(error \"mock: no proof\")".into()),
            "reset" => {
                declared.clear();
                ps = false;
                None
            }
            "" => Some("(error \"mock: invalid command\")".into()),
            _ => {
                if !calm && rng.below(64) == 0 {
                    Some("(error \"mock: refused\")".into())
                } else {
                    ps.then(|| "success".into())
                }
            }
        };
        if let Some(r) = reply {
            let _ = writeln!(out, "{r}");
        }
        if out.flush().is_err() {
            return;
        }
    }
}
