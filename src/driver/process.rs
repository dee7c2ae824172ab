//! Solver process plumbing: spawn in a fresh process group, exchange bytes on its
//! stdin/stdout from the caller's thread, and kill the whole group (SIGTERM, grace,
//! SIGKILL, reap; or `retire`: the SIGTERM now, the rest on a reaper thread).
//!
//! * stdin and stdout are non-blocking pipes driven with poll(2) from the calling
//!   thread: no pump threads, no channel hand-offs (each hand-off costs context
//!   switches on every command). Bytes not yet accepted by the solver's stdin are kept
//!   and written whenever we wait for output, so a long pipelined batch can never
//!   deadlock against a solver blocked on its own full stdout, and a solver that stops
//!   reading cannot block the caller past its deadline;
//! * stderr is drained by a thread into a bounded ring (last [`STDERR_KEEP`] bytes);
//! * [`Proc::input_pending`] (bytes queued or still in the stdin pipe, by FIONREAD) and
//!   [`Proc::sched`] (`/proc/PID/stat`: state and CPU ticks) only observe; they never
//!   block or signal;
//! * a solver is started by [`spawn`](super::spawn): with no signal blocked and SIGXFSZ
//!   at its default action, whatever smtproxy's own threads block or ignore, so that the
//!   SIGTERM of a kill ends it; with the parent-death signal set to SIGKILL (Linux), so
//!   even a smtproxy killed with SIGKILL leaves no solver running. Every solver is started
//!   from the engine thread, which lives until smtproxy has stopped them (the signal
//!   fires when the thread that started the child ends);
//!
//! * a `Proc` owns its solver from the moment it starts: any failure after that drops
//!   it, which kills the group.
//!
//! The group leader is checked with `waitid(WNOWAIT)` before it is reaped, so the
//! SIGKILL sent to its group can never hit a recycled process-group id.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::error::DriverError;
use super::spawn::{spawn, Spawned};
use super::spec::SolverSpec;

/// How much of the solver's stderr is kept for error messages.
pub const STDERR_KEEP: usize = 64 * 1024;
/// Time between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(200);

/// What one wait for solver output produced.
#[derive(Debug)]
pub enum Chunk {
    Data(Vec<u8>),
    Eof,
    Err(std::io::Error),
    /// The wait's time limit passed with no output.
    Timeout,
}

#[derive(Debug, Default)]
struct StderrBuf {
    data: VecDeque<u8>,
    done: bool,
}

/// A running solver process and the thread that drains its stderr.
pub struct Proc {
    /// The leader's pid, which is also its group's id; reaped by `waitpid`.
    pid: u32,
    stdin: Option<File>,
    stdout: File,
    /// Bytes queued for stdin; those from `sent` on the pipe has not taken yet.
    unwritten: Vec<u8>,
    /// How much of `unwritten` is written. The written front is dropped only once it is
    /// at least half the buffer, so a long queue fed to a slow solver a pipe's worth at a
    /// time is not shifted down after every write (that made each byte sent cost a copy
    /// of the whole queue: quadratic in what was queued).
    sent: usize,
    stderr: Arc<Mutex<StderrBuf>>,
    status: Option<ExitStatus>,
    buf: Vec<u8>,
}

impl Proc {
    pub fn spawn(spec: &SolverSpec) -> Result<Proc, DriverError> {
        let program = spec.program.display().to_string();
        let spawned =
            crate::signals::spawn_group(|| spawn(&spec.program, &spec.args), |c: &Spawned| c.pid);
        let Spawned {
            pid,
            stdin,
            stdout,
            stderr: mut stderr_pipe,
        } = match spawned {
            Some(r) => r.map_err(|source| DriverError::Spawn {
                program: program.clone(),
                source,
            })?,
            None => {
                let source = std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "smtproxy is stopping on a signal",
                );
                return Err(DriverError::Spawn { program, source });
            }
        };

