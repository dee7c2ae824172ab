//! SIGINT and SIGTERM: a dedicated thread waits for them (they are blocked in every other
//! thread), sets the stop flag, sends SIGTERM to every solver process group smtproxy
//! started, runs the registered exit flushes (results the stores still buffer), sends
//! SIGKILL to the groups whose leader has not exited within a grace, and exits with the
//! conventional code 128 + signal number.
//!
//! * Solver process groups are registered here when the driver starts one
//!   ([`spawn_group`]) and removed when it reaps the group's leader; once the stop flag
//!   is set no new group is started, so none can be left behind.
//! * A store that buffers writes registers an [`ExitFlush`] (held weakly: a store that is
//!   dropped is simply skipped). The flushes run on the signal thread while the engine
//!   thread goes on: they must not need anything the engine thread may hold for long
//!   (the disk store writes its buffer through a connection of its own), and each is
//!   bounded by the deadline it is given, so a stuck store cannot keep the process alive.
//! * SIGXFSZ is ignored: a write past `ulimit -f` then fails with EFBIG, which the stores
//!   treat like a full disk (warn once, go on without the tier), instead of killing
//!   smtproxy in the middle of a session.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, Weak};
use std::time::{Duration, Instant};

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static FLUSHES: Mutex<Vec<Weak<dyn ExitFlush>>> = Mutex::new(Vec::new());

/// How long the exit flushes may take together.
pub const EXIT_FLUSH_LIMIT: Duration = Duration::from_millis(1500);
/// At most this long between SIGTERM and SIGKILL for the solver groups at a signal.
const GRACE: Duration = Duration::from_millis(200);

/// Something to make durable before the process exits on a signal.
pub trait ExitFlush: Send + Sync {
    /// Write out what is buffered; return by `deadline` whatever happens.
    fn flush_at_exit(&self, deadline: Instant);
}

/// Run `spawn` (which starts a process that leads a new process group) and register the
/// group, unless a stop was requested: then nothing is started and None is returned.
/// Check, start and registration happen under one lock that the signal thread also takes
/// after setting the stop flag, so every group is either in its list or never started.
pub fn spawn_group<T, E>(
    spawn: impl FnOnce() -> Result<T, E>,
    pgid: impl Fn(&T) -> u32,
) -> Option<Result<T, E>> {
    let mut g = GROUPS.lock().unwrap_or_else(|p| p.into_inner());
    if STOP.load(Ordering::SeqCst) {
        return None;
    }
    let r = spawn();
    if let Ok(t) = &r {
        if let Ok(id) = i32::try_from(pgid(t)) {
            g.push(id);
        }
    }
    Some(r)
}

/// Forget a group (its leader is about to be reaped, after which the id may be reused).
pub fn remove_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.retain(|&p| p != pgid);
    }
}
/// Exit the process with `code`, unless a signal is being handled: then the signal
/// thread is left to finish (flushes, solver groups) and exit with 128 + signal, so the
/// engine finishing early on the stop flag cannot cut the flushes short or turn the exit
/// code into 0. Bounded: after 10 s the process exits here with that code.
pub fn exit(code: i32) -> ! {
    if stop_requested() {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            std::thread::park_timeout(Duration::from_millis(100));
        }
        std::process::exit(128 + SIGNAL.load(Ordering::SeqCst));
    }
    std::process::exit(code)
}

/// Stop everything before an exit that is not a signal's (a run limit): nothing more is
/// answered or started, buffered results are made durable, every solver group is killed.
pub fn stop_solvers() {
    let groups = {
        let g = GROUPS.lock().unwrap_or_else(|p| p.into_inner());
        STOP.store(true, Ordering::SeqCst);
        g.clone()
    };
    run_exit_flushes();
    for pg in &groups {
        // SAFETY: kill(2) on a process group this process started.
        unsafe {
            libc::kill(-pg, libc::SIGKILL);
        }
    }
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Register a flush to run if the process is stopped by SIGINT/SIGTERM.
pub fn on_exit_flush(f: Weak<dyn ExitFlush>) {
    if let Ok(mut v) = FLUSHES.lock() {
        v.retain(|w| w.strong_count() > 0);
        v.push(f);
    }
}

/// Run every registered exit flush that is still alive, within [`EXIT_FLUSH_LIMIT`].
pub fn run_exit_flushes() {
    let deadline = Instant::now() + EXIT_FLUSH_LIMIT;
    let live: Vec<_> = FLUSHES
        .lock()
        .map(|v| v.iter().filter_map(Weak::upgrade).collect())
        .unwrap_or_default();
    for f in live {
        if Instant::now() >= deadline {
            break;
        }
        f.flush_at_exit(deadline);
    }
}

/// Ignore SIGXFSZ and block SIGINT and SIGTERM in the calling thread, and so in every
/// thread it spawns later (see the module doc); returns the set blocked. A solver started
/// from such a thread is given its default signals back (`driver::spawn`).
pub fn block_stop_signals() -> libc::sigset_t {
    // SAFETY: plain libc signal-mask and disposition calls on a zeroed sigset_t.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// `waitid(P_PID, pid, WEXITED | WNOHANG | WNOWAIT)`: true if the child `pid` has
/// terminated (it stays a zombie until reaped by `Child::wait`), or is not a child of this
/// process any more (already reaped). Any thread may ask: the children of every thread are
/// the process's.
pub fn leader_exited(pid: u32) -> bool {
    let id: libc::id_t = pid;
    // SAFETY: siginfo_t is plain old data; zeroed is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a siginfo_t we own.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            id,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        // ECHILD: already reaped (or not our child): treat as exited.
        return true;
    }
    // SAFETY: si_pid is valid to read after a successful waitid.
    unsafe { info.si_pid() != 0 }
}

/// Block SIGINT/SIGTERM in this thread (and so in every thread it spawns later) and start
/// the thread that handles them. Call first thing in `main`.
pub fn install() {
    let set = block_stop_signals();
    // SAFETY: sigwait on the set this thread blocked, and kill(2) on process groups.
    unsafe {
        let _ = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut sig: libc::c_int = 0;
                if libc::sigwait(&set, &mut sig) == 0 {
                    SIGNAL.store(sig, Ordering::SeqCst);
                    STOP.store(true, Ordering::SeqCst);
                    let t0 = Instant::now();
                    // Complete: no group is started once the flag is set (see `spawn_group`).
                    let groups = GROUPS
                        .lock()
                        .map(|g| g.clone())
                        .unwrap_or_else(|p| p.into_inner().clone());
                    for pg in &groups {
                        libc::kill(-pg, libc::SIGTERM);
                    }
                    run_exit_flushes();
                    // The grace ends early once every group's leader has exited.
                    while t0.elapsed() < GRACE && groups.iter().any(|&pg| !leader_exited(pg as u32))
                    {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    // Only groups still registered: one whose leader was reaped meanwhile
                    // is gone, and its id may already belong to someone else.
                    let still = GROUPS
                        .lock()
                        .map(|g| g.clone())
                        .unwrap_or_else(|p| p.into_inner().clone());
                    for pg in groups.iter().filter(|g| still.contains(g)) {
                        libc::kill(-pg, libc::SIGKILL);
                    }
                    std::process::exit(128 + sig);
                }
            });
    }
}
