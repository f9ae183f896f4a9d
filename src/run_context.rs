//! The context one training run carries through fitting and evaluation: how it
//! executes (threads and the cancel token, [`Exec`]) and where its progress goes, with
//! the phase it is in. The run pool, `sgpw fit` and the tests build one; methods and
//! the optimiser only read it.

use crate::exec::Exec;
use crate::model_file::ModelFile;
use crate::optim::{Control, IterInfo};
use crate::run_spec::{DEFAULT_POSITIVE, Positive};
use std::time::Instant;

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Fitting a full GP on a random subset for the starting hyperparameters.
    SubsetInit,
    /// A short optimisation from start k of `--restarts K` (counted from 0).
    Restart { start: usize },
    /// The fit from the default second start (docs/methods.md §0.4), raced against the
    /// first (`Fit`).
    SecondStart,
    /// One of the two starts' fits fell clearly behind and was stopped (`second`: the
    /// subset-fitted start's); the other goes on alone.
    Dropped { second: bool },
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
            Phase::SubsetInit => "subset fit",
            Phase::Restart { .. } => "restarts",
            Phase::SecondStart => "second start",
            Phase::Dropped { second: true } => "second start dropped",
            Phase::Dropped { second: false } => "first start dropped",
            Phase::Fit { .. } => "fit",
            Phase::Posterior => "posterior",
            Phase::Scoring => "scoring",
        }
    }
}

/// One progress report. During a fit, `iteration` and `nlml` are the optimiser's;
/// a report that only announces a phase has `nlml = None`; a validation score
/// (`--validation`) comes as its own report with `validation` set.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub phase: Phase,
    pub iteration: usize,
    pub nlml: Option<f64>,
    /// Seconds since the run started.
    pub elapsed: f64,
    /// Validation NMSE and MNLP at this iteration.
    pub validation: Option<(f64, f64)>,
}

/// What watches the fit's iterates (validation scoring, early stopping): called every
/// `every` iterations of the main fit with the model reached; may stop the fit.
pub type Observer<'a> = &'a dyn Fn(usize, &ModelFile) -> Control;

/// What a race of two fits ([`crate::two_starts`]) hears after each reported iteration
/// of a fit phase (the iteration, the objective in model units); it may block until the
/// fit's turn comes again, and says whether to go on.
pub type Gate<'a> = &'a dyn Fn(usize, f64) -> Control;

/// What a context is made of that another thread can take ([`RunContext::parts`]).
#[derive(Clone)]
pub struct Parts {
    exec: Exec,
    started: Instant,
    offset: f64,
    positive: Positive,
}

impl Parts {
    /// The same parts computing with `par` (a fit of the run beside others:
    /// [`crate::side_by_side`]).
    pub fn on(mut self, par: crate::exec::Par) -> Parts {
        self.exec.par = par;
        self
    }

    /// When the run started.
    pub fn started(&self) -> Instant {
        self.started
    }
}

/// Threads, cancellation and a progress sink for one run.
pub struct RunContext<'a> {
    pub exec: Exec,
    sink: &'a dyn Fn(&Progress),
    started: Instant,
    observer: Option<(Observer<'a>, usize)>,
    /// Reports of the fit phase go out as this phase (a restart of `--restarts`, the
    /// second start) instead.
    fit_reported_as: Option<Phase>,
    /// Added to every reported objective: n·log(target scale) for a standardised run,
    /// so that progress is on the raw target scale like the results.
    offset: std::cell::Cell<f64>,
    /// How the optimiser parameterises σ0², ℓ, σ² (the run's `--positive`).
    positive: std::cell::Cell<Positive>,
    /// The race this fit runs in, if any.
    gate: Option<Gate<'a>>,
}

fn ignore(_: &Progress) {}

impl<'a> RunContext<'a> {
    pub fn new(exec: Exec, sink: &'a dyn Fn(&Progress)) -> RunContext<'a> {
        RunContext {
            exec,
            sink,
            started: Instant::now(),
            observer: None,
            fit_reported_as: None,
            offset: std::cell::Cell::new(0.0),
            positive: std::cell::Cell::new(DEFAULT_POSITIVE),
            gate: None,
        }
    }

    /// No progress reports (tests, one-off evaluations).
    pub fn quiet(exec: Exec) -> RunContext<'static> {
        RunContext {
            exec,
            sink: &ignore,
            started: Instant::now(),
            observer: None,
            fit_reported_as: None,
            offset: std::cell::Cell::new(0.0),
            positive: std::cell::Cell::new(DEFAULT_POSITIVE),
            gate: None,
        }
    }

    /// What another thread needs to run a fit of this run: threads, cancellation, the
    /// start time, the objective's offset and the parameterisation.
    pub fn parts(&self) -> Parts {
        Parts {
            exec: self.exec.clone(),
            started: self.started,
            offset: self.offset.get(),
            positive: self.positive.get(),
        }
    }

