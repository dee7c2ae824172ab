//! Every get-value answer is right: for KLEE's InitialValues queries (one get-value per
//! byte of each array after a sat check-sat), the values smtproxy gives under each
//! strategy -- from the incremental stack, from a stored model mapped back through the
//! canonical renaming, or from a recent model -- are asserted next to the query in a fresh
//! z3, which must say sat. Runs the engine in-process and captures each command's answer.

use smtproxy::corpus;
use smtproxy::session::{engine_for, Strategy};
use smtproxy::smt2::reader::{CommandReader, Frame};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);
impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
impl Capture {
    fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
    }
}

/// One long-lived z3 that says sat/unsat for whole scripts.
struct Z3 {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}
impl Z3 {
    fn new() -> Z3 {
        let mut child = Command::new("z3")
            .args(["-in", "-smt2"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("z3 on PATH");
        let out = BufReader::new(child.stdout.take().unwrap());
        Z3 { child, out }
    }
    fn check(&mut self, script: &str) -> String {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "(reset)\n{script}\n(check-sat)").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            self.out.read_line(&mut line).unwrap();
            let l = line.trim();
            if l == "sat" || l == "unsat" || l == "unknown" || l.starts_with("(error") {
                return l.to_string();
            }
        }
    }
}
impl Drop for Z3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn check_log(rel: &str, strategy: Strategy) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("smt2-corpus")
        .join(rel);
    let log = corpus::load(&path).unwrap();
    let cap = Capture::default();
    let mut engine = engine_for(strategy, Some("z3"), None, None, Box::new(cap.clone())).unwrap();
    let mut z3 = Z3::new();
    let mut record: Vec<String> = Vec::new(); // declarations and assertions of this query
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut checked = 0;
    for frame in CommandReader::new(log.text.as_bytes()) {
        let Frame::Command(mut c) = frame else {
            panic!("framing error in {rel}")
        };
        if c.text == "(exit)" {
            c.text = "(reset)".into();
        }
        let text = c.text.clone();
        engine.handle(Frame::Command(c));
        let answer = cap.take();
        if text.starts_with("(get-value") {
            if answer.starts_with("(error") {
                continue; // after unsat: no model, as z3 says
            }
            // `((term value))`: split the single pair at the last top-level space.
            let inner = answer
                .trim()
                .strip_prefix("((")
                .and_then(|s| s.strip_suffix("))"))
                .unwrap_or_else(|| {
                    panic!(
                        "{rel} {}: unexpected get-value answer {answer}",
                        strategy.name()
                    )
                });
            let cut = inner.rfind(' ').unwrap();
            pairs.push((inner[..cut].to_string(), inner[cut + 1..].to_string()));
        } else if text == "(reset)" {
            if !pairs.is_empty() {
                let mut script = record.join("\n");
                for (t, v) in &pairs {
                    script.push_str(&format!("\n(assert (= {t} {v}))"));
                }
                let verdict = z3.check(&script);
                assert_eq!(
                    verdict,
                    "sat",
                    "{rel} under {}: the values smtproxy gave do not satisfy the query:\n{script}",
                    strategy.name()
                );
                checked += 1;
            }
            record.clear();
            pairs.clear();
        } else if text.starts_with("(declare")
            || text.starts_with("(assert")
            || text.starts_with("(set-logic")
        {
            record.push(text);
        }
    }
    engine.shutdown();
    checked
}

fn all_logs(strategy: Strategy) {
    let mut total = 0;
    for rel in [
        "klee/sort/solver-queries.smt2.gz",
        "klee/regexp/solver-queries.smt2.gz",
        "klee/sbase-echo/solver-queries.smt2.gz",
        "external/cyphert-alu.smt2.gz",
    ] {
        total += check_log(rel, strategy);
    }
    assert!(total > 150, "only {total} models checked");
}

#[test]
fn get_values_satisfy_the_query_fresh() {
    all_logs(Strategy::Fresh);
}
#[test]
fn get_values_satisfy_the_query_stack() {
    all_logs(Strategy::Stack);
}
#[test]
fn get_values_satisfy_the_query_stack_cse() {
    all_logs(Strategy::StackCse);
}
#[test]
fn get_values_satisfy_the_query_cache() {
    all_logs(Strategy::Cache);
}
#[test]
fn get_values_satisfy_the_query_hybrid() {
    all_logs(Strategy::Hybrid);
}
