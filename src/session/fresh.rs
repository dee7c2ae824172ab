//! The fresh-context way to solve a query: `(reset)`, the client's options and logic, its
//! definitions, the query's declarations and assertions, and the check, in one batch.
//!
//! Invariants: the context holds exactly the query (nothing of an earlier one survives the
//! reset); a solver that dies is restarted and asked once more; a rejected query or a
//! deadline is `unknown`, never stored by anyone.

use super::backend::SolverHandle;
use super::stats::Stats;
use super::vocab::{check_text, declare_text, response_answer, Answer, Query};
use crate::driver::DriverError;
use crate::smt2::printer::{backend_name, print_term, BackendNames};
use crate::term::TermStore;

/// Solve the query in a clean context: `(reset)`, options, logic, definitions,
/// declarations, assertions, check. A solver that dies is restarted once.
pub fn fresh_check(
    h: &mut SolverHandle,
    store: &TermStore,
    q: &Query,
    stats: &mut Stats,
) -> Result<Answer, DriverError> {
    let (cmds, check) = fresh_script(store, q);

    for attempt in 0..2 {
        match h.batch(&cmds) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                stats.note(format!("backend rejected the query: {e}"));
                return Ok(Answer::Unknown);
            }
            Err(DriverError::Timeout { .. }) => {
                stats.timeouts += 1;
                return Ok(Answer::Unknown);
            }
            Err(DriverError::Died { .. } | DriverError::Io(_)) if attempt == 0 => continue,
            Err(e) => return Err(e),
        }
        stats.solver_checks += 1;
        match h.check(&check) {
            Ok(r) => return Ok(response_answer(&r)),
            Err(DriverError::Timeout { .. }) => {
                stats.timeouts += 1;
                return Ok(Answer::Unknown);
            }
            Err(DriverError::Died { .. } | DriverError::Io(_)) if attempt == 0 => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(Answer::Unknown)
}

/// The commands that pose `q` in a fresh context (from `(reset)` on), and its check.
pub fn fresh_script(store: &TermStore, q: &Query) -> (Vec<String>, String) {
    let mut cmds: Vec<String> = Vec::with_capacity(q.decls.len() + q.assertions.len() + 4);
    cmds.push("(reset)".into());
    cmds.push("(set-option :produce-models true)".into());
    cmds.extend(q.preamble.iter().cloned());
    cmds.extend(q.defs.iter().cloned());
    for d in q.decls {
        cmds.push(declare_text(store, d, &backend_name(&d.name)));
    }
    for &a in q.assertions {
        let mut s = String::from("(assert ");
        s.push_str(&print_term(store, a, &BackendNames));
        s.push(')');
        cmds.push(s);
    }
    (cmds, check_text(store, q.assumptions, &BackendNames))
}
