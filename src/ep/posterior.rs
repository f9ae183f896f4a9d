//! EP's Gaussian posterior in the low-rank form, O(m²) per site update and O(n·m²) per
//! sweep (Naish-Guzman & Holden 2007, generalised FITC).
//!
//! The prior is f = Vᵀw + e with w ~ N(0, I_m) the whitened inducing values
//! (`V = L⁻¹Kuf`, `LLᵀ = Kuu`, so VᵀV = Q) and e_i ~ N(0, g_i) independent: g = diag(K − Q)
//! for FITC, 0 for DTC (and for the exact GP, where V = chol(K)ᵀ), α·diag(K − Q) for
//! power EP. Integrating e_i out of a site N(f_i; ν̃_i/τ̃_i, 1/τ̃_i) leaves a factor of w
//! with precision β_i = τ̃_i/(1 + g_iτ̃_i) along v_i and linear term γ_i = ν̃_i/(1 + g_iτ̃_i),
//! finite at τ̃_i = 0. So q(w) = N(S b, S), S⁻¹ = I + Σ β_i v_i v_iᵀ, b = Σ γ_i v_i, and a
//! site's cavity on f_i is its own factor divided out of the marginal of z_i = v_iᵀw,
//! plus g_i. Each update changes S by a rank-one term (Sherman–Morrison); S is formed
//! again from the sites after every sweep, as GPML's `epfitcRefresh`, so rounding does not
//! build up.

use super::sites::{EpSettings, Sites, not_converged, probit_site, sign_of};
use crate::error::{Error, Result};
use crate::exec::Par;
use crate::linalg;
use nalgebra::{DMatrix, DVector};

/// The prior in EP's low-rank form: V (m×n) and the independent part g (n).
#[derive(Clone, Debug)]
pub struct EpPrior {
    pub v: DMatrix<f64>,
    pub g: Vec<f64>,
}

/// The cavity N(μ, σ²) of every site on f_i.
#[derive(Clone, Debug)]
pub struct Cavities {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
}

/// EP run to its fixed point.
#[derive(Clone, Debug)]
pub struct EpPosterior {
    pub sites: Sites,
    /// q(w) = N(mean, cov) over the whitened inducing values.
    pub mean: DVector<f64>,
    pub cov: DMatrix<f64>,
    pub cavities: Cavities,
    pub sweeps: usize,
}

fn weights(g: f64, tau: f64, nu: f64) -> (f64, f64) {
    let t = 1.0 + g * tau;
    (tau / t, nu / t)
}

/// S and its mean from the sites: O(n·m²).
fn refresh(prior: &EpPrior, sites: &Sites) -> Result<(DMatrix<f64>, DVector<f64>)> {
    let (m, n) = prior.v.shape();
    let mut scaled = prior.v.clone();
    let mut b = DVector::zeros(m);
    for i in 0..n {
        let (beta, gamma) = weights(prior.g[i], sites.tau[i], sites.nu[i]);
        b.axpy(gamma, &prior.v.column(i), 1.0);
        scaled.column_mut(i).scale_mut(beta);
    }
    let mut a = linalg::mul(&prior.v, false, &scaled, true, Par::Seq);
    for j in 0..m {
        a[(j, j)] += 1.0;
    }
    let l = linalg::cholesky_with(&a, 0.0, Par::Seq)
        .ok_or_else(|| Error::numerical("EP: I + V·diag(β)·Vᵀ is not positive definite"))?;
    let s = linalg::chol_inverse(&l, Par::Seq);
    let mean = &s * b;
    Ok((s, mean))
}

/// Every site's cavity on f_i from q(w): O(n·m²).
fn cavities(prior: &EpPrior, sites: &Sites, s: &DMatrix<f64>, mean: &DVector<f64>) -> Cavities {
    let n = prior.g.len();
    let sv = s * &prior.v;
    let mut out = Cavities {
        mean: vec![0.0; n],
        var: vec![0.0; n],
    };
    for i in 0..n {
        let vi = prior.v.column(i);
        let (mu, var) = cavity(
            vi.dot(&sv.column(i)),
            vi.dot(mean),
            prior.g[i],
            sites.tau[i],
            sites.nu[i],
        );
        out.mean[i] = mu;
        out.var[i] = var;
    }
    out
}

