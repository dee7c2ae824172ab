//! Blocks repeated under fresh names, answered without parsing them again: a trie of the
//! blocks run since a `(reset)` (Memoise's trie of path prefixes), each command as its
//! name-free bytes (`smt2::alpha`), with what the block's check-sat answered. A symbolic
//! executor that re-declares every query after a `(reset)` (Manticore) sends about half its
//! queries again under new names; each such query costs smtproxy a parse of every
//! assertion and an evaluation of the model, where the client's answer was known from the
//! first command on.
//!
//! While a block follows a path of the trie, its assertions are kept as text, not parsed
//! ("deferred"); a check-sat at a node that holds an answer gives that answer, with the
//! node's model read onto the block's own constants for get-value and get-model. Anything
//! else first parses the deferred assertions into the client's view (`materialize`), so
//! the engine goes on exactly as if it had parsed them when they came.
//!
//! Invariants:
//! * A path is only ever extended by a command the modelled engine ran without a word to
//!   the client but `success`, in a block that began at a `(reset)`, from the same state
//!   kept across resets (`Repeats::begin`), with no `push`, `pop`, objective, `:named`
//!   term or `|quoted|` symbol, and no declaration or definition of a name the signature
//!   already knows or the parser reads as a theory's symbol (`bvadd`, a name declared
//!   before). Under those conditions a command whose bytes equal an edge's, after a path
//!   of equal bytes, is the same command up to a one-to-one renaming of the block's
//!   declared names: it parses as that edge's did (without error), and the block so far
//!   is that path's query renamed. Edges are found by a hash and taken only when the
//!   bytes are equal.
//! * A node's answer is what the modelled engine answered there: `unsat`, or `sat` with a
//!   model as text (a value per declared constant, in declaration order) that smtproxy
//!   read back onto that block's constants and evaluated true on every one of its
//!   assertions before keeping it (or found equal to the model it had evaluated true on
//!   them before answering). `unknown` is never kept. So a sat served from a node
//!   comes with a model evaluated true on a query that differs from the client's only by
//!   the names of its constants.
//! * A deferred assertion has every effect of an assertion on the session (`success`,
//!   the flags `interpret` sets) except its term; the term is added, in order, before any
//!   command that could read the assertions, and before any that is not on the trie.
//! * Memory is bounded: past `REPEAT_BYTES` (edges' bytes and the nodes' answers), the
//!   trie is emptied at the next reset.
//! * The trie may have been made by an earlier session over the same disk store, under
//!   the same settings and from the same root (`persist`): its nodes were made under
//!   these invariants there, and it is read back exactly as it was written.

mod persist;
mod terms;

use super::cache_stage::{model_from_text, model_satisfies, model_to_text, BlockText};
use super::vocab::{Answer, Outcome};
use super::{Engine, Last, Mode};
use crate::smt2::command::Command;
use crate::smt2::parser::is_builtin_symbol;
pub use persist::TrieFile;
use rustc_hash::FxHashMap;
use std::hash::BuildHasher;
use terms::TermTable;

/// Bound on the bytes the trie holds (and on its file: the store's budget knows it).
const REPEAT_BYTES: usize = crate::cache::budget::TRIE_MAX as usize;

/// What a check-sat at a node answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Known {
    Unsat,
    /// A model as text (`cache_stage::model_to_text`), evaluated true on the query.
    Sat(Box<str>),
}

struct Node {
    /// The edge's command into this node, as name-free bytes: `bytes[start..end]`.
    start: u32,
    end: u32,
    /// The first child made (most paths do not branch: a block follows its path through
    /// nodes made one after another, near each other in memory); the others are in
    /// `edges`.
    first: u32,
    known: Option<Known>,
}

/// No node (node 0, the root, is no one's child).
const NONE: u32 = 0;

/// A command among a node's children (`Repeats::slot`).
enum Slot {
    /// The child it leads to.
    Found(u32),
    /// Another command holds its hash.
    Taken,
    /// No child yet: the node's first (None) or one by this hash.
    Free(Option<u64>),
}

