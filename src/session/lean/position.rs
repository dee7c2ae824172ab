//! Positions in solver error messages (`line L column C` from z3, `at line L, column C`
//! from yices, `<stdin>:L.C:` from cvc5): read from a message, and moved from where the
//! solver read a command to where the client wrote it. Pure functions.
//!
//! Invariants:
//! * A command normally lands in the solver's input at the client's own line and column
//!   (`frame::lead_in`), so its errors need no change. After a replay, or a marker, that
//!   place may be behind the solver's input; the command then starts on a line of its
//!   own, and `relocate` gives its errors the position they would have had where the
//!   client wrote it: the same offset from the command's first byte, counted as the
//!   solver counts (z3's columns are 1-based on line 1 and 0-based on later lines;
//!   yices' are 1-based on every line).
//! * A message whose position is not of that form is left as it is.

use crate::smt2::response::Dialect;
use std::ops::Range;

/// A position in a message, with the byte ranges of its line and column numbers.
struct Spot {
    line: usize,
    col: usize,
    line_digits: Range<usize>,
    col_digits: Range<usize>,
}

fn spot(msg: &str) -> Option<Spot> {
    let digits = |from: usize| -> Option<(usize, Range<usize>)> {
        let d = msg[from..].bytes().take_while(u8::is_ascii_digit).count();
        let r = from..from + d;
        Some((msg.get(r.clone())?.parse().ok()?, r))
    };
    let i = msg.find("line ")? + 5;
    let (line, line_digits) = digits(i)?;
    let rest = &msg[line_digits.end..];
    let j = rest.find("column ")?;
    if j > 3 {
        return None;
    }
    let (col, col_digits) = digits(line_digits.end + j + 7)?;
    Some(Spot {
        line,
        col,
        line_digits,
        col_digits,
    })
}

/// `line L column C` (z3) or `at line L, column C` (yices) in an error message.
pub fn error_position(msg: &str) -> Option<(usize, usize)> {
    spot(msg).map(|s| (s.line, s.col))
}

/// The 1-based column of the solver's printed column `col` on `line`.
fn true_col(dialect: Dialect, line: usize, col: usize) -> usize {
    if dialect == Dialect::Z3 && line > 1 {
        col + 1
    } else {
        col
    }
}

/// The column the solver prints for the 1-based column `col` on `line`.
fn printed_col(dialect: Dialect, line: usize, col: usize) -> usize {
    if dialect == Dialect::Z3 && line > 1 {
        col.saturating_sub(1)
    } else {
        col
    }
}

/// The solver's error `msg` about a command that landed at `start` in the solver's input
/// (line, 1-based column), with its position moved to where the client wrote that command
/// (`at`). None when nothing changes (same place, or no position in the message).
pub fn relocate(
    msg: &str,
    dialect: Dialect,
    start: (usize, usize),
    at: (usize, usize),
) -> Option<String> {
    if start == at {
        return None;
    }
    let s = spot(msg)?;
    let col = true_col(dialect, s.line, s.col);
    let (line, col) = match s.line.checked_sub(start.0)? {
        // On the command's first line: the offset from its first byte.
        0 => (at.0, (col + at.1).checked_sub(start.1)?),
        // On a later line of the command: the command's own text, so the same column.
        d => (at.0 + d, col),
    };
    let col = printed_col(dialect, line, col);
    let mut out = String::with_capacity(msg.len() + 8);
    out.push_str(&msg[..s.line_digits.start]);
    out.push_str(&line.to_string());
    out.push_str(&msg[s.line_digits.end..s.col_digits.start]);
    out.push_str(&col.to_string());
    out.push_str(&msg[s.col_digits.end..]);
    Some(out)
}

