#![no_main]
//! libFuzzer target (d): the lexical layer (`smtproxy::smt2::lex`) and both framers built on
//! it: framing in any chunking gives the same frames, framed commands agree with the
//! s-expression lexer and a byte-by-byte statement of the rules, no panics. See
//! src/targets.rs.
use libfuzzer_sys::fuzz_target;

#[path = "../src/targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| {
    targets::lex(data);
});