/// The trie of blocks; node 0 is the state just after a `(reset)`.
pub struct Repeats {
    nodes: Vec<Node>,
    /// Every edge's bytes, one after another.
    bytes: Vec<u8>,
    /// Children past a node's first, by the parent and a hash of their bytes.
    edges: FxHashMap<(u32, u64), u32>,
    /// Bytes of the nodes' answers.
    answers: usize,
    /// The state kept across a reset that the paths start from (z3's options).
    root: String,
    hasher: rustc_hash::FxBuildHasher,
    /// The terms of the nodes' assertions, for blocks that need theirs parsed.
    terms: TermTable,
    /// Where the trie is kept between sessions (`persist`), if anywhere.
    file: Option<TrieFile>,
    /// Nodes made and answers kept so far: the trie changed since it was written.
    changes: u64,
    /// Nodes the trie had when it was loaded from its file (kept when it is emptied).
    loaded_nodes: u64,
}

impl Default for Repeats {
    fn default() -> Self {
        Repeats {
            nodes: vec![Node {
                start: 0,
                end: 0,
                first: NONE,
                known: None,
            }],
            bytes: Vec::new(),
            edges: FxHashMap::default(),
            answers: 0,
            root: String::new(),
            hasher: Default::default(),
            terms: TermTable::default(),
            file: None,
            changes: 0,
            loaded_nodes: 0,
        }
    }
}

impl Repeats {
    /// What the trie holds, in bytes (edges, nodes, answers).
    fn size(&self) -> usize {
        self.bytes.len() + self.nodes.len() * 48 + self.edges.len() * 24 + self.answers
    }

    /// A block begins after a reset that kept `root` (the options z3 keeps): the root
    /// node. At the session's first block, the trie saved by an earlier session is
    /// loaded when there is one for `root` (`persist`). The trie is emptied first when it
    /// was built from another kept state or has grown past its bound, else written when
    /// it changed and has doubled since it last was, or was last written a while ago.
    pub fn begin(&mut self, root: &str) -> u32 {
        self.load(root);
        if self.root != root || self.size() > REPEAT_BYTES {
            let (file, changes, loaded_nodes) = (self.file.take(), self.changes, self.loaded_nodes);
            *self = Repeats {
                root: root.to_string(),
                file,
                changes,
                loaded_nodes,
                ..Repeats::default()
            };
            self.restart_saves();
        } else {
            self.save(false);
        }
        0
    }

    /// At the end of the session: the trie is written if it changed.
    pub fn end(&mut self) {
        self.save(true);
    }

    /// Nodes of the trie that came from its file.
    pub fn loaded_nodes(&self) -> u64 {
        self.loaded_nodes
    }

    fn edge(&self, n: u32) -> &[u8] {
        let node = &self.nodes[n as usize];
        &self.bytes[node.start as usize..node.end as usize]
    }

    /// Where the command `cmd` (name-free bytes) stands among the children of `at`; None
    /// when there is no node `at`.
    fn slot(&self, at: u32, cmd: &[u8]) -> Option<Slot> {
        let first = self.nodes.get(at as usize)?.first;
        if first == NONE {
            return Some(Slot::Free(None));
        }
        if self.edge(first) == cmd {
            return Some(Slot::Found(first));
        }
        let h = self.hasher.hash_one(cmd);
        Some(match self.edges.get(&(at, h)) {
            Some(&n) if self.edge(n) == cmd => Slot::Found(n),
            Some(_) => Slot::Taken,
            None => Slot::Free(Some(h)),
        })
    }

    /// The node the command `cmd` (name-free bytes) leads to from `at`, if any.
    pub fn child(&self, at: u32, cmd: &[u8]) -> Option<u32> {
        match self.slot(at, cmd)? {
            Slot::Found(n) => Some(n),
            Slot::Taken | Slot::Free(_) => None,
        }
    }

