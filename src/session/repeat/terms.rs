//! The terms of the trie's assertions, kept so that a block which follows a path and then
//! needs its assertions parsed (it parts from the path, or a command reads them) gets each
//! one by renaming the term an earlier block on the same path built, not by parsing its
//! text again. On a recorded Manticore session half the blocks part from their path, late,
//! and parsing the assertions they held was the largest cost left.
//!
//! Why renaming is right: a node's path fixes the block's declarations up to the names
//! (the trie's invariants: equal name-free bytes from the same root, every declared name
//! plain), so the assertion at a node parses, in any block that reaches it, to the term an
//! earlier block's parse built with that block's constants replaced, ordinal by ordinal, by
//! this block's (up to the fresh symbols of bound variables, which the walk below does not
//! meet: it refuses binders).
//!
//! Invariants:
//! * An entry maps a node to its assertion's term as the block that parsed it built it,
//!   with that block's declared constants by ordinal.
//!   The term handed out is that term with each of those constants replaced by this
//!   block's constant of the same ordinal and sort; it is made only when asked for, so a
//!   node whose term no later block needs costs nothing but its entry (KLEE's logs keep
//!   their names, so there the renaming interns nothing either). Only blocks whose every
//!   declaration so far is a constant (`declare-const`, a `declare-fun` of no parameters)
//!   record or rename: a declared function would be an operator, which renaming terms
//!   cannot reach, and would take an ordinal.
//! * Every id held is of the current term store: the table is emptied when the store is
//!   collected (`Engine::collect_terms`), and with the trie (whose node numbers it uses).
//! * The rename gives up (None: the caller parses) on any term that holds a binder, an
//!   operator or attribute kept as text (`Other`, `Annot`: text that could hold a name),
//!   or a constant it does not rename: one declared outside the recording block, one
//!   this block has not declared yet, or one whose counterpart here has another sort.
//! * Memory is bounded: past `TERM_TABLE_BYTES` of entries and constant lists the table
//!   is emptied at the next block; the flat map holds one slot per id of the term store
//!   (which is collected past its own bound), and is emptied with it.

use crate::term::{Op, TermId, TermStore};
use rustc_hash::FxHashMap;

/// Bound on the bytes the table holds.
const TERM_TABLE_BYTES: usize = 8 << 20;

/// A node's assertion as a block parsed it.
#[derive(Clone, Copy)]
struct Recorded {
    term: TermId,
    /// The recording block (an index into `TermTable::blocks`).
    block: u32,
}

#[derive(Default)]
pub struct TermTable {
    terms: FxHashMap<u32, Recorded>,
    /// The declared constants of each block that recorded a term, by ordinal; the current
    /// block's are `consts` until it ends.
    blocks: Vec<Box<[TermId]>>,
    bytes: usize,
    /// The current block's declared constants by ordinal.
    consts: Vec<TermId>,
    /// Whether every declaration of the current block so far is a constant.
    constant_only: bool,
    /// The current block's index in `blocks` once it has recorded a term.
    recording: Option<u32>,
    /// The renaming of the block last renamed from (`from`) to the current block: its
    /// constants, then the terms renamed; `mapped` of its constants are in it.
    map: TermMap,
    from: Option<u32>,
    mapped: usize,
}

/// A map of terms, flat by id: emptied in one step (a new epoch), and read without
/// hashing (a renaming looks up every node it meets).
#[derive(Default)]
struct TermMap {
    /// The epoch each id's entry was written in; an entry of another epoch is absent.
    stamp: Vec<u32>,
    image: Vec<TermId>,
    epoch: u32,
}

impl TermMap {
    fn clear(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
    }

    #[inline]
    fn get(&self, t: TermId) -> Option<TermId> {
        let i = t.0 as usize;
        (self.epoch != 0 && self.stamp.get(i) == Some(&self.epoch)).then(|| self.image[i])
    }

