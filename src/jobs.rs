//! The run pool: fits run on a rayon pool of their own and report over one channel
//! with one event enum; every run has a cancel flag. Used by `sgpw run` and the app.

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::optim::Control;
use crate::session::{RunKey, RunResult, Status};
use crate::train::{self, FitResult, RunSpec};
use crossbeam_channel::{Receiver, Sender, unbounded};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub type RunId = usize;

#[derive(Clone, Debug)]
pub enum JobEvent {
    Started {
        id: RunId,
    },
    Progress {
        id: RunId,
        iteration: usize,
        nlml: f64,
        elapsed: f64,
    },
    /// The run ended: done, failed (with its message) or cancelled.
    Finished {
        id: RunId,
        result: Box<RunResult>,
    },
}

pub struct Jobs {
    pool: rayon::ThreadPool,
    tx: Sender<JobEvent>,
    cancels: Arc<Mutex<HashMap<RunId, Arc<AtomicBool>>>>,
}

impl Jobs {
    /// A pool of `threads` workers (0 = one per core) and the receiving end of its events.
    pub fn new(threads: usize) -> Result<(Jobs, Receiver<JobEvent>)> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("sgpw-run-{i}"))
            .build()
            .map_err(|e| Error::input(format!("cannot start the run pool: {e}")))?;
        let (tx, rx) = unbounded();
        Ok((
            Jobs {
                pool,
                tx,
                cancels: Arc::default(),
            },
            rx,
        ))
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Queue one run.
    pub fn submit(&self, id: RunId, key: RunKey, data: Arc<Dataset>, spec: RunSpec) {
        let flag = Arc::new(AtomicBool::new(false));
        if let Ok(mut c) = self.cancels.lock() {
            c.insert(id, flag.clone());
        }
        let tx = self.tx.clone();
        let cancels = self.cancels.clone();
        let shared = self.threads() > 1;
        self.pool.spawn(move || {
            if shared {
                crate::linalg::set_threads(1);
            }
            let result = if flag.load(Ordering::Relaxed) {
                outcome(key, &spec, Err(Error::Cancelled))
            } else {
                let _ = tx.send(JobEvent::Started { id });
                let fit = catch_unwind(AssertUnwindSafe(|| {
                    train::fit(&data, &spec, &mut |it| {
                        let _ = tx.send(JobEvent::Progress {
                            id,
                            iteration: it.iteration,
                            nlml: it.nlml,
                            elapsed: it.elapsed,
                        });
                        if flag.load(Ordering::Relaxed) {
                            Control::Stop
                        } else {
                            Control::Continue
                        }
                    })
                }))
                .unwrap_or_else(|panic| {
                    Err(Error::numerical(format!(
                        "the method panicked: {}",
                        panic_message(&panic)
                    )))
                });
                outcome(key, &spec, fit)
            };
            if let Ok(mut c) = cancels.lock() {
                c.remove(&id);
            }
            let _ = tx.send(JobEvent::Finished {
                id,
                result: Box::new(result),
            });
        });
    }

    /// Ask one queued or running run to stop (it reports `Cancelled`).
    pub fn cancel(&self, id: RunId) {
        if let Some(f) = self.cancels.lock().ok().and_then(|c| c.get(&id).cloned()) {
            f.store(true, Ordering::Relaxed);
        }
    }

    pub fn cancel_all(&self) {
        if let Ok(c) = self.cancels.lock() {
            c.values().for_each(|f| f.store(true, Ordering::Relaxed));
        }
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A session result from a fit's outcome.
pub fn outcome(key: RunKey, spec: &RunSpec, fit: Result<FitResult>) -> RunResult {
    let mut r = RunResult {
        key,
        method: spec.method.clone(),
        status: Status::Done,
        message: None,
        nlml: None,
        nmse: None,
        mnlp: None,
        iterations: 0,
        train_seconds: 0.0,
        jitter: None,
        trace: Vec::new(),
        model: None,
    };
    match fit {
        Ok(f) => {
            r.nlml = Some(f.nlml);
            r.nmse = f.test.map(|t| t.nmse);
            r.mnlp = f.test.map(|t| t.mnlp);
            r.iterations = f.iterations;
            r.train_seconds = f.train_seconds;
            r.jitter = Some(f.jitter);
            r.trace = f.trace;
            r.model = Some(f.model);
        }
        Err(Error::Cancelled) => r.status = Status::Cancelled,
        Err(e) => {
            r.status = Status::Failed;
            r.message = Some(e.to_string());
        }
    }
    r
}
