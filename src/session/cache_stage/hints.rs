//! Models by block: the model of the last `sat` answered for a block of commands since a
//! `(reset)`, under the block's name-free key (`smt2::alpha`). A symbolic executor that
//! re-declares each query under fresh names sends the same block many times (a recorded
//! Manticore session: 16,978 of its 19,120 queries repeat an earlier one up to names); the
//! next time, the model is read back onto the new names and evaluated, with no slicing,
//! keys or model search.
//!
//! Invariants:
//! * A hint is only a candidate: `find` returns a model only when it evaluates to true on
//!   every assertion and assumption of the client's query (`satisfies`), so a stale or
//!   colliding key costs one evaluation, never an answer. Unsat is never hinted.
//! * A model is kept as text, one value per declared constant in declaration order (the
//!   order the key numbers them in), so it outlives a collection of the term store, and
//!   the same text goes into the result store as a sat entry under the block's key (a
//!   fixed, versioned hash kept apart from component keys: `smt2::alpha`), for the next
//!   run, when it is at most `STORED_MAX` bytes. The text read back from there is held to
//!   the same evaluation. The engine keys only blocks that can come again
//!   (`Block::repeatable`).
//! * Memory is bounded: entries (key and text) past `HINT_BYTES` are dropped, least
//!   recently used first.

use super::model::{decode_model, encode_model, satisfies};
use crate::query::eval::Model;
use crate::session::client::Decl;
use crate::smt2::alpha::BlockKey;
use crate::term::{TermId, TermStore};
use lru::LruCache;

/// Bound on the bytes the hints hold.
const HINT_BYTES: usize = 16 << 20;
/// The longest model text that also goes into the result store (a block of a few hundred
/// constants; Manticore's queries declare about 120).
const STORED_MAX: usize = 16 << 10;

pub struct BlockHints {
    map: LruCache<BlockKey, Box<str>>,
    bytes: usize,
}

impl Default for BlockHints {
    fn default() -> Self {
        BlockHints {
            map: LruCache::unbounded(),
            bytes: 0,
        }
    }
}

/// What an entry of `text` counts against `HINT_BYTES` (its text and the map's slot).
fn entry_bytes(text: &str) -> usize {
    text.len() + std::mem::size_of::<(BlockKey, Box<str>)>() * 2
}

/// The declared constants of the query in declaration order, as leaves; None when one is
/// a function (its model is not kept as a value).
fn constants(store: &mut TermStore, decls: &[Decl]) -> Option<Vec<(usize, TermId)>> {
    decls
        .iter()
        .enumerate()
        .map(|(i, d)| {
            d.params
                .is_empty()
                .then(|| (i, store.mk_sym_app(d.sym, Vec::new(), d.ret)))
        })
        .collect()
}

/// `m` as the text a block's model is kept as: one value per declared constant of
/// `decls`, in declaration order (None when one of them is a function).
pub fn model_to_text(store: &mut TermStore, decls: &[Decl], m: &Model) -> Option<String> {
    let order = constants(store, decls)?;
    encode_model(store, m, &order)
}

/// A text of `model_to_text` read back onto `decls` (None when it does not fit them).
pub fn model_from_text(store: &mut TermStore, decls: &[Decl], text: &str) -> Option<Model> {
    let order = constants(store, decls)?;
    decode_model(store, text, &order)
}

impl BlockHints {
    /// The model kept for `key` (in memory, or else the text `stored` returns: the result
    /// store's entry for the block, from another run), read onto `decls` and evaluated to
    /// true on `whole` (the query's assertions and assumptions), with its text. A stored
    /// text that passes is kept in memory for the next time.
    pub fn find(
        &mut self,
        store: &mut TermStore,
        key: &BlockKey,
        decls: &[Decl],
        whole: &[TermId],
        stored: impl FnOnce() -> Option<String>,
    ) -> Option<(Model, Box<str>)> {
        let order = constants(store, decls)?;
        if let Some(text) = self.map.get(key) {
            let m = decode_model(store, text, &order)?;
            return satisfies(store, &m, whole).then(|| (m, text.clone()));
        }
        let text = stored()?;
        let m = decode_model(store, &text, &order)?;
        if !satisfies(store, &m, whole) {
            return None;
        }
        self.insert(*key, text.clone());
        Some((m, text.into()))
    }

    /// Keep `m`, a model that satisfies the query of block `key`, for the next block with
    /// that key. Returns the text made of `m` (None when the block has one kept already or
    /// `m` has no text), and whether it is new here and at most `STORED_MAX` bytes (then
    /// it is for the result store too).
    pub fn keep(
        &mut self,
        store: &mut TermStore,
        key: BlockKey,
        decls: &[Decl],
        m: &Model,
    ) -> Option<(String, bool)> {
        if self.map.contains(&key) {
            return None;
        }
        let order = constants(store, decls)?;
        let text = encode_model(store, m, &order)?;
        let kept = self.insert(key, text.clone());
        let stored = kept && text.len() <= STORED_MAX;
        Some((text, stored))
    }

    /// Add `text` under `key` (false when it is too big to keep), dropping the least
    /// recently used past the bound.
    fn insert(&mut self, key: BlockKey, text: String) -> bool {
        let size = entry_bytes(&text);
        if size > HINT_BYTES / 4 {
            return false;
        }
        self.bytes += size;
        if let Some(old) = self.map.put(key, text.into_boxed_str()) {
            self.bytes -= entry_bytes(&old);
        }
        while self.bytes > HINT_BYTES {
            let Some((_, t)) = self.map.pop_lru() else {
                break;
            };
            self.bytes -= entry_bytes(&t);
        }
        true
    }
}
