//! The client's own text of a base-level assertion, sent to the stack backend in place of
//! smtproxy's printing of its conjuncts. The same formula in another text is not the same
//! work for a solver: the text, not only its meaning, steers the search (yices on
//! `domain.smt2`: 100x per query; `docs/design-notes.md`, "The client's text in the stack"), so a
//! client that pushes above a large base assertion (an incremental benchmark, a bounded
//! model checker) gets the solver it would have had alone only with that assertion as it
//! wrote it.
//!
//! Invariants:
//! * A text is used only when it means in the backend what it meant to smtproxy: every
//!   symbol in it is a builtin, a let-bound name, or a client constant or function that
//!   the backend holds under that very name with that very declaration (not renamed, not
//!   a define-fun macro, not a declared sort or datatype name); it has no attribute
//!   (`:named`, `:pattern`: a colon anywhere), no quoted symbol and no string literal.
//!   Anything else is printed from the terms.
//! * The caller sends a text only for an assertion all of whose conjuncts are new to the
//!   backend's base, so the base holds exactly those conjuncts either way, and only to a
//!   solver of the client's dialect (`StackMirror::with_client_text`): another member of
//!   a portfolio gets the printed terms.

use super::names::StackNames;
use crate::session::client::Decl;
use crate::session::vocab::declare_text;
use crate::smt2::lex::{skip_space, token_end};
use crate::term::signature::{DeclKind, FunDef, Signature};
use crate::term::TermStore;
use rustc_hash::FxHashSet;

/// Whether `text`, a client's `(assert ...)`, can go to the backend as it is. Each
/// distinct word is judged once.
pub(super) fn usable(text: &str, store: &TermStore, sig: &Signature, names: &StackNames) -> bool {
    if text.contains([':', '|', '"']) {
        return false;
    }
    let bytes = text.as_bytes();
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let mut i = skip_space(bytes, 0);
    while i < bytes.len() {
        if matches!(bytes[i], b'(' | b')') {
            i = skip_space(bytes, i + 1);
            continue;
        }
        let end = token_end(bytes, i);
        if end == i {
            // A delimiter none of the above: not a text judged here.
            return false;
        }
        let word = &text[i..end];
        i = skip_space(bytes, end);
        if word.starts_with(|c: char| c.is_ascii_digit() || c == '#') || !seen.insert(word) {
            continue;
        }
        if !symbol_usable(word, store, sig, names) {
            return false;
        }
    }
    true
}

/// A symbol of the text: not the client's (a builtin, a keyword of the language, a
/// let-bound name), or a client constant or function the backend holds as declared.
fn symbol_usable(word: &str, store: &TermStore, sig: &Signature, names: &StackNames) -> bool {
    if sig.sort(word).is_some() {
        return false;
    }
    match sig.fun(word) {
        None => true,
        Some(FunDef::Macro { .. }) => false,
        Some(FunDef::Declared {
            kind: DeclKind::Defined,
            ..
        }) => false,
        Some(FunDef::Declared {
            sym,
            params,
            ret,
            kind: DeclKind::Free,
        }) => {
            let d = Decl {
                name: word.to_string(),
                sym: *sym,
                params: params.clone(),
                ret: *ret,
            };
            names.holds_as_declared(&d, &declare_text(store, &d, word))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::SortStore;

    #[test]
    fn only_texts_that_mean_the_same_in_the_backend() {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        let mut names = StackNames::default();
        let bv8 = store.sorts.bv(8);
        let x = store.sym("x");
        sig.add_fun(
            "x",
            FunDef::Declared {
                sym: x,
                params: Vec::new(),
                ret: bv8,
                kind: DeclKind::Free,
            },
        );
        let body = store.mk_bool(true);
        sig.add_fun(
            "m",
            FunDef::Macro {
                params: Vec::new(),
                body,
            },
        );
        assert_eq!(store.sort(body), SortStore::BOOL);
        let plain = "(assert (let ((?a (bvadd x #x01))) (bvult ?a (_ bv5 8)))) ; a comment";
        // `x` is not in the backend yet.
        assert!(!usable(plain, &store, &sig, &names));
        let d = Decl {
            name: "x".into(),
            sym: x,
            params: Vec::new(),
            ret: bv8,
        };
        let mut renames = 0;
        assert!(names.declare(&store, &d, &mut renames).is_some());
        assert!(usable(plain, &store, &sig, &names));
        // A macro, an attribute, a quoted symbol, a string: printed from the terms.
        for text in [
            "(assert (and m (= x #x00)))",
            "(assert (! (= x #x00) :named a))",
            "(assert (= |x| #x00))",
            "(assert (= (str.len \"ab\") 2))",
        ] {
            assert!(!usable(text, &store, &sig, &names), "{text}");
        }
    }
}
