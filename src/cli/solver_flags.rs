//! The replaced solver's own command line, read in that solver's syntax, so that a tool
//! runs smtproxy with the command line it gives the solver.
//!
//! Every argument that is not smtproxy's own is the solver's. Each is sorted into one of:
//! * dropped: the input mode smtproxy always sets itself on its backends (`-in`, `-smt2`,
//!   `--incremental`, `--lang smt2`, `--interactive`, ...), verbosity (stderr only);
//! * honoured by smtproxy, because it changes what the client sees and so cannot be left
//!   to backends whose output smtproxy reads itself: deadlines (z3 `-t:`, `-T:`,
//!   `timeout=`; cvc5 `--tlimit-per`, `--tlimit`; yices `--timeout`), the client's
//!   initial `:print-success` and `:produce-models`, a model after each sat (cvc5
//!   `--dump-models`, z3 `dump_models=true`) or at exit (z3 `-model`), statistics at
//!   exit (z3 `-st`);
//! * passed to every backend process, after its default flags: everything else (z3
//!   `-memory:N`, `-nw`, `key=value` parameters; cvc5 and yices `--opt`, `--opt=V`,
//!   `-X`). A flag the solver refuses makes the backend fail at start; the proxy then
//!   relays the solver's own message and exit code. cvc5's flags for what smtproxy does
//!   not model from the start (unsat cores, proofs, assignments, global declarations) go
//!   to the solver too, and the session is passed through, so the solver answers as it
//!   would;
//! * informational (`--version`, `-version`, z3 `-h`, `-p`, ...): the solver itself runs
//!   with the client's arguments and its output and exit code are the answer, so a tool
//!   that sniffs the version sees its solver's.
//!
//! A lone argument that is not a flag is the input file.

use crate::driver::SolverKind;
use crate::session::config::ClientFlags;
use std::path::PathBuf;

/// A deadline on the whole run, as the solver enforces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimit {
    pub after_ms: u64,
    /// What the solver says then, on stdout (z3: `timeout`) or stderr (cvc5).
    pub stdout: &'static str,
    pub stderr: &'static str,
    pub exit_code: i32,
}

/// The solver's command line, sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SolverFlags {
    /// Arguments for every backend process, after the kind's default flags.
    pub backend: Vec<String>,
    /// Per check-sat deadline.
    pub timeout_ms: Option<u64>,
    pub run_limit: Option<RunLimit>,
    pub client: ClientFlags,
    pub file: Option<PathBuf>,
    /// An informational flag: run the solver with the client's arguments instead.
    pub informational: bool,
}

/// Why a command line cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    #[error("{flag} needs a value")]
    MissingValue { flag: String },
    #[error("more than one input file: {first} and {second}")]
    TwoFiles { first: String, second: String },
}

/// Read `args` (the client's arguments that are not smtproxy's own) as `kind` reads them.
pub fn read(kind: SolverKind, args: &[String]) -> Result<SolverFlags, FlagError> {
    let mut f = SolverFlags::default();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let took = match kind {
            SolverKind::Z3 => z3_flag(&mut f, a),
            SolverKind::Cvc5 => cvc5_flag(&mut f, a, &mut || it.next().cloned())?,
            SolverKind::Yices => yices_flag(&mut f, a, &mut || it.next().cloned())?,
            SolverKind::Custom => false,
        };
        if took {
            continue;
        }
        if a.starts_with('-') || (kind == SolverKind::Z3 && a.contains('=')) {
            f.backend.push(a.clone());
        } else if let Some(first) = &f.file {
            return Err(FlagError::TwoFiles {
                first: first.display().to_string(),
                second: a.clone(),
            });
        } else {
            f.file = Some(PathBuf::from(a));
        }
    }
    Ok(f)
}

/// A number of milliseconds (or seconds, `scale` 1000) from a flag's value; an
/// unreadable one is left to the solver to refuse.
fn millis(v: &str, scale: u64) -> Option<u64> {
    v.trim()
        .parse::<u64>()
        .ok()
        .map(|n| n.saturating_mul(scale))
}

