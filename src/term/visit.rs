//! Pooled sets of term ids for DAG walks. Slicing, canonicalisation and the cache path
//! walk every query several times, each walk with its own visited set; growing a fresh
//! hash set from nothing for each walk (rehash after rehash) was a measurable share of a
//! cache hit. A [`Visited`] is taken from a small per-thread pool and given back, cleared,
//! when dropped. Invariants: a `Visited` is empty when taken; nested walks get distinct
//! sets; a set that grew past [`KEEP_MAX`] entries is freed rather than pooled (so one
//! huge query does not make every later clear cost a huge memset).

use super::TermId;
use rustc_hash::FxHashSet;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// Largest capacity a returned set may have to be kept.
const KEEP_MAX: usize = 1 << 16;
/// Sets kept per thread.
const POOL_MAX: usize = 8;

thread_local! {
    static POOL: RefCell<Vec<FxHashSet<TermId>>> = const { RefCell::new(Vec::new()) };
}

/// An empty set of term ids from the pool (see the module doc).
pub struct Visited(FxHashSet<TermId>);

impl Visited {
    pub fn new() -> Visited {
        let set = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
        debug_assert!(set.is_empty());
        Visited(set)
    }
}

impl Default for Visited {
    fn default() -> Self {
        Visited::new()
    }
}

impl Deref for Visited {
    type Target = FxHashSet<TermId>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Visited {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Visited {
    fn drop(&mut self) {
        if self.0.capacity() > KEEP_MAX {
            return;
        }
        let mut set = std::mem::take(&mut self.0);
        set.clear();
        // try_with: during thread teardown the pool may already be gone.
        let _ = POOL.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() < POOL_MAX {
                    p.push(set);
                }
            }
        });
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
