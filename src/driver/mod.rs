//! Solver processes: start a real SMT solver (z3, cvc5, yices or a custom command)
//! behind pipes, and frame what it prints, in one of two modes, each its own type.
//!
//! * [`FramedSolver`] (`framed`): print-success on, one command in and exactly one
//!   [`Response`] out; the strategies that build queries themselves use it.
//! * [`LeanSolver`] (`lean`): the caller's text sent as it is, the output relayed byte for
//!   byte as [`LeanEvent`]s, batches closed by markers; passthrough uses it.
//!
//! Invariants:
//! * Both modes own a [`Channel`] (`channel`): the solver runs in its own process group,
//!   and no solver process outlives the value that started it, even one ignoring
//!   SIGTERM; every byte written is counted into its position (line, column).
//! * A call of one mode cannot be made on a solver of the other: the types have only
//!   their own mode's calls. Each mode's invariants are at the top of its file.
//! * Nothing read from the solver or the client is `unwrap()`ed.

mod channel;
pub mod error;
mod framed;
mod lean;
pub mod process;
pub mod reader;
mod response;
pub mod spawn;
pub mod spec;

pub use channel::Channel;
pub use error::DriverError;
pub use framed::FramedSolver;
pub use lean::{LeanEvent, LeanSolver};
pub use response::Response;
pub use spec::{SolverKind, SolverSpec};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_installed_message_is_one_line() {
        let e = DriverError::NotInstalled {
            solver: "z3".into(),
            hint: SolverKind::Z3.install_hint().into(),
        };
        let m = e.to_string();
        assert!(!m.contains('\n'));
        assert!(m.contains("pip install z3-solver"), "{m}");
    }
}
