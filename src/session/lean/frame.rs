//! Framing for the lean passthrough: what shape a command's output has, where a command
//! lands in the solver's input, and how many commands a batch and the pipeline hold. Pure
//! functions and the record of a command sent; the passthrough (`lean`) drives them.
//!
//! Invariants:
//! * A command is preceded by the client's own text before it when the solver's input is
//!   where that text began (or at the start of the next line, after a marker), else by
//!   whitespace that puts it at the client's line and column, or by one line break when
//!   the solver's input is already past that place (after a replay or a marker). So the
//!   solver's error messages name the client's lines.
//! * `classify` says what a command prints with print-success as the solver has it when
//!   the command runs: `Silent` nothing or one error, `Answer` exactly one form, `Alone`
//!   anything (it goes in a batch of its own).
//! * Only z3 and yices get batches of more than one command; cvc5 and custom solvers,
//!   whose errors do not always say where they are, get one per command.
//! * yices is framed by markers until its first `check-sat-assuming`, then counted
//!   (`needs_counted`) for the rest of that process's life.

use crate::driver::reader::command_head;
use crate::driver::SolverKind;
use crate::smt2::response::Dialect;

/// Commands per batch at most.
pub const GROUP_MAX: usize = 64;

/// How many passthrough commands may be in flight at once (the solver's backlog while
/// smtproxy waits for the oldest batch).
pub const PIPELINE_MAX: usize = 1024;

/// What a command prints with print-success off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Nothing on success; one `(error ...)` or `unsupported` otherwise.
    Silent,
    /// Exactly one form: its answer or an error.
    Answer,
    /// Unknown shape (solver extensions, unreadable input): sent in a batch of its own.
    Alone,
}

/// The shape of a command's output; `ps`: print-success is on in the solver when it runs.
pub fn classify(head: &str, ps: bool, dialect: Dialect) -> Kind {
    let kind = match head {
        "set-logic" | "set-option" | "set-info" | "declare-sort" | "define-sort"
        | "declare-fun" | "declare-const" | "define-fun" | "define-fun-rec" | "define-funs-rec"
        | "declare-datatype" | "declare-datatypes" | "push" | "pop" | "assert" | "reset"
        | "reset-assertions" => Kind::Silent,
        "check-sat"
        | "check-sat-assuming"
        | "get-value"
        | "get-model"
        | "get-info"
        | "get-option"
        | "get-assertions"
        | "get-assignment"
        | "get-unsat-core"
        | "get-unsat-assumptions"
        | "get-proof" => Kind::Answer,
        _ => Kind::Alone,
    };
    // With print-success on a silent command prints `success` or an error, except
    // cvc5's `(reset)`, which turns print-success off and prints nothing.
    if kind == Kind::Silent && ps && !(head == "reset" && dialect == Dialect::Cvc5) {
        Kind::Answer
    } else {
        kind
    }
}

/// Whether `text` is a check-sat or a check-sat-assuming.
pub fn is_check_head(text: &str) -> bool {
    matches!(command_head(text), Some("check-sat" | "check-sat-assuming"))
}

/// Commands per batch: [`GROUP_MAX`] for z3 and yices; one for cvc5
/// and custom solvers, whose errors do not always say where they are while cvc5 exits
/// after most of them (so which command failed must be known exactly).
pub fn batch_max(kind: SolverKind) -> usize {
    match kind {
        SolverKind::Z3 | SolverKind::Yices => GROUP_MAX,
        _ => 1,
    }
}

/// Whether `head`, sent to a solver of `kind`, needs counted mode from then on (yices,
/// at its first `check-sat-assuming`): print-success on in the solver, every command
/// prints exactly one form, and a batch is complete when its forms are there; no markers.
/// yices 2.6 prints for `get-unsat-assumptions` the names its lexer last read, so a
/// marker's `(echo "...")` between a check-sat-assuming and the client's
/// get-unsat-assumptions would change what the client is shown. Before that, yices is
/// framed by markers with print-success as the client has it, as z3 is: a `success` line
/// per command costs yices about 10% of its time on a KLEE stream.
pub fn needs_counted(kind: SolverKind, head: &str) -> bool {
    kind == SolverKind::Yices && head == "check-sat-assuming"
}

/// A command sent to the lean backend and not yet accounted for.
#[derive(Clone, Debug)]
pub struct LeanCmd {
    pub(super) text: String,
    pub(super) line: usize,
    pub(super) col: usize,
    /// The client's text before the command and where it begins (see `lead_in`).
    pub(super) gap: Option<(String, (usize, usize))>,
    pub(super) kind: Kind,
    /// Where its first byte landed in the solver's input.
    pub(super) start: (usize, usize),
    /// Deaths of the solver while this was the first unobserved command.
    pub(super) attempts: u8,
    /// Counted mode: the client has print-success off, so a `success` it prints is not
    /// passed on.
    pub(super) quiet: bool,
}

/// Whitespace that moves the solver's input from `(bline, bcol)` to the client's
/// `(line, col)`; a line break when that is behind (after a replay or a marker).
pub fn gap(bline: usize, bcol: usize, line: usize, col: usize) -> String {
    if line > bline {
        let mut s = "\n".repeat(line - bline);
        s.push_str(&" ".repeat(col.saturating_sub(1)));
        s
    } else if line == bline && col > bcol {
        " ".repeat(col - bcol)
    } else if bcol == 1 {
        String::new()
    } else {
        "\n".to_string()
    }
}

/// What to send before a command so it lands where the client had it: the client's own
/// text between the previous frame and the command when the solver's input is at the
/// place where that text began (or at the start of the next line, as after a marker: then
/// the rest of that line is left out), else whitespace from `gap`.
pub fn lead_in(
    b: (usize, usize),
    client_gap: Option<&(String, (usize, usize))>,
    line: usize,
    col: usize,
) -> String {
    if let Some((g, at)) = client_gap {
        if b == *at {
            return g.clone();
        }
        if b == (at.0 + 1, 1) {
            if let Some(i) = g.find('\n') {
                return g[i + 1..].to_string();
            }
        }
    }
    gap(b.0, b.1, line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_reproduce_positions() {
        assert_eq!(gap(1, 1, 1, 1), "");
        assert_eq!(gap(1, 1, 3, 4), "\n\n   ");
        assert_eq!(gap(2, 10, 2, 12), "  ");
        assert_eq!(gap(5, 10, 2, 1), "\n");
        assert_eq!(gap(5, 1, 2, 1), "");
    }

    #[test]
    fn lead_in_keeps_the_clients_text() {
        let g = ("  ; note (\n\n".to_string(), (3, 12));
        assert_eq!(lead_in((3, 12), Some(&g), 5, 1), "  ; note (\n\n");
        // After a marker ended line 3: the rest of the text.
        assert_eq!(lead_in((4, 1), Some(&g), 5, 1), "\n");
        // Anywhere else: whitespace.
        assert_eq!(lead_in((9, 3), Some(&g), 5, 1), "\n");
        assert_eq!(lead_in((2, 1), None, 5, 3), "\n\n\n  ");
    }

    #[test]
    fn shapes_follow_print_success() {
        assert_eq!(classify("assert", false, Dialect::Z3), Kind::Silent);
        assert_eq!(classify("assert", true, Dialect::Z3), Kind::Answer);
        // cvc5's reset turns print-success off and prints nothing.
        assert_eq!(classify("reset", true, Dialect::Cvc5), Kind::Silent);
        assert_eq!(classify("get-value", false, Dialect::Z3), Kind::Answer);
        assert_eq!(classify("display", false, Dialect::Z3), Kind::Alone);
    }
}
