#![no_main]
//! libFuzzer target (c): the whole session engine behind the mock solver
//! (`fuzz/src/mock_solver.rs`, built beside this binary), every strategy, the mock's
//! behaviour seeded from the input: hundreds of inputs a second where the real-z3 target
//! (`engine`) runs a few.
use libfuzzer_sys::fuzz_target;

#[path = "../src/targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| {
    let mock = targets::mock_solver_path().expect("mock_solver not built beside the fuzz binary (cargo fuzz build)");
    targets::engine_mock(data, &mock);
});