/// A cvc5 backend's parse error about a command it read at the start of line `start`
/// (1-based) of its input, moved to where the client wrote the command (`line`, `col`,
/// 1-based): cvc5 numbers lines from 0 and names no position at all on its first line.
/// An error on the command's first line (or with `start` 0: not known, taken as there)
/// moves by the command's column; on a later line of the command, only its line moves.
/// (The input line cvc5 quotes is the backend's: the command's line alone.)
pub fn cvc5_position(msg: &str, start: usize, line: usize, col: usize) -> String {
    const AT: &str = "<stdin>:";
    let Some(i) = msg.find(AT) else {
        return msg.to_string();
    };
    let rest = &msg[i + AT.len()..];
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let l = digits(rest);
    let Some(after_dot) = rest[l..].strip_prefix('.') else {
        return msg.to_string();
    };
    let c = digits(after_dot);
    let Some(tail) = after_dot[c..].strip_prefix(": ") else {
        return msg.to_string();
    };
    let Ok(their_col) = after_dot[..c].parse::<usize>() else {
        return msg.to_string();
    };
    let head = &msg[..i];
    let down = match start {
        0 => 0,
        _ => rest[..l]
            .parse::<usize>()
            .map_or(0, |their_line| (their_line + 1).saturating_sub(start)),
    };
    match (line.saturating_sub(1) + down, down) {
        (0, _) => format!("{head}{tail}"),
        (l, 0) => format!(
            "{head}{AT}{l}.{}: {tail}",
            col + their_col.saturating_sub(1)
        ),
        (l, _) => format!("{head}{AT}{l}.{their_col}: {tail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cvc5_positions_move_to_the_clients_line() {
        let m = "Parse Error: <stdin>:2.14: Illegal argument detected";
        assert_eq!(
            cvc5_position(m, 0, 2, 1),
            "Parse Error: <stdin>:1.14: Illegal argument detected"
        );
        assert_eq!(
            cvc5_position(m, 0, 3, 5),
            "Parse Error: <stdin>:2.18: Illegal argument detected"
        );
        // cvc5 names no position on its first line.
        assert_eq!(
            cvc5_position(m, 0, 1, 1),
            "Parse Error: Illegal argument detected"
        );
        assert_eq!(cvc5_position("no position", 0, 3, 1), "no position");
        // A command the backend read from its line 5 (1-based; cvc5 says 4): an error on
        // its first line moves by the client's column, on its second only by line.
        let m = "Parse Error: <stdin>:4.9: Unexpected token";
        assert_eq!(
            cvc5_position(m, 5, 3, 10),
            "Parse Error: <stdin>:2.18: Unexpected token"
        );
        let m = "Parse Error: <stdin>:5.3: Unexpected token";
        assert_eq!(
            cvc5_position(m, 5, 3, 10),
            "Parse Error: <stdin>:3.3: Unexpected token"
        );
    }

    #[test]
    fn positions_in_error_messages() {
        assert_eq!(
            error_position("(error \"line 3 column 12: unknown constant y\")"),
            Some((3, 12))
        );
        assert_eq!(
            error_position("(error \"at line 6, column 15: invalid token #\")"),
            Some((6, 15))
        );
        assert_eq!(error_position("(error \"the logic is already set\")"), None);
        assert_eq!(
            error_position("(error \"line 3 of the file, then column 5\")"),
            None
        );
    }

    /// z3 and yices read `(assert y)` at the start of line 2 and report `y`; the client
    /// had the command at line 1, column 55 (z3 prints 1-based columns on line 1, 0-based
    /// after it), or at line 4, column 3.
    #[test]
    fn errors_move_to_where_the_client_wrote_the_command() {
        let z3 = "(error \"line 2 column 8: unknown constant y\")";
        assert_eq!(
            relocate(z3, Dialect::Z3, (2, 1), (1, 55)).as_deref(),
            Some("(error \"line 1 column 63: unknown constant y\")")
        );
        assert_eq!(
            relocate(z3, Dialect::Z3, (2, 1), (4, 3)).as_deref(),
            Some("(error \"line 4 column 10: unknown constant y\")")
        );
        let yices = "(error \"at line 2, column 9: undefined term: y\")";
        assert_eq!(
            relocate(yices, Dialect::Yices, (2, 1), (1, 55)).as_deref(),
            Some("(error \"at line 1, column 63: undefined term: y\")")
        );
        // A later line of a command that spans lines keeps its column.
        let z3 = "(error \"line 5 column 4: unknown constant y\")";
        assert_eq!(
            relocate(z3, Dialect::Z3, (3, 1), (7, 20)).as_deref(),
            Some("(error \"line 9 column 4: unknown constant y\")")
        );
        assert_eq!(relocate(z3, Dialect::Z3, (3, 1), (3, 1)), None);
        assert_eq!(
            relocate("(error \"no position\")", Dialect::Z3, (3, 1), (1, 1)),
            None
        );
    }
}
