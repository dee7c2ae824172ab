//! Memo of parsed assertions. A symbolic executor sends the same `(assert ...)` text over
//! and over (in a KLEE log that bypasses KLEE's own caches, 30-47% of the assertion bytes
//! repeat earlier ones exactly); parsing is the largest cost of a query answered from the
//! cache.
//!
//! Invariants:
//! * An entry maps the exact command text to the term its parse built and to the
//!   signature lookups that parse made (`parser::Trace`). It is used only while every one of
//!   those names still stands for the same declaration, definition or sort, so the term is
//!   the one parsing the text again would build (up to the fresh internal symbols given to
//!   bound variables, which no one outside the term can see).
//! * Only assertions that parsed without error and name no terms (`:named` defines a
//!   function) are kept: errors are reported afresh every time.
//! * Memory is bounded: the memo is emptied when its texts exceed `MEMO_BYTES`.

use super::parser::Trace;
use crate::term::signature::Signature;
use crate::term::TermId;
use rustc_hash::FxHashMap;

/// Bound on the text held (the terms themselves live in the term store anyway).
const MEMO_BYTES: usize = 64 << 20;
/// Assertions that look up more names than this are not kept (checking the entry would
/// cost about as much as parsing).
const MEMO_MAX_NAMES: usize = 64;

#[derive(Default)]
pub struct AssertMemo {
    map: FxHashMap<Box<str>, (TermId, Trace)>,
    bytes: usize,
}

impl AssertMemo {
    /// The term of `text` parsed earlier, if the names it used still mean the same.
    pub fn get(&self, text: &str, sig: &Signature) -> Option<TermId> {
        let (t, trace) = self.map.get(text)?;
        trace.holds(sig).then_some(*t)
    }

    /// Keep the term `text` parsed to under `sig` lookups `trace`.
    pub fn put(&mut self, text: &str, t: TermId, trace: Trace) {
        if trace.len() > MEMO_MAX_NAMES || text.len() > MEMO_BYTES / 4 {
            return;
        }
        if self.bytes + text.len() > MEMO_BYTES {
            self.map.clear();
            self.bytes = 0;
        }
        self.bytes += text.len();
        self.map.insert(text.into(), (t, trace));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt2::command::Command;
    use crate::smt2::parser::parse_command_traced;
    use crate::term::TermStore;

    fn assert_term(
        store: &mut TermStore,
        sig: &Signature,
        memo: &mut AssertMemo,
        text: &str,
    ) -> TermId {
        if let Some(t) = memo.get(text, sig) {
            return t;
        }
        let (r, trace) = parse_command_traced(store, sig, text);
        let Ok(Command::Assert(t, named)) = r else {
            panic!("not an assertion: {text}");
        };
        assert!(named.is_empty());
        memo.put(text, t, trace);
        t
    }

    /// What the engine does with a declaration or definition.
    fn declare(store: &mut TermStore, sig: &mut Signature, text: &str) {
        let (r, _) = parse_command_traced(store, sig, text);
        let cmd = r.unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert!(
            matches!(cmd, Command::DeclareFun { .. } | Command::DefineFun { .. }),
            "not a declaration: {text}"
        );
        cmd.declare_in(store, sig);
    }

    #[test]
    fn entry_holds_only_while_names_mean_the_same() {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        let mut memo = AssertMemo::default();
        let a = "(assert (bvult x (_ bv5 8)))";
        declare(&mut store, &mut sig, "(declare-fun x () (_ BitVec 8))");
        let t1 = assert_term(&mut store, &sig, &mut memo, a);
        assert_eq!(memo.get(a, &sig), Some(t1));
        // The same declaration after a reset: the same term.
        sig = Signature::default();
        assert_eq!(
            memo.get(a, &sig),
            None,
            "x undeclared: the text must be parsed (an error)"
        );
        declare(&mut store, &mut sig, "(declare-fun x () (_ BitVec 8))");
        assert_eq!(memo.get(a, &sig), Some(t1));
        // x redeclared with another sort: parsing again, which now fails to sort-check.
        sig = Signature::default();
        declare(&mut store, &mut sig, "(declare-fun x () (_ BitVec 16))");
        assert_eq!(memo.get(a, &sig), None);
        // x a macro now: the memo must not give the old constant.
        sig = Signature::default();
        declare(
            &mut store,
            &mut sig,
            "(define-fun x () (_ BitVec 8) (_ bv7 8))",
        );
        assert_eq!(memo.get(a, &sig), None);
        let t2 = assert_term(&mut store, &sig, &mut memo, a);
        assert_ne!(t1, t2);
    }

    #[test]
    fn a_let_shadowing_a_global_is_not_a_lookup() {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        let mut memo = AssertMemo::default();
        let a = "(assert (let ((y (_ bv1 8))) (= y (_ bv1 8))))";
        let t = assert_term(&mut store, &sig, &mut memo, a);
        declare(&mut store, &mut sig, "(declare-fun y () (_ BitVec 8))");
        assert_eq!(memo.get(a, &sig), Some(t));
    }
}
