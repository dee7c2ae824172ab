//! Starting a solver process: a child with three pipes for stdio, in a process group of
//! its own, with a shell's signal handling (nothing blocked; SIGPIPE, SIGXFSZ and every
//! signal smtproxy handles at its default action), and, on Linux, the parent-death signal
//! set to SIGKILL.
//!
//! On Linux the child is a `clone(CLONE_VM | CLONE_VFORK)` of the calling thread, as
//! glibc's `posix_spawn` makes one, with the parent-death signal set between clone and
//! exec, which `posix_spawn` cannot do. A `fork` (what `std::process::Command` does when
//! asked for that step) copies smtproxy's page tables and leaves the copy for the solver's
//! exec to tear down: 0.6-0.8 ms of the engine's time per solver on a quiet machine, up
//! to 7 on two busy cores (0.2-0.4 ms this way). Invariants of the child side:
//! * it runs on a stack of its own, inside smtproxy's memory, while the calling thread is
//!   suspended (until the exec or the child's exit), and every other thread of smtproxy
//!   runs on: so it calls only async-signal-safe functions, allocates nothing, takes no
//!   lock, and reads only what the parent prepared before the clone (`Plan`);
//! * no handler of smtproxy's runs in it: the calling thread blocks every signal around
//!   the clone and the child sets every handled signal to its default before unblocking;
//! * a failed step before the exec is reported as its errno in `Plan::err`, which the
//!   parent reads after the clone returns, and the child exits without running anything.
//!
//! Elsewhere `std::process::Command` does the work, without the parent-death signal.
//! [`default_signals`] gives a `Command` the same signal handling, for the solver runs
//! that are not sessions (`--version` and the like).

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// A solver starts with the signal handling a shell would give it: an empty signal mask
/// and SIGXFSZ at its default action. smtproxy blocks SIGINT and SIGTERM in every thread
/// (`signals` takes them on a thread of its own) and ignores SIGXFSZ, and a child keeps
/// both across exec: a solver with SIGTERM blocked ignores the one `Proc::kill` sends, so
/// every kill of a busy solver waited out `process::KILL_GRACE` before its SIGKILL.
pub fn default_signals(cmd: &mut std::process::Command) {
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions (sigemptyset, sigprocmask, sigaction) on values it owns;
    // it allocates nothing.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, || {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            if libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            if libc::sigaction(libc::SIGXFSZ, &dfl, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A started child: its pid (also its process group id) and its ends of the stdio pipes.
pub struct Spawned {
    pub pid: u32,
    pub stdin: File,
    pub stdout: File,
    pub stderr: File,
}

/// Start `program` with `args` and piped stdin, stdout and stderr (see the module docs).
/// A bare program name is looked up on `PATH` as `execvp` does.
pub fn spawn(program: &Path, args: &[String]) -> std::io::Result<Spawned> {
    start(&on_path(program), args)
}

/// `program` itself when it names a path, else the first executable file of that name on
/// `PATH` (or the name, which then fails to start as not found).
fn on_path(program: &Path) -> PathBuf {
    if program.as_os_str().is_empty() || program.components().count() > 1 {
        return program.to_path_buf();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|cand| is_executable(cand))
        .unwrap_or_else(|| program.to_path_buf())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn c_string(s: &OsStr) -> std::io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(s.as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a solver's program, argument or environment holds a NUL byte",
        )
    })
}

/// A pipe whose two ends are close-on-exec and numbered 3 or above (so that moving the
/// child's end onto 0, 1 or 2 can never overwrite another end).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array, which is valid for both.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(r)?, above_stdio(w)?))
}

fn above_stdio(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC duplicates a descriptor we own into a new one.
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `n` was just created and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
}

/// The child's stack: it makes a dozen system calls and nothing else.
#[cfg(target_os = "linux")]
const CHILD_STACK: usize = 64 * 1024;

/// Everything the child needs, prepared by the parent before the clone.
#[cfg(target_os = "linux")]
struct Plan {
    path: CString,
    /// Null-terminated, pointing into the strings the caller keeps alive.
    argv: Vec<*const libc::c_char>,
    /// Null-terminated, as `argv`.
    envp: Vec<*const libc::c_char>,
    /// The child's ends for its descriptors 0, 1 and 2.
    stdio: [libc::c_int; 3],
    parent: libc::pid_t,
    /// The highest signal number (`SIGRTMAX`).
    last_signal: libc::c_int,
    /// The errno of the step that failed, written by the child; 0 if it reached exec.
    err: libc::c_int,
}

