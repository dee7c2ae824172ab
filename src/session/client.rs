//! The client's view of the solver: assertion frames with the declarations, definitions
//! and raw state-changing commands made in each, and the options that matter for answers.
//! Invariant: `frames` is never empty (frame 0 is the base level); `frames.len() - 1` is
//! the client's push depth, and the `Signature` is pushed and popped in step with it. A
//! frame's raw log grows by `push_raw` only, which notes where its assertions are, so a
//! query finds the base level's assertion texts without reading the log again. The
//! declarations and definitions of all frames are kept in one list each, in the order
//! made, a frame's own from where its `decls_from` / `defs_from` says on (frames are
//! pushed by [`ClientState::push_frame`]): a query borrows them whole, where a copy per
//! query cost a session whose declarations grow with it time in their square.

use crate::term::{SortId, Sym, TermId};

/// A declared free symbol, as the backend must be told about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    pub name: String,
    pub sym: Sym,
    pub params: Vec<SortId>,
    pub ret: SortId,
}

#[derive(Clone, Debug, Default)]
pub struct ClientFrame {
    pub assertions: Vec<TermId>,
    pub named: Vec<(String, TermId)>,
    /// Where this frame's declarations and definitions start in the state's lists.
    decls_from: usize,
    defs_from: usize,
    /// Raw text of every state-changing command of this frame, in order (for passthrough
    /// replay into a restarted solver). Added to by `push_raw` only.
    raw: Vec<String>,
    /// Of `raw`, the indices of the assertions, in order.
    raw_assertions: Vec<usize>,
    /// Of `raw`, the assertions a passthrough chosen by cost sent as text, not yet in
    /// `assertions` (indices, in order): parsed when the session goes back to the modelled
    /// route (`Engine::model_unparsed`).
    pub unparsed: Vec<usize>,
}

impl ClientFrame {
    /// The raw text of every state-changing command of this frame, in order.
    pub fn raw(&self) -> &[String] {
        &self.raw
    }

    /// Add `text` to the raw log.
    pub fn push_raw(&mut self, text: &str) {
        if is_assertion(text) {
            self.raw_assertions.push(self.raw.len());
        }
        self.raw.push(text.to_string());
    }

    /// Take the assertions out of the raw log.
    fn drop_raw_assertions(&mut self) {
        self.raw.retain(|r| !is_assertion(r));
        self.raw_assertions.clear();
    }
}

#[derive(Clone, Debug)]
pub struct ClientState {
    pub frames: Vec<ClientFrame>,
    /// Every frame's declared free symbols, outermost frame first.
    decls: Vec<Decl>,
    /// Raw text of definitions the backend must see verbatim (declare-sort, datatypes,
    /// define-fun-rec), in order, outermost frame first.
    defs: Vec<String>,
    pub logic: Option<String>,
    pub print_success: bool,
    pub produce_models: bool,
    /// Options to replay into a fresh backend context: (keyword, value).
    pub options: Vec<(String, String)>,
    /// Raw commands before the first frame that must be replayed (set-logic, set-option).
    pub preamble: Vec<String>,
    /// Something was asserted since the last reset (z3 then refuses set-logic: "logic
    /// must be set before initialization").
    pub asserted: bool,
    /// The client's solver has fixed some of its options since the last reset (z3 at its
    /// first declaration, cvc5 at its first assertion, yices at set-logic: see
    /// `session::set_option`).
    pub initialized: bool,
}

impl Default for ClientState {
    fn default() -> Self {
        ClientState {
            frames: vec![ClientFrame::default()],
            decls: Vec::new(),
            defs: Vec::new(),
            logic: None,
            print_success: false,
            produce_models: false,
            options: Vec::new(),
            preamble: Vec::new(),
            asserted: false,
            initialized: false,
        }
    }
}

