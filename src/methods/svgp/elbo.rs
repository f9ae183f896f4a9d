//! SVGP's evidence lower bound in the whitened parameterisation (Hensman, Fusi &
//! Lawrence 2013; docs/methods.md §8): u = L v with L = chol(Kuu + jitter·I) and
//! q(v) = N(μ, Σ), Σ = R Rᵀ, R lower-triangular. With A = L⁻¹ Kub for a batch of B
//! points, the marginals of q(f_i) are
//!
//! ```text
//! mean_i = A_iᵀ μ,   var_i = k_ii − ‖A_i‖² + ‖Rᵀ A_i‖²,
//! ```
//!
//! the expected log-likelihood of a Gaussian likelihood is closed-form,
//!
//! ```text
//! E_q[log N(y_i | f_i, σ²)] = −½ log 2πσ² − ((y_i − mean_i)² + var_i) / 2σ²,
//! ```
//!
//! and ELBO = c Σ_batch E_q[…] − KL(q(v) ‖ N(0, I)) with c = n/B (the unbiased
//! minibatch estimate; c = 1 on the whole data) and
//! KL = ½ (‖R‖²_F + ‖μ‖² − m − Σ_j log R_jj²).
//!
//! The gradient (of the ELBO, to be maximised): with r = y − mean,
//! - ∂/∂μ = (c/σ²) A r − μ,
//! - ∂/∂Σ of the likelihood term = −(c/2σ²) A Aᵀ (the natural gradient uses it),
//! - ∂/∂R = lower(2 ∂/∂Σ·R) − R + diag(1/R_jj),
//! - the adjoint of A, Ā = (c/σ²)(μ rᵀ + A − Σ A); of Kub, L⁻ᵀ Ā; of Kuu, through
//!   the Cholesky factor (A = L⁻¹K gives L̄ = −L⁻ᵀ Ā Aᵀ, and dL = L Φ(L⁻¹ dKuu L⁻ᵀ)
//!   with Φ the lower triangle with its diagonal halved):
//!   K̄uu = −sym(L⁻ᵀ Φ(Ā Aᵀ) L⁻¹);
//! - ∂/∂k_ii = −c/2σ², ∂/∂σ² = c Σ (−1/2σ² + (r_i² + var_i)/2σ⁴).
//!
//! The kernel abstraction turns K̄ub, K̄uu into ∂/∂(σ0², ℓ, shape, Z), so any `--kernel`
//! works. Everything here is O(B·m² + m³).

use crate::error::Result;
use crate::exec::Par;
use crate::kernel::Kernel;
use crate::linalg::{self, Jitter, Shape};
use nalgebra::{DMatrix, DVector};
use std::f64::consts::PI;

/// q(v) = N(mean, chol·cholᵀ) over the whitened inducing outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Variational {
    pub mean: DVector<f64>,
    /// Lower-triangular R (its upper triangle is zero).
    pub chol: DMatrix<f64>,
}

impl Variational {
    /// The prior N(0, I): where GPflow's whitened SVGP starts.
    pub fn prior(m: usize) -> Variational {
        Variational {
            mean: DVector::zeros(m),
            chol: DMatrix::identity(m, m),
        }
    }

    pub fn len(&self) -> usize {
        self.mean.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mean.is_empty()
    }

    /// Σ = R Rᵀ.
    pub fn covariance(&self) -> DMatrix<f64> {
        &self.chol * self.chol.transpose()
    }

    /// KL(q(v) ‖ N(0, I)).
    pub fn kl(&self) -> f64 {
        let m = self.len() as f64;
        let logdet: f64 = (0..self.len())
            .map(|j| (self.chol[(j, j)] * self.chol[(j, j)]).ln())
            .sum();
        0.5 * (self.chol.norm_squared() + self.mean.norm_squared() - m - logdet)
    }
}

/// The model's prior part of one evaluation: kernel, inducing inputs, jitter policy
/// (the likelihood's part is the likelihood's: `gaussian_terms` takes the Gaussian's σ²).
pub struct Prior<'a> {
    pub kernel: &'a dyn Kernel,
    pub z: &'a DMatrix<f64>,
    pub jitter: Jitter,
}

/// Kuu = k(Z, Z) and its jittered Cholesky factor: shared by every batch of a step.
pub struct Factor {
    pub kuu: DMatrix<f64>,
    pub l: DMatrix<f64>,
    /// The absolute jitter added to Kuu's diagonal.
    pub jitter: f64,
}

