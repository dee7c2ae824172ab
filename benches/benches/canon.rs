//! Canonical form + key per KLEE query, the cache strategy's per-query front end:
//! `view::conjuncts`, `slice::slice`, `canon::canonicalize` per component, `key::key`.
//!
//! `cold`: each iteration gets a term store freshly parsed from the log (parsing not timed),
//! so the normalised/canonical terms are built for the first time, as on a query the
//! session has not seen. `warm`: the same store again and again (every canonical term is
//! already hash-consed: the cost of a repeated query).

mod common;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use smtproxy::query::{canon::canonicalize, key::key, slice::slice, view::conjuncts};
use smtproxy::term::TermStore;

fn canon_all(store: &mut TermStore, queries: &[common::Query]) -> usize {
    let mut n = 0;
    for q in queries {
        let cs = conjuncts(store, &q.assertions);
        for comp in slice(store, &cs) {
            let canon = canonicalize(store, &comp.conjuncts);
            let k = key(&canon.text, "QF_AUFBV", &[]);
            n += k[0] as usize;
        }
    }
    n
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("canon");
    for rel in common::QUERY_LOGS {
        let text = common::load(rel);
        let nq = common::parse_queries(&text).queries.len();
        g.throughput(Throughput::Elements(nq as u64));
        g.bench_function(format!("cold/{}", common::short(rel)), |b| {
            b.iter_batched(
                || common::parse_queries(&text),
                |mut p| {
                    let n = canon_all(&mut p.store, black_box(&p.queries));
                    (n, p)
                },
                BatchSize::PerIteration,
            )
        });
        let mut p = common::parse_queries(&text);
        g.bench_function(format!("warm/{}", common::short(rel)), |b| {
            b.iter(|| canon_all(&mut p.store, black_box(&p.queries)))
        });
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);
