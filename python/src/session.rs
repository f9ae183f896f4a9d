//! Sessions from Python: `sgpw run` (the same runner, its Ctrl-C the runner's own
//! interrupt: finished runs are saved, running ones recorded as cancelled) and `sgpw
//! report` (the same rendering).

use crate::detached::run_detached;
use crate::errors::OrPy;
use clap::ValueEnum;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sgpw::results::{RunResult, Status};
use sgpw::session::report::{self, ReportFormat};
use sgpw::session::{Session, runner};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The interrupt a Python exception (Ctrl-C, or one from the callback) gives the runner:
/// SIGINT's number, as `sgpw run` records a Ctrl-C.
const SIGINT: usize = 2;

/// What the callback hears of one finished (or failed, or cancelled) run.
struct Finished {
    dataset: String,
    label: String,
    m: usize,
    seed: u64,
    status: &'static str,
    nlml: Option<f64>,
    nmse: Option<f64>,
    mnlp: Option<f64>,
    iterations: usize,
    seconds: f64,
    message: Option<String>,
}

impl Finished {
    fn of(r: &RunResult) -> Finished {
        Finished {
            dataset: r.key.dataset.clone(),
            label: r.key.label.clone(),
            m: r.key.m,
            seed: r.key.seed,
            status: match r.status {
                Status::Done => "done",
                Status::Failed => "failed",
                Status::Cancelled => "cancelled",
            },
            nlml: r.raw_nlml(),
            nmse: r.nmse,
            mnlp: r.mnlp,
            iterations: r.iterations,
            seconds: r.train_seconds,
            message: r.message.clone(),
        }
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("dataset", &self.dataset)?;
        d.set_item("label", &self.label)?;
        d.set_item("m", self.m)?;
        d.set_item("seed", self.seed)?;
        d.set_item("status", self.status)?;
        d.set_item("nlml", self.nlml)?;
        d.set_item("nmse", self.nmse)?;
        d.set_item("mnlp", self.mnlp)?;
        d.set_item("iterations", self.iterations)?;
        d.set_item("seconds", self.seconds)?;
        d.set_item("message", &self.message)?;
        Ok(d)
    }
}

/// Run a session's unfinished runs (all with `force`) on `jobs` workers (0: one per
/// core), saving after each; `callback(result)` sees each as it finishes.
#[pyfunction]
#[pyo3(signature = (path, jobs=0, force=false, callback=None))]
pub fn session_run<'py>(
    py: Python<'py>,
    path: PathBuf,
    jobs: usize,
    force: bool,
    callback: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let interrupt = AtomicUsize::new(0);
    let summary = run_detached(
        py,
        || interrupt.store(SIGINT, Ordering::SeqCst),
        |py, f: Finished| match &callback {
            Some(cb) => cb.call1((f.to_dict(py)?,)).map(|_| ()),
            None => Ok(()),
        },
        |tx| {
            runner::run_session_until(
                &path,
                jobs,
                force,
                None,
                &mut |r| {
                    let _ = tx.send(Finished::of(r));
                },
                &interrupt,
            )
        },
    )?
    .or_py()?;
    if summary.interrupted.is_some() {
        // a signal the runner saw itself (the process's own handlers)
        return Err(PyKeyboardInterrupt::new_err(
            "the session run was interrupted; finished runs are saved",
        ));
    }
    let d = PyDict::new(py);
    d.set_item("ran", summary.ran)?;
    d.set_item("done", summary.done)?;
    d.set_item("failed", summary.failed)?;
    d.set_item("cancelled", summary.cancelled)?;
    d.set_item("not_started", summary.not_started.len())?;
    Ok(d)
}

/// The session's results as `sgpw report --format FORMAT` prints them.
#[pyfunction]
#[pyo3(signature = (path, format="markdown", merge_generations=false, mse=false))]
pub fn session_report(
    path: PathBuf,
    format: &str,
    merge_generations: bool,
    mse: bool,
) -> PyResult<String> {
    let format = ReportFormat::from_str(format, true).map_err(|_| {
        let names: Vec<String> = ReportFormat::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        PyValueError::new_err(format!(
            "format = '{format}': choose one of {}",
            names.join(", ")
        ))
    })?;
    let session = Session::read(&path).or_py()?;
    report::render(&session, format, merge_generations, mse).or_py()
}
