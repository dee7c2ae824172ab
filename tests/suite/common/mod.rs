//! Shared helpers for the `proxy_*` integration tests: spawn the real `smtproxy` binary
//! (and real solvers), feed it text, collect its output with a hard deadline, find its
//! solver children in /proc.
#![allow(dead_code)]

pub mod redis_server;
pub mod replies;
pub mod rng;
pub mod z3pipe;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Where `name` is found on PATH, as smtproxy finds its own backend: the binary behind a
/// pyenv shim (z3 and yices come from pip; a shim is a bash script that costs ~100 ms a
/// start), else the first executable of that name.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    smtproxy::driver::spec::find_in_path(name, &path, None)
}

/// The program a bare name runs ([`find_program`], looked up once per name), else the
/// name itself. Names with a `/` are returned as they are.
pub fn program(name: &str) -> std::ffi::OsString {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static FOUND: OnceLock<Mutex<HashMap<String, std::ffi::OsString>>> = OnceLock::new();
    if name.contains('/') {
        return name.into();
    }
    let mut found = FOUND.get_or_init(Default::default).lock().unwrap();
    found
        .entry(name.to_string())
        .or_insert_with(|| {
            find_program(name)
                .map(PathBuf::into_os_string)
                .unwrap_or_else(|| name.into())
        })
        .clone()
}

/// z3 behind a wrapper `dir/name` (a name starting with `z3` gets z3's flags and dialect)
/// that notes each start of it in a file beside it.
pub struct CountingZ3 {
    pub path: PathBuf,
    marker: PathBuf,
}

impl CountingZ3 {
    pub fn new(dir: &Path, name: &str) -> CountingZ3 {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        let marker = dir.join(format!("{name}.starts"));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho start >> '{}'\nexec '{}' \"$@\"\n",
                marker.display(),
                program("z3").to_string_lossy()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        CountingZ3 { path, marker }
    }

    /// The starts noted since the last call.
    pub fn take_starts(&self) -> usize {
        let n = std::fs::read_to_string(&self.marker).map_or(0, |s| s.lines().count());
        let _ = std::fs::remove_file(&self.marker);
        n
    }
}

/// z3 behind a wrapper (in `dir`) that holds every get-value and get-model for `delay_ms`
/// before z3 sees it: a solver whose models are dear to read, as cvc5's are on some KLEE
/// queries (it builds its model at the first get-value after a sat).
pub fn slow_model_z3(dir: &Path, delay_ms: u64) -> PathBuf {
    z3_holding(
        dir,
        &format!("z3-models-{delay_ms}ms"),
        &["(get-value", "(get-model"],
        delay_ms,
    )
}

