//! SIGINT and SIGTERM: a dedicated thread waits for them (they are blocked in every other
//! thread), kills every solver process group smtproxy started, and exits with the
//! conventional code 128 + signal number. Solver process groups are registered here by
//! the session's backend handle when it starts one and removed when it stops it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static STOP: AtomicBool = AtomicBool::new(false);

pub fn add_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.push(pgid);
    }
}
pub fn remove_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.retain(|&p| p != pgid);
    }
}
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Block SIGINT/SIGTERM in this thread (and so in every thread it spawns later) and start
/// the thread that handles them. Call first thing in `main`.
pub fn install() {
    // SAFETY: plain libc signal-mask calls on a zeroed sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
            let mut sig: libc::c_int = 0;
            if libc::sigwait(&set, &mut sig) == 0 {
                STOP.store(true, Ordering::Relaxed);
                let groups = GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
                for pg in &groups {
                    libc::kill(-pg, libc::SIGTERM);
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
                for pg in &groups {
                    libc::kill(-pg, libc::SIGKILL);
                }
                std::process::exit(128 + sig);
            }
        });
    }
}
