//! EP's estimate of the log evidence and its gradient for the low-rank families
//! (Naish-Guzman & Holden 2007; GPML's `infFITC_EP`), through the Gaussian core.
//!
//! With site variances s_i = 1/τ̃_i and site means μ̃_i = ν̃_i/τ̃_i, the EP estimate is
//! (Rasmussen & Williams 2006, eq. 3.65)
//!   log Z_EP = log N(μ̃ | 0, K̃ + S) + Σ_i [log Z_i + ½ log 2π + ½ log(σ²₋ᵢ + s_i)
//!              + (μ₋ᵢ − μ̃_i)² / (2(σ²₋ᵢ + s_i))],
//! K̃ the approximation's prior covariance, (μ₋ᵢ, σ²₋ᵢ) the cavities, Z_i the tilted
//! normalisers. The first term is the Gaussian evidence of a regression with noise S,
//! which the core evaluates with a scalar noise only: written as
//! K̃ + S = S^½ (S^-½ K̃ S^-½ + I) S^½ it is the core's problem with Kuf·S^-½, kdiag·τ̃,
//! targets ν̃/√τ̃ and noise 1, plus ½ log|S|, which cancels against the cavity terms'
//! −½ log τ̃. Power EP's extra term (1−α)/(2α)·log(1 + α d_i τ̃_i) (GPML's `apxSparse`
//! with s = α; Bui, Yan & Turner 2017) is the core's, unchanged by the scaling.
//!
//! The gradient with respect to the kernel, the inducing inputs or any family parameter
//! is the Gaussian term's at fixed sites, as GPML's: at EP's fixed point the estimate is
//! stationary in the sites, so this is the total derivative for FITC, DTC and the exact
//! GP. (For power EP at α < 1 the extra term breaks that stationarity: there it is the
//! partial derivative at fixed sites.)

use super::posterior::{Cavities, EpPosterior, EpPrior};
use super::sites::{Sites, probit_tilted, sign_of};
use crate::collapsed::{self, Adjoints, Approx, Kuu, LowRank, Posterior};
use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::linalg;
use nalgebra::DMatrix;
use std::f64::consts::PI;

/// The sum over sites of log Z_i + ½ log(1 + τ̃σ²₋ᵢ) + (μ₋ᵢτ̃ − ν̃)²/(2τ̃(1 + τ̃σ²₋ᵢ)):
/// the cavity terms with their ½ log 2π and −½ log τ̃ taken out (a flat site adds
/// log Z_i alone).
pub fn site_terms(y: &[f64], sites: &Sites, cav: &Cavities) -> f64 {
    (0..y.len())
        .map(|i| {
            let (tau, nu) = (sites.tau[i], sites.nu[i]);
            let (mu, var) = (cav.mean[i], cav.var[i]);
            let t = 1.0 + tau * var;
            let quad = if tau > 0.0 {
                (mu * tau - nu).powi(2) / (2.0 * tau * t)
            } else {
                0.0
            };
            probit_tilted(sign_of(y[i]), mu, var).log_z + 0.5 * t.ln() + quad
        })
        .sum()
}

/// The whitened prior V = L⁻¹Kuf, L the factor of Kuu with the same jitter the core
/// finds, and g = a·(kdiag − ‖v_i‖²) with the approximation's weight a (FITC 1, DTC 0,
/// power EP α).
/// The core's `noise` is not read: the probit model has no Gaussian noise.
pub fn low_rank_prior(lr: &LowRank) -> Result<EpPrior> {
    let weight = match lr.approx {
        Approx::Fitc => 1.0,
        Approx::Dtc => 0.0,
        Approx::Pep { alpha } => alpha,
        Approx::Vfe => {
            return Err(Error::input(
                "EP runs with FITC, DTC or power EP; VFE's bound is a variational method \
                 (use svgp for a variational classifier, or power EP with a small alpha)",
            ));
        }
    };
    let v = whiten(lr.kuu, lr.jitter, lr.kuf)?;
    let g = (0..v.ncols())
        .map(|i| {
            if weight == 0.0 {
                0.0
            } else {
                weight * (lr.kdiag[i] - v.column(i).norm_squared())
            }
        })
        .collect();
    Ok(EpPrior { v, g })
}

