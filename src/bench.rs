//! `smtproxy bench`: every strategy on every log, side by side. Each run uses a new
//! engine (a cold result store in a fresh temporary file unless `--warm`); every answer is
//! cross-checked against the `fresh` strategy's answer to the same check-sat (fresh's first
//! run) and against the answer recorded in the log. With `--rounds N` every strategy runs N
//! times per log, interleaved, and the strategy's median run stands for it (its mismatches
//! are those of all N runs). Prints a table, writes `{"runs": [...]}` JSON (one run per
//! strategy per log) and an optional SVG plot.
//!
//! With several solvers (`--solver z3,yices`), every strategy runs with each solver alone
//! and, for the modelled strategies (cache, hybrid), with the portfolio of them all; a
//! `vbs` row per strategy is the virtual best solver: per check-sat the least solver wait
//! of the solo runs (their median runs) and smtproxy's own work around it as their mean
//! (`vbs_check`), summed. Rows then name their solver (`hybrid@yices`,
//! `hybrid@z3,yices`, `hybrid@vbs`) and the JSON runs carry it in `solver`. Fresh's run
//! with the first solver is the cross-check reference.

use crate::cli::EngineArgs;
use crate::corpus;
use crate::driver::spec::solver_list;
use crate::replay::{self, progress_bar, ReplayResult};
use crate::session::stats::Summary;
use crate::session::vocab::Answer;
use crate::session::Strategy;
use crate::setup::{cache_config, make_engine, starts_at_once};
use anyhow::{bail, Context, Result};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// What `bench` was asked to do, besides the engine's own options.
pub struct BenchOptions<'a> {
    pub strategies: Option<&'a str>,
    pub json: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub warm: bool,
    /// Runs of every strategy on each log, interleaved (round 1 of every strategy, then
    /// round 2, ...); the table reports each strategy's median run.
    pub rounds: u32,
}

