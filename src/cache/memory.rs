//! The in-process tier: an LRU map bounded both by entry count and by approximate
//! bytes (key + model length, see [`Entry::approx_size`]). Least recently used
//! entries (a `get` hit counts as a use) are evicted until both bounds hold; an
//! entry larger than the whole byte budget is not stored at all.

use super::{CacheError, Entry, Key, Store};
use lru::LruCache;

pub struct MemoryStore {
    map: LruCache<Key, Entry>,
    max_entries: usize,
    max_bytes: usize,
    bytes: usize,
}

impl MemoryStore {
    pub fn new(max_entries: usize, max_bytes: usize) -> MemoryStore {
        MemoryStore {
            map: LruCache::unbounded(),
            max_entries,
            max_bytes,
            bytes: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Approximate bytes held (sum of [`Entry::approx_size`]).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Presence test that does not count as a use.
    pub fn contains(&self, k: &Key) -> bool {
        self.map.contains(k)
    }

    pub fn get_entry(&mut self, k: &Key) -> Option<Entry> {
        self.map.get(k).cloned()
    }

    pub fn put_entry(&mut self, k: &Key, e: &Entry) {
        let size = e.approx_size();
        if size > self.max_bytes || self.max_entries == 0 {
            // Would evict everything and still not fit; drop any stale copy.
            if let Some(old) = self.map.pop(k) {
                self.bytes -= old.approx_size();
            }
            return;
        }
        if let Some(old) = self.map.put(*k, e.clone()) {
            self.bytes -= old.approx_size();
        }
        self.bytes += size;
        while self.map.len() > self.max_entries || self.bytes > self.max_bytes {
            match self.map.pop_lru() {
                Some((_, old)) => self.bytes -= old.approx_size(),
                None => break,
            }
        }
    }
}

impl Store for MemoryStore {
    fn get(&mut self, k: &Key) -> Result<Option<Entry>, CacheError> {
        Ok(self.get_entry(k))
    }

    fn put(&mut self, k: &Key, e: &Entry) -> Result<(), CacheError> {
        self.put_entry(k, e);
        Ok(())
    }

    fn name(&self) -> &'static str {
        "memory"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::ENTRY_OVERHEAD;

    fn key(i: u32) -> Key {
        let mut k = [0u8; 16];
        k[..4].copy_from_slice(&i.to_le_bytes());
        Key(k)
    }

    #[test]
    fn memory_evicts_by_count() {
        let mut m = MemoryStore::new(3, usize::MAX);
        for i in 0..3 {
            m.put_entry(&key(i), &Entry::unsat());
        }
        assert!(m.get_entry(&key(0)).is_some()); // 0 is now most recent
        m.put_entry(&key(3), &Entry::unsat());
        assert_eq!(m.len(), 3);
        assert!(m.contains(&key(0)));
        assert!(!m.contains(&key(1)), "LRU entry should be evicted");
        assert!(m.contains(&key(2)) && m.contains(&key(3)));
    }

    #[test]
    fn memory_evicts_by_bytes() {
        // Each entry: ENTRY_OVERHEAD + 88 = 200 bytes.
        let e = Entry::sat(Some("x".repeat(200 - ENTRY_OVERHEAD)));
        let mut m = MemoryStore::new(1000, 700);
        for i in 0..3 {
            m.put_entry(&key(i), &e);
        }
        assert_eq!(m.bytes(), 600);
        m.put_entry(&key(3), &e);
        assert_eq!(m.len(), 3);
        assert!(m.bytes() <= 700);
        assert!(!m.contains(&key(0)));
        // A big entry evicts several.
        let big = Entry::sat(Some("y".repeat(600 - ENTRY_OVERHEAD)));
        m.put_entry(&key(9), &big);
        assert_eq!(m.len(), 1);
        assert_eq!(m.get_entry(&key(9)), Some(big));
        // An entry larger than the budget is not stored.
        let huge = Entry::sat(Some("z".repeat(700)));
        m.put_entry(&key(10), &huge);
        assert!(!m.contains(&key(10)));
        assert!(m.contains(&key(9)));
    }

    #[test]
    fn memory_replace_keeps_byte_count() {
        let mut m = MemoryStore::new(10, 10_000);
        m.put_entry(&key(1), &Entry::sat(Some("abc".into())));
        m.put_entry(&key(1), &Entry::sat(Some("abcdef".into())));
        assert_eq!(m.len(), 1);
        assert_eq!(m.bytes(), ENTRY_OVERHEAD + 6);
    }
}