    /// The node `cmd` leads to from `at`, made if there is none; None when another
    /// command holds the edge's hash (the path then ends), or past 2^32 nodes or bytes.
    pub fn extend(&mut self, at: u32, cmd: &[u8]) -> Option<u32> {
        let hash = match self.slot(at, cmd)? {
            Slot::Found(n) => return Some(n),
            Slot::Taken => return None,
            Slot::Free(hash) => hash,
        };
        let n = u32::try_from(self.nodes.len()).ok()?;
        let start = u32::try_from(self.bytes.len()).ok()?;
        let end = u32::try_from(self.bytes.len() + cmd.len()).ok()?;
        self.bytes.extend_from_slice(cmd);
        self.changes += 1;
        self.nodes.push(Node {
            start,
            end,
            first: NONE,
            known: None,
        });
        match hash {
            None => self.nodes[at as usize].first = n,
            Some(h) => {
                self.edges.insert((at, h), n);
            }
        }
        Some(n)
    }

    /// Forget every term held (the term store was collected).
    pub fn forget_terms(&mut self) {
        self.terms.clear();
    }

    /// What a check-sat answered at node `at`.
    pub fn known(&self, at: u32) -> Option<&Known> {
        self.nodes.get(at as usize)?.known.as_ref()
    }

    /// Keep `k` as the answer at node `at`.
    pub fn set_known(&mut self, at: u32, k: Known) {
        if let Some(node) = self.nodes.get_mut(at as usize) {
            if let Known::Sat(text) = &k {
                self.answers += text.len();
            }
            node.known = Some(k);
            self.changes += 1;
        }
    }
}

/// A deferred assertion: where its text is in `Walk::texts`, and where the client's
/// input had it.
struct Deferred {
    /// The node the assertion leads to.
    node: u32,
    start: usize,
    end: usize,
    line: usize,
    col: usize,
}

/// Where the current block stands in the trie.
pub struct Walk {
    /// The node the block's commands so far lead to.
    at: u32,
    /// Whether `at` was found (its commands were run before), not made by this block.
    following: bool,
    /// The assertions not parsed yet, in order (only while following), and their texts.
    deferred: Vec<Deferred>,
    texts: String,
    /// The block's check-sat was answered from the trie (the deferred assertions stand
    /// behind the answer).
    answered: bool,
}

/// A declaration whose name might read as something else in another block: a name the
/// signature knows (a theory's symbol, an earlier declaration), a reserved word, a
/// literal or keyword, a quoted symbol.
fn unplain_name(sig: &crate::term::signature::Signature, name: &str) -> bool {
    let first = name.bytes().next().unwrap_or(b'0');
    first.is_ascii_digit()
        || matches!(first, b'#' | b':' | b'|' | b'"')
        || matches!(
            name,
            "true" | "false" | "let" | "forall" | "exists" | "!" | "_" | "as" | "match" | "par"
        )
        || is_builtin_symbol(name)
        || sig.has_fun(name)
}

/// The name a `declare-fun`, `declare-const`, `define-fun` or `define-const` introduces:
/// the token at `at`, the offset past its head (`lex::command_parts`, as `smt2::alpha`
/// finds it).
fn declared_name(text: &str, at: usize) -> Option<&str> {
    let end = crate::smt2::lex::token_end(text.as_bytes(), at);
    text.get(at..end).filter(|n| !n.is_empty())
}

impl Engine {
    /// At a reset: follow the next block in the trie, when check-sats go through the
    /// cache stage and the session is modelled.
    pub(super) fn begin_walk(&mut self) {
        self.walk = None;
        if self.mode != Mode::Modelled || self.block.is_none() || !self.planner.caches() {
            return;
        }
        let root = self.client.preamble.join("\n");
        let at = self.repeats.begin(&root);
        self.repeats.terms.open();
        self.walk = Some(Walk {
            at,
            following: true,
            deferred: Vec::new(),
            texts: String::new(),
            answered: false,
        });
    }

