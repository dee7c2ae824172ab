#![no_main]
//! libFuzzer target (b): the whole session engine (real z3 backend, strategy hybrid with
//! a memory-only cache) on short inputs, answers cross-checked against passthrough.
use libfuzzer_sys::fuzz_target;

#[path = "../src/targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| {
    targets::engine(data);
});
