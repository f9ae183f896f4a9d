//! Student-t noise, y = f + σ·t_ν: heavy tails, so a few gross outliers move the fit
//! far less than under Gaussian noise. GPflow's `StudentT(scale, df)`: the same density
//! and parameterisation (σ the scale, not the standard deviation).

use super::{BadTarget, GaussHermite, Likelihood, Pointwise, finite_targets};
use libm::lgamma as ln_gamma;
use statrs::function::gamma::digamma;

const LN_PI: f64 = 1.144_729_885_849_400_2;

/// Student-t noise with scale σ (`scale`) and ν degrees of freedom (`df`).
#[derive(Clone, Debug, PartialEq)]
pub struct StudentT {
    pub scale: f64,
    pub df: f64,
}

impl Default for StudentT {
    /// GPflow's defaults: scale 1, ν = 3 (the fewest with a finite variance).
    fn default() -> StudentT {
        StudentT {
            scale: 1.0,
            df: 3.0,
        }
    }
}

impl Likelihood for StudentT {
    fn name(&self) -> &'static str {
        "studentt"
    }

    fn param_names(&self) -> &'static [&'static str] {
        &["scale", "df"]
    }

    fn params(&self) -> Vec<f64> {
        vec![self.scale, self.df]
    }

    fn set_params(&mut self, values: &[f64]) {
        self.scale = values[0];
        self.df = values[1];
    }

    fn check_targets(&self, y: &[f64]) -> Result<(), BadTarget> {
        finite_targets(y)
    }

    /// With e = y − f and A = νσ²:
    /// log p = lnΓ((ν+1)/2) − lnΓ(ν/2) − ½ log(νπσ²) − (ν+1)/2 · log(1 + e²/A).
    fn log_density(&self, y: f64, f: f64, d_params: Option<&mut [f64]>) -> Pointwise {
        let (s, nu) = (self.scale, self.df);
        let e = y - f;
        let a = nu * s * s;
        let b = a + e * e;
        let log_u = (e * e / a).ln_1p();
        if let Some(d) = d_params {
            // ∂/∂ log σ = −1 + (ν+1) e²/(A + e²)
            d[0] += -1.0 + (nu + 1.0) * e * e / b;
            // ∂/∂ log ν = ν [½ψ((ν+1)/2) − ½ψ(ν/2) − 1/(2ν) − ½ log u + (ν+1) e²/(2ν(A + e²))]
            d[1] += nu
                * (0.5 * digamma(0.5 * (nu + 1.0))
                    - 0.5 * digamma(0.5 * nu)
                    - 0.5 / nu
                    - 0.5 * log_u
                    + (nu + 1.0) * e * e / (2.0 * nu * b));
        }
        Pointwise {
            value: ln_gamma(0.5 * (nu + 1.0))
                - ln_gamma(0.5 * nu)
                - 0.5 * ((s * s).ln() + nu.ln() + LN_PI)
                - 0.5 * (nu + 1.0) * log_u,
            d_f: (nu + 1.0) * e / b,
            d2_f: (nu + 1.0) * (e * e - a) / (b * b),
        }
    }

    fn conditional_moments(&self, f: f64) -> (f64, f64) {
        (f, self.noise_variance())
    }

    /// The mean is q's; the variance q's plus the noise's σ²ν/(ν − 2) (infinite for
    /// ν ≤ 2).
    fn predictive_moments(&self, mean: f64, var: f64, _quad: &GaussHermite) -> (f64, f64) {
        (mean, var + self.noise_variance())
    }

    fn clone_box(&self) -> Box<dyn Likelihood> {
        Box::new(self.clone())
    }
}

impl StudentT {
    /// The noise's variance σ²ν/(ν − 2); infinite for ν ≤ 2.
    pub fn noise_variance(&self) -> f64 {
        if self.df > 2.0 {
            self.scale * self.scale * self.df / (self.df - 2.0)
        } else {
            f64::INFINITY
        }
    }
}
