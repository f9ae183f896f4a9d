//! Student-t noise, y = f + σ·t_ν: heavy tails, so a few gross outliers move the fit
//! far less than under Gaussian noise. GPflow's `StudentT(scale, df)`: the same density
//! and parameterisation (σ the scale, not the standard deviation).

use super::quantile::{self, LogGamma};
use super::{
    BadTarget, Expectation, GaussHermite, Likelihood, Pointwise, finite_targets, normal,
    quadrature_of,
};
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
        self.density(&self.constants(), y, f, d_params)
    }

    /// By quadrature, the terms that do not depend on f computed once for all nodes.
    fn expected_log_density(
        &self,
        y: f64,
        mean: f64,
        var: f64,
        quad: &GaussHermite,
        d_params: Option<&mut [f64]>,
    ) -> Expectation {
        let c = self.constants();
        quadrature_of(
            |f, d| self.density(&c, y, f, d),
            2,
            mean,
            var,
            quad,
            d_params,
        )
    }

    fn conditional_moments(&self, f: f64) -> (f64, f64) {
        (f, self.noise_variance())
    }

    /// The mean is q's; the variance q's plus the noise's σ²ν/(ν − 2) (infinite for
    /// ν ≤ 2).
    fn predictive_moments(&self, mean: f64, var: f64, _quad: &GaussHermite) -> (f64, f64) {
        (mean, var + self.noise_variance())
    }

    /// The quantiles of N(mean, var) convolved with the noise σ·t_ν, by writing the
    /// noise as a scale mixture of normals: with precision λ ~ Gamma(ν/2, rate ν/2),
    /// y | λ ~ N(mean, var + σ²/λ), so P(y ≤ t) = E_λ[Φ((t − mean)/√(var + σ²/λ))] —
    /// over log λ a smooth integrand whatever var and σ, by the trapezoid rule.
    fn predictive_interval(
        &self,
        mean: f64,
        var: f64,
        level: f64,
        _quad: &GaussHermite,
    ) -> Option<(f64, f64)> {
        let (s2, half) = (self.scale * self.scale, 0.5 * self.df);
        let var = var.max(0.0);
        // λ = G/(ν/2), G ~ Gamma(ν/2, 1): σ²/λ = σ²(ν/2)e^{−log G}
        let rule = LogGamma::new(half);
        let spread: Vec<f64> = rule
            .nodes
            .iter()
            .map(|s| (var + s2 * half * (-s).exp()).sqrt())
            .collect();
        let cdf = |t: f64| -> f64 {
            spread
                .iter()
                .zip(&rule.weights)
                .map(|(sd, w)| w * normal::cdf((t - mean) / sd))
                .sum()
        };
        let scale = (var + s2).sqrt();
        let tail = 0.5 * (1.0 - level);
        Some((
            quantile::continuous(cdf, tail, mean, scale),
            quantile::continuous(cdf, 1.0 - tail, mean, scale),
        ))
    }

    fn clone_box(&self) -> Box<dyn Likelihood> {
        Box::new(self.clone())
    }
}

/// What [`StudentT::density`] needs of σ and ν alone, computed as its terms were (the
/// same bits): lnΓ((ν+1)/2) − lnΓ(ν/2) − ½ log(νπσ²), and ½ψ((ν+1)/2) − ½ψ(ν/2) − 1/(2ν).
struct Constants {
    log_norm: f64,
    d_log_nu: f64,
}

impl StudentT {
    fn constants(&self) -> Constants {
        let (s, nu) = (self.scale, self.df);
        Constants {
            log_norm: ln_gamma(0.5 * (nu + 1.0))
                - ln_gamma(0.5 * nu)
                - 0.5 * ((s * s).ln() + nu.ln() + LN_PI),
            d_log_nu: 0.5 * digamma(0.5 * (nu + 1.0)) - 0.5 * digamma(0.5 * nu) - 0.5 / nu,
        }
    }

    /// log p(y | f) given [`StudentT::constants`] (see [`Likelihood::log_density`]).
    fn density(&self, c: &Constants, y: f64, f: f64, d_params: Option<&mut [f64]>) -> Pointwise {
        let (s, nu) = (self.scale, self.df);
        let e = y - f;
        let a = nu * s * s;
        let b = a + e * e;
        let log_u = (e * e / a).ln_1p();
        if let Some(d) = d_params {
            // ∂/∂ log σ = −1 + (ν+1) e²/(A + e²)
            d[0] += -1.0 + (nu + 1.0) * e * e / b;
            // ∂/∂ log ν = ν [½ψ((ν+1)/2) − ½ψ(ν/2) − 1/(2ν) − ½ log u + (ν+1) e²/(2ν(A + e²))]
            d[1] += nu * (c.d_log_nu - 0.5 * log_u + (nu + 1.0) * e * e / (2.0 * nu * b));
        }
        Pointwise {
            value: c.log_norm - 0.5 * (nu + 1.0) * log_u,
            d_f: (nu + 1.0) * e / b,
            d2_f: (nu + 1.0) * (e * e - a) / (b * b),
        }
    }

    /// The noise's variance σ²ν/(ν − 2); infinite for ν ≤ 2.
    pub fn noise_variance(&self) -> f64 {
        if self.df > 2.0 {
            self.scale * self.scale * self.df / (self.df - 2.0)
        } else {
            f64::INFINITY
        }
    }
}
