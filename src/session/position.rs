//! Where z3 puts an error in a command: line and column of a byte of the command's text,
//! of its first argument, and of the place z3 names for an error found while running a
//! command it parsed. Pure functions over the command's text and where it starts.
//!
//! Invariants: lines and columns count from 1 as the client's input has them (the
//! command starts at its `line`, `col`); on the first line of its input z3's columns are
//! one more than on the others, and `z3_position` applies that.

/// Line and column of byte `i` of the command `text` that starts at (`line`, `col`).
pub fn position_at(text: &str, i: usize, line: usize, col: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..i.min(text.len())];
    match before.iter().rposition(|&b| b == b'\n') {
        Some(nl) => (
            line + before.iter().filter(|&&b| b == b'\n').count(),
            i - nl,
        ),
        None => (line, col + i),
    }
}

/// The byte offset of the first argument of the command `text`: after `(`, the command
/// name and the blanks that follow it.
pub fn argument_offset(text: &str) -> usize {
    let b = text.as_bytes();
    let mut i = text.find('(').map_or(0, |p| p + 1);
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i = token_end(b, i);
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end of the atom that starts at byte `i` of `b`.
pub fn token_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'(' && b[i] != b')' {
        i += 1;
    }
    i
}

/// A position as z3 prints it: on the first line of its input z3's columns are one more
/// than on the others (`(pop 5)` alone is refused at column 7 on line 1, column 6 below).
pub fn z3_position((line, col): (usize, usize)) -> (usize, usize) {
    (line, if line == 1 { col + 1 } else { col })
}

/// Where z3 puts an error about the first argument of the command `text` that starts at
/// (`line`, `col`).
pub fn argument_position(text: &str, line: usize, col: usize) -> (usize, usize) {
    z3_position(position_at(text, argument_offset(text), line, col))
}

/// Where z3 reports an error found while running a command it has parsed (get-value or
/// get-model without a model, get-unsat-core without the option): the column before the
/// command's closing parenthesis, 0 when that parenthesis starts a line.
pub fn run_error_position(text: &str, line: usize, col: usize) -> (usize, usize) {
    let (l, c) = position_at(text, text.len().saturating_sub(1), line, col);
    z3_position((l, c.saturating_sub(1)))
}

/// A cvc5 backend's parse error about a command it read at the start of a line of its own,
/// moved to where the client wrote the command (`line`, `col`, 1-based): cvc5 numbers
/// lines from 0 and names no position at all on its first line. (The input line cvc5
/// quotes is the backend's: the command alone.)
pub fn cvc5_position(msg: &str, line: usize, col: usize) -> String {
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
    match line.saturating_sub(1) {
        0 => format!("{head}{tail}"),
        l => format!(
            "{head}{AT}{l}.{}: {tail}",
            col + their_col.saturating_sub(1)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cvc5_positions_move_to_the_clients_line() {
        let m = "Parse Error: <stdin>:2.14: Illegal argument detected";
        assert_eq!(
            cvc5_position(m, 2, 1),
            "Parse Error: <stdin>:1.14: Illegal argument detected"
        );
        assert_eq!(
            cvc5_position(m, 3, 5),
            "Parse Error: <stdin>:2.18: Illegal argument detected"
        );
        // cvc5 names no position on its first line.
        assert_eq!(
            cvc5_position(m, 1, 1),
            "Parse Error: Illegal argument detected"
        );
        assert_eq!(cvc5_position("no position", 3, 1), "no position");
    }

    #[test]
    fn positions_as_z3_prints_them() {
        // Below the first line: the argument's column; the column before the closing
        // parenthesis for an error found while running the command (0 at a line's start).
        assert_eq!(argument_position("(pop 5)", 2, 1), (2, 6));
        assert_eq!(argument_position("(pop\n  5)", 3, 4), (4, 3));
        assert_eq!(run_error_position("(get-value (a))", 5, 1), (5, 14));
        assert_eq!(run_error_position("(get-value ( a ) )", 6, 1), (6, 17));
        assert_eq!(
            run_error_position("(get-value   (a   a)    )", 7, 3),
            (7, 26)
        );
        assert_eq!(run_error_position("(get-value (a\n a))", 8, 1), (9, 3));
        assert_eq!(run_error_position("(get-value (a)\n)", 17, 1), (18, 0));
        // On the first line of the input z3's columns are one more.
        assert_eq!(argument_position("(pop 5)", 1, 1), (1, 7));
        assert_eq!(run_error_position("(get-assignment)", 1, 1), (1, 16));
        assert_eq!(run_error_position("(get-value (1))", 1, 30), (1, 44));
    }
}
