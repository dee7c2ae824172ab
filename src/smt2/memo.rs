//! Memo of parsed assertions and get-values. A symbolic executor sends the same
//! `(assert ...)` text over and over (in a KLEE log that bypasses KLEE's own caches, 30-47%
//! of the assertion bytes repeat earlier ones exactly), and the same get-values after every
//! query (`(get-value ((select input (_ bv0 32))))` sixteen times for each of sort's);
//! parsing is the largest cost of a query answered from the cache.
//!
//! Invariants:
//! * An entry maps the exact command text to the command its parse built and to the
//!   signature lookups that parse made (`parser::Trace`). It is used only while every one of
//!   those names still stands for the same declaration, definition or sort, so the command
//!   is the one parsing the text again would build (up to the fresh internal symbols given
//!   to bound variables, which no one outside the term can see).
//! * Only assertions that name no terms (`:named` defines a function) and get-values are
//!   kept, and only when they parsed without error: errors are reported afresh every time,
//!   and every other command is parsed every time.
//! * A text is kept the second time it is parsed, not the first: a doorkeeper of the
//!   hashes of texts parsed once (`SEEN_MAX` of them) lets the first parse skip the trace
//!   and the copy. A client that re-declares every query under fresh names (Manticore)
//!   repeats almost no assertion text, and filled the memo with texts never asked again.
//! * Memory is bounded: the memo is emptied when its entries (texts, commands and traces,
//!   as `entry_bytes` counts them) exceed `MEMO_BYTES`, the doorkeeper when it holds
//!   `SEEN_MAX` hashes.

use super::command::Command;
use super::lex::command_head;
use super::parser::{parse_command, parse_command_traced, ParseError, Trace};
use crate::term::signature::Signature;
use crate::term::TermStore;
use rustc_hash::{FxHashMap, FxHashSet};
use std::hash::BuildHasher;

/// Bound on the bytes held by entries (the terms themselves live in the term store anyway).
const MEMO_BYTES: usize = 64 << 20;
/// Commands that look up more names than this are not kept (checking the entry would
/// cost about as much as parsing).
const MEMO_MAX_NAMES: usize = 64;

pub struct CommandMemo {
    map: FxHashMap<Box<str>, (Command, Trace)>,
    bytes: usize,
    /// Hashes of the texts parsed once and not kept (the doorkeeper).
    seen: FxHashSet<u64>,
}

/// Bound on the doorkeeper's hashes (8 bytes each, and the table's slack).
const SEEN_MAX: usize = 1 << 18;

/// Entries a new memo has room for: a KLEE query alone keeps an assertion and sixteen
/// get-values, so a table grown from nothing would be rebuilt four times in its first query.
const MEMO_START: usize = 64;

impl Default for CommandMemo {
    fn default() -> CommandMemo {
        CommandMemo {
            map: FxHashMap::with_capacity_and_hasher(MEMO_START, Default::default()),
            bytes: 0,
            seen: FxHashSet::default(),
        }
    }
}

impl CommandMemo {
    /// The command `text` under `sig`: from the memo when it was parsed before and the
    /// names it used still mean the same, else parsed (and kept if it may be).
    pub fn parse(
        &mut self,
        store: &mut TermStore,
        sig: &Signature,
        text: &str,
    ) -> Result<Command, ParseError> {
        if !matches!(command_head(text), Some("assert" | "get-value")) {
            return parse_command(store, sig, text);
        }
        if let Some(c) = self.get(text, sig) {
            return Ok(c);
        }
        if self.first_time(text) {
            return parse_command(store, sig, text);
        }
        let (r, trace) = parse_command_traced(store, sig, text);
        if let Ok(c) = &r {
            self.put(text, c, trace);
        }
        r
    }

    /// Whether `text` is parsed for the first time as far as the doorkeeper knows (it
    /// remembers it from now on).
    fn first_time(&mut self, text: &str) -> bool {
        let h = rustc_hash::FxBuildHasher.hash_one(text);
        if self.seen.contains(&h) {
            return false;
        }
        if self.seen.len() >= SEEN_MAX {
            self.seen.clear();
        }
        self.seen.insert(h);
        true
    }

    /// The command `text` parsed earlier, if the names it used still mean the same.
    pub fn get(&self, text: &str, sig: &Signature) -> Option<Command> {
        let (c, trace) = self.map.get(text)?;
        trace.holds(sig).then(|| c.clone())
    }

    /// Keep the command `text` parsed to under `sig` lookups `trace`, if it is an
    /// assertion naming no terms or a get-value.
    pub fn put(&mut self, text: &str, cmd: &Command, trace: Trace) {
        let keep = match cmd {
            Command::Assert(_, named) => named.is_empty(),
            Command::GetValue(_) => true,
            _ => false,
        };
        if !keep || trace.len() > MEMO_MAX_NAMES || text.len() > MEMO_BYTES / 4 {
            return;
        }
        let size = entry_bytes(text, cmd, &trace);
        if self.bytes + size > MEMO_BYTES {
            self.map = FxHashMap::with_capacity_and_hasher(MEMO_START, Default::default());
            self.bytes = 0;
        }
        self.bytes += size;
        self.map.insert(text.into(), (cmd.clone(), trace));
    }
}

