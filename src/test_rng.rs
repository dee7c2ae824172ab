//! xorshift64, the fixed and dependency-free generator of the library's randomised unit
//! tests: a seed means the same inputs on every machine and with every crate version.
//! (The integration tests have their own, `tests/suite/common/rng.rs`.)

/// The next state of `state` (never 0 for a non-zero seed), which is also the number drawn.
pub(crate) fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
