//! The site parameters of EP and the probit moment matching that updates them
//! (Rasmussen & Williams 2006, §3.6; GPML's `likErf` in `infEP` mode), with the
//! settings of the iteration: its tolerance, its largest number of sweeps, its damping.

use crate::error::{Error, Result};
use crate::likelihoods::normal;

/// One Gaussian site per data point, in natural parameters: t̃_i(f_i) ∝
/// exp(−½ τ̃_i f_i² + ν̃_i f_i). τ̃_i = ν̃_i = 0 is the flat site EP starts from.
#[derive(Clone, Debug, PartialEq)]
pub struct Sites {
    pub tau: Vec<f64>,
    pub nu: Vec<f64>,
}

impl Sites {
    pub fn flat(n: usize) -> Sites {
        Sites {
            tau: vec![0.0; n],
            nu: vec![0.0; n],
        }
    }
}

/// How EP iterates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpSettings {
    /// EP has converged when no site's τ̃ or ν̃ moved by more than this (relative to
    /// max(1, |value|)) in a sweep.
    pub tolerance: f64,
    /// The most sweeps over the data before EP is reported as not converged.
    pub max_sweeps: usize,
    /// δ in (0, 1]: a site moves to δ·(its moment-matched value) + (1 − δ)·(its old
    /// value); 1 is undamped EP, smaller values calm an oscillating EP.
    pub damping: f64,
}

impl Default for EpSettings {
    /// 1e-9 puts the evidence's gradient within about 1e-8 of its value at the fixed
    /// point (the sites converge linearly, a few sweeps per digit); undamped, as GPML.
    fn default() -> EpSettings {
        EpSettings {
            tolerance: 1e-9,
            max_sweeps: 200,
            damping: 1.0,
        }
    }
}

impl EpSettings {
    pub fn check(&self) -> Result<()> {
        if !(self.damping > 0.0 && self.damping <= 1.0) {
            return Err(Error::input(format!(
                "EP damping must be in (0, 1], not {}",
                self.damping
            )));
        }
        if self.tolerance.is_nan() || self.tolerance <= 0.0 || self.max_sweeps == 0 {
            return Err(Error::input(
                "EP needs a positive tolerance and at least one sweep",
            ));
        }
        Ok(())
    }
}

/// The class of a 0/1 target as the sign s = ±1 of the probit p(y | f) = Φ(s f).
pub fn sign_of(y: f64) -> f64 {
    if y == 1.0 { 1.0 } else { -1.0 }
}

/// The tilted distribution Φ(s f)·N(f; μ, σ²) of one site: its log normaliser and the
/// site (τ̃, ν̃) that matches its mean and variance given the cavity N(μ, σ²).
#[derive(Clone, Copy, Debug)]
pub struct Tilted {
    pub log_z: f64,
    pub tau: f64,
    pub nu: f64,
}

/// Moment matching for the probit likelihood: with z = sμ/√(1+σ²) and r = φ(z)/Φ(z),
/// log Z = log Φ(z), ∂log Z/∂μ = s r/√(1+σ²), ∂²log Z/∂μ² = −r(z + r)/(1+σ²), and the
/// site τ̃ = −d2/(1 + d2·σ²), ν̃ = (d1 − μ·d2)/(1 + d2·σ²) (GPML's `infEP` update, τ̃
/// kept ≥ 0; probit is log-concave so it only clips rounding).
pub fn probit_tilted(s: f64, mu: f64, var: f64) -> Tilted {
    let (tau, nu) = probit_site(s, mu, var);
    Tilted {
        log_z: normal::log_cdf(s * mu / (1.0 + var).sqrt()),
        tau,
        nu,
    }
}

/// [`probit_tilted`]'s site (τ̃, ν̃) without log Z: what a sweep needs (log Φ is read
/// only by the evidence, once at the fixed point, and costs as much as the rest).
pub fn probit_site(s: f64, mu: f64, var: f64) -> (f64, f64) {
    let root = (1.0 + var).sqrt();
    let z = s * mu / root;
    let r = normal::pdf_over_cdf(z);
    let d1 = s * r / root;
    let d2 = -r * (z + r) / (1.0 + var);
    let denom = 1.0 + d2 * var;
    ((-d2 / denom).max(0.0), (d1 - mu * d2) / denom)
}

/// p(y = 1) of a latent N(μ, σ²) under the probit: Φ(μ/√(1+σ²)).
pub fn probit_probability(mu: f64, var: f64) -> f64 {
    normal::cdf(mu / (1.0 + var).sqrt())
}

/// The report of an EP that did not converge.
pub fn not_converged(settings: &EpSettings, change: f64) -> Error {
    Error::numerical(format!(
        "EP did not converge in {} sweeps: the sites still moved by {change:.3e} in the last \
         one (tolerance {:e}); damp the updates (damping {} → e.g. --ep-damping {}) or allow more \
         sweeps",
        settings.max_sweeps,
        settings.tolerance,
        settings.damping,
        0.5 * settings.damping
    ))
}
