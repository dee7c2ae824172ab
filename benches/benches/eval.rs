//! Model evaluation per KLEE query: `query::eval::Evaluator` (complete, as the cache planner's
//! model check does) on every conjunct of a query under a model.
//!
//! `z3-model`: the satisfiable queries, each under the model the real z3 gives for it
//! (asked once per query during setup, outside the timed loop: `(get-value (arr))` for each
//! array, parsed with `parse_term` + `Value::from_term`). Every query evaluates to true, so
//! every conjunct is evaluated: the cost of validating a cached or reused model, i.e. a hit.
//! `zero-model`: every query under the empty model completed with all-zero arrays; `all`
//! stops at the first false conjunct, as the planner's check does on a model that fails.
//!
//! The solver is `$SMTPROXY_BENCH_SOLVER` (default `z3`, resolved as smtproxy resolves it).

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use smtproxy::driver::{FramedSolver, Response, SolverSpec};
use smtproxy::query::eval::{Evaluator, Model};
use smtproxy::query::value::Value;
use smtproxy::query::view::conjuncts;
use smtproxy::smt2::lexer::Sexps;
use smtproxy::smt2::parser::parse_term;
use smtproxy::term::signature::{DeclKind, FunDef, Signature};
use smtproxy::term::{TermId, TermStore};

const LOGS: &[&str] = &[
    "sbase-expr/solver-queries.smt2.gz",
    "regexp/solver-queries.smt2.gz",
    "sbase-cut/solver-queries.smt2.gz",
];

fn ok(r: Result<Response, smtproxy::driver::DriverError>, what: &str) -> Response {
    match r {
        Ok(r) => r,
        Err(e) => panic!("solver failed on {what}: {e}"),
    }
}

/// z3's model of a query (None when not sat or a value could not be read).
fn z3_model(solver: &mut FramedSolver, store: &mut TermStore, q: &common::Query) -> Option<Model> {
    ok(solver.command("(push 1)", None), "push");
    for s in &q.script {
        ok(solver.command(s, None), s);
    }
    let sat = ok(solver.command("(check-sat)", None), "check-sat") == Response::Sat;
    let mut model = Some(Model::new());
    if sat {
        // Parse values against a signature holding this query's declarations.
        let mut sig = Signature::default();
        for (name, leaf) in &q.consts {
            let sym = store.sym(name);
            let ret = store.sort(*leaf);
            sig.add_fun(
                name,
                FunDef::Declared {
                    sym,
                    params: vec![],
                    ret,
                    kind: DeclKind::Free,
                },
            );
        }
        for (name, leaf) in &q.consts {
            let r = ok(
                solver.command(&format!("(get-value ({name}))"), None),
                "get-value",
            );
            let Response::Other(text) = r else {
                model = None;
                break;
            };
            let v = (|| {
                let sx = Sexps::parse(&text).ok()?;
                let pairs = sx.list(*sx.roots.first()?)?;
                let pair = sx.list(*pairs.first()?)?;
                let vt = parse_term(store, &sig, sx.source(*pair.get(1)?)).ok()?;
                Value::from_term(store, vt)
            })();
            match (v, model.as_mut()) {
                (Some(v), Some(m)) => m.set(*leaf, v),
                _ => model = None,
            }
        }
    } else {
        model = None;
    }
    ok(solver.command("(pop 1)", None), "pop");
    model
}

fn holds(store: &TermStore, m: &Model, cs: &[TermId]) -> bool {
    let mut ev = Evaluator::new(store, m, true);
    cs.iter().all(|&t| ev.is_true(t).unwrap_or(false))
}

fn bench(c: &mut Criterion) {
    let solver_name = std::env::var("SMTPROXY_BENCH_SOLVER").unwrap_or_else(|_| "z3".into());
    let spec = SolverSpec::resolve(Some(&solver_name)).expect("solver for the eval bench");
    let mut solver = FramedSolver::start(&spec).expect("start solver");
    ok(
        solver.command("(set-option :produce-models true)", None),
        "produce-models",
    );
    let mut g = c.benchmark_group("eval");
    for rel in LOGS {
        let text = common::load(rel);
        let mut p = common::parse_queries(&text);
        let cs: Vec<Vec<TermId>> = p
            .queries
            .iter()
            .map(|q| conjuncts(&mut p.store, &q.assertions))
            .collect();
        let mut sat: Vec<(Model, usize)> = Vec::new();
        let mut unreadable = 0;
        for (i, q) in p.queries.iter().enumerate() {
            if let Some(m) = z3_model(&mut solver, &mut p.store, q) {
                if holds(&p.store, &m, &cs[i]) {
                    sat.push((m, i));
                } else {
                    unreadable += 1;
                }
            }
        }
        let nodes: usize = sat.iter().map(|(_, i)| cs[*i].len()).sum();
        eprintln!(
            "eval/{}: {} queries, {} sat with a z3 model that evaluates true ({} conjuncts), {} models rejected",
            common::short(rel),
            p.queries.len(),
            sat.len(),
            nodes,
            unreadable
        );
        let store = &p.store;
        g.throughput(Throughput::Elements(sat.len() as u64));
        g.bench_function(format!("z3-model/{}", common::short(rel)), |b| {
            b.iter(|| {
                let mut n = 0;
                for (m, i) in &sat {
                    n += usize::from(holds(store, black_box(m), &cs[*i]));
                }
                assert_eq!(n, sat.len());
                n
            })
        });
        let empty = Model::new();
        let zero_true = cs.iter().filter(|c| holds(store, &empty, c)).count();
        eprintln!(
            "eval/{}: {} of {} queries true under the all-zero model",
            common::short(rel),
            zero_true,
            cs.len()
        );
        g.throughput(Throughput::Elements(cs.len() as u64));
        g.bench_function(format!("zero-model/{}", common::short(rel)), |b| {
            b.iter(|| {
                let mut n = 0;
                for c in &cs {
                    n += usize::from(holds(store, black_box(&empty), c));
                }
                n
            })
        });
    }
    g.finish();
    solver.kill();
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);