    /// A command of a followed block (`self.walk` is set; `self.block` has it already);
    /// `parts` are its `lex::command_parts`.
    pub(super) fn walk_command(
        &mut self,
        text: &str,
        parts: Option<(&str, usize)>,
        line: usize,
        col: usize,
    ) -> Outcome {
        let Some(mut walk) = self.walk.take() else {
            return self.run(text, line, col);
        };
        let (head, after_head) = parts.unwrap_or(("", 0));
        if head == "reset" {
            // The reset empties the client's view: the deferred assertions go with it.
            return self.run(text, line, col);
        }
        if walk.answered {
            return match head {
                // They read the model, not the assertions.
                "get-value" | "get-model" => {
                    self.walk = Some(walk);
                    self.run(text, line, col)
                }
                _ => {
                    self.materialize(walk);
                    self.run(text, line, col)
                }
            };
        }
        let declares = matches!(head, "declare-fun" | "declare-const");
        // Every command that names a symbol the block's key numbers (`smt2::alpha`).
        let names = declares || matches!(head, "define-fun" | "define-const");
        // Commands this block cannot hold on a path.
        let plain = self.mode == Mode::Modelled
            && self.objective.is_none()
            && self.block.as_ref().is_some_and(|b| !b.last_opaque())
            && !matches!(head, "push" | "pop" | "check-sat-assuming")
            && !(names
                && declared_name(text, after_head).is_none_or(|n| unplain_name(&self.sig, n)));
        let cmd = self.block.as_ref().map(|b| b.last_command());
        let child = match (plain && walk.following, cmd) {
            (true, Some(cmd)) => self.repeats.child(walk.at, cmd),
            _ => None,
        };
        match (head, child) {
            ("assert", Some(n)) => {
                walk.at = n;
                let start = walk.texts.len();
                walk.texts.push_str(text);
                walk.deferred.push(Deferred {
                    node: n,
                    start,
                    end: walk.texts.len(),
                    line,
                    col,
                });
                self.walk = Some(walk);
                self.assertion_effects();
                self.success();
                return Outcome::default();
            }
            ("check-sat", Some(n)) => {
                if let Some(k) = self.repeats.known(n).cloned() {
                    if let Some(a) = self.answer_known(&k) {
                        walk.at = n;
                        walk.answered = true;
                        self.walk = Some(walk);
                        return Outcome {
                            check: Some(a),
                            ..Outcome::default()
                        };
                    }
                }
            }
            _ => {}
        }
        // Run it as any command, the deferred assertions first unless it is a
        // declaration that follows the path.
        if !(declares && child.is_some()) {
            walk = self.materialize_keeping(walk);
        }
        let said = self.said;
        let asserted = self.client.top_assertions();
        // Held where a fall-back finds it (`settle_walk`).
        self.walk = Some(walk);
        let out = self.run(text, line, col);
        let Some(mut walk) = self.walk.take() else {
            return out;
        };
        let clean = plain
            && self.said == said
            && self.mode == Mode::Modelled
            && self.ended.is_none()
            && !out.exit;
        if head == "check-sat" {
            if plain && self.mode == Mode::Modelled && walk.deferred.is_empty() {
                self.keep_answer(walk.at, out.check);
            }
            return out;
        }
        let next = match (clean, child) {
            (false, _) => None,
            (true, Some(n)) => Some(n),
            (true, None) => {
                walk.following = false;
                let cmd = self.block.as_ref().map(|b| b.last_command());
                cmd.and_then(|cmd| self.repeats.extend(walk.at, cmd))
            }
        };
        match next {
            Some(n) => {
                walk.at = n;
                if names {
                    let constant = self.declared_constant(declares);
                    self.repeats.terms.declared(constant);
                } else if head == "assert" && self.client.top_assertions() == asserted + 1 {
                    if let Some(t) = self.client.last_assertion() {
                        self.repeats.terms.record(n, t);
                    }
                }
                self.walk = Some(walk);
            }
            None => self.materialize(walk),
        }
        out
    }

