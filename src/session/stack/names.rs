//! Names in the stack backend: the client's declarations as the backend knows them, and
//! the CSE macros that stand for repeated subterms.
//!
//! Invariants:
//! * The backend runs with `:global-declarations true`, so a declaration made once stays
//!   for the life of the process; [`StackNames::declare`] sends a declaration only when
//!   the backend does not hold that exact text under that name yet.
//! * A client name redeclared with another sort (after a reset) gets a distinct reserved
//!   name `sp!d<k>!<name>`, `k` never reused within a session, and terms are printed
//!   through [`StackNames`] so that every occurrence uses the name its declaration got.
//! * A term with a macro is printed as the macro's name (see `cse`); the tables describe
//!   one backend generation and are dropped with it.

use crate::session::client::Decl;
use crate::session::vocab::declare_text;
use crate::smt2::printer::{backend_name, Names};
use crate::term::{SortId, Sym, TermId, TermStore};
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// Names in the stack backend: client names, with redeclared ones renamed, and CSE macros.
#[derive(Default)]
pub struct StackNames {
    renamed: FxHashMap<(Sym, SortId), String>,
    pub(super) macros: FxHashMap<TermId, String>,
    /// backend name -> declaration text sent
    pub(super) declared: FxHashMap<String, String>,
}

impl StackNames {
    /// The backend name of a client declaration.
    pub fn backend_of(&self, d: &Decl) -> String {
        match self.renamed.get(&(d.sym, d.ret)) {
            Some(n) => n.clone(),
            None => backend_name(&d.name).into_owned(),
        }
    }

    /// The declaration to send for `d`, or `None` when the backend has it already. A name
    /// the backend holds with another declaration is renamed, `renames` counting renames.
    pub(super) fn declare(
        &mut self,
        store: &TermStore,
        d: &Decl,
        renames: &mut u64,
    ) -> Option<String> {
        let key = (d.sym, d.ret);
        let mut name = self
            .renamed
            .get(&key)
            .cloned()
            .unwrap_or_else(|| backend_name(&d.name).into_owned());
        let mut text = declare_text(store, d, &name);
        match self.declared.get(&name) {
            Some(t) if *t == text => return None,
            Some(_) => {
                *renames += 1;
                name = format!("sp!d{}!{}", renames, d.name);
                text = declare_text(store, d, &name);
                self.renamed.insert(key, name.clone());
            }
            None => {}
        }
        self.declared.insert(name, text.clone());
        Some(text)
    }

    /// Whether the backend knows `d` under its client name (not renamed), by the
    /// declaration `text`.
    pub(super) fn holds_as_declared(&self, d: &Decl, text: &str) -> bool {
        !self.renamed.contains_key(&(d.sym, d.ret))
            && backend_name(&d.name) == d.name.as_str()
            && self.declared.get(&d.name).is_some_and(|t| t == text)
    }
}

impl Names for StackNames {
    fn sym<'a>(&'a self, store: &'a TermStore, t: TermId, s: Sym) -> Cow<'a, str> {
        if let Some(n) = self.renamed.get(&(s, store.sort(t))) {
            return Cow::Borrowed(n);
        }
        backend_name(store.sym_name(s))
    }
    fn defined(&self, t: TermId) -> Option<&str> {
        self.macros.get(&t).map(|s| s.as_str())
    }
}
