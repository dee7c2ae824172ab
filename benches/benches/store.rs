//! The on-disk store as the engine meets it, on a store of 20,000 entries: a lookup that
//! misses (what a new query asks first), one that hits, and a put followed by a lookup
//! (a solved component stored, the next component looked up), with the writes inline
//! (the engine commits every 64th put itself) and behind (a thread of their own). A put
//! and a lookup back to back, as fast as they go, outrun the writer thread: that figure
//! is the writer's pace (a put waits once 16,384 are buffered); puts in runs of a
//! thousand, their writes waited for outside the clock, are what a put costs the engine
//! while the writer keeps up.
//!
//! `cargo bench -p smtproxy-benches --bench store`

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use smtproxy::cache::{DiskStore, Entry, Key, Store};
use std::path::Path;
use std::time::{Duration, Instant};

/// Entries in the store before the lookups.
const FILLED: u32 = 20_000;

fn key(i: u32) -> Key {
    let h = blake3::hash(&i.to_le_bytes());
    Key(h.as_bytes()[..16].try_into().expect("16 bytes"))
}

/// A sat entry with a model of the size a KLEE component's has (a few bytes of array).
fn entry(i: u32) -> Entry {
    Entry::sat(Some(format!(
        "((arr0 ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x{:02x})))",
        i % 256
    )))
}

fn filled(path: &Path) {
    let mut s = DiskStore::open(path).expect("open");
    for i in 0..FILLED {
        s.put(&key(i), &entry(i)).expect("put");
    }
    s.flush().expect("flush");
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g = c.benchmark_group("store");
    for behind in [false, true] {
        let mode = if behind { "behind" } else { "inline" };
        let path = dir.path().join(format!("{mode}.sqlite3"));
        filled(&path);
        let mut s = DiskStore::open(&path).expect("open");
        if behind {
            s = s.write_behind().expect("write behind");
        }
        if !behind {
            // Reads do not depend on who writes: measured once, on a quiet store.
            let mut i = FILLED;
            g.bench_function("get miss", |b| {
                b.iter(|| {
                    i += 1;
                    black_box(s.get(&key(i)).expect("get"))
                })
            });
            let mut i = 0;
            g.bench_function("get hit", |b| {
                b.iter(|| {
                    i = (i + 7919) % FILLED;
                    black_box(s.get(&key(i)).expect("get"))
                })
            });
        }
        // New keys from far above the lookups' range.
        let mut i = 1 << 30;
        g.bench_function(format!("put then get miss, writes {mode}"), |b| {
            b.iter(|| {
                i += 2;
                s.put(&key(i), &entry(i)).expect("put");
                black_box(s.get(&key(i + 1)).expect("get"))
            })
        });
        // Puts alone, in runs of a thousand whose writes are waited for outside the clock:
        // what a put costs the engine while the writes keep up (inline, the commit of
        // every 64th put is the engine's).
        let mut j = 1 << 29;
        g.bench_function(format!("put, writes {mode}"), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let n = left.min(1000);
                    let t = Instant::now();
                    for _ in 0..n {
                        j += 1;
                        s.put(&key(j), &entry(j)).expect("put");
                    }
                    spent += t.elapsed();
                    s.flush().expect("flush");
                    left -= n;
                }
                spent
            })
        });
        s.flush().expect("flush");
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);
