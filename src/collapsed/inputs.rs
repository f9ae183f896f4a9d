//! What a feature family hands the core: Kuf, Kuu (dense or diagonal), the prior
//! diagonal, σ², the approximation and the jitter policy, and the check of their shapes.

use super::approx::Approx;
use crate::error::{Error, Result};
use crate::linalg::Jitter;
use nalgebra::DMatrix;

/// Kuu as a family supplies it.
#[derive(Clone, Copy, Debug)]
pub enum Kuu<'a> {
    Dense(&'a DMatrix<f64>),
    /// A diagonal matrix, its m entries (e.g. `(r/σ0²) I` for the spectral features):
    /// its Cholesky factor is a square root and every triangular solve a scaling.
    Diagonal(&'a [f64]),
}

impl Kuu<'_> {
    pub fn size(&self) -> usize {
        match self {
            Kuu::Dense(k) => k.nrows(),
            Kuu::Diagonal(k) => k.len(),
        }
    }
}

/// The inputs of the core.
#[derive(Clone, Copy, Debug)]
pub struct LowRank<'a> {
    /// Kuf, m×n: column i holds the covariances of data point i with the m features.
    pub kuf: &'a DMatrix<f64>,
    pub kuu: Kuu<'a>,
    pub approx: Approx,
    /// Prior variances k(x_i,x_i), n entries (ignored by DTC, which may pass `&[]`).
    pub kdiag: &'a [f64],
    pub noise: f64,
    pub jitter: Jitter,
}

/// Check the shapes and the noise of one chunk.
pub(super) fn check_chunk(lr: &LowRank, y: &[f64]) -> Result<()> {
    let (m, n) = lr.kuf.shape();
    if m == 0 {
        return Err(Error::input("likelihood core: no features"));
    }
    if y.len() != n || lr.kuu.size() != m || (lr.approx.uses_diagonal() && lr.kdiag.len() != n) {
        return Err(Error::input("likelihood core: inconsistent shapes"));
    }
    Ok(())
}
