//! Answers as the client expects them from the solver it replaced. `Dialect` captures the
//! differences between solvers in what smtproxy has to produce itself (answers that do not
//! come from the backend verbatim): error text positions, the layout of get-value and
//! get-model answers, and how values print (z3 writes a bit-vector in hex when its width
//! is a multiple of 4, cvc5 and yices always in binary; z3 writes a fraction `(/ 1.0 2.0)`,
//! cvc5 and yices `(/ 1 2)`).

use super::echo;
use super::lex::{string_body, string_literal};
use super::printer::ValueNames;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Z3,
    Cvc5,
    Yices,
}

impl Dialect {
    /// How this solver prints values: the client's names, its bit-vector literals and
    /// fractions.
    pub fn value_names(self) -> ValueNames {
        ValueNames {
            binary_bv: self != Dialect::Z3,
            integer_fractions: self != Dialect::Z3,
        }
    }
}

/// `(error "msg")` with the message escaped.
pub fn error(msg: &str) -> String {
    let mut s = String::from("(error ");
    string_literal(msg, &mut s);
    s.push(')');
    s
}

/// An error about a command at a position, worded as z3 words it (`line L column C: msg`).
pub fn error_at(line: usize, col: usize, msg: &str) -> String {
    let mut s = String::with_capacity(msg.len() + 40);
    // Line and column are digits: nothing in them needs escaping.
    s.push_str("(error \"line ");
    push_decimal(&mut s, line);
    s.push_str(" column ");
    push_decimal(&mut s, col);
    s.push_str(": ");
    string_body(msg, &mut s);
    s.push_str("\")");
    s
}