        // From here on a failure drops `proc`, which kills the solver.
        let proc = Proc {
            pid,
            stdin: Some(stdin),
            stdout,
            unwritten: Vec::new(),
            sent: 0,
            stderr: Arc::new(Mutex::new(StderrBuf::default())),
            status: None,
            buf: vec![0u8; 64 * 1024],
        };
        set_nonblocking(proc.stdout.as_raw_fd()).map_err(DriverError::Io)?;
        if let Some(stdin) = &proc.stdin {
            set_nonblocking(stdin.as_raw_fd()).map_err(DriverError::Io)?;
        }
        let err_buf = Arc::clone(&proc.stderr);
        thread::Builder::new()
            .name(format!("solver-{pid}-err"))
            .spawn(move || {
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = match stderr_pipe.read(&mut buf) {
                        Ok(0) => 0,
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => 0,
                    };
                    let Ok(mut g) = err_buf.lock() else { return };
                    if n == 0 {
                        g.done = true;
                        return;
                    }
                    g.data.extend(&buf[..n]);
                    let excess = g.data.len().saturating_sub(STDERR_KEEP);
                    g.data.drain(..excess);
                }
            })
            .map_err(DriverError::Io)?;
        Ok(proc)
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Queue bytes for the solver's stdin and write as much as the pipe takes now; the
    /// rest goes out while we wait for output. Returns false if stdin is gone (the
    /// process closed it or was killed).
    pub fn write(&mut self, data: &[u8]) -> bool {
        if self.stdin.is_none() {
            return false;
        }
        if self.sent > 0 && self.sent * 2 >= self.unwritten.len() {
            self.unwritten.drain(..self.sent);
            self.sent = 0;
        }
        self.unwritten.extend_from_slice(data);
        self.flush_stdin()
    }

    /// Queued bytes the pipe has not taken yet.
    fn queued(&self) -> usize {
        self.unwritten.len() - self.sent
    }

    /// Write queued stdin bytes until the pipe is full; false on a broken pipe.
    fn flush_stdin(&mut self) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return self.sent == self.unwritten.len();
        };
        while self.sent < self.unwritten.len() {
            match stdin.write(&self.unwritten[self.sent..]) {
                Ok(0) => break,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.unwritten.clear();
                    self.sent = 0;
                    self.stdin = None;
                    return false;
                }
            }
        }
        if self.sent == self.unwritten.len() {
            self.unwritten.clear();
            self.sent = 0;
        }
        true
    }

    /// Wait for solver output, at most `timeout` (None: no limit), writing queued stdin
    /// bytes meanwhile.
    pub fn read_chunk(&mut self, timeout: Option<Duration>) -> Chunk {
        let until = timeout.map(|t| Instant::now() + t);
        loop {
            match self.stdout.read(&mut self.buf) {
                Ok(0) => return Chunk::Eof,
                Ok(n) => return Chunk::Data(self.buf[..n].to_vec()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Chunk::Err(e),
            }
            let want_write = self.queued() > 0 && self.stdin.is_some();
            let wait_ms: libc::c_int = match until {
                None => -1,
                Some(u) => {
                    let left = u.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Chunk::Timeout;
                    }
                    left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int
                }
            };
            let mut fds = [
                libc::pollfd {
                    fd: self.stdout.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.stdin.as_ref().map(|s| s.as_raw_fd()).unwrap_or(-1),
                    events: if want_write { libc::POLLOUT } else { 0 },
                    revents: 0,
                },
            ];
            let nfds = if want_write { 2 } else { 1 };
            // SAFETY: `fds` is a valid array of `nfds` pollfd structs for the call.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), nfds, wait_ms) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Chunk::Err(e);
            }
            if want_write && fds[1].revents != 0 && !self.flush_stdin() {
                // stdin broken: the solver is going away; its stdout will say so.
            }
            if r == 0 && until.is_some_and(|u| Instant::now() >= u) {
                return Chunk::Timeout;
            }
        }
    }

    /// Let up to `d` pass without reading the solver's output, keeping its stdin fed
    /// meanwhile (queued bytes go into the pipe as it takes them). Returns at once when
    /// the solver has read everything sent to it: then it is finishing its last answers,
    /// and a pause would leave it idle, waiting for nothing.
    pub fn nap(&mut self, d: Duration) {
        let until = Instant::now() + d;
        loop {
            if !self.flush_stdin() || self.input_pending() == 0 {
                return;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let Some(fd) = self.stdin.as_ref().map(|s| s.as_raw_fd()) else {
                return;
            };
            if self.queued() == 0 {
                // All of it is in the pipe: nothing to feed until the pause ends.
                thread::sleep(left);
                return;
            }
            let mut fds = [libc::pollfd {
                fd,
                events: libc::POLLOUT,
                revents: 0,
            }];
            let ms = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
            // SAFETY: one valid pollfd; the call waits at most `ms`.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
            if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return;
            }
        }
    }

    /// Bytes sent to the solver's stdin that it has not read yet (queued here or still in
    /// the pipe).
    pub fn input_pending(&self) -> usize {
        let mut n = self.queued();
        if let Some(stdin) = &self.stdin {
            let mut v: libc::c_int = 0;
            // SAFETY: FIONREAD writes one c_int through the pointer, which is valid.
            if unsafe { libc::ioctl(stdin.as_raw_fd(), libc::FIONREAD, &mut v) } == 0 {
                n += usize::try_from(v).unwrap_or(0);
            }
        }
        n
    }

    /// The leader's scheduler state (`R`, `S`, ...) and the CPU time of all its threads in
    /// clock ticks, from `/proc/PID/stat`.
    pub fn sched(&self) -> Option<(char, u64)> {
        let s = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).ok()?;
        // Fields after the command name (which may contain anything, up to the last `)`).
        let f: Vec<&str> = s.get(s.rfind(')')? + 1..)?.split_whitespace().collect();
        let state = f.first()?.chars().next()?;
        let utime: u64 = f.get(11)?.parse().ok()?;
        let stime: u64 = f.get(12)?.parse().ok()?;
        Some((state, utime + stime))
    }

    /// CPU time the solver has run, in nanoseconds: every thread of the leader and of its
    /// live descendants (a wrapper script's solver included), from
    /// `/proc/PID/task/TID/{schedstat,children}`. What a check cost the solver itself,
    /// however late its answer is read. `None` where the system does not tell.
    pub fn cpu_ns(&self) -> Option<u64> {
        let mut total = 0u64;
        let mut todo = vec![self.pid];
        let mut visited = 0;
        while let Some(pid) = todo.pop() {
            visited += 1;
            let tasks = match std::fs::read_dir(format!("/proc/{pid}/task")) {
                Ok(t) => t,
                // A descendant may have exited meanwhile; the leader must be there.
                Err(_) if pid != self.pid => continue,
                Err(_) => return None,
            };
            for t in tasks.flatten() {
                let dir = t.path();
                let ns = std::fs::read_to_string(dir.join("schedstat")).ok();
                let ns = ns.as_deref().and_then(|s| s.split_whitespace().next());
                match ns.and_then(|n| n.parse::<u64>().ok()) {
                    Some(n) => total += n,
                    None if pid == self.pid => return None,
                    None => {}
                }
                if visited < 64 {
                    if let Ok(kids) = std::fs::read_to_string(dir.join("children")) {
                        todo.extend(
                            kids.split_whitespace()
                                .filter_map(|k| k.parse::<u32>().ok()),
                        );
                    }
                }
            }
        }
        Some(total)
    }

    /// Last bytes of stderr, lossily decoded.
    pub fn stderr_tail(&self) -> String {
        match self.stderr.lock() {
            Ok(g) => {
                let (a, b) = g.data.as_slices();
                let mut v = Vec::with_capacity(a.len() + b.len());
                v.extend_from_slice(a);
                v.extend_from_slice(b);
                String::from_utf8_lossy(&v).into_owned()
            }
            Err(_) => String::new(),
        }
    }

    /// Wait (bounded) for the stderr thread to see EOF so the tail is complete.
    pub fn settle_stderr(&self, max: Duration) {
        let until = Instant::now() + max;
        loop {
            match self.stderr.lock() {
                Ok(g) if !g.done => {}
                _ => return,
            }
            if Instant::now() >= until {
                return;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Exit status once reaped.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// Has the leader exited? Does not reap it (see module docs).
    pub fn leader_exited(&self) -> bool {
        if self.status.is_some() {
            return true;
        }
        crate::signals::leader_exited(self.pid)
    }

    /// SIGTERM the group, wait up to `grace` for the leader, SIGKILL the group,
    /// reap the leader. Idempotent.
    pub fn kill(&mut self, grace: Duration) {
        if self.status.is_some() {
            return;
        }
        // Closing stdin lets well-behaved solvers exit on their own, too.
        self.stdin = None;
        if !crate::signals::leader_exited(self.pid) {
            let _ = signal_group(self.pid, libc::SIGTERM);
            wait_leader_exit(self.pid, grace);
        }
        // The leader is at worst a zombie now, which keeps the group id reserved:
        // kill any remaining member (including one that ignored SIGTERM).
        let _ = signal_group(self.pid, libc::SIGKILL);
        crate::signals::remove_group(self.pid as i32);
        // ECHILD or similar: nothing left to reap. Record something so we do not try again.
        let status = reap(self.pid).unwrap_or(libc::SIGKILL);
        self.status = Some(std::os::unix::process::ExitStatusExt::from_raw(status));
    }

    /// Kill as [`kill`](Self::kill) does without waiting for the end: SIGTERM goes to the
    /// group now, the grace, the SIGKILL and the reaping on a thread of their own, so a
    /// solver given up (a race's loser, a route's solver replaced) costs its caller no
    /// wait (z3 took 2-4 ms to die). Recorded as killed at once; the leader stays
    /// unreaped until the group has had its SIGKILL, so that no signal can reach a
    /// recycled group id.
    pub fn retire(&mut self) {
        if self.status.is_some() {
            return;
        }
        self.stdin = None;
        let pid = self.pid;
        if !crate::signals::leader_exited(pid) {
            let _ = signal_group(pid, libc::SIGTERM);
        }
        self.status = Some(std::os::unix::process::ExitStatusExt::from_raw(
            libc::SIGKILL,
        ));
        let spawned = thread::Builder::new()
            .name(format!("solver-{pid}-reap"))
            .spawn(move || end_group(pid, KILL_GRACE));
        if spawned.is_err() {
            end_group(pid, KILL_GRACE);
        }
    }
}

/// The rest of a kill begun by a SIGTERM to group `pid`: wait up to `grace` for the
/// leader, SIGKILL the group, reap the leader.
fn end_group(pid: u32, grace: Duration) {
    if !crate::signals::leader_exited(pid) {
        wait_leader_exit(pid, grace);
    }
    let _ = signal_group(pid, libc::SIGKILL);
    crate::signals::remove_group(pid as i32);
    let _ = reap(pid);
}

/// Wait for our child `pid` to end and return its wait status; None if there is nothing to
/// reap (it was reaped already, or is not ours).
fn reap(pid: u32) -> Option<libc::c_int> {
    let p = libc::pid_t::try_from(pid).ok()?;
    let mut status = 0;
    loop {
        // SAFETY: waitpid on our own child, with a valid out-pointer.
        if unsafe { libc::waitpid(p, &mut status, 0) } == p {
            return Some(status);
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill(KILL_GRACE);
    }
}

fn set_nonblocking(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a file descriptor we own; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Send `sig` to the process group `pgid`.
fn signal_group(pgid: u32, sig: libc::c_int) -> std::io::Result<()> {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    };
    if pgid <= 1 {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: killpg has no memory-safety preconditions.
    let r = unsafe { libc::killpg(pgid, sig) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Waits until the group leader `pid` (our unreaped child) has exited, or `grace` has
/// passed. A pidfd (Linux 5.3) wakes the wait the moment it exits; without one the leader
/// is looked at often at first (solvers exit within a few milliseconds of SIGTERM).
fn wait_leader_exit(pid: u32, grace: Duration) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1. The
        // pid cannot have been recycled: the child is not reaped yet.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if let Ok(fd) = i32::try_from(fd) {
            if fd >= 0 {
                let until = Instant::now() + grace;
                let mut pfd = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                loop {
                    let left = until.saturating_duration_since(Instant::now());
                    let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
                    // SAFETY: one valid pollfd that we own.
                    let r = unsafe { libc::poll(&mut pfd, 1, ms) };
                    let interrupted = r < 0
                        && std::io::Error::last_os_error().kind()
                            == std::io::ErrorKind::Interrupted;
                    if !interrupted || left.is_zero() {
                        break;
                    }
                }
                // SAFETY: fd is ours and closed once.
                unsafe { libc::close(fd) };
                return;
            }
        }
    }
    let until = Instant::now() + grace;
    let mut nap = Duration::from_micros(100);
    while Instant::now() < until && !crate::signals::leader_exited(pid) {
        thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(5));
    }
}
