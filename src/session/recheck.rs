//! The check-sat a fall-back to passthrough runs again, so that the client can still read
//! the model of its last `sat`: the solver the session falls back to is a new one, given
//! the client's state but not that check's model, and a `get-value` smtproxy cannot
//! evaluate itself (an operator it does not model, a function asked for as a whole) is
//! what falls back.
//!
//! Invariant: the model the client reads after the fall-back is the one it read before.
//! Where the client has read no value since the check, the check runs again as it was
//! (the solver's model is the first the client sees). Where it has, the check runs under
//! assumptions that pin every constant of the model it read to the value it read (z3 and
//! cvc5 take any Boolean term in `check-sat-assuming`), and only where every constant can
//! be pinned: a value that names something only the first solver knows (z3's
//! `(_ as-array k!0)`, yices' `@fun_5`, a `lambda`), a function with arguments, a check
//! that had assumptions of its own, or yices (which takes only literals there): no check
//! is run, and the client's `get-value` gets the solver's own error (no model), never a
//! value of another model.

use crate::smt2::lexer::Sexps;
use crate::smt2::response::Dialect;

/// The command the fall-back's solver runs after the client's state, so that the client's
/// next model-reading command reads the model of `check` (the text of the client's last
/// check-sat, answered sat); `model`: the model the client has read from since (the
/// text of a `get-model` in `dialect`), None when it has read nothing. None when no such
/// command keeps the model the client read.
pub fn recheck(dialect: Dialect, check: &str, model: Option<&str>) -> Option<String> {
    let Some(model) = model else {
        return Some(check.to_string());
    };
    let plain = crate::smt2::lex::command_head(check) == Some("check-sat");
    if !plain || dialect == Dialect::Yices {
        return None;
    }
    let pins = pins(model)?;
    Some(format!("(check-sat-assuming ({}))", pins.join(" ")))
}

/// `(= NAME VALUE)` for every constant of a printed model (its `define-fun`s without
/// arguments), or None where one cannot be pinned (see the module doc).
fn pins(model: &str) -> Option<Vec<String>> {
    let sx = Sexps::parse(model).ok()?;
    if sx.roots.len() != 1 {
        return None;
    }
    let defs = super::model_text::entries(&sx)?;
    let mut out = Vec::with_capacity(defs.len());
    for &d in defs {
        let parts = sx.list(d)?;
        let &[head, name, args, _sort, value] = parts else {
            return None;
        };
        if !sx.is_symbol(head, "define-fun") || !sx.list(args)?.is_empty() {
            return None;
        }
        let value = sx.flat_source(value);
        let foreign = ["as-array", "!", "@", "lambda"];
        if foreign.iter().any(|f| value.contains(f)) {
            return None;
        }
        out.push(format!("(= {} {value})", sx.source(name)));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing read since the check: it runs again as it was.
    #[test]
    fn a_model_not_read_yet_is_checked_again_as_it_was() {
        for d in [Dialect::Z3, Dialect::Cvc5, Dialect::Yices] {
            assert_eq!(
                recheck(d, "(check-sat)", None).as_deref(),
                Some("(check-sat)")
            );
        }
    }

    /// A model read: every constant pinned to the value read (z3's and cvc5's layouts).
    #[test]
    fn a_model_read_is_pinned() {
        let z3 = "(\n  (define-fun x () (_ BitVec 8)\n    #x06)\n  (define-fun r () Real\n    (/ 1.0 2.0))\n)";
        assert_eq!(
            recheck(Dialect::Z3, "(check-sat)", Some(z3)).as_deref(),
            Some("(check-sat-assuming ((= x #x06) (= r (/ 1.0 2.0))))")
        );
        let cvc5 = "(\n(define-fun |a b| () Int (- 3))\n)";
        assert_eq!(
            recheck(Dialect::Cvc5, "(check-sat)", Some(cvc5)).as_deref(),
            Some("(check-sat-assuming ((= |a b| (- 3))))")
        );
        let old_z3 = "(model (define-fun p () Bool true))";
        assert_eq!(
            recheck(Dialect::Z3, "( check-sat )", Some(old_z3)).as_deref(),
            Some("(check-sat-assuming ((= p true)))")
        );
    }

    /// No check where a constant cannot be pinned, the check had assumptions, or the
    /// solver is yices.
    #[test]
    fn a_model_that_cannot_be_pinned_is_not_checked_again() {
        let m = |v: &str| format!("((define-fun a () (Array Int Int) {v}))");
        for v in ["(_ as-array k!0)", "@fun_5", "(lambda ((x Int)) 0)"] {
            assert_eq!(
                recheck(Dialect::Z3, "(check-sat)", Some(&m(v))),
                None,
                "{v}"
            );
        }
        let f = "((define-fun h ((x Real)) Real 0.0))";
        assert_eq!(recheck(Dialect::Cvc5, "(check-sat)", Some(f)), None);
        let x = "((define-fun x () Int 1))";
        assert_eq!(
            recheck(Dialect::Z3, "(check-sat-assuming (p))", Some(x)),
            None
        );
        assert_eq!(recheck(Dialect::Yices, "(check-sat)", Some(x)), None);
        assert_eq!(recheck(Dialect::Z3, "(check-sat)", Some("(oops")), None);
    }
}