/// The cavity on f_i from the marginal N(m_z, s_z) of z_i = v_iᵀw: divide the site's
/// factor (β, γ) out, add g_i. Precision 1/s_z − β and linear term m_z/s_z − γ, written
/// without dividing by s_z: a point far from every inducing input has v_i = 0 (Kuf's
/// column underflows), so s_z = m_z = 0, and m_z/s_z would be 0/0 where the cavity is
/// just the prior's N(0, g_i).
fn cavity(s_z: f64, m_z: f64, g: f64, tau: f64, nu: f64) -> (f64, f64) {
    let (beta, gamma) = weights(g, tau, nu);
    let denom = 1.0 - beta * s_z;
    ((m_z - gamma * s_z) / denom, s_z / denom + g)
}

/// Run EP from `start` (flat sites if None) on labels `y` (0/1) until no site moves by
/// more than the tolerance in a sweep; an EP that has not converged after
/// `max_sweeps` is an error that says so.
pub fn run(
    prior: &EpPrior,
    y: &[f64],
    start: Option<Sites>,
    settings: &EpSettings,
) -> Result<EpPosterior> {
    settings.check()?;
    let (m, n) = prior.v.shape();
    if y.len() != n || prior.g.len() != n {
        return Err(Error::input("EP: inconsistent shapes"));
    }
    let mut sites = start.unwrap_or_else(|| Sites::flat(n));
    let (mut s, mut mean) = refresh(prior, &sites)?;
    let mut sv = DVector::zeros(m);
    for sweep in 1..=settings.max_sweeps {
        let mut change = 0.0f64;
        for (i, &label) in y.iter().enumerate() {
            let vi = prior.v.column(i);
            s.mul_to(&vi, &mut sv);
            let (s_z, m_z) = (vi.dot(&sv), vi.dot(&mean));
            let g = prior.g[i];
            let (mu_c, var_c) = cavity(s_z, m_z, g, sites.tau[i], sites.nu[i]);
            if !(var_c > 0.0 && var_c.is_finite() && mu_c.is_finite()) {
                return Err(Error::numerical(format!(
                    "EP: the cavity of site {i} is not a proper Gaussian (mean {mu_c:e}, \
                     variance {var_c:e}) in sweep {sweep}; damp the updates"
                )));
            }
            let (t_tau, t_nu) = probit_site(sign_of(label), mu_c, var_c);
            let d = settings.damping;
            let tau = d * t_tau + (1.0 - d) * sites.tau[i];
            let nu = d * t_nu + (1.0 - d) * sites.nu[i];
            change = change
                .max((tau - sites.tau[i]).abs() / sites.tau[i].abs().max(1.0))
                .max((nu - sites.nu[i]).abs() / sites.nu[i].abs().max(1.0));
            let (b0, c0) = weights(g, sites.tau[i], sites.nu[i]);
            let (b1, c1) = weights(g, tau, nu);
            let (db, dc) = (b1 - b0, c1 - c0);
            // S ← S − k·Sv·(Sv)ᵀ, k = Δβ/(1 + Δβ·s_z); mean ← S_new(b + Δγ·v)
            let k = db / (1.0 + db * s_z);
            mean.axpy(dc - k * (m_z + dc * s_z), &sv, 1.0);
            s.ger(-k, &sv, &sv, 1.0);
            sites.tau[i] = tau;
            sites.nu[i] = nu;
        }
        (s, mean) = refresh(prior, &sites)?;
        if change <= settings.tolerance {
            let cavities = cavities(prior, &sites, &s, &mean);
            return Ok(EpPosterior {
                sites,
                mean,
                cov: s,
                cavities,
                sweeps: sweep,
            });
        }
        if sweep == settings.max_sweeps {
            return Err(not_converged(settings, change));
        }
    }
    unreachable!("the loop returns at its last sweep")
}

impl EpPosterior {
    /// The latent mean and variance at points whose whitened features are the columns
    /// of `vs` (m×k, `L⁻¹Kus`) with prior variances `kss` and independent parts `gs`
    /// (kss − ‖v‖² for FITC and power EP's prediction, as for the Gaussian FITC).
    pub fn latent(&self, vs: &DMatrix<f64>, kss: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let svs = &self.cov * vs;
        (0..vs.ncols())
            .map(|j| {
                let v = vs.column(j);
                let mean = v.dot(&self.mean);
                let var = kss[j] - v.norm_squared() + v.dot(&svs.column(j));
                (mean, var.max(0.0))
            })
            .unzip()
    }
}
