//! The run pool: fits run on worker threads of their own and report over one channel
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

/// One queued run.
struct Task {
    id: RunId,
    key: RunKey,
    data: Arc<Dataset>,
    spec: RunSpec,
    cancel: Arc<AtomicBool>,
}

/// J worker threads taking runs from one queue. They are plain threads, not a rayon
/// pool: a rayon worker waiting inside a fit's parallel loop would steal and run a
/// whole queued fit on its stack, stalling the first fit until the second ends
/// (measured: a 50 s fit reported 1100 s). The fits' own parallel loops use rayon's
/// global pool.
pub struct Jobs {
    queue: Sender<Task>,
    threads: usize,
    cancels: Arc<Mutex<HashMap<RunId, Arc<AtomicBool>>>>,
}

impl Jobs {
    /// `threads` workers (0 = one per core) and the receiving end of their events.
    pub fn new(threads: usize) -> Result<(Jobs, Receiver<JobEvent>)> {
        let threads = if threads == 0 {
            rayon::current_num_threads()
        } else {
            threads
        };
        let (tx, rx) = unbounded();
        let (queue, tasks) = unbounded::<Task>();
        let cancels: Arc<Mutex<HashMap<RunId, Arc<AtomicBool>>>> = Arc::default();
        for i in 0..threads {
            let (tasks, tx, cancels) = (tasks.clone(), tx.clone(), cancels.clone());
            std::thread::Builder::new()
                .name(format!("sgpw-run-{i}"))
                .spawn(move || {
                    // Fits side by side: faer must not wait for the other's threads.
                    if threads > 1 {
                        crate::linalg::set_threads(1);
                    }
                    for task in tasks.iter() {
                        let id = task.id;
                        let result = execute(task, &tx);
                        if let Ok(mut c) = cancels.lock() {
                            c.remove(&id);
                        }
                        let _ = tx.send(JobEvent::Finished {
                            id,
                            result: Box::new(result),
                        });
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
    pub fn submit(&self, id: RunId, key: RunKey, data: Arc<Dataset>, spec: RunSpec) {
        let cancel = Arc::new(AtomicBool::new(false));
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

/// Run one task, reporting progress; a panic inside a method becomes a failed result.
fn execute(task: Task, tx: &Sender<JobEvent>) -> RunResult {
    let Task {
        id,
        key,
        data,
        spec,
        cancel,
    } = task;
    if cancel.load(Ordering::Relaxed) {
        return outcome(key, &spec, Err(Error::Cancelled));
    }
    let _ = tx.send(JobEvent::Started { id });
    let fit = catch_unwind(AssertUnwindSafe(|| {
        train::fit(&data, &spec, &mut |it| {
            let _ = tx.send(JobEvent::Progress {
                id,
                iteration: it.iteration,
                nlml: it.nlml,
                elapsed: it.elapsed,
            });
            if cancel.load(Ordering::Relaxed) {
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
            // The posterior (m-vector and m×m matrix) is recomputed from the data on
            // replay in O(n·m²); storing it would make sessions tens of megabytes.
            let mut model = f.model;
            model.posterior = None;
            r.model = Some(model);
        }
        Err(Error::Cancelled) => r.status = Status::Cancelled,
        Err(e) => {
            r.status = Status::Failed;
            r.message = Some(e.to_string());
        }
    }
    r
}
