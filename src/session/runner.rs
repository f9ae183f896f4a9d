//! Running a session's runs on the job pool (headless `sgpw run`; the app uses the
//! same pool and events).

use super::shard::{Shard, ShardFile};
use super::{RunKey, RunResult, Session, Status, base_dir};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::jobs::{JobEvent, Jobs, outcome};
use crate::run_spec::{DataShape, Naming, RunSpec};
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

/// What a run's spec is checked against on a loaded data set.
pub fn shape(d: &Dataset) -> DataShape {
    DataShape {
        n_train: d.n_train(),
        dim: d.dim(),
    }
}

/// Where a headless run writes its results: the session itself, or a shard file.
enum Sink {
    Session,
    Shard(Shard, ShardFile),
}

impl Sink {
    /// Record a result and save (the session, or the shard file).
    fn save(&mut self, path: &Path, session: &mut Session, result: RunResult) -> Result<()> {
        match self {
            Sink::Session => {
                session.set_result(result);
                session.save(path)
            }
            Sink::Shard(s, f) => {
                session.set_result(result.clone());
                f.set_result(result);
                f.save(&s.path(path))
            }
        }
    }

    /// The last save; a shard writes its file even when it owned no unfinished run,
    /// so the file says it ran.
    fn finish(&self, path: &Path, session: &Session) -> Result<()> {
        match self {
            Sink::Session => session.save(path),
            Sink::Shard(s, f) => f.save(&s.path(path)),
        }
    }
}

/// What one `sgpw run` did.
#[derive(Debug)]
pub struct Summary {
    pub session: Session,
    /// Runs this invocation started (or failed before starting).
    pub ran: usize,
    pub done: usize,
    pub failed: usize,
    /// Runs cancelled after they started: recorded as cancelled, with the iteration
    /// they reached.
    pub cancelled: usize,
    /// Runs cancelled while queued: never started, nothing recorded (still "not run").
    pub not_started: Vec<RunKey>,
    /// The signal that interrupted it (its running runs were cancelled).
    pub interrupted: Option<i32>,
}

/// Run the session's runs (all of them with `force`, else those without a finished
/// result; with a shard, only those the shard owns) on `jobs` workers, saving after
/// every finished run — into the session, or with a shard into its shard file beside
/// the session (a shard never writes the session; `merge` folds it in). `report` sees
/// each result as it arrives. Returns the session with the new results.
pub fn run_session(
    path: &Path,
    jobs: usize,
    force: bool,
    shard: Option<Shard>,
    report: &mut dyn FnMut(&RunResult),
) -> Result<Session> {
    let never = AtomicUsize::new(0);
    run_session_until(path, jobs, force, shard, report, &never).map(|s| s.session)
}

/// [`run_session`] that stops early when `interrupt` becomes non-zero (a signal
/// number): the running runs are cancelled (they are recorded as cancelled, with the
/// iterations they reached, and re-run next time), the results are saved, and the
/// summary says which signal it was.
pub fn run_session_until(
    path: &Path,
    jobs: usize,
    force: bool,
    shard: Option<Shard>,
    report: &mut dyn FnMut(&RunResult),
    interrupt: &AtomicUsize,
) -> Result<Summary> {
    let limit = crate::exec::memory_available();
    run_session_limited(path, jobs, force, shard, limit, report, interrupt)
}