/// z3 behind a wrapper `dir/name` that holds every input line starting (after blanks) with
/// one of `heads` for `delay_ms` before z3 sees it.
pub fn z3_holding(dir: &Path, name: &str, heads: &[&str], delay_ms: u64) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let z3 = program("z3");
    let p = dir.join(name);
    let heads: Vec<String> = heads.iter().map(|h| format!("b{h:?}")).collect();
    std::fs::write(
        &p,
        format!(
            r#"#!/usr/bin/env python3
import subprocess, sys, time
z3 = subprocess.Popen([{z3:?}] + sys.argv[1:], stdin=subprocess.PIPE)
for line in sys.stdin.buffer:
    if line.lstrip().startswith(({heads},)):
        time.sleep({delay_ms} / 1000)
    z3.stdin.write(line)
    z3.stdin.flush()
z3.stdin.close()
z3.wait()
"#,
            heads = heads.join(", ")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_smtproxy")
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn corpus(rel: &str) -> PathBuf {
    root().join("smt2-corpus").join(rel)
}

/// The text of a gzipped corpus file (`corpus(rel)`).
pub fn corpus_text(rel: &str) -> String {
    let path = corpus(rel);
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}

/// A KLEE log as `z3 -in` is timed on it: every `(exit)` line read as `(reset)`, the rest
/// byte for byte.
pub fn klee_stream(rel: &str) -> Vec<u8> {
    let text = corpus_text(rel);
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        if l.trim() == "(exit)" {
            out.push_str("(reset)\n");
        } else {
            out.push_str(l);
        }
    }
    out.into_bytes()
}

/// The KLEE programs whose logs `smt2-corpus/klee/PROGRAM/` holds (`solver-queries.smt2.gz`,
/// `all-queries.smt2.gz`).
pub const KLEE_PROGRAMS: &[&str] = &[
    "get_sign",
    "regexp",
    "sort",
    "sbase-echo",
    "sbase-basename",
    "sbase-dirname",
    "sbase-expr",
    "sbase-cut",
];

/// `smtproxy replay --check --quiet --solver z3 --strategy STRATEGY --cache CACHE --json JSON
/// LOG`: the summary goes to `json`; stdin is closed, stdout and stderr are the caller's to
/// set.
pub fn replay_json_cmd(
    strategy: &str,
    cache: impl AsRef<std::ffi::OsStr>,
    json: &Path,
    log: &Path,
) -> Command {
    let mut c = Command::new(bin());
    c.args([
        "replay",
        "--check",
        "--quiet",
        "--solver",
        "z3",
        "--strategy",
        strategy,
        "--cache",
    ])
    .arg(cache)
    .arg("--json")
    .arg(json)
    .arg(log)
    .stdin(Stdio::null());
    c
}

/// Is `prog` runnable (on PATH or an absolute path)?
pub fn have(prog: &str) -> bool {
    Command::new(program(prog))
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Fail the test unless `prog` is installed: the test command (scripts/test.sh) installs
/// every solver and tool first, so a missing one is a set-up bug, never a reason to pass.
pub fn require(prog: &str) {
    assert!(
        have(prog),
        "{prog} is not installed: scripts/install-deps.sh installs it (scripts/test.sh runs it first)"
    );
}

/// The result of one finished (or killed) run.
#[derive(Debug)]
pub struct Out {
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl Out {
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_str(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }
    /// Did the child hang (and get killed) or panic?
    pub fn hung_or_panicked(&self) -> bool {
        self.timed_out || self.code() == Some(101) || self.stderr_str().contains("panicked")
    }
    /// Panic (test failure) on a hang or a Rust panic in the child.
    pub fn assert_no_panic_no_hang(&self, what: &str) {
        assert!(
            !self.timed_out,
            "{what}: smtproxy hung (killed after {:?})\nstdout:\n{}\nstderr:\n{}",
            self.elapsed,
            tail(&self.stdout_str()),
            tail(&self.stderr_str())
        );
        let err = self.stderr_str();
        assert!(
            self.code() != Some(101) && !err.contains("panicked"),
            "{what}: smtproxy panicked (status {:?})\nstderr:\n{}\nstdout:\n{}",
            self.status,
            tail(&err),
            tail(&self.stdout_str())
        );
    }
    pub fn lines(&self) -> Vec<String> {
        self.stdout_str().lines().map(|l| l.to_string()).collect()
    }
}

/// Last ~3000 characters of a long text (for failure messages).
pub fn tail(s: &str) -> String {
    if s.len() <= 3000 {
        return s.to_string();
    }
    let mut i = s.len() - 3000;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    format!("...{}", &s[i..])
}

/// The `--stats` / replay summary: the last JSON object line on stderr.
pub fn summary(stderr: &str) -> serde_json::Value {
    stderr
        .lines()
        .rev()
        .find_map(|l| {
            serde_json::from_str::<serde_json::Value>(l.trim())
                .ok()
                .filter(|v| v.is_object())
        })
        .unwrap_or_else(|| panic!("no JSON summary on stderr:\n{}", tail(stderr)))
}

/// Remove the trie of repeated blocks kept beside the disk store at `store`
/// (`<store>.trie`), so that a next run is answered by the store's entries alone: for the
/// tests of the store's tiers.
pub fn drop_trie(store: &str) {
    let trie = format!("{store}.trie");
    match std::fs::remove_file(&trie) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("removing {trie}: {e}"),
    }
}

/// All of a disk store's files at `store` (`--cache-max-mb` bounds them together): the
/// SQLite file, its write-ahead log and the log's index, and the trie beside it; a file
/// that is not there counts 0.
pub fn store_bytes(store: &Path) -> u64 {
    ["", "-wal", "-shm", ".trie"]
        .iter()
        .map(|suffix| {
            let mut p = store.as_os_str().to_owned();
            p.push(suffix);
            std::fs::metadata(Path::new(&p)).map_or(0, |m| m.len())
        })
        .sum()
}

/// The number `k` of a JSON summary (panics when it is missing or not a number).
pub fn field(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("no field {k} in {v}"))
}

/// Pids of live (non-zombie) processes whose field `index` of /proc/PID/stat, counted
/// after the command name (0 state, 1 parent, 2 process group), is `value`.
fn processes_where(index: usize, value: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = after.split_whitespace().collect();
        if f.first() != Some(&"Z")
            && f.get(index).and_then(|p| p.parse::<u32>().ok()) == Some(value)
        {
            out.push(pid);
        }
    }
    out
}