#[cfg(target_os = "linux")]
fn start(program: &Path, args: &[String]) -> std::io::Result<Spawned> {
    let path = c_string(program.as_os_str())?;
    let mut owned_args = vec![path.clone()];
    for a in args {
        owned_args.push(c_string(a.as_ref())?);
    }
    let mut env = Vec::new();
    for (k, v) in std::env::vars_os() {
        let mut kv = k;
        kv.push("=");
        kv.push(v);
        env.push(c_string(&kv)?);
    }
    let nul_terminated = |v: &[CString]| {
        let mut p: Vec<*const libc::c_char> = v.iter().map(|s| s.as_ptr()).collect();
        p.push(std::ptr::null());
        p
    };
    let (in_r, in_w) = pipe()?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let mut plan = Plan {
        path,
        argv: nul_terminated(&owned_args),
        envp: nul_terminated(&env),
        stdio: [in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()],
        // SAFETY: getpid has no preconditions.
        parent: unsafe { libc::getpid() },
        last_signal: libc::SIGRTMAX(),
        err: 0,
    };
    let mut stack = vec![0u8; CHILD_STACK];
    // The stack grows down from its end, which the ABI wants 16-byte aligned.
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15;

    // SAFETY: sigset_t is plain data; sigfillset initializes it.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid sigset pointers; blocks every signal in this thread only.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // SAFETY: the child runs `child` on `stack`, which outlives it (CLONE_VFORK
    // suspends this thread until the child has exec'd or exited), and reads and writes
    // only `plan`, which lives until after that. See the module docs for what the child
    // may do.
    let pid = unsafe {
        libc::clone(
            child,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::addr_of_mut!(plan).cast(),
        )
    };
    let clone_err = std::io::Error::last_os_error();
    // SAFETY: restores this thread's mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    drop((in_r, out_w, err_w));
    drop(stack);
    if pid < 0 {
        return Err(clone_err);
    }
    // SAFETY: the child has exec'd or exited (CLONE_VFORK); nothing writes `err` now.
    let err = unsafe { std::ptr::read_volatile(&plan.err) };
    if err != 0 {
        let mut status = 0;
        // SAFETY: reaps our own child, which has exited; EINTR is retried.
        while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {}
        return Err(std::io::Error::from_raw_os_error(err));
    }
    drop(owned_args);
    drop(env);
    Ok(Spawned {
        pid: pid as u32,
        stdin: File::from(in_w),
        stdout: File::from(out_r),
        stderr: File::from(err_r),
    })
}

