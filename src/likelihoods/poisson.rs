//! Counts, y ~ Poisson(exp(f)). An exposure (a known time or population per row) is
//! an offset log(exposure) added to f by the model, not a parameter here.

use super::{BadTarget, Expectation, GaussHermite, Likelihood, Pointwise};
use libm::lgamma as ln_gamma;

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

    fn clone_box(&self) -> Box<dyn Likelihood> {
        Box::new(*self)
    }
}
