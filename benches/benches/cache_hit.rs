//! A cache-hit answer end to end: query text in, answer out. An engine with the `cache`
//! strategy (memory tier only) is warmed by replaying a KLEE log once; then each query's
//! command sequence (`set-option`, `set-logic`, declarations, assertion, `check-sat`,
//! `get-value`s, and its `(exit)` fed as `(reset)` as `replay` does) is fed again: framing,
//! parsing, planning (slice, canonical key, lookup, model check) and answering. Outside the
//! timing, the engine's `solver_checks` must not grow: every timed query is a hit.
//!
//! Besides criterion's figure (mean per query over the whole log, per sample), each query is
//! timed individually in three passes, each made `REPS` times; a query's time is the median
//! of its `REPS` times (the machines are noisy), and the median and p90 over the queries are
//! printed:
//! - **repeated**: the queries again in the same session, answered from the session's
//!   memos (as KLEE's repeats are);
//! - **second run**: a new session over the warm result store (the session's memos dropped
//!   once), the log in order, as another run of the tool sees it; each distinct query's
//!   first occurrence is timed when the result store answers it (no solver check);
//! - **cold**: the session's memos dropped before every query (untimed), so nothing of
//!   earlier queries helps: slicing, the canonical key, the lookup and the model check,
//!   and parsing every command, the get-values included; the first query of a new session.

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
            ..CacheConfig::default()
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
        // Repeated queries.
        let mut us = per_query(
            &recs,
            |_, _| {},
            &mut engine,
            |_, r, e| {
                feed(e, black_box(r));
            },
        );
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
            "cache_hit/{}: {} queries (warm-up: {} solver checks), repeated, per query: median {:.1} us, mean {:.1} us, p90 {:.1} us, max {:.1} us",
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
        // A second run: a new session once, the log in order. A query the solver had to
        // answer (one the warm-up answered with a model kept in the session, which is not
        // stored) or that repeats an earlier one of the log is not a store hit and is left
        // out.
        let mut first: Vec<bool> = Vec::with_capacity(recs.len());
        let mut seen = std::collections::HashSet::new();
        for r in &recs {
            first.push(seen.insert(r.as_str()));
        }
        let mut hit = vec![true; recs.len()];
        let mut us = per_query(
            &recs,
            |e, i| {
                if i == 0 {
                    e.forget_session();
                }
            },
            &mut engine,
            |i, r, e| {
                let before = e.stats.solver_checks;
                feed(e, black_box(r));
                hit[i] &= e.stats.solver_checks == before;
            },
        );
        report_hits(rel, "second run", &mut us, &hit, &first);
        // Cold: the memos dropped before every query.
        let mut hit = vec![true; recs.len()];
        let mut us = per_query(
            &recs,
            |e, _| e.forget_session(),
            &mut engine,
            |i, r, e| {
                let before = e.stats.solver_checks;
                feed(e, black_box(r));
                hit[i] &= e.stats.solver_checks == before;
            },
        );
        report_hits(rel, "cold", &mut us, &hit, &vec![true; recs.len()]);
        engine.shutdown();
    }
    g.finish();
}

/// How many times each timing pass is made; a query's time is the median of its times.
const REPS: usize = 5;

/// Each query's time (microseconds) in a pass over `recs` made `REPS` times: `before` runs
/// untimed before query `i`, `run` is timed.
fn per_query(
    recs: &[String],
    mut before: impl FnMut(&mut Engine, usize),
    engine: &mut Engine,
    mut run: impl FnMut(usize, &str, &mut Engine),
) -> Vec<f64> {
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(REPS); recs.len()];
    for _ in 0..REPS {
        for (i, r) in recs.iter().enumerate() {
            before(engine, i);
            let t0 = Instant::now();
            run(i, r, engine);
            times[i].push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    times.iter_mut().map(|t| common::median(t)).collect()
}

/// Median and p90 over the queries that were store hits in every repetition (`hit`) and
/// are counted (`count`: a log's first occurrence of the query).
fn report_hits(rel: &str, pass: &str, us: &mut [f64], hit: &[bool], count: &[bool]) {
    let mut kept: Vec<f64> = (0..us.len())
        .filter(|&i| hit[i] && count[i])
        .map(|i| us[i])
        .collect();
    let distinct = count.iter().filter(|&&c| c).count();
    let (med, p90) = (
        common::median(&mut kept),
        common::percentile(&mut kept, 0.9),
    );
    eprintln!(
        "cache_hit/{}/{pass}: {} of {} distinct queries are store hits, per query: median {:.1} us, p90 {:.1} us",
        common::short(rel),
        kept.len(),
        distinct,
        med,
        p90
    );
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);
