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

use super::posterior::{self, Cavities, EpPosterior, EpPrior};
use super::sites::{EpSettings, Sites, probit_tilted, sign_of};
use crate::collapsed::{self, Adjoints, Approx, Kuu, LowRank};
use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::linalg;
use crate::methods::lowrank::{Family, KuuMatrix, LowRankMethod, Parts};
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
pub fn low_rank_prior(parts: &Parts, approx: Approx) -> Result<EpPrior> {
    let weight = match approx {
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
    let v = whiten(&parts.kuu, parts.jitter, &parts.kuf)?;
    let g = (0..v.ncols())
        .map(|i| {
            if weight == 0.0 {
                0.0
            } else {
                weight * (parts.kdiag[i] - v.column(i).norm_squared())
            }
        })
        .collect();
    Ok(EpPrior { v, g })
}

/// L⁻¹K for Kuu = LLᵀ under the jitter policy (a diagonal Kuu: a scaling).
pub fn whiten(kuu: &KuuMatrix, jitter: linalg::Jitter, k: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let mut v = k.clone();
    match kuu {
        KuuMatrix::Dense(kuu) => {
            let (l, _) = linalg::cholesky_jittered(kuu, jitter, Par::Seq)?;
            linalg::solve_lower(&l, &mut v, Par::Seq);
        }
        KuuMatrix::Diagonal(d) => {
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

/// −log Z_EP and its adjoints with respect to Kuf, Kuu and kdiag at converged sites
/// (∂/∂σ² is 0: the probit model has no Gaussian noise).
pub fn low_rank_evidence(
    parts: &Parts,
    approx: Approx,
    y: &[f64],
    post: &EpPosterior,
    exec: &Exec,
) -> Result<Adjoints> {
    let n = y.len();
    let (tau, nu) = (&post.sites.tau, &post.sites.nu);
    let root: Vec<f64> = tau.iter().map(|t| t.sqrt()).collect();
    let mut kuf = parts.kuf.clone();
    for (i, r) in root.iter().enumerate() {
        kuf.column_mut(i).scale_mut(*r);
    }
    let kdiag: Vec<f64> = parts.kdiag.iter().zip(tau).map(|(k, t)| k * t).collect();
    let targets: Vec<f64> = (0..n)
        .map(|i| if tau[i] > 0.0 { nu[i] / root[i] } else { 0.0 })
        .collect();
    let lr = LowRank {
        kuf: &kuf,
        kuu: match &parts.kuu {
            KuuMatrix::Dense(k) => Kuu::Dense(k),
            KuuMatrix::Diagonal(k) => Kuu::Diagonal(k),
        },
        approx,
        kdiag: if approx.uses_diagonal() { &kdiag } else { &[] },
        noise: 1.0,
        jitter: parts.jitter,
    };
    let mut adj = collapsed::nlml_and_adjoints(&lr, &targets, exec)?;
    adj.nlml += -0.5 * n as f64 * (2.0 * PI).ln() - site_terms(y, &post.sites, &post.cavities);
    for (i, r) in root.iter().enumerate() {
        adj.d_kuf.column_mut(i).scale_mut(*r);
    }
    for (d, t) in adj.d_kdiag.iter_mut().zip(tau) {
        *d *= t;
    }
    adj.d_noise = 0.0;
    if !adj.nlml.is_finite() {
        return Err(Error::numerical("EP: the log evidence is not finite"));
    }
    Ok(adj)
}

/// EP on a low-rank method's family at a state: the fixed point, −log Z_EP and its
/// gradient in the family's packed order (the noise entry 0).
pub struct EpFit {
    pub nlz: f64,
    pub grad: Vec<f64>,
    pub posterior: EpPosterior,
}

/// Run EP for `method`'s family at `state` on inputs `x` and 0/1 labels `y`, from
/// `start` (the sites of a previous evaluation, as GPML keeps them between calls) or
/// flat sites, and return −log Z_EP with its gradient.
#[allow(clippy::too_many_arguments)] // the family, its state, the data, EP's settings
pub fn fit<F: Family>(
    method: &LowRankMethod<F>,
    state: &F::State,
    x: &DMatrix<f64>,
    y: &[f64],
    approx: Approx,
    settings: &EpSettings,
    start: Option<Sites>,
    exec: &Exec,
) -> Result<EpFit> {
    let (parts, extra) = method.family.parts(state, x, true, exec)?;
    let prior = low_rank_prior(&parts, approx)?;
    let posterior = posterior::run(&prior, y, start, settings)?;
    let adj = low_rank_evidence(&parts, approx, y, &posterior, exec)?;
    let grad = method
        .family
        .pull_back(state, x, &parts, extra, &adj, exec)?;
    Ok(EpFit {
        nlz: adj.nlml,
        grad,
        posterior,
    })
}

/// The latent mean and variance and p(y = 1) at inputs `xs` under a fitted EP.
pub fn predict<F: Family>(
    method: &LowRankMethod<F>,
    state: &F::State,
    posterior: &EpPosterior,
    xs: &DMatrix<f64>,
    exec: &Exec,
) -> Result<Prediction> {
    let (parts, _) = method.family.parts(state, xs, false, exec)?;
    let vs = whiten(&parts.kuu, parts.jitter, &parts.kuf)?;
    let kss = if method.family.degenerate() {
        vs.column_iter().map(|c| c.norm_squared()).collect()
    } else {
        parts.kdiag.clone()
    };
    Ok(Prediction::of(posterior.latent(&vs, &kss)))
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
