//! The vocabulary the planner and its strategies share: the strategies, the answers, what
//! happened on a client command (`Outcome`), the query a strategy is asked (the client's check-sat, or one component of it), and the
//! texts that pose a query to a solver or read its values. A leaf: it imports nothing else
//! of `session`.
//!
//! Invariants: a query's texts use the backend's names (`printer::backend_name`) or the
//! names a caller passes; `response_answer` maps anything but `sat`/`unsat` to `unknown`.

use super::client::Decl;
use crate::driver::Response;
use crate::query::eval::Model;
use crate::query::value::Value;
use crate::smt2::lexer::Sexps;
use crate::smt2::parser::parse_term;
use crate::smt2::printer::{print_term, quote_symbol, Names};
use crate::term::signature::Signature;
use crate::term::{TermId, TermStore};

/// What happened on one client command (for replay and bench).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Outcome {
    /// The answer to a check-sat / check-sat-assuming, if this was one.
    pub check: Option<Answer>,
    /// A `(set-info :status ...)` seen.
    pub status: Option<Answer>,
    pub exit: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Passthrough,
    Fresh,
    Stack,
    StackCse,
    Cache,
    Hybrid,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Passthrough => "passthrough",
            Strategy::Fresh => "fresh",
            Strategy::Stack => "stack",
            Strategy::StackCse => "stack-cse",
            Strategy::Cache => "cache",
            Strategy::Hybrid => "hybrid",
        }
    }
    pub fn parse(s: &str) -> Option<Strategy> {
        Self::all().into_iter().find(|x| x.name() == s)
    }
    pub fn all() -> Vec<Strategy> {
        vec![
            Strategy::Passthrough,
            Strategy::Fresh,
            Strategy::Stack,
            Strategy::StackCse,
            Strategy::Cache,
            Strategy::Hybrid,
        ]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Answer {
    Sat,
    Unsat,
    Unknown,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Sat => "sat",
            Answer::Unsat => "unsat",
            Answer::Unknown => "unknown",
        }
    }
    pub fn parse(s: &str) -> Option<Answer> {
        match s.trim() {
            "sat" => Some(Answer::Sat),
            "unsat" => Some(Answer::Unsat),
            "unknown" => Some(Answer::Unknown),
            _ => None,
        }
    }
}

/// Everything a strategy needs to know about one check-sat.
pub struct Query<'a> {
    pub assertions: &'a [TermId],
    /// The client's base-level assertions while it has scopes of its own pushed (else
    /// empty): what it keeps below its pushes, so the stack keeps it below its own.
    pub base: &'a [TermId],
    /// The client's text of each of `base` (the same length, or empty): its `(assert
    /// ...)` command, which the stack may send as it is (`stack::verbatim`).
    pub base_text: &'a [Option<&'a str>],
    pub assumptions: &'a [TermId],
    pub decls: &'a [Decl],
    /// Raw definitions (declare-sort, datatypes, define-fun-rec) in order.
    pub defs: &'a [String],
    /// set-logic and answer-relevant set-option commands, raw.
    pub preamble: &'a [String],
    pub logic: Option<&'a str>,
    /// The client's signature (what each name means).
    pub sig: &'a crate::term::signature::Signature,
    /// The name-free key of the client's commands since its last `(reset)`
    /// (`smt2::alpha`), when every one of them went through the modelled engine and the
    /// block can come again (`Block::repeatable`).
    pub block: Option<crate::smt2::alpha::BlockKey>,
}

/// Why the last model could not be read.
#[derive(Debug)]
pub enum ModelError {
    /// The backend process that held it is gone (crashed, killed, deadline): solving the
    /// same query again brings a model back.
    Lost(String),
    /// The solver answered sat and its model was not read (dear to read, and perhaps never
    /// asked for): solving the same query again, models read, brings one.
    Unread,
    /// Anything else (no model, the solver rejected the request, ...).
    Other(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Lost(e) => write!(f, "model lost with the solver: {e}"),
            ModelError::Unread => f.write_str("model not read"),
            ModelError::Other(e) => f.write_str(e),
        }
    }
}

/// The model that gives each of `leaves` its value in `values`, the value texts a solver
/// printed for them in order (`split_values`); `None` when one is not a value smtproxy
/// reads.
pub fn model_of_values(
    store: &mut TermStore,
    leaves: &[TermId],
    values: &[String],
) -> Option<Model> {
    let empty = Signature::default();
    let mut m = Model::new();
    for (&l, v) in leaves.iter().zip(values) {
        let t = parse_term(store, &empty, v).ok()?;
        m.set(l, Value::from_term(store, t)?);
    }
    Some(m)
}

/// The value texts of a get-value answer `((t1 v1) (t2 v2) ...)`.
pub fn split_values(text: &str, n: usize) -> Result<Vec<String>, String> {
    let sx = Sexps::parse(text).map_err(|e| format!("cannot read solver values: {}", e.msg))?;
    let root = *sx.roots.first().ok_or("empty get-value answer")?;
    let pairs = sx.list(root).ok_or("malformed get-value answer")?;
    if pairs.len() != n {
        return Err(format!(
            "solver gave {} values for {} terms",
            pairs.len(),
            n
        ));
    }
    pairs
        .iter()
        .map(|&p| match sx.list(p) {
            Some([_, v]) => Ok(sx.source(*v).to_string()),
            _ => Err("malformed get-value pair".to_string()),
        })
        .collect()
}

/// `(declare-fun name (params) ret)` for the backend.
pub fn declare_text(store: &TermStore, d: &Decl, name: &str) -> String {
    let mut s = format!("(declare-fun {} (", quote_symbol(name));
    for (i, p) in d.params.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        store.sorts.print(*p, &mut s);
    }
    s.push_str(") ");
    store.sorts.print(d.ret, &mut s);
    s.push(')');
    s
}

/// `(check-sat)`, or `(check-sat-assuming (...))` with the assumptions in backend names.
pub fn check_text(store: &TermStore, assumptions: &[TermId], names: &dyn Names) -> String {
    if assumptions.is_empty() {
        return "(check-sat)".into();
    }
    let mut s = String::from("(check-sat-assuming (");
    for (i, &a) in assumptions.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&print_term(store, a, names));
    }
    s.push_str("))");
    s
}

pub fn response_answer(r: &Response) -> Answer {
    match r {
        Response::Sat => Answer::Sat,
        Response::Unsat => Answer::Unsat,
        _ => Answer::Unknown,
    }
}