    fn insert(&mut self, t: TermId, v: TermId) {
        if self.epoch == 0 {
            self.epoch = 1;
        }
        let i = t.0 as usize;
        if self.stamp.len() <= i {
            let n = (i + 1).next_power_of_two();
            self.stamp.resize(n, 0);
            self.image.resize(n, TermId(0));
        }
        self.stamp[i] = self.epoch;
        self.image[i] = v;
    }
}

impl TermTable {
    /// Forget every term (the store was collected, or the trie emptied).
    pub fn clear(&mut self) {
        *self = TermTable::default();
    }

    /// A new block begins. The table is emptied first past its bound.
    pub fn open(&mut self) {
        self.close();
        if self.bytes > TERM_TABLE_BYTES {
            self.clear();
        }
        self.consts.clear();
        self.constant_only = true;
        self.map.clear();
        self.from = None;
        self.mapped = 0;
    }

    /// The current block ends: its constants are kept if it recorded a term.
    fn close(&mut self) {
        if let Some(b) = self.recording.take() {
            let consts: Box<[TermId]> = self.consts.as_slice().into();
            self.bytes += 4 * consts.len() + 16;
            if let Some(slot) = self.blocks.get_mut(b as usize) {
                *slot = consts;
            }
        }
    }

    /// The block declared a constant (`Some`, its term) or something else (None: the block
    /// records and renames nothing from here on).
    pub fn declared(&mut self, constant: Option<TermId>) {
        match constant {
            Some(c) if self.constant_only => self.consts.push(c),
            _ => self.constant_only = false,
        }
    }

    /// Keep `term`, parsed from node `node`'s assertion in this block.
    pub fn record(&mut self, node: u32, term: TermId) {
        if self.terms.contains_key(&node) || !self.constant_only {
            return;
        }
        let block = match self.recording {
            Some(b) => b,
            None => {
                let Ok(b) = u32::try_from(self.blocks.len()) else {
                    return;
                };
                self.blocks.push(Box::default());
                self.recording = Some(b);
                b
            }
        };
        self.terms.insert(node, Recorded { term, block });
        self.bytes += 16;
    }

    /// Whether node `node`'s assertion has a term kept.
    #[cfg(test)]
    fn has(&self, node: u32) -> bool {
        self.terms.contains_key(&node)
    }

    /// The term of node `node`'s assertion in this block: the kept term with this block's
    /// constants. None when there is none, or it cannot be renamed.
    pub fn renamed(&mut self, store: &mut TermStore, node: u32) -> Option<TermId> {
        let r = *self.terms.get(&node)?;
        if !self.constant_only {
            return None;
        }
        if self.recording == Some(r.block) {
            // Recorded by this very block.
            return Some(r.term);
        }
        let old = self.blocks.get(r.block as usize)?;
        if self.from != Some(r.block) {
            self.map.clear();
            self.from = Some(r.block);
            self.mapped = 0;
        }
        // The recording block's constants to this block's of the same ordinal and sort.
        let n = old.len().min(self.consts.len());
        for k in self.mapped..n {
            let (o, c) = (old[k], self.consts[k]);
            if store.sort(o) == store.sort(c) {
                self.map.insert(o, c);
            }
        }
        self.mapped = self.mapped.max(n);
        rename(store, r.term, &mut self.map)
    }
}

