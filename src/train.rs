//! One training run from start to finish, shared by `sgpw fit`, sessions and the app:
//! transform the data into model units, initialise, optimise, compute the posterior
//! once, and score the test set — all under a [`RunContext`] (threads, cancellation,
//! progress with its phase).

use crate::data::{Dataset, TrainData};
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::likelihood::Posterior;
use crate::methods::{self, Method, ValidRunSpec};
use crate::metrics::{self, TestMetrics};
use crate::model_file::{FitInfo, ModelFile, Standardize};
use crate::optim::Stop;
use crate::run_context::{Phase, RunContext};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Predictions in the original units of the target.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub mean: Vec<f64>,
    pub var_latent: Vec<f64>,
    pub var_noisy: Vec<f64>,
}

/// A fitted model with its posterior computed once.
pub struct Predictor {
    method: &'static dyn Method,
    model: ModelFile,
    posterior: Posterior,
    basis: Option<DMatrix<f64>>,
}

/// Inputs in model units.
pub fn model_inputs(model: &ModelFile, x: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    if x.ncols() != model.dim() {
        return Err(Error::input(format!(
            "the inputs have {} columns but the model takes {} inputs",
            x.ncols(),
            model.dim()
        )));
    }
    Ok(match &model.standardize {
        Some(s) => DMatrix::from_fn(x.nrows(), x.ncols(), |i, d| {
            (x[(i, d)] - s.input_center[d]) / s.input_scale[d]
        }),
        None => x.clone(),
    })
}

/// Training data in model units for an existing model.
pub fn model_data(model: &ModelFile, x: &DMatrix<f64>, y: &[f64]) -> Result<TrainData> {
    let scale = model.standardize.as_ref().map_or(1.0, |s| s.target_scale);
    Ok(TrainData {
        x: model_inputs(model, x)?,
        y: y.iter().map(|v| (v - model.target_mean) / scale).collect(),
    })
}

impl Predictor {
    /// From a model: use its stored posterior, or condition on training data.
    pub fn new(model: ModelFile, train: Option<(&DMatrix<f64>, &[f64])>) -> Result<Predictor> {
        let method = model.check()?;
        let exec = Exec::default();
        let (posterior, basis) = match (&model.posterior, train) {
            (Some(p), _) if method.stores_posterior() => (p.clone(), None),
            (_, Some((x, y))) => method.posterior(&model, &model_data(&model, x, y)?, &exec)?,
            (_, None) => {
                return Err(Error::input(format!(
                    "this {} model has no stored [posterior]; pass the training data with --train",
                    model.method
                )));
            }
        };
        Ok(Predictor {
            method,
            model,
            posterior,
            basis,
        })
    }

    pub fn model(&self) -> &ModelFile {
        &self.model
    }

    pub fn posterior(&self) -> &Posterior {
        &self.posterior
    }

    pub fn predict(&self, x: &DMatrix<f64>) -> Result<Prediction> {
        self.predict_with(x, &Exec::default())
    }

    /// Predict with the given threads (and cancellation), a chunk of rows at a time so
    /// that K(features, X*) never holds more than `exec.chunk_entries` entries.
    pub fn predict_with(&self, x: &DMatrix<f64>, exec: &Exec) -> Result<Prediction> {
        let scale = self
            .model
            .standardize
            .as_ref()
            .map_or(1.0, |s| s.target_scale);
        let s2 = self.model.hyper.noise_variance;
        let t = x.nrows();
        let mut out = Prediction {
            mean: Vec::with_capacity(t),
            var_latent: Vec::with_capacity(t),
            var_noisy: Vec::with_capacity(t),
        };
        let rows = exec.chunk_rows(self.posterior.m());
        for start in (0..t.max(1)).step_by(rows) {
            let len = rows.min(t - start.min(t));
            let xm = model_inputs(&self.model, &x.rows(start, len).into_owned())?;
            let (mean, var) = self.method.predict(
                &self.model,
                &self.posterior,
                self.basis.as_ref(),
                &xm,
                exec,
            )?;
            out.mean
                .extend(mean.iter().map(|m| m * scale + self.model.target_mean));
            out.var_latent.extend(var.iter().map(|v| v * scale * scale));
            out.var_noisy
                .extend(var.iter().map(|v| (v + s2) * scale * scale));
        }
        Ok(out)
    }

    /// NMSE and MNLP on a test set (original units; ȳ = the training mean).
    pub fn score(&self, x: &DMatrix<f64>, y: &[f64]) -> Result<TestMetrics> {
        self.score_with(x, y, &Exec::default())
    }

    pub fn score_with(&self, x: &DMatrix<f64>, y: &[f64], exec: &Exec) -> Result<TestMetrics> {
        let p = self.predict_with(x, exec)?;
        let scale = self
            .model
            .standardize
            .as_ref()
            .map_or(1.0, |s| s.target_scale);
        let noise = self.model.hyper.noise_variance * scale * scale;
        Ok(TestMetrics {
            nmse: metrics::nmse(y, &p.mean, self.model.target_mean),
            mnlp: metrics::mnlp_clamped(y, &p.mean, &p.var_noisy, noise),
            mse: metrics::mse(y, &p.mean),
            negative_var_latent: p.var_latent.iter().filter(|v| **v < 0.0).count(),
            negative_var_noisy: p.var_noisy.iter().filter(|v| **v < 0.0).count(),
        })
    }
}