/// The child, between clone and exec (see the module docs: async-signal-safe calls
/// only, no allocation, no panic).
#[cfg(target_os = "linux")]
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Plan`, alive and untouched while the parent is
    // suspended.
    let plan = unsafe { &mut *arg.cast::<Plan>() };
    // SAFETY: each call is an async-signal-safe system call wrapper on values owned
    // here or by `plan`.
    let err = unsafe { prepare_and_exec(plan) };
    // SAFETY: as above; the parent reads `err` once this child has exited.
    unsafe {
        std::ptr::write_volatile(&mut plan.err, err);
        libc::_exit(127)
    }
}

/// Returns the errno of the step that failed (exec returns only on failure).
#[cfg(target_os = "linux")]
unsafe fn prepare_and_exec(plan: &Plan) -> libc::c_int {
    let errno = || *libc::__errno_location();
    let mut dfl: libc::sigaction = std::mem::zeroed();
    dfl.sa_sigaction = libc::SIG_DFL;
    libc::sigemptyset(&mut dfl.sa_mask);
    for sig in 1..=plan.last_signal {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut now: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut now) != 0 {
            continue;
        }
        let handled = now.sa_sigaction != libc::SIG_DFL && now.sa_sigaction != libc::SIG_IGN;
        let reset_ignore =
            now.sa_sigaction == libc::SIG_IGN && (sig == libc::SIGPIPE || sig == libc::SIGXFSZ);
        if (handled || reset_ignore) && libc::sigaction(sig, &dfl, std::ptr::null_mut()) != 0 {
            return errno();
        }
    }
    if libc::setpgid(0, 0) != 0 {
        return errno();
    }
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
        return errno();
    }
    if libc::getppid() != plan.parent {
        // The parent died before the signal was set: it will never come.
        return libc::ESRCH;
    }
    for (to, &from) in plan.stdio.iter().enumerate() {
        if libc::dup2(from, to as libc::c_int) < 0 {
            return errno();
        }
    }
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) != 0 {
        return errno();
    }
    libc::execve(plan.path.as_ptr(), plan.argv.as_ptr(), plan.envp.as_ptr());
    errno()
}

#[cfg(not(target_os = "linux"))]
fn start(program: &Path, args: &[String]) -> std::io::Result<Spawned> {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    default_signals(&mut cmd);
    let mut child = cmd.spawn()?;
    let (Some(i), Some(o), Some(e)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(std::io::Error::other("stdio pipes missing after spawn"));
    };
    // The child is reaped by pid (`waitpid`), as on Linux; dropping `Child` does not.
    Ok(Spawned {
        pid: child.id(),
        stdin: File::from(OwnedFd::from(i)),
        stdout: File::from(OwnedFd::from(o)),
        stderr: File::from(OwnedFd::from(e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn wait_status(pid: u32) -> libc::c_int {
        let mut status = 0;
        // SAFETY: waits for our own child with a valid out-pointer.
        let r = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        assert_eq!(r, pid as libc::pid_t, "{}", std::io::Error::last_os_error());
        status
    }

    /// Bits of `/proc/PID/status`'s `field` line (`SigBlk`, `SigIgn`).
    fn signal_bits(status: &str, field: &str) -> u64 {
        let hex = status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .unwrap_or_else(|| panic!("no {field} in {status}"));
        u64::from_str_radix(hex.trim(), 16).expect("hex mask")
    }

    /// What `cat FILE` prints when `spawn` starts it (no shell between, which might
    /// change its own signal handling), with the child reaped.
    fn cat(file: &str) -> (u32, String) {
        let c = spawn(Path::new("cat"), &[file.into()]).expect("spawn cat");
        let mut out = String::new();
        let mut stdout = c.stdout;
        stdout.read_to_string(&mut out).expect("stdout");
        assert!(libc::WIFEXITED(wait_status(c.pid)));
        (c.pid, out)
    }

    #[test]
    fn the_child_starts_in_a_group_of_its_own_with_a_shells_signals() {
        // This test's thread blocks SIGTERM, as every thread of smtproxy does.
        // SAFETY: sigset_t is plain data, initialized by the calls; the mask is this
        // thread's own.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let (pid, status) = cat("/proc/self/status");
        let bit = |sig: libc::c_int| 1u64 << (sig - 1);
        assert_eq!(signal_bits(&status, "SigBlk"), 0, "nothing blocked");
        let ignored = signal_bits(&status, "SigIgn");
        // Rust ignores SIGPIPE in its own processes; a solver gets it back at default.
        assert_eq!(
            ignored & (bit(libc::SIGPIPE) | bit(libc::SIGXFSZ)),
            0,
            "{ignored:x}"
        );
        let ppid: u32 = status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|p| p.trim().parse().ok())
            .expect("PPid");
        assert_eq!(ppid, std::process::id());
        // /proc/self/stat: after the command name come state, ppid, pgrp.
        let (pid_stat, stat) = cat("/proc/self/stat");
        let after = &stat[stat.rfind(')').expect("comm") + 1..];
        let pgrp: u32 = after
            .split_whitespace()
            .nth(2)
            .expect("pgrp")
            .parse()
            .expect("n");
        assert_eq!(pgrp, pid_stat, "the child leads its own group");
        assert_ne!(pid, pid_stat);
    }

    #[test]
    fn the_child_talks_on_its_three_pipes() {
        let script = "read x; echo \"got $x\"; echo oops >&2; exit 3";
        let mut c = spawn(Path::new("sh"), &["-c".into(), script.into()]).expect("spawn sh");
        c.stdin.write_all(b"hello\n").expect("write");
        drop(c.stdin);
        let mut out = String::new();
        c.stdout.read_to_string(&mut out).expect("stdout");
        let mut err = String::new();
        c.stderr.read_to_string(&mut err).expect("stderr");
        assert_eq!((out.as_str(), err.as_str()), ("got hello\n", "oops\n"));
        let status = wait_status(c.pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 3);
    }

    #[test]
    fn a_program_that_cannot_start_is_an_error_and_leaves_no_child() {
        for (program, kind) in [
            ("/nonexistent/z3", std::io::ErrorKind::NotFound),
            ("no-such-solver-anywhere", std::io::ErrorKind::NotFound),
            ("/proc/self/status", std::io::ErrorKind::PermissionDenied),
        ] {
            match spawn(Path::new(program), &[]) {
                Err(e) => assert_eq!(e.kind(), kind, "{program}: {e}"),
                Ok(c) => panic!("{program} started as {}", c.pid),
            }
        }
        let nul = spawn(Path::new("sh"), &["-c\0".into()])
            .err()
            .map(|e| e.kind());
        assert_eq!(nul, Some(std::io::ErrorKind::InvalidInput));
    }

    #[test]
    fn the_child_gets_the_parents_environment() {
        let c = spawn(Path::new("sh"), &["-c".into(), "echo \"$HOME\"".into()]).expect("spawn");
        let mut out = String::new();
        let mut stdout = c.stdout;
        stdout.read_to_string(&mut out).expect("stdout");
        assert_eq!(out.trim_end(), std::env::var("HOME").unwrap_or_default());
        assert!(libc::WIFEXITED(wait_status(c.pid)));
    }
}
