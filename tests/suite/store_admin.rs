//! `smtproxy cache stats|prune|export|import` through the real binary, on a store filled
//! by replaying KLEE logs.

use crate::common;

use common::{bin, corpus, store_bytes};
use std::path::Path;
use std::process::{Command, Stdio};

fn smtproxy(args: &[&str], store: &Path) -> (bool, String, String) {
    let out = Command::new(bin())
        .args(args)
        .arg("--cache")
        .arg(store)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("{e}: {s}"))
}

fn fill(store: &Path) {
    for p in ["sbase-expr", "sbase-cut"] {
        let log = corpus(&format!("klee/{p}/solver-queries.smt2.gz"));
        let (ok, _, err) = smtproxy(
            &[
                "replay",
                "--check",
                "--quiet",
                "--solver",
                "z3",
                log.to_str().unwrap(),
            ],
            store,
        );
        assert!(ok, "{err}");
    }
}

#[test]
fn stats_export_import_prune() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.sqlite3"), dir.path().join("b.sqlite3"));
    fill(&a);
    let (ok, out, err) = smtproxy(&["cache", "stats"], &a);
    assert!(ok, "{err}");
    let s = json(&out);
    let entries = s["entries"].as_u64().unwrap();
    assert!(entries > 50, "{s}");
    assert_eq!(
        s["sat"].as_u64().unwrap() + s["unsat"].as_u64().unwrap(),
        entries
    );
    // The file's own entry format: 3 for a store made by this build.
    assert_eq!(s["format_version"], 3);
    assert_eq!(s["schema_version"], 2);
    assert!(s["bytes"].as_u64().unwrap() > 0);
    // The trie of repeated blocks the replays kept beside the file.
    let trie = std::fs::metadata(dir.path().join("a.sqlite3.trie")).map_or(0, |m| m.len());
    assert_eq!(s["trie_bytes"].as_u64(), Some(trie), "{s}");

    let dump = dir.path().join("a.jsonl");
    let (ok, _, err) = smtproxy(&["cache", "export", "--out", dump.to_str().unwrap()], &a);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&dump).unwrap();
    assert_eq!(text.lines().count() as u64, entries + 1);
    // A damaged copy: one entry's bytes changed, so its checksum fails.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut bad: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    let e = bad["entry"].as_str().unwrap().to_string();
    bad["entry"] = format!(
        "{}{}",
        &e[..e.len() - 2],
        if e.ends_with("00") { "01" } else { "00" }
    )
    .into();
    lines[1] = bad.to_string();
    let damaged = dir.path().join("damaged.jsonl");
    std::fs::write(&damaged, lines.join("\n") + "\n").unwrap();
    let (ok, out, err) = smtproxy(&["cache", "import", damaged.to_str().unwrap()], &b);
    assert!(ok, "{err}");
    let r = json(&out);
    assert_eq!(
        (
            r["imported"].as_u64().unwrap(),
            r["rejected"].as_u64().unwrap()
        ),
        (entries - 1, 1)
    );
    // Again, whole: the one missing entry comes in, the rest are present.
    let (ok, out, _) = smtproxy(&["cache", "import", dump.to_str().unwrap()], &b);
    assert!(ok);
    let r = json(&out);
    assert_eq!(
        (
            r["imported"].as_u64().unwrap(),
            r["present"].as_u64().unwrap()
        ),
        (1, entries - 1)
    );
    // The imported store answers the logs with no solver call for what it holds.
    let log = corpus("klee/sbase-expr/solver-queries.smt2.gz");
    let (ok, _, err) = smtproxy(
        &[
            "replay",
            "--check",
            "--quiet",
            "--solver",
            "z3",
            log.to_str().unwrap(),
        ],
        &b,
    );
    assert!(ok, "{err}");
    let run = json(err.lines().rev().find(|l| l.starts_with('{')).unwrap());
    assert!(run["disk_hits"].as_u64().unwrap() > 0, "{run}");

    // Prune to a size well below the store's (all its files: the file, the log a close
    // leaves, the log's index, the trie).
    let before = store_bytes(&b);
    let cap_mb = (before as f64 / 3.0) / 1048576.0;
    let (ok, out, err) = smtproxy(&["cache", "prune", "--max-mb", &format!("{cap_mb}")], &b);
    assert!(ok, "{err}");
    let p = json(&out);
    assert!(p["deleted"].as_u64().unwrap() > 0, "{p}");
    assert!(store_bytes(&b) as f64 <= before as f64 / 3.0, "{p}");
    let (ok, _, err) = smtproxy(&["cache", "prune"], &b);
    assert!(!ok && err.contains("prune needs"), "{err}");
}

/// `--cache-max-mb 1` bounds the whole store as a user sees it on disk (the SQLite file, its
/// log and the log's index, the trie beside it), not only the file: two replays of logs
/// whose store is several times that size leave at most 1 MiB, the bound evicting on the way,
/// every answer the log's.
#[test]
fn a_bound_covers_every_file_of_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("capped.sqlite3");
    let logs: Vec<String> = ["regexp", "sbase-expr", "sbase-cut", "sbase-basename"]
        .iter()
        .flat_map(|p| {
            ["solver-queries", "all-queries"].map(|k| {
                corpus(&format!("klee/{p}/{k}.smt2.gz"))
                    .display()
                    .to_string()
            })
        })
        .collect();
    let cap = 1u64 << 20;
    let mut evicted = 0;
    for _ in 0..2 {
        let mut args = vec!["replay", "--check", "--quiet", "--solver", "z3"];
        args.extend(["--cache-max-mb", "1"]);
        args.extend(logs.iter().map(String::as_str));
        let (ok, _, err) = smtproxy(&args, &store);
        assert!(ok, "{}", common::tail(&err));
        // One summary per log.
        let runs: Vec<_> = err
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(json)
            .collect();
        assert_eq!(runs.len(), logs.len(), "{}", common::tail(&err));
        evicted += runs
            .iter()
            .map(|r| r["disk_evicted"].as_u64().unwrap())
            .sum::<u64>();
        assert!(store_bytes(&store) <= cap, "{} bytes", store_bytes(&store));
    }
    assert!(evicted > 0, "the bound was never reached");
    // Unbounded, the same logs make a store several times the bound.
    let free = dir.path().join("free.sqlite3");
    let mut args = vec!["replay", "--quiet", "--solver", "z3", "--cache-max-mb", "0"];
    args.extend(logs.iter().map(String::as_str));
    let (ok, _, err) = smtproxy(&args, &free);
    assert!(ok, "{}", common::tail(&err));
    assert!(store_bytes(&free) > 3 * cap, "{} bytes", store_bytes(&free));
}
