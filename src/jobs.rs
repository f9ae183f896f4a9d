//! The run pool: fits run on worker threads of their own and report over one channel
//! with one event enum; every run has a cancel token, checked inside the fit's long
//! loops. Used by `sgpw run` and the app.

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::exec::{CancelToken, Exec, Par};
use crate::methods::ValidRunSpec;
use crate::model_file::ModelFile;
use crate::results::{NlmlScale, RunKey, RunResult, Status};
use crate::run_context::{Phase, Progress, RunContext};
use crate::train::{self, FitResult};
use crossbeam_channel::{Receiver, Sender, unbounded};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

pub type RunId = usize;

/// The most runs the pool runs at once: each is a thread, and a mistyped --jobs
/// (99999999999) must be an error, not a machine out of threads.
pub const MAX_JOBS: usize = 256;

/// What a worker runs for one task.
pub type FitFn = fn(&Dataset, &ValidRunSpec, &RunContext) -> Result<FitResult>;

#[derive(Clone, Debug)]
pub enum JobEvent {
    Started {
        id: RunId,
    },
    /// An optimiser iteration (`nlml` set), the start of a phase (neither set), or a
    /// validation score (`validation` = NMSE, MNLP; `--validation`).
    Progress {
        id: RunId,
        phase: Phase,
        iteration: usize,
        nlml: Option<f64>,
        elapsed: f64,
        validation: Option<(f64, f64)>,
    },
    /// The run ended: done, failed (with its message) or cancelled after it started
    /// (with the iterations it reached).
    Finished {
        id: RunId,
        result: Box<RunResult>,
    },
    /// The run was cancelled while it waited in the queue: it never started and has
    /// no result (a session keeps whatever it had for it; the run stays "not run").
    NotStarted {
        id: RunId,
        key: RunKey,
    },
}

/// One queued run.
struct Task {
    id: RunId,
    key: RunKey,
    data: Arc<Dataset>,
    spec: ValidRunSpec,
    cancel: CancelToken,
}

/// J worker threads taking runs from one queue. They are plain threads, not a rayon
/// pool: a rayon worker waiting inside a fit's parallel loop would steal and run a
/// whole queued fit on its stack, stalling the first fit until the second ends
/// (measured: a 50 s fit reported 1100 s). The fits' own parallel loops use rayon's
/// global pool when one worker runs, and one thread each when several run side by
/// side (faer's parallel kernels would wait at barriers for the other fit's threads).
pub struct Jobs {
    queue: Sender<Task>,
    threads: usize,
    cancels: Arc<Mutex<HashMap<RunId, CancelToken>>>,
}

impl Jobs {
    /// `threads` workers (0 = one per core) and the receiving end of their events.
    pub fn new(threads: usize) -> Result<(Jobs, Receiver<JobEvent>)> {
        Jobs::with_fit(threads, train::fit)
    }