    /// A context built from [`RunContext::parts`] in another thread: its reports go to
    /// `sink`, its fit phase reported as `reported_as` (if given), and after each
    /// reported iteration of its fit it asks `gate` whether to go on.
    pub fn raced(
        parts: Parts,
        sink: &'a dyn Fn(&Progress),
        reported_as: Option<Phase>,
        gate: Gate<'a>,
    ) -> RunContext<'a> {
        RunContext {
            exec: parts.exec,
            sink,
            started: parts.started,
            observer: None,
            fit_reported_as: reported_as,
            offset: std::cell::Cell::new(parts.offset),
            positive: std::cell::Cell::new(parts.positive),
            gate: Some(gate),
        }
    }

    /// Hand a report made elsewhere (another thread's fit) to this context's sink.
    pub fn forward(&self, progress: &Progress) {
        (self.sink)(progress);
    }

    /// Parameterise the positive hyperparameters as `positive` from now on.
    pub fn set_positive(&self, positive: Positive) {
        self.positive.set(positive);
    }

    /// How the optimiser parameterises σ0², ℓ, σ².
    pub fn positive(&self) -> Positive {
        self.positive.get()
    }

    /// Report objectives shifted by `offset` from now on (see the field).
    pub fn set_offset(&self, offset: f64) {
        self.offset.set(offset);
    }

    /// The same context for the short fit from start `k` of `--restarts`: its
    /// iterations are reported as that restart's, not as the run's fit, and nothing
    /// observes them.
    pub fn restart(&self, k: usize) -> RunContext<'_> {
        RunContext {
            exec: self.exec.clone(),
            sink: self.sink,
            started: self.started,
            observer: None,
            fit_reported_as: Some(Phase::Restart { start: k }),
            offset: self.offset.clone(),
            positive: self.positive.clone(),
            gate: None,
        }
    }

    /// Which start of `--restarts` this context runs (None: the run's main fit).
    pub fn restart_index(&self) -> Option<usize> {
        match self.fit_reported_as {
            Some(Phase::Restart { start }) => Some(start),
            _ => None,
        }
    }

    /// The same context for the fit from the default second start: its iterations are
    /// reported as [`Phase::SecondStart`], and nothing observes them.
    pub fn second_start(&self) -> RunContext<'_> {
        RunContext {
            exec: self.exec.clone(),
            sink: self.sink,
            started: self.started,
            observer: None,
            fit_reported_as: Some(Phase::SecondStart),
            offset: self.offset.clone(),
            positive: self.positive.clone(),
            gate: None,
        }
    }

    /// The same context with an observer of the main fit's iterates.
    pub fn observed<'b>(&'b self, observer: Observer<'b>, every: usize) -> RunContext<'b> {
        RunContext {
            exec: self.exec.clone(),
            sink: self.sink,
            started: self.started,
            observer: Some((observer, every.max(1))),
            fit_reported_as: self.fit_reported_as,
            offset: self.offset.clone(),
            positive: self.positive.clone(),
            gate: None,
        }
    }

    /// Whether the observer wants the model at this iteration of a `phase`.
    pub fn observes(&self, phase: Phase, iteration: usize) -> bool {
        matches!(phase, Phase::Fit { .. })
            && self
                .observer
                .is_some_and(|(_, every)| iteration.is_multiple_of(every))
    }

    /// Hand the observer the model reached at `iteration`.
    pub fn observe(&self, iteration: usize, model: &ModelFile) -> Control {
        match self.observer {
            Some((f, _)) => f(iteration, model),
            None => Control::Continue,
        }
    }

    /// Report validation scores at an iteration.
    pub fn validation(&self, iteration: usize, nmse: f64, mnlp: f64) {
        (self.sink)(&Progress {
            phase: Phase::Fit { stage: 0 },
            iteration,
            nlml: None,
            elapsed: self.elapsed(),
            validation: Some((nmse, mnlp)),
        });
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
            validation: None,
        });
    }

    /// Report the objective at step `iteration` of a schedule that is not an
    /// optimiser's (greedy selection: its objective after each added basis point).
    /// Like the optimiser's reports ([`RunContext::on_iter`]): a restart's fit phase is
    /// reported as that restart, and the objective on the raw target scale.
    pub fn report(&self, phase: Phase, iteration: usize, nlml: f64) {
        let phase = match (self.fit_reported_as, phase) {
            (Some(as_phase), Phase::Fit { .. }) => as_phase,
            _ => phase,
        };
        (self.sink)(&Progress {
            phase,
            iteration,
            nlml: Some(nlml + self.offset.get()),
            elapsed: self.elapsed(),
            validation: None,
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
        let phase = match (self.fit_reported_as, phase) {
            (Some(as_phase), Phase::Fit { .. }) => as_phase,
            _ => phase,
        };
        let gated = matches!(phase, Phase::Fit { .. } | Phase::SecondStart);
        move |it: &IterInfo| {
            let iteration = it.iteration + continues.unwrap_or(0);
            let reported = !(continues.is_some() && it.iteration == 0);
            if reported {
                (self.sink)(&Progress {
                    phase,
                    iteration,
                    nlml: Some(it.nlml + self.offset.get()),
                    elapsed: self.elapsed(),
                    validation: None,
                });
            }
            let control = match self.gate {
                Some(gate) if gated && reported => gate(iteration, it.nlml),
                _ => Control::Continue,
            };
            if self.is_cancelled() {
                Control::Stop
            } else {
                control
            }
        }
    }
}
