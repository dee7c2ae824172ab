//! The fresh-context way to solve a query: `(reset)`, the client's options and logic, its
//! definitions, the query's declarations and assertions, and the check, in one batch.
//!
//! Invariants: the context holds exactly the query (nothing of an earlier one survives the
//! reset); a solver that dies is restarted and asked once more; a rejected query or a
//! deadline is `unknown`, never stored by anyone.

use super::backend::SolverHandle;
use super::miss::MissPath;
use super::stats::Stats;
use super::vocab::{check_text, declare_text, response_answer, split_values, Answer, Query};
use crate::driver::{DriverError, Response};
use crate::smt2::printer::{backend_name, print_term, BackendNames, Names};
use crate::term::{TermId, TermStore};

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

/// A component's get-value command: `(get-value (t1 t2 ...))` in `names`.
pub fn get_value_text(store: &TermStore, terms: &[TermId], names: &dyn Names) -> String {
    let mut cmd = String::from("(get-value (");
    for (i, &t) in terms.iter().enumerate() {
        if i > 0 {
            cmd.push(' ');
        }
        cmd.push_str(&print_term(store, t, names));
    }
    cmd.push_str("))");
    cmd
}

/// The values of `terms` from the process `h` in generation `generation` (see
/// `MissPath::values`).
pub fn values_in(
    h: &mut SolverHandle,
    generation: u64,
    store: &TermStore,
    terms: &[TermId],
    names: &dyn Names,
) -> Result<Option<Vec<String>>, DriverError> {
    let cmd = get_value_text(store, terms, names);
    match h.cmd_in_generation(generation, &cmd)? {
        Response::Other(text) => Ok(split_values(&text, terms.len()).ok()),
        _ => Ok(None),
    }
}

/// The `cache` strategy's miss path: every component in a fresh context of one backend.
pub struct FreshMiss<'a> {
    pub backend: &'a mut SolverHandle,
}

impl MissPath for FreshMiss<'_> {
    type Ahead = std::convert::Infallible;

    fn begin(&mut self, _: &mut TermStore, _: &Query, _: &mut Stats) -> Option<Self::Ahead> {
        None
    }

    fn drop_ahead(&mut self, ahead: Self::Ahead) {
        match ahead {}
    }

    fn solves_ahead(&self) -> bool {
        false
    }

    fn solve(
        &mut self,
        store: &mut TermStore,
        q: &Query,
        _: Option<Self::Ahead>,
        stats: &mut Stats,
    ) -> Result<Answer, DriverError> {
        fresh_check(self.backend, store, q, stats)
    }

    fn values(
        &mut self,
        store: &TermStore,
        terms: &[TermId],
    ) -> Result<Option<Vec<String>>, DriverError> {
        let generation = self.backend.generation;
        values_in(self.backend, generation, store, terms, &BackendNames)
    }

    fn unsat_core(&mut self) -> Option<Vec<TermId>> {
        None
    }

    fn stop_cores(&mut self) {}
}
