//! Long computations from Python: run on a scoped thread with the GIL released, so
//! other Python threads keep running, while the calling thread wakes every
//! [`TICK`] to take the GIL back, run Python's signal handlers (Ctrl-C raises
//! `KeyboardInterrupt` there) and hand the work's reports to a callback. An exception
//! from either cancels the work through its own cancellation (the fit's cancel token,
//! a session's interrupt flag), waits for it to stop — no thread is left running — and
//! is raised.

use crossbeam_channel::{RecvTimeoutError, Sender};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::time::Duration;

/// How often the waiting thread checks for signals: Ctrl-C is seen within this, and
/// the work stops within one block of its computation after that.
pub const TICK: Duration = Duration::from_millis(50);

/// Run `work` detached (see the module); `on_event` sees what it sends, with the GIL
/// held; `cancel` asks it to stop.
pub fn run_detached<T, E, W>(
    py: Python<'_>,
    cancel: impl Fn(),
    mut on_event: impl FnMut(Python<'_>, E) -> PyResult<()>,
    work: W,
) -> PyResult<T>
where
    T: Send,
    E: Send,
    W: FnOnce(Sender<E>) -> T + Send,
{
    let (tx, rx) = crossbeam_channel::unbounded::<E>();
    std::thread::scope(|s| {
        let handle = s.spawn(move || work(tx));
        let mut failure: Option<PyErr> = None;
        loop {
            let (events, finished) = py.detach(|| {
                let mut events = Vec::new();
                let finished = match rx.recv_timeout(TICK) {
                    Ok(e) => {
                        events.push(e);
                        false
                    }
                    Err(RecvTimeoutError::Timeout) => false,
                    Err(RecvTimeoutError::Disconnected) => true,
                };
                events.extend(rx.try_iter());
                (events, finished)
            });
            let step = py
                .check_signals()
                .and_then(|()| events.into_iter().try_for_each(|e| on_event(py, e)));
            if let Err(e) = step {
                cancel();
                failure = Some(e);
                break;
            }
            if finished {
                break;
            }
        }
        let joined = py.detach(|| handle.join());
        match (failure, joined) {
            (Some(e), _) => Err(e),
            (None, Ok(v)) => Ok(v),
            (None, Err(_)) => Err(PyRuntimeError::new_err(
                "sgpw stopped on an internal error (a bug: please report it with the data \
                 and settings that caused it)",
            )),
        }
    })
}
