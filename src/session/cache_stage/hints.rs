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
//!   order the key numbers them in), so it outlives a collection of the term store.
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

impl BlockHints {
    /// The model kept for `key`, read onto `decls` and evaluated to true on `whole` (the
    /// query's assertions and assumptions).
    pub fn find(
        &mut self,
        store: &mut TermStore,
        key: &BlockKey,
        decls: &[Decl],
        whole: &[TermId],
    ) -> Option<Model> {
        let text = self.map.get(key)?;
        let order = constants(store, decls)?;
        let m = decode_model(store, text, &order)?;
        satisfies(store, &m, whole).then_some(m)
    }

    /// Keep `m`, a model that satisfies the query of block `key`, for the next block with
    /// that key.
    pub fn keep(&mut self, store: &mut TermStore, key: BlockKey, decls: &[Decl], m: &Model) {
        if self.map.contains(&key) {
            return;
        }
        let Some(order) = constants(store, decls) else {
            return;
        };
        let Some(text) = encode_model(store, m, &order) else {
            return;
        };
        let size = text.len() + std::mem::size_of::<(BlockKey, Box<str>)>() * 2;
        if size > HINT_BYTES / 4 {
            return;
        }
        self.bytes += size;
        self.map.put(key, text.into_boxed_str());
        while self.bytes > HINT_BYTES {
            let Some((_, t)) = self.map.pop_lru() else {
                break;
            };
            self.bytes -= t.len() + std::mem::size_of::<(BlockKey, Box<str>)>() * 2;
        }
    }
}
