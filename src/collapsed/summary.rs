//! The core's O(m²) summary of the data once folded in: the objective, and the
//! posterior it gives (docs/methods.md §1.4); online PSDS grows one a point at a time.

use super::approx::Approx;
use super::inputs::Kuu;
use super::kuu_factor::KuuFactor;
use super::posterior::{LatentPrior, Posterior};
use crate::error::Result;
use crate::exec::{Exec, Par};
use crate::linalg::{self, Jitter};
use crate::scratch::Scratch;
use nalgebra::{DMatrix, DVector};
use std::f64::consts::PI;

/// What the objective and the posterior need once the data have been folded in: the
/// factors of Kuu and of `A = I + V Λ⁻¹ Vᵀ`, `β = V Λ⁻¹ y`, and three sums over the
/// data. O(m²) to keep, so a model that grows one sample at a time (online PSDS)
/// keeps only this.
#[derive(Clone, Debug)]
pub struct Summary {
    pub(super) kuu: KuuFactor,
    pub(super) jitter: f64,
    pub(super) approx: Approx,
    pub(super) noise: f64,
    /// A itself (both triangles) and its Cholesky factor.
    pub(super) a: DMatrix<f64>,
    pub(super) la: DMatrix<f64>,
    pub(super) beta: DVector<f64>,
    /// Σ y_i²/Λ_i
    pub(super) quad: f64,
    /// ½ Σ log Λ_i
    pub(super) half_logdet_lambda: f64,
    /// Σ e(d_i), the approximation's extra term.
    pub(super) extra: f64,
    pub(super) n: usize,
}

impl Summary {
    /// DTC with noise σ² and no data yet (A = I): the start of a model that grows by
    /// [`Summary::add_dtc`].
    pub fn empty_dtc(kuu: Kuu, jitter: Jitter, noise: f64) -> Result<Summary> {
        let (kuu, jitter) = KuuFactor::new(kuu, jitter, &Exec::sequential())?;
        let m = match &kuu {
            KuuFactor::Dense(l) => l.nrows(),
            KuuFactor::Diagonal(l) => l.len(),
        };
        Ok(Summary {
            kuu,
            jitter,
            approx: Approx::Dtc,
            noise,
            a: DMatrix::identity(m, m),
            la: DMatrix::identity(m, m),
            beta: DVector::zeros(m),
            quad: 0.0,
            half_logdet_lambda: 0.0,
            extra: 0.0,
            n: 0,
        })
    }

    /// Fold one data point into a DTC summary: `kuf_col` (m, overwritten) and y.
    /// A rank-one update of chol(A): O(m²).
    pub fn add_dtc(&mut self, kuf_col: &mut [f64], y: f64) -> Result<()> {
        let noise = self.noise;
        self.kuu.solve_block(kuf_col, kuf_col.len());
        let inv_s = 1.0 / noise.sqrt();
        for (b, v) in self.beta.iter_mut().zip(kuf_col.iter_mut()) {
            *b += *v * y / noise;
            *v *= inv_s;
        }
        // A += v vᵀ (v = L⁻¹k/σ), then the same update of its factor
        for (j, vj) in kuf_col.iter().enumerate() {
            self.a
                .column_mut(j)
                .iter_mut()
                .zip(kuf_col.iter())
                .for_each(|(a, vi)| *a += vi * vj);
        }
        linalg::rank_one_update(&mut self.la, kuf_col)?;
        self.quad += y * y / noise;
        self.half_logdet_lambda += 0.5 * noise.ln();
        self.n += 1;
        Ok(())
    }

    /// Data points folded in.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Absolute jitter that was added to Kuu's diagonal.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The approximation the data were folded in with.
    pub fn approx(&self) -> Approx {
        self.approx
    }

    /// Cholesky factor of A = I + V Λ⁻¹ Vᵀ.
    pub fn a_factor(&self) -> &DMatrix<f64> {
        &self.la
    }

    /// γ = L_A⁻¹ β (m×1, in memory from `scratch`).
    pub(super) fn gamma(&self, scratch: &Scratch) -> DMatrix<f64> {
        let mut g = scratch.matrix(self.beta.len(), 1);
        g.copy_from_slice(self.beta.as_slice());
        linalg::solve_lower(&self.la, &mut g, Par::Seq);
        g
    }

    /// The objective: NLML (FITC, DTC) or its bound (VFE, power EP).
    pub fn nlml(&self) -> f64 {
        self.nlml_in(&Scratch::default())
    }

    /// [`Summary::nlml`] with its m-vector from `scratch`.
    pub fn nlml_in(&self, scratch: &Scratch) -> f64 {
        let gamma = self.gamma(scratch);
        let v = 0.5 * (self.quad - gamma.norm_squared())
            + linalg::half_logdet(&self.la)
            + self.half_logdet_lambda
            + 0.5 * self.n as f64 * (2.0 * PI).ln()
            + self.extra;
        scratch.give_matrix(gamma);
        v
    }

    /// Give the summary's memory back.
    pub fn recycle(self, scratch: &Scratch) {
        self.kuu.recycle(scratch);
        scratch.give_matrix(self.a);
        scratch.give_matrix(self.la);
        scratch.give_vector(self.beta);
    }

    /// The predictive quantities of docs/methods.md §1.4. `degenerate` selects the
    /// SSGP/EigenGP variance `k*ᵀ(Kuu + Kuf Λ⁻¹ Kfu)⁻¹ k*` in place of
    /// `k** − k*ᵀ[Kuu⁻¹ − Σ⁻¹]k*`.
    pub fn posterior(&self, degenerate: bool, par: Par) -> Posterior {
        let m = self.beta.len();
        // w = L⁻ᵀ A⁻¹ β
        let mut w = DMatrix::from_column_slice(m, 1, self.beta.as_slice());
        linalg::solve_lower(&self.la, &mut w, par);
        linalg::solve_lower_transpose(&self.la, &mut w, par);
        self.kuu.solve_transpose(&mut w, par);
        let s = if degenerate {
            // S = −Σ⁻¹ = −(L_A⁻¹L⁻¹)ᵀ(L_A⁻¹L⁻¹), a Gram product, so −k*ᵀSk* stays ≥ 0
            // even when A is nearly singular (σ² → 0 on noiseless data)
            let mut x = self.kuu.inverse(par);
            linalg::solve_lower(&self.la, &mut x, par);
            let s = linalg::mul(&x, true, &x, false, par) * -1.0;
            (&s + s.transpose()) * 0.5
        } else {
            // Kuu⁻¹ − Σ⁻¹ = L⁻ᵀ (I − A⁻¹) L⁻¹
            let a_inv = linalg::chol_inverse(&self.la, par);
            self.kuu.sandwich(DMatrix::identity(m, m) - a_inv, par)
        };
        Posterior {
            mean_weights: w.as_slice().to_vec(),
            var_matrix: s,
            latent_prior: if degenerate {
                LatentPrior::None
            } else {
                LatentPrior::Kernel
            },
        }
    }
}
