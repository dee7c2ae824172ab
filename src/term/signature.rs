//! The client's symbol table: what each function and sort name means right now, scoped by
//! push/pop exactly as SMT-LIB says (declarations made in a frame disappear with it, unless
//! `:global-declarations` is on). `define-fun` bodies are kept as terms and inlined where
//! they are used, so queries are self-contained; `define-fun-rec` and datatype symbols stay
//! uninterpreted applications that the backend knows from the forwarded definition.

use super::{SortId, Sym, TermId};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FunDef {
    /// declare-fun / declare-const, a define-fun-rec'd function, or a datatype constructor,
    /// selector or tester: an application `Op::Sym(sym)` of these sorts.
    Declared {
        sym: Sym,
        params: Vec<SortId>,
        ret: SortId,
        kind: DeclKind,
    },
    /// define-fun: `params` are internal symbols substituted by the arguments on use.
    Macro {
        params: Vec<(Sym, SortId)>,
        body: TermId,
    },
}

impl FunDef {
    /// How many arguments an application of the function takes (0 for a constant).
    pub fn arity(&self) -> usize {
        match self {
            FunDef::Declared { params, .. } => params.len(),
            FunDef::Macro { params, .. } => params.len(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclKind {
    /// An uninterpreted constant or function the client declared.
    Free,
    /// Defined elsewhere (define-fun-rec, datatypes): not free, not modelled.
    Defined,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SortDef {
    /// declare-sort or a datatype: an uninterpreted sort constructor of this arity.
    Declared(u32),
    /// define-sort: parameters and body text, expanded on use.
    Alias { params: Vec<String>, body: String },
}

#[derive(Clone, Debug)]
enum Undo {
    Fun(String, Option<FunDef>),
    Sort(String, Option<SortDef>),
}

/// Which applications with a number of arguments SMT-LIB does not give (one argument for
/// an operator that takes two or more, three for `bvsub`) the client's solver accepts,
/// and what they mean. smtproxy must refuse exactly what its solver refuses: a command it
/// takes and the solver would not (or the reverse) leaves the client's state and the
/// solver's apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArityRule {
    /// z3: `distinct` and the comparisons `< <= > >=` are true; the associative
    /// bit-vector operators, `div` and `/` (on a Real) are their argument; `bvxnor` is
    /// `bvnot`; `+ * concat xor and or` are their argument.
    #[default]
    Z3,
    /// yices: the associative bit-vector operators and `+ * concat xor and or`;
    /// `bvsub` of three or more.
    Yices,
    /// cvc5: only `and`, `or` and `-` (negation).
    Cvc5,
}

#[derive(Clone, Debug, Default)]
pub struct Signature {
    funs: FxHashMap<String, FunDef>,
    sorts: FxHashMap<String, SortDef>,
    undo: Vec<Undo>,
    frames: Vec<usize>,
    pub global_declarations: bool,
    /// Kept by `clear`: it is the solver's, not the client's.
    pub arity: ArityRule,
}

impl Signature {
    /// An empty signature for a solver that counts arguments by `arity`.
    pub fn for_solver(arity: ArityRule) -> Signature {
        Signature {
            arity,
            ..Signature::default()
        }
    }
    pub fn fun(&self, name: &str) -> Option<&FunDef> {
        self.funs.get(name)
    }
    pub fn sort(&self, name: &str) -> Option<&SortDef> {
        self.sorts.get(name)
    }
    pub fn has_fun(&self, name: &str) -> bool {
        self.funs.contains_key(name)
    }
    pub fn has_sort(&self, name: &str) -> bool {
        self.sorts.contains_key(name)
    }
    pub fn add_fun(&mut self, name: &str, def: FunDef) {
        let prev = self.funs.insert(name.to_string(), def);
        if !self.global_declarations {
            self.undo.push(Undo::Fun(name.to_string(), prev));
        }
    }
    pub fn add_sort(&mut self, name: &str, def: SortDef) {
        let prev = self.sorts.insert(name.to_string(), def);
        if !self.global_declarations {
            self.undo.push(Undo::Sort(name.to_string(), prev));
        }
    }
    pub fn push(&mut self) {
        self.frames.push(self.undo.len());
    }
    /// Pop one frame; false when there is none.
    pub fn pop(&mut self) -> bool {
        let Some(mark) = self.frames.pop() else {
            return false;
        };
        while self.undo.len() > mark {
            match self.undo.pop() {
                Some(Undo::Fun(n, Some(d))) => {
                    self.funs.insert(n, d);
                }
                Some(Undo::Fun(n, None)) => {
                    self.funs.remove(&n);
                }
                Some(Undo::Sort(n, Some(d))) => {
                    self.sorts.insert(n, d);
                }
                Some(Undo::Sort(n, None)) => {
                    self.sorts.remove(&n);
                }
                None => break,
            }
        }
        true
    }
    pub fn depth(&self) -> usize {
        self.frames.len()
    }
    /// reset: forget everything.
    pub fn clear(&mut self) {
        *self = Signature {
            arity: self.arity,
            ..Signature::default()
        };
    }
    /// Every declared free symbol visible now, in declaration order is not kept; callers sort.
    pub fn free_symbols(&self) -> impl Iterator<Item = (&str, &FunDef)> {
        self.funs
            .iter()
            .filter(|(_, d)| {
                matches!(
                    d,
                    FunDef::Declared {
                        kind: DeclKind::Free,
                        ..
                    }
                )
            })
            .map(|(n, d)| (n.as_str(), d))
    }
}
