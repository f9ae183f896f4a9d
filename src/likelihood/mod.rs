//! The one likelihood core of docs/methods.md §1 for every low-rank model:
//! `C = Kfu Kuu⁻¹ Kuf + Λ`, `Λ = a·diag(d) + σ² I`, `d = diag(Kff − Qff)`, with the
//! approximation choosing a and an extra term on d (see [`Approx`]).
//!
//! It works in O(n·m²) time and O(n·m) memory and never forms an n×n matrix. Methods
//! hand it `Kuf` (m×n, one column per data point — the layout the triangular solves
//! want), `Kuu` (dense, or diagonal: the spectral and eigenfunction families, whose
//! triangular solves become scalings), the prior diagonal `kdiag` and σ²; it returns
//! the objective and the adjoints ∂/∂Kuf, ∂/∂Kuu, ∂/∂kdiag and ∂/∂σ², which each
//! feature family maps back to its own parameters by the chain rule.
//!
//! Derivation of the adjoints: with `G = ½(C⁻¹ − ααᵀ)`, `α = C⁻¹y`, dNLML = tr(G dC).
//! Λ depends on d, and d_i = kdiag_i − ‖v_i‖² with `V = L⁻¹Kuf`, `L = chol(Kuu)`; the
//! objective's total derivative with respect to d_i is `t_i = a·g_i + e'(d_i)`
//! (g_i = G_ii). So the Q-part uses `G' = G − diag(t)`:
//! `∂/∂Kuf = 2 L⁻ᵀ V G'`, `∂/∂Kuu = −L⁻ᵀ V G' Vᵀ L⁻¹`, and `C⁻¹Vᵀ = Λ⁻¹ Vᵀ A⁻¹`
//! with `A = I + V Λ⁻¹ Vᵀ`.
//!
//! The parts: [`Approx`] (`approx.rs`); the factor of Kuu (`kuu_factor.rs`); the first
//! pass ([`Accumulator`], `first_pass.rs`) that ends in a [`Summary`] (`summary.rs`);
//! the second pass ([`Backward`], `second_pass.rs`); the sums that add a pass across
//! processes ([`Sums`], `sums.rs`); the [`Posterior`] prediction uses (`posterior.rs`);
//! and the count of an evaluation's work ([`Work`], `work.rs`).

mod approx;
mod first_pass;
mod kuu_factor;
mod posterior;
mod second_pass;
mod summary;
mod sums;
mod work;

pub use approx::Approx;
pub use first_pass::{Accumulator, ChunkValues};
pub use posterior::{LatentPrior, Posterior};
pub use second_pass::Backward;
pub use summary::Summary;
pub use sums::Sums;
pub use work::Work;

use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::linalg::{self, Jitter};
use crate::scratch::Scratch;
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

/// The objective and its adjoints.
#[derive(Clone, Debug)]
pub struct Adjoints {
    pub nlml: f64,
    /// Absolute jitter that was added to Kuu's diagonal.
    pub jitter: f64,
    pub d_kuf: DMatrix<f64>,
    /// Symmetric; pair it with ∂Kuu/∂θ entry by entry (the jitter counts as part of Kuu).
    /// For a diagonal Kuu only its diagonal matters.
    pub d_kuu: DMatrix<f64>,
    /// ∂/∂kdiag — empty for DTC.
    pub d_kdiag: Vec<f64>,
    pub d_noise: f64,
}

impl Adjoints {
    /// Give the adjoints' memory back (to the scratch of the evaluation that made them).
    pub fn recycle(self, scratch: &Scratch) {
        scratch.give_matrix(self.d_kuf);
        scratch.give_matrix(self.d_kuu);
        scratch.give(self.d_kdiag);
    }
}

/// Columns of V processed as one block: a block of V, its scaled copy and an m×m
/// accumulator stay in cache, and the products on it still run at gemm speed.
pub const BLOCK: usize = 256;

