//! EP with the exact GP prior (GPML's `infEP`), the reference the sparse
//! approximations are measured against: O(n³), for small n.
//!
//! It runs the same site loop as the low-rank forms with V = Λ^½Uᵀ from K's
//! eigendecomposition K = UΛUᵀ (so VᵀV = K and g = 0), which needs no jitter: K is often
//! too ill-conditioned for a Cholesky factor (GPML never factors it either). The evidence's Gaussian term is GPML's: with W = diag(√τ̃) and
//! B = I + WKW, log N(μ̃ | 0, K + S) = −½ log|B| − ½ y'ᵀB⁻¹y' − n/2 log 2π + ½ Σ log τ̃
//! with y' = ν̃/√τ̃, and its adjoint with respect to K is ½ W(B⁻¹ − B⁻¹y'y'ᵀB⁻¹)W.
//! Predictions are GPML's too: mean k*ᵀWB⁻¹y', variance k** − k*ᵀWB⁻¹Wk*.

use super::evidence::{Prediction, site_terms};
use super::posterior::{self, EpPosterior, EpPrior};
use super::sites::{EpSettings, Sites};
use crate::error::{Error, Result};
use crate::exec::Par;
use crate::kernel::Kernel;
use crate::linalg;
use nalgebra::DMatrix;
use std::f64::consts::PI;

/// EP with the exact GP: the fixed point, −log Z_EP and its gradient in the kernel's
/// log parameters (the order of its blocks), and what prediction needs.
pub struct ExactEp {
    pub nlz: f64,
    pub grad: Vec<f64>,
    pub posterior: EpPosterior,
    /// The factor of B = I + WKW, W = diag(√τ̃), and WB⁻¹y'.
    lb: DMatrix<f64>,
    w: Vec<f64>,
    weights: DMatrix<f64>,
}

/// V = Λ^½Uᵀ for K = UΛUᵀ (Λ's rounding negatives set to 0).
fn root(k: &DMatrix<f64>) -> DMatrix<f64> {
    let e = k.clone().symmetric_eigen();
    let mut v = e.eigenvectors.transpose();
    for (r, l) in e.eigenvalues.iter().enumerate() {
        v.row_mut(r).scale_mut(l.max(0.0).sqrt());
    }
    v
}

pub fn fit(
    kernel: &dyn Kernel,
    x: &DMatrix<f64>,
    y: &[f64],
    settings: &EpSettings,
    start: Option<Sites>,
) -> Result<ExactEp> {
    let n = y.len();
    let k = kernel.gram(x, Par::Seq);
    let prior = EpPrior {
        v: root(&k),
        g: vec![0.0; n],
    };
    let post = posterior::run(&prior, y, start, settings)?;
    let w: Vec<f64> = post.sites.tau.iter().map(|t| t.sqrt()).collect();
    let mut b = DMatrix::from_fn(n, n, |i, j| w[i] * k[(i, j)] * w[j]);
    for i in 0..n {
        b[(i, i)] += 1.0;
    }
    let lb = linalg::cholesky_with(&b, 0.0, Par::Seq)
        .ok_or_else(|| Error::numerical("EP: I + WKW is not positive definite"))?;
    let targets = DMatrix::from_fn(n, 1, |i, _| {
        if w[i] > 0.0 {
            post.sites.nu[i] / w[i]
        } else {
            0.0
        }
    });
    let binv = linalg::chol_inverse(&lb, Par::Seq);
    let alpha = &binv * &targets;
    let gauss =
        linalg::half_logdet(&lb) + 0.5 * targets.dot(&alpha) + 0.5 * n as f64 * (2.0 * PI).ln();
    let nlz = gauss - 0.5 * n as f64 * (2.0 * PI).ln() - site_terms(y, &post.sites, &post.cavities);
    let adj = DMatrix::from_fn(n, n, |i, j| {
        0.5 * w[i] * (binv[(i, j)] - alpha[i] * alpha[j]) * w[j]
    });
    let grad = kernel.grad(x, x, &k, &adj, false, false, Par::Seq).params;
    if !nlz.is_finite() || grad.iter().any(|g| !g.is_finite()) {
        return Err(Error::numerical("EP: the log evidence is not finite"));
    }
    let weights = DMatrix::from_fn(n, 1, |i, _| w[i] * alpha[i]);
    Ok(ExactEp {
        nlz,
        grad,
        posterior: post,
        lb,
        w,
        weights,
    })
}

impl ExactEp {
    /// The Gaussian form of the posterior a model file stores for the exact GP:
    /// mean weights (K + S)⁻¹μ̃ = WB⁻¹y' and the matrix (K + S)⁻¹ = WB⁻¹W, so the
    /// latent mean is k*ᵀ·weights and the variance k** − k*ᵀ(K + S)⁻¹k*.
    pub fn gaussian_form(&self) -> (Vec<f64>, DMatrix<f64>) {
        let n = self.w.len();
        let binv = linalg::chol_inverse(&self.lb, Par::Seq);
        let m = DMatrix::from_fn(n, n, |i, j| self.w[i] * binv[(i, j)] * self.w[j]);
        (self.weights.as_slice().to_vec(), m)
    }

    /// The latent mean and variance and p(y = 1) at `xs`.
    pub fn predict(&self, kernel: &dyn Kernel, x: &DMatrix<f64>, xs: &DMatrix<f64>) -> Prediction {
        let ks = kernel.matrix(x, xs, Par::Seq);
        let mean: Vec<f64> = ks.column_iter().map(|c| c.dot(&self.weights)).collect();
        let mut t = ks;
        for (i, w) in self.w.iter().enumerate() {
            t.row_mut(i).scale_mut(*w);
        }
        linalg::solve_lower(&self.lb, &mut t, Par::Seq);
        let kss = kernel.diag(xs);
        let var = (0..xs.nrows())
            .map(|j| (kss[j] - t.column(j).norm_squared()).max(0.0))
            .collect();
        Prediction::of((mean, var))
    }
}