/// `n` in decimal (a KLEE query's sixteen get-values after unsat are sixteen errors;
/// `write!` was most of their cost).
fn push_decimal(s: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // ASCII digits only.
    s.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

/// `((t1 v1) (t2 v2))` from (term text, value text) pairs, one pair per line as z3 writes
/// it, on one line as cvc5 does. yices re-prints the terms from its tokens and lays the
/// whole answer out with its pretty printer ([`echo::yices_get_value`]): for it, the term
/// texts are the client's own.
pub fn get_value(dialect: Dialect, pairs: &[(&str, &str)]) -> String {
    let sep = match dialect {
        Dialect::Cvc5 => " ",
        Dialect::Z3 => "\n ",
        Dialect::Yices => return echo::yices_get_value(pairs),
    };
    let len: usize = pairs.iter().map(|(t, v)| t.len() + v.len() + 5).sum();
    let mut s = String::with_capacity(len + 2);
    s.push('(');
    for (i, (t, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        s.push('(');
        s.push_str(t);
        s.push(' ');
        s.push_str(v);
        s.push(')');
    }
    s.push(')');
    s
}

/// A model from `(name, params text, sort text, value text)` entries, laid out as the
/// dialect's solver lays it out.
pub fn model(dialect: Dialect, entries: &[(String, String, String, String)]) -> String {
    let entries: Vec<String> = entries
        .iter()
        .map(|(name, params, sort, value)| match dialect {
            Dialect::Z3 => format!("(define-fun {name} ({params}) {sort}\n    {value})"),
            Dialect::Cvc5 | Dialect::Yices => {
                format!("(define-fun {name} ({params}) {sort} {value})")
            }
        })
        .collect();
    model_of_entries(dialect, &entries)
}

/// A get-model answer from its entries' texts (`(define-fun ...)`), laid out as the
/// dialect's solver lays it out: z3 `(\n  E1\n  E2\n)`, cvc5 `(\nE1\nE2\n)`, yices (with
/// `--smt2-model-format`) `(model\n  E1\n  E2)`.
pub fn model_of_entries(dialect: Dialect, entries: &[String]) -> String {
    let mut s = String::new();
    match dialect {
        Dialect::Z3 | Dialect::Cvc5 => {
            let indent = if dialect == Dialect::Z3 { "  " } else { "" };
            s.push_str("(\n");
            for e in entries {
                s.push_str(indent);
                s.push_str(e);
                s.push('\n');
            }
        }
        Dialect::Yices => {
            s.push_str("(model");
            for e in entries {
                s.push_str("\n  ");
                s.push_str(e);
            }
        }
    }
    s.push(')');
    s
}

/// A value as yices prints it without `--smt2-model-format` (which smtproxy's own yices
/// runs with): integral reals without their `.0` (`2`, `(- 3)`).
pub fn bare_integral_reals(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(i) = rest.find(".0") {
        let (head, tail) = rest.split_at(i);
        let after = &tail[2..];
        let whole = &head[head.trim_end_matches(|c: char| c.is_ascii_digit()).len()..];
        let ends = after
            .chars()
            .next()
            .is_none_or(|c| c == ')' || c.is_whitespace());
        out.push_str(head);
        if whole.is_empty() || !ends {
            out.push_str(".0");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A value of a numeral as cvc5 prints it under a logic of reals without integers, where
/// it reads every numeral as a real (`smt2::echo`): an integer `7` or `(- 3)` (what
/// smtproxy's evaluator gives a numeral it read as an integer) as `7.0`, `(- 3.0)`; any
/// other value as it is.
pub fn cvc5_numeral_as_real(v: &str) -> std::borrow::Cow<'_, str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if digits(v) {
        return format!("{v}.0").into();
    }
    match v.strip_prefix("(- ").and_then(|r| r.strip_suffix(')')) {
        Some(n) if digits(n) => format!("(- {n}.0)").into(),
        _ => v.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cvc5_numerals_under_reals() {
        assert_eq!(cvc5_numeral_as_real("7"), "7.0");
        assert_eq!(cvc5_numeral_as_real("(- 3)"), "(- 3.0)");
        for same in [
            "7.0",
            "(/ 1 2)",
            "(- (/ 1 2))",
            "(- x)",
            "true",
            "#b01",
            "(- 3.5)",
        ] {
            assert_eq!(cvc5_numeral_as_real(same), same);
        }
    }

    #[test]
    fn error_escapes_quotes() {
        assert_eq!(error("a \"b\""), "(error \"a \"\"b\"\"\")");
        assert_eq!(error_at(3, 7, "x"), "(error \"line 3 column 7: x\")");
        assert_eq!(
            error_at(1, 2, "\"q\" and \"\""),
            "(error \"line 1 column 2: \"\"q\"\" and \"\"\"\"\")"
        );
        assert_eq!(error(""), "(error \"\")");
        for (l, c) in [(0, 0), (10, 9), (1234567, 100), (usize::MAX, 1)] {
            assert_eq!(
                error_at(l, c, "m"),
                format!("(error \"line {l} column {c}: m\")")
            );
        }
        assert_eq!(error("\""), "(error \"\"\"\")");
    }
    #[test]
    fn values() {
        let pairs = [("x", "1"), ("y", "#b0")];
        assert_eq!(get_value(Dialect::Z3, &pairs), "((x 1)\n (y #b0))");
        assert_eq!(get_value(Dialect::Yices, &pairs), "((x 1)\n (y #b0))");
        assert_eq!(get_value(Dialect::Cvc5, &pairs), "((x 1) (y #b0))");
    }
    /// As z3 4.15, cvc5 1.0 and yices 2.6 (`--smt2-model-format`) print these models.
    #[test]
    fn models_as_each_solver_lays_them_out() {
        let e = |n: &str, v: &str| {
            (
                n.to_string(),
                String::new(),
                "(_ BitVec 3)".into(),
                v.into(),
            )
        };
        let two = [e("x", "#b101"), e("y", "#b000")];
        assert_eq!(
            model(Dialect::Z3, &two),
            "(\n  (define-fun x () (_ BitVec 3)\n    #b101)\n  (define-fun y () (_ BitVec 3)\n    #b000)\n)"
        );
        assert_eq!(
            model(Dialect::Cvc5, &two),
            "(\n(define-fun x () (_ BitVec 3) #b101)\n(define-fun y () (_ BitVec 3) #b000)\n)"
        );
        assert_eq!(
            model(Dialect::Yices, &two),
            "(model\n  (define-fun x () (_ BitVec 3) #b101)\n  (define-fun y () (_ BitVec 3) #b000))"
        );
        assert_eq!(model(Dialect::Z3, &[]), "(\n)");
        assert_eq!(model(Dialect::Cvc5, &[]), "(\n)");
        assert_eq!(model(Dialect::Yices, &[]), "(model)");
    }

    #[test]
    fn integral_reals_lose_their_point_zero_only() {
        assert_eq!(bare_integral_reals("0.0"), "0");
        assert_eq!(bare_integral_reals("(- 3.0)"), "(- 3)");
        assert_eq!(bare_integral_reals("(/ 7 2)"), "(/ 7 2)");
        assert_eq!(bare_integral_reals("1.05"), "1.05");
        assert_eq!(bare_integral_reals("2.00"), "2.00");
        assert_eq!(bare_integral_reals("#b0101"), "#b0101");
        assert_eq!(bare_integral_reals("(store a 10.0 2.0)"), "(store a 10 2)");
    }
}
