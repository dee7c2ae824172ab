//! Faults around the proxy: the solver killed under it, deadlines, missing solvers,
//! SIGTERM to the proxy, the client closing stdout early.

mod common;

use common::{alive, comm, descendants_of, have, kill, run, Session};
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
    if !have("z3") {
        eprintln!("skipping: z3 not installed");
        return;
    }
    let mut s = Session::start(&["--solver", "z3", "--strategy", strategy, "--cache", "none"]);
    s.send("(set-option :produce-models true)");
    s.send("(set-logic QF_BV)");
    s.send("(declare-const a (_ BitVec 8))");
    s.send("(declare-const b (_ BitVec 8))");
    s.send("(assert (= (bvadd a b) #x10))");
    s.send("(assert (bvult a #x08))");
    assert_eq!(s.ask("(check-sat)", T), "sat", "{strategy}: first check-sat");

    let victims = solver_pids(s.pid());
    assert!(!victims.is_empty(), "{strategy}: no solver process found under smtproxy pid {}", s.pid());
    eprintln!("{strategy}: killing solver(s) {:?} ({:?})", victims, victims.iter().map(|p| comm(*p)).collect::<Vec<_>>());
    for v in &victims {
        kill(*v, libc::SIGKILL);
    }
    for v in &victims {
        assert!(wait_dead(*v, Duration::from_secs(5)), "{strategy}: solver {v} survived SIGKILL");
    }

    s.send("(push 1)");
    s.send("(assert (= a #x09))");
    assert_eq!(s.ask("(check-sat)", T), "unsat", "{strategy}: check-sat after the solver was killed (a < 8 and a = 9)");
    s.send("(pop 1)");
    assert_eq!(s.ask("(check-sat)", T), "sat", "{strategy}: check-sat after pop");
    s.send("(get-value (a b))");
    let v = s.read_sexpr(T).expect("get-value answer");
    assert!(!v.starts_with("(error"), "{strategy}: get-value after recovery: {v}");
    let a = value_of(&v, "a").unwrap_or_else(|| panic!("{strategy}: no value for a in {v}"));
    let b = value_of(&v, "b").unwrap_or_else(|| panic!("{strategy}: no value for b in {v}"));
    assert!(a < 8 && (a + b) % 256 == 0x10, "{strategy}: model a={a} b={b} violates the assertions ({v})");

    // Kill it once more, right before a get-value-free query under a new scope.
    for v in solver_pids(s.pid()) {
        kill(v, libc::SIGKILL);
    }
    std::thread::sleep(Duration::from_millis(200));
    s.send("(assert (= b #x0f))");
    assert_eq!(s.ask("(check-sat)", T), "sat", "{strategy}: after second kill");
    assert_eq!(s.ask("(echo \"done\")", T), "done");
    let (st, err, hung) = s.finish(T);
    assert!(!hung, "{strategy}: smtproxy did not exit at end of input");
    assert!(!err.contains("panicked"), "{strategy}: panic:\n{err}");
    assert_eq!(st.and_then(|s| s.code()), Some(0), "{strategy}: exit status; stderr:\n{err}");
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

