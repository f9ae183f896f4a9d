//! The context one training run carries through fitting and evaluation: how it
//! executes (threads and the cancel token, [`Exec`]) and where its progress goes, with
//! the phase it is in. The run pool, `sgpw fit` and the tests build one; methods and
//! the optimiser only read it.

use crate::exec::Exec;
use crate::optim::{Control, IterInfo};
use std::time::Instant;

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Fitting a full GP on a random subset for the starting hyperparameters.
    SubsetInit,
    /// Minimising the objective (stage k of a staged schedule counts from 1; 0 = one stage).
    Fit { stage: usize },
    /// Computing the posterior prediction needs.
    Posterior,
    /// Predicting the test set.
    Scoring,
}

impl Phase {
    pub fn word(self) -> &'static str {
        match self {
            Phase::SubsetInit => "subset init",
            Phase::Fit { .. } => "fit",
            Phase::Posterior => "posterior",
            Phase::Scoring => "scoring",
        }
    }
}

/// One progress report. During a fit, `iteration` and `nlml` are the optimiser's;
/// a report that only announces a phase has `nlml = None`.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub phase: Phase,
    pub iteration: usize,
    pub nlml: Option<f64>,
    /// Seconds since the run started.
    pub elapsed: f64,
}

/// Threads, cancellation and a progress sink for one run.
pub struct RunContext<'a> {
    pub exec: Exec,
    sink: &'a dyn Fn(&Progress),
    started: Instant,
}

fn ignore(_: &Progress) {}

impl<'a> RunContext<'a> {
    pub fn new(exec: Exec, sink: &'a dyn Fn(&Progress)) -> RunContext<'a> {
        RunContext {
            exec,
            sink,
            started: Instant::now(),
        }
    }

    /// No progress reports (tests, one-off evaluations).
    pub fn quiet(exec: Exec) -> RunContext<'static> {
        RunContext {
            exec,
            sink: &ignore,
            started: Instant::now(),
        }
    }

    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    pub fn is_cancelled(&self) -> bool {
        self.exec.is_cancelled()
    }

    /// Announce a phase.
    pub fn enter(&self, phase: Phase) {
        (self.sink)(&Progress {
            phase,
            iteration: 0,
            nlml: None,
            elapsed: self.elapsed(),
        });
    }

    /// Report the objective at step `iteration` of a schedule that is not an
    /// optimiser's (greedy selection: the DTC evidence after each added basis point).
    pub fn report(&self, phase: Phase, iteration: usize, nlml: f64) {
        (self.sink)(&Progress {
            phase,
            iteration,
            nlml: Some(nlml),
            elapsed: self.elapsed(),
        });
    }

    /// The optimiser's callback for a phase: reports every iteration and asks it to
    /// stop once the run is cancelled. `continues` (iterations done by earlier
    /// stages) continues the numbering across stages; a later stage's starting point,
    /// already reported as the last iteration of the previous one, is not reported again.
    pub fn on_iter(
        &self,
        phase: Phase,
        continues: Option<usize>,
    ) -> impl FnMut(&IterInfo) -> Control + '_ {
        move |it: &IterInfo| {
            if !(continues.is_some() && it.iteration == 0) {
                (self.sink)(&Progress {
                    phase,
                    iteration: it.iteration + continues.unwrap_or(0),
                    nlml: Some(it.nlml),
                    elapsed: self.elapsed(),
                });
            }
            if self.is_cancelled() {
                Control::Stop
            } else {
                Control::Continue
            }
        }
    }
}
