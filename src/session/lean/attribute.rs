//! Attribution of a batch's output to its commands, once the batch's marker arrives (or
//! the solver died in it). Pure: it decides only what the passthrough tracks for a replay
//! and what a check-sat answered, never what the client sees.
//!
//! Invariants:
//! * By shape: a `Silent` command takes nothing or one error (or `unsupported`), an
//!   `Answer` command exactly one form, an `Alone` command (a batch of its own) all of
//!   them. When errors outnumber what the count explains, the error's own position (z3,
//!   yices) names the command; else the earliest silent command takes it.
//! * A batch cut short by a death is observed up to the last command that took a form;
//!   an error without a position goes to the next answering command, if any.

use super::frame::{Kind, LeanCmd};
use super::position::error_position;
use crate::smt2::response::Dialect;

/// One output form of a batch, as attribution sees it.
#[derive(Clone, Debug)]
pub struct FormInfo {
    pub(super) text: String,
    /// `(error ...)` or `unsupported`: what a silent command may print.
    pub(super) err_like: bool,
    /// The solver's position in an error message (z3, yices), if any.
    pos: Option<(usize, usize)>,
}

impl FormInfo {
    /// The solver's position in an error message, if any.
    pub fn pos(&self) -> Option<(usize, usize)> {
        self.pos
    }

    pub fn new(text: String, dialect: Dialect) -> FormInfo {
        let is_err = text.starts_with("(error");
        let err_like = is_err || text == "unsupported";
        let pos = if is_err && dialect != Dialect::Cvc5 {
            error_position(&text)
        } else {
            None
        };
        FormInfo {
            text,
            err_like,
            pos,
        }
    }
}

/// Whether `c` begins at or before the solver's error position `p`: the command an
/// error is about is the last one that does.
pub fn starts_by(c: &LeanCmd, p: (usize, usize)) -> bool {
    c.start <= (p.0, p.1 + 1)
}

/// Which form (index) each command printed. `complete`: the batch's marker arrived, so
/// every form is known. Returns the assignment and how many commands are observed (the
/// rest of a batch cut short by a death are not).
pub fn align(cmds: &[LeanCmd], forms: &[FormInfo], complete: bool) -> (Vec<Vec<usize>>, usize) {
    let n = cmds.len();
    let mut out = vec![Vec::new(); n];
    if n == 1 && cmds[0].kind == Kind::Alone {
        out[0] = (0..forms.len()).collect();
        let observed = usize::from(complete || !forms.is_empty());
        return (out, observed);
    }
    // The command a position falls in: the last one starting at or before it.
    let owner = |p: (usize, usize)| -> Option<usize> {
        cmds.partition_point(|c| starts_by(c, p)).checked_sub(1)
    };
    let answers = cmds.iter().filter(|c| c.kind != Kind::Silent).count();
    let mut extra = forms.len().saturating_sub(answers);
    let mut answers_left = answers;
    let mut j = 0;
    let mut last_taken = None;
    for (i, c) in cmds.iter().enumerate() {
        let Some(f) = forms.get(j) else { break };
        let take = match c.kind {
            Kind::Answer | Kind::Alone => {
                answers_left -= 1;
                true
            }
            Kind::Silent => {
                if !f.err_like {
                    false
                } else if let Some(o) = f.pos.and_then(owner) {
                    o == i
                } else if complete {
                    extra > 0
                } else {
                    // Cut short: an error goes to the next answering command, if any.
                    answers_left == 0
                }
            }
        };
        if take {
            if c.kind == Kind::Silent {
                extra = extra.saturating_sub(1);
            }
            out[i].push(j);
            j += 1;
            last_taken = Some(i);
        }
    }
    let observed = if complete {
        n
    } else {
        last_taken.map_or(0, |i| i + 1)
    };
    (out, observed)
}

#[cfg(test)]
mod tests {
    use super::super::frame::classify;
    use super::*;
    use crate::driver::reader::command_head;

    fn cmd(text: &str, start: (usize, usize)) -> LeanCmd {
        let kind = classify(command_head(text).unwrap_or(""), false, Dialect::Z3);
        LeanCmd {
            text: text.into(),
            line: start.0,
            col: start.1,
            gap: None,
            kind,
            start,
            attempts: 0,
            quiet: false,
        }
    }
    fn form(t: &str) -> FormInfo {
        FormInfo::new(t.into(), Dialect::Z3)
    }

    #[test]
    fn count_attribution() {
        // KLEE's shape: silent commands, check-sat, get-values (one failing).
        let cmds = vec![
            cmd("(declare-fun a () Int)", (1, 1)),
            cmd("(assert (> a 0))", (2, 1)),
            cmd("(check-sat)", (3, 1)),
            cmd("(get-value (a))", (4, 1)),
        ];
        let forms = vec![
            form("unsat"),
            form("(error \"line 4 column 11: model is not available\")"),
        ];
        let (a, obs) = align(&cmds, &forms, true);
        assert_eq!(a, vec![vec![], vec![], vec![0], vec![1]]);
        assert_eq!(obs, 4);
    }

    #[test]
    fn positions_name_the_failing_silent_command() {
        let cmds = vec![
            cmd("(declare-fun a () Int)", (1, 1)),
            cmd("(assert (> b 0))", (2, 1)),
            cmd("(assert (> a 0))", (3, 1)),
            cmd("(check-sat)", (4, 1)),
        ];
        let forms = vec![
            form("(error \"line 2 column 12: unknown constant b\")"),
            form("sat"),
        ];
        let (a, _) = align(&cmds, &forms, true);
        assert_eq!(a, vec![vec![], vec![0], vec![], vec![1]]);
        // Without a position the earliest silent command takes it.
        let forms = vec![form("(error \"unknown constant b\")"), form("sat")];
        let (a, _) = align(&cmds, &forms, true);
        assert_eq!(a, vec![vec![0], vec![], vec![], vec![1]]);
    }

    #[test]
    fn cut_short_batches() {
        let cmds = vec![
            cmd("(declare-fun a () Int)", (1, 1)),
            cmd("(assert (> a #zz))", (2, 1)),
            cmd("(assert (> a 0))", (3, 1)),
            cmd("(check-sat)", (4, 1)),
        ];
        // z3 exits after a lexer error: the position names the command; what follows is
        // unobserved.
        let forms = vec![form(
            "(error \"line 2 column 14: invalid bit-vector literal\")",
        )];
        let (a, obs) = align(&cmds, &forms, false);
        assert_eq!(a[1], vec![0]);
        assert_eq!(obs, 2);
        // No output at all: nothing observed.
        let (_, obs) = align(&cmds, &[], false);
        assert_eq!(obs, 0);
        // An error without position while an answering command is pending goes to it.
        let (a, obs) = align(&cmds, &[form("(error \"boom\")")], false);
        assert_eq!(a[3], vec![0]);
        assert_eq!(obs, 4);
    }

    #[test]
    fn alone_takes_everything() {
        let cmds = vec![cmd("(display x)", (1, 1))];
        let (a, obs) = align(&cmds, &[form("x"), form("y")], true);
        assert_eq!(a, vec![vec![0, 1]]);
        assert_eq!(obs, 1);
    }
}
