//! What prediction needs from a fitted low-rank model, kept in its model file.

use crate::error::{Error, Result};
use crate::exec::Par;
use crate::linalg;
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

/// Everything prediction needs, computed once per fitted model (O(m²) to keep):
/// `mean = k*ᵀ w`, `var_f = prior − k*ᵀ S k*`, `var_y = var_f + σ²`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Posterior {
    /// The m-vector w = (Kuu + Kuf Λ⁻¹ Kfu)⁻¹ Kuf Λ⁻¹ y.
    pub mean_weights: Vec<f64>,
    /// The m×m matrix S (stored as rows).
    #[serde(with = "crate::matrix_rows::as_rows")]
    pub var_matrix: DMatrix<f64>,
    /// "kernel": the prior variance is k(x*,x*); "none": a degenerate model (SSGP,
    /// EigenGP) whose variance is k*ᵀ Σ⁻¹ k* alone, stored as S = −Σ⁻¹.
    pub latent_prior: LatentPrior,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LatentPrior {
    Kernel,
    None,
}

impl Posterior {
    pub fn m(&self) -> usize {
        self.mean_weights.len()
    }

    /// Check the shapes of a posterior read from a file.
    pub fn check(&self, m: usize) -> Result<()> {
        if self.mean_weights.len() != m || self.var_matrix.shape() != (m, m) {
            return Err(Error::input(format!(
                "[posterior] must hold {m} mean_weights and an {m}×{m} var_matrix"
            )));
        }
        Ok(())
    }

    /// Mean and latent variance at t test points from K(u, *) (m×t) and the prior
    /// variances k(x*,x*).
    pub fn predict(&self, kus: &DMatrix<f64>, prior: &[f64], par: Par) -> (Vec<f64>, Vec<f64>) {
        let w = DVector::from_column_slice(&self.mean_weights);
        let mean = kus.tr_mul(&w);
        let sk = linalg::mul(&self.var_matrix, false, kus, false, par);
        let var = (0..kus.ncols())
            .map(|t| {
                let quad = kus.column(t).dot(&sk.column(t));
                let var = match self.latent_prior {
                    LatentPrior::Kernel => prior[t] - quad,
                    LatentPrior::None => -quad,
                };
                // A variance is ≥ 0; a tiny negative one is rounding (noiseless data).
                var.max(0.0)
            })
            .collect();
        (mean.as_slice().to_vec(), var)
    }

    /// The latent covariance (t×t) at t test points from K(u, *) (m×t) and, for a
    /// kernel prior, the prior covariance k(X*, X*): prior − K*u S Ku*, or − K*u S Ku*
    /// for a degenerate model. Its diagonal is [`Posterior::predict`]'s variance before
    /// the clamp at 0; it is symmetrised against rounding.
    pub fn covariance(
        &self,
        kus: &DMatrix<f64>,
        prior: Option<DMatrix<f64>>,
        par: Par,
    ) -> crate::error::Result<DMatrix<f64>> {
        let sk = linalg::mul(&self.var_matrix, false, kus, false, par);
        let quad = linalg::mul(kus, true, &sk, false, par);
        let mut cov = match (self.latent_prior, prior) {
            (LatentPrior::Kernel, Some(p)) => p - quad,
            (LatentPrior::None, _) => -quad,
            (LatentPrior::Kernel, None) => {
                return Err(crate::error::Error::input(
                    "the posterior's variance needs the prior covariance at the test points",
                ));
            }
        };
        let t = cov.nrows();
        for i in 0..t {
            for j in 0..i {
                let v = 0.5 * (cov[(i, j)] + cov[(j, i)]);
                cov[(i, j)] = v;
                cov[(j, i)] = v;
            }
        }
        Ok(cov)
    }
}
