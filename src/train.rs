//! One training run from start to finish, shared by `sgpw fit`, sessions and the app:
//! check the spec, transform the data into model units, initialise, optimise,
//! compute the posterior once, and score the test set.

use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::likelihood::Posterior;
use crate::methods::{self, Method};
use crate::metrics;
use crate::model_file::{FitInfo, ModelFile, Standardize};
use crate::optim::{Control, IterInfo, Stop};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Training data in model units: inputs standardised if asked, targets centred
/// (and scaled if standardised).
#[derive(Clone, Debug)]
pub struct TrainData {
    pub x: DMatrix<f64>,
    pub y: Vec<f64>,
}

/// Options that apply to every method (the rest are read by some methods only).
pub const GENERAL_OPTIONS: &[&str] = &["subset", "init_lengthscales_from_subset"];

/// Options some methods read. Keys a method does not read are rejected by
/// [`RunSpec::check`], so a typo never passes silently.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodOptions {
    /// Any method: fit on a random subset of this many training points
    /// (`full --subset N` is the PSDS paper's random active set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subset: Option<usize>,
    /// Any method: before training, fit a full GP on this many random training points
    /// and start from its σ0², ℓ and σ².
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_lengthscales_from_subset: Option<usize>,
    /// `ssgp`: how to initialise the spectral points ("psds" or "random").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<String>,
    /// `ssgp`: a staged schedule such as ["hyper", "points"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<String>>,
    /// `tfifgp`: where the feature centres start ("zero" or "subset").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centres: Option<String>,
}

impl MethodOptions {
    /// Names of the options that are set.
    pub fn set_keys(&self) -> Vec<&'static str> {
        let mut keys = Vec::new();
        if self.subset.is_some() {
            keys.push("subset");
        }
        if self.init_lengthscales_from_subset.is_some() {
            keys.push("init_lengthscales_from_subset");
        }
        if self.init.is_some() {
            keys.push("init");
        }
        if self.stages.is_some() {
            keys.push("stages");
        }
        if self.centres.is_some() {
            keys.push("centres");
        }
        keys
    }
}

/// One run: method × m × seed on a data set.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    pub method: String,
    pub m: usize,
    pub seed: u64,
    pub iters: usize,
    pub standardize: bool,
    pub options: MethodOptions,
}

impl RunSpec {
    /// Validate against the method and the data (before any worker starts).
    pub fn check(&self, n_train: usize) -> Result<&'static dyn Method> {
        let method = methods::get(&self.method)?;
        check_subset("subset", self.options.subset, n_train)?;
        let n_train = self.options.subset.unwrap_or(n_train);
        if self.m == 0 {
            return Err(Error::input("m must be at least 1"));
        }
        if method.m_bounded_by_n() && self.m > n_train {
            return Err(Error::input(format!(
                "m = {} is larger than the training set ({n_train} points); choose m ≤ {n_train}",
                self.m
            )));
        }
        for key in self.options.set_keys() {
            if !GENERAL_OPTIONS.contains(&key) && !method.options().contains(&key) {
                return Err(Error::input(format!(
                    "option '{key}' does not apply to method '{}'",
                    method.name()
                )));
            }
        }
        check_subset(
            "init_lengthscales_from_subset",
            self.options.init_lengthscales_from_subset,
            n_train,
        )?;
        Ok(method)
    }
}

/// A subset size must leave at least two points and fit in the training set.
fn check_subset(name: &str, size: Option<usize>, n_train: usize) -> Result<()> {
    match size {
        Some(s) if s < 2 || s > n_train => Err(Error::input(format!(
            "{name} = {s} must be between 2 and the training size {n_train}"
        ))),
        _ => Ok(()),
    }
}

/// Test-set scores.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestMetrics {
    pub nmse: f64,
    pub mnlp: f64,
}

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
            "the inputs have {} columns but the model has {} lengthscales",
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
        let method = methods::get(&model.method)?;
        check_model(method, &model)?;
        let (posterior, basis) = match (&model.posterior, train) {
            (Some(p), _) if method.stores_posterior() => (p.clone(), None),
            (_, Some((x, y))) => method.posterior(&model, &model_data(&model, x, y)?)?,
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

    pub fn predict(&self, x: &DMatrix<f64>) -> Result<Prediction> {
        let xm = model_inputs(&self.model, x)?;
        let (kus, prior) = self.method.cross(&self.model, self.basis.as_ref(), &xm)?;
        let (mean, var) = self.posterior.predict(&kus, &prior);
        let scale = self
            .model
            .standardize
            .as_ref()
            .map_or(1.0, |s| s.target_scale);
        let s2 = self.model.hyper.noise_variance;
        Ok(Prediction {
            mean: mean
                .iter()
                .map(|m| m * scale + self.model.target_mean)
                .collect(),
            var_latent: var.iter().map(|v| v * scale * scale).collect(),
            var_noisy: var.iter().map(|v| (v + s2) * scale * scale).collect(),
        })
    }

    /// NMSE and MNLP on a test set (original units; ȳ = the training mean).
    pub fn score(&self, x: &DMatrix<f64>, y: &[f64]) -> Result<TestMetrics> {
        let p = self.predict(x)?;
        Ok(TestMetrics {
            nmse: metrics::nmse(y, &p.mean, self.model.target_mean),
            mnlp: metrics::mnlp(y, &p.mean, &p.var_noisy),
        })
    }
}

pub fn check_model(method: &dyn Method, model: &ModelFile) -> Result<()> {
    model.check_hyper()?;
    if let Some(s) = &model.standardize {
        let d = model.dim();
        if s.input_center.len() != d || s.input_scale.len() != d {
            return Err(Error::input(format!(
                "[standardize] needs {d} input_center and input_scale values"
            )));
        }
    }
    method.check(model)
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

/// Run one fit. `on_iter` sees every iteration and may cancel (→ `Error::Cancelled`).
pub fn fit(
    data: &Dataset,
    spec: &RunSpec,
    on_iter: &mut dyn FnMut(&IterInfo) -> Control,
) -> Result<FitResult> {
    let method = spec.check(data.n_train())?;
    let started = Instant::now();
    let (td, target_mean, standardize) = prepare(data, spec.standardize);
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let td = match spec.options.subset {
        Some(n) => methods::exact::subset(&td, n, &mut rng),
        None => td,
    };
    let mut model = method.init(&td, spec, &mut rng)?;
    model.target_mean = target_mean;
    model.standardize = standardize;
    model.inputs = Some(data.feature_names.clone());
    let (mut fitted, outcome) = method.fit(model, &td, spec, on_iter)?;
    if outcome.stop == Stop::Cancelled {
        return Err(Error::Cancelled);
    }
    let final_eval = method.objective(&fitted, &td)?;
    let (posterior, basis) = method.posterior(&fitted, &td)?;
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
        (Some(x), Some(y)) => Some(predictor.score(x, y.as_slice())?),
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
