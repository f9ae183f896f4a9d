//! The `Method` trait and the registry (name → method). Nothing else in the program
//! lists methods: the CLI, sessions, jobs and the terminal app all ask [`registry`].

pub mod exact;
pub mod fitc;
pub mod interdomain;
pub mod online;
pub mod spectrum;

use crate::error::{Error, Result};
use crate::likelihood::Posterior;
use crate::model_file::ModelFile;
use crate::optim::{self, Control, IterInfo};
use crate::train::{RunSpec, TrainData};
use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;

/// NLML and its gradient with respect to the method's packed parameter vector.
#[derive(Clone, Debug)]
pub struct Objective {
    pub nlml: f64,
    pub grad: Vec<f64>,
    /// Absolute jitter this evaluation needed.
    pub jitter: f64,
}

/// A method: its parameters, initialisation, objective and predictions.
///
/// A method maps its parameters to the likelihood core's (Kuf, Kuu, kdiag) and back;
/// the optimiser, jobs and app never know which method runs.
pub trait Method: Send + Sync {
    /// Registry name (`--method`).
    fn name(&self) -> &'static str;
    /// Other accepted names.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// One line for `--help` and the app.
    fn summary(&self) -> &'static str;
    /// What `m` counts for this method (shown next to every result).
    fn m_meaning(&self) -> &'static str {
        "inducing points"
    }
    /// Keys of `RunSpec::options` this method reads; others are rejected.
    fn options(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the method has a size m at all (the exact GP has not).
    fn uses_m(&self) -> bool {
        true
    }
    /// Whether `m` must be at most the number of training points.
    fn m_bounded_by_n(&self) -> bool {
        true
    }

    /// Initial parameters (METHODS.md §0 defaults unless the method says otherwise).
    fn init(&self, data: &TrainData, spec: &RunSpec, rng: &mut ChaCha8Rng) -> Result<ModelFile>;
    /// Check a model's tables (shapes, signs) for this method.
    fn check(&self, model: &ModelFile) -> Result<()>;
    /// The free parameters as one vector (positive ones as logarithms).
    fn pack(&self, model: &ModelFile) -> Vec<f64>;
    /// Write a packed vector back into a model.
    fn unpack(&self, theta: &[f64], model: &mut ModelFile);
    /// NLML and gradient in `pack` order.
    fn objective(&self, model: &ModelFile, data: &TrainData) -> Result<Objective>;
    /// The NLML alone (defaults to the objective).
    fn nlml(&self, model: &ModelFile, data: &TrainData) -> Result<f64> {
        Ok(self.objective(model, data)?.nlml)
    }
    /// The posterior needed for prediction, and (exact GP only) the inputs it is
    /// expressed in.
    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)>;
    /// K(features, X*) (m×t) and the prior variances k(x*,x*) at the model's inputs.
    /// `basis` is the exact GP's training inputs; low-rank methods ignore it.
    fn cross(
        &self,
        model: &ModelFile,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
    ) -> Result<(DMatrix<f64>, Vec<f64>)>;
    /// Whether the posterior can be stored in a model file (not the exact GP's n×n one).
    fn stores_posterior(&self) -> bool {
        true
    }

    /// Fit: minimise the NLML from `model`. Methods with staged schedules override it.
    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &RunSpec,
        on_iter: &mut dyn FnMut(&IterInfo) -> Control,
    ) -> Result<(ModelFile, optim::Outcome)> {
        fit_all(self, model, data, spec.iters, on_iter)
    }
}

/// Minimise over every packed parameter with L-BFGS.
pub fn fit_all<M: Method + ?Sized>(
    method: &M,
    model: ModelFile,
    data: &TrainData,
    iters: usize,
    on_iter: &mut dyn FnMut(&IterInfo) -> Control,
) -> Result<(ModelFile, optim::Outcome)> {
    let theta0 = method.pack(&model);
    let mut scratch = model.clone();
    let objective = |theta: &[f64]| {
        method.unpack(theta, &mut scratch);
        method.objective(&scratch, data).map(|o| (o.nlml, o.grad))
    };
    let options = optim::Options {
        max_iters: iters,
        ..Default::default()
    };
    let outcome = optim::minimize(objective, &theta0, &options, on_iter)?;
    let mut fitted = model;
    method.unpack(&outcome.x, &mut fitted);
    Ok((fitted, outcome))
}

