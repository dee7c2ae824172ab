//! Every get-value answer is right: for KLEE's InitialValues queries (one get-value per
//! byte of each array after a sat check-sat), the values smtproxy gives under each
//! strategy -- from the incremental stack, from a stored model mapped back through the
//! canonical renaming, or from a recent model -- are asserted next to the query in a fresh
//! z3, which must say sat. Runs the engine in-process and captures each command's answer.

use crate::common;

use common::z3pipe::Z3Pipe;
use smtproxy::corpus;
use smtproxy::session::{engine_for, Strategy};
use smtproxy::smt2::reader::{CommandReader, Frame};
use std::io::Write;
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

fn check_log(rel: &str, strategy: Strategy) -> usize {
    let log = corpus::load(&common::corpus(rel)).unwrap();
    let cap = Capture::default();
    let mut engine = engine_for(strategy, Some("z3"), None, None, Box::new(cap.clone())).unwrap();
    let mut z3 = Z3Pipe::new();
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
                let verdict = z3.check(&format!("(reset)\n{script}\n(check-sat)"));
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
        // A constant table (256 cells the queries fix) read at a symbolic index.
        "klee/sbase-cut/solver-queries.smt2.gz",
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

/// The define-fun names of a get-model answer, in order.
fn model_names(answer: &str) -> Vec<String> {
    answer
        .split("(define-fun ")
        .skip(1)
        .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

/// get-model lists the client's declarations in the order the client made them (the
/// constants, then the functions, as z3 prints them), whatever order the backend saw them
/// in, under every strategy that rewrites models: from the stack (which declares names as
/// queries need them), from a fresh context, from smtproxy's own model. (Passthrough relays
/// z3's own bytes, whose order is z3's internal one.)
#[test]
fn get_model_follows_the_client_declarations() {
    // Two scripts: with a function (planned on the backend) and without (hybrid and
    // cache may answer from their own model). The first query makes the backend see the
    // names in an order other than the client's.
    let with_fun = "(set-option :produce-models true)
        (declare-fun f (Int) Int) (declare-fun c () Bool) (declare-fun b () Int)
        (declare-fun a () Int) (declare-fun u () Int)
        (push 1) (assert (> a 2)) (check-sat) (pop 1)
        (push 1) (declare-fun d () Int)
        (assert (> a b)) (assert (= (f a) 3)) (assert (= d (+ a 1))) (assert c) (assert (< u 0))
        (check-sat) (get-model)";
    let no_fun = "(set-option :produce-models true)
        (declare-fun c () Bool) (declare-fun b () Int) (declare-fun a () Int)
        (declare-fun u () Int)
        (push 1) (assert (> u 2)) (check-sat) (pop 1)
        (push 1) (declare-fun d () Int)
        (assert (> a b)) (assert (= d (+ a 1))) (assert c) (assert (< u 0))
        (check-sat) (get-model)";
    for (script, want) in [
        (with_fun, ["c", "b", "a", "u", "d", "f"].as_slice()),
        (no_fun, ["c", "b", "a", "u", "d"].as_slice()),
    ] {
        for strategy in Strategy::all() {
            if strategy == Strategy::Passthrough {
                continue;
            }
            let cap = Capture::default();
            let mut engine =
                engine_for(strategy, Some("z3"), None, None, Box::new(cap.clone())).unwrap();
            let mut last = String::new();
            for frame in CommandReader::new(script.as_bytes()) {
                engine.handle(frame);
                last = cap.take();
            }
            engine.shutdown();
            assert_eq!(
                model_names(&last),
                want,
                "{}: get-model answered {last}",
                strategy.name()
            );
        }
    }
}

/// The answers after one check-sat agree with each other where the query leaves a
/// constant free (the model is completed once, and the completion kept), and the next
/// check-sat's answers come from its own model, not from values kept for the last one:
/// `y` is free, so whatever value get-value gives it, `(bvadd x y)` and get-model must
/// agree with it; then `x` changes. Under every strategy (smtproxy's own models under
/// cache and hybrid, where the repeated query is answered from the session's memo).
#[test]
fn answers_of_one_check_sat_agree_and_the_next_starts_afresh() {
    let script = "(set-option :produce-models true)
        (declare-fun x () (_ BitVec 8)) (declare-fun y () (_ BitVec 8))
        (push 1) (assert (= x #x05)) (check-sat) (pop 1)
        (push 1) (assert (= x #x05)) (check-sat)
        (get-value (y)) (get-value ((bvadd x y))) (get-model) (get-value (y x))
        (pop 1)
        (push 1) (assert (= x #x07)) (check-sat) (get-value ((bvadd x y) y))";
    let hex = |s: &str| u8::from_str_radix(s.trim_start_matches("#x"), 16).unwrap();
    for strategy in Strategy::all() {
        let cap = Capture::default();
        let mut engine =
            engine_for(strategy, Some("z3"), None, None, Box::new(cap.clone())).unwrap();
        let mut answers = Vec::new();
        for frame in CommandReader::new(script.as_bytes()) {
            engine.handle(frame);
            answers.push(cap.take());
        }
        engine.shutdown();
        let answers: Vec<String> = answers.into_iter().filter(|a| !a.is_empty()).collect();
        let name = strategy.name();
        assert_eq!(answers.len(), 8, "{name}: {answers:?}");
        assert_eq!(answers[0].trim(), "sat", "{name}");
        assert_eq!(answers[1].trim(), "sat", "{name}");
        // ((y v))
        let y = answers[2]
            .trim()
            .trim_start_matches("((y ")
            .trim_end_matches("))");
        let y = hex(y);
        assert_eq!(
            answers[3].trim(),
            format!("(((bvadd x y) #x{:02x}))", 5u8.wrapping_add(y)),
            "{name}"
        );
        assert!(
            answers[4].contains(&format!("(define-fun y () (_ BitVec 8)\n    #x{y:02x})"))
                || answers[4].contains(&format!("(define-fun y () (_ BitVec 8) #x{y:02x})")),
            "{name}: get-model {} against y = {y}",
            answers[4]
        );
        assert_eq!(
            answers[5].trim(),
            format!("((y #x{y:02x})\n (x #x05))"),
            "{name}"
        );
        assert_eq!(answers[6].trim(), "sat", "{name}");
        let last = answers[7].trim();
        let (sum, y2) = last
            .strip_prefix("(((bvadd x y) ")
            .and_then(|s| s.strip_suffix("))"))
            .and_then(|s| s.split_once(")\n (y "))
            .unwrap_or_else(|| panic!("{name}: {last}"));
        assert_eq!(hex(sum), 7u8.wrapping_add(hex(y2)), "{name}: {last}");
    }
}