impl Factor {
    pub fn new(prior: &Prior, par: Par) -> Result<Factor> {
        Factor::of_kuu(prior.kernel.gram(prior.z, par), prior.jitter, par)
    }

    /// The factor of a Kuu a feature family built (`features.rs`), under its jitter policy.
    pub fn of_kuu(kuu: DMatrix<f64>, jitter: Jitter, par: Par) -> Result<Factor> {
        let (l, jitter) = linalg::cholesky_jittered(&kuu, jitter, par)?;
        Ok(Factor { kuu, l, jitter })
    }
}

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// The value only.
    Value,
    /// The likelihood's gradients in μ and Σ only, what a natural-gradient step needs
    /// (the value is not computed: NaN).
    Natural,
    /// The value and the adjoints of Kub, Kuu, the prior diagonal and σ² (and ∂/∂μ),
    /// not ∂/∂Σ: what Adam on σ0², ℓ, σ², Z needs after a natural-gradient step.
    Model,
    /// Everything.
    All,
}

/// A block's k(Z, x) and A = L⁻¹ k(Z, x): they depend on Z and the hyperparameters
/// only, so the two evaluations of a natural-gradient step share them.
pub struct Projected {
    pub kub: DMatrix<f64>,
    pub a: DMatrix<f64>,
    /// The prior variances k(x_i, x_i) of the rows.
    pub kdiag: Vec<f64>,
    /// Features of a degenerate model (f = Kfu Kuu⁻¹ u exactly, the spectral
    /// families): the prior variance of f_i is then q_ii = ‖A_i‖², so var_i = ‖Rᵀ A_i‖²
    /// and `kdiag` plays no part.
    pub degenerate: bool,
}

pub fn project(prior: &Prior, factor: &Factor, x: &DMatrix<f64>, par: Par) -> Projected {
    let kub = prior.kernel.matrix(prior.z, x, par);
    project_kub(factor, kub, prior.kernel.diag(x), false, par)
}

/// The projection of a Kub (m×B) a feature family built, with the rows' prior variances.
pub fn project_kub(
    factor: &Factor,
    kub: DMatrix<f64>,
    kdiag: Vec<f64>,
    degenerate: bool,
    par: Par,
) -> Projected {
    let mut a = kub.clone();
    linalg::solve_lower(&factor.l, &mut a, par);
    Projected {
        kub,
        a,
        kdiag,
        degenerate,
    }
}

/// The ELBO's terms on one batch (or on the whole data) and its gradients.
#[derive(Clone, Debug)]
pub struct Terms {
    /// c Σ_batch E_q[log p(y_i | f_i)].
    pub expected_loglik: f64,
    /// ∂/∂μ of the likelihood term only (the KL's −μ is added by [`Terms::d_mean`]).
    pub d_mean_lik: DVector<f64>,
    /// ∂/∂Σ of the likelihood term, −(c/2σ²) A Aᵀ (symmetric).
    pub d_sigma_lik: DMatrix<f64>,
    /// Adjoint of Kub (m×B), when asked.
    pub d_kub: Option<DMatrix<f64>>,
    /// Adjoint of Kuu (symmetric), when asked (summed over batches: it is linear).
    pub d_kuu: Option<DMatrix<f64>>,
    /// ∂/∂k_ii per row (the kernel's `diag_grad` turns it into its parameters': a
    /// composed kernel's prior variance varies with x).
    pub d_kdiag: Vec<f64>,
    /// ∂/∂σ² (the Gaussian likelihood's).
    pub d_noise: f64,
    /// ∂/∂ log θ_k of another likelihood's parameters (`Likelihood::param_names`), when
    /// the adjoints are asked; empty for the Gaussian, whose σ² is `d_noise`.
    pub d_lik_params: Vec<f64>,
}

/// A block's targets and the scale its likelihood term gets: c = n/B for a minibatch
/// of B rows, 1 for a chunk of the whole data; and each row's log exposure, the offset
/// a count model adds to f inside its likelihood (poisson's `--exposure`; None: 0).
pub struct Rows<'a> {
    pub y: &'a [f64],
    pub c: f64,
    pub log_exposure: Option<&'a [f64]>,
}

