//! Write-behind: a thread that runs one job (the on-disk tier's write of its buffered
//! entries) when asked, so that the engine does not wait for SQLite's commits,
//! checkpoints and evictions between two answers.
//!
//! Invariants:
//! * Asks coalesce: the job writes everything buffered when it runs, so asks made while
//!   it runs lead to one more run, not one each. Nothing is lost by coalescing.
//! * [`Behind::wait`] returns only after a run that began after the call has ended (or
//!   the thread is gone), with that run's error if it failed; [`Behind::finish`] runs the
//!   job a last time and joins the thread. A run asked for by `wait` or `finish` is a
//!   flush (`job(true)`): its errors are not deferred.
//! * An error of a run the caller did not wait for is kept (the first one) until
//!   [`Behind::take_error`] hands it to the caller, which decides what the tier does.
//! * A job that panics ends the thread; every later `wait` returns an error instead of
//!   waiting for it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

struct State<E> {
    /// Runs asked for, and runs whose asks have been served (a run serves every ask made
    /// before it began).
    asked: u64,
    done: u64,
    /// A pending ask wants a flush.
    flush: bool,
    stop: bool,
    /// The thread still runs jobs.
    alive: bool,
    error: Option<E>,
}

struct Shared<E> {
    state: Mutex<State<E>>,
    changed: Condvar,
}

impl<E> Shared<E> {
    fn lock(&self) -> MutexGuard<'_, State<E>> {
        // Only counters and flags are changed under this lock: a poisoned one is consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Marks the thread gone however it ends (a job's panic included).
struct Alive<E>(Arc<Shared<E>>);

impl<E> Drop for Alive<E> {
    fn drop(&mut self) {
        self.0.lock().alive = false;
        self.0.changed.notify_all();
    }
}

/// The thread, whose job fails with errors of type `E` (an `E` made from an i/o error
/// says the thread is gone).
pub struct Behind<E: From<std::io::Error> + Send + 'static> {
    shared: Arc<Shared<E>>,
    thread: Option<JoinHandle<()>>,
}

impl<E: From<std::io::Error> + Send + 'static> Behind<E> {
    /// Starts the thread `name`; `job(flush)` is its work.
    pub fn spawn(
        name: &str,
        mut job: impl FnMut(bool) -> Result<(), E> + Send + 'static,
    ) -> std::io::Result<Behind<E>> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                asked: 0,
                done: 0,
                flush: false,
                stop: false,
                alive: true,
                error: None,
            }),
            changed: Condvar::new(),
        });
        let alive = Alive(shared.clone());
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let s = &alive.0;
                let mut st = s.lock();
                loop {
                    while st.done == st.asked && !st.stop {
                        st = s.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                    }
                    if st.done == st.asked {
                        return; // stopped, nothing asked
                    }
                    let target = st.asked;
                    let flush = std::mem::take(&mut st.flush);
                    drop(st);
                    let r = job(flush);
                    st = s.lock();
                    st.done = target;
                    if let Err(e) = r {
                        st.error.get_or_insert(e);
                    }
                    s.changed.notify_all();
                }
            })?;
        Ok(Behind {
            shared,
            thread: Some(thread),
        })
    }

    /// Asks for a run, without waiting for it.
    pub fn ask(&self) {
        let mut st = self.shared.lock();
        st.asked += 1;
        drop(st);
        self.shared.changed.notify_all();
    }

    /// Asks for a flush and waits for it; its error, or one kept from an earlier run.
    pub fn wait(&self) -> Result<(), E> {
        let mut st = self.shared.lock();
        st.asked += 1;
        st.flush = true;
        let target = st.asked;
        self.shared.changed.notify_all();
        while st.done < target && st.alive {
            st = self
                .shared
                .changed
                .wait(st)
                .unwrap_or_else(|p| p.into_inner());
        }
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        if st.done < target {
            return Err(gone());
        }
        Ok(())
    }

    /// The error of a run nobody waited for, if one failed since the last call.
    pub fn take_error(&self) -> Option<E> {
        let mut st = self.shared.lock();
        match st.error.take() {
            Some(e) => Some(e),
            None if !st.alive => Some(gone()),
            None => None,
        }
    }

    /// Runs the job a last time (a flush), ends the thread and returns the run's error.
    pub fn finish(mut self) -> Result<(), E> {
        let r = self.wait();
        self.stop();
        r
    }

    fn stop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl<E: From<std::io::Error> + Send + 'static> Drop for Behind<E> {
    fn drop(&mut self) {
        self.stop();
    }
}

fn gone<E: From<std::io::Error>>() -> E {
    std::io::Error::other("the store's writer thread ended").into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::CacheError;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    #[test]
    fn asks_run_the_job_and_wait_sees_its_end() {
        let runs = Arc::new(AtomicU64::new(0));
        let r = runs.clone();
        let b: Behind<CacheError> = Behind::spawn("t", move |_| {
            std::thread::sleep(Duration::from_millis(5));
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        for _ in 0..50 {
            b.ask();
        }
        b.wait().unwrap();
        let n = runs.load(Ordering::SeqCst);
        // Coalesced: far fewer runs than asks, and at least the one wait asked for.
        assert!((1..=51).contains(&n) && n < 20, "{n} runs");
        b.finish().unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), n + 1);
    }

    #[test]
    fn errors_reach_the_caller_once_and_flushes_are_marked() {
        let flushes = Arc::new(Mutex::new(Vec::new()));
        let f = flushes.clone();
        let b = Behind::spawn("t", move |flush| {
            f.lock().unwrap().push(flush);
            Err(CacheError::Unavailable("locked".into()))
        })
        .unwrap();
        b.ask();
        // The unwaited run's error is kept until taken.
        let mut e = None;
        for _ in 0..1000 {
            e = b.take_error();
            if e.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(matches!(e, Some(CacheError::Unavailable(_))));
        assert!(b.take_error().is_none());
        assert!(b.wait().is_err());
        assert_eq!(*flushes.lock().unwrap(), [false, true]);
    }

    #[test]
    fn a_panicking_job_does_not_leave_waiters_hanging() {
        let b: Behind<CacheError> = Behind::spawn("t", |_| panic!("job failed")).unwrap();
        assert!(b.wait().is_err());
        assert!(b.take_error().is_some());
        assert!(b.finish().is_err());
    }
}
