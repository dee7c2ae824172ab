//! The command AST. Terms are already in the session's term store (ids); declarations
//! carry interned sorts. Commands smtproxy does not interpret keep their text, so they can
//! be forwarded to the solver verbatim.

use crate::term::{SortId, Sym, TermId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    SetLogic(String),
    /// Keyword (with colon) and the value's source text.
    SetOption(String, String),
    SetInfo(String, String),
    GetInfo(String),
    GetOption(String),
    DeclareSort(String, u32),
    DefineSort {
        name: String,
        params: Vec<String>,
        body: String,
    },
    DeclareFun {
        name: String,
        params: Vec<SortId>,
        ret: SortId,
    },
    /// Parameters: client name, sort, and the internal symbol standing for it in `body`.
    DefineFun {
        name: String,
        params: Vec<(String, SortId, Sym)>,
        ret: SortId,
        body: TermId,
    },
    /// define-fun-rec / define-funs-rec: the declared names with their sorts (the bodies
    /// stay with the backend, which gets the command verbatim).
    DefineFunsRec(Vec<(String, Vec<SortId>, SortId)>),
    /// declare-datatype(s): every constructor, selector and tester with its sorts, and the sorts.
    DeclareDatatypes {
        sorts: Vec<(String, u32)>,
        funs: Vec<(String, Vec<SortId>, SortId)>,
    },
    Push(u32),
    Pop(u32),
    /// The asserted term, and the `:named` labels it carries at any depth.
    Assert(TermId, Vec<(String, TermId)>),
    CheckSat,
    CheckSatAssuming(Vec<TermId>),
    /// Terms with the client's own source text for each (answers echo it).
    GetValue(Vec<(TermId, String)>),
    GetModel,
    GetAssignment,
    GetUnsatCore,
    GetUnsatAssumptions,
    GetProof,
    Reset,
    ResetAssertions,
    /// The raw string literal, with its quotes and escapes as written.
    Echo(String),
    Exit,
    /// A command smtproxy does not interpret; forwarded verbatim.
    Other(String),
}

impl Command {
    /// True for commands that change what the solver holds (and so must be replayed into a
    /// restarted solver).
    pub fn changes_state(&self) -> bool {
        matches!(
            self,
            Command::SetLogic(_)
                | Command::SetOption(..)
                | Command::DeclareSort(..)
                | Command::DefineSort { .. }
                | Command::DeclareFun { .. }
                | Command::DefineFun { .. }
                | Command::DefineFunsRec(_)
                | Command::DeclareDatatypes { .. }
                | Command::Push(_)
                | Command::Pop(_)
                | Command::Assert(..)
                | Command::ResetAssertions
                | Command::Other(_)
        )
    }
}
