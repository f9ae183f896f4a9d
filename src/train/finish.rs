//! The end of every fit: [`super::fit`], a streamed fit ([`crate::stream_fit`]) and a
//! distributed one (`sgpw_mpi::fit`, in the package sgpw-mpi) all end in [`finish`]. A
//! cancelled fit ends as [`Error::CancelledAfter`] with how far it got; a finished one
//! with the objective and the posterior at the fitted parameters, the fit's record in
//! the model ([`FitInfo`]), the predictor, the test scores beside the constant
//! predictor's, and the check that every number it hands out is finite.

use super::{FitResult, Predictor};
use crate::data::TrainData;
use crate::error::{Error, Partial, Result};
use crate::methods::Method;
use crate::metrics::{self, TestMetrics};
use crate::model_file::{CollapseRestart, FitInfo, ModelFile, SecondStart};
use crate::optim::{Outcome, Stop};
use crate::results::ValidationPoint;
use crate::run_context::{Phase, RunContext};
use nalgebra::DMatrix;
use std::time::Instant;

/// A fit that has stopped, as its path hands it to [`finish`].
pub struct Stopped {
    pub method: &'static dyn Method,
    pub model: ModelFile,
    pub outcome: Outcome,
    /// What turns the objective in model units into the raw target scale's.
    pub offset: f64,
    /// When the fit started: its training seconds count from here.
    pub started: Instant,
    /// The training rows (of every process).
    pub n_train: usize,
    /// The training targets' variance about their mean in the data's units (the
    /// constant predictor's); None where it is not known.
    pub target_variance: Option<f64>,
    pub collapse_restart: Option<CollapseRestart>,
    pub second_start: Option<SecondStart>,
    pub validation: Vec<ValidationPoint>,
    pub best_iteration: Option<usize>,
}

impl Stopped {
    /// A fit `method` ran from one start to `outcome`, with none of the extras of
    /// [`super::fit`] (a second start, validation).
    pub fn plain(
        method: &'static dyn Method,
        model: ModelFile,
        outcome: Outcome,
        offset: f64,
        started: Instant,
        n_train: usize,
    ) -> Stopped {
        Stopped {
            method,
            model,
            outcome,
            offset,
            started,
            n_train,
            target_variance: None,
            collapse_restart: None,
            second_start: None,
            validation: Vec::new(),
            best_iteration: None,
        }
    }
}

/// Where the objective and the posterior at the fitted parameters come from.
pub enum Final<'a> {
    /// Evaluated on the training rows in model units (every process's, when the
    /// context's `Exec` shares them).
    On(&'a TrainData),
    /// From the model alone ([`Method::end_without_rows`]), for a fit from rows it does
    /// not hold (a streamed file): the objective is the one the fit ended at.
    WithoutRows,
}

