//! Framing + parsing throughput: every command of a KLEE log framed by `CommandReader` and
//! parsed into a fresh `TermStore`, with the signature maintained as the engine does; and the
//! same with the engine's memo of parsed assertions (`smt2::memo`). Also the solver side's
//! framer (`driver::reader::Framer`) over the same bytes, as a solver's output arrives.

mod common;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use smtproxy::driver::reader::Framer;
use smtproxy::smt2::reader::{CommandReader, Frame};
use smtproxy::term::signature::Signature;
use smtproxy::term::TermStore;

const LOGS: &[&str] = &[
    "sbase-cut/all-queries.smt2.gz",
    "regexp/solver-queries.smt2.gz",
];

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("reader");
    for rel in LOGS {
        let text = common::load(rel);
        g.throughput(Throughput::Bytes(text.len() as u64));
        // Framing alone.
        g.bench_function(format!("frame/{}", common::short(rel)), |b| {
            b.iter(|| {
                let mut n = 0usize;
                for f in CommandReader::new(black_box(text.as_bytes())) {
                    if let Frame::Command(c) = f {
                        n += c.text.len();
                    }
                }
                n
            })
        });
        // The solver side's framer, fed in 64 KiB pieces.
        g.bench_function(format!("framer/{}", common::short(rel)), |b| {
            b.iter(|| {
                let mut f = Framer::new();
                let mut n = 0usize;
                for piece in black_box(text.as_bytes()).chunks(1 << 16) {
                    f.push(piece);
                    while let Some(frame) = f.next_frame() {
                        n += frame.len();
                    }
                }
                n
            })
        });
        // Framing + parsing into a fresh store (the store's construction is not timed).
        g.bench_function(format!("frame+parse/{}", common::short(rel)), |b| {
            b.iter_batched(
                || (TermStore::new(), Signature::default()),
                |(mut store, mut sig)| {
                    let n = common::parse_all(&mut store, &mut sig, black_box(&text));
                    (n, store)
                },
                BatchSize::PerIteration,
            )
        });
        // The same with the engine's memo of parsed assertions (a KLEE log repeats many).
        g.bench_function(format!("frame+parse+memo/{}", common::short(rel)), |b| {
            b.iter_batched(
                || (TermStore::new(), Signature::default()),
                |(mut store, mut sig)| {
                    let n = common::parse_all_memo(&mut store, &mut sig, black_box(&text));
                    (n, store)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = bench }
criterion_main!(benches);