/// Every method, in the order they are listed to users.
pub fn registry() -> &'static [&'static dyn Method] {
    &[
        &exact::Exact,
        &fitc::Fitc,
        &interdomain::FIFGP,
        &interdomain::TFIFGP,
        &interdomain::SMGP,
        &spectrum::Psds,
        &spectrum::Ssgp,
    ]
}

/// Look a method up by name or alias.
pub fn get(name: &str) -> Result<&'static dyn Method> {
    let key = name.trim().to_ascii_lowercase();
    registry()
        .iter()
        .copied()
        .find(|m| m.name() == key || m.aliases().contains(&key.as_str()))
        .ok_or_else(|| {
            let names: Vec<&str> = registry().iter().map(|m| m.name()).collect();
            Error::input(format!(
                "unknown method '{name}'; choose one of: {}",
                names.join(", ")
            ))
        })
}

/// The hyperparameters a run starts from: those of a full GP fitted on a random
/// subset when `init_lengthscales_from_subset` is set (the inter-domain and PSDS
/// papers' choice on pumadyn-32nm), else the defaults of METHODS.md §0. Methods draw
/// their features (frequencies, widths) from these, so the subset fit comes first.
pub fn initial_hyper(
    data: &TrainData,
    spec: &RunSpec,
    rng: &mut ChaCha8Rng,
) -> Result<crate::model_file::Hyper> {
    match spec.options.init_lengthscales_from_subset {
        Some(n) => exact::hyper_from_subset(data, n, spec.iters.min(200), rng),
        None => Ok(default_hyper(data)),
    }
}

/// Default hyperparameters of METHODS.md §0: σ0² = mean(y²) (y centred),
/// σ² = σ0²/4, ℓ_d = half the range of input d.
pub fn default_hyper(data: &TrainData) -> crate::model_file::Hyper {
    let n = data.y.len().max(1) as f64;
    let sf2 = (data.y.iter().map(|v| v * v).sum::<f64>() / n).max(1e-12);
    let lengthscales = (0..data.x.ncols())
        .map(|d| {
            let c = data.x.column(d);
            let half = 0.5 * (c.max() - c.min());
            if half > 0.0 { half } else { 1.0 }
        })
        .collect();
    crate::model_file::Hyper {
        signal_variance: sf2,
        lengthscales,
        noise_variance: sf2 / 4.0,
    }
}

/// Pack σ0², ℓ, σ² as logarithms (the shared head of most parameter vectors).
pub fn pack_hyper(model: &ModelFile, out: &mut Vec<f64>) {
    out.push(model.hyper.signal_variance.ln());
    out.extend(model.hyper.lengthscales.iter().map(|l| l.ln()));
    out.push(model.hyper.noise_variance.ln());
}

/// Inverse of [`pack_hyper`]; returns the number of entries read.
pub fn unpack_hyper(theta: &[f64], model: &mut ModelFile) -> usize {
    let d = model.hyper.lengthscales.len();
    model.hyper.signal_variance = theta[0].exp();
    for (l, t) in model.hyper.lengthscales.iter_mut().zip(&theta[1..=d]) {
        *l = t.exp();
    }
    model.hyper.noise_variance = theta[d + 1].exp();
    d + 2
}

/// σ0², ℓ, σ² as logarithms followed by a matrix of locations (pseudo-inputs,
/// spectral points), column-major: the parameter vector of fitc and ssgp.
pub fn pack_hyper_and(model: &ModelFile, points: Option<DMatrix<f64>>) -> Vec<f64> {
    let mut theta = Vec::new();
    pack_hyper(model, &mut theta);
    if let Some(p) = points {
        theta.extend_from_slice(p.as_slice());
    }
    theta
}

/// Inverse of [`pack_hyper_and`]: writes the hyperparameters into `model` and
/// returns the matrix (rows × D) that follows them.
pub fn unpack_hyper_and(theta: &[f64], model: &mut ModelFile) -> DMatrix<f64> {
    let used = unpack_hyper(theta, model);
    let d = model.dim().max(1);
    let rows = (theta.len() - used) / d;
    DMatrix::from_column_slice(rows, d, &theta[used..used + rows * d])
}

/// Pick `m` distinct rows of `x` at random (inducing-point initialisation).
pub fn random_rows(x: &DMatrix<f64>, m: usize, rng: &mut ChaCha8Rng) -> DMatrix<f64> {
    let idx = rand::seq::index::sample(rng, x.nrows(), m.min(x.nrows()));
    DMatrix::from_fn(idx.len(), x.ncols(), |i, d| x[(idx.index(i), d)])
}