/// [`run_session_until`] that refuses, before any run starts, a session with a run
/// whose estimated memory ([`crate::methods::cost`]) is over `max_memory` bytes
/// (`sgpw run --max-memory`), and notes the estimate of every costly run.
pub fn run_session_limited(
    path: &Path,
    jobs: usize,
    force: bool,
    shard: Option<Shard>,
    max_memory: usize,
    report: &mut dyn FnMut(&RunResult),
    interrupt: &AtomicUsize,
) -> Result<Summary> {
    let mut session = Session::read(path)?;
    let base = base_dir(path);
    let mut sink = match shard {
        None => Sink::Session,
        Some(s) => {
            let file = s.path(path);
            let f = if file.exists() {
                ShardFile::read(&file)?
            } else {
                ShardFile::new(&session, s)
            };
            // a shard resumes: results it already wrote count as the session's
            for r in &f.results {
                session.set_result(r.clone());
            }
            Sink::Shard(s, f)
        }
    };
    let runs: Vec<(RunKey, RunSpec)> = session
        .all_runs()
        .into_iter()
        .filter(|(k, _)| shard.is_none_or(|s| s.owns(k)))
        .filter(|(k, _)| force || session.result(k).is_none_or(|r| r.status != Status::Done))
        .collect();
    let mut summary = Summary {
        session: Session::new(""),
        ran: runs.len(),
        done: 0,
        failed: 0,
        cancelled: 0,
        not_started: Vec::new(),
        interrupted: None,
    };
    let mut count = |r: &RunResult| match r.status {
        Status::Done => summary.done += 1,
        Status::Failed => summary.failed += 1,
        Status::Cancelled => summary.cancelled += 1,
    };
    // A failed save (a full disk, a read-only folder) does not stop the runs: the
    // next one tries again, and the last save's error is final.
    let record = |sink: &mut Sink, session: &mut Session, r: RunResult| {
        if let Err(e) = sink.save(path, session, r) {
            crate::noteln!("warning: {e} (retrying after the next run)");
        }
    };
    let data = load_datasets(&session, &base, &runs);
    // Every pending run against its data before the first one starts (m ≤ n, subset
    // sizes, dims ≤ D): a mistake in one entry must not surface after the others trained.
    let mut problems: Vec<String> = Vec::new();
    let threads = crate::methods::cost::threads_per_run(jobs);
    for (key, spec) in &runs {
        let Ok(d) = &data[&key.dataset] else { continue };
        let problem = match spec.check_for(shape(d), Naming::Keys) {
            Err(e) => Some(e.to_string()),
            Ok(valid) => {
                let e = valid.estimate(d.n_train(), d.dim(), threads);
                let method = valid.method().name();
                if !e.fits(max_memory) {
                    Some(e.refusal(method, d.n_train(), max_memory, "--max-memory"))
                } else {
                    if e.is_costly() {
                        crate::noteln!(
                            "note: {}/{} m={} seed={}: {method} on {} training points: {}",
                            key.dataset,
                            key.label,
                            key.m,
                            key.seed,
                            d.n_train(),
                            e.describe()
                        );
                    }
                    None
                }
            }
        };
        if let Some(e) = problem {
            let place = session
                .entry_of(key)
                .map_or_else(|| "a run".to_string(), |i| session.run_place(i));
            let line = format!("{place}: {e} ({}/{} m = {})", key.dataset, key.label, key.m);
            if !problems.contains(&line) {
                problems.push(line);
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::file(
            path,
            format!(
                "{}\nnothing was run: change these run entries first",
                problems.join("\n")
            ),
        ));
    }
    let (pool, events) = Jobs::new(jobs)?;
    let mut pending = 0;
    for (id, (key, spec)) in runs.into_iter().enumerate() {
        let checked = match &data[&key.dataset] {
            Ok(d) => spec
                .check_for(shape(d), Naming::Keys)
                .map(|v| (d.clone(), v)),
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
                record(&mut sink, &mut session, r);
            }
        }
    }
    let mut interrupted = None;
    let mut not_started = Vec::new();
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
        match event {
            JobEvent::Finished { result, .. } => {
                pending -= 1;
                report(&result);
                count(&result);
                // A cancelled run does not replace an earlier result of its own.
                let keep = result.status == Status::Cancelled
                    && session
                        .result(&result.key)
                        .is_some_and(|r| r.status == Status::Done);
                if !keep {
                    record(&mut sink, &mut session, *result);
                }
            }
            // never started: nothing to record, as the app leaves it "not run"
            JobEvent::NotStarted { key, .. } => {
                pending -= 1;
                not_started.push(key);
            }
            JobEvent::Started { .. } | JobEvent::Progress { .. } => {}
        }
    }
    sink.finish(path, &session)?;
    summary.not_started = not_started;
    summary.session = session;
    summary.interrupted = interrupted;
    Ok(summary)
}
