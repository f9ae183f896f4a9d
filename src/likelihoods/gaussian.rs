//! Gaussian noise, y = f + ε, ε ~ N(0, σ²): everything in closed form.

use super::{BadTarget, Expectation, GaussHermite, Likelihood, Pointwise, finite_targets};

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Gaussian noise with variance σ² (`noise_variance`).
#[derive(Clone, Debug, PartialEq)]
pub struct Gaussian {
    pub variance: f64,
}

impl Gaussian {
    pub fn new(variance: f64) -> Gaussian {
        Gaussian { variance }
    }
}

impl Likelihood for Gaussian {
    fn name(&self) -> &'static str {
        "gaussian"
    }

    fn param_names(&self) -> &'static [&'static str] {
        &["noise_variance"]
    }

    fn params(&self) -> Vec<f64> {
        vec![self.variance]
    }

    fn set_params(&mut self, values: &[f64]) {
        self.variance = values[0];
    }

    fn gaussian_noise(&self) -> Option<f64> {
        Some(self.variance)
    }

    fn check_targets(&self, y: &[f64]) -> Result<(), BadTarget> {
        finite_targets(y)
    }

    fn log_density(&self, y: f64, f: f64, d_params: Option<&mut [f64]>) -> Pointwise {
        let s2 = self.variance;
        let e = y - f;
        if let Some(d) = d_params {
            d[0] += -0.5 + 0.5 * e * e / s2;
        }
        Pointwise {
            value: -0.5 * (LN_2PI + s2.ln()) - 0.5 * e * e / s2,
            d_f: e / s2,
            d2_f: -1.0 / s2,
        }
    }

    /// −½ log 2πσ² − ((y − μ)² + v)/(2σ²).
    fn expected_log_density(
        &self,
        y: f64,
        mean: f64,
        var: f64,
        _quad: &GaussHermite,
        d_params: Option<&mut [f64]>,
    ) -> Expectation {
        let s2 = self.variance;
        let e = y - mean;
        let q = e * e + var;
        if let Some(d) = d_params {
            d[0] += -0.5 + 0.5 * q / s2;
        }
        Expectation {
            value: -0.5 * (LN_2PI + s2.ln()) - 0.5 * q / s2,
            d_mean: e / s2,
            d_var: -0.5 / s2,
        }
    }

    fn conditional_moments(&self, f: f64) -> (f64, f64) {
        (f, self.variance)
    }

    fn predictive_moments(&self, mean: f64, var: f64, _quad: &GaussHermite) -> (f64, f64) {
        (mean, var + self.variance)
    }

    fn log_predictive_density(&self, y: f64, mean: f64, var: f64, _quad: &GaussHermite) -> f64 {
        let v = var + self.variance;
        let e = y - mean;
        -0.5 * (LN_2PI + v.ln()) - 0.5 * e * e / v
    }

    fn clone_box(&self) -> Box<dyn Likelihood> {
        Box::new(self.clone())
    }
}