/// Pids of live (non-zombie) processes whose parent is `ppid`.
pub fn children_of(ppid: u32) -> Vec<u32> {
    processes_where(1, ppid)
}

/// Pids of live (non-zombie) processes in the process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    processes_where(2, pgid)
}

/// Children and grand-children (the z3 on PATH may be a pyenv shim that forks).
pub fn descendants_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children_of(p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// Is `pid` alive (exists and is not a zombie)?
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let after = stat.rfind(')').map(|i| &stat[i + 1..]).unwrap_or("");
            after.split_whitespace().next() != Some("Z")
        }
        Err(_) => false,
    }
}

pub fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

pub fn kill(pid: u32, sig: i32) {
    // SAFETY: plain kill(2) on a pid we found as our own descendant.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Kill a child smtproxy and its solver descendants (used on a hang, so nothing leaks).
pub fn kill_tree(child: &mut Child) {
    for d in descendants_of(child.id()) {
        kill(d, libc::SIGKILL);
    }
    let _ = child.kill();
}

/// Spawn `smtproxy ARGS`, write `input` to its stdin (then close it), wait at most
/// `timeout`; on a hang kill it (and its solvers) and report `timed_out`.
pub fn run(args: &[&str], input: &[u8], timeout: Duration) -> Out {
    run_prog(bin(), args, input, timeout)
}

/// [`run`] as `smtproxy --solver SOLVER --strategy STRATEGY --cache none`.
pub fn run_under(solver: &str, strategy: &str, input: &[u8], timeout: Duration) -> Out {
    run_as_client(solver, strategy, &[solver], input, timeout)
}

/// [`run_under`], with the client's own command line for the solver (`cmd`: the solver's
/// name, then its flags, which smtproxy is given after its own options).
pub fn run_as_client(
    solver: &str,
    strategy: &str,
    cmd: &[&str],
    input: &[u8],
    timeout: Duration,
) -> Out {
    let mut args = vec![
        "--solver",
        solver,
        "--strategy",
        strategy,
        "--cache",
        "none",
    ];
    args.extend_from_slice(cmd.get(1..).unwrap_or_default());
    run(&args, input, timeout)
}

/// [`run`] as `smtproxy --solver z3 --strategy STRATEGY --cache none EXTRA...` (EXTRA: the
/// solver flags a client passes, `--stats`, ...).
pub fn run_z3(strategy: &str, extra: &[&str], input: &[u8], timeout: Duration) -> Out {
    let mut args = vec!["--solver", "z3", "--strategy", strategy, "--cache", "none"];
    args.extend_from_slice(extra);
    run(&args, input, timeout)
}

pub fn run_prog(prog: &str, args: &[&str], input: &[u8], timeout: Duration) -> Out {
    let mut cmd = Command::new(program(prog));
    cmd.args(args);
    run_cmd(cmd, input, timeout)
}

/// [`run_prog`] for a prepared command (environment, limits, ...); stdio is set here.
pub fn run_cmd(mut cmd: Command, input: &[u8], timeout: Duration) -> Out {
    let t0 = Instant::now();
    let prog = format!("{:?}", cmd.get_program());
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {prog}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let w = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        drop(stdin);
    });
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let ro = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let re = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if t0.elapsed() > timeout {
            timed_out = true;
            kill_tree(&mut child);
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = w.join();
    let stdout = ro.join().unwrap_or_default();
    let stderr = re.join().unwrap_or_default();
    Out {
        status,
        stdout,
        stderr,
        timed_out,
        elapsed: t0.elapsed(),
    }
}

/// An interactive smtproxy session: write commands, read answer lines with a deadline.
pub struct Session {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl Session {
    pub fn start(args: &[&str]) -> Session {
        let mut cmd = Command::new(bin());
        cmd.args(args);
        Session::start_cmd(cmd)
    }

