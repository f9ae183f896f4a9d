//! SVGP's likelihood term for any likelihood (docs/methods.md §8.5): the closed form of
//! `elbo::gaussian_terms` is the Gaussian's; here each row's expected log-density under
//! q(f_i) = N(mean_i, var_i) and its derivatives come from the likelihood itself
//! (`Likelihood::expected_log_density`: its closed form, else Gauss–Hermite), as GPflow's
//! `SVGP.elbo` takes them from `likelihood.variational_expectations`.
//!
//! With g_i = E_q[log p(y_i | f_i)], m_i = ∂g_i/∂mean_i and v_i = ∂g_i/∂var_i, and
//! mean_i = A_iᵀ μ, var_i = k_ii − ‖A_i‖² + A_iᵀ Σ A_i, the chain rule gives
//!
//! ```text
//! ∂/∂μ = c A m,   ∂/∂Σ = c A diag(v) Aᵀ,   ∂/∂k_ii = c v_i,
//! Ā = c (μ mᵀ − 2 (A − Σ A) diag(v)),
//! ```
//!
//! which at the Gaussian's m_i = r_i/σ², v_i = −1/(2σ²) are the closed form's. The
//! adjoints of Kub and Kuu follow from Ā as there (`elbo::adjoints`).

use super::elbo::{self, Factor, Projected, Rows, Terms, Variational, Want};
use crate::exec::Par;
use crate::likelihoods::{GaussHermite, Likelihood};
use crate::linalg::{self, Shape};
use nalgebra::{DMatrix, DVector};

/// A likelihood and the quadrature rule its expectations use where it has no closed
/// form.
pub struct Observation<'a> {
    pub lik: &'a dyn Likelihood,
    pub quad: &'a GaussHermite,
}

/// The likelihood term on the rows projected as `proj`, for any likelihood: value and,
/// as `want` says, gradients (`Want::Natural`: ∂/∂μ and ∂/∂Σ only).
pub fn expected_loglik(
    obs: &Observation,
    factor: &Factor,
    q: &Variational,
    proj: &Projected,
    rows: Rows,
    want: Want,
    par: Par,
) -> Terms {
    let Rows { y, c, log_exposure } = rows;
    let (m, b) = (q.len(), y.len());
    let a = &proj.a;
    // Rᵀ A: every var_i needs it, since ∂g/∂var depends on var where the likelihood is
    // not Gaussian
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
    let k = obs.lik.param_names().len();
    let adjoints = matches!(want, Want::Model | Want::All);
    let mut d_params = vec![0.0; k];
    let (mut sum, mut dm, mut dv) = (0.0, DVector::zeros(b), DVector::zeros(b));
    for i in 0..b {
        let ai = a.column(i);
        let mean = ai.dot(&q.mean);
        // a variance below 0 by rounding is 0
        let var = if proj.degenerate {
            rta.column(i).norm_squared()
        } else {
            (proj.kdiag[i] - ai.norm_squared() + rta.column(i).norm_squared()).max(0.0)
        };
        // an exposure E_i shifts f_i by log E_i inside the likelihood: the derivatives
        // in the shifted mean are those in mean_i
        let offset = log_exposure.map_or(0.0, |e| e[i]);
        let e = obs.lik.expected_log_density(
            y[i],
            mean + offset,
            var,
            obs.quad,
            if adjoints { Some(&mut d_params) } else { None },
        );
        sum += e.value;
        dm[i] = e.d_mean;
        dv[i] = e.d_var;
    }
    let mut terms = Terms {
        expected_loglik: c * sum,
        d_mean_lik: DVector::zeros(m),
        d_sigma_lik: DMatrix::zeros(m, m),
        d_kub: None,
        d_kuu: None,
        d_kdiag: if proj.degenerate {
            vec![0.0; b]
        } else {
            dv.iter().map(|v| c * v).collect()
        },
        d_noise: 0.0,
        d_lik_params: d_params.iter().map(|g| c * g).collect(),
    };
    if want == Want::Value {
        return terms;
    }
    terms.d_mean_lik = (a * &dm) * c;
    if want != Want::Model {
        // A diag(v) Aᵀ: its lower triangle, mirrored
        let mut av = a.clone();
        for (i, mut col) in av.column_iter_mut().enumerate() {
            col *= dv[i];
        }
        let mut s = DMatrix::zeros(m, m);
        linalg::gemm_shaped(
            &mut s,
            Shape::Lower,
            false,
            &av,
            false,
            Shape::Full,
            a,
            true,
            c,
            par,
        );
        linalg::mirror_lower(&mut s);
        terms.d_sigma_lik = s;
    }
    if adjoints {
        // Ā = c (μ mᵀ − 2 (A − R (Rᵀ A)) diag(v)); a degenerate model's var_i has no −‖A_i‖²
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
            &rta,
            false,
            -1.0,
            par,
        );
        for (i, mut col) in abar.column_iter_mut().enumerate() {
            col *= -2.0 * dv[i];
        }
        abar.ger(1.0, &q.mean, &dm, 1.0);
        abar *= c;
        let (d_kub, d_kuu) = elbo::adjoints(factor, a, abar, par);
        terms.d_kub = Some(d_kub);
        terms.d_kuu = Some(d_kuu);
    }
    terms
}
