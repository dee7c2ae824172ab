//! Faults around the proxy: the solver killed under it, deadlines, missing solvers,
//! SIGTERM to the proxy, the client closing stdout early.

use crate::common;

use common::{alive, comm, descendants_of, kill, run, summary, Session, FACTOR};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(30);

/// The solver process(es) under smtproxy `pid` (waits until at least one is up).
fn solver_pids(pid: u32) -> Vec<u32> {
    let t0 = Instant::now();
    loop {
        let d = descendants_of(pid);
        if !d.is_empty() || t0.elapsed() > Duration::from_secs(10) {
            return d;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_dead(pid: u32, within: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < within {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

fn kill_solver_between_checks(strategy: &str) {
    common::require("z3");
    let mut s = Session::start(&["--solver", "z3", "--strategy", strategy, "--cache", "none"]);
    s.send("(set-option :produce-models true)");
    s.send("(set-logic QF_BV)");
    s.send("(declare-const a (_ BitVec 8))");
    s.send("(declare-const b (_ BitVec 8))");
    s.send("(assert (= (bvadd a b) #x10))");
    s.send("(assert (bvult a #x08))");
    assert_eq!(
        s.ask("(check-sat)", T),
        "sat",
        "{strategy}: first check-sat"
    );

    let victims = solver_pids(s.pid());
    assert!(
        !victims.is_empty(),
        "{strategy}: no solver process found under smtproxy pid {}",
        s.pid()
    );
    eprintln!(
        "{strategy}: killing solver(s) {:?} ({:?})",
        victims,
        victims.iter().map(|p| comm(*p)).collect::<Vec<_>>()
    );
    for v in &victims {
        kill(*v, libc::SIGKILL);
    }
    for v in &victims {
        assert!(
            wait_dead(*v, Duration::from_secs(5)),
            "{strategy}: solver {v} survived SIGKILL"
        );
    }

    s.send("(push 1)");
    s.send("(assert (= a #x09))");
    assert_eq!(
        s.ask("(check-sat)", T),
        "unsat",
        "{strategy}: check-sat after the solver was killed (a < 8 and a = 9)"
    );
    s.send("(pop 1)");
    assert_eq!(
        s.ask("(check-sat)", T),
        "sat",
        "{strategy}: check-sat after pop"
    );
    s.send("(get-value (a b))");
    let v = s.read_sexpr(T).expect("get-value answer");
    assert!(
        !v.starts_with("(error"),
        "{strategy}: get-value after recovery: {v}"
    );
    let a = value_of(&v, "a").unwrap_or_else(|| panic!("{strategy}: no value for a in {v}"));
    let b = value_of(&v, "b").unwrap_or_else(|| panic!("{strategy}: no value for b in {v}"));
    assert!(
        a < 8 && (a + b) % 256 == 0x10,
        "{strategy}: model a={a} b={b} violates the assertions ({v})"
    );

    // Kill it once more, right before a get-value-free query under a new scope.
    for v in solver_pids(s.pid()) {
        kill(v, libc::SIGKILL);
    }
    std::thread::sleep(Duration::from_millis(200));
    s.send("(assert (= b #x0f))");
    assert_eq!(
        s.ask("(check-sat)", T),
        "sat",
        "{strategy}: after second kill"
    );
    assert_eq!(s.ask("(echo \"done\")", T), "done");
    let (st, err, hung) = s.finish(T);
    assert!(!hung, "{strategy}: smtproxy did not exit at end of input");
    assert!(!err.contains("panicked"), "{strategy}: panic:\n{err}");
    assert_eq!(
        st.and_then(|s| s.code()),
        Some(0),
        "{strategy}: exit status; stderr:\n{err}"
    );
}

/// `#x..` / `#b..` / `(_ bvN 8)` value of `name` in a get-value answer.
fn value_of(ans: &str, name: &str) -> Option<u64> {
    let flat = ans.replace('\n', " ");
    let key = format!("({name} ");
    let i = flat.find(&key)? + key.len();
    let rest = flat[i..].trim_start();
    if let Some(h) = rest.strip_prefix("#x") {
        let hex: String = h.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        return u64::from_str_radix(&hex, 16).ok();
    }
    if let Some(b) = rest.strip_prefix("#b") {
        let bin: String = b.chars().take_while(|c| *c == '0' || *c == '1').collect();
        return u64::from_str_radix(&bin, 2).ok();
    }
    if let Some(d) = rest.strip_prefix("(_ bv") {
        let dec: String = d.chars().take_while(|c| c.is_ascii_digit()).collect();
        return dec.parse().ok();
    }
    None
}

#[test]
fn solver_killed_passthrough() {
    kill_solver_between_checks("passthrough");
}

#[test]
fn solver_killed_stack() {
    kill_solver_between_checks("stack");
}

#[test]
fn solver_killed_fresh() {
    kill_solver_between_checks("fresh");
}

/// A solver wrapper that proxies a real z3 and, in its first incarnation only (the marker
/// file does not exist yet), SIGKILLs its whole process group (itself and its z3) at the
/// `nth` input line containing `trigger`. Modes: `before` (the line is never forwarded),
/// `during` (forwarded; killed as soon as z3 starts answering, nothing relayed),
/// `partial` (half of z3's first answer line relayed, then killed), `after` (the whole
/// answer relayed, then killed, so the next command meets a dead solver). Output that
/// belongs to earlier commands is relayed first: an `echo` sentinel sent to z3 before
/// the trigger line separates it from the trigger's answer, so the timing is exact.
/// `MARKER.fired` is created just before the kill. Later incarnations exec plain z3.
const KILL_WRAPPER: &str = r#"import os, signal, subprocess, sys, threading

z3, marker, trigger, nth, mode = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4]), sys.argv[5]
try:
    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
except FileExistsError:
    os.execv(z3, [z3, "-in"])  # a restarted solver: plain z3 in this process

SYNC = b"smtproxy-fault-sync"
p = subprocess.Popen([z3, "-in"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
armed = threading.Event()

def die():
    open(marker + ".fired", "w").close()
    os.killpg(0, signal.SIGKILL)

def pump():
    depth, started = 0, False
    for line in iter(p.stdout.readline, b""):
        if not armed.is_set():
            if SYNC in line:
                armed.set()
                continue
            os.write(1, line)
            continue
        if mode == "during":
            die()
        if mode == "partial":
            os.write(1, line[: max(1, len(line) // 2)])
            die()
        os.write(1, line)
        depth += line.count(b"(") - line.count(b")")
        if depth <= 0:
            die()
    os._exit(0)

threading.Thread(target=pump, daemon=True).start()
seen = 0
for line in iter(sys.stdin.buffer.readline, b""):
    if trigger in line:
        seen += 1
        if seen == nth:
            if mode == "before":
                die()
            p.stdin.write(b'(echo "' + SYNC + b'")\n')
            armed.wait()
            p.stdin.write(line)
            threading.Event().wait()  # the pump kills us
    p.stdin.write(line)
p.stdin.close()
p.wait()
"#;

/// Where smtproxy's own resolution finds `prog` (real binaries, not pyenv shims); a
/// missing one fails the test (the test command installs it).
fn real_program(prog: &str) -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    smtproxy::driver::spec::find_in_path(prog, &path, None).unwrap_or_else(|| {
        panic!("{prog} is not installed (scripts/install-deps.sh installs the solvers)")
    })
}

#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// Assertions sent, the check-sat not yet received by the solver.
    BeforeCheck,
    /// The solver received the check-sat and was working on it.
    DuringCheck,
    /// The solver answered the check-sat and died before the next command.
    AfterCheck,
    /// Half of the answer to the (first) get-value written, then the solver died.
    DuringGetValue,
    /// Half of the answer to the (first) get-model written, then the solver died.
    DuringGetModel,
}

/// Checks a get-value answer for `a` and `b` against the assertions
/// a + b = 16 (mod 256), a < 8, b > 9 (plus `b = want_b` when given).
fn check_ab(what: &str, v: &str, want_b: Option<u64>) {
    assert!(
        !v.starts_with("(error"),
        "{what}: get-value answered an error: {v}"
    );
    let a = value_of(v, "a").unwrap_or_else(|| panic!("{what}: no value for a in {v}"));
    let b = value_of(v, "b").unwrap_or_else(|| panic!("{what}: no value for b in {v}"));
    assert!(
        a < 8 && b > 9 && (a + b) % 256 == 0x10,
        "{what}: model a={a} b={b} violates the assertions ({v})"
    );
    if let Some(w) = want_b {
        assert_eq!(b, w, "{what}: b must be {w} ({v})");
    }
}

/// A `--solver` command line running z3 under `KILL_WRAPPER`, which kills it at the first
/// command containing `trigger` (`mode`: before, during, after or partial), in a temporary
/// directory that also holds the marker files (`first-incarnation.fired` once it has
/// fired).
fn kill_wrapper_solver(trigger: &str, mode: &str) -> (tempfile::TempDir, String) {
    let (py, z3) = (real_program("python3"), real_program("z3"));
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("kill_wrapper.py");
    std::fs::write(&wrapper, KILL_WRAPPER).unwrap();
    let marker = dir.path().join("first-incarnation");
    let solver = format!(
        "'{}' '{}' '{}' '{}' '{trigger}' 1 {mode}",
        py.display(),
        wrapper.display(),
        z3.display(),
        marker.display()
    );
    (dir, solver)
}

fn solver_killed_at(strategy: &str, point: KillPoint) {
    let (trigger, mode) = match point {
        KillPoint::BeforeCheck => ("(check-sat", "before"),
        KillPoint::DuringCheck => ("(check-sat", "during"),
        KillPoint::AfterCheck => ("(check-sat", "after"),
        KillPoint::DuringGetValue => ("(get-value", "partial"),
        KillPoint::DuringGetModel => ("(get-model", "partial"),
    };
    let (dir, solver) = kill_wrapper_solver(trigger, mode);
    let what = format!("{strategy}, solver killed {point:?}");
    let t0 = Instant::now();
    let mut s = Session::start(&[
        "--solver",
        &solver,
        "--strategy",
        strategy,
        "--cache",
        "none",
        "--stats",
    ]);
    s.send("(set-option :produce-models true)");
    s.send("(set-logic QF_BV)");
    s.send("(declare-const a (_ BitVec 8))");
    s.send("(declare-const b (_ BitVec 8))");
    s.send("(assert (= (bvadd a b) #x10))");
    s.send("(assert (bvult a #x08))");
    s.send("(assert (bvugt b #x09))");
    assert_eq!(s.ask("(check-sat)", T), "sat", "{what}: first check-sat");
    s.send("(get-value (a b))");
    let v = s
        .read_sexpr(T)
        .unwrap_or_else(|| panic!("{what}: no get-value answer"));
    check_ab(&what, &v, None);
    s.send("(get-model)");
    let m = s
        .read_sexpr(T)
        .unwrap_or_else(|| panic!("{what}: no get-model answer"));
    check_ab(&format!("{what} (get-model)"), &model_as_values(&m), None);
    s.send("(push 1)");
    s.send("(assert (= a #x09))");
    assert_eq!(s.ask("(check-sat)", T), "unsat", "{what}: a < 8 and a = 9");
    s.send("(pop 1)");
    s.send("(assert (= b #x0c))");
    assert_eq!(
        s.ask("(check-sat)", T),
        "sat",
        "{what}: check-sat after pop"
    );
    s.send("(get-value (b a))");
    let v = s
        .read_sexpr(T)
        .unwrap_or_else(|| panic!("{what}: no second get-value answer"));
    check_ab(&what, &v, Some(12));
    assert_eq!(s.ask("(echo \"done\")", T), "done");
    let (st, err, hung) = s.finish(T);
    assert!(!hung, "{what}: smtproxy did not exit at end of input");
    assert!(!err.contains("panicked"), "{what}: panic:\n{err}");
    assert_eq!(
        st.and_then(|s| s.code()),
        Some(0),
        "{what}: exit status; stderr:\n{err}"
    );
    assert!(
        dir.path().join("first-incarnation.fired").exists(),
        "{what}: the wrapper never reached its trigger {trigger:?}; stderr:\n{err}"
    );
    let stats = summary(&err);
    assert!(
        stats["restarts"].as_u64().unwrap_or(0) >= 1,
        "{what}: no solver restart counted: {stats}"
    );
    assert_eq!(stats["unknown"].as_u64(), Some(0), "{what}: {stats}");
    assert_eq!(stats["queries"].as_u64(), Some(3), "{what}: {stats}");
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "{what}: took {:?}",
        t0.elapsed()
    );
}

/// The solver dies right after answering a check-sat, and the client then sends several
/// commands in one write, so passthrough pipelines them: none of them may reach a solver
/// restarted without the client's declarations and assertions.
#[test]
fn solver_killed_before_pipelined_commands_passthrough() {
    let (dir, solver) = kill_wrapper_solver("(check-sat", "after");
    let mut s = Session::start(&[
        "--solver",
        &solver,
        "--strategy",
        "passthrough",
        "--cache",
        "none",
    ]);
    s.send("(set-logic QF_BV)\n(declare-const a (_ BitVec 8))\n(declare-const b (_ BitVec 8))\n(assert (= (bvadd a b) #x10))\n(assert (bvult a #x08))\n(assert (bvugt b #x09))");
    assert_eq!(s.ask("(check-sat)", T), "sat");
    // The solver is really gone (a zombie at most) before the client goes on.
    let t0 = Instant::now();
    while !descendants_of(s.pid()).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the wrapper did not kill its solver"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // One write: the proxy sees every command ready at once.
    s.send("(assert (= b #x0c))\n(check-sat)\n(get-value (a b))\n(push 1)\n(assert (= a #x05))\n(check-sat)\n(pop 1)\n(check-sat)\n(get-value (b a))");
    let first = s.line(Duration::from_secs(10));
    if first.as_deref() != Some("sat") {
        let (_, err, _) = s.finish(Duration::from_secs(2));
        panic!("check-sat after the solver died: got {first:?}; stderr:\n{err}");
    }
    let v = s.read_sexpr(T).expect("get-value answer");
    check_ab("pipelined after the kill", &v, Some(12));
    assert_eq!(
        s.line(T).as_deref(),
        Some("unsat"),
        "a = 5 contradicts b = 12"
    );
    assert_eq!(s.line(T).as_deref(), Some("sat"));
    let v = s.read_sexpr(T).expect("second get-value answer");
    check_ab("pipelined after the kill, after pop", &v, Some(12));
    let (st, err, hung) = s.finish(T);
    assert!(!hung && !err.contains("panicked"), "{err}");
    assert_eq!(st.and_then(|s| s.code()), Some(0), "{err}");
    assert!(
        dir.path().join("first-incarnation.fired").exists(),
        "the wrapper never killed its solver"
    );
}

fn solver_killed_at_every_point(strategy: &str) {
    for p in [
        KillPoint::BeforeCheck,
        KillPoint::DuringCheck,
        KillPoint::AfterCheck,
        KillPoint::DuringGetValue,
        KillPoint::DuringGetModel,
    ] {
        // hybrid answers get-model from the model it validated itself: no solver involved.
        if strategy == "hybrid" && matches!(p, KillPoint::DuringGetModel) {
            continue;
        }
        solver_killed_at(strategy, p);
    }
}

/// A get-model answer rewritten as `((a v) (b v) ...)` for `value_of`.
fn model_as_values(m: &str) -> String {
    assert!(!m.starts_with("(error"), "get-model answered an error: {m}");
    let flat = m.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::from("(");
    for part in flat.split("(define-fun ").skip(1) {
        // NAME () SORT VALUE)
        let mut it = part.splitn(2, ' ');
        let (Some(name), Some(rest)) = (it.next(), it.next()) else {
            continue;
        };
        let Some(rest) = rest.strip_prefix("() ") else {
            continue;
        };
        let after_sort = if rest.starts_with('(') {
            rest.find(')').map(|i| &rest[i + 1..])
        } else {
            rest.find(' ').map(|i| &rest[i..])
        };
        let value: String = after_sort
            .unwrap_or("")
            .trim_start()
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ')')
            .collect();
        out.push_str(&format!("({name} {value}) "));
    }
    out.push(')');
    out
}

#[test]
fn solver_killed_at_every_point_passthrough() {
    solver_killed_at_every_point("passthrough");
}

#[test]
fn solver_killed_at_every_point_stack() {
    solver_killed_at_every_point("stack");
}

#[test]
fn solver_killed_at_every_point_hybrid() {
    solver_killed_at_every_point("hybrid");
}

#[test]
fn solver_killed_at_every_point_fresh() {
    solver_killed_at_every_point("fresh");
}

#[test]
fn timeout_then_easy_query() {
    // two random 32-bit primes (the brief's 4294967291 * 4294967279 is solved by z3 in 0.2 s)
    assert_eq!(2315877527u128 * 3210981251u128, 0x6732d442f66afa45u128);
    common::require("z3");
    for strategy in ["passthrough", "stack", "fresh"] {
        let mut s = Session::start(&[
            "--solver",
            "z3",
            "--strategy",
            strategy,
            "--cache",
            "none",
            "--timeout-ms",
            "300",
        ]);
        for l in FACTOR.lines() {
            s.send(l);
        }
        let t0 = Instant::now();
        let a = s.ask("(check-sat)", Duration::from_secs(20));
        let took = t0.elapsed();
        assert_eq!(
            a, "unknown",
            "{strategy}: hard query under --timeout-ms 300"
        );
        assert!(
            took < Duration::from_secs(5),
            "{strategy}: `unknown` took {took:?} under --timeout-ms 300"
        );
        s.send("(pop 1)");
        s.send("(assert (= (bvmul x y) #x0000000000000006))");
        s.send("(assert (bvugt x #x0000000000000001))");
        s.send("(assert (bvult x #x0000000000000003))");
        let t1 = Instant::now();
        assert_eq!(
            s.ask("(check-sat)", Duration::from_secs(20)),
            "sat",
            "{strategy}: easy query after the timeout"
        );
        assert!(
            t1.elapsed() < Duration::from_secs(5),
            "{strategy}: easy query took {:?}",
            t1.elapsed()
        );
        s.send("(get-value (x))");
        let v = s.read_sexpr(T).expect("get-value");
        assert_eq!(value_of(&v, "x"), Some(2), "{strategy}: x must be 2: {v}");
        s.send("(assert (= y #x0000000000000004))");
        assert_eq!(
            s.ask("(check-sat)", Duration::from_secs(20)),
            "unsat",
            "{strategy}: 2*4 != 6"
        );
        let (st, err, hung) = s.finish(T);
        assert!(!hung && !err.contains("panicked"), "{strategy}: {err}");
        assert_eq!(st.and_then(|s| s.code()), Some(0), "{strategy}: {err}");
    }
}

fn missing_solver(arg: &str) {
    let out = run(
        &["--solver", arg, "--cache", "none"],
        b"(check-sat)\n",
        Duration::from_secs(30),
    );
    out.assert_no_panic_no_hang(arg);
    let err = out.stderr_str();
    assert_eq!(
        out.code(),
        Some(2),
        "--solver {arg}: exit code; stderr:\n{err}"
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "--solver {arg}: expected exactly one stderr line, got:\n{err}"
    );
    let l = lines[0];
    assert!(
        l.contains("pip install") || l.contains("apt-get install") || l.contains("apt install"),
        "--solver {arg}: the line must name an install command: {l}"
    );
    assert!(
        out.stdout.is_empty(),
        "--solver {arg}: nothing on stdout expected, got {:?}",
        out.stdout_str()
    );
}

#[test]
fn nonexistent_solver_path() {
    missing_solver("/nonexistent/z3");
}

#[test]
fn unknown_solver_name() {
    missing_solver("nosuchsolver");
}

/// `--solver PATH` naming a file that exists without execute permission (alone and with
/// arguments): one line that says so and how to fix it, exit code 2, nothing on stdout.
#[test]
fn solver_not_executable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("z3");
    std::fs::write(&file, "#!/bin/sh\nexec z3 -in\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = file.display().to_string();
    for arg in [path.clone(), format!("{path} -in -smt2")] {
        let out = run(
            &["--solver", &arg, "--cache", "none"],
            b"(check-sat)\n",
            Duration::from_secs(30),
        );
        out.assert_no_panic_no_hang(&arg);
        let err = out.stderr_str();
        assert_eq!(
            out.code(),
            Some(2),
            "--solver {arg}: exit code; stderr:\n{err}"
        );
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            lines.len(),
            1,
            "--solver {arg}: expected exactly one stderr line, got:\n{err}"
        );
        assert!(
            lines[0].contains("not executable") && lines[0].contains(&format!("chmod +x {path}")),
            "--solver {arg}: {}",
            lines[0]
        );
        assert!(
            out.stdout.is_empty(),
            "--solver {arg}: nothing on stdout expected, got {:?}",
            out.stdout_str()
        );
    }
    // replay reports it the same way.
    let log = common::corpus("hand/bv.smt2");
    let out = run(
        &[
            "replay",
            "--quiet",
            "--solver",
            &path,
            "--cache",
            "none",
            &log.display().to_string(),
        ],
        b"",
        Duration::from_secs(30),
    );
    assert_eq!(out.code(), Some(2), "replay: {}", out.stderr_str());
    assert!(
        out.stderr_str().contains("not executable"),
        "replay: {}",
        out.stderr_str()
    );
}

/// smtproxy under `strategy` with its z3 busy on a hard query (it has used CPU time on it:
/// a condition, not a guessed delay), and every process under smtproxy then.
fn busy_solver_session(strategy: &str) -> (Session, Vec<u32>) {
    let mut s = Session::start(&["--solver", "z3", "--strategy", strategy, "--cache", "none"]);
    s.send("(declare-const a Int)");
    s.send("(assert (> a 3))");
    assert_eq!(s.ask("(check-sat)", T), "sat");
    let solvers = solver_pids(s.pid());
    assert!(!solvers.is_empty(), "{strategy}: no solver child");
    for l in FACTOR.lines().skip(1) {
        s.send(l);
    }
    s.send("(check-sat)");
    let t0 = Instant::now();
    while !solvers.iter().any(|p| cpu_ticks(*p) > 0) && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut all = descendants_of(s.pid());
    all.extend(solvers);
    (s, all)
}

/// The processes of `pids` still alive `within` after smtproxy exited; each is killed, so
/// that none leaks past the test.
fn left_alive(pids: &[u32], within: Duration) -> Vec<u32> {
    let t0 = Instant::now();
    let mut left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    while !left.is_empty() && t0.elapsed() < within {
        std::thread::sleep(Duration::from_millis(20));
        left.retain(|p| alive(*p));
    }
    for p in &left {
        kill(*p, libc::SIGKILL);
    }
    left
}

/// SIGTERM/SIGINT while the solver is busy on a hard query: smtproxy exits within a
/// bound with 128 + signal, and no solver process outlives it.
fn signal_mid_session(sig: i32, code: i32) {
    common::require("z3");
    for strategy in ["passthrough", "stack", "hybrid"] {
        let (mut s, solvers) = busy_solver_session(strategy);
        kill(s.pid(), sig);
        let exited = s.wait_exit(Duration::from_secs(10));
        let (st, err, _) = s.finish(Duration::from_secs(1));
        assert!(
            exited.is_some(),
            "{strategy}: smtproxy did not exit within 10 s of signal {sig} (stdin still open)"
        );
        use std::os::unix::process::ExitStatusExt;
        let got = st.and_then(|s| s.code());
        assert_eq!(
            got,
            Some(code),
            "{strategy}: exit after signal {sig} (status {st:?}, signal {:?}); stderr:\n{err}",
            st.and_then(|s| s.signal())
        );
        // smtproxy has exited: every solver it started must be gone (reaped or dying).
        let left = left_alive(&solvers, Duration::from_secs(1));
        assert!(
            left.is_empty(),
            "{strategy}: solver process(es) {left:?} still alive 1 s after smtproxy exited"
        );
    }
}

/// SIGKILL to smtproxy while its solver is busy: smtproxy cannot stop its solvers itself,
/// and none of them may go on using the machine (each dies with its parent).
#[test]
fn sigkill_mid_session_leaves_no_solver() {
    common::require("z3");
    for strategy in ["passthrough", "hybrid"] {
        let (mut s, solvers) = busy_solver_session(strategy);
        kill(s.pid(), libc::SIGKILL);
        assert!(
            s.wait_exit(Duration::from_secs(10)).is_some(),
            "{strategy}: smtproxy survived SIGKILL"
        );
        let _ = s.finish(Duration::from_secs(1));
        let left = left_alive(&solvers, Duration::from_secs(2));
        assert!(
            left.is_empty(),
            "{strategy}: solver process(es) {left:?} alive 2 s after smtproxy was killed"
        );
    }
}

/// utime + stime of a process, in clock ticks (0 if unreadable).
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return 0;
    };
    let f: Vec<&str> = after.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

#[test]
fn sigterm_mid_session() {
    signal_mid_session(libc::SIGTERM, 143);
}

#[test]
fn sigint_mid_session() {
    signal_mid_session(libc::SIGINT, 130);
}

/// Results rows in an on-disk store (read while smtproxy may hold it open).
/// Rows a result takes in the store: its canonical key and its exact key.
const ROWS_PER_RESULT: i64 = 2;

fn stored_rows(path: &std::path::Path) -> i64 {
    let c = rusqlite::Connection::open(path).expect("open store");
    c.query_row("SELECT count(*) FROM results", [], |r| r.get(0))
        .expect("count results")
}

/// The disk store batches writes (DEFAULT_BATCH entries or FLUSH_INTERVAL): results that
/// are still buffered when SIGTERM/SIGINT arrives are written before the exit, and a new
/// smtproxy answers every one of those queries from the store without a solver.
fn signal_keeps_buffered_results(sig: i32, code: i32) {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let store_s = store.display().to_string();
    // Query i: i <= x <= i (sat) for even i, x < 5 and x > i + 5 (unsat) for odd i. (Not
    // `(= x i)`: a definition of x, which a recent model answers once x is recomputed
    // from it, and such a result is stored under one key, not two.)
    let query = |i: u32| -> (String, &'static str) {
        if i.is_multiple_of(2) {
            (
                format!("(push 1)\n(assert (bvuge x (_ bv{i} 8)))\n(assert (bvule x (_ bv{i} 8)))"),
                "sat",
            )
        } else {
            (
                format!(
                    "(push 1)\n(assert (bvult x #x05))\n(assert (bvugt x (_ bv{} 8)))",
                    i + 5
                ),
                "unsat",
            )
        }
    };
    let mut s = Session::start(&[
        "--solver",
        "z3",
        "--strategy",
        "hybrid",
        "--cache",
        &store_s,
    ]);
    s.send("(set-logic QF_BV)\n(declare-const x (_ BitVec 8))");
    let mut asked = 0u32;
    let ask = |s: &mut Session, i: u32| {
        let (q, want) = query(i);
        s.send(&q);
        assert_eq!(s.ask("(check-sat)", T), want, "query {i}");
        s.send("(pop 1)");
    };
    for i in 0..6 {
        ask(&mut s, i);
        asked += 1;
    }
    // A put that starts a new buffer cannot trigger a write by itself, so after at most
    // one more query something is buffered for sure.
    let mut before = stored_rows(&store);
    while before == ROWS_PER_RESULT * i64::from(asked) {
        assert!(
            asked < 12,
            "every result reached the file at once; no buffering to test"
        );
        ask(&mut s, asked);
        asked += 1;
        before = stored_rows(&store);
    }
    assert!(before < ROWS_PER_RESULT * i64::from(asked));
    eprintln!("{asked} results, {before} in the file when the signal is sent");
    // stdin stays open: the signal, not the end of input, must end the session.
    kill(s.pid(), sig);
    let exited = s.wait_exit(Duration::from_secs(10));
    let (st, err, _) = s.finish(Duration::from_secs(1));
    assert!(
        exited.is_some(),
        "smtproxy did not exit within 10 s of signal {sig} (stdin still open)"
    );
    assert_eq!(
        st.and_then(|s| s.code()),
        Some(code),
        "exit status after signal {sig}; stderr:\n{err}"
    );
    assert!(!err.contains("warning"), "{err}");
    assert_eq!(
        stored_rows(&store),
        ROWS_PER_RESULT * i64::from(asked),
        "results buffered at the signal were lost"
    );
    // A new process answers all of them from the store.
    let mut script = String::from("(set-logic QF_BV)\n(declare-const x (_ BitVec 8))\n");
    for i in 0..asked {
        script.push_str(&query(i).0);
        script.push_str("\n(check-sat)\n(pop 1)\n");
    }
    let out = run(
        &[
            "--solver",
            "z3",
            "--strategy",
            "cache",
            "--cache",
            &store_s,
            "--stats",
        ],
        script.as_bytes(),
        Duration::from_secs(20),
    );
    out.assert_no_panic_no_hang("second run");
    assert_eq!(out.code(), Some(0), "{}", out.stderr_str());
    let want: Vec<&str> = (0..asked).map(|i| query(i).1).collect();
    assert_eq!(out.lines(), want, "answers of the second run");
    let st = summary(&out.stderr_str());
    assert_eq!(
        st["solver_checks"].as_u64(),
        Some(0),
        "second run asked the solver: {st}"
    );
    assert_eq!(st["cache_hits"].as_u64(), Some(u64::from(asked)), "{st}");
}

/// SIGTERM while another process holds the store's write lock: the exit flush waits for
/// it only a bounded time, says what it could not save, and smtproxy still exits 143.
#[test]
fn sigterm_with_store_locked_exits_in_time() {
    common::require("z3");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let store_s = store.display().to_string();
    let mut s = Session::start(&[
        "--solver",
        "z3",
        "--strategy",
        "hybrid",
        "--cache",
        &store_s,
    ]);
    s.send("(set-logic QF_BV)\n(declare-const x (_ BitVec 8))\n(push 1)\n(assert (= x #x2a))");
    assert_eq!(s.ask("(check-sat)", T), "sat");
    // The store exists (opened at start); the one result is buffered, not written.
    assert_eq!(stored_rows(&store), 0);
    let other = rusqlite::Connection::open(&store).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO meta(name, value) VALUES ('held', 1);")
        .unwrap();
    let t0 = Instant::now();
    kill(s.pid(), libc::SIGTERM);
    let exited = s.wait_exit(Duration::from_secs(10));
    let took = t0.elapsed();
    let (st, err, _) = s.finish(Duration::from_secs(1));
    other.execute_batch("ROLLBACK").unwrap();
    assert!(
        exited.is_some(),
        "smtproxy did not exit within 10 s of SIGTERM with the store locked"
    );
    assert_eq!(st.and_then(|s| s.code()), Some(143), "{err}");
    assert!(took < Duration::from_secs(4), "exit took {took:?}");
    let w: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(w.len(), 1, "{err}");
    assert!(
        // The one result, under its two keys.
        w[0].contains("2 entries not saved") && w[0].contains("locked"),
        "{}",
        w[0]
    );
}

#[test]
fn sigterm_keeps_buffered_results() {
    signal_keeps_buffered_results(libc::SIGTERM, 143);
}

#[test]
fn sigint_keeps_buffered_results() {
    signal_keeps_buffered_results(libc::SIGINT, 130);
}

#[test]
fn stdout_closed_early() {
    common::require("z3");
    for strategy in ["passthrough", "stack", "fresh"] {
        let mut child = std::process::Command::new(common::bin())
            .args(["--solver", "z3", "--strategy", strategy, "--cache", "none"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        use std::io::{Read, Write};
        let mut stdin = child.stdin.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let errh = std::thread::spawn(move || {
            let mut v = String::new();
            let _ = stderr.read_to_string(&mut v);
            v
        });
        let _ = stdin.write_all(b"(declare-const a Int)\n(assert (> a 3))\n(check-sat)\n");
        let _ = stdin.flush();
        std::thread::sleep(Duration::from_millis(500));
        let solvers = solver_pids(pid);
        drop(child.stdout.take()); // the client stops reading
        for i in 0..200 {
            let cmd = format!("(push 1)\n(assert (= a {i}))\n(check-sat)\n(get-value (a))\n(echo \"x{i}\")\n(pop 1)\n");
            if stdin.write_all(cmd.as_bytes()).is_err() {
                break;
            }
        }
        drop(stdin);
        let t0 = Instant::now();
        let st = loop {
            if let Ok(Some(st)) = child.try_wait() {
                break Some(st);
            }
            if t0.elapsed() > Duration::from_secs(60) {
                for d in descendants_of(pid) {
                    kill(d, libc::SIGKILL);
                }
                let _ = child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let err = errh.join().unwrap();
        let st = st.unwrap_or_else(|| {
            panic!("{strategy}: smtproxy hung after its stdout was closed\nstderr:\n{err}")
        });
        assert!(
            !err.contains("panicked") && st.code() != Some(101),
            "{strategy}: panic after stdout closed (status {st:?}):\n{err}"
        );
        std::thread::sleep(Duration::from_millis(300));
        let left: Vec<u32> = solvers.iter().copied().filter(|p| alive(*p)).collect();
        for p in &left {
            kill(*p, libc::SIGKILL);
        }
        assert!(
            left.is_empty(),
            "{strategy}: solver process(es) {left:?} outlived smtproxy"
        );
    }
}
