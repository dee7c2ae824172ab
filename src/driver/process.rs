//! Solver process plumbing: spawn in a fresh process group, pump stdin/stdout/stderr
//! through threads, and kill the whole group (SIGTERM, grace, SIGKILL, reap).
//!
//! * stdout is read by a thread that forwards chunks over a channel, so the
//!   caller can wait with a deadline (`recv_timeout`) and the solver never blocks
//!   on a full stdout pipe while we are still writing a pipelined batch;
//! * stdin is written by a thread fed over a channel, so a solver that stops
//!   reading cannot block the caller past its deadline;
//! * stderr is drained by a thread into a bounded ring (last [`STDERR_KEEP`] bytes).
//!
//! The group leader is checked with `waitid(WNOWAIT)` before it is reaped, so the
//! SIGKILL sent to its group can never hit a recycled process-group id.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::spec::SolverSpec;
use super::DriverError;

/// How much of the solver's stderr is kept for error messages.
pub const STDERR_KEEP: usize = 64 * 1024;
/// Time between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(200);

/// A chunk from the stdout reader thread.
#[derive(Debug)]
pub enum Chunk {
    Data(Vec<u8>),
    Eof,
    Err(std::io::Error),
}

#[derive(Debug, Default)]
struct StderrBuf {
    data: VecDeque<u8>,
    done: bool,
}

/// A running solver process with its pump threads.
pub struct Proc {
    child: Child,
    pid: u32,
    stdin_tx: Option<Sender<Vec<u8>>>,
    pub stdout_rx: Receiver<Chunk>,
    stderr: Arc<Mutex<StderrBuf>>,
    status: Option<ExitStatus>,
}

impl Proc {
    pub fn spawn(spec: &SolverSpec) -> Result<Proc, DriverError> {
        let program = spec.program.display().to_string();
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own process group (pgid = pid): the group can be signalled as a
            // whole and a Ctrl-C on the client's terminal does not reach it.
            .process_group(0);
        let mut child = cmd.spawn().map_err(|source| DriverError::Spawn { program: program.clone(), source })?;
        let pid = child.id();
        let (Some(stdin), Some(mut stdout), Some(mut stderr_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            // Cannot happen with Stdio::piped(); clean up rather than panic.
            let _ = signal_group(pid, libc::SIGKILL);
            let _ = child.wait();
            return Err(DriverError::Protocol(format!("{program}: stdio pipes missing after spawn")));
        };

        // stdout pump
        let (out_tx, out_rx) = mpsc::channel::<Chunk>();
        thread::Builder::new()
            .name(format!("solver-{pid}-out"))
            .spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match stdout.read(&mut buf) {
                        Ok(0) => {
                            let _ = out_tx.send(Chunk::Eof);
                            return;
                        }
                        Ok(n) => {
                            if out_tx.send(Chunk::Data(buf[..n].to_vec())).is_err() {
                                return;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            let _ = out_tx.send(Chunk::Err(e));
                            return;
                        }
                    }
                }
            })
            .map_err(DriverError::Io)?;

        // stdin pump
        let (in_tx, in_rx) = mpsc::channel::<Vec<u8>>();
        thread::Builder::new()
            .name(format!("solver-{pid}-in"))
            .spawn(move || stdin_pump(stdin, in_rx))
            .map_err(DriverError::Io)?;

        // stderr drain
        let stderr = Arc::new(Mutex::new(StderrBuf::default()));
        let err_buf = Arc::clone(&stderr);
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

        Ok(Proc { child, pid, stdin_tx: Some(in_tx), stdout_rx: out_rx, stderr, status: None })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Queue bytes for the solver's stdin. Returns false if the writer is gone
    /// (the process closed its stdin or was killed).
    pub fn write(&self, data: Vec<u8>) -> bool {
        match &self.stdin_tx {
            Some(tx) => tx.send(data).is_ok(),
            None => false,
        }
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
        leader_exited_nowait(self.pid)
    }

    /// SIGTERM the group, wait up to `grace` for the leader, SIGKILL the group,
    /// reap the leader. Idempotent.
    pub fn kill(&mut self, grace: Duration) {
        if self.status.is_some() {
            return;
        }
        // Closing stdin lets well-behaved solvers exit on their own, too.
        self.stdin_tx = None;
        if !leader_exited_nowait(self.pid) {
            let _ = signal_group(self.pid, libc::SIGTERM);
            let until = Instant::now() + grace;
            while Instant::now() < until && !leader_exited_nowait(self.pid) {
                thread::sleep(Duration::from_millis(5));
            }
        }
        // The leader is at worst a zombie now, which keeps the group id reserved:
        // kill any remaining member (including one that ignored SIGTERM).
        let _ = signal_group(self.pid, libc::SIGKILL);
        match self.child.wait() {
            Ok(st) => self.status = Some(st),
            Err(_) => {
                // ECHILD or similar: nothing left to reap. Record something so
                // we do not try again.
                self.status = Some(std::os::unix::process::ExitStatusExt::from_raw(9));
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill(KILL_GRACE);
    }
}

fn stdin_pump(mut stdin: ChildStdin, rx: Receiver<Vec<u8>>) {
    while let Ok(data) = rx.recv() {
        if stdin.write_all(&data).is_err() || stdin.flush().is_err() {
            return;
        }
    }
    // Sender dropped: stdin closes here.
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

/// `waitid(P_PID, pid, WEXITED | WNOHANG | WNOWAIT)`: true if the child has
/// terminated (it stays a zombie until reaped by `Child::wait`).
fn leader_exited_nowait(pid: u32) -> bool {
    let id: libc::id_t = pid;
    // SAFETY: siginfo_t is plain old data; zeroed is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a siginfo_t we own.
    let r = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
    if r != 0 {
        // ECHILD: already reaped (or not our child): treat as exited.
        return true;
    }
    // SAFETY: si_pid is valid to read after a successful waitid.
    unsafe { info.si_pid() != 0 }
}
