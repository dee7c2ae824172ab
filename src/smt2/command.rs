//! The command AST. Terms are already in the session's term store (ids); declarations
//! carry interned sorts. Commands smtproxy does not interpret keep their text, so they can
//! be forwarded to the solver verbatim.

use crate::term::signature::{DeclKind, FunDef, Signature, SortDef};
use crate::term::{SortId, Sym, TermId, TermStore};

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
    /// A declaration or definition of a sort, a function or a datatype.
    pub fn is_declaration(&self) -> bool {
        matches!(
            self,
            Command::DeclareSort(..)
                | Command::DefineSort { .. }
                | Command::DeclareFun { .. }
                | Command::DefineFun { .. }
                | Command::DefineFunsRec(_)
                | Command::DeclareDatatypes { .. }
        )
    }

    /// Of the declarations, those the backend must see verbatim (the client's view keeps
    /// their text in `defs`): sorts, recursive definitions, datatypes.
    pub fn is_verbatim_definition(&self) -> bool {
        matches!(
            self,
            Command::DeclareSort(..) | Command::DefineFunsRec(_) | Command::DeclareDatatypes { .. }
        )
    }

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

    /// Enter what a declaration or definition command introduces into `sig`, as the
    /// session does (declare-fun: a free symbol; define-fun: a macro; define-fun-rec and
    /// datatypes: defined symbols; sorts). Other commands leave `sig` as it is. Returns the
    /// symbol of a declare-fun.
    pub fn declare_in(&self, store: &mut TermStore, sig: &mut Signature) -> Option<Sym> {
        let declared = |store: &mut TermStore,
                        sig: &mut Signature,
                        name: &str,
                        params: &[SortId],
                        ret,
                        kind| {
            let sym = store.sym(name);
            let params = params.to_vec();
            sig.add_fun(
                name,
                FunDef::Declared {
                    sym,
                    params,
                    ret,
                    kind,
                },
            );
            sym
        };
        match self {
            Command::DeclareSort(name, arity) => sig.add_sort(name, SortDef::Declared(*arity)),
            Command::DefineSort { name, params, body } => sig.add_sort(
                name,
                SortDef::Alias {
                    params: params.clone(),
                    body: body.clone(),
                },
            ),
            Command::DeclareFun { name, params, ret } => {
                return Some(declared(store, sig, name, params, *ret, DeclKind::Free));
            }
            Command::DefineFun {
                name, params, body, ..
            } => {
                let params = params.iter().map(|(_, s, sym)| (*sym, *s)).collect();
                sig.add_fun(
                    name,
                    FunDef::Macro {
                        params,
                        body: *body,
                    },
                );
            }
            Command::DefineFunsRec(decls) => {
                for (name, params, ret) in decls {
                    declared(store, sig, name, params, *ret, DeclKind::Defined);
                }
            }
            Command::DeclareDatatypes { sorts, funs } => {
                for (name, arity) in sorts {
                    sig.add_sort(name, SortDef::Declared(*arity));
                }
                for (name, params, ret) in funs {
                    declared(store, sig, name, params, *ret, DeclKind::Defined);
                }
            }
            _ => {}
        }
        None
    }
}