/// `t` with every subterm renamed by `map` (constants to constants, and the subterms
/// renamed so far), iteratively (a deep term does not reach the stack's bound); None on a
/// binder, a term kept as text, or a constant `map` does not rename (one the earlier block
/// declared and this one has not yet, or one declared outside the block).
fn rename(store: &mut TermStore, t: TermId, map: &mut TermMap) -> Option<TermId> {
    let mut stack = vec![(t, false)];
    let mut args = Vec::new();
    while let Some((u, children_done)) = stack.pop() {
        if map.get(u).is_some() {
            continue;
        }
        let node = store.node(u);
        match node.op {
            Op::Other(_) | Op::Annot(_) | Op::Forall(_) | Op::Exists(_) => return None,
            Op::Sym(_) if node.args.is_empty() => return None,
            _ if node.args.is_empty() => continue,
            _ => {}
        }
        if !children_done {
            stack.push((u, true));
            stack.extend(
                node.args
                    .iter()
                    .filter(|&&a| map.get(a).is_none())
                    .map(|&a| (a, false)),
            );
            continue;
        }
        let (op, sort) = (node.op, node.sort);
        args.clear();
        // What the map does not hold is a literal: itself.
        args.extend(node.args.iter().map(|&a| map.get(a).unwrap_or(a)));
        let r = if args.as_slice() == node.args {
            u
        } else {
            store.intern_slice(op, &args, sort)
        };
        map.insert(u, r);
    }
    Some(map.get(t).unwrap_or(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_is_renamed_ordinal_by_ordinal() {
        let mut s = TermStore::new();
        let bv8 = s.sorts.bv(8);
        let (a1, a2) = (s.mk_const("a_1", bv8), s.mk_const("a_2", bv8));
        let (a3, a4) = (s.mk_const("a_3", bv8), s.mk_const("a_4", bv8));
        let t = s.mk_eq(a1, a2).unwrap();
        let mut table = TermTable::default();
        table.open();
        table.declared(Some(a1));
        table.declared(Some(a2));
        table.record(7, t);
        assert_eq!(table.renamed(&mut s, 7), Some(t));
        table.open();
        table.declared(Some(a3));
        // a_2's counterpart is not declared yet: no term.
        assert_eq!(table.renamed(&mut s, 7), None);
        table.declared(Some(a4));
        let want = s.mk_eq(a3, a4).unwrap();
        assert_eq!(table.renamed(&mut s, 7), Some(want));
        // The same names the other way round swap the constants.
        table.open();
        table.declared(Some(a2));
        table.declared(Some(a1));
        let swapped = s.mk_eq(a2, a1).unwrap();
        assert_eq!(table.renamed(&mut s, 7), Some(swapped));
        // A block that declared a function renames and records nothing.
        table.open();
        table.declared(None);
        table.record(8, t);
        assert!(!table.has(8));
        assert_eq!(table.renamed(&mut s, 7), None);
    }

    #[test]
    fn another_sort_or_a_term_kept_as_text_is_not_renamed() {
        let mut s = TermStore::new();
        let (bv8, bv16) = (s.sorts.bv(8), s.sorts.bv(16));
        let (a1, b1) = (s.mk_const("a_1", bv8), s.mk_const("b_1", bv16));
        let t = s.mk_eq(a1, a1).unwrap();
        let mut table = TermTable::default();
        table.open();
        table.declared(Some(a1));
        table.record(1, t);
        let other = s.mk_other("(_ as-array a_1)", vec![], bv8);
        let t2 = s.mk_eq(other, a1).unwrap();
        table.record(2, t2);
        // A constant declared outside the block is not renamed either.
        let g = s.mk_const("g", bv8);
        let t3 = s.mk_eq(g, a1).unwrap();
        table.record(3, t3);
        table.open();
        table.declared(Some(b1));
        assert_eq!(table.renamed(&mut s, 1), None);
        table.open();
        let a2 = s.mk_const("a_2", bv8);
        table.declared(Some(a2));
        let want = s.mk_eq(a2, a2).unwrap();
        assert_eq!(table.renamed(&mut s, 1), Some(want));
        assert_eq!(table.renamed(&mut s, 2), None);
        assert_eq!(table.renamed(&mut s, 3), None);
        // Under the recording block's own names, a term is handed out as it was built.
        table.open();
        table.declared(Some(a1));
        assert_eq!(table.renamed(&mut s, 1), Some(t));
        assert_eq!(table.renamed(&mut s, 3), None);
    }
}
