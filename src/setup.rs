//! An engine built from the command line's options: the strategy by name, the result
//! store from `--cache`, the backend from `--solver` and the solver's own flags. Shared by
//! the proxy (`app`) and `bench`; it imports neither.

use crate::cache::tiered::CacheConfig;
use crate::cache::FleetSecret;
use crate::cli::EngineArgs;
use crate::driver::spec::solver_list;
use crate::driver::{SolverKind, SolverSpec};
use crate::session::{Config, Engine, Strategy};
use anyhow::{bail, Result};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Whether the route is the governor's to choose (`session::governor`): no strategy named.
pub fn governed(args: &EngineArgs) -> bool {
    args.strategy.is_none()
}

/// Whether the backend starts before the session's first command (the proxy's rule, which
/// `replay` and `bench` follow so that they measure what a client meets). It does when its
/// command line is not smtproxy's own for a known solver (a flag the client passed on, a
/// full command line, a custom solver): the solver may refuse it, and the client must then
/// see that refusal before anything else, as from the solver. The passthrough needs it
/// at once anyway. Otherwise it starts at its first use (`SolverHandle` starts lazily), so
/// a stream answered from the store or by smtproxy's own decisions never pays for a
/// solver's start (z3 about 3 ms, cvc5 6 ms, yices 1 ms here), or while smtproxy waits for
/// the client's next command, whichever comes first (`Engine::idle`).
pub fn starts_at_once(spec: &SolverSpec, strat: Strategy) -> bool {
    strat == Strategy::Passthrough
        || spec.kind == SolverKind::Custom
        || spec.args != spec.kind.default_args()
}

/// The strategy `--strategy` names (hybrid when none is named).
pub fn strategy(args: &EngineArgs) -> Result<Strategy> {
    let name = args.strategy.as_deref().unwrap_or("hybrid");
    match Strategy::parse(name) {
        Some(s) => Ok(s),
        None => bail!(
            "unknown strategy '{}' (expected one of: {})",
            name,
            Strategy::all()
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `--cache-max-mb` in bytes (None: unbounded).
pub fn max_bytes(args: &EngineArgs) -> Result<Option<u64>> {
    let mb = args.cache_max_mb;
    if !mb.is_finite() || mb < 0.0 {
        bail!("--cache-max-mb must be a number of MiB >= 0 (0: unbounded), not {mb}");
    }
    Ok((mb > 0.0).then_some((mb * (1 << 20) as f64) as u64))
}

/// The fleet secret from `--cache-secret-file` or `SMTPROXY_CACHE_SECRET`.
pub fn secret(args: &EngineArgs) -> Result<Option<FleetSecret>> {
    Ok(FleetSecret::from_args(args.cache_secret_file.as_deref())?)
}

/// Whether a `--cache` value names no store, only the memory tier: `none`, or `memory`
/// (what a user who wants the memory tier alone writes, not a SQLite file to make in the
/// working directory; `./memory` is such a file).
pub fn names_no_store(value: &str) -> bool {
    value == "none" || value == "memory"
}

/// The cache configuration from `--cache` and its bounds. `--cache none` (or `memory`,
/// [`names_no_store`]) keeps only the memory tier (sized by `--cache-mem`): no file, no
/// Redis, nothing outlives the process.
pub fn cache_config(args: &EngineArgs) -> Result<CacheConfig> {
    let ttl = match args.cache_ttl_days {
        Some(d) if !d.is_finite() || d <= 0.0 => bail!("--cache-ttl-days must be > 0"),
        Some(d) => Some((d * 86400.0).ceil() as u64),
        None => None,
    };
    let mut cfg = CacheConfig {
        mem_entries: args.cache_mem,
        mem_bytes: crate::cache::tiered::MEM_BYTES,
        disk: None,
        redis: None,
        disk_max_bytes: max_bytes(args)?,
        secret: secret(args)?,
        redis_ttl_secs: ttl,
        disk_opening: None,
    };
    match args.cache.as_deref() {
        Some(v) if names_no_store(v) => {}
        Some(s) if s.starts_with("redis://") => {
            cfg.redis = Some(s.to_string());
            cfg.disk = crate::cache::disk::default_path();
        }
        Some(path) => cfg.disk = Some(PathBuf::from(path)),
        None => cfg.disk = crate::cache::disk::default_path(),
    }
    Ok(cfg)
}

/// The solvers `--solver` names: the first (client-facing) one, which must be there, and
/// the other members of a portfolio (`--solver z3,yices,cvc5`); one that cannot be found
/// is left out with a warning.
pub fn solvers(value: Option<&str>) -> Result<(SolverSpec, Vec<SolverSpec>)> {
    let Some(value) = value else {
        return Ok((SolverSpec::resolve(None)?, Vec::new()));
    };
    let list = solver_list(value);
    let first = SolverSpec::resolve(Some(list.first().copied().unwrap_or(value)))?;
    let mut others: Vec<SolverSpec> = Vec::new();
    for entry in list.iter().skip(1) {
        match SolverSpec::resolve(Some(entry)) {
            Ok(s) => others.push(s),
            Err(e) => eprintln!("smtproxy: warning: portfolio: {entry}: {e}; going on without it"),
        }
    }
    Ok((first, others))
}

pub fn make_engine(
    args: &EngineArgs,
    strategy: Strategy,
    out: Box<dyn Write + Send>,
    cache: CacheConfig,
) -> Result<Engine> {
    let found = solvers(args.solver.as_deref())?;
    make_engine_with(args, strategy, out, cache, found)
}

/// `make_engine` with the solvers already looked up (`solvers`).
pub fn make_engine_with(
    args: &EngineArgs,
    strategy: Strategy,
    out: Box<dyn Write + Send>,
    cache: CacheConfig,
    (mut solver, portfolio): (SolverSpec, Vec<SolverSpec>),
) -> Result<Engine> {
    let timeout = args.timeout_ms.map(Duration::from_millis);
    solver
        .args
        .extend(args.solver_flags.backend.iter().cloned());
    Ok(Engine::new(
        Config {
            strategy,
            solver,
            portfolio,
            timeout,
            cache: Some(cache),
            jobs: args.jobs.max(1),
            first_answer_wins: args.first_answer_wins,
            client: args.solver_flags.client.clone(),
        },
        out,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{parse, Invocation};

    fn engine_args(args: &[&str]) -> EngineArgs {
        match parse(args.iter().map(|s| s.to_string()).collect()) {
            Ok(Invocation::Run(c)) => c.engine,
            other => panic!("expected a run, got {other:?}"),
        }
    }

    #[test]
    fn cache_memory_is_the_memory_tier_alone_not_a_file() {
        let c = cache_config(&engine_args(&["smtproxy", "--cache", "memory"])).unwrap();
        assert!(c.disk.is_none() && c.redis.is_none());
        let c = cache_config(&engine_args(&["smtproxy", "--cache", "./memory"])).unwrap();
        assert_eq!(c.disk, Some(PathBuf::from("./memory")));
    }

    #[test]
    fn cache_none_keeps_a_memory_tier_of_the_size_asked() {
        let c = cache_config(&engine_args(&[
            "smtproxy",
            "--cache",
            "none",
            "--cache-mem",
            "7",
        ]))
        .unwrap();
        assert_eq!(c.mem_entries, 7);
        assert!(c.disk.is_none() && c.redis.is_none());
        let c = cache_config(&engine_args(&[
            "smtproxy",
            "--cache",
            "/x/s.db",
            "--cache-mem",
            "9",
        ]))
        .unwrap();
        assert_eq!((c.mem_entries, c.disk), (9, Some(PathBuf::from("/x/s.db"))));
    }
}
