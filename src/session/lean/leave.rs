//! When a session that fell back to passthrough may leave it: at a `(reset)`, or at a
//! `(pop n)` that takes away every level holding what smtproxy did not model. Pure
//! decisions; the engine switches modes.
//!
//! Invariants: a session leaves only when nothing it keeps is unmodelled: no option
//! smtproxy does not model survives (z3 keeps every option across a reset, options outlive
//! a pop), no declaration outlives its level (`:global-declarations` keeps them at a pop),
//! and no level left after a pop holds state sent to the solver as text only.

use crate::smt2::response::Dialect;

/// Whether `(set-option K V)` asks for what smtproxy does not model (unsat cores, proofs,
/// assignments, interpolants): such a session is passed through to the solver.
pub fn unmodelled_option(k: &str, v: &str) -> bool {
    matches!(v, "true" | "|true|")
        && matches!(
            k,
            ":produce-unsat-cores"
                | ":produce-proofs"
                | ":produce-unsat-assumptions"
                | ":produce-assignments"
                | ":produce-interpolants"
        )
}

fn any_unmodelled(options: &[(String, String)]) -> bool {
    options.iter().any(|(k, v)| unmodelled_option(k, v))
}

/// After a `(reset)` with nothing in flight: whether what sent the session to passthrough
/// is gone. `options`: the client's options before the reset (z3 keeps them all).
pub fn leaves_at_reset(dialect: Dialect, options: &[(String, String)]) -> bool {
    !(dialect == Dialect::Z3 && any_unmodelled(options))
}

/// A `(pop n)` with nothing in flight, at client depth `depth`: whether the levels left
/// hold only modelled state. `n` reads the pop's argument (`None` when unreadable), only
/// once the options allow leaving. `unmodelled_from`: the lowest level that holds state
/// smtproxy did not model.
pub fn leaves_at_pop(
    n: impl FnOnce() -> Option<usize>,
    depth: usize,
    global_declarations: bool,
    options: &[(String, String)],
    unmodelled_from: Option<usize>,
) -> bool {
    if global_declarations || any_unmodelled(options) {
        return false;
    }
    let Some(n) = n() else {
        return false;
    };
    if n == 0 || n > depth {
        return false;
    }
    let after = depth - n;
    unmodelled_from.is_none_or(|from| after < from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kv: &[(&str, &str)]) -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_reset_leaves_unless_z3_keeps_an_unmodelled_option() {
        let cores = opts(&[(":produce-unsat-cores", "true")]);
        assert!(!leaves_at_reset(Dialect::Z3, &cores));
        assert!(leaves_at_reset(Dialect::Cvc5, &cores));
        assert!(leaves_at_reset(
            Dialect::Z3,
            &opts(&[(":produce-models", "true")])
        ));
    }

    #[test]
    fn a_pop_leaves_below_the_unmodelled_level() {
        assert!(leaves_at_pop(|| Some(1), 2, false, &[], Some(2)));
        assert!(!leaves_at_pop(|| Some(1), 3, false, &[], Some(2)));
        assert!(leaves_at_pop(|| Some(2), 2, false, &[], None));
        assert!(!leaves_at_pop(|| Some(3), 2, false, &[], Some(0)));
        assert!(!leaves_at_pop(|| Some(0), 2, false, &[], Some(1)));
        assert!(!leaves_at_pop(|| None, 2, false, &[], Some(1)));
        assert!(!leaves_at_pop(|| Some(1), 2, true, &[], Some(2)));
        let proofs = opts(&[(":produce-proofs", "true")]);
        assert!(!leaves_at_pop(|| Some(1), 2, false, &proofs, Some(2)));
    }
}
