//! A solver whose models are dear to read (cvc5 builds its model at the first get-value
//! after a sat, seconds on some KLEE queries): smtproxy stops reading the model of every
//! sat component once a read has cost several solves, and reads one only when the client
//! asks for it. Driven here through z3 behind a wrapper that makes every get-value and
//! get-model wait 300 ms (a read dearer than four of these solves, even on a loaded
//! machine, and than the 50 ms floor): the answers stay z3's, every value and model the
//! client gets satisfies its query (one component or two), an objective's search still
//! finds z3's optimum, and the summary counts the models left unread (none where reads
//! are cheap).

use crate::common;

use common::replies::{check_sat_answers, next_response};
use common::{field, require, run, run_prog, slow_model_z3, summary};
use std::time::Duration;

const T: Duration = Duration::from_secs(120);
/// What the wrapper holds each get-value and get-model for.
const DELAY_MS: u64 = 300;

/// Query `i`: `3 * x = k` with `0 < y < x < 256` (sat exactly when k is three times a
/// number in 2..256), and for every third a second, independent component on `w`; the
/// client asks for values after every other query (of `x` and `y`, which a query of one
/// component holds, or of `w` too) and for the model after every fifth.
#[derive(Clone, Copy)]
struct Query {
    k: u32,
    /// `5 * w = kw` with `w < 256`, when the query has that component.
    kw: Option<u32>,
    /// The get-value asked after the check-sat, if any.
    values: Option<&'static str>,
    model: bool,
}

fn queries(n: u32) -> Vec<Query> {
    (0..n)
        .map(|i| Query {
            k: 3 * (i + 2) + u32::from(i % 4 == 3),
            kw: (i % 3 == 2).then_some(5 * (i + 1)),
            values: match i % 4 {
                0 => Some("(get-value (x y))"),
                2 => Some("(get-value (x y w))"),
                _ => None,
            },
            model: i % 5 == 1,
        })
        .collect()
}

fn script(qs: &[Query]) -> String {
    let mut s = String::from(
        "(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 32))\n(declare-const y (_ BitVec 32))\n(declare-const w (_ BitVec 32))\n",
    );
    for q in qs {
        s.push_str(&format!(
            "(push 1)\n(assert (= (bvmul x #x00000003) #x{:08x}))\n(assert (bvult x #x00000100))\n(assert (bvult y x))\n(assert (bvult #x00000000 y))\n",
            q.k
        ));
        if let Some(kw) = q.kw {
            s.push_str(&format!(
                "(assert (= (bvmul w #x00000005) #x{kw:08x}))\n(assert (bvult w #x00000100))\n"
            ));
        }
        s.push_str("(check-sat)\n");
        if let Some(v) = q.values {
            s.push_str(v);
            s.push('\n');
        }
        if q.model {
            s.push_str("(get-model)\n");
        }
        s.push_str("(pop 1)\n");
    }
    s
}

/// The 32-bit value of `name` in a get-value or get-model answer (`(x #x0000000a)`, or
/// `(define-fun x () (_ BitVec 32) #x0000000a)`).
fn value_of(answer: &str, name: &str) -> Option<u32> {
    let flat = answer.split_whitespace().collect::<Vec<_>>().join(" ");
    [
        format!("({name} #x"),
        format!("(define-fun {name} () (_ BitVec 32) #x"),
    ]
    .iter()
    .find_map(|p| {
        let at = flat.find(p.as_str())? + p.len();
        u32::from_str_radix(flat.get(at..at + 8)?, 16).ok()
    })
}

/// Every value and model the client got after a sat satisfies its query; the number
/// checked.
fn check_values(out: &str, qs: &[Query]) -> usize {
    // The answers in order: one line per check-sat, then the query's get-value and
    // get-model (each possibly over several lines, up to its closing parenthesis).
    let mut lines = out.lines();
    let mut next_answer = || next_response(&mut lines);
    let mut checked = 0;
    for (i, q) in qs.iter().enumerate() {
        let verdict = next_answer();
        let sat = verdict.trim() == "sat";
        let mut asked = Vec::new();
        if q.values.is_some() {
            asked.push(next_answer());
        }
        if q.model {
            asked.push(next_answer());
        }
        if !sat {
            continue;
        }
        for a in asked {
            let (x, y) = (value_of(&a, "x"), value_of(&a, "y"));
            let (Some(x), Some(y)) = (x, y) else {
                panic!("query {i}: no values of x and y in {a:?}")
            };
            assert!(
                x.wrapping_mul(3) == q.k && x < 256 && 0 < y && y < x,
                "query {i}: x = {x}, y = {y} do not satisfy 3x = {} and 0 < y < x < 256",
                q.k
            );
            if let (Some(kw), Some(w)) = (q.kw, value_of(&a, "w")) {
                assert!(
                    w.wrapping_mul(5) == kw && w < 256,
                    "query {i}: w = {w} does not satisfy 5w = {kw}"
                );
            }
            checked += 1;
        }
    }
    checked
}

/// z3's own answers to `script`.
fn z3_answers(script: &str) -> String {
    run_prog("z3", &["-in"], script.as_bytes(), T).stdout_str()
}

