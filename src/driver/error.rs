//! What can go wrong running a solver process. A leaf of `driver`: the process, the
//! command line and the session all report through it.
//!
//! Invariant: `Died` carries the solver's exit status and the tail of its stderr, so the
//! cause reaches the user with the error.

use std::time::Duration;

/// Errors from running a solver.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The solver binary could not be found.
    #[error("solver `{solver}` not found: {hint}")]
    NotInstalled { solver: String, hint: String },
    /// The named file exists but lacks execute permission.
    #[error("solver `{program}` is not executable")]
    NotExecutable { program: String },
    /// The binary exists but could not be started.
    #[error("cannot start solver `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// The solver exited (or closed its stdout) while an answer was expected.
    #[error("solver died (exit status {}){}", fmt_exit(.exit), fmt_stderr(.stderr))]
    Died { exit: Option<i32>, stderr: String },
    /// No answer before the deadline; the solver was killed.
    #[error("solver timed out after {after:?} and was killed")]
    Timeout { after: Duration },
    #[error("solver I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The solver printed something that is not a response.
    #[error("solver protocol error: {0}")]
    Protocol(String),
}

fn fmt_exit(exit: &Option<i32>) -> String {
    match exit {
        Some(c) => c.to_string(),
        None => "killed by signal".to_string(),
    }
}

fn fmt_stderr(s: &str) -> String {
    let t = s.trim();
    if t.is_empty() {
        String::new()
    } else {
        // Last few lines are what matters.
        let lines: Vec<&str> = t.lines().collect();
        let tail = &lines[lines.len().saturating_sub(5)..];
        format!(": {}", tail.join(" | "))
    }
}
