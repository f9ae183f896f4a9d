//! One training run from start to finish, shared by `sgpw fit`, sessions and the app:
//! transform the data into model units, initialise, optimise, compute the posterior
//! once, and score the test set — all under a [`RunContext`] (threads, cancellation,
//! progress with its phase).

use crate::collapsed::Posterior;
use crate::data::moments::moments;
use crate::data::{Dataset, TrainData};
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::methods::{self, Method, ValidRunSpec};
use crate::metrics::{self, TestMetrics};
use crate::model_file::{
    CollapseRestart, FitInfo, Hyper, ModelFile, SecondStart, Standardize, raw_scale_offset,
};
use crate::optim::Stop;
use crate::results::ValidationPoint;
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

impl Prediction {
    /// Never a NaN or infinity handed out as if it were a prediction: the error for the
    /// first row whose prediction is not finite, `row(i)` naming row i of the input.
    pub fn check_finite(&self, row: impl Fn(usize) -> String) -> Result<()> {
        for i in 0..self.mean.len() {
            let (mean, latent, noisy) = (self.mean[i], self.var_latent[i], self.var_noisy[i]);
            if !(mean.is_finite() && latent.is_finite() && noisy.is_finite()) {
                return Err(Error::numerical(format!(
                    "the prediction at {} is mean {mean}, variance {noisy}: the input is too \
                     far outside the training data, or the model's numbers too extreme, for \
                     double precision",
                    row(i)
                )));
            }
        }
        Ok(())
    }
}

/// A model's σ0², σ², ℓ in the data's units ([`Predictor::hyper_in_data_units`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DataUnitHyper {
    pub signal_variance: f64,
    pub noise_variance: f64,
    /// One per input, in the inputs' units; None where the model has none per input.
    pub lengthscales: Option<Vec<f64>>,
}

/// A fitted model with its posterior computed once.
pub struct Predictor {
    method: &'static dyn Method,
    model: ModelFile,
    /// The inputs it takes.
    dim: usize,
    posterior: Posterior,
    basis: Option<DMatrix<f64>>,
}

/// Inputs in model units (the model is checked first).
pub fn model_inputs(model: &ModelFile, x: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let dim = model.check()?.input_dim(model);
    to_model_units(model, dim, x)
}

