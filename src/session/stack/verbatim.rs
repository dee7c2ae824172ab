//! The client's own text of a base-level assertion, sent to the stack backend in place of
//! smtproxy's printing of its conjuncts. The same formula in another text is not the same
//! work for a solver: the order in which it creates terms while reading steers its search
//! (`docs/design-notes.md`, "What the solver sees"), and a client that pushes above a
//! large base assertion (an incremental benchmark, a bounded model checker) gets the
//! solver it would have had alone only with that assertion as it wrote it.
//!
//! Invariants:
//! * A text is used only when it means in the backend what it meant to smtproxy: every
//!   symbol in it is a builtin, a let-bound name, or a client constant or function that
//!   the backend holds under that very name with that very declaration (not renamed, not
//!   a define-fun macro, not a declared sort or datatype name); it has no attribute
//!   (`:named`, `:pattern`: a colon anywhere), no quoted symbol and no string literal.
//!   Anything else is printed from the terms as before.
//! * The caller sends a text only for an assertion all of whose conjuncts are new to the
//!   backend's base, so the base holds exactly those conjuncts either way, and only to a
//!   solver of the client's dialect (`StackMirror::with_client_text`): another member of
//!   a portfolio gets the printed terms.

use super::names::StackNames;
use crate::session::client::Decl;
use crate::session::vocab::declare_text;
use crate::term::signature::{DeclKind, FunDef, Signature};
use crate::term::TermStore;

/// Whether `text`, a client's `(assert ...)`, can go to the backend as it is.
pub(super) fn usable(text: &str, store: &TermStore, sig: &Signature, names: &StackNames) -> bool {
    if text.contains([':', '|', '"']) {
        return false;
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b';' {
            // A comment runs to the end of the line.
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b.is_ascii_whitespace() || b == b'(' || b == b')' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len()
            && !bytes[i].is_ascii_whitespace()
            && !matches!(bytes[i], b'(' | b')' | b';')
        {
            i += 1;
        }
        let word = &text[start..i];
        if word.starts_with(|c: char| c.is_ascii_digit() || c == '#') {
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