    /// A session of a prepared smtproxy command (environment, ...); stdio is set here.
    pub fn start_cmd(mut cmd: Command) -> Session {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn smtproxy");
        let stdin = child.stdin.take();
        let so = child.stdout.take().unwrap();
        let mut se = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(so).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = se.read_to_end(&mut v);
            v
        });
        Session {
            child,
            stdin,
            lines: rx,
            stderr: Some(stderr),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Write text (a newline is appended); returns false if the pipe is closed.
    pub fn send(&mut self, text: &str) -> bool {
        let Some(s) = self.stdin.as_mut() else {
            return false;
        };
        s.write_all(text.as_bytes())
            .and_then(|_| s.write_all(b"\n"))
            .and_then(|_| s.flush())
            .is_ok()
    }

    /// The next stdout line, or None after `timeout` / at end of output.
    pub fn line(&mut self, timeout: Duration) -> Option<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(l) => Some(l),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Send a command and expect exactly one answer line.
    pub fn ask(&mut self, cmd: &str, timeout: Duration) -> String {
        assert!(self.send(cmd), "stdin closed before {cmd}");
        match self.line(timeout) {
            Some(l) => l,
            None => {
                let st = self.child.try_wait().ok().flatten();
                panic!("no answer to {cmd} within {timeout:?} (smtproxy status {st:?})")
            }
        }
    }

    /// Read lines until a balanced s-expression (or a single atom line) is complete.
    pub fn read_sexpr(&mut self, timeout: Duration) -> Option<String> {
        let mut acc = String::new();
        let mut depth: i64 = 0;
        loop {
            let l = self.line(timeout)?;
            let mut in_str = false;
            for ch in l.chars() {
                match ch {
                    '"' => in_str = !in_str,
                    '(' if !in_str => depth += 1,
                    ')' if !in_str => depth -= 1,
                    _ => {}
                }
            }
            if !acc.is_empty() {
                acc.push('\n');
            }
            acc.push_str(&l);
            if depth <= 0 {
                return Some(acc);
            }
        }
    }

    /// Wait for the process to exit on its own, stdin left open (as after a signal,
    /// where end of input must not be what ends it); None after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let t0 = Instant::now();
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            if t0.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Close stdin and wait for exit (kill after `timeout`); returns (status, stderr).
    pub fn finish(mut self, timeout: Duration) -> (Option<ExitStatus>, String, bool) {
        self.stdin = None;
        let t0 = Instant::now();
        let mut timed_out = false;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) => {}
                Err(_) => break None,
            }
            if t0.elapsed() > timeout {
                timed_out = true;
                kill_tree(&mut self.child);
                break self.child.wait().ok();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let err = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (
            status,
            String::from_utf8_lossy(&err).into_owned(),
            timed_out,
        )
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            kill_tree(&mut self.child);
            let _ = self.child.wait();
        }
    }
}

/// `smtproxy replay --check --quiet` on one log; returns (exit code, parsed JSON, stderr).
pub fn replay(
    log: &Path,
    strategy: &str,
    solver: &str,
    timeout: Duration,
) -> (Option<i32>, serde_json::Value, String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("summary.json");
    let log_s = log.to_string_lossy().into_owned();
    let json_s = json.to_string_lossy().into_owned();
    let args = [
        "replay",
        "--check",
        "--quiet",
        "--strategy",
        strategy,
        "--solver",
        solver,
        "--cache",
        "none",
        "--json",
        &json_s,
        &log_s,
    ];
    let out = run(&args, b"", timeout);
    assert!(!out.timed_out, "replay {log_s} --strategy {strategy} --solver {solver}: hung, killed after {:?}\nstderr:\n{}", out.elapsed, tail(&out.stderr_str()));
    out.assert_no_panic_no_hang(&format!("replay {log_s} {strategy} {solver}"));
    let v = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (out.code(), v, out.stderr_str(), out.elapsed)
}

/// A query z3 takes seconds on (factoring a 64-bit product), for tests that need a busy
/// solver: set-logic and declarations first, one command per line.
#[allow(dead_code)]
pub const FACTOR: &str = "(set-logic QF_BV)
(declare-const x (_ BitVec 64))
(declare-const y (_ BitVec 64))
(push 1)
(assert (= (bvmul x y) #x6732d442f66afa45))
(assert (bvugt x #x0000000000000001))
(assert (bvugt y #x0000000000000001))
(assert (bvult x #x00000000ffffffff))
(assert (bvult y #x00000000ffffffff))
";
