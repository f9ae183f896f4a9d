//! Online PSDS (docs/methods.md §4.4, paper §4.2): with σ0², σ² and the frequencies fixed,
//! keep the likelihood core's [`Summary`] of the samples so far — the Cholesky factor
//! of `A = I + V Vᵀ/σ²` with `V = Kuu^{-1/2} Φᵀ`, `β = V y/σ²` and three sums — fold
//! in one sample at a time with a rank-one update (O(r²)), and predict or give the
//! NLML at any moment from the same core code as the batch model, with the same Kuu
//! (jitter included). Memory is O(r²), independent of n.
//!
//! Everything is in model units (inputs as the model sees them, targets with the
//! model's mean removed); [`crate::cli`]'s `stream` converts.

use super::spectrum::{features, features_of, frequencies, jitter, kuu_diagonal};
use crate::collapsed::{Kuu, Summary};
use crate::error::{Error, Result};
use crate::exec::Par;
use crate::linalg::Jitter;
use crate::model_file::{ModelFile, Witness};
use nalgebra::DMatrix;

#[derive(Clone, Debug)]
pub struct OnlinePsds {
    /// Absolute frequencies, r×D.
    w: DMatrix<f64>,
    signal_variance: f64,
    noise_variance: f64,
    summary: Summary,
    /// Feature scratch for `add` (2r).
    phi: Vec<f64>,
}

impl OnlinePsds {
    /// An empty model with a psds/ssgp model file's frequencies, hyperparameters and
    /// jitter (check the model first: `ModelFile::check`).
    pub fn from_model(model: &ModelFile) -> Result<OnlinePsds> {
        if model.composed.is_some() {
            // its features are the composed kernel's (docs/methods.md §4.5), with
            // amplitudes per point: not the equal-weight frequencies folded in here
            return Err(crate::error::Error::input(format!(
                "online PSDS takes a psds or ssgp model of a plain kernel (se, matern*); this                  {} model's kernel is built from parts ([kernel]), whose spectral points are                  not folded in one row at a time; refit it with `sgpw fit --train FILE` instead",
                model.method
            )));
        }
        model.check_shared(&[Witness::lengthscales(model)], true)?;
        Self::with_jitter(
            frequencies(model)?,
            model.hyper.signal_variance,
            model.collapsed_noise()?,
            jitter(model),
        )
    }

    /// An empty model: frequencies w (r×D), σ0², σ², no jitter.
    pub fn new(w: DMatrix<f64>, signal_variance: f64, noise_variance: f64) -> Result<OnlinePsds> {
        Self::with_jitter(w, signal_variance, noise_variance, Jitter::Fixed(0.0))
    }

    fn with_jitter(
        w: DMatrix<f64>,
        signal_variance: f64,
        noise_variance: f64,
        jitter: Jitter,
    ) -> Result<OnlinePsds> {
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
        let kuu = kuu_diagonal(signal_variance, w.nrows());
        let summary = Summary::empty_dtc(Kuu::Diagonal(&kuu), jitter, noise_variance)?;
        Ok(OnlinePsds {
            phi: vec![0.0; 2 * w.nrows()],
            w,
            signal_variance,
            noise_variance,
            summary,
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
        self.summary.n()
    }

    pub fn signal_variance(&self) -> f64 {
        self.signal_variance
    }

    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// Fold in one sample: a rank-one update of chol(A), O(r²).
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
        let result = self.summary.add_dtc(&mut phi, y);
        self.phi = phi;
        result
    }

    /// Predictive mean and latent variance at t inputs (t×D, model units), from the
    /// core's degenerate posterior (add σ² for a noisy target).
    pub fn predict(&self, x: &DMatrix<f64>) -> Result<(Vec<f64>, Vec<f64>)> {
        if x.ncols() != self.dim() {
            return Err(Error::input(format!(
                "the inputs have {} columns but the model has {}",
                x.ncols(),
                self.dim()
            )));
        }
        let post = self.summary.posterior(true, Par::Seq);
        let phi = features(&self.w, x, Par::Seq);
        Ok(post.predict(&phi, &[], Par::Seq))
    }

    /// NLML of the samples so far (the core's, from the summary).
    pub fn nlml(&self) -> f64 {
        self.summary.nlml()
    }

    /// The Cholesky factor of A = I + V Vᵀ/σ² (lower), V = Kuu^{-1/2}Φᵀ.
    pub fn cholesky(&self) -> &DMatrix<f64> {
        self.summary.a_factor()
    }
}