/// L⁻¹K for Kuu = LLᵀ under the jitter policy (a diagonal Kuu: a scaling).
pub fn whiten(kuu: Kuu, jitter: linalg::Jitter, k: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let mut v = k.clone();
    match kuu {
        Kuu::Dense(kuu) => {
            let (l, _) = linalg::cholesky_jittered(kuu, jitter, Par::Seq)?;
            linalg::solve_lower(&l, &mut v, Par::Seq);
        }
        Kuu::Diagonal(d) => {
            let j = match jitter {
                linalg::Jitter::Fixed(j) => j,
                // the core's first try, which a positive diagonal passes
                linalg::Jitter::Auto { scale } => linalg::JITTER_START * scale,
            };
            for (r, d) in d.iter().enumerate() {
                v.row_mut(r).scale_mut(1.0 / (d + j).sqrt());
            }
        }
    }
    Ok(v)
}

/// The core's problem whose Gaussian evidence is EP's first term: Kuf·S^-½, kdiag·τ̃,
/// targets ν̃/√τ̃ (0 at a flat site), noise 1 (see the module's notes).
struct Scaled {
    kuf: DMatrix<f64>,
    kdiag: Vec<f64>,
    targets: Vec<f64>,
    root: Vec<f64>,
}

impl Scaled {
    fn new(lr: &LowRank, sites: &Sites) -> Scaled {
        let root: Vec<f64> = sites.tau.iter().map(|t| t.sqrt()).collect();
        let mut kuf = lr.kuf.clone();
        for (i, r) in root.iter().enumerate() {
            kuf.column_mut(i).scale_mut(*r);
        }
        let kdiag = if lr.approx.uses_diagonal() {
            lr.kdiag
                .iter()
                .zip(&sites.tau)
                .map(|(k, t)| k * t)
                .collect()
        } else {
            Vec::new()
        };
        let targets = (0..root.len())
            .map(|i| {
                if root[i] > 0.0 {
                    sites.nu[i] / root[i]
                } else {
                    0.0
                }
            })
            .collect();
        Scaled {
            kuf,
            kdiag,
            targets,
            root,
        }
    }

    fn low_rank<'a>(&'a self, lr: &LowRank<'a>) -> LowRank<'a> {
        LowRank {
            kuf: &self.kuf,
            kuu: lr.kuu,
            approx: lr.approx,
            kdiag: &self.kdiag,
            noise: 1.0,
            jitter: lr.jitter,
        }
    }
}

/// −log Z_EP and its adjoints with respect to Kuf, Kuu and kdiag at converged sites
/// (∂/∂σ² is 0: the probit model has no Gaussian noise).
pub fn low_rank_evidence(
    lr: &LowRank,
    y: &[f64],
    post: &EpPosterior,
    exec: &Exec,
) -> Result<Adjoints> {
    let n = y.len();
    let scaled = Scaled::new(lr, &post.sites);
    let mut adj = collapsed::nlml_and_adjoints(&scaled.low_rank(lr), &scaled.targets, exec)?;
    adj.nlml += -0.5 * n as f64 * (2.0 * PI).ln() - site_terms(y, &post.sites, &post.cavities);
    for (i, r) in scaled.root.iter().enumerate() {
        adj.d_kuf.column_mut(i).scale_mut(*r);
    }
    for (d, t) in adj.d_kdiag.iter_mut().zip(&post.sites.tau) {
        *d *= t;
    }
    adj.d_noise = 0.0;
    if !adj.nlml.is_finite() {
        return Err(Error::numerical("EP: the log evidence is not finite"));
    }
    Ok(adj)
}

/// EP's q(u) as the core's [`Posterior`]: the scaled problem's Gaussian posterior over
/// the inducing values is EP's (the scaling only rewrites the site factors), so its
/// latent mean and variance at any input are EP's, and a model file stores and
/// predicts with it like any other.
pub fn low_rank_posterior(
    lr: &LowRank,
    post: &EpPosterior,
    degenerate: bool,
    exec: &Exec,
) -> Result<Posterior> {
    let scaled = Scaled::new(lr, &post.sites);
    collapsed::posterior(&scaled.low_rank(lr), &scaled.targets, degenerate, exec)
}

/// Predictions of EP: the latent mean and variance, and the probability of class 1.
#[derive(Clone, Debug)]
pub struct Prediction {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
    pub probability: Vec<f64>,
}

impl Prediction {
    pub fn of((mean, var): (Vec<f64>, Vec<f64>)) -> Prediction {
        let probability = mean
            .iter()
            .zip(&var)
            .map(|(m, v)| super::sites::probit_probability(*m, *v))
            .collect();
        Prediction {
            mean,
            var,
            probability,
        }
    }
}