    /// The same pool running `fit` in place of [`train::fit`] (the tests' seam for a
    /// fit that panics or blocks).
    pub fn with_fit(threads: usize, fit: FitFn) -> Result<(Jobs, Receiver<JobEvent>)> {
        if threads > MAX_JOBS {
            return Err(Error::input(format!(
                "--jobs {threads}: at most {MAX_JOBS} runs at once (0 = one per core)"
            )));
        }
        let threads = if threads == 0 {
            rayon::current_num_threads()
        } else {
            threads
        };
        let (tx, rx) = unbounded();
        let (queue, tasks) = unbounded::<Task>();
        let cancels: Arc<Mutex<HashMap<RunId, CancelToken>>> = Arc::default();
        let par = if threads > 1 {
            Par::Seq
        } else {
            Par::Threads(0)
        };
        for i in 0..threads {
            let (tasks, tx, cancels) = (tasks.clone(), tx.clone(), cancels.clone());
            std::thread::Builder::new()
                .name(format!("sgpw-run-{i}"))
                .spawn(move || {
                    for task in tasks.iter() {
                        let id = task.id;
                        let event = if task.cancel.is_cancelled() {
                            JobEvent::NotStarted { id, key: task.key }
                        } else {
                            JobEvent::Finished {
                                id,
                                result: Box::new(execute(task, par, fit, &tx)),
                            }
                        };
                        if let Ok(mut c) = cancels.lock() {
                            c.remove(&id);
                        }
                        let _ = tx.send(event);
                    }
                })
                .map_err(|e| Error::input(format!("cannot start a run worker: {e}")))?;
        }
        Ok((
            Jobs {
                queue,
                threads,
                cancels,
            },
            rx,
        ))
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Queue one run.
    pub fn submit(&self, id: RunId, key: RunKey, data: Arc<Dataset>, spec: ValidRunSpec) {
        let cancel = CancelToken::new();
        if let Ok(mut c) = self.cancels.lock() {
            c.insert(id, cancel.clone());
        }
        let _ = self.queue.send(Task {
            id,
            key,
            data,
            spec,
            cancel,
        });
    }

    /// Ask one queued or running run to stop (a running one reports `Cancelled`, a
    /// queued one [`JobEvent::NotStarted`]).
    pub fn cancel(&self, id: RunId) {
        if let Some(f) = self.cancels.lock().ok().and_then(|c| c.get(&id).cloned()) {
            f.cancel();
        }
    }

    pub fn cancel_all(&self) {
        if let Ok(c) = self.cancels.lock() {
            c.values().for_each(CancelToken::cancel);
        }
    }
}

/// Run one task, reporting progress; a panic inside a method becomes a failed result.
fn execute(task: Task, par: Par, fit: FitFn, tx: &Sender<JobEvent>) -> RunResult {
    let Task {
        id,
        key,
        data,
        spec,
        cancel,
    } = task;
    let started = std::time::Instant::now();
    let _ = tx.send(JobEvent::Started { id });
    let sink = |p: &Progress| {
        let _ = tx.send(JobEvent::Progress {
            id,
            phase: p.phase,
            iteration: p.iteration,
            nlml: p.nlml,
            elapsed: p.elapsed,
            validation: p.validation,
        });
    };
    let ctx = RunContext::new(Exec::new(par, cancel), &sink);
    let fit = catch_unwind(AssertUnwindSafe(|| fit(&data, &spec, &ctx))).unwrap_or_else(|panic| {
        Err(Error::numerical(format!(
            "the method panicked: {}",
            panic_message(&panic)
        )))
    });
    let mut r = outcome(key, &spec.method, fit);
    if let Some(model) = r.model.as_mut()
        && !keeps_posterior(model, data.n_train() * (data.dim() + 1))
    {
        model.posterior = None;
    }
    if r.status == Status::Cancelled && r.train_seconds == 0.0 {
        // cancelled before the fit iterated (e.g. in the subset pre-fit): the time spent
        r.train_seconds = started.elapsed().as_secs_f64();
    }
    r
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Whether a finished run keeps its posterior (the m-vector and m×m matrix) in the
/// session: only where it is at most 1% of the `train_values` it saves re-reading, so a
/// figure of a large data set needs a sample of it rather than all of it, and sessions
/// of small data sets stay small (there it is recomputed on replay in O(n·m²)). Never
/// for a method whose posterior is not storable (the exact GP's is n×n).
pub fn keeps_posterior(model: &ModelFile, train_values: usize) -> bool {
    let Some(p) = model.posterior.as_ref() else {
        return false;
    };
    let size = p.mean_weights.len() + p.var_matrix.len();
    crate::methods::get(&model.method).is_ok_and(|m| m.stores_posterior())
        && size * 100 <= train_values
}

/// A session result from a fit's outcome (with the model's posterior as the fit
/// computed it: see [`keeps_posterior`]).
pub fn outcome(key: RunKey, method: &str, fit: Result<FitResult>) -> RunResult {
    let mut r = RunResult::new(key, method, Status::Done);
    match fit {
        Ok(f) => {
            r.nlml = Some(f.nlml);
            r.nlml_scale = Some(NlmlScale::Raw);
            r.nmse = f.test.and_then(|t| t.nmse);
            r.mnlp = f.test.map(|t| t.mnlp);
            r.mse = f.test.map(|t| t.mse);
            r.negative_var_latent = f.test.map_or(0, |t| t.negative_var_latent);
            r.negative_var_noisy = f.test.map_or(0, |t| t.negative_var_noisy);
            r.error_rate = f.test.and_then(|t| t.error_rate);
            r.auc = f.test.and_then(|t| t.auc);
            r.rmse = f.test.and_then(|t| t.rmse);
            r.iterations = f.iterations;
            r.train_seconds = f.train_seconds;
            r.jitter = Some(f.jitter);
            r.stop = Some(f.stop);
            r.trace = f.trace;
            r.validation = f.validation;
            r.best_iteration = f.best_iteration;
            r.constant_mnlp = f.constant_mnlp;
            r.model = Some(f.model);
        }
        Err(Error::Cancelled) => {
            r.status = Status::Cancelled;
            r.stop = Some(crate::optim::Stop::Cancelled);
        }
        Err(Error::CancelledAfter(p)) => {
            r.status = Status::Cancelled;
            r.stop = Some(crate::optim::Stop::Cancelled);
            r.iterations = p.iterations;
            r.train_seconds = p.seconds;
            r.trace = p.trace;
            r.nlml_scale = Some(NlmlScale::Raw);
        }
        Err(e) => {
            r.status = Status::Failed;
            r.message = Some(e.to_string());
        }
    }
    r
}