    /// The term of the constant the last command declared (`declares`: it was a
    /// `declare-fun` or `declare-const`); None for a function or a definition.
    fn declared_constant(&mut self, declares: bool) -> Option<crate::term::TermId> {
        let d = self.client.top_decls().last().filter(|_| declares)?;
        let (sym, ret, constant) = (d.sym, d.ret, d.params.is_empty());
        constant.then(|| self.store.mk_sym_app(sym, Vec::new(), ret))
    }

    /// The answer `k` kept at a node, given to the block's check-sat; None when its model
    /// does not read onto this block's constants (the check-sat is then run).
    fn answer_known(&mut self, k: &Known) -> Option<Answer> {
        let (a, model) = match k {
            Known::Unsat => (Answer::Unsat, None),
            Known::Sat(text) => {
                let m = model_from_text(&mut self.store, self.client.decls(), text)?;
                (Answer::Sat, Some(m))
            }
        };
        self.optimum = None;
        self.optimum_interval = None;
        self.planner.hold(model);
        match a {
            Answer::Sat => self.stats.model_hits += 1,
            _ => self.stats.cache_hits += 1,
        }
        self.stats.block_repeats += 1;
        self.answered(a, &[]);
        Some(a)
    }

    /// Keep what the block's check-sat answered (`a`) at the node its path reaches with
    /// that check-sat: unsat, or sat with smtproxy's own model as text, read back from the
    /// text and evaluated true on the query (by the cache stage's block hints, or here).
    fn keep_answer(&mut self, at: u32, a: Option<Answer>) {
        let known = match a {
            Some(Answer::Unsat) => Known::Unsat,
            Some(Answer::Sat) => match self.model_text_to_keep() {
                Some(text) => Known::Sat(text.into()),
                None => return,
            },
            _ => return,
        };
        let Some(block) = self.block.as_ref() else {
            return;
        };
        if let Some(n) = self.repeats.extend(at, block.last_command()) {
            self.repeats.set_known(n, known);
        }
    }

    /// The last check-sat's model as text, read back and evaluated true on the client's
    /// query; None when smtproxy holds no model of its own or it does not pass. The model
    /// smtproxy holds was evaluated true on this very query before it answered (the cache
    /// stage answers sat only so), so a text that reads back as that same model needs no
    /// second evaluation (most do: 888 of 914 on a KLEE log, every one on others); one that
    /// reads back otherwise (a value the text does not carry as it was) is evaluated.
    fn model_text_to_keep(&mut self) -> Option<String> {
        let made = match self.planner.model_block_text() {
            Some(BlockText::Checked(text)) => return Some(text.to_string()),
            Some(BlockText::Made(text)) => Some(text.to_string()),
            None => None,
        };
        let m = self.planner.own_model()?.clone();
        let decls = self.client.decls();
        let text = match made {
            Some(t) => t,
            None => model_to_text(&mut self.store, decls, &m)?,
        };
        let back = model_from_text(&mut self.store, decls, &text)?;
        if back == m {
            return Some(text);
        }
        model_satisfies(&self.store, &back, &self.client.assertions()).then_some(text)
    }

    /// Before the client's state goes to a solver (a fall-back to passthrough): the
    /// deferred assertions into the client's view, and the walk ends.
    pub(super) fn settle_walk(&mut self) {
        if let Some(walk) = self.walk.take() {
            self.materialize(walk);
        }
    }

    /// Parse the deferred assertions into the client's view, in order, as `interpret`
    /// would have when they came (their `success` was given then); the walk ends.
    fn materialize(&mut self, walk: Walk) {
        let _ = self.materialize_keeping(walk);
    }