/// The test rows to score, in the data's units; read only when the fit was not
/// cancelled.
pub enum Test<'a> {
    None,
    Held(&'a DMatrix<f64>, &'a [f64]),
    /// Held rows of a count model with each row's exposure (`--exposure`).
    Exposed(&'a DMatrix<f64>, &'a [f64], &'a [f64]),
    Load(&'a dyn Fn() -> Result<(DMatrix<f64>, Vec<f64>)>),
}

/// `Err(CancelledAfter)` with how far the fit got (iterations, the trace on the raw
/// scale, seconds) when it was cancelled; every path's one cancel outcome.
pub fn unless_cancelled(outcome: &Outcome, offset: f64, started: Instant) -> Result<()> {
    if outcome.stop != Stop::Cancelled {
        return Ok(());
    }
    Err(Error::CancelledAfter(Box::new(Partial {
        iterations: outcome.iterations,
        trace: outcome.trace.iter().map(|v| v + offset).collect(),
        seconds: started.elapsed().as_secs_f64(),
    })))
}

/// End a fit: the cancel outcome, or the result (see the module's comment).
pub fn finish(stopped: Stopped, at_end: Final, test: Test, ctx: &RunContext) -> Result<FitResult> {
    let Stopped {
        method,
        model: mut fitted,
        outcome,
        offset,
        started,
        n_train,
        target_variance,
        collapse_restart,
        second_start,
        validation,
        best_iteration,
    } = stopped;
    unless_cancelled(&outcome, offset, started)?;
    ctx.enter(Phase::Posterior);
    let exec = &ctx.exec;
    let (objective, jitter, posterior, basis) = match at_end {
        Final::On(data) => {
            let o = method.objective(&fitted, data, exec)?;
            let (posterior, basis) = method.posterior(&fitted, data, exec)?;
            (o.nlml, o.jitter, posterior, basis)
        }
        Final::WithoutRows => {
            let (posterior, jitter) = method.end_without_rows(&fitted, exec)?;
            (outcome.f, jitter, posterior, None)
        }
    };
    let nlml = objective + offset;
    let train_seconds = started.elapsed().as_secs_f64();
    fitted.posterior = method.stores_posterior().then(|| posterior.clone());
    fitted.fit = Some(FitInfo {
        nlml,
        jitter_used: jitter,
        iterations: outcome.iterations,
        train_seconds,
        n_train,
        collapse_restart,
        second_start,
    });
    let predictor = Predictor::from_posterior(method, fitted.clone(), posterior, basis);
    use std::borrow::Cow;
    let rows = match test {
        Test::None => None,
        Test::Held(x, y) => {
            ctx.enter(Phase::Scoring);
            Some((Cow::Borrowed(x), Cow::Borrowed(y), None))
        }
        Test::Exposed(x, y, e) => {
            ctx.enter(Phase::Scoring);
            Some((Cow::Borrowed(x), Cow::Borrowed(y), Some(e)))
        }
        Test::Load(load) => {
            ctx.enter(Phase::Scoring);
            let (x, y) = load()?;
            Some((Cow::Owned(x), Cow::Owned(y), None))
        }
    };
    let (test, constant_mnlp) = match rows {
        Some((x, y, exposure)) => {
            let constant = target_variance
                .map(|var| (var, metrics::constant_mnlp(&y, fitted.target_mean, var)))
                .and_then(|(var, c)| (var > 0.0 && c.is_finite()).then_some(c));
            let scores = predictor.score_exposed(&x, &y, exposure, exec)?;
            (Some(scores), constant)
        }
        None => (None, None),
    };
    let trace: Vec<f64> = outcome.trace.iter().map(|v| v + offset).collect();
    check_finite(nlml, &trace, test.as_ref())?;
    Ok(FitResult {
        model: fitted,
        predictor,
        trace,
        iterations: outcome.iterations,
        evaluations: outcome.evaluations,
        train_seconds,
        nlml,
        jitter,
        stop: outcome.stop,
        test,
        validation,
        best_iteration,
        constant_mnlp,
        target_variance,
    })
}

/// The variance about `mean` of training targets `y` (data units, divided by n) as a
/// scaled sum: bit for bit the plain one where that fits in f64.
pub fn target_variance(y: &[f64], mean: f64) -> f64 {
    let (q, scale) = crate::data::moments::sum_of_squares(y.iter().map(|v| v - mean));
    q / y.len().max(1) as f64 * scale * scale
}

/// A result with an infinite or NaN number in it is an error saying which, never a
/// number printed or saved as if it were one.
fn check_finite(nlml: f64, trace: &[f64], test: Option<&TestMetrics>) -> Result<()> {
    let advice = "the data may be too extreme for double precision (rescale the target or \
                  the inputs), or the method failed numerically (try --seed, a smaller m, or \
                  standardized data)";
    if !nlml.is_finite() {
        return Err(Error::numerical(format!(
            "the objective at the fitted parameters is {nlml}; {advice}"
        )));
    }
    if let Some((i, v)) = trace.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::numerical(format!(
            "the objective at iteration {i} was {v}; {advice}"
        )));
    }
    if let Some(t) = test {
        for (name, v) in [
            ("NMSE", t.nmse.unwrap_or(0.0)),
            ("MNLP", t.mnlp),
            ("MSE", t.mse),
        ] {
            if !v.is_finite() {
                return Err(Error::numerical(format!(
                    "the test {name} is {v}: the test targets are too far from the \
                     predictions for double precision (are they on the training targets' \
                     scale?)"
                )));
            }
        }
    }
    Ok(())
}
