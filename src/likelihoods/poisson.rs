//! Counts, y ~ Poisson(exp(f)). An exposure (a known time or population per row) is
//! an offset log(exposure) added to f by the model, not a parameter here.

use super::quantile::{self, LogGamma};
use super::{BadTarget, Expectation, GaussHermite, Likelihood, Pointwise, normal};
use libm::lgamma as ln_gamma;
use statrs::function::gamma::checked_gamma_ur;

/// The Poisson likelihood with the exponential link (GPflow's `Poisson()`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Poisson;

impl Likelihood for Poisson {
    fn name(&self) -> &'static str {
        "poisson"
    }

    fn check_targets(&self, y: &[f64]) -> Result<(), BadTarget> {
        match y
            .iter()
            .position(|v| !(v.is_finite() && *v >= 0.0 && v.fract() == 0.0))
        {
            Some(row) => Err(BadTarget {
                row,
                reason: format!(
                    "the target {} is not a count (a whole number ≥ 0), which the poisson \
                     likelihood needs",
                    y[row]
                ),
            }),
            None => Ok(()),
        }
    }

    fn log_density(&self, y: f64, f: f64, _d_params: Option<&mut [f64]>) -> Pointwise {
        let rate = f.exp();
        Pointwise {
            value: y * f - rate - ln_gamma(y + 1.0),
            d_f: y - rate,
            d2_f: -rate,
        }
    }

    /// y μ − exp(μ + v/2) − log y!, since E[exp f] = exp(μ + v/2).
    fn expected_log_density(
        &self,
        y: f64,
        mean: f64,
        var: f64,
        _quad: &GaussHermite,
        _d_params: Option<&mut [f64]>,
    ) -> Expectation {
        let mean_rate = (mean + 0.5 * var).exp();
        Expectation {
            value: y * mean - mean_rate - ln_gamma(y + 1.0),
            d_mean: y - mean_rate,
            d_var: -0.5 * mean_rate,
        }
    }

    fn conditional_moments(&self, f: f64) -> (f64, f64) {
        let rate = f.exp();
        (rate, rate)
    }

    /// E[y] = exp(μ + v/2); Var[y] = E[rate] + Var[rate] = E[y] + (e^v − 1) E[y]².
    fn predictive_moments(&self, mean: f64, var: f64, _quad: &GaussHermite) -> (f64, f64) {
        let m = (mean + 0.5 * var).exp();
        (m, m + var.exp_m1() * m * m)
    }

    /// The quantiles of the Poisson–lognormal predictive, whose distribution function is
    /// P(y ≤ k) = E_f[P(Pois(e^f) ≤ k)] = P(f < log G), G ~ Gamma(k + 1, 1) — since
    /// P(Pois(λ) ≤ k) = P(Gamma(k + 1) > λ). Computed over whichever of f and log G is
    /// the narrower, where the other's term is smooth: Gauss–Hermite over f of the
    /// Gamma tail Q(k + 1, e^f) when √var is below log G's grid step, else the trapezoid
    /// rule over log G of Φ((log G − mean)/√var).
    fn predictive_interval(
        &self,
        mean: f64,
        var: f64,
        level: f64,
        quad: &GaussHermite,
    ) -> Option<(f64, f64)> {
        let cdf = |k: f64| predictive_cdf(k, mean, var, quad);
        let tail = 0.5 * (1.0 - level);
        Some((
            quantile::counts(cdf, tail),
            quantile::counts(cdf, 1.0 - tail),
        ))
    }

    fn clone_box(&self) -> Box<dyn Likelihood> {
        Box::new(*self)
    }
}

/// The offsets log E_i of exposures E_i (`--exposure`: y_i ~ Poisson(E_i·exp f_i), so
/// log E_i is added to f_i), or the first row (0-based) whose exposure is not a finite
/// number > 0 — the one check of an exposure, wherever it is read.
pub fn log_exposures(e: &[f64]) -> Result<Vec<f64>, usize> {
    match e.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        Some(i) => Err(i),
        None => Ok(e.iter().map(|v| v.ln()).collect()),
    }
}

/// P(y ≤ k) under the Poisson–lognormal predictive (see `predictive_interval`).
pub fn predictive_cdf(k: f64, mean: f64, var: f64, quad: &GaussHermite) -> f64 {
    let sd = var.max(0.0).sqrt();
    let log_g = LogGamma::new(k + 1.0);
    if sd < 2.0 * log_g.step {
        quad.expect(mean, var, |f| counts_up_to(k, f.exp()))
    } else {
        log_g.expect(|s| normal::cdf((s - mean) / sd))
    }
}

/// P(Pois(rate) ≤ k) = Q(k + 1, rate), the regularised upper incomplete gamma; 1 at a
/// rate that underflowed to 0, 0 at one that overflowed.
fn counts_up_to(k: f64, rate: f64) -> f64 {
    if rate <= 0.0 {
        return 1.0;
    }
    if rate == f64::INFINITY {
        return 0.0;
    }
    checked_gamma_ur(k + 1.0, rate).unwrap_or(f64::NAN)
}
