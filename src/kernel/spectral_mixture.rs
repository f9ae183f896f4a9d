//! The spectral mixture kernel (Wilson & Adams 2013, eq. 12): a Gaussian mixture of Q
//! components in the frequency domain, k(τ) = Σ_q w_q Π_d exp(−2π² τ_d² σ_qd²)
//! cos(2π τ_d μ_qd), τ = x − y, with weights w_q, mean frequencies μ_qd and frequency
//! scales σ_qd (GPyTorch's `SpectralMixtureKernel`: `mixture_weights`,
//! `mixture_means`, `mixture_scales`). Its spectral density is the mixture itself.

use super::expression::Value;
use super::part::{Form, Param, Params};
use std::f64::consts::PI;

/// Blocks `weights` (Q), `means` and `scales` (Q×D, component after component).
#[derive(Clone, Debug, PartialEq)]
pub struct SpectralMixture {
    pub params: Params,
    dim: usize,
}

impl SpectralMixture {
    pub fn new(
        dim: usize,
        weights: Vec<f64>,
        means: Vec<f64>,
        scales: Vec<f64>,
    ) -> SpectralMixture {
        assert_eq!(means.len(), weights.len() * dim, "Q×D means");
        assert_eq!(scales.len(), weights.len() * dim, "Q×D scales");
        SpectralMixture {
            params: Params::new(
                "spectral_mixture",
                vec![
                    Param::positive("weights", weights),
                    Param::positive("means", means),
                    Param::positive("scales", scales),
                ],
            ),
            dim,
        }
    }

    /// Component q's factor for input d at lag t: (e, cos, sin) with e = exp(−2π²t²σ²)
    /// and the cosine's argument 2π t μ.
    fn factor(&self, q: usize, d: usize, t: f64) -> (f64, f64, f64) {
        let at = q * self.dim + d;
        let (mu, sd) = (self.params.get(1)[at], self.params.get(2)[at]);
        let e = (-2.0 * PI * PI * t * t * sd * sd).exp();
        let (s, c) = (2.0 * PI * t * mu).sin_cos();
        (e, c, s)
    }
}

impl Form for SpectralMixture {
    fn name(&self) -> &'static str {
        "spectral_mixture"
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn params_mut(&mut self) -> &mut Params {
        &mut self.params
    }
    fn value(&self, x: &[f64], y: &[f64]) -> f64 {
        let w = self.params.get(0);
        (0..w.len())
            .map(|q| {
                w[q] * (0..self.dim)
                    .map(|d| {
                        let (e, c, _) = self.factor(q, d, x[d] - y[d]);
                        e * c
                    })
                    .product::<f64>()
            })
            .sum()
    }
    fn add_grad(
        &self,
        x: &[f64],
        y: &[f64],
        w: f64,
        gp: &mut [f64],
        gx: &mut [f64],
        gy: &mut [f64],
    ) {
        let (weights, dim) = (self.params.get(0), self.dim);
        let q_len = weights.len();
        for (q, wq) in weights.iter().enumerate() {
            let f = |d: usize| {
                let (e, c, _) = self.factor(q, d, x[d] - y[d]);
                e * c
            };
            gp[q] += w * wq * (0..dim).map(f).product::<f64>();
            for d in 0..dim {
                // the product over the other inputs, formed without dividing by a cosine
                let rest: f64 = (0..dim).filter(|&o| o != d).map(f).product();
                let g = w * wq * rest;
                let t = x[d] - y[d];
                let at = q * dim + d;
                let (mu, sd) = (self.params.get(1)[at], self.params.get(2)[at]);
                let (e, c, s) = self.factor(q, d, t);
                gp[q_len + at] += g * e * (-s * 2.0 * PI * t * mu);
                gp[q_len + q_len * dim + at] += g * e * c * (-4.0 * PI * PI * t * t * sd * sd);
                let dt = g * e * (-4.0 * PI * PI * t * sd * sd * c - 2.0 * PI * mu * s);
                gx[d] += dt;
                gy[d] -= dt;
            }
        }
    }
    fn is_stationary(&self) -> bool {
        true
    }
    fn shape_args(&self) -> Vec<(String, Value)> {
        vec![("q".into(), Value::Number(self.params.get(0).len() as f64))]
    }
}
