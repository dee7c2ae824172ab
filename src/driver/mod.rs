//! Solver processes.
