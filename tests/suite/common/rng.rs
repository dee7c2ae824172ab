//! xorshift64*: a fixed, dependency-free generator for the tests that make random input
//! (`canon_props`, `client_fuzz_smoke`, `client_session_shape`, `enumerate_z3`, `eval_z3`,
//! `proxy_objectives`, `proxy_scopes`), so a seed means the same input on every machine
//! and with every crate version. The state must not be 0 (it would stay 0).

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// An index in `0..n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.below(n as u64) as usize
        }
    }
    pub fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}
