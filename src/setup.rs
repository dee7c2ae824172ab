//! An engine built from the command line's options: the strategy by name, the result
//! store from `--cache`, the backend from `--solver` and the solver's own flags. Shared by
//! the proxy (`app`) and `bench`; it imports neither.

use crate::cache::tiered::CacheConfig;
use crate::cli::EngineArgs;
use crate::driver::SolverSpec;
use crate::session::{Config, Engine, Strategy};
use anyhow::{bail, Result};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Whether the route is the governor's to choose (`session::governor`): no strategy named.
pub fn governed(args: &EngineArgs) -> bool {
    args.strategy.is_none()
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

/// The cache configuration from `--cache` (None: no store at all).
pub fn cache_config(args: &EngineArgs) -> Option<CacheConfig> {
    let mut cfg = CacheConfig {
        mem_entries: args.cache_mem,
        mem_bytes: 512 << 20,
        disk: None,
        redis: None,
    };
    match args.cache.as_deref() {
        Some("none") => return None,
        Some(s) if s.starts_with("redis://") => {
            cfg.redis = Some(s.to_string());
            cfg.disk = crate::cache::disk::default_path();
        }
        Some(path) => cfg.disk = Some(PathBuf::from(path)),
        None => cfg.disk = crate::cache::disk::default_path(),
    }
    Some(cfg)
}

pub fn make_engine(
    args: &EngineArgs,
    strategy: Strategy,
    out: Box<dyn Write + Send>,
    cache: Option<CacheConfig>,
) -> Result<Engine> {
    let timeout = args.timeout_ms.map(Duration::from_millis);
    let mut solver = SolverSpec::resolve(args.solver.as_deref())?;
    solver
        .args
        .extend(args.solver_flags.backend.iter().cloned());
    Ok(Engine::new(
        Config {
            strategy,
            solver,
            timeout,
            cache,
            jobs: args.jobs.max(1),
            client: args.solver_flags.client.clone(),
        },
        out,
    )?)
}
