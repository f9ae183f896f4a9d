//! Online PSDS (METHODS.md §4, paper §4.2): with σ0², σ² and the frequencies fixed,
//! keep the Cholesky factor of `A = ΦᵀΦ + (rσ²/σ0²) I`, `Φᵀy`, `yᵀy` and n, fold in
//! one sample at a time with a rank-one update (O(r²)), and predict or give the
//! NLML at any moment. Memory is O(r²), independent of n.
//!
//! Everything is in model units (inputs as the model sees them, targets with the
//! model's mean removed); [`crate::cli`]'s `stream` converts.

use super::spectrum::{features_of, frequencies};
use crate::error::{Error, Result};
use crate::linalg;
use crate::model_file::ModelFile;
use nalgebra::DMatrix;
use std::f64::consts::PI;

#[derive(Clone, Debug)]
pub struct OnlinePsds {
    /// Absolute frequencies, r×D.
    w: DMatrix<f64>,
    signal_variance: f64,
    noise_variance: f64,
    /// Lower Cholesky factor of A (2r×2r).
    chol: DMatrix<f64>,
    /// Φᵀy (2r).
    phi_y: Vec<f64>,
    /// yᵀy.
    yy: f64,
    n: usize,
    /// Feature scratch for `add` (2r).
    phi: Vec<f64>,
}

impl OnlinePsds {
    /// An empty model with a psds/ssgp model file's frequencies and hyperparameters.
    pub fn from_model(model: &ModelFile) -> Result<OnlinePsds> {
        model.check_hyper()?;
        Self::new(
            frequencies(model)?,
            model.hyper.signal_variance,
            model.hyper.noise_variance,
        )
    }

    /// An empty model: frequencies w (r×D), σ0², σ².
    pub fn new(w: DMatrix<f64>, signal_variance: f64, noise_variance: f64) -> Result<OnlinePsds> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        if !ok(signal_variance) || !ok(noise_variance) {
            return Err(Error::input(
                "online PSDS needs positive, finite signal and noise variances",
            ));
        }
        if w.nrows() == 0 || w.iter().any(|v| !v.is_finite()) {
            return Err(Error::input(
                "online PSDS needs at least one finite spectral point",
            ));
        }
        let m = 2 * w.nrows();
        let c = w.nrows() as f64 * noise_variance / signal_variance;
        Ok(OnlinePsds {
            w,
            signal_variance,
            noise_variance,
            chol: DMatrix::from_diagonal_element(m, m, c.sqrt()),
            phi_y: vec![0.0; m],
            yy: 0.0,
            n: 0,
            phi: vec![0.0; m],
        })
    }

    /// Spectral points r.
    pub fn r(&self) -> usize {
        self.w.nrows()
    }

    pub fn dim(&self) -> usize {
        self.w.ncols()
    }

    /// Samples folded in so far.
    pub fn n(&self) -> usize {
        self.n
    }

    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// Fold in one sample: A ← A + φφᵀ by a rank-one Cholesky update, O(r²).
    pub fn add(&mut self, x: &[f64], y: f64) -> Result<()> {
        if x.len() != self.dim() {
            return Err(Error::input(format!(
                "a sample has {} inputs but the model has {}",
                x.len(),
                self.dim()
            )));
        }
        if !y.is_finite() || x.iter().any(|v| !v.is_finite()) {
            return Err(Error::input("a sample holds a value that is not finite"));
        }
        let mut phi = std::mem::take(&mut self.phi);
        features_of(&self.w, x, &mut phi);
        for (b, p) in self.phi_y.iter_mut().zip(&phi) {
            *b += p * y;
        }
        let result = rank_one_update(&mut self.chol, &mut phi);
        self.phi = phi;
        result?;
        self.yy += y * y;
        self.n += 1;
        Ok(())
    }

    /// A⁻¹Φᵀy, O(r²).
    fn weights(&self) -> DMatrix<f64> {
        let mut a = DMatrix::from_column_slice(self.phi_y.len(), 1, &self.phi_y);
        linalg::solve_lower(&self.chol, &mut a);
        linalg::solve_lower_transpose(&self.chol, &mut a);
        a
    }

    /// Predictive mean and latent variance at t inputs (t×D, model units):
    /// `mean = φ*ᵀA⁻¹Φᵀy`, `var_f = σ² φ*ᵀA⁻¹φ*` (add σ² for a noisy target).
    pub fn predict(&self, x: &DMatrix<f64>) -> Result<(Vec<f64>, Vec<f64>)> {
        if x.ncols() != self.dim() {
            return Err(Error::input(format!(
                "the inputs have {} columns but the model has {}",
                x.ncols(),
                self.dim()
            )));
        }
        let phi = super::spectrum::features(&self.w, x);
        let alpha = self.weights();
        let mean = phi.tr_mul(&alpha);
        let mut v = phi;
        linalg::solve_lower(&self.chol, &mut v);
        let var = v
            .column_iter()
            .map(|c| self.noise_variance * c.norm_squared())
            .collect();
        Ok((mean.as_slice().to_vec(), var))
    }

    /// NLML of the samples so far (closed form of METHODS.md §4):
    /// `[yᵀy − ‖L⁻¹Φᵀy‖²]/(2σ²) + Σ log diag L − r log(rσ²/σ0²) + n/2 log(2πσ²)`.
    pub fn nlml(&self) -> f64 {
        let r = self.r() as f64;
        let s2 = self.noise_variance;
        let mut b = DMatrix::from_column_slice(self.phi_y.len(), 1, &self.phi_y);
        linalg::solve_lower(&self.chol, &mut b);
        (self.yy - b.norm_squared()) / (2.0 * s2) + linalg::half_logdet(&self.chol)
            - r * (r * s2 / self.signal_variance).ln()
            + 0.5 * self.n as f64 * (2.0 * PI * s2).ln()
    }

    /// The current Cholesky factor of A (lower).
    pub fn cholesky(&self) -> &DMatrix<f64> {
        &self.chol
    }
}

/// L ← chol(LLᵀ + xxᵀ) in place, O(m²); `x` is overwritten. Column-major storage
/// makes the inner loop run down a contiguous column.
pub fn rank_one_update(l: &mut DMatrix<f64>, x: &mut [f64]) -> Result<()> {
    let m = l.nrows();
    let data = l.as_mut_slice();
    for k in 0..m {
        let col = &mut data[k * m..(k + 1) * m];
        let lkk = col[k];
        let r = lkk.hypot(x[k]);
        if !(r.is_finite() && r > 0.0) {
            return Err(Error::numerical(
                "the online Cholesky update broke down (a non-finite value)",
            ));
        }
        let (c, s) = (r / lkk, x[k] / lkk);
        col[k] = r;
        let (ci, xi) = (&mut col[k + 1..], &mut x[k + 1..]);
        for (li, xv) in ci.iter_mut().zip(xi.iter_mut()) {
            *li = (*li + s * *xv) / c;
            *xv = c * *xv - s * *li;
        }
    }
    Ok(())
}
