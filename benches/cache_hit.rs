//! A cache-hit answer end to end: query text in, answer out. An engine with the `cache`
//! strategy (memory tier only) is warmed by replaying a KLEE log once; then each query's
//! command sequence (`set-option`, `set-logic`, declarations, assertion, `check-sat`,
//! `get-value`s, and its `(exit)` fed as `(reset)` as `replay` does) is fed again: framing,
//! parsing, planning (slice, canonical key, lookup, model check) and answering. Outside the
//! timing, the engine's `solver_checks` must not grow: every timed query is a hit.
//!
//! Besides criterion's figure (mean per query over the whole log, per sample), each query is
//! also timed individually in a separate pass and the per-query median/p90 printed. These
//! repeated queries are answered from the session's memos (as KLEE's repeats are); a last
//! pass drops the memos before each query and times the hits that then come from the result
//! store (slicing, canonical key, lookup, model check), as a new session would see them.

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use smtproxy::cache::tiered::CacheConfig;
use smtproxy::session::{engine_for, Engine, Strategy};
use smtproxy::smt2::reader::{CommandReader, Frame};
use std::time::Instant;

const LOGS: &[&str] = &[
    "sbase-expr/solver-queries.smt2.gz",
    "regexp/solver-queries.smt2.gz",
    "sort/solver-queries.smt2.gz",
];

/// Each KLEE record's commands as one text, `(exit)` replaced by `(reset)`.
fn records(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for f in CommandReader::new(text.as_bytes()) {
        let Frame::Command(c) = f else { continue };
        if c.text == "(exit)" || c.text == "(reset)" {
            cur.push_str("(reset)\n");
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push_str(&c.text);
            cur.push('\n');
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

fn feed(engine: &mut Engine, rec: &str) -> usize {
    let mut checks = 0;
    for f in CommandReader::new(rec.as_bytes()) {
        checks += usize::from(engine.handle(f).check.is_some());
    }
    checks
}

fn bench(c: &mut Criterion) {
    let solver = std::env::var("SMTPROXY_BENCH_SOLVER").unwrap_or_else(|_| "z3".into());
    let mut g = c.benchmark_group("cache_hit");
    for rel in LOGS {
        let text = common::load(rel);
        let recs: Vec<String> = records(&text)
            .into_iter()
            .filter(|r| r.contains("(check-sat)"))
            .collect();
        let cfg = CacheConfig {
            mem_entries: 100_000,
            mem_bytes: 64 << 20,
            disk: None,
            redis: None,
        };
        let mut engine = engine_for(
            Strategy::Cache,
            Some(&solver),
            None,
            Some(cfg),
            Box::new(std::io::sink()),
        )
        .expect("engine");
        // Warm: every record once (solver checks happen here).
        for r in &recs {
            feed(&mut engine, r);
        }
        let warm_checks = engine.stats.solver_checks;
        // Per-query timing pass.
        let mut us: Vec<f64> = Vec::with_capacity(recs.len());
        for r in &recs {
            let t0 = Instant::now();
            feed(&mut engine, black_box(r));
            us.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        assert_eq!(
            engine.stats.solver_checks, warm_checks,
            "{rel}: a repeated query reached the solver"
        );
        let (med, p90, max) = (
            common::median(&mut us),
            common::percentile(&mut us, 0.9),
            common::percentile(&mut us, 1.0),
        );
        let mean = us.iter().sum::<f64>() / us.len() as f64;
        eprintln!(
            "cache_hit/{}: {} queries (warm-up: {} solver checks), per query: median {:.1} us, mean {:.1} us, p90 {:.1} us, max {:.1} us",
            common::short(rel),
            recs.len(),
            warm_checks,
            med,
            mean,
            p90,
            max
        );
        g.throughput(Throughput::Elements(recs.len() as u64));
        g.bench_function(common::short(rel), |b| {
            b.iter(|| {
                let mut n = 0;
                for r in &recs {
                    n += feed(&mut engine, black_box(r));
                }
                n
            })
        });
        assert_eq!(
            engine.stats.solver_checks, warm_checks,
            "{rel}: a repeated query reached the solver"
        );
        // A hit from the result store, as a new session (another run of the tool) would
        // get it: the session's memos are dropped before each query (untimed). Queries
        // that then need the solver (answered in the warm-up by a model kept in the
        // session, which is not stored) are not hits and are left out.
        let mut us: Vec<f64> = Vec::with_capacity(recs.len());
        for r in &recs {
            engine.forget_session();
            let before = engine.stats.solver_checks;
            let t0 = Instant::now();
            feed(&mut engine, black_box(r));
            let t = t0.elapsed().as_secs_f64() * 1e6;
            if engine.stats.solver_checks == before {
                us.push(t);
            }
        }
        let n_store = us.len();
        let (med, p90) = (common::median(&mut us), common::percentile(&mut us, 0.9));
        eprintln!(
            "cache_hit/{}/store: {} of {} queries are store hits, per query: median {:.1} us, p90 {:.1} us",
            common::short(rel),
            n_store,
            recs.len(),
            med,
            p90
        );
        engine.shutdown();
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);
