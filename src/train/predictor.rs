//! A fitted model with its posterior computed once ([`Predictor`]): predictions in the
//! target's units, their covariance and draws, log densities and test scores; and the
//! conversion of inputs and targets into a model's units.

use crate::collapsed::Posterior;
use crate::data::TrainData;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::methods::Method;
use crate::metrics::{self, TestMetrics};
use crate::model_file::ModelFile;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

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
    /// σ² of the Gaussian likelihood; None for another likelihood, which has none.
    pub noise_variance: Option<f64>,
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
pub(super) fn to_model_units(
    model: &ModelFile,
    dim: usize,
    x: &DMatrix<f64>,
) -> Result<DMatrix<f64>> {
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
        log_exposure: None,
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

    /// The exact GP's training inputs in model units (what its posterior is over).
    pub(super) fn basis(&self) -> Option<&DMatrix<f64>> {
        self.basis.as_ref()
    }

    /// The rows predicted at once: K(features, X*) holds at most `exec.chunk_entries`
    /// entries and a chunk's variances at most [`PREDICT_WORK`] multiply-adds (the
    /// exact GP's m = n: m²·rows), so that a cancelled run stops between chunks
    /// within about a second.
    pub(super) fn chunk_rows(&self, exec: &Exec) -> usize {
        let m = self.posterior.m();
        exec.chunk_rows(m)
            .min((PREDICT_WORK / (m * m).max(1)).max(64))
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
        // the Gaussian likelihood's σ²; another likelihood has no Gaussian noise, so its
        // var_noisy is the latent variance (what it predicts for y: `observed`)
        let s2 = self.model.gaussian_noise()?.unwrap_or(0.0);
        let t = x.nrows();
        let mut out = Prediction {
            mean: Vec::with_capacity(t),
            var_latent: Vec::with_capacity(t),
            var_noisy: Vec::with_capacity(t),
        };
        let rows = self.chunk_rows(exec);
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
    /// A model with another likelihood gives its own predictive density
    /// ([`Likelihood::log_predictive_density`], in the target's units), the terms of the
    /// MNLP [`Predictor::score_with`] reports.
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
        let Some(s2) = self.model.gaussian_noise()? else {
            let (lik, quad, y, mean, var) = self.in_model_units(y, None, &p)?;
            return Ok((0..y.len())
                .map(|i| lik.log_predictive_density(y[i], mean[i], var[i].max(0.0), &quad))
                .map(|lpd| lpd - scale.ln())
                .collect());
        };
        let noise = s2 * scale * scale;
        let var: Vec<f64> = p.var_noisy.iter().map(|v| v.max(noise)).collect();
        Ok(metrics::log_densities(y, &p.mean, &var))
    }

    /// σ0², σ² (the Gaussian likelihood's) and ℓ in the data's units (the model file
    /// keeps them in model units):
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
            // the likelihood's σ², where it is Gaussian noise
            noise_variance: self.model.gaussian_noise().ok().flatten().map(|v| v * s2),
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
        self.score_exposed(x, y, None, exec)
    }

    /// [`Predictor::score_with`] for a count model whose rows have an exposure E
    /// (`--exposure`): MNLP and RMSE of the counts y ~ Poisson(E·exp f). A model fitted
    /// with an exposure and scored without one scores the rate per unit of exposure.
    pub fn score_exposed(
        &self,
        x: &DMatrix<f64>,
        y: &[f64],
        exposure: Option<&[f64]>,
        exec: &Exec,
    ) -> Result<TestMetrics> {
        let p = self.predict_with(x, exec)?;
        if self.model.likelihood.is_some() {
            let (lik, quad, y_model, mean, var) = self.in_model_units(y, exposure, &p)?;
            let units = (self.model.target_mean, self.target_scale());
            return Ok(metrics::likelihood_scores(
                &*lik, &quad, &y_model, &mean, &var, units,
            ));
        }
        if exposure.is_some() {
            return Err(Error::input(
                "an exposure (--exposure) scales the rate of a poisson model; this model \
                 is gaussian",
            ));
        }
        let scale = self
            .model
            .standardize
            .as_ref()
            .map_or(1.0, |s| s.target_scale);
        let noise = self.model.collapsed_noise()? * scale * scale;
        Ok(TestMetrics {
            nmse: metrics::nmse(y, &p.mean, self.model.target_mean),
            mnlp: metrics::mnlp_clamped(y, &p.mean, &p.var_noisy, noise),
            mse: metrics::mse(y, &p.mean),
            negative_var_latent: p.var_latent.iter().filter(|v| **v < 0.0).count(),
            negative_var_noisy: p.var_noisy.iter().filter(|v| **v < 0.0).count(),
            error_rate: None,
            auc: None,
            rmse: None,
        })
    }

    /// What [`Predictor::score_with`] and [`Predictor::log_density_with`] score a
    /// likelihood other than the Gaussian with: the likelihood and its quadrature rule,
    /// the test targets in model units (a binary target's labels as the classes the
    /// model learned), each checked for the likelihood, an error naming the first test
    /// row it cannot take, and the latent mean (shifted by each row's log exposure) and
    /// variance in model units.
    #[allow(clippy::type_complexity)] // the five things both scores read
    fn in_model_units(
        &self,
        y: &[f64],
        exposure: Option<&[f64]>,
        p: &Prediction,
    ) -> Result<(
        Box<dyn crate::likelihoods::Likelihood>,
        crate::likelihoods::GaussHermite,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
    )> {
        let table = self.model.likelihood.as_ref().ok_or_else(|| {
            Error::input("internal: a Gaussian model's test targets are scored in its units")
        })?;
        let bad = |row: usize, why: String| {
            Error::input(format!(
                "the test target at test row {}: {why} ({} likelihood)",
                row + 1,
                table.name
            ))
        };
        let lik = self.model.likelihood()?;
        let quad = table.quadrature().map_err(Error::input)?;
        let (tm, scale) = (self.model.target_mean, self.target_scale());
        let y_model: Vec<f64> = match table.binary_labels() {
            Some(labels) => {
                if let Some(row) = y.iter().position(|v| !labels.labels.contains(v)) {
                    return Err(bad(
                        row,
                        format!(
                            "the label {} is neither of the training labels {} and {}",
                            y[row], labels.labels[0], labels.labels[1]
                        ),
                    ));
                }
                labels.to_classes(y)
            }
            None => y.iter().map(|v| (v - tm) / scale).collect(),
        };
        lik.check_targets(&y_model)
            .map_err(|b| bad(b.row, b.reason))?;
        // the latent f in model units, shifted by each row's log exposure: the count's
        // rate is E·exp f
        let offsets = table.log_offsets(exposure, y.len()).map_err(Error::input)?;
        let mean: Vec<f64> = p
            .mean
            .iter()
            .zip(&offsets)
            .map(|(m, o)| (m - tm) / scale + o)
            .collect();
        let var: Vec<f64> = p.var_latent.iter().map(|v| v / (scale * scale)).collect();
        Ok((lik, quad, y_model, mean, var))
    }
}