/// The Gaussian likelihood's term, with noise variance σ² = `s2`, on the rows
/// projected as `proj`: value and, as `want` says, gradients.
pub fn gaussian_terms(
    s2: f64,
    factor: &Factor,
    q: &Variational,
    proj: &Projected,
    rows: Rows,
    want: Want,
    par: Par,
) -> Terms {
    // the Gaussian has no exposure (the option is poisson's)
    let Rows { y, c, .. } = rows;
    let m = q.len();
    let b = y.len();
    let a = &proj.a;
    let kdiag = &proj.kdiag;
    let mut resid = vec![0.0; b];
    let (mut sum, mut d_noise) = (0.0, 0.0);
    // Rᵀ A: the columns' norms are A_iᵀ Σ A_i (not needed by a natural-gradient step)
    // (R is lower-triangular, so each product with it skips the zero half)
    let rta = (want != Want::Natural).then(|| {
        let mut rta = DMatrix::zeros(m, b);
        linalg::gemm_shaped(
            &mut rta,
            Shape::Full,
            false,
            &q.chol,
            true,
            Shape::Upper,
            a,
            false,
            1.0,
            par,
        );
        rta
    });
    for i in 0..b {
        let ai = a.column(i);
        resid[i] = y[i] - ai.dot(&q.mean);
        if let Some(rta) = &rta {
            let var = if proj.degenerate {
                rta.column(i).norm_squared()
            } else {
                kdiag[i] - ai.norm_squared() + rta.column(i).norm_squared()
            };
            let sq = resid[i] * resid[i] + var;
            sum += -0.5 * (2.0 * PI * s2).ln() - sq / (2.0 * s2);
            d_noise += -0.5 / s2 + sq / (2.0 * s2 * s2);
        }
    }
    if rta.is_none() {
        sum = f64::NAN;
    }
    let mut terms = Terms {
        expected_loglik: c * sum,
        d_mean_lik: DVector::zeros(m),
        d_sigma_lik: DMatrix::zeros(m, m),
        d_kub: None,
        d_kuu: None,
        d_kdiag: vec![
            if proj.degenerate {
                0.0
            } else {
                -c / (2.0 * s2)
            };
            b
        ],
        d_noise: c * d_noise,
        d_lik_params: Vec::new(),
    };
    if want == Want::Value {
        return terms;
    }
    let r = DVector::from_vec(resid);
    terms.d_mean_lik = (a * &r) * (c / s2);
    if want != Want::Model {
        // A Aᵀ is symmetric: its lower triangle, mirrored
        let mut aat = DMatrix::zeros(m, m);
        linalg::gemm_shaped(
            &mut aat,
            Shape::Lower,
            false,
            a,
            false,
            Shape::Full,
            a,
            true,
            1.0,
            par,
        );
        linalg::mirror_lower(&mut aat);
        terms.d_sigma_lik = aat * (-c / (2.0 * s2));
    }
    if let (Want::Model | Want::All, Some(rta)) = (want, &rta) {
        // Ā = (c/σ²)(μ rᵀ + A − R (Rᵀ A)); a degenerate model's var_i has no −‖A_i‖²
        let mut abar = if proj.degenerate {
            DMatrix::zeros(m, b)
        } else {
            a.clone()
        };
        linalg::gemm_shaped(
            &mut abar,
            Shape::Full,
            true,
            &q.chol,
            false,
            Shape::Lower,
            rta,
            false,
            -1.0,
            par,
        );
        abar.ger(1.0, &q.mean, &r, 1.0);
        abar *= c / s2;
        let (d_kub, d_kuu) = adjoints(factor, a, abar, par);
        terms.d_kub = Some(d_kub);
        terms.d_kuu = Some(d_kuu);
    }
    terms
}

/// The adjoints of Kub and Kuu from Ā, the adjoint of A = L⁻¹ Kub: K̄ub = L⁻ᵀ Ā and
/// K̄uu = −sym(L⁻ᵀ Φ(Ā Aᵀ) L⁻¹) (Φ: the lower triangle, its diagonal halved).
pub fn adjoints(
    factor: &Factor,
    a: &DMatrix<f64>,
    abar: DMatrix<f64>,
    par: Par,
) -> (DMatrix<f64>, DMatrix<f64>) {
    let m = a.nrows();
    // Φ keeps the lower triangle, halving the diagonal: only that triangle is formed
    let mut phi = DMatrix::zeros(m, m);
    linalg::gemm_shaped(
        &mut phi,
        Shape::Lower,
        false,
        &abar,
        false,
        Shape::Full,
        a,
        true,
        1.0,
        par,
    );
    for j in 0..m {
        phi[(j, j)] *= 0.5;
    }
    linalg::solve_lower_transpose(&factor.l, &mut phi, par);
    let mut t = phi.transpose();
    linalg::solve_lower_transpose(&factor.l, &mut t, par);
    // t = L⁻ᵀ (L⁻ᵀ Φ)ᵀ = (L⁻ᵀ Φ L⁻¹)ᵀ
    let d_kuu = (&t + t.transpose()) * -0.5;
    let mut d_kub = abar;
    linalg::solve_lower_transpose(&factor.l, &mut d_kub, par);
    (d_kub, d_kuu)
}