/// Inputs in the units of a model that takes `dim` of them.
fn to_model_units(model: &ModelFile, dim: usize, x: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    if x.ncols() != dim {
        return Err(Error::input(format!(
            "the inputs have {} columns but the model takes {dim} inputs",
            x.ncols(),
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

/// Multiply-adds of one prediction chunk's variances at most (m²·rows; one to two
/// seconds on this machine's two cores), where the chunk is not smaller than 64 rows.
const PREDICT_WORK: usize = 1 << 34;

impl Predictor {
    /// From a model: use its stored posterior, or condition on training data.
    pub fn new(model: ModelFile, train: Option<(&DMatrix<f64>, &[f64])>) -> Result<Predictor> {
        let method = model.check()?;
        let dim = method.input_dim(&model);
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
            dim,
            posterior,
            basis,
        })
    }

    /// From a fitted model and its posterior, computed elsewhere (a distributed fit).
    pub fn from_posterior(
        method: &'static dyn Method,
        model: ModelFile,
        posterior: Posterior,
        basis: Option<DMatrix<f64>>,
    ) -> Predictor {
        Predictor {
            method,
            dim: method.input_dim(&model),
            model,
            posterior,
            basis,
        }
    }

    pub fn model(&self) -> &ModelFile {
        &self.model
    }

    /// The model's method.
    pub fn method(&self) -> &'static dyn Method {
        self.method
    }

    /// The number of inputs the model takes.
    pub fn dim(&self) -> usize {
        self.dim
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
        let m = self.posterior.m();
        // and at most PREDICT_WORK multiply-adds per chunk (the exact GP's m = n:
        // m²·rows), so that a cancelled run stops between chunks within about a second
        let rows = exec
            .chunk_rows(m)
            .min((PREDICT_WORK / (m * m).max(1)).max(64));
        for start in (0..t.max(1)).step_by(rows) {
            exec.check()?;
            let len = rows.min(t - start.min(t));
            let xm = to_model_units(&self.model, self.dim, &x.rows(start, len).into_owned())?;
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

    /// The predictive mean (t) and the full posterior covariance (t×t) of the latent
    /// function at the rows of `x`, in the target's units; its diagonal is
    /// [`Predictor::predict_with`]'s latent variance. Methods that cannot give it say so
    /// ([`Method::latent_cov`]). t×t entries: for a few thousand rows at most.
    pub fn latent_cov_with(
        &self,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(Vec<f64>, DMatrix<f64>)> {
        let mean = self.predict_with(x, exec)?.mean;
        let xm = to_model_units(&self.model, self.dim, x)?;
        let cov =
            self.method
                .latent_cov(&self.model, &self.posterior, self.basis.as_ref(), &xm, exec)?;
        let scale = self.target_scale();
        Ok((mean, cov * (scale * scale)))
    }

    /// `n` draws (n×t) of the latent function at the rows of `x` from its posterior,
    /// in the target's units (GPflow's `predict_f_samples`): mean + L·z with L the
    /// Cholesky factor of [`Predictor::latent_cov_with`] (plus the smallest jitter that
    /// factorises it, at most 1e-2 of its largest variance) and z standard normal from
    /// `seed`.
    pub fn sample_with(
        &self,
        x: &DMatrix<f64>,
        n: usize,
        seed: u64,
        exec: &Exec,
    ) -> Result<DMatrix<f64>> {
        use rand_distr::{Distribution, StandardNormal};
        let (mean, cov) = self.latent_cov_with(x, exec)?;
        let t = mean.len();
        let largest = cov.diagonal().iter().fold(0.0_f64, |a, v| a.max(*v));
        let (l, _) = crate::linalg::cholesky_jittered(
            &cov,
            crate::linalg::Jitter::Auto { scale: largest },
            exec.par,
        )?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let z = DMatrix::from_fn(t, n, |_, _| StandardNormal.sample(&mut rng));
        let draws = crate::linalg::mul(&l, false, &z, false, exec.par); // t×n
        Ok(DMatrix::from_fn(n, t, |s, i| mean[i] + draws[(i, s)]))
    }

    /// The log predictive density of each target `y` at the rows of `x` under the
    /// noisy predictive distribution (GPflow's `predict_log_density`); MNLP is minus
    /// their mean. Noisy variances below σ² count as σ², as in [`Predictor::score_with`].
    pub fn log_density_with(&self, x: &DMatrix<f64>, y: &[f64], exec: &Exec) -> Result<Vec<f64>> {
        if y.len() != x.nrows() {
            return Err(Error::input(format!(
                "{} targets for {} rows of inputs: give one target per row",
                y.len(),
                x.nrows()
            )));
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(Error::input(format!(
                "target {i} is {}: give a finite number for every row",
                y[i]
            )));
        }
        let p = self.predict_with(x, exec)?;
        let scale = self.target_scale();
        let noise = self.model.hyper.noise_variance * scale * scale;
        let var: Vec<f64> = p.var_noisy.iter().map(|v| v.max(noise)).collect();
        Ok(metrics::log_densities(y, &p.mean, &var))
    }

    /// σ0², σ² and ℓ in the data's units (the model file keeps them in model units):
    /// the variances times the target's scale squared, and the lengthscales times their
    /// input's scale where they are one per input (None where they are not: pca-spgp's
    /// are per principal component, spgp-dr has none).
    pub fn hyper_in_data_units(&self) -> DataUnitHyper {
        let s2 = self.target_scale().powi(2);
        let h = &self.model.hyper;
        let per_input = self
            .method
            .input_dims(&self.model)
            .contains(&crate::model_file::Witness::lengthscales(&self.model));
        DataUnitHyper {
            signal_variance: h.signal_variance * s2,
            noise_variance: h.noise_variance * s2,
            lengthscales: per_input.then(|| {
                h.lengthscales
                    .iter()
                    .enumerate()
                    .map(|(d, l)| {
                        l * self
                            .model
                            .standardize
                            .as_ref()
                            .map_or(1.0, |s| s.input_scale[d])
                    })
                    .collect()
            }),
        }
    }

    /// The target's standard deviation the model divides by (1: raw).
    fn target_scale(&self) -> f64 {
        self.model
            .standardize
            .as_ref()
            .map_or(1.0, |s| s.target_scale)
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

/// Everything a finished run produced. The objective and its trace are on the raw
/// target scale: a standardised run's (model units) plus n·log(target scale), so the
/// NLMLs of all runs on one data set compare.
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
    /// Validation scores during the fit (`--validation`).
    pub validation: Vec<ValidationPoint>,
    /// With `--early-stop`: the iteration whose parameters were kept.
    pub best_iteration: Option<usize>,
    /// Test MNLP of the constant predictor (training mean and variance).
    pub constant_mnlp: Option<f64>,
}

/// A seeded split of the training rows into a fit part and a validation part of
/// `fraction` of them (at least one row each).
pub fn split_validation(
    data: &Dataset,
    fraction: f64,
    seed: u64,
) -> Result<(Dataset, DMatrix<f64>, Vec<f64>)> {
    let n = data.n_train();
    let n_valid = ((n as f64 * fraction).round() as usize).clamp(1, n.saturating_sub(2));
    if n < 3 {
        return Err(Error::input(format!(
            "validation: {n} training rows are too few to hold some out"
        )));
    }
    // its own stream, so the run's other draws do not move
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5641_4c49_4441_5445);
    let mut idx: Vec<usize> = (0..n).collect();
    rand::seq::SliceRandom::shuffle(idx.as_mut_slice(), &mut rng);
    let (valid, fit) = idx.split_at(n_valid);
    let mut fit = fit.to_vec();
    fit.sort_unstable();
    let rows =
        |ix: &[usize]| DMatrix::from_fn(ix.len(), data.dim(), |i, d| data.x_train[(ix[i], d)]);
    let x_valid = rows(valid);
    let y_valid = valid.iter().map(|&i| data.y_train[i]).collect();
    let fit_data = Dataset {
        x_train: rows(&fit),
        y_train: nalgebra::DVector::from_iterator(fit.len(), fit.iter().map(|&i| data.y_train[i])),
        ..data.clone()
    };
    Ok((fit_data, x_valid, y_valid))
}

/// Scores the fit's iterates on the validation set, and with early stopping keeps the
/// best and says when to stop.
struct Validator<'a> {
    data: &'a TrainData,
    x: &'a DMatrix<f64>,
    y: &'a [f64],
    early_stop: bool,
    points: std::cell::RefCell<Vec<ValidationPoint>>,
    /// (MNLP, iteration, model) of the best iterate so far.
    best: std::cell::RefCell<Option<(f64, usize, ModelFile)>>,
}

/// Scorings without a better validation MNLP before early stopping ends the fit.
const PATIENCE: usize = 10;

impl Validator<'_> {
    fn observe(
        &self,
        iteration: usize,
        model: &ModelFile,
        ctx: &RunContext,
    ) -> crate::optim::Control {
        use crate::optim::Control;
        let scored = (|| -> Result<(f64, f64)> {
            let method = methods::get(&model.method)?;
            let (posterior, basis) = method.posterior(model, self.data, &ctx.exec)?;
            let p = Predictor {
                method,
                model: model.clone(),
                dim: method.input_dim(model),
                posterior,
                basis,
            };
            let pred = p.predict_with(self.x, &ctx.exec)?;
            let nmse = metrics::nmse(self.y, &pred.mean, model.target_mean);
            let mnlp = metrics::mnlp(self.y, &pred.mean, &pred.var_noisy);
            match nmse {
                Some(nmse) if nmse.is_finite() && mnlp.is_finite() => Ok((nmse, mnlp)),
                _ => Err(Error::numerical("the validation scores are not finite")),
            }
        })();
        // an iterate that cannot be scored (a numerical failure, or validation targets
        // that all equal the training mean) is skipped, not fatal
        let Ok((nmse, mnlp)) = scored else {
            return Control::Continue;
        };
        ctx.validation(iteration, nmse, mnlp);
        self.points.borrow_mut().push(ValidationPoint {
            iteration,
            nmse,
            mnlp,
        });
        if !self.early_stop {
            return Control::Continue;
        }
        let mut best = self.best.borrow_mut();
        if best.as_ref().is_none_or(|(b, _, _)| mnlp < *b) {
            *best = Some((mnlp, iteration, model.clone()));
        }
        let since = self
            .points
            .borrow()
            .iter()
            .rev()
            .take_while(|p| best.as_ref().is_some_and(|(_, at, _)| p.iteration > *at))
            .count();
        if since >= PATIENCE {
            Control::Finish
        } else {
            Control::Continue
        }
    }
}

/// Seed of restart k ≥ 1 (start 0 uses the run's own generator).
/// The stream ([`restart_seed`]'s k) of a collapsed fit's restart: its subset and the
/// method's draws, apart from those of `--restarts`' starts.
const COLLAPSE_STREAM: usize = usize::MAX;
/// The stream of the second start of a default fit (docs/methods.md §0.4).
const SECOND_STREAM: usize = usize::MAX - 1;

/// Of a fit and another from a second start, keep the one whose objective ended lower
/// (the evaluations of both count); true when the other is kept.
fn keep_lower(
    fitted: &mut ModelFile,
    outcome: &mut crate::optim::Outcome,
    (model, other): (ModelFile, crate::optim::Outcome),
) -> bool {
    let evaluations = outcome.evaluations + other.evaluations;
    let kept_other = other.f < outcome.f;
    if kept_other {
        *fitted = model;
        *outcome = other;
    }
    outcome.evaluations = evaluations;
    kept_other
}

fn restart_seed(seed: u64, k: usize) -> u64 {
    // splitmix64 of (seed, k): unrelated streams for neighbouring seeds and starts
    let mut z = seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Transform a data set into model units and record the transformation. The means and
/// standard deviations are computed on scaled values ([`crate::data::moments`]), so a
/// target near 1e150 standardizes as one near 1 does.
pub fn prepare(data: &Dataset, standardize: bool) -> (TrainData, f64, Option<Standardize>) {
    let y = data.y_train.as_slice();
    let target = moments(y.iter().copied());
    let mean = target.mean;
    if !standardize {
        let td = TrainData {
            x: data.x_train.clone(),
            y: y.iter().map(|v| v - mean).collect(),
        };
        return (td, mean, None);
    }
    // a constant column keeps scale 1 (the loader drops constant inputs and refuses a
    // constant target; a hand-built data set may still have one)
    let unit = |sd: f64| if sd > 0.0 { sd } else { 1.0 };
    let x = &data.x_train;
    let inputs: Vec<_> = (0..x.ncols())
        .map(|d| moments(x.column(d).iter().copied()))
        .collect();
    let center: Vec<f64> = inputs.iter().map(|m| m.mean).collect();
    let scale: Vec<f64> = inputs.iter().map(|m| unit(m.sd)).collect();
    let ys = unit(target.sd);
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

/// A result with an infinite or NaN number in it is an error saying which, never a
/// number printed or saved as if it were one.
pub(crate) fn check_finite(nlml: f64, trace: &[f64], test: Option<&TestMetrics>) -> Result<()> {
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

/// The noise floor in model units: a fraction of the training targets' variance.
pub(crate) fn noise_floor(opts: &crate::run_spec::MethodOptions, td: &TrainData) -> Option<f64> {
    Some(opts.noise_floor()).filter(|f| *f > 0.0).map(|f| {
        let n = td.y.len().max(1) as f64;
        f * td.y.iter().map(|v| v * v).sum::<f64>() / n
    })
}

/// A start: hyperparameters (`hyper`, else [`methods::start::initial_hyper`]'s), then the
/// method's own initialisation, from `td` (the training data in model units, or a sample
/// of it), with the transformation into model units and the noise floor recorded.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start_model(
    td: &TrainData,
    spec: &ValidRunSpec,
    target_mean: f64,
    standardize: Option<Standardize>,
    feature_names: &[String],
    target_name: &str,
    floor: Option<f64>,
    hyper: Option<Hyper>,
    rng: &mut ChaCha8Rng,
    ctx: &RunContext,
) -> Result<ModelFile> {
    let hyper = match hyper {
        Some(h) => h,
        None => methods::start::initial_hyper(td, spec, standardize.as_ref(), ctx, rng)?,
    };
    let mut model = spec.method().init(td, spec, hyper, ctx, rng)?;
    methods::start::set_given_inducing_inputs(
        &mut model,
        spec,
        feature_names,
        standardize.as_ref(),
    )?;
    model.target_mean = target_mean;
    model.standardize = standardize;
    model.inputs = Some(feature_names.to_vec());
    model.target = Some(target_name.to_string());
    if let Some(f) = floor {
        model.noise_floor = Some(f);
        model.hyper.noise_variance = model.hyper.noise_variance.max(2.0 * f);
    }
    methods::start::pins(td, &spec.options, model.standardize.as_ref())?
        .apply_checked(&mut model)?;
    Ok(model)
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
    let opts = &spec.options;
    let held;
    let (data, valid) = match opts.validation {
        Some(f) => {
            let (fit_data, x, y) = split_validation(data, f, spec.seed)?;
            held = fit_data;
            (&held, Some((x, y)))
        }
        None => (data, None),
    };
    // the loader refuses such a target in a file; the rows a validation split leaves
    // (or a data set built in code) are checked here, before any work
    if let Some(why) = crate::data::moments::target_problem(data.y_train.as_slice()) {
        let part = match opts.validation {
            Some(f) => format!(
                " in the {} rows left to fit after --validation {f} held out its rows",
                data.n_train()
            ),
            None => String::new(),
        };
        return Err(Error::input(format!(
            "the target '{}'{part} {why}",
            data.target_name
        )));
    }
    let (td, target_mean, standardize) = prepare(data, spec.standardize);
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let td = match opts.subset {
        Some(n) => methods::exact::subset(&td, n, &mut rng),
        None => td,
    };
    let offset = raw_scale_offset(standardize.as_ref(), td.y.len());
    ctx.set_offset(offset);
    ctx.set_positive(spec.options.positive());
    let floor = noise_floor(opts, &td);
    // the blocks --fix holds, at one value for every start (the subset fits' included)
    let pins = methods::start::pins(&td, opts, standardize.as_ref())?;
    let start_from =
        |hyper: Option<Hyper>, rng: &mut ChaCha8Rng, ctx: &RunContext| -> Result<ModelFile> {
            start_model(
                &td,
                spec,
                target_mean,
                standardize.clone(),
                &data.feature_names,
                &data.target_name,
                floor,
                hyper,
                rng,
                ctx,
            )
        };
    let start = |rng: &mut ChaCha8Rng, ctx: &RunContext| start_from(None, rng, ctx);
    let validator = valid.as_ref().map(|(x, y)| Validator {
        data: &td,
        x,
        y,
        early_stop: opts.early_stop,
        points: Default::default(),
        best: Default::default(),
    });
    let observe = |iteration: usize, model: &ModelFile| match &validator {
        Some(v) => v.observe(iteration, model, ctx),
        None => crate::optim::Control::Continue,
    };
    let every = (spec.iters / 50).max(5);
    let watched = ctx.observed(&observe, every);
    let fit_ctx = if validator.is_some() { &watched } else { ctx };
    let cancelled = |outcome: crate::optim::Outcome| {
        // How far it got stays in the cancelled result (iterations, trace, time).
        Error::CancelledAfter(Box::new(crate::error::Partial {
            iterations: outcome.iterations,
            trace: outcome.trace.iter().map(|v| v + offset).collect(),
            seconds: started.elapsed().as_secs_f64(),
        }))
    };
    // σ0², ℓ, σ² of a full GP fitted on a subset (the best of six starts; docs/methods.md
    // §0.4), its draws from `rng`: where the second start and the collapse restart begin.
    let hyper_from_subset_starts = |rng: &mut ChaCha8Rng| {
        ctx.enter(Phase::SubsetInit);
        methods::exact::hyper_from_subset_starts(
            &td,
            td.y.len().min(methods::start::COLLAPSE_SUBSET),
            opts.kernel.unwrap_or_default(),
            methods::start::SUBSET_ITERS,
            &pins,
            ctx,
            rng,
        )
    };
    let mut second_rng = ChaCha8Rng::seed_from_u64(restart_seed(spec.seed, SECOND_STREAM));
    let second = if spec.runs_second_start() {
        Some(hyper_from_subset_starts(&mut second_rng)?)
    } else {
        None
    };
    let (mut fitted, mut outcome) = match opts.restarts.unwrap_or(1) {
        k if k > 1 => {
            // K seeded starts, a short fit each; the best (by its objective at the end
            // of its short fit) continues for the rest of the budget: a tenth of the
            // iterations, or with --epochs a tenth of the epochs (at least one)
            let short = (spec.iters / 10).max(10).min(spec.iters);
            let (short_spec, rest_spec) = match spec.options.epochs {
                Some(e) => {
                    let short_e = (e / 10).max(1).min(e);
                    (spec.with_epochs(short_e), spec.with_epochs(e - short_e))
                }
                None => (
                    spec.with_iters(short),
                    spec.with_iters(spec.iters.saturating_sub(short)),
                ),
            };
            let mut best: Option<(ModelFile, crate::optim::Outcome)> = None;
            for r in 0..k {
                let mut rng_r = if r == 0 {
                    rng.clone()
                } else {
                    ChaCha8Rng::seed_from_u64(restart_seed(spec.seed, r))
                };
                let rctx = ctx.restart(r);
                rctx.enter(Phase::Restart { start: r });
                let model = start(&mut rng_r, &rctx)?;
                let (m, out) = method.fit(model, &td, &short_spec, &rctx)?;
                if out.stop == Stop::Cancelled {
                    return Err(cancelled(out));
                }
                if best.as_ref().is_none_or(|(_, b)| out.f < b.f) {
                    best = Some((m, out));
                }
            }
            let (model, first) = best.ok_or_else(|| Error::input("no restart ran"))?;
            fit_ctx.enter(Phase::Fit { stage: 0 });
            let (m, more) = method.fit(model, &td, &rest_spec, fit_ctx)?;
            let joined = crate::optim::Outcome {
                iterations: first.iterations + more.iterations,
                evaluations: first.evaluations + more.evaluations,
                trace: first
                    .trace
                    .iter()
                    .chain(more.trace.iter().skip(1))
                    .copied()
                    .collect(),
                ..more
            };
            (m, joined)
        }
        _ => {
            let model = start(&mut rng, ctx)?;
            fit_ctx.enter(Phase::Fit { stage: 0 });
            method.fit(model, &td, spec, fit_ctx)?
        }
    };
    if outcome.stop == Stop::Cancelled {
        return Err(cancelled(outcome));
    }
    // By default a second fit starts from a subset fit and the lower objective is kept:
    // from the §0.4 start alone an optimiser can settle in a poor basin (a relevant input
    // switched off, or the constant predictor) that the fitted start avoids, and the other
    // way round (docs/results/starts.md). Its draws come from a stream of their own, so
    // the first fit is the one-start fit bit for bit; its start comes first (progress
    // reads subset init, fit, second start).
    let mut second_start = None;
    let mut collapse_restart = None;
    if let Some((hyper, subset_start)) = second {
        let mut rng_s = second_rng;
        let model = start_from(Some(hyper), &mut rng_s, ctx)?;
        let sctx = ctx.second_start();
        sctx.enter(Phase::SecondStart);
        let (m, out) = method.fit(model, &td, spec, &sctx)?;
        if out.stop == Stop::Cancelled {
            return Err(cancelled(out));
        }
        let (first_nlml, second_nlml) = (outcome.f + offset, out.f + offset);
        second_start = Some(SecondStart {
            first_nlml,
            second_nlml,
            subset_start,
            kept_second: keep_lower(&mut fitted, &mut outcome, (m, out)),
        });
    } else if fitted.hyper.collapsed().is_some() && !opts.no_collapse_restart && validator.is_none()
    {
        // A fit from one start that ends as the constant predictor runs again from a
        // subset fit; the end with the better objective is kept.
        let mut rng_c = ChaCha8Rng::seed_from_u64(restart_seed(spec.seed, COLLAPSE_STREAM));
        let (hyper, subset_start) = hyper_from_subset_starts(&mut rng_c)?;
        let model = start_from(Some(hyper), &mut rng_c, ctx)?;
        fit_ctx.enter(Phase::Fit { stage: 0 });
        let (m, out) = method.fit(model, &td, spec, fit_ctx)?;
        if out.stop == Stop::Cancelled {
            return Err(cancelled(out));
        }
        let (collapsed_nlml, collapsed_iterations) = (outcome.f + offset, outcome.iterations);
        collapse_restart = Some(CollapseRestart {
            collapsed_nlml,
            collapsed_iterations,
            subset_start: Some(subset_start),
            kept_restart: keep_lower(&mut fitted, &mut outcome, (m, out)),
        });
    }
    let (validation, best_iteration) = match validator {
        Some(v) => {
            let best = v.best.into_inner();
            let at = best.as_ref().map(|(_, it, _)| *it);
            if let Some((_, _, model)) = best {
                fitted = model;
            }
            (v.points.into_inner(), at)
        }
        None => (Vec::new(), None),
    };
    ctx.enter(Phase::Posterior);
    let exec = &ctx.exec;
    let final_eval = method.objective(&fitted, &td, exec)?;
    let nlml = final_eval.nlml + offset;
    let (posterior, basis) = method.posterior(&fitted, &td, exec)?;
    let train_seconds = started.elapsed().as_secs_f64();
    fitted.posterior = method.stores_posterior().then(|| posterior.clone());
    fitted.fit = Some(FitInfo {
        nlml,
        jitter_used: final_eval.jitter,
        iterations: outcome.iterations,
        train_seconds,
        n_train: td.y.len(),
        collapse_restart,
        second_start,
    });
    let predictor = Predictor {
        method,
        dim: method.input_dim(&fitted),
        model: fitted.clone(),
        posterior,
        basis,
    };
    let (test, constant_mnlp) = match (&data.x_test, &data.y_test) {
        (Some(x), Some(y)) => {
            ctx.enter(Phase::Scoring);
            let y = y.as_slice();
            let train_y = data.y_train.as_slice();
            let n = train_y.len().max(1) as f64;
            // a scaled sum: bit for bit the plain one where that fits in f64
            let (q, scale) =
                crate::data::moments::sum_of_squares(train_y.iter().map(|v| v - target_mean));
            let var = q / n * scale * scale;
            let constant = metrics::constant_mnlp(y, target_mean, var);
            (
                Some(predictor.score_with(x, y, exec)?),
                (var > 0.0 && constant.is_finite()).then_some(constant),
            )
        }
        _ => (None, None),
    };
    check_finite(nlml, &outcome.trace, test.as_ref())?;
    Ok(FitResult {
        model: fitted,
        predictor,
        trace: outcome.trace.iter().map(|v| v + offset).collect(),
        iterations: outcome.iterations,
        evaluations: outcome.evaluations,
        train_seconds,
        nlml,
        jitter: final_eval.jitter,
        stop: outcome.stop,
        test,
        validation,
        best_iteration,
        constant_mnlp,
    })
}