pub fn run(args: &EngineArgs, corpus_paths: &[PathBuf], opts: BenchOptions<'_>) -> Result<i32> {
    if corpus_paths.is_empty() {
        bail!("bench needs at least one log");
    }
    if opts.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let strats = parse_strategies(opts.strategies)?;
    let solvers: Vec<String> = args
        .solver
        .as_deref()
        .map(|v| solver_list(v).into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let several = solvers.len() > 1;
    // (strategy, solver label, engine arguments) of every run, fresh first.
    let mut variants: Vec<(Strategy, String, EngineArgs)> = Vec::new();
    for &s in &strats {
        if !several {
            variants.push((s, String::new(), args.clone()));
            continue;
        }
        for (i, solver) in solvers.iter().enumerate() {
            let mut a = args.clone();
            a.solver = Some(solver.clone());
            if i > 0 {
                // The solver flags on the command line are the first solver's.
                a.solver_flags.backend.clear();
            }
            variants.push((s, solver.clone(), a));
        }
        if matches!(s, Strategy::Cache | Strategy::Hybrid) {
            variants.push((s, solvers.join(","), args.clone()));
        }
    }
    let tmp = std::env::temp_dir().join(format!("smtproxy-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let mut runs: Vec<Summary> = Vec::new();
    let mut failures = 0u64;
    println!(
        "{:<44} {:<24} {:>7} {:>7} {:>7} {:>7} {:>5} {:>10} {:>10} {:>8} {:>5}",
        "log",
        "strategy",
        "queries",
        "solver",
        "hits",
        "models",
        "enum",
        "wall_ms",
        "solver_ms",
        "speedup",
        "mism"
    );
    let started = std::time::Instant::now();
    let quiet_bar = !std::io::stderr().is_terminal();
    for (n, path) in corpus_paths.iter().enumerate() {
        if quiet_bar {
            // Without a terminal there is no progress bar: one line per log instead.
            eprintln!(
                "[{}/{}] {} ({:.0} s so far)",
                n + 1,
                corpus_paths.len(),
                short_name(path),
                started.elapsed().as_secs_f64()
            );
        }
        let log = corpus::load(path)?;
        // The answers of fresh's first run: the reference every other run is checked against.
        let mut fresh_answers: Option<Vec<Answer>> = None;
        let mut per_variant: Vec<Vec<Summary>> = variants.iter().map(|_| Vec::new()).collect();
        for round in 0..opts.rounds {
            for (i, (s, solver, vargs)) in variants.iter().enumerate() {
                let s = *s;
                let mut c = cache_config(vargs)?;
                // `--cache none` stays storeless; any other store is a new file per run.
                if !opts.warm && (c.disk.is_some() || c.redis.is_some()) {
                    c.disk =
                        Some(tmp.join(format!("store-{i}-{round}-{}.sqlite3", short_name(path))));
                    c.redis = None;
                }
                let mut label = format!("{} {}", short_name(path), row_name(s, solver));
                if opts.rounds > 1 {
                    label.push_str(&format!(" {}/{}", round + 1, opts.rounds));
                }
                let (mut sum, answers) =
                    run_one(vargs, s, c, &log, &label, fresh_answers.as_deref())?;
                if s == Strategy::Fresh && fresh_answers.is_none() {
                    fresh_answers = Some(answers);
                }
                sum.solver = solver.clone();
                failures += sum.expected_mismatches + sum.cross_mismatches;
                per_variant[i].push(sum);
            }
        }
        let mut medians: Vec<Summary> = per_variant.into_iter().filter_map(median_run).collect();
        if several {
            medians = with_vbs(medians, &solvers);
        }
        // Against fresh (with the first solver), when fresh ran on this log ("-" otherwise).
        let fresh_wall = medians
            .iter()
            .find(|m| m.strategy == Strategy::Fresh.name() && (!several || m.solver == solvers[0]))
            .map(|m| m.wall_ms);
        for sum in medians {
            let speedup = fresh_wall.map_or_else(
                || "-".to_string(),
                |f| format!("{:.2}x", f / sum.wall_ms.max(1e-9)),
            );
            println!(
                "{:<44} {:<24} {:>7} {:>7} {:>7} {:>7} {:>5} {:>10.1} {:>10.1} {:>8} {:>5}",
                short_name(path),
                row_name_str(&sum.strategy, &sum.solver),
                sum.queries,
                sum.solver_checks,
                sum.cache_hits,
                sum.model_hits,
                sum.enumerated + sum.guessed + sum.bounded,
                sum.wall_ms,
                sum.solver_ms,
                speedup,
                sum.expected_mismatches + sum.cross_mismatches
            );
            runs.push(sum);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "# {} logs x {} {} x {} round(s) ({}), {} cores, {:.0} s in all",
        corpus_paths.len(),
        variants.len(),
        if several { "runs" } else { "strategies" },
        opts.rounds,
        if opts.rounds > 1 {
            "median run shown"
        } else {
            "one run each"
        },
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        started.elapsed().as_secs_f64()
    );
    if let Some(j) = opts.json {
        let v = serde_json::json!({ "runs": runs });
        std::fs::write(&j, serde_json::to_string_pretty(&v)?)
            .with_context(|| format!("cannot write {}", j.display()))?;
    }
    if let Some(p) = opts.plot {
        plot_svg(&p, &runs)?;
    }
    Ok(if failures > 0 { 1 } else { 0 })
}

/// A row's name: the strategy, and its solver(s) when `bench` runs several.
fn row_name(s: Strategy, solver: &str) -> String {
    row_name_str(s.name(), solver)
}

fn row_name_str(strategy: &str, solver: &str) -> String {
    if solver.is_empty() {
        strategy.to_string()
    } else {
        format!("{strategy}@{solver}")
    }
}

/// After each strategy's runs, its virtual best solver (`solver` "vbs"): per check-sat
/// [`vbs_check`] of the strategy's solo runs (one per solver in `solvers`), summed.
/// Only where every solo run answered every check-sat.
fn with_vbs(runs: Vec<Summary>, solvers: &[String]) -> Vec<Summary> {
    let mut out: Vec<Summary> = Vec::with_capacity(runs.len() + 2);
    let mut i = 0;
    while i < runs.len() {
        let strategy = runs[i].strategy.clone();
        let mut j = i;
        while j < runs.len() && runs[j].strategy == strategy {
            j += 1;
        }
        let group = &runs[i..j];
        out.extend(group.iter().cloned());
        let solos: Vec<&Summary> = group
            .iter()
            .filter(|r| solvers.contains(&r.solver))
            .collect();
        let n = solos.first().map_or(0, |r| r.check_ms.len());
        if solos.len() == solvers.len()
            && n > 0
            && solos
                .iter()
                .all(|r| r.check_ms.len() == n && r.check_solver_ms.len() == n)
        {
            let best: Vec<f64> = (0..n)
                .map(|k| vbs_check(solos.iter().map(|r| (r.check_ms[k], r.check_solver_ms[k]))))
                .collect();
            let mut v = solos[0].clone();
            v.solver = "vbs".into();
            v.wall_ms = best.iter().sum();
            v.solver_ms = 0.0;
            v.solver_checks = 0;
            v.cache_hits = 0;
            v.model_hits = 0;
            v.block_hints = 0;
            v.block_repeats = 0;
            v.optimisations = 0;
            v.enumerated = 0;
            v.guessed = 0;
            v.bounded = 0;
            v.expected_mismatches = 0;
            v.cross_mismatches = 0;
            v.wall_ms_rounds = Vec::new();
            v.solvers = Vec::new();
            v.check_ms = best;
            out.push(v);
        }
        i = j;
    }
    out
}

/// The virtual best solver's time for one check-sat, from each solo run's `(time, solver
/// wait)` for it, in ms: smtproxy's own work (the time less the wait) averaged over the
/// runs, plus the least wait. The solver is what the virtual best chooses; smtproxy's own
/// work around it does not depend on the choice but for the path the run took, and differs
/// from run to run by noise. The least of the whole times would take the least of that
/// noise too, query by query, below what any run can be expected to take: `--solver
/// yices,yices` (one solver twice) gave a virtual best 9-15% below both of its identical
/// solo runs that way on KLEE logs smtproxy answers mostly itself.
///
/// Never more than the solo runs' mean time for the check-sat (the least wait is at most
/// their mean wait), so the virtual best never exceeds the solo runs' mean wall time.
fn vbs_check(runs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut own, mut wait, mut n) = (0.0, f64::INFINITY, 0u32);
    for (time, solver) in runs {
        own += time - solver;
        wait = wait.min(solver);
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    (own / f64::from(n) + wait).max(0.0)
}

/// The strategies to run, fresh first (it is the reference for cross-checks).
fn parse_strategies(list: Option<&str>) -> Result<Vec<Strategy>> {
    let Some(list) = list else {
        return Ok(vec![
            Strategy::Fresh,
            Strategy::Passthrough,
            Strategy::Stack,
            Strategy::StackCse,
            Strategy::Cache,
            Strategy::Hybrid,
        ]);
    };
    let mut v = Vec::new();
    for s in list.split(',') {
        v.push(Strategy::parse(s.trim()).with_context(|| format!("unknown strategy '{s}'"))?);
    }
    v.sort_by_key(|s| *s != Strategy::Fresh);
    Ok(v)
}

/// One strategy over one log in a new engine: its summary, cross-checked against `fresh`
/// when fresh's answers are known, and its answers.
fn run_one(
    args: &EngineArgs,
    s: Strategy,
    cache: crate::cache::CacheConfig,
    log: &corpus::Log,
    label: &str,
    fresh: Option<&[Answer]>,
) -> Result<(Summary, Vec<Answer>)> {
    let mut engine = make_engine(args, s, Box::new(std::io::sink()), cache)?;
    if starts_at_once(engine.backend_spec(), s) {
        engine.start_backend().map_err(crate::error::Error::from)?;
    }
    let bar = progress_bar(replay::count_checks(log) as u64, label);
    let res: ReplayResult = replay::replay(log, &mut engine, |n| {
        if let Some(b) = &bar {
            b.set_position(n as u64)
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    engine.shutdown();
    let cross = match fresh {
        Some(f) => {
            f.iter()
                .zip(&res.answers)
                .filter(|(a, b)| **a != Answer::Unknown && **b != Answer::Unknown && a != b)
                .count() as u64
                + (f.len() as i64 - res.answers.len() as i64).unsigned_abs()
        }
        None => 0,
    };
    let mut sum = engine
        .stats
        .summary(&log.path, res.expected_mismatches, cross);
    sum.check_ms = res.check_ms;
    sum.check_solver_ms = res.check_solver_ms;
    Ok((sum, res.answers))
}

/// The run with the median wall time (the lower median for an even count), carrying the
/// mismatches of every run and every run's wall time. `None` for no runs.
fn median_run(mut rounds: Vec<Summary>) -> Option<Summary> {
    if rounds.len() <= 1 {
        return rounds.pop();
    }
    let walls: Vec<f64> = rounds.iter().map(|r| r.wall_ms).collect();
    let expected: u64 = rounds.iter().map(|r| r.expected_mismatches).sum();
    let cross: u64 = rounds.iter().map(|r| r.cross_mismatches).sum();
    rounds.sort_by(|a, b| a.wall_ms.total_cmp(&b.wall_ms));
    let mut m = rounds.swap_remove((walls.len() - 1) / 2);
    m.expected_mismatches = expected;
    m.cross_mismatches = cross;
    m.wall_ms_rounds = walls;
    Some(m)
}

/// `klee/regexp/all-queries.smt2.gz` -> `regexp/all-queries`.
pub fn short_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = file
        .trim_end_matches(".gz")
        .trim_end_matches(".smt2")
        .to_string();
    match path.parent().and_then(|p| p.file_name()) {
        Some(d) => format!("{}/{}", d.to_string_lossy(), file),
        None => file,
    }
}

fn plot_svg(path: &Path, runs: &[Summary]) -> Result<()> {
    use plotters::prelude::*;
    let logs: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in runs {
            if !v.contains(&r.log) {
                v.push(r.log.clone());
            }
        }
        v
    };
    let strategies: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in runs {
            if !v.contains(&r.strategy) {
                v.push(r.strategy.clone());
            }
        }
        v
    };
    let max = runs.iter().map(|r| r.wall_ms).fold(1.0f64, f64::max);
    let root = SVGBackend::new(
        path,
        (
            1200,
            200 + 40 * logs.len() as u32 * strategies.len().max(1) as u32 / 2,
        ),
    )
    .into_drawing_area();
    root.fill(&WHITE)
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    let n = (logs.len() * strategies.len()) as i32;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "wall time per strategy per log (ms, log scale)",
            ("sans-serif", 20),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(320)
        .build_cartesian_2d((0.1f64..max * 2.0).log_scale(), 0..n.max(1))
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    chart
        .configure_mesh()
        .y_labels(n.max(1) as usize)
        .y_label_formatter(&|y| {
            let i = *y as usize;
            let (l, s) = (i / strategies.len().max(1), i % strategies.len().max(1));
            match (logs.get(l), strategies.get(s)) {
                (Some(l), Some(s)) => format!("{} {}", short_name(Path::new(l)), s),
                _ => String::new(),
            }
        })
        .draw()
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    let bars = runs.iter().filter_map(|r| {
        let l = logs.iter().position(|x| *x == r.log)?;
        let s = strategies.iter().position(|x| *x == r.strategy)?;
        let y = (l * strategies.len() + s) as i32;
        let color = Palette99::pick(s);
        Some(Rectangle::new(
            [(0.1, y), (r.wall_ms.max(0.11), y + 1)],
            color.filled(),
        ))
    });
    chart
        .draw_series(bars)
        .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    root.present().map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solo(solver: &str, times: &[(f64, f64)]) -> Summary {
        let mut s = crate::session::stats::Stats::new("hybrid").summary("log", 0, 0);
        s.solver = solver.into();
        s.wall_ms = times.iter().map(|t| t.0).sum();
        s.check_ms = times.iter().map(|t| t.0).collect();
        s.check_solver_ms = times.iter().map(|t| t.1).collect();
        s
    }

    #[test]
    fn the_virtual_best_chooses_solvers_not_noise() {
        // Check 0: no solver; the runs' own work differs by noise (1 and 3 ms): its mean.
        // Check 1: z3 waited 9 ms, yices 2; own work 1 ms in both: 1 + 2.
        // Check 2: yices waited 5 ms, z3 1 (own work 2 and 4): 3 + 1.
        let z3 = solo("z3", &[(1.0, 0.0), (10.0, 9.0), (3.0, 1.0)]);
        let yices = solo("yices", &[(3.0, 0.0), (3.0, 2.0), (9.0, 5.0)]);
        let solvers = vec!["z3".to_string(), "yices".to_string()];
        let out = with_vbs(vec![z3, yices], &solvers);
        assert_eq!(out.len(), 3);
        let v = &out[2];
        assert_eq!(v.solver, "vbs");
        assert_eq!(v.check_ms, vec![2.0, 3.0, 4.0]);
        assert_eq!(v.wall_ms, 9.0);
        // One solver twice: the virtual best is as fast as the runs on average, not faster.
        let a = solo("yices", &[(1.0, 0.0), (3.0, 0.0)]);
        let b = solo("yices", &[(3.0, 0.0), (1.0, 0.0)]);
        let out = with_vbs(vec![a, b], &["yices".to_string(), "yices".to_string()]);
        assert_eq!(out.last().map(|v| v.wall_ms), Some(4.0));
    }
}
