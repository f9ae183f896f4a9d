//! Observation models p(y | f): how a target y depends on the latent function value f
//! at its input (docs/methods.md, "Likelihoods"). The collapsed core (src/collapsed/)
//! can take only Gaussian noise, the σ² of [`Likelihood::gaussian_noise`]; a variational
//! method takes any likelihood through the expected log-density under q(f) = N(μ, v)
//! and its derivatives in μ and v ([`Likelihood::expected_log_density`]) — by the
//! likelihood's closed form where one exists, by Gauss–Hermite quadrature
//! ([`quadrature`]) otherwise, as GPflow does.
//!
//! A likelihood's own parameters (Gaussian: the noise variance; Student-t: scale and
//! degrees of freedom) are positive and named; derivatives are with respect to their
//! logarithms, in the order of [`Likelihood::param_names`].
//!
//! Adding a likelihood is one file here implementing [`Likelihood`] and one line in
//! [`LikelihoodKind`] (docs/architecture.md, "How to add a likelihood").

mod bernoulli;
mod gaussian;
pub mod model_table;
pub mod normal;
pub mod poisson;
pub mod quadrature;
pub mod quantile;
mod student_t;

pub use bernoulli::{Bernoulli, BinaryLabels, ClassNames, Link};
pub use gaussian::Gaussian;
pub use model_table::{
    CodeLikelihood, DEFAULT_POINTS as DEFAULT_QUADRATURE_POINTS, LikelihoodTable, keeps_targets,
    target_problem, two_valued_regression_note,
};
pub use poisson::{Poisson, log_exposures};
pub use quadrature::GaussHermite;
pub use student_t::StudentT;

use crate::error::Error;
use serde::{Deserialize, Serialize};

/// The likelihoods sgpw has, by name.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum LikelihoodKind {
    /// y = f + ε, ε ~ N(0, σ²): regression (the default; the only one the collapsed
    /// methods take).
    #[default]
    Gaussian,
    /// y = f + ε with ε Student-t (scale, degrees of freedom): regression robust to
    /// outliers.
    #[value(name = "studentt")]
    StudentT,
    /// y ∈ {0, 1}, p(y = 1 | f) = Φ(f) (probit) or σ(f) (logit): binary classification.
    Bernoulli,
    /// y ∈ {0, 1, 2, …}, Poisson with rate exp(f): counts.
    Poisson,
}

impl LikelihoodKind {
    pub const ALL: [LikelihoodKind; 4] = [
        LikelihoodKind::Gaussian,
        LikelihoodKind::StudentT,
        LikelihoodKind::Bernoulli,
        LikelihoodKind::Poisson,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LikelihoodKind::Gaussian => "gaussian",
            LikelihoodKind::StudentT => "studentt",
            LikelihoodKind::Bernoulli => "bernoulli",
            LikelihoodKind::Poisson => "poisson",
        }
    }

    /// The likelihood with its default parameters.
    pub fn default_likelihood(self) -> Box<dyn Likelihood> {
        match self {
            LikelihoodKind::Gaussian => Box::new(Gaussian::new(1.0)),
            LikelihoodKind::StudentT => Box::new(StudentT::default()),
            LikelihoodKind::Bernoulli => Box::new(Bernoulli::default()),
            LikelihoodKind::Poisson => Box::new(Poisson),
        }
    }
}

impl std::fmt::Display for LikelihoodKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LikelihoodKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        LikelihoodKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = LikelihoodKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown likelihood '{s}'; one of: {}", names.join(", "))
            })
    }
}

/// log p(y | f) at one f and its first two derivatives in f.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pointwise {
    pub value: f64,
    pub d_f: f64,
    pub d2_f: f64,
}

/// `E_q[log p(y | f)]` under q(f) = N(mean, var) and its derivatives in mean and var.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Expectation {
    pub value: f64,
    pub d_mean: f64,
    pub d_var: f64,
}

/// The first target a likelihood cannot take: its row (0-based) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct BadTarget {
    pub row: usize,
    pub reason: String,
}

/// The check of a likelihood whose targets may be any real number: the first that is
/// not finite.
pub fn finite_targets(y: &[f64]) -> Result<(), BadTarget> {
    match y.iter().position(|v| !v.is_finite()) {
        Some(row) => Err(BadTarget {
            row,
            reason: format!("the target {} is not a finite number", y[row]),
        }),
        None => Ok(()),
    }
}

/// An observation model. Object safe: a model holds a `Box<dyn Likelihood>`.
pub trait Likelihood: Send + Sync + std::fmt::Debug {
    fn name(&self) -> &'static str;

    /// Its own parameters' names (each positive, fitted as its logarithm).
    fn param_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its parameters' values, in [`param_names`](Likelihood::param_names)' order.
    fn params(&self) -> Vec<f64> {
        Vec::new()
    }

    /// Sets its parameters from values in that order.
    fn set_params(&mut self, _values: &[f64]) {}

    /// The noise variance σ² when y = f + N(0, σ²): what the collapsed core needs.
    /// None for every other likelihood (the collapsed methods refuse them).
    fn gaussian_noise(&self) -> Option<f64> {
        None
    }