/// The m×m work of an evaluation (factorisations, inverses, sandwiches) runs on the
/// calling thread: it is O(m³) against the passes' O(n·m²), and faer's parallel
/// versions of it allocate on every call.
const SMALL: Par = Par::Seq;

/// Cut n columns of m rows (`cols`, empty when there is no such matrix) and two
/// n-vectors (each of length n or empty) into the stripes of `linalg::stripe_len`:
/// (first column, its columns, its entries of each vector).
#[allow(clippy::type_complexity)] // the stripe's pieces, named in the doc comment
fn stripes<'a>(
    n: usize,
    m: usize,
    cols: &'a mut [f64],
    a: &'a mut [f64],
    b: &'a mut [f64],
) -> linalg::Stripes<(usize, &'a mut [f64], &'a mut [f64], &'a mut [f64])> {
    let len = linalg::stripe_len(n);
    let mut cols = cols.chunks_mut((m * len).max(1));
    let mut a = a.chunks_mut(len);
    let mut b = b.chunks_mut(len);
    linalg::stripe_array((0..n.div_ceil(len)).map(|s| {
        (
            s * len,
            cols.next().unwrap_or_default(),
            a.next().unwrap_or_default(),
            b.next().unwrap_or_default(),
        )
    }))
}

/// Check the shapes and the noise of one chunk.
fn check_chunk(lr: &LowRank, y: &[f64]) -> Result<()> {
    let (m, n) = lr.kuf.shape();
    if m == 0 {
        return Err(Error::input("likelihood core: no features"));
    }
    if y.len() != n || lr.kuu.size() != m || (lr.approx.uses_diagonal() && lr.kdiag.len() != n) {
        return Err(Error::input("likelihood core: inconsistent shapes"));
    }
    Ok(())
}

/// The objective alone (no adjoints).
pub fn nlml(lr: &LowRank, y: &[f64], exec: &Exec) -> Result<f64> {
    finite(summary(lr, y, exec)?.nlml())
}

/// The summary of the data (for the NLML and the posterior together).
pub fn summary(lr: &LowRank, y: &[f64], exec: &Exec) -> Result<Summary> {
    check_chunk(lr, y)?;
    if y.is_empty() {
        return Err(Error::input("likelihood core: no data"));
    }
    let mut acc = Accumulator::new(lr.kuu, lr.jitter, lr.approx, lr.noise, exec)?;
    acc.add(lr, y, exec, false)?;
    acc.finish(exec)
}

fn finite(x: f64) -> Result<f64> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(Error::numerical("the NLML is not finite"))
    }
}

/// The objective and all adjoints, O(n·m²): the whole data set as one chunk.
pub fn nlml_and_adjoints(lr: &LowRank, y: &[f64], exec: &Exec) -> Result<Adjoints> {
    check_chunk(lr, y)?;
    if y.is_empty() {
        return Err(Error::input("likelihood core: no data"));
    }
    let mut acc = Accumulator::new(lr.kuu, lr.jitter, lr.approx, lr.noise, exec)?;
    let values = acc.add(lr, y, exec, true)?;
    let summary = acc.finish(exec)?;
    let nlml = finite(summary.nlml_in(&exec.scratch))?;
    let jitter = summary.jitter;
    let mut back = Backward::new(summary, exec);
    let (d_kuf, d_kdiag) = back.chunk(lr, y, values, exec)?;
    let (d_kuu, d_noise) = back.finish(exec);
    Ok(Adjoints {
        nlml,
        jitter,
        d_kuf,
        d_kuu,
        d_kdiag,
        d_noise,
    })
}

/// The posterior of docs/methods.md §1.4 (see [`Summary::posterior`]).
pub fn posterior(lr: &LowRank, y: &[f64], degenerate: bool, exec: &Exec) -> Result<Posterior> {
    Ok(summary(lr, y, exec)?.posterior(degenerate, exec.par))
}

#[cfg(test)]
mod tests;