/// Everything a finished run produced.
pub struct FitResult {
    pub model: ModelFile,
    pub predictor: Predictor,
    pub trace: Vec<f64>,
    pub iterations: usize,
    /// NLML + gradient evaluations, line searches included.
    pub evaluations: usize,
    pub train_seconds: f64,
    pub nlml: f64,
    pub jitter: f64,
    pub stop: Stop,
    pub test: Option<TestMetrics>,
}

/// Transform a data set into model units and record the transformation.
pub fn prepare(data: &Dataset, standardize: bool) -> (TrainData, f64, Option<Standardize>) {
    let y = data.y_train.as_slice();
    let n = y.len().max(1) as f64;
    let mean = y.iter().sum::<f64>() / n;
    if !standardize {
        let td = TrainData {
            x: data.x_train.clone(),
            y: y.iter().map(|v| v - mean).collect(),
        };
        return (td, mean, None);
    }
    let sd = |v: &mut dyn Iterator<Item = f64>, mu: f64| {
        let (s, c) = v.fold((0.0, 0.0), |(s, c), x| (s + (x - mu).powi(2), c + 1.0));
        let sd = (s / f64::max(c - 1.0, 1.0)).sqrt();
        if sd > 0.0 { sd } else { 1.0 }
    };
    let x = &data.x_train;
    let center: Vec<f64> = (0..x.ncols()).map(|d| x.column(d).mean()).collect();
    let scale: Vec<f64> = (0..x.ncols())
        .map(|d| sd(&mut x.column(d).iter().copied(), center[d]))
        .collect();
    let ys = sd(&mut y.iter().copied(), mean);
    let td = TrainData {
        x: DMatrix::from_fn(x.nrows(), x.ncols(), |i, d| {
            (x[(i, d)] - center[d]) / scale[d]
        }),
        y: y.iter().map(|v| (v - mean) / ys).collect(),
    };
    (
        td,
        mean,
        Some(Standardize {
            input_center: center,
            input_scale: scale,
            target_scale: ys,
        }),
    )
}

/// Run one fit. The context's cancel token ends it (→ `Error::Cancelled` before the
/// fit iterates, `Error::CancelledAfter` with how far it got after); its sink
/// sees every iteration and phase.
pub fn fit(data: &Dataset, spec: &ValidRunSpec, ctx: &RunContext) -> Result<FitResult> {
    let method = spec.method();
    // a session's specs were checked before the data were loaded: m ≤ n and the
    // subset sizes now
    spec.spec().check(data.n_train())?;
    let started = Instant::now();
    let (td, target_mean, standardize) = prepare(data, spec.standardize);
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let td = match spec.options.subset {
        Some(n) => methods::exact::subset(&td, n, &mut rng),
        None => td,
    };
    let hyper = methods::start::initial_hyper(&td, spec, ctx, &mut rng)?;
    let mut model = method.init(&td, spec, hyper, ctx, &mut rng)?;
    model.target_mean = target_mean;
    model.standardize = standardize;
    model.inputs = Some(data.feature_names.clone());
    ctx.enter(Phase::Fit { stage: 0 });
    let (mut fitted, outcome) = method.fit(model, &td, spec, ctx)?;
    if outcome.stop == Stop::Cancelled {
        // How far it got stays in the cancelled result (iterations, trace, time).
        return Err(Error::CancelledAfter(Box::new(crate::error::Partial {
            iterations: outcome.iterations,
            trace: outcome.trace,
            seconds: started.elapsed().as_secs_f64(),
        })));
    }
    ctx.enter(Phase::Posterior);
    let exec = &ctx.exec;
    let final_eval = method.objective(&fitted, &td, exec)?;
    let (posterior, basis) = method.posterior(&fitted, &td, exec)?;
    let train_seconds = started.elapsed().as_secs_f64();
    fitted.posterior = method.stores_posterior().then(|| posterior.clone());
    fitted.fit = Some(FitInfo {
        nlml: final_eval.nlml,
        jitter_used: final_eval.jitter,
        iterations: outcome.iterations,
        train_seconds,
        n_train: td.y.len(),
    });
    let predictor = Predictor {
        method,
        model: fitted.clone(),
        posterior,
        basis,
    };
    let test = match (&data.x_test, &data.y_test) {
        (Some(x), Some(y)) => {
            ctx.enter(Phase::Scoring);
            Some(predictor.score_with(x, y.as_slice(), exec)?)
        }
        _ => None,
    };
    Ok(FitResult {
        model: fitted,
        predictor,
        trace: outcome.trace,
        iterations: outcome.iterations,
        evaluations: outcome.evaluations,
        train_seconds,
        nlml: final_eval.nlml,
        jitter: final_eval.jitter,
        stop: outcome.stop,
        test,
    })
}