/// The keyword of a `(set-option :k v)` command's text.
fn option_keyword(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix('(')?.trim_start();
    let rest = rest.strip_prefix("set-option")?.trim_start();
    let end = rest
        .find(|c: char| c.is_whitespace() || c == ')')
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

impl ClientState {
    /// A new state with print-success and produce-models as given.
    pub fn with_options(print_success: bool, produce_models: bool) -> ClientState {
        ClientState {
            print_success,
            produce_models,
            ..ClientState::default()
        }
    }

    /// Record `(set-option K V)` (its text `text`): the value of K for fresh contexts and
    /// in the preamble, in the place K was first set. Setting an option again replaces
    /// it, so the preamble holds one command per option and does not grow in a session
    /// that sets the same options after every `(reset)`.
    pub fn set_option(&mut self, k: &str, v: &str, text: &str) {
        match self.options.iter_mut().find(|(k2, _)| k2 == k) {
            Some(e) => e.1 = v.to_string(),
            None => self.options.push((k.to_string(), v.to_string())),
        }
        match self
            .preamble
            .iter_mut()
            .find(|c| option_keyword(c) == Some(k))
        {
            Some(c) => *c = text.to_string(),
            None => self.preamble.push(text.to_string()),
        }
    }

    /// The client's text of the term that the live `:named` label `name` names (from the
    /// assertion that named it), or `None` if no live label has that name.
    pub fn label_text(&self, name: &str) -> Option<String> {
        let frame = self
            .frames
            .iter()
            .rev()
            .find(|f| f.named.iter().any(|(n, _)| n == name))?;
        frame
            .raw
            .iter()
            .rev()
            .filter(|r| r.contains(":named") && r.contains(name))
            .find_map(|r| {
                crate::smt2::echo::named_terms(r)
                    .into_iter()
                    .find(|(l, _)| l == name)
                    .map(|(_, t)| t)
            })
    }

    pub fn top(&mut self) -> &mut ClientFrame {
        // frames is never empty
        let n = self.frames.len() - 1;
        &mut self.frames[n]
    }
    /// Open a new frame (the client's `push`).
    pub fn push_frame(&mut self) {
        self.frames.push(ClientFrame {
            decls_from: self.decls.len(),
            defs_from: self.defs.len(),
            ..ClientFrame::default()
        });
    }
    /// Declare `d` in the innermost frame.
    pub fn declare(&mut self, d: Decl) {
        self.decls.push(d);
    }
    /// Define `text` (a raw definition) in the innermost frame.
    pub fn define(&mut self, text: &str) {
        self.defs.push(text.to_string());
    }
    /// The declarations made in the innermost frame.
    pub fn top_decls(&self) -> &[Decl] {
        let from = self.frames.last().map_or(0, |f| f.decls_from);
        &self.decls[from.min(self.decls.len())..]
    }
    pub fn depth(&self) -> usize {
        self.frames.len() - 1
    }
    /// How many assertions the innermost scope holds.
    pub fn top_assertions(&self) -> usize {
        self.frames.last().map_or(0, |f| f.assertions.len())
    }
    /// The last assertion of the innermost scope, if it has any.
    pub fn last_assertion(&self) -> Option<TermId> {
        self.frames.last()?.assertions.last().copied()
    }
    pub fn assertions(&self) -> Vec<TermId> {
        self.frames
            .iter()
            .flat_map(|f| f.assertions.iter().copied())
            .collect()
    }
    /// The text of each base-level assertion, in the order of `frames[0].assertions`
    /// (each assert command adds one of each); all `None` should the two not pair up.
    pub fn base_assertion_texts(&self) -> Vec<Option<&str>> {
        let f = &self.frames[0];
        if f.raw_assertions.len() == f.assertions.len() {
            f.raw_assertions
                .iter()
                .map(|&i| Some(f.raw[i].as_str()))
                .collect()
        } else {
            vec![None; f.assertions.len()]
        }
    }
    pub fn decls(&self) -> &[Decl] {
        &self.decls
    }
    pub fn defs(&self) -> &[String] {
        &self.defs
    }
    pub fn named(&self) -> impl Iterator<Item = &(String, TermId)> {
        self.frames.iter().flat_map(|f| f.named.iter())
    }
    /// Pop the top frame (never the base). With `global` (`:global-declarations true`) what
    /// it declared and defined stays in scope, so it moves to the frame below: declarations,
    /// definitions and their raw commands (its assertions go). Appended there they stay in
    /// the order they were made (a frame's own commands came before its child's, and a
    /// child is popped before its parent), so a replay declares a name before its uses.
    pub fn pop_frame(&mut self, global: bool) {
        if self.frames.len() <= 1 {
            return;
        }
        let Some(f) = self.frames.pop() else {
            return;
        };
        if !global {
            self.decls.truncate(f.decls_from);
            self.defs.truncate(f.defs_from);
        }
        // Kept (global), the frame's declarations and definitions follow the parent's in
        // the lists already: they are the parent's from now on.
        if let (true, Some(parent)) = (global, self.frames.last_mut()) {
            // No assertion moves down, so the parent's `raw_assertions` still holds.
            parent
                .raw
                .extend(f.raw.into_iter().filter(|r| !is_assertion(r)));
        }
    }

    /// The raw command log without the assertions: what the sorts of a command depend on
    /// (declarations, definitions, options, scopes).
    pub fn declarations_log(&self) -> Vec<String> {
        let mut log = self.replay_log();
        log.retain(|c| !is_assertion(c));
        log
    }

    /// The raw command log that rebuilds this state in a fresh solver.
    pub fn replay_log(&self) -> Vec<String> {
        let mut out = self.preamble.clone();
        for (i, f) in self.frames.iter().enumerate() {
            if i > 0 {
                out.push("(push 1)".into());
            }
            out.extend(f.raw.iter().cloned());
        }
        out
    }
    /// Forget every assertion (reset-assertions). With `keep_levels` (z3's behaviour) the
    /// levels stay, with every declaration and definition made in them, and only the
    /// assertions go, from every level. Otherwise (SMT-LIB, cvc5, yices) all levels above
    /// the base go; with `global` (`:global-declarations true`) what they declared and
    /// defined stays in scope, otherwise it goes, and the base level's with it.
    pub fn reset_assertions(&mut self, keep_levels: bool, global: bool) {
        for f in &mut self.frames {
            f.unparsed.clear();
        }
        if keep_levels || global {
            while !keep_levels && self.frames.len() > 1 {
                self.pop_frame(true);
            }
            for f in &mut self.frames {
                f.assertions.clear();
                f.named.clear();
                f.drop_raw_assertions();
            }
            return;
        }
        let mut base = std::mem::take(&mut self.frames[0]);
        self.frames.clear();
        base.assertions.clear();
        base.named.clear();
        self.decls.clear();
        self.defs.clear();
        base.raw.clear();
        base.raw_assertions.clear();
        self.frames.push(base);
    }
}

/// Whether a raw client command is an assertion.
fn is_assertion(raw: &str) -> bool {
    crate::driver::reader::command_head(raw) == Some("assert")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(raw: &[&str]) -> ClientFrame {
        let mut f = ClientFrame::default();
        for r in raw {
            f.push_raw(r);
        }
        f
    }

    /// Each base assertion's text pairs with it, as the raw log changes: assertions and
    /// other commands, a popped level's declarations moved down, assertions dropped.
    #[test]
    fn base_assertion_texts_pair_with_the_base_assertions() {
        let mut c = ClientState::default();
        c.frames[0] = frame(&["(declare-fun x () Int)", "(assert (> x 0))"]);
        c.frames[0].assertions.push(TermId(7));
        c.frames
            .push(frame(&["(declare-fun y () Int)", "(assert (> y 0))"]));
        c.pop_frame(true);
        c.frames[0].push_raw(" ( assert (< x 9))");
        c.frames[0].assertions.push(TermId(8));
        assert_eq!(
            c.base_assertion_texts(),
            vec![Some("(assert (> x 0))"), Some(" ( assert (< x 9))")]
        );
        // An assertion without its text (or the reverse): no text at all.
        c.frames[0].assertions.push(TermId(9));
        assert_eq!(c.base_assertion_texts(), vec![None, None, None]);
        c.reset_assertions(true, false);
        c.frames[0].push_raw("(assert (= x 1))");
        c.frames[0].assertions.push(TermId(10));
        assert_eq!(c.base_assertion_texts(), vec![Some("(assert (= x 1))")]);
    }

    /// `unparsed` indexes `raw`: reset-assertions takes the assertions out of `raw`, so
    /// none of the indices may outlive it.
    #[test]
    fn reset_assertions_leaves_no_unparsed_assertion() {
        for keep_levels in [false, true] {
            let mut c = ClientState::default();
            c.frames[0] = frame(&["(declare-fun x () Int)", "(assert (> x 0))"]);
            c.frames[0].unparsed.push(1);
            c.frames.push(frame(&["(assert (< x 9))"]));
            c.frames[1].unparsed.push(0);
            c.reset_assertions(keep_levels, false);
            assert!(c.frames.iter().all(|f| f.unparsed.is_empty()));
            assert!(c
                .frames
                .iter()
                .all(|f| f.raw.iter().all(|r| !is_assertion(r))));
        }
    }

    #[test]
    fn global_declarations_of_popped_frames_stay_in_order() {
        let mut c = ClientState::default();
        c.frames[0] = frame(&["(declare-fun x () Int)"]);
        c.frames
            .push(frame(&["(declare-fun y () Int)", "(assert (> y 0))"]));
        c.frames.push(frame(&[
            "(define-fun z () Int (+ y 1))",
            "(assert (= z 5))",
        ]));
        c.pop_frame(true);
        c.pop_frame(true);
        assert_eq!(c.depth(), 0);
        assert_eq!(
            c.replay_log(),
            [
                "(declare-fun x () Int)",
                "(declare-fun y () Int)",
                "(define-fun z () Int (+ y 1))"
            ]
        );
        // Without global declarations the frame goes whole; the base is never popped.
        c.frames.push(frame(&["(declare-fun w () Int)"]));
        c.pop_frame(false);
        c.pop_frame(false);
        assert_eq!(c.depth(), 0);
        assert_eq!(c.replay_log().len(), 3);
    }

    #[test]
    fn reset_assertions_keeping_levels_forgets_every_spelling_of_assert() {
        let mut c = ClientState::default();
        c.frames[0] = frame(&["(declare-fun x () Int)", "( assert (> x 0))"]);
        c.frames
            .push(frame(&["(assert\n(< x 0))", "(declare-fun y () Int)"]));
        let mut smtlib = c.clone();
        c.reset_assertions(true, false);
        assert_eq!(
            c.replay_log(),
            [
                "(declare-fun x () Int)",
                "(push 1)",
                "(declare-fun y () Int)"
            ]
        );
        // SMT-LIB under :global-declarations: the levels go, the declarations stay.
        smtlib.reset_assertions(false, true);
        assert_eq!(
            smtlib.replay_log(),
            ["(declare-fun x () Int)", "(declare-fun y () Int)"]
        );
    }

    #[test]
    fn options_set_again_replace_the_earlier_setting() {
        let mut c = ClientState::default();
        c.preamble.push("(set-logic QF_BV)".into());
        c.set_option(":a", "1", "(set-option :a 1)");
        c.set_option(":b", "x", "(set-option  :b x)");
        c.set_option(":a", "2", "(set-option :a 2)");
        c.set_option(":a", "2", "(set-option\n:a 2)");
        assert_eq!(
            c.options,
            [(":a".into(), "2".into()), (":b".into(), "x".into())]
        );
        assert_eq!(
            c.preamble,
            [
                "(set-logic QF_BV)",
                "(set-option\n:a 2)",
                "(set-option  :b x)"
            ]
        );
        assert_eq!(
            option_keyword("(set-option :tactic.x false)"),
            Some(":tactic.x")
        );
        assert_eq!(option_keyword("(set-logic ALL)"), None);
    }

    fn decl(name: &str) -> Decl {
        Decl {
            name: name.into(),
            sym: Sym(0),
            params: Vec::new(),
            ret: SortId(0),
        }
    }

    fn names(c: &ClientState) -> Vec<&str> {
        c.decls().iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn declarations_live_as_long_as_their_frame() {
        let mut c = ClientState::default();
        c.declare(decl("a"));
        c.define("(declare-sort S 0)");
        c.push_frame();
        assert!(c.top_decls().is_empty());
        c.declare(decl("b"));
        c.push_frame();
        c.declare(decl("c"));
        c.define("(declare-sort T 0)");
        assert_eq!(names(&c), ["a", "b", "c"]);
        assert_eq!(c.top_decls().len(), 1);
        c.pop_frame(false);
        assert_eq!(names(&c), ["a", "b"]);
        assert_eq!(c.defs(), ["(declare-sort S 0)"]);
        assert_eq!(c.top_decls()[0].name, "b");
        // Global declarations: what the popped frame declared is its parent's now.
        c.push_frame();
        c.declare(decl("d"));
        c.pop_frame(true);
        assert_eq!(names(&c), ["a", "b", "d"]);
        assert_eq!(c.top_decls().len(), 2);
        c.pop_frame(false);
        assert_eq!(names(&c), ["a"]);
        // z3's reset-assertions keeps them; SMT-LIB's drops them with the levels.
        c.push_frame();
        c.declare(decl("e"));
        c.reset_assertions(true, false);
        assert_eq!(names(&c), ["a", "e"]);
        c.reset_assertions(false, false);
        assert!(c.decls().is_empty() && c.defs().is_empty());
        assert_eq!(c.depth(), 0);
    }
}
