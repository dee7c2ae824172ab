//! Slicing alone: `query::slice::slice` on each KLEE query's conjuncts (computed outside
//! the timed loop). Reported per query (criterion `Throughput::Elements` = queries).

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use smtproxy::query::{slice::slice, view::conjuncts};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("slice");
    for rel in common::QUERY_LOGS {
        let text = common::load(rel);
        let mut p = common::parse_queries(&text);
        let cs: Vec<_> = p
            .queries
            .iter()
            .map(|q| conjuncts(&mut p.store, &q.assertions))
            .collect();
        let comps: usize = cs.iter().map(|c| slice(&p.store, c).len()).sum();
        eprintln!(
            "slice/{}: {} queries, {} conjuncts, {} components",
            common::short(rel),
            cs.len(),
            cs.iter().map(|c| c.len()).sum::<usize>(),
            comps
        );
        g.throughput(Throughput::Elements(cs.len() as u64));
        let store = &p.store;
        g.bench_function(common::short(rel), |b| {
            b.iter(|| {
                let mut n = 0;
                for c in &cs {
                    n += slice(store, black_box(c)).len();
                }
                n
            })
        });
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);
