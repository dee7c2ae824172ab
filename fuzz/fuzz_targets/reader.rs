#![no_main]
//! libFuzzer target (a): CommandReader framing + parse_command into a fresh term store
//! and signature, declarations applied, printer round trip checked. See src/targets.rs.
use libfuzzer_sys::fuzz_target;

#[path = "../src/targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| {
    targets::reader(data);
});