/// smtproxy's cache engine in front of `solver` on `script`. Named, not governed: these
/// tests are about the engine's model reads, and by cost the governor may pass a session
/// whose reads are dear through to the solver (a 24-query session with an objective after
/// it went to z3 at its reset, and z3 answered the objective itself).
fn through(solver: &str, script: &str) -> common::Out {
    let out = run(
        &[
            "--strategy",
            "hybrid",
            "--solver",
            solver,
            "--cache",
            "none",
            "--stats",
            "-in",
        ],
        script.as_bytes(),
        T,
    );
    out.assert_no_panic_no_hang(solver);
    out
}

/// The slow-model z3 (`common::slow_model_z3`, reads held `DELAY_MS`) as a `--solver`
/// command, in a directory that lives as long as the guard returned with it.
fn dear_z3() -> (tempfile::TempDir, String) {
    require("z3");
    require("python3");
    let dir = tempfile::tempdir().unwrap();
    let slow = slow_model_z3(dir.path(), DELAY_MS);
    let slow = slow.to_str().expect("a UTF-8 path").to_string();
    (dir, slow)
}

#[test]
fn dear_models_are_read_only_when_asked_for() {
    let (_dir, slow) = dear_z3();
    let qs = queries(48);
    let s = script(&qs);
    let z3_out = z3_answers(&s);
    let z3 = check_sat_answers(&z3_out);
    assert!(z3.contains(&"sat".into()) && z3.contains(&"unsat".into()));
    // z3 refuses get-model after unsat; so must smtproxy, and nothing else.
    let errors = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("(error"))
            .map(str::to_string)
            .collect()
    };

    let out = through(&slow, &s);
    let err = out.stderr_str();
    let stdout = out.stdout_str();
    assert_eq!(check_sat_answers(&stdout), z3, "{err}");
    assert_eq!(errors(&stdout), errors(&z3_out), "{err}");
    let checked = check_values(&stdout, &qs);
    let asked = qs
        .iter()
        .zip(&z3)
        .filter(|(_, a)| *a == "sat")
        .map(|(q, _)| usize::from(q.values.is_some()) + usize::from(q.model))
        .sum::<usize>();
    assert_eq!(checked, asked);
    let unread = field(&summary(&err), "models_unread");
    assert!(unread >= 10, "models_unread {unread}: {err}");

    // Where reads are cheap every model is read.
    let out = through("z3", &s);
    let err = out.stderr_str();
    assert_eq!(check_sat_answers(&out.stdout_str()), z3, "{err}");
    assert_eq!(check_values(&out.stdout_str(), &qs), asked);
    assert_eq!(field(&summary(&err), "models_unread"), 0, "{err}");
}

/// An objective's search reads the objective's value in each sat's model: after models
/// have been left unread, it still searches, and ends at z3's optimum, with z3's answers.
#[test]
fn an_objective_after_unread_models_finds_z3s_optimum() {
    let (_dir, slow) = dear_z3();
    let qs: Vec<Query> = queries(24)
        .into_iter()
        .map(|q| Query {
            values: None,
            model: false,
            ..q
        })
        .collect();
    let mut s = script(&qs);
    s.push_str(
        "(reset)\n(set-option :produce-models true)\n(set-logic QF_BV)\n(declare-const x (_ BitVec 32))\n(assert (bvuge (bvmul x #x00000003) #x00000031))\n(assert (bvult x #x00000100))\n(minimize x)\n(check-sat)\n(get-value (x))\n",
    );
    let z3 = z3_answers(&s);
    assert!(z3.contains("((x #x00000011))"), "{z3}");
    let out = through(&slow, &s);
    let err = out.stderr_str();
    assert_eq!(out.stdout_str(), z3, "{err}");
    let sum = summary(&err);
    assert!(field(&sum, "models_unread") > 0, "{err}");
    // Answered by the search (which gives up, to the solver's optimiser, without values).
    assert_eq!(field(&sum, "optimisations"), 1, "{err}");
    assert_eq!(field(&sum, "fallbacks_passthrough"), 0, "{err}");
}

/// A model left unread and then read because the client asked for values is kept as a
/// model read at once would be: the same queries asked again are answered without the
/// solver.
#[test]
fn a_model_read_when_asked_answers_the_query_again() {
    let (_dir, slow) = dear_z3();
    let round: Vec<Query> = (0..20)
        .map(|i| Query {
            k: 3 * (i + 2),
            kw: None,
            values: Some("(get-value (x y))"),
            model: false,
        })
        .collect();
    let qs: Vec<Query> = round.iter().chain(&round).copied().collect();
    let s = script(&qs);
    let z3 = check_sat_answers(&z3_answers(&s));
    assert!(z3.iter().all(|a| a == "sat"));
    let out = through(&slow, &s);
    let err = out.stderr_str();
    assert_eq!(check_sat_answers(&out.stdout_str()), z3, "{err}");
    assert_eq!(check_values(&out.stdout_str(), &qs), qs.len());
    let sum = summary(&err);
    assert!(field(&sum, "models_unread") >= 10, "{err}");
    // The second round is answered from what the first kept, the unread models among it.
    assert_eq!(field(&sum, "cache_hits"), 20, "{err}");
}
