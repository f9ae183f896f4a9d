//! Running a session's runs on the job pool (headless `sgpw run`; the app uses the
//! same pool and events).

use super::{RunKey, RunResult, Session, Status, base_dir};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::jobs::{JobEvent, Jobs, outcome};
use crate::run_spec::RunSpec;
use crossbeam_channel::RecvTimeoutError;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Load every data set the given runs use; a data set that fails to load is kept as
/// its error message so that only its own runs fail.
pub fn load_datasets(
    session: &Session,
    base: &Path,
    runs: &[(RunKey, RunSpec)],
) -> HashMap<String, std::result::Result<Arc<Dataset>, String>> {
    let mut out = HashMap::new();
    for (key, _) in runs {
        if out.contains_key(&key.dataset) {
            continue;
        }
        let loaded = match session.dataset(&key.dataset) {
            Some(entry) => entry.load(base).map(Arc::new).map_err(|e| e.to_string()),
            None => Err(format!("no data set named '{}'", key.dataset)),
        };
        out.insert(key.dataset.clone(), loaded);
    }
    out
}

/// What one `sgpw run` did.
#[derive(Debug)]
pub struct Summary {
    pub session: Session,
    /// Runs this invocation started (or failed before starting).
    pub ran: usize,
    pub done: usize,
    pub failed: usize,
    pub cancelled: usize,
    /// The signal that interrupted it (its running runs were cancelled).
    pub interrupted: Option<i32>,
}

/// Run the session's runs (all of them with `force`, else those without a finished
/// result) on `jobs` workers, saving the session after every finished run.
/// `report` sees each result as it arrives.
pub fn run_session(
    path: &Path,
    jobs: usize,
    force: bool,
    report: &mut dyn FnMut(&RunResult),
) -> Result<Session> {
    let never = AtomicUsize::new(0);
    run_session_until(path, jobs, force, report, &never).map(|s| s.session)
}

/// [`run_session`] that stops early when `interrupt` becomes non-zero (a signal
/// number): the running runs are cancelled (they are recorded as cancelled, with the
/// iterations they reached, and re-run next time), the session is saved, and the
/// summary says which signal it was.
pub fn run_session_until(
    path: &Path,
    jobs: usize,
    force: bool,
    report: &mut dyn FnMut(&RunResult),
    interrupt: &AtomicUsize,
) -> Result<Summary> {
    let mut session = Session::read(path)?;
    let base = base_dir(path);
    let runs: Vec<(RunKey, RunSpec)> = session
        .all_runs()
        .into_iter()
        .filter(|(k, _)| force || session.result(k).is_none_or(|r| r.status != Status::Done))
        .collect();
    let mut summary = Summary {
        session: Session::new(""),
        ran: runs.len(),
        done: 0,
        failed: 0,
        cancelled: 0,
        interrupted: None,
    };
    let mut count = |r: &RunResult| match r.status {
        Status::Done => summary.done += 1,
        Status::Failed => summary.failed += 1,
        Status::Cancelled => summary.cancelled += 1,
    };
    let data = load_datasets(&session, &base, &runs);
    let (pool, events) = Jobs::new(jobs)?;
    let mut pending = 0;
    for (id, (key, spec)) in runs.into_iter().enumerate() {
        // m ≤ n and the subset sizes can only be checked now that the data are loaded
        let checked = match &data[&key.dataset] {
            Ok(d) => spec.check(d.n_train()).map(|v| (d.clone(), v)),
            Err(msg) => Err(Error::Data(msg.clone())),
        };
        match checked {
            Ok((d, valid)) => {
                pool.submit(id, key, d, valid);
                pending += 1;
            }
            Err(e) => {
                let r = outcome(key, &spec.method, Err(e));
                report(&r);
                count(&r);
                session.set_result(r);
            }
        }
    }
    let mut interrupted = None;
    while pending > 0 {
        let sig = interrupt.load(Ordering::Relaxed);
        if sig != 0 && interrupted.is_none() {
            interrupted = Some(sig as i32);
            pool.cancel_all();
        }
        let event = match events.recv_timeout(Duration::from_millis(100)) {
            Ok(e) => e,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if let JobEvent::Finished { result, .. } = event {
            pending -= 1;
            report(&result);
            count(&result);
            // A cancelled run does not replace an earlier result of its own.
            let keep = result.status == Status::Cancelled
                && session
                    .result(&result.key)
                    .is_some_and(|r| r.status == Status::Done);
            if !keep {
                session.set_result(*result);
                // A failed save (a full disk, a read-only folder) does not stop the
                // runs: the next one tries again, and the last save's error is final.
                if let Err(e) = session.save(path) {
                    crate::noteln!("warning: {e} (retrying after the next run)");
                }
            }
        }
    }
    session.save(path)?;
    summary.session = session;
    summary.interrupted = interrupted;
    Ok(summary)
}
