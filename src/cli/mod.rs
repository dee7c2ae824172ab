//! The command line (DESIGN.md's contract). smtproxy is run with the command line a tool
//! gives its solver: smtproxy's own options are the long ones listed in `--help` (also
//! from the environment: `SMTPROXY_SOLVER`, `SMTPROXY_STRATEGY`, `SMTPROXY_CACHE`);
//! every other argument is the solver's, read in the solver's syntax by
//! [`solver_flags`]. Run under a solver's name (a link named `z3`, `cvc5` or
//! `yices-smt2`), that solver is the backend unless `--solver` says otherwise.
//! `--version` is the solver's; `--proxy-version` is smtproxy's.

pub mod solver_flags;

use crate::driver::{SolverKind, SolverSpec};
use clap::{Args, Parser, Subcommand};
use solver_flags::SolverFlags;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "smtproxy",
    about = "A caching, incremental stand-in for an SMT solver (SMT-LIB v2.6 on stdin/stdout)",
    after_help = "Every argument that is not one of the options above is the solver's own, \
                  read as the solver reads it (z3: -X, -X:V, key=value; cvc5 and yices: --opt, \
                  --opt=V) and passed to it: `smtproxy -t:5000 -memory:8192 -smt2 -in` runs \
                  as `z3 -t:5000 -memory:8192 -smt2 -in` would. `--version` prints the \
                  solver's version."
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Sub>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print a one-line JSON summary to stderr at exit.
    #[arg(long)]
    pub stats: bool,
    /// Print smtproxy's own version (`--version` prints the solver's).
    #[arg(long)]
    pub proxy_version: bool,
    /// Read SMT-LIB from this file instead of stdin.
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Backend: z3, cvc5, yices, or a full command line 'CMD ARGS'; a comma-separated
    /// list (z3,yices,cvc5) is a portfolio whose first solver faces the client.
    #[arg(long, global = true, env = "SMTPROXY_SOLVER")]
    pub solver: Option<String>,
    /// hybrid | stack | stack-cse | cache | passthrough | fresh (default: hybrid, or the
    /// lean passthrough while that costs less per query)
    #[arg(long, global = true, env = "SMTPROXY_STRATEGY")]
    pub strategy: Option<String>,
    /// Result store: PATH, redis://HOST:PORT, or none (or memory: the memory tier only).
    #[arg(long, global = true, env = "SMTPROXY_CACHE")]
    pub cache: Option<String>,
    /// Memory tier size in entries.
    #[arg(long, global = true, default_value_t = 100_000)]
    pub cache_mem: usize,
    /// Bound on the on-disk store's file in MiB (0: unbounded); the entries of least
    /// worth (solve time x hits, fading with disuse) are evicted past it.
    #[arg(long, global = true, default_value_t = crate::cache::disk::DEFAULT_MAX_MB as f64)]
    pub cache_max_mb: f64,
    /// The fleet secret for a shared Redis store (else env SMTPROXY_CACHE_SECRET):
    /// entries written are tagged with it, and an unsat read from Redis is trusted only
    /// with a tag made with it.
    #[arg(long, global = true)]
    pub cache_secret_file: Option<PathBuf>,
    /// Entries written to Redis expire after this many days (default: never; bound the
    /// server with maxmemory and allkeys-lru/lfu instead or as well).
    #[arg(long, global = true)]
    pub cache_ttl_days: Option<f64>,
    /// Per-check-sat deadline in milliseconds; past it the answer is `unknown` (every
    /// other command the solver answers is bounded by it too).
    #[arg(long, global = true)]
    pub timeout_ms: Option<u64>,
    /// Backend processes that may solve at once; with 2 or more, an incremental solve that
    /// runs far past its usual time is raced against a fresh context.
    #[arg(long, global = true, default_value_t = crate::session::DEFAULT_JOBS)]
    pub jobs: usize,
    /// Portfolio: another solver's unsat that comes before the first solver's answer is
    /// taken at once, as its sat is (by default it waits for the first solver's answer,
    /// which cross-checks it, while a kind of query is explored).
    #[arg(long, global = true)]
    pub first_answer_wins: bool,
    /// The solver's own flags from the command line (see [`solver_flags`]).
    #[arg(skip)]
    pub solver_flags: SolverFlags,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Look after the result store named by --cache (default: the user's store).
    Cache {
        #[command(subcommand)]
        action: CacheAction,
    },
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
        /// Run nothing: print each log as the SMT-LIB text a replay reads (a KQuery log as
        /// the SMT2 query log it stands for), to feed a solver directly.
        #[arg(long, conflicts_with_all = ["json", "check", "quiet"])]
        print_log: bool,
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

/// `smtproxy cache ...`: one operation on the store.
#[derive(Subcommand, Debug)]
pub enum CacheAction {
    /// Entries, sat/unsat, bytes, versions, hits, as one JSON object on stdout.
    Stats,
    /// Delete entries: unused for some days, below a worth, then down to a size.
    Prune {
        /// Then, least worth first, until the file is at most this many MiB.
        #[arg(long)]
        max_mb: Option<f64>,
        /// Entries not used for this many days.
        #[arg(long)]
        unused_days: Option<f64>,
        /// Entries whose worth (ms saved x (hits + 1) / (1 + days unused)) is below this.
        #[arg(long)]
        below_worth: Option<f64>,
    },
    /// Write every entry as JSON lines (a header line, then one entry a line).
    Export {
        /// Write here instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Merge an export into the store (first writer wins; every entry checked).
    Import {
        /// The export (`-`: stdin).
        file: PathBuf,
    },
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Invocation {
    /// Run smtproxy (proxy, replay or bench).
    Run(Box<Cli>),
    /// An informational solver flag (`--version`, z3's `-h`, ...): the solver runs with
    /// `args` and its output and exit code are the answer.
    Solver {
        solver: Option<String>,
        args: Vec<String>,
    },
}

/// smtproxy's own options that take a value (also as `--opt=V`).
const OWN_VALUED: &[&str] = &[
    "--solver",
    "--strategy",
    "--cache",
    "--cache-mem",
    "--cache-max-mb",
    "--cache-secret-file",
    "--cache-ttl-days",
    "--timeout-ms",
    "--jobs",
];
/// smtproxy's own options without a value.
const OWN_FLAGS: &[&str] = &[
    "--stats",
    "--proxy-version",
    "--first-answer-wins",
    "--help",
];

/// The solver a program name stands for (`z3`, `cvc5`, `yices-smt2`), when smtproxy
/// runs under it.
fn name_hint(argv0: &str) -> Option<&'static str> {
    let kind = SolverKind::guess(Path::new(argv0));
    (kind != SolverKind::Custom).then(|| kind.as_str())
}

/// The kind of solver `--solver`'s value names, without looking for it.
fn kind_of(solver: &str) -> SolverKind {
    // A portfolio's flags are its first solver's.
    let s = crate::driver::spec::first_solver(solver);
    SolverKind::named(s).unwrap_or_else(|| {
        crate::driver::spec::split_command_line(s)
            .first()
            .map_or(SolverKind::Custom, |p| SolverKind::guess(Path::new(p)))
    })
}

/// Read the command line: smtproxy's own options, the subcommands, and the solver's
/// flags in the solver's syntax.
pub fn parse(argv: Vec<String>) -> Result<Invocation, clap::Error> {
    let argv0 = argv.first().cloned().unwrap_or_else(|| "smtproxy".into());
    let hint = name_hint(&argv0);
    let mut own: Vec<String> = vec![argv0.clone()];
    let mut rest: Vec<String> = Vec::new();
    let mut solver: Option<String> = None;
    let mut timeout_given = false;
    let mut it = argv.into_iter().skip(1);
    while let Some(a) = it.next() {
        if rest.is_empty() && matches!(a.as_str(), "replay" | "bench" | "cache") {
            // A subcommand: clap reads the rest as it stands.
            own.push(a);
            own.extend(it);
            return Cli::try_parse_from(own).map(|c| Invocation::Run(Box::new(c)));
        }
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        if OWN_VALUED.contains(&name) {
            let value = match a.split_once('=') {
                Some((_, v)) => Some(v.to_string()),
                None => it.next(),
            };
            if name == "--solver" {
                solver = value.clone();
            }
            timeout_given |= name == "--timeout-ms";
            own.push(name.to_string());
            own.extend(value);
        } else if OWN_FLAGS.contains(&a.as_str()) || (hint.is_none() && a == "-h") {
            own.push(a);
        } else {
            rest.push(a);
        }
    }
    let solver = solver
        .or_else(|| std::env::var("SMTPROXY_SOLVER").ok())
        .or_else(|| hint.map(str::to_string));
    let kind = match &solver {
        Some(s) => kind_of(s),
        // No solver flags to read: no PATH lookup for the default solver's dialect
        // (`--proxy-version` and plain runs start without one).
        None if rest.is_empty() => SolverKind::Z3,
        None => SolverSpec::resolve(None).map_or(SolverKind::Z3, |s| s.kind),
    };
    let flags = solver_flags::read(kind, &rest)
        .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{e}\n")))?;
    if flags.informational {
        // The first solver of a portfolio answers informational flags.
        let solver = solver.map(|s| crate::driver::spec::first_solver(&s).to_string());
        return Ok(Invocation::Solver { solver, args: rest });
    }
    if let (Some(ms), false) = (flags.timeout_ms, timeout_given) {
        own.push("--timeout-ms".into());
        own.push(ms.to_string());
    }
    if let Some(f) = &flags.file {
        own.push(f.display().to_string());
    }
    let mut cli = Cli::try_parse_from(own)?;
    if cli.engine.solver.is_none() {
        cli.engine.solver = solver;
    }
    cli.engine.solver_flags = flags;
    Ok(Invocation::Run(Box::new(cli)))
}
#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Cli {
        match parse(args.iter().map(|s| s.to_string()).collect()) {
            Ok(Invocation::Run(c)) => *c,
            other => panic!("expected a run, got {other:?}"),
        }
    }

    #[test]
    fn solver_command_lines_reach_the_solver() {
        let c = run(&[
            "smtproxy",
            "--solver",
            "z3",
            "-t:500",
            "-memory:8192",
            "-smt2",
            "-in",
        ]);
        assert_eq!(c.engine.timeout_ms, Some(500));
        assert_eq!(c.engine.solver_flags.backend, ["-memory:8192"]);
        assert!(c.file.is_none());
        let c = run(&[
            "smtproxy",
            "--solver=cvc5",
            "--lang",
            "smt2",
            "--incremental",
            "x.smt2",
        ]);
        assert_eq!(c.file, Some(PathBuf::from("x.smt2")));
        assert_eq!(c.engine.solver.as_deref(), Some("cvc5"));
        // Our own deadline wins over the solver's.
        let c = run(&["smtproxy", "--solver", "z3", "--timeout-ms", "7", "-t:500"]);
        assert_eq!(c.engine.timeout_ms, Some(7));
    }

    #[test]
    fn a_solver_name_picks_the_backend() {
        let c = run(&["/usr/local/bin/yices-smt2", "--incremental", "--timeout=2"]);
        assert_eq!(c.engine.solver.as_deref(), Some("yices"));
        assert_eq!(c.engine.timeout_ms, Some(2000));
        let c = run(&["z3", "--solver", "cvc5", "--tlimit-per=9"]);
        assert_eq!(c.engine.solver.as_deref(), Some("cvc5"));
        assert_eq!(c.engine.timeout_ms, Some(9));
    }

    #[test]
    fn version_is_the_solver_s() {
        match parse(vec!["z3".into(), "--version".into()]) {
            Ok(Invocation::Solver { solver, args }) => {
                assert_eq!(solver.as_deref(), Some("z3"));
                assert_eq!(args, ["--version"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(run(&["smtproxy", "--solver", "z3", "--proxy-version"]).proxy_version);
    }

    #[test]
    fn subcommands_are_read_as_before() {
        let c = run(&[
            "smtproxy",
            "--strategy",
            "stack",
            "replay",
            "--quiet",
            "a.smt2",
        ]);
        assert!(matches!(c.cmd, Some(Sub::Replay { quiet: true, .. })));
        assert_eq!(c.engine.strategy.as_deref(), Some("stack"));
    }
}
