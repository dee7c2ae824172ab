//! `smtproxy bench` as a user runs it (the real binary, real z3): the table, the JSON
//! summary of DESIGN.md's contract, the plot, `--rounds`, and a failing exit when an
//! answer disagrees with the one recorded in the log.

use crate::common;

use common::{corpus, run};
use std::time::Duration;

fn strings(v: &serde_json::Value, key: &str) -> Vec<String> {
    v["runs"]
        .as_array()
        .map(|runs| {
            runs.iter()
                .map(|r| r[key].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn rounds_report_each_strategys_median_run_with_every_runs_answers_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("bench.json");
    let svg = dir.path().join("bench.svg");
    let logs = [
        corpus("klee/get_sign/solver-queries.smt2.gz"),
        corpus("klee/sbase-echo/solver-queries.smt2.gz"),
    ];
    let mut args = vec![
        "--solver".to_string(),
        "z3".into(),
        "bench".into(),
        // fresh is listed last and must still run first: it is the cross-check reference.
        "--strategies".into(),
        "hybrid,fresh".into(),
        "--rounds".into(),
        "3".into(),
        "--json".into(),
        json.display().to_string(),
        "--plot".into(),
        svg.display().to_string(),
    ];
    args.extend(logs.iter().map(|l| l.display().to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&argv, b"", Duration::from_secs(240));
    assert_eq!(out.code(), Some(0), "bench failed: {}", out.stderr_str());

    // The table: a header, then one row per strategy per log, fresh first, the median run's,
    // then a line saying what ran.
    let stdout = out.stdout_str();
    let footer = stdout.lines().last().unwrap_or("");
    assert!(
        footer.starts_with("# 2 logs x 2 strategies x 3 round(s) (median run shown)"),
        "{stdout}"
    );
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    let shape: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(
        shape,
        [
            ("get_sign/solver-queries", "fresh"),
            ("get_sign/solver-queries", "hybrid"),
            ("sbase-echo/solver-queries", "fresh"),
            ("sbase-echo/solver-queries", "hybrid"),
        ]
    );
    assert!(rows.iter().all(|r| r[10] == "0"), "mismatches: {stdout}");
    assert!(rows.iter().all(|r| r[2]
        == if r[0].starts_with("get_sign") {
            "3"
        } else {
            "33"
        }));

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json written"))
            .expect("json parses");
    assert_eq!(
        strings(&v, "strategy"),
        ["fresh", "hybrid", "fresh", "hybrid"]
    );
    for r in v["runs"].as_array().expect("runs") {
        let walls: Vec<f64> = r["wall_ms_rounds"]
            .as_array()
            .expect("wall_ms_rounds with --rounds 3")
            .iter()
            .filter_map(|w| w.as_f64())
            .collect();
        assert_eq!(walls.len(), 3, "{r}");
        let mut sorted = walls.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(
            r["wall_ms"].as_f64(),
            Some(sorted[1]),
            "not the median: {r}"
        );
        assert_eq!(r["expected_mismatches"], 0, "{r}");
        assert_eq!(r["cross_mismatches"], 0, "{r}");
        assert_eq!(r["unknown"], 0, "{r}");
    }
    let plot = std::fs::read_to_string(&svg).expect("plot written");
    assert!(plot.contains("<svg") && plot.contains("hybrid"), "{plot}");
}

#[test]
fn a_wrong_recorded_answer_is_a_mismatch_and_a_failing_exit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("wrong.smt2");
    // The second check-sat is unsat; the log claims sat.
    std::fs::write(
        &log,
        "(set-logic QF_BV)\n(declare-fun x () (_ BitVec 8))\n\
         (set-info :status sat)\n(assert (bvult x #x10))\n(check-sat)\n\
         (set-info :status sat)\n(assert (bvugt x #x20))\n(check-sat)\n",
    )
    .expect("write log");
    let json = dir.path().join("bench.json");
    let log_s = log.display().to_string();
    let json_s = json.display().to_string();
    let args = [
        "--solver",
        "z3",
        "bench",
        "--strategies",
        "fresh,cache",
        "--rounds",
        "2",
        "--json",
        &json_s,
        &log_s,
    ];
    let out = run(&args, b"", Duration::from_secs(120));
    assert_eq!(out.code(), Some(1), "{}", out.stderr_str());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json written"))
            .expect("json parses");
    for r in v["runs"].as_array().expect("runs") {
        // One wrong record, seen in each of the two rounds.
        assert_eq!(r["expected_mismatches"], 2, "{r}");
        assert_eq!(r["cross_mismatches"], 0, "{r}");
        assert_eq!(r["unsat"], 1, "{r}");
    }
}

#[test]
fn zero_rounds_is_refused() {
    let log = corpus("klee/get_sign/solver-queries.smt2.gz");
    let log_s = log.display().to_string();
    let out = run(
        &["bench", "--rounds", "0", &log_s],
        b"",
        Duration::from_secs(30),
    );
    assert_eq!(out.code(), Some(2), "{}", out.stderr_str());
    assert!(
        out.stderr_str().contains("--rounds"),
        "{}",
        out.stderr_str()
    );
}

#[test]
fn a_missing_log_is_reported_once_with_its_cause() {
    let out = run(
        &["bench", "--strategies", "fresh", "/nonexistent/q.smt2"],
        b"",
        Duration::from_secs(30),
    );
    assert_eq!(out.code(), Some(1), "{}", out.stderr_str());
    let err = out.stderr_str();
    assert!(err.contains("cannot read /nonexistent/q.smt2: "), "{err}");
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
}