/// z3: `-X`, `-X:V` (also `--X`, `/X`), `key=value`. True when the flag was taken.
fn z3_flag(f: &mut SolverFlags, a: &str) -> bool {
    if let Some((k, v)) = a.split_once('=').filter(|_| !a.starts_with('-')) {
        match k.to_ascii_lowercase().as_str() {
            "timeout" => match millis(v, 1) {
                Some(ms) => f.timeout_ms = Some(ms),
                None => return false,
            },
            "dump_models" => f.client.model_after_sat = v == "true",
            "model" => f.client.produce_models = Some(v == "true"),
            "stats" => f.client.stats_at_exit = v == "true",
            _ => return false,
        }
        return true;
    }
    let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) else {
        return false;
    };
    let (name, value) = match body.split_once(':') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    match (name, value) {
        ("in" | "smt2", None) => {}
        ("v", _) => {}
        ("version" | "h" | "?" | "p" | "pd" | "pm" | "pp" | "help", _) => f.informational = true,
        ("t", Some(v)) => match millis(v, 1) {
            Some(ms) => f.timeout_ms = Some(ms),
            None => return false,
        },
        ("T", Some(v)) => match millis(v, 1000) {
            Some(ms) => {
                f.run_limit = Some(RunLimit {
                    after_ms: ms,
                    stdout: "timeout",
                    stderr: "",
                    exit_code: 0,
                })
            }
            None => return false,
        },
        ("st", None) => f.client.stats_at_exit = true,
        ("model", None) => f.client.model_at_exit = true,
        _ => return false,
    }
    true
}

/// The value of `--name=V` or `--name V` when `a` is that option (`next` gives the
/// following argument).
fn long_value(
    a: &str,
    names: &[&str],
    next: &mut dyn FnMut() -> Option<String>,
) -> Result<Option<String>, FlagError> {
    for n in names {
        if let Some(rest) = a.strip_prefix(n) {
            if let Some(v) = rest.strip_prefix('=') {
                return Ok(Some(v.to_string()));
            }
            if rest.is_empty() {
                return next().map(Some).ok_or_else(|| FlagError::MissingValue {
                    flag: a.to_string(),
                });
            }
        }
    }
    Ok(None)
}

/// cvc5: `--opt`, `--opt=V`, `--opt V` for the options that take one, `-X`.
fn cvc5_flag(
    f: &mut SolverFlags,
    a: &str,
    next: &mut dyn FnMut() -> Option<String>,
) -> Result<bool, FlagError> {
    match a {
        "--incremental" | "-i" | "--interactive" | "--no-interactive" | "--quiet" | "-q"
        | "--verbose" | "-v" => return Ok(true),
        "--version" | "-V" | "-h" | "--show-config" => {
            f.informational = true;
            return Ok(true);
        }
        "--produce-models" | "-m" => {
            f.client.produce_models = Some(true);
            return Ok(true);
        }
        "--print-success" => {
            f.client.print_success = true;
            return Ok(true);
        }
        "--dump-models" => {
            // It turns model production on as well.
            f.client.model_after_sat = true;
            f.client.produce_models.get_or_insert(true);
            return Ok(true);
        }
        "--produce-unsat-cores"
        | "--produce-proofs"
        | "--produce-assignments"
        | "--produce-unsat-assumptions"
        | "--global-declarations" => {
            f.backend.push(a.to_string());
            f.client.passthrough = true;
            return Ok(true);
        }
        _ => {}
    }
    if long_value(a, &["--lang", "--input-language", "-L"], next)?.is_some() {
        return Ok(true);
    }
    if let Some(v) = long_value(a, &["--tlimit-per"], next)? {
        match millis(&v, 1) {
            Some(ms) => f.timeout_ms = Some(ms),
            None => f.backend.push(format!("--tlimit-per={v}")),
        }
        return Ok(true);
    }
    if let Some(v) = long_value(a, &["--tlimit"], next)? {
        match millis(&v, 1) {
            Some(ms) => {
                f.run_limit = Some(RunLimit {
                    after_ms: ms,
                    stdout: "",
                    stderr: "cvc5 interrupted by timeout.",
                    exit_code: 134,
                })
            }
            None => f.backend.push(format!("--tlimit={v}")),
        }
        return Ok(true);
    }
    Ok(false)
}

