//! The integration test suite, as one binary: each module is one area, and every test runs
//! the real `smtproxy` binary (or the library) against real solvers, no mocks. One binary
//! rather than one per file so that cargo links the library once and libtest packs all the
//! tests onto the machine's cores together. Run one area with
//! `cargo test --release --test suite proxy_replay::`. `docs/testing.md` lists what each
//! module asserts.

mod common;

mod cache_disk;
mod cache_redis;
mod canon_golden;
mod canon_props;
mod canon_z3;
mod client_fuzz_smoke;
mod client_pysmt_quoted_symbol;
mod client_session_shape;
mod client_sessions;
mod client_yosys;
mod driver_process;
mod enumerate_z3;
mod eval_z3;
mod proxy_acceptance;
mod proxy_adversarial;
mod proxy_bad_input;
mod proxy_bench;
mod proxy_cache;
mod proxy_command_line;
mod proxy_cores;
mod proxy_dear_models;
mod proxy_differential;
mod proxy_faults;
mod proxy_governor;
mod proxy_lean;
mod proxy_models;
mod proxy_objectives;
mod proxy_portfolio;
mod proxy_replay;
mod proxy_rsmt2;
mod proxy_scopes;
mod proxy_store_faults;
mod proxy_streams;
mod roundtrip;
mod soak_memory;
mod store_admin;
mod store_bound;
mod store_fleet;
mod term_collection;