const FACTOR: &str = "(set-logic QF_BV)
(declare-const x (_ BitVec 64))
(declare-const y (_ BitVec 64))
(push 1)
(assert (= (bvmul x y) #x6732d442f66afa45))
(assert (bvugt x #x0000000000000001))
(assert (bvugt y #x0000000000000001))
(assert (bvult x #x00000000ffffffff))
(assert (bvult y #x00000000ffffffff))";

#[test]
fn timeout_then_easy_query() {
    // two random 32-bit primes (the brief's 4294967291 * 4294967279 is solved by z3 in 0.2 s)
    assert_eq!(2315877527u128 * 3210981251u128, 0x6732d442f66afa45u128);
    if !have("z3") {
        eprintln!("skipping: z3 not installed");
        return;
    }
    for strategy in ["passthrough", "stack", "fresh"] {
        let mut s = Session::start(&["--solver", "z3", "--strategy", strategy, "--cache", "none", "--timeout-ms", "300"]);
        for l in FACTOR.lines() {
            s.send(l);
        }
        let t0 = Instant::now();
        let a = s.ask("(check-sat)", Duration::from_secs(20));
        let took = t0.elapsed();
        assert_eq!(a, "unknown", "{strategy}: hard query under --timeout-ms 300");
        assert!(took < Duration::from_secs(5), "{strategy}: `unknown` took {took:?} under --timeout-ms 300");
        s.send("(pop 1)");
        s.send("(assert (= (bvmul x y) #x0000000000000006))");
        s.send("(assert (bvugt x #x0000000000000001))");
        s.send("(assert (bvult x #x0000000000000003))");
        let t1 = Instant::now();
        assert_eq!(s.ask("(check-sat)", Duration::from_secs(20)), "sat", "{strategy}: easy query after the timeout");
        assert!(t1.elapsed() < Duration::from_secs(5), "{strategy}: easy query took {:?}", t1.elapsed());
        s.send("(get-value (x))");
        let v = s.read_sexpr(T).expect("get-value");
        assert_eq!(value_of(&v, "x"), Some(2), "{strategy}: x must be 2: {v}");
        s.send("(assert (= y #x0000000000000004))");
        assert_eq!(s.ask("(check-sat)", Duration::from_secs(20)), "unsat", "{strategy}: 2*4 != 6");
        let (st, err, hung) = s.finish(T);
        assert!(!hung && !err.contains("panicked"), "{strategy}: {err}");
        assert_eq!(st.and_then(|s| s.code()), Some(0), "{strategy}: {err}");
    }
}

fn missing_solver(arg: &str) {
    let out = run(&["--solver", arg, "--cache", "none"], b"(check-sat)\n", Duration::from_secs(30));
    out.assert_no_panic_no_hang(arg);
    let err = out.stderr_str();
    assert_eq!(out.code(), Some(2), "--solver {arg}: exit code; stderr:\n{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "--solver {arg}: expected exactly one stderr line, got:\n{err}");
    let l = lines[0];
    assert!(
        l.contains("pip install") || l.contains("apt-get install") || l.contains("apt install"),
        "--solver {arg}: the line must name an install command: {l}"
    );
    assert!(out.stdout.is_empty(), "--solver {arg}: nothing on stdout expected, got {:?}", out.stdout_str());
}

#[test]
fn nonexistent_solver_path() {
    missing_solver("/nonexistent/z3");
}

#[test]
fn unknown_solver_name() {
    missing_solver("nosuchsolver");
}

#[test]
fn sigterm_mid_session() {
    if !have("z3") {
        eprintln!("skipping: z3 not installed");
        return;
    }
    for strategy in ["passthrough", "stack"] {
        let mut s = Session::start(&["--solver", "z3", "--strategy", strategy, "--cache", "none"]);
        s.send("(declare-const a Int)");
        s.send("(assert (> a 3))");
        assert_eq!(s.ask("(check-sat)", T), "sat");
        let solvers = solver_pids(s.pid());
        assert!(!solvers.is_empty(), "{strategy}: no solver child");
        // Start a slow query so the solver is busy when the signal arrives.
        for l in FACTOR.lines().skip(1) {
            s.send(l);
        }
        s.send("(check-sat)");
        std::thread::sleep(Duration::from_millis(300));
        let all = descendants_of(s.pid());
        kill(s.pid(), libc::SIGTERM);
        let (st, err, hung) = s.finish(Duration::from_secs(10));
        assert!(!hung, "{strategy}: smtproxy did not exit within 10 s of SIGTERM");
        use std::os::unix::process::ExitStatusExt;
        let code = st.and_then(|s| s.code());
        assert_eq!(code, Some(143), "{strategy}: exit after SIGTERM (status {st:?}, signal {:?}); stderr:\n{err}", st.and_then(|s| s.signal()));
        std::thread::sleep(Duration::from_secs(1));
        let left: Vec<u32> = solvers.iter().chain(all.iter()).copied().filter(|p| alive(*p)).collect();
        for p in &left {
            kill(*p, libc::SIGKILL); // do not leak them past the test
        }
        assert!(left.is_empty(), "{strategy}: solver process(es) {left:?} still alive 1 s after smtproxy exited");
    }
}

#[test]
fn stdout_closed_early() {
    if !have("z3") {
        eprintln!("skipping: z3 not installed");
        return;
    }
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
        let st = st.unwrap_or_else(|| panic!("{strategy}: smtproxy hung after its stdout was closed\nstderr:\n{err}"));
        assert!(!err.contains("panicked") && st.code() != Some(101), "{strategy}: panic after stdout closed (status {st:?}):\n{err}");
        std::thread::sleep(Duration::from_millis(300));
        let left: Vec<u32> = solvers.iter().copied().filter(|p| alive(*p)).collect();
        for p in &left {
            kill(*p, libc::SIGKILL);
        }
        assert!(left.is_empty(), "{strategy}: solver process(es) {left:?} outlived smtproxy");
    }
}
