//! smtproxy: a stand-in for an SMT solver that speaks SMT-LIB v2.6 on stdin/stdout
//! and answers check-sat from a result store, an incremental solver stack, or a fresh
//! solver context, whichever is cheaper, without ever giving a wrong answer.
//!
//! Layout: `smt2` reads and prints the language, `term` is the hash-consed term store,
//! `query` turns assertions into sliced canonical components and keys and evaluates
//! models, `cache` holds the result tiers, `session` keeps the client's view and plans
//! each query, `driver` runs the real solver processes, `replay` and `bench` feed
//! recorded logs through the same engine.

pub mod app;
pub mod bench;
pub mod cache;
pub mod cli;
pub mod corpus;
pub mod driver;
pub mod error;
pub mod query;
pub mod replay;
pub mod session;
pub mod setup;
pub mod signals;
pub mod smt2;
pub mod term;
#[cfg(test)]
mod test_rng;