/// ∂KL/∂R = R − diag(1/R_jj) (lower-triangular).
pub fn kl_grad_chol(q: &Variational) -> DMatrix<f64> {
    let mut g = q.chol.clone();
    for j in 0..q.len() {
        g[(j, j)] -= 1.0 / q.chol[(j, j)];
    }
    g
}

/// ∂ELBO/∂R from the likelihood's ∂/∂Σ: lower(2 ∂/∂Σ · R) − ∂KL/∂R.
pub fn d_chol(q: &Variational, d_sigma_lik: &DMatrix<f64>, par: Par) -> DMatrix<f64> {
    let mut g = linalg::mul(d_sigma_lik, false, &q.chol, false, par) * 2.0;
    g -= kl_grad_chol(q);
    for j in 0..q.len() {
        for i in 0..j {
            g[(i, j)] = 0.0;
        }
    }
    g
}

/// The natural-gradient step of Salimbeni, Eleftheriadis & Hensman (2018) on q(v):
/// with natural parameters θ₁ = Σ⁻¹μ, θ₂ = −½Σ⁻¹ and expectation parameters
/// η₁ = μ, η₂ = Σ + μμᵀ, the natural gradient in θ is the ordinary gradient in η,
/// so θ ← θ + γ ∂ELBO/∂η with ∂/∂η₁ = ∂/∂μ − 2 (∂/∂Σ) μ and ∂/∂η₂ = ∂/∂Σ. For the
/// Gaussian likelihood ∂ELBO/∂Σ = ∂lik/∂Σ − ½I + ½Σ⁻¹, so the new precision is
/// (1 − γ)Σ⁻¹ + γ(I − 2 ∂lik/∂Σ): positive definite for 0 < γ ≤ 1, and at γ = 1 on
/// the whole data it is the optimal q(v) of the current hyperparameters.
pub fn natural_step(
    q: &Variational,
    d_mean_lik: &DVector<f64>,
    d_sigma_lik: &DMatrix<f64>,
    gamma: f64,
    par: Par,
) -> Result<Variational> {
    let m = q.len();
    let prec = linalg::chol_inverse(&q.chol, par);
    let (d_eta1, d_eta2) = natural_gradient(q, &prec, d_mean_lik, d_sigma_lik);
    // θ₁' = θ₁ + γ ∂/∂η₁, and the new precision P' = −2θ₂' = P − 2γ ∂/∂η₂
    let theta1 = &prec * &q.mean + d_eta1 * gamma;
    let mut new_prec = prec - d_eta2 * (2.0 * gamma);
    linalg::mirror_lower(&mut new_prec);
    let lp = linalg::cholesky_with(&new_prec, 0.0, par).ok_or_else(|| {
        crate::error::Error::numerical(format!(
            "the natural-gradient step γ = {gamma} left q(u)'s precision not positive \
             definite (m = {m}); give a smaller --nat-step"
        ))
    })?;
    let cov = linalg::chol_inverse(&lp, par);
    let mean = &cov * theta1;
    let chol = linalg::cholesky_with(&cov, 0.0, par).ok_or_else(|| {
        crate::error::Error::numerical(format!(
            "after the natural-gradient step γ = {gamma}, q(u)'s covariance is not positive \
             definite in floating point (m = {m}); give a smaller --nat-step"
        ))
    })?;
    Ok(Variational { mean, chol })
}

/// ∂ELBO/∂η₁ and ∂ELBO/∂η₂ (symmetric) from the likelihood's gradients, `prec` = Σ⁻¹.
pub fn natural_gradient(
    q: &Variational,
    prec: &DMatrix<f64>,
    d_mean_lik: &DVector<f64>,
    d_sigma_lik: &DMatrix<f64>,
) -> (DVector<f64>, DMatrix<f64>) {
    let m = q.len();
    let d_mean = d_mean_lik - &q.mean;
    let d_sigma = d_sigma_lik - DMatrix::<f64>::identity(m, m) * 0.5 + prec * 0.5;
    let d_eta1 = &d_mean - (&d_sigma * &q.mean) * 2.0;
    (d_eta1, d_sigma)
}
