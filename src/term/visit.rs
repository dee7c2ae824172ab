//! Pooled scratch tables for DAG walks. Slicing, canonicalisation, model evaluation and
//! the cache path walk every query several times, each walk with its own visited set or
//! memo table; growing a fresh hash table from nothing for each walk (rehash after
//! rehash) was a measurable share of a cache hit. A [`Pooled`] table is taken from a small
//! per-thread pool of its type and given back, cleared, when dropped. Invariants: a table
//! is empty when taken; nested walks get distinct tables; a table that grew past
//! `KEEP_MAX` entries is freed rather than pooled (so one huge query does not make every
//! later clear cost a huge memset); at most `POOL_MAX` tables per type and thread.

use super::TermId;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::hash::Hash;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

/// Largest capacity a returned table may have to be kept.
const KEEP_MAX: usize = 1 << 16;
/// Tables kept per type and thread.
const POOL_MAX: usize = 8;

/// A table that can be emptied for reuse.
pub trait Scratch: Default + 'static {
    fn clear_for_reuse(&mut self);
    fn capacity(&self) -> usize;
}

impl<K: Hash + Eq + 'static> Scratch for FxHashSet<K> {
    fn clear_for_reuse(&mut self) {
        self.clear();
    }
    fn capacity(&self) -> usize {
        FxHashSet::capacity(self)
    }
}

impl<K: Hash + Eq + 'static, V: 'static> Scratch for FxHashMap<K, V> {
    fn clear_for_reuse(&mut self) {
        self.clear();
    }
    fn capacity(&self) -> usize {
        FxHashMap::capacity(self)
    }
}

/// The pool a [`Pooled`] table comes from and goes back to.
pub type Pool<T> = LocalKey<RefCell<Vec<T>>>;

/// An empty table from `pool`, given back cleared when dropped (see the module doc).
pub struct Pooled<T: Scratch> {
    table: T,
    pool: &'static Pool<T>,
}

impl<T: Scratch> Pooled<T> {
    pub fn take(pool: &'static Pool<T>) -> Pooled<T> {
        let table = pool.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        Pooled { table, pool }
    }
}

impl<T: Scratch> Deref for Pooled<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.table
    }
}

impl<T: Scratch> DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.table
    }
}

impl<T: Scratch> Drop for Pooled<T> {
    fn drop(&mut self) {
        if self.table.capacity() > KEEP_MAX {
            return;
        }
        let mut table = std::mem::take(&mut self.table);
        table.clear_for_reuse();
        // try_with: during thread teardown the pool may already be gone.
        let _ = self.pool.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() < POOL_MAX {
                    p.push(table);
                }
            }
        });
    }
}

thread_local! {
    static VISITED: RefCell<Vec<FxHashSet<TermId>>> = const { RefCell::new(Vec::new()) };
}

/// A set of visited term ids for one walk.
pub type Visited = Pooled<FxHashSet<TermId>>;

impl Visited {
    pub fn new() -> Visited {
        Pooled::take(&VISITED)
    }
}

impl Default for Visited {
    fn default() -> Visited {
        Visited::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taken_sets_are_empty_and_distinct() {
        let mut a = Visited::new();
        a.insert(TermId(1));
        {
            let mut b = Visited::new();
            assert!(b.is_empty());
            b.insert(TermId(2));
            assert!(!a.contains(&TermId(2)));
        }
        drop(a);
        // Both went back cleared: whatever is taken now is empty.
        let c = Visited::new();
        let d = Visited::new();
        assert!(c.is_empty() && d.is_empty());
    }
}