/// yices-smt2: `--opt`, `--opt=V`, `-X V` for the options that take one.
fn yices_flag(
    f: &mut SolverFlags,
    a: &str,
    next: &mut dyn FnMut() -> Option<String>,
) -> Result<bool, FlagError> {
    match a {
        "--incremental" => return Ok(true),
        "--smt2-model-format" => {
            f.client.smt2_model_format = true;
            return Ok(true);
        }
        "--interactive" => {
            // print-success on from the start, and a session that goes on after a
            // syntax error (smtproxy's own yices always runs so).
            f.client.print_success = true;
            f.client.interactive = true;
            return Ok(true);
        }
        "--version" | "-V" | "-h" => {
            f.informational = true;
            return Ok(true);
        }
        _ => {}
    }
    if long_value(a, &["--verbosity", "-v"], next)?.is_some() {
        return Ok(true);
    }
    if let Some(v) = long_value(a, &["--timeout", "-t"], next)? {
        match millis(&v, 1000) {
            Some(ms) => f.timeout_ms = Some(ms),
            None => f.backend.push(format!("--timeout={v}")),
        }
        return Ok(true);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_strs(kind: SolverKind, a: &[&str]) -> SolverFlags {
        let v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        read(kind, &v).expect("readable")
    }

    #[test]
    fn manticore_z3_command_line() {
        let f = read_strs(
            SolverKind::Z3,
            &["-t:120000", "-memory:8192", "-smt2", "-in"],
        );
        assert_eq!(f.timeout_ms, Some(120_000));
        assert_eq!(f.backend, ["-memory:8192"]);
        assert!(f.file.is_none() && !f.informational);
    }

    #[test]
    fn z3_parameters_and_output_flags() {
        let f = read_strs(
            SolverKind::Z3,
            &[
                "smt.random_seed=3",
                "rlimit=100000",
                "AUTO_CONFIG=false",
                "-nw",
                "-st",
                "-model",
                "x.smt2",
            ],
        );
        assert_eq!(
            f.backend,
            [
                "smt.random_seed=3",
                "rlimit=100000",
                "AUTO_CONFIG=false",
                "-nw"
            ]
        );
        assert!(f.client.stats_at_exit && f.client.model_at_exit);
        assert_eq!(f.file, Some(PathBuf::from("x.smt2")));
        let f = read_strs(SolverKind::Z3, &["-T:5", "dump_models=true", "timeout=300"]);
        assert_eq!(f.run_limit.map(|r| r.after_ms), Some(5000));
        assert_eq!(f.timeout_ms, Some(300));
        assert!(f.client.model_after_sat);
        for v in ["-version", "--version", "-h", "-p"] {
            assert!(read_strs(SolverKind::Z3, &[v]).informational, "{v}");
        }
        // Unknown flags are the solver's to judge.
        assert_eq!(read_strs(SolverKind::Z3, &["-foo"]).backend, ["-foo"]);
    }

    #[test]
    fn cvc5_flags() {
        let f = read_strs(
            SolverKind::Cvc5,
            &[
                "--lang",
                "smt2",
                "--incremental",
                "--quiet",
                "-m",
                "--print-success",
                "--dump-models",
                "--tlimit-per=500",
                "--seed=4",
                "--produce-unsat-cores",
            ],
        );
        assert_eq!(f.backend, ["--seed=4", "--produce-unsat-cores"]);
        assert_eq!(f.timeout_ms, Some(500));
        assert_eq!(f.client.produce_models, Some(true));
        assert!(f.client.print_success && f.client.model_after_sat);
        assert!(f.client.passthrough);
        assert!(read_strs(SolverKind::Cvc5, &["--version"]).informational);
        assert!(read(SolverKind::Cvc5, &["--lang".to_string()]).is_err());
        let f = read_strs(SolverKind::Cvc5, &["--tlimit", "800"]);
        assert_eq!(f.run_limit.map(|r| r.after_ms), Some(800));
    }

    #[test]
    fn yices_flags() {
        let f = read_strs(
            SolverKind::Yices,
            &["--incremental", "--timeout=2", "--mcsat", "q.smt2"],
        );
        assert_eq!(f.timeout_ms, Some(2000));
        assert_eq!(f.backend, ["--mcsat"]);
        assert_eq!(f.file, Some(PathBuf::from("q.smt2")));
        assert_eq!(
            read_strs(SolverKind::Yices, &["-t", "3"]).timeout_ms,
            Some(3000)
        );
        assert!(read_strs(SolverKind::Yices, &["-V"]).informational);
        assert!(!f.client.interactive && !f.client.print_success);
        let i = read_strs(SolverKind::Yices, &["--incremental", "--interactive"]);
        assert!(i.client.interactive && i.client.print_success && i.backend.is_empty());
    }

    #[test]
    fn two_files_are_refused() {
        assert!(read(SolverKind::Z3, &["a.smt2".into(), "b.smt2".into()]).is_err());
    }
}