    /// `materialize`, and the walk as it stands, deferring nothing.
    fn materialize_keeping(&mut self, mut walk: Walk) -> Walk {
        if walk.deferred.is_empty() {
            return walk;
        }
        // An answer given from the trie stays the answer.
        let last = std::mem::replace(&mut self.last, Last::None);
        let print_success = std::mem::replace(&mut self.client.print_success, false);
        let said = self.said;
        let mut texts = std::mem::take(&mut walk.texts);
        for d in std::mem::take(&mut walk.deferred) {
            let text = &texts[d.start..d.end];
            // The term an earlier block on this path parsed, renamed to this block's
            // constants, is the one parsing the text would build (see `terms`).
            match self.repeats.terms.renamed(&mut self.store, d.node) {
                Some(t) => {
                    self.stats.renamed_assertions += 1;
                    self.run_parsed(Command::Assert(t, Vec::new()), text, d.line, d.col);
                }
                None => {
                    let (said, asserted) = (self.said, self.client.top_assertions());
                    self.run(text, d.line, d.col);
                    match self.client.last_assertion() {
                        Some(t)
                            if self.said == said
                                && self.client.top_assertions() == asserted + 1 =>
                        {
                            self.repeats.terms.record(d.node, t);
                        }
                        _ => {}
                    }
                }
            }
        }
        texts.clear();
        walk.texts = texts;
        self.client.print_success = print_success;
        if walk.answered {
            self.last = last;
        }
        if self.said != said {
            self.stats
                .note("a deferred assertion did not run as its path's had (answered late)".into());
        }
        walk
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt2::lex::command_parts;

    #[test]
    fn edges_are_taken_by_their_bytes() {
        let mut r = Repeats::default();
        let root = r.begin("");
        let a = r.extend(root, b"(assert x)").unwrap();
        let b = r.extend(a, b"(check-sat)").unwrap();
        assert_eq!(r.child(root, b"(assert x)"), Some(a));
        assert_eq!(r.child(a, b"(check-sat)"), Some(b));
        assert_eq!(r.child(root, b"(check-sat)"), None);
        assert_eq!(r.child(root, b"(assert y)"), None);
        // Extending along a path finds the same nodes.
        assert_eq!(r.extend(root, b"(assert x)"), Some(a));
        assert_eq!(r.known(b), None);
        r.set_known(b, Known::Unsat);
        assert_eq!(r.known(b), Some(&Known::Unsat));
    }

    #[test]
    fn another_kept_state_or_the_bound_empties_the_trie() {
        let mut r = Repeats::default();
        let root = r.begin("(set-option :a 1)");
        let a = r.extend(root, b"(assert x)").unwrap();
        assert_eq!(r.begin("(set-option :a 1)"), root);
        assert_eq!(r.child(root, b"(assert x)"), Some(a));
        r.begin("(set-option :a 2)");
        assert_eq!(r.child(root, b"(assert x)"), None);
        let mut at = r.begin("");
        let big = vec![b'x'; 1 << 16];
        for i in 0..(REPEAT_BYTES >> 16) + 1 {
            let mut cmd = big.clone();
            cmd.extend_from_slice(&i.to_le_bytes());
            at = r.extend(at, &cmd).unwrap();
        }
        assert!(r.size() > REPEAT_BYTES);
        r.begin("");
        assert_eq!(r.nodes.len(), 1);
        assert!(r.bytes.is_empty());
    }

    #[test]
    fn declared_names_that_could_read_otherwise_are_not_plain() {
        let sig = crate::term::signature::Signature::default();
        for n in [
            "bvadd", "true", "let", "|a|", "#x0", "1a", ":k", "select", "=",
        ] {
            assert!(unplain_name(&sig, n), "{n}");
        }
        for n in ["a_1", "BITVEC", "x"] {
            assert!(!unplain_name(&sig, n), "{n}");
        }
        let name = |text| {
            let (_, at) = command_parts(text)?;
            declared_name(text, at)
        };
        assert_eq!(name("(declare-fun  a_1 () Int)"), Some("a_1"));
        assert_eq!(name("(declare-fun ; a comment\n a_2 () Int)"), Some("a_2"));
        // A quoted name is cut at its space, and is not plain either way.
        let quoted = name("( declare-const |a b| Int)").unwrap_or("");
        assert!(unplain_name(&sig, quoted), "{quoted}");
        assert_eq!(name("(declare-fun)"), None);
    }
}
