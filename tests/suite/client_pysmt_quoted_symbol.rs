//! Found by running pySMT's test suite through smtproxy (scripts/test-pysmt.sh): pySMT prints
//! the symbol `|#somesolverskeepthe||` as `|\|#somesolverskeepthe\|\||`, which is not valid
//! SMT-LIB (`|` cannot occur in a quoted symbol). z3 answers each line at once (errors for
//! the bad characters, then the remaining commands); smtproxy must not wait for more input
//! forever, because an interactive client waits for the answer before sending more.

use crate::common;

use common::Session;
use std::io::Write;
use std::time::Duration;

#[test]
fn bad_quoted_symbol_does_not_hang_an_interactive_client() {
    common::require("z3");
    let mut s = Session::start(&["-in", "-smt2", "--solver", "z3", "--cache", "none"]);
    // stdin stays open, as pySMT's does.
    let stdin = s.stdin.as_mut().expect("stdin");
    stdin
        .write_all(b"(set-option :print-success true)\n(declare-fun |\\|#somesolverskeepthe\\|\\|| () Bool)\n(check-sat)\n")
        .unwrap();
    stdin.flush().unwrap();
    let mut got = Vec::new();
    while let Some(l) = s.line(Duration::from_secs(5)) {
        let done = l == "sat" || l == "unsat" || l == "unknown";
        got.push(l);
        if done {
            break;
        }
    }
    drop(s);
    assert_eq!(
        got.first().map(String::as_str),
        Some("success"),
        "answers: {got:?}"
    );
    assert!(
        got.iter().skip(1).any(|l| l.starts_with("(error")),
        "no answer (error) for the declare-fun with a bad quoted symbol within 5 s; answers so far: {got:?}"
    );
    assert!(
        got.last().map(|l| l == "sat").unwrap_or(false),
        "(check-sat) after it was not answered: {got:?}"
    );
}
