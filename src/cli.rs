//! The command line (DESIGN.md's contract), including the solver flags tools pass to z3
//! and cvc5 (`-in`, `-smt2`, `-q`, `-t:MS`, `-T:S`, `-v:N`, `--incremental`, `--lang
//! smt2`, `--produce-models`, `--tlimit-per=MS`), which are translated or ignored before
//! clap sees the arguments.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "smtproxy",
    version,
    about = "A caching, incremental stand-in for an SMT solver (SMT-LIB v2.6 on stdin/stdout)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Sub>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print a one-line JSON summary to stderr at exit.
    #[arg(long)]
    pub stats: bool,
    /// Read SMT-LIB from this file instead of stdin.
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Backend: z3, cvc5, yices, or a full command line 'CMD ARGS'.
    #[arg(long, global = true)]
    pub solver: Option<String>,
    /// hybrid | stack | stack-cse | cache | passthrough | fresh
    #[arg(long, global = true, default_value = "hybrid")]
    pub strategy: String,
    /// Result store: PATH, redis://HOST:PORT, or none.
    #[arg(long, global = true)]
    pub cache: Option<String>,
    /// Memory tier size in entries.
    #[arg(long, global = true, default_value_t = 100_000)]
    pub cache_mem: usize,
    /// Per-check-sat deadline in milliseconds; past it the answer is `unknown` (every
    /// other command the solver answers is bounded by it too).
    #[arg(long, global = true)]
    pub timeout_ms: Option<u64>,
    /// Backend processes that may solve at once; with 2 or more, an incremental solve that
    /// runs far past its usual time is raced against a fresh context.
    #[arg(long, global = true, default_value_t = crate::session::DEFAULT_JOBS)]
    pub jobs: usize,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Run recorded logs; responses on stdout, summary on stderr.
    Replay {
        logs: Vec<PathBuf>,
        /// Write the JSON summary here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Compare each answer with the recorded one; exit 1 on a mismatch.
        #[arg(long)]
        check: bool,
        /// Do not print responses.
        #[arg(long)]
        quiet: bool,
    },
    /// Every strategy on every log, side by side, with answers cross-checked.
    Bench {
        corpus: Vec<PathBuf>,
        /// Comma-separated strategies (default: all).
        #[arg(long)]
        strategies: Option<String>,
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw wall time per strategy per log as SVG.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Keep the result store between strategies and runs (default: each strategy starts cold).
        #[arg(long)]
        warm: bool,
        /// Run every strategy N times on each log, interleaved, and report each one's median
        /// run (every run's answers are cross-checked).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        rounds: u32,
    },
}

/// Translate z3/cvc5-style flags into ours; drop the ones that mean nothing here.
pub fn normalise_args(args: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    if let Some(a0) = it.next() {
        out.push(a0);
    }
    while let Some(a) = it.next() {
        match a.as_str() {
            "-in" | "-smt2" | "-q" | "--incremental" | "--produce-models" | "--interactive"
            | "-i" => {}
            "--lang" => {
                it.next();
            }
            _ if a.starts_with("--lang=") || a.starts_with("-v:") => {}
            _ if a.starts_with("-t:") => {
                out.push("--timeout-ms".into());
                out.push(a[3..].to_string());
            }
            _ if a.starts_with("-T:") => {
                let ms = a[3..].parse::<u64>().map(|s| s * 1000).unwrap_or(0);
                out.push("--timeout-ms".into());
                out.push(ms.to_string());
            }
            _ if a.starts_with("--tlimit-per=") => {
                out.push("--timeout-ms".into());
                out.push(a["--tlimit-per=".len()..].to_string());
            }
            _ => out.push(a),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn solver_flags() {
        let a = normalise_args(
            [
                "smtproxy",
                "-in",
                "-smt2",
                "-t:500",
                "--lang",
                "smt2",
                "--incremental",
                "x.smt2",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(
            a,
            ["smtproxy", "--timeout-ms", "500", "x.smt2"]
                .map(String::from)
                .to_vec()
        );
    }
}