/// What an entry holds on the heap, near enough: its key text, the get-value texts its
/// command keeps, its trace's names and the table's slot.
fn entry_bytes(text: &str, cmd: &Command, trace: &Trace) -> usize {
    let kept = match cmd {
        Command::GetValue(ts) => ts.iter().map(|(_, s)| s.len() + 32).sum(),
        _ => 0,
    };
    text.len() + kept + trace.heap_bytes() + 2 * std::mem::size_of::<(Box<str>, (Command, Trace))>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::TermId;

    fn assert_term(
        store: &mut TermStore,
        sig: &Signature,
        memo: &mut CommandMemo,
        text: &str,
    ) -> TermId {
        match memo.parse(store, sig, text) {
            Ok(Command::Assert(t, named)) if named.is_empty() => t,
            r => panic!("not an assertion: {text}: {r:?}"),
        }
    }

    /// The memo's term for `text`, if it has one that holds.
    fn memo_term(memo: &CommandMemo, text: &str, sig: &Signature) -> Option<TermId> {
        match memo.get(text, sig)? {
            Command::Assert(t, _) => Some(t),
            c => panic!("not an assertion: {c:?}"),
        }
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
        let mut memo = CommandMemo::default();
        let a = "(assert (bvult x (_ bv5 8)))";
        declare(&mut store, &mut sig, "(declare-fun x () (_ BitVec 8))");
        let t1 = assert_term(&mut store, &sig, &mut memo, a);
        // Kept the second time it is parsed (the doorkeeper), not the first.
        assert_eq!(memo_term(&memo, a, &sig), None);
        assert_eq!(assert_term(&mut store, &sig, &mut memo, a), t1);
        assert_eq!(memo_term(&memo, a, &sig), Some(t1));
        // The same declaration after a reset: the same term.
        sig = Signature::default();
        assert_eq!(
            memo_term(&memo, a, &sig),
            None,
            "x undeclared: the text must be parsed (an error)"
        );
        declare(&mut store, &mut sig, "(declare-fun x () (_ BitVec 8))");
        assert_eq!(memo_term(&memo, a, &sig), Some(t1));
        // x redeclared with another sort: parsing again, which now fails to sort-check.
        sig = Signature::default();
        declare(&mut store, &mut sig, "(declare-fun x () (_ BitVec 16))");
        assert_eq!(memo_term(&memo, a, &sig), None);
        // x a macro now: the memo must not give the old constant.
        sig = Signature::default();
        declare(
            &mut store,
            &mut sig,
            "(define-fun x () (_ BitVec 8) (_ bv7 8))",
        );
        assert_eq!(memo_term(&memo, a, &sig), None);
        let t2 = assert_term(&mut store, &sig, &mut memo, a);
        assert_ne!(t1, t2);
    }

    #[test]
    fn a_let_shadowing_a_global_is_not_a_lookup() {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        let mut memo = CommandMemo::default();
        let a = "(assert (let ((y (_ bv1 8))) (= y (_ bv1 8))))";
        let t = assert_term(&mut store, &sig, &mut memo, a);
        assert_eq!(assert_term(&mut store, &sig, &mut memo, a), t);
        declare(&mut store, &mut sig, "(declare-fun y () (_ BitVec 8))");
        assert_eq!(memo_term(&memo, a, &sig), Some(t));
    }

    #[test]
    fn get_values_are_kept_with_their_texts_while_names_hold() {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        let mut memo = CommandMemo::default();
        declare(
            &mut store,
            &mut sig,
            "(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))",
        );
        let g = "(get-value ((select a (_ bv0 32)) (select  a #x00000001)))";
        let first = memo.parse(&mut store, &sig, g).expect("parses");
        assert_eq!(memo.get(g, &sig), None, "kept only when parsed again");
        assert_eq!(memo.parse(&mut store, &sig, g).expect("parses"), first);
        let Command::GetValue(terms) = &first else {
            panic!("not a get-value: {first:?}");
        };
        let texts: Vec<&str> = terms.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(texts, ["(select a (_ bv0 32))", "(select  a #x00000001)"]);
        assert_eq!(memo.get(g, &sig), Some(first.clone()));
        // `a` redeclared with another element sort: the old terms must not come back.
        sig = Signature::default();
        declare(
            &mut store,
            &mut sig,
            "(declare-fun a () (Array (_ BitVec 32) (_ BitVec 16)))",
        );
        assert_eq!(memo.get(g, &sig), None);
        let second = memo.parse(&mut store, &sig, g).expect("parses");
        assert_ne!(first, second);
        assert_eq!(memo.get(g, &sig), Some(second));
        // Undeclared: an error every time, and nothing kept for it.
        sig = Signature::default();
        assert!(memo.parse(&mut store, &sig, g).is_err());
        assert!(memo.parse(&mut store, &sig, g).is_err());
        // Other commands are not kept.
        memo.parse(&mut store, &sig, "(check-sat)").expect("parses");
        assert_eq!(memo.get("(check-sat)", &sig), None);
    }
}