    /// [`gaussian_noise`](Likelihood::gaussian_noise) for a computation that needs it
    /// (the collapsed core, the exact GP, Nyström, the greedy selection, svgp's closed
    /// form): σ², or the refusal naming this likelihood (GPflow's `GPR` likewise takes a
    /// `Gaussian` likelihood only). What every such computation reads instead of a
    /// model's `noise_variance`.
    fn collapsed_noise(&self) -> crate::error::Result<f64> {
        self.gaussian_noise().ok_or_else(|| {
            Error::input(format!(
                "the {} likelihood has no Gaussian noise variance σ²: this computation is \
                 the Gaussian evidence in closed form (y = f + N(0, σ²)), which only the \
                 gaussian likelihood has — svgp takes any likelihood (--method svgp)",
                self.name()
            ))
        })
    }

    /// The first target this likelihood cannot take, if any.
    fn check_targets(&self, y: &[f64]) -> Result<(), BadTarget>;

    /// log p(y | f) and its derivatives in f; `d_params`, when given, has
    /// ∂ log p/∂ log θ_k added to its entry k.
    fn log_density(&self, y: f64, f: f64, d_params: Option<&mut [f64]>) -> Pointwise;

    /// `E[log p(y | f)]` under q(f) = N(mean, var), with its derivatives in mean and
    /// var, and ∂/∂ log θ_k added into `d_params` when given. By quadrature unless the
    /// likelihood has a closed form; the derivative in var is that of the quadrature
    /// sum itself, so value and gradient agree to rounding.
    fn expected_log_density(
        &self,
        y: f64,
        mean: f64,
        var: f64,
        quad: &GaussHermite,
        d_params: Option<&mut [f64]>,
    ) -> Expectation {
        by_quadrature(self, y, mean, var, quad, d_params)
    }

    /// E[y | f] and Var[y | f].
    fn conditional_moments(&self, f: f64) -> (f64, f64);

    /// The mean and variance of a new observation when q(f) = N(mean, var).
    fn predictive_moments(&self, mean: f64, var: f64, quad: &GaussHermite) -> (f64, f64) {
        let m = quad.expect(mean, var, |f| self.conditional_moments(f).0);
        let second = quad.expect(mean, var, |f| {
            let (c, v) = self.conditional_moments(f);
            v + c * c
        });
        (m, (second - m * m).max(0.0))
    }

    /// The central interval holding `level` of a new observation's predictive
    /// distribution when q(f) = N(mean, var): its (1 − level)/2 and (1 + level)/2
    /// quantiles (for counts, the smallest count whose distribution function reaches
    /// each). None where the likelihood gives none (bernoulli: y is a class).
    fn predictive_interval(
        &self,
        _mean: f64,
        _var: f64,
        _level: f64,
        _quad: &GaussHermite,
    ) -> Option<(f64, f64)> {
        None
    }

    /// log p(y) = log ∫ p(y | f) N(f; mean, var) df: the log predictive density of one
    /// held-out observation.
    fn log_predictive_density(&self, y: f64, mean: f64, var: f64, quad: &GaussHermite) -> f64 {
        quad.log_expect_exp(mean, var, |f| self.log_density(y, f, None).value)
    }

    fn clone_box(&self) -> Box<dyn Likelihood>;
}

impl Clone for Box<dyn Likelihood> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// [`Likelihood::expected_log_density`] by Gauss–Hermite quadrature: with
/// f_i = mean + s·z_i, s = √var, the sum Σ w_i g(f_i), its derivative in mean
/// Σ w_i g'(f_i), and in var Σ w_i g'(f_i) z_i / (2s) — at var = 0 its limit ½ g''(mean).
pub fn by_quadrature<L: Likelihood + ?Sized>(
    lik: &L,
    y: f64,
    mean: f64,
    var: f64,
    quad: &GaussHermite,
    d_params: Option<&mut [f64]>,
) -> Expectation {
    let k = lik.param_names().len();
    quadrature_of(
        |f, d| lik.log_density(y, f, d),
        k,
        mean,
        var,
        quad,
        d_params,
    )
}

/// [`by_quadrature`] of the pointwise density `density(f, d_params)` of one target, `k`
/// its number of parameters: for a likelihood that computes what does not depend on f
/// once per target instead of once per node (Student-t's log-gamma and digamma terms).
pub fn quadrature_of(
    density: impl Fn(f64, Option<&mut [f64]>) -> Pointwise,
    k: usize,
    mean: f64,
    var: f64,
    quad: &GaussHermite,
    mut d_params: Option<&mut [f64]>,
) -> Expectation {
    let s = var.max(0.0).sqrt();
    let mut out = Expectation {
        value: 0.0,
        d_mean: 0.0,
        d_var: 0.0,
    };
    let mut point_params = vec![0.0; k];
    let mut slope_by_node = 0.0;
    for (z, w) in quad.nodes.iter().zip(&quad.weights) {
        point_params.iter_mut().for_each(|v| *v = 0.0);
        let want = d_params.is_some() && k > 0;
        let p = density(
            mean + s * z,
            if want { Some(&mut point_params) } else { None },
        );
        out.value += w * p.value;
        out.d_mean += w * p.d_f;
        slope_by_node += w * p.d_f * z;
        if s == 0.0 {
            out.d_var += 0.5 * w * p.d2_f;
        }
        if let Some(d) = d_params.as_deref_mut() {
            for (acc, v) in d.iter_mut().zip(&point_params) {
                *acc += w * v;
            }
        }
    }
    if s > 0.0 {
        out.d_var = slope_by_node / (2.0 * s);
    }
    out
}
