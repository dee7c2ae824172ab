//! Answers as the client expects them from the solver it replaced. `Dialect` captures the
//! differences between solvers in what smtproxy has to produce itself (answers that do not
//! come from the backend verbatim): error text positions, model layout.

use super::printer::{string_body, string_literal};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Z3,
    Cvc5,
    Yices,
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

/// `((t1 v1) (t2 v2))` from (client term text, value text) pairs.
pub fn get_value(pairs: &[(String, String)]) -> String {
    let mut s = String::from("(");
    for (i, (t, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push_str("\n ");
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
    let mut s = String::from("(\n");
    for (name, params, sort, value) in entries {
        match dialect {
            Dialect::Z3 => {
                s.push_str(&format!(
                    "  (define-fun {name} ({params}) {sort}\n    {value})\n"
                ));
            }
            Dialect::Cvc5 | Dialect::Yices => {
                s.push_str(&format!("(define-fun {name} ({params}) {sort} {value})\n"));
            }
        }
    }
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(
            get_value(&[("x".into(), "1".into()), ("y".into(), "#x0".into())]),
            "((x 1)\n (y #x0))"
        );
    }
}
