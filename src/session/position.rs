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

/// The column z3 prints for the 1-based column `col` on `line` of its input (`position_at`
/// gives one): as counted on the first line, one less after it (z3's columns are 0-based
/// past its input's first line).
pub fn z3_printed_col(line: usize, col: usize) -> usize {
    if line > 1 {
        col.saturating_sub(1)
    } else {
        col
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

#[cfg(test)]
mod tests {
    use super::*;

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
