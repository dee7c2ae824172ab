//! The stack strategy: one long-lived incremental backend whose push/pop stack mirrors
//! the conjuncts that successive queries share (Liu et al.), with optional common
//! subexpression macros (`stack-cse`) and unsat cores (hybrid on z3). Each part keeps its
//! invariants at the top of its file:
//!
//! * `mirror`: [`StackMirror`], what the backend holds and a query's way through it
//!   (pushes and pops, the check, races against a fresh context, background checks);
//! * `prefix`: which conjuncts a query shares with the stack, and the order and scopes new
//!   ones are pushed in;
//! * `names`: declarations and macro names in the backend ([`StackNames`]);
//! * `cse`: which repeated subterms get `define-fun` macros;
//! * `cores`: unsat cores asked for, named and mapped back to conjuncts;
//! * `costs`: incremental against fresh costs, and the probes, bail-outs, back-offs and
//!   rebuilds decided by them;
//! * `verbatim`: when a base-level assertion goes to the backend as the client wrote it;
//! * `miss`: [`StackMiss`], the stack as the cache stage's miss path.
//!
//! Invariant: the modules form a chain without cycles; this file only names them.

mod cores;
mod costs;
mod cse;
mod mirror;
mod miss;
mod names;
mod prefix;
mod verbatim;

pub use mirror::{InFlight, StackMirror, Via};
pub use miss::StackMiss;
pub use names::StackNames;
pub use prefix::split_conjuncts;
