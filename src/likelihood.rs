//! The one likelihood core of METHODS.md §1 for every low-rank model:
//! `C = Kfu Kuu⁻¹ Kuf + Λ`, `Λ = diag(λ) + σ² I`, with λ the FITC correction or 0 (DTC).
//!
//! It works in O(n·m²) time and O(n·m) memory and never forms an n×n matrix. Methods
//! hand it `Kuf` (m×n, one column per data point — the layout the triangular solves
//! want), `Kuu`, the prior diagonal for FITC and σ²; it returns the NLML and the
//! adjoints ∂NLML/∂Kuf, ∂NLML/∂Kuu, ∂NLML/∂kdiag and ∂NLML/∂σ², which each method
//! maps back to its own parameters by the chain rule.
//!
//! Derivation of the adjoints: with `G = ½(C⁻¹ − ααᵀ)`, `α = C⁻¹y`, dNLML = tr(G dC).
//! For FITC, dC = dQ − diag(dQ) + diag(dkdiag) + dσ² I, so the Q-part uses
//! `G' = G − diag(G)`. With `L = chol(Kuu)`, `V = L⁻¹Kuf`, `Kfu Kuu⁻¹ = Vᵀ L⁻¹`:
//! `∂/∂Kuf = 2 L⁻ᵀ V G'`, `∂/∂Kuu = −L⁻ᵀ V G' Vᵀ L⁻¹`, and `C⁻¹Vᵀ = Λ⁻¹ Vᵀ A⁻¹`.

use crate::error::{Error, Result};
use crate::linalg::{self, Jitter};
use multiversion::multiversion;
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Which diagonal correction the model carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// λ_i = k(x_i,x_i) − q_ii: SPGP and the inter-domain GPs.
    Fitc,
    /// λ_i = 0: projected process, SSGP, EigenGP, greedy selection.
    Dtc,
}

/// The inputs of the core.
pub struct LowRank<'a> {
    /// Kuf, m×n: column i holds the covariances of data point i with the m features.
    pub kuf: &'a DMatrix<f64>,
    pub kuu: &'a DMatrix<f64>,
    pub mode: Mode,
    /// Prior variances k(x_i,x_i), n entries (FITC only; ignored for DTC).
    pub kdiag: &'a [f64],
    pub noise: f64,
    pub jitter: Jitter,
}

/// NLML and its adjoints.
#[derive(Clone, Debug)]
pub struct Adjoints {
    pub nlml: f64,
    /// Absolute jitter that was added to Kuu's diagonal.
    pub jitter: f64,
    pub d_kuf: DMatrix<f64>,
    /// Symmetric; pair it with ∂Kuu/∂θ entry by entry (the jitter counts as part of Kuu).
    pub d_kuu: DMatrix<f64>,
    /// ∂/∂kdiag (FITC) — empty for DTC.
    pub d_kdiag: Vec<f64>,
    pub d_noise: f64,
}

/// Everything prediction needs, computed once per fitted model (O(m²) to keep):
/// `mean = k*ᵀ w`, `var_f = prior − k*ᵀ S k*`, `var_y = var_f + σ²`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Posterior {
    /// The m-vector w = (Kuu + Kuf Λ⁻¹ Kfu)⁻¹ Kuf Λ⁻¹ y.
    pub mean_weights: Vec<f64>,
    /// The m×m matrix S (stored as rows).
    #[serde(with = "crate::model_file::rows")]
    pub var_matrix: DMatrix<f64>,
    /// "kernel": the prior variance is k(x*,x*); "none": a degenerate model (SSGP,
    /// EigenGP) whose variance is k*ᵀ Σ⁻¹ k* alone, stored as S = −Σ⁻¹.
    pub latent_prior: LatentPrior,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LatentPrior {
    Kernel,
    None,
}

/// Columns of V processed as one block: a block of V, its scaled copy and an m×m
/// accumulator stay in cache, and the products on it still run at gemm speed.
const BLOCK: usize = 256;

/// Shared first half of every evaluation.
struct Factors {
    l: DMatrix<f64>,
    jitter: f64,
    /// V = L⁻¹Kuf (m×n).
    v: DMatrix<f64>,
    lambda: Vec<f64>,
    /// Cholesky factor of A = I + V Λ⁻¹ Vᵀ.
    la: DMatrix<f64>,
    /// β = V Λ⁻¹ y
    beta: DVector<f64>,
    /// γ = L_A⁻¹ β
    gamma: DVector<f64>,
}

/// The parts of V (or of a matrix of V's shape) and of the n-vectors that one stripe
/// owns: (stripe index, its m×len columns, its len entries).
fn stripes<'a>(
    v: &'a mut DMatrix<f64>,
    per_column: &'a mut [f64],
) -> Vec<(usize, &'a mut [f64], &'a mut [f64])> {
    let (m, n) = v.shape();
    let len = linalg::stripe_len(n);
    v.as_mut_slice()
        .chunks_mut(m * len)
        .zip(per_column.chunks_mut(len))
        .enumerate()
        .map(|(s, (vs, cs))| (s * len, vs, cs))
        .collect()
}

fn factor(lr: &LowRank, y: &[f64]) -> Result<Factors> {
    let (m, n) = lr.kuf.shape();
    let fitc = lr.mode == Mode::Fitc;
    if m == 0 || n == 0 {
        return Err(Error::input("likelihood core: no features or no data"));
    }
    if y.len() != n || lr.kuu.shape() != (m, m) || (fitc && lr.kdiag.len() != n) {
        return Err(Error::input("likelihood core: inconsistent shapes"));
    }
    let (l, jitter) = linalg::cholesky_jittered(lr.kuu, lr.jitter)?;
    let kuf = lr.kuf.as_slice();
    let mut v = DMatrix::zeros(m, n);
    let mut lambda = vec![0.0; n];
    // Per stripe: V = L⁻¹Kuf, λ, and its share of V Λ⁻¹ Vᵀ and β.
    let sums = linalg::map_ordered(stripes(&mut v, &mut lambda), |(first, vs, ls)| {
        let mut a = DMatrix::zeros(m, m);
        let mut beta = vec![0.0; m];
        let mut scaled = vec![0.0; m * BLOCK.min(ls.len())];
        for (b, (vb, lb)) in vs
            .chunks_mut(m * BLOCK)
            .zip(ls.chunks_mut(BLOCK))
            .enumerate()
        {
            let j0 = first + b * BLOCK;
            vb.copy_from_slice(&kuf[j0 * m..j0 * m + vb.len()]);
            linalg::block_solve_lower(&l, linalg::block_mut(vb, m));
            let sb = &mut scaled[..vb.len()];
            let cols = j0..j0 + lb.len();
            let kd = fitc.then(|| &lr.kdiag[cols.clone()]);
            if let Some(i) = first_pass_block(vb, m, lb, sb, &mut beta, kd, &y[cols], lr.noise) {
                return Err(Error::numerical(format!(
                    "diagonal of the covariance is {} at training point {} (noise variance {:e})",
                    lb[i],
                    j0 + i + 1,
                    lr.noise
                )));
            }
            linalg::block_add_nt_lower(&mut a, linalg::block(sb, m), linalg::block(vb, m), 1.0);
        }
        Ok((a, beta))
    });
    // A = I + V Λ⁻¹ Vᵀ, summed stripe by stripe in order.
    let mut a = DMatrix::identity(m, m);
    let mut beta = DVector::zeros(m);
    for part in sums {
        let (sa, sb) = part?;
        a += sa;
        beta += DVector::from_vec(sb);
    }
    linalg::mirror_lower(&mut a);
    let la = linalg::cholesky_with(&a, 0.0).ok_or_else(|| {
        Error::numerical("I + V Λ⁻¹ Vᵀ is not positive definite (NaN in the parameters?)")
    })?;
    let mut gamma = DMatrix::from_column_slice(m, 1, beta.as_slice());
    linalg::solve_lower(&la, &mut gamma);
    Ok(Factors {
        l,
        jitter,
        v,
        lambda,
        la,
        beta,
        gamma: DVector::from_column_slice(gamma.as_slice()),
    })
}

fn nlml_of(f: &Factors, y: &[f64]) -> f64 {
    let n = y.len() as f64;
    let quad: f64 = y.iter().zip(&f.lambda).map(|(y, l)| y * y / l).sum();
    let half_logdet_lambda: f64 = 0.5 * f.lambda.iter().map(|l| l.ln()).sum::<f64>();
    0.5 * (quad - f.gamma.norm_squared())
        + linalg::half_logdet(&f.la)
        + half_logdet_lambda
        + 0.5 * n * (2.0 * PI).ln()
}

/// The NLML alone (no adjoints).
pub fn nlml(lr: &LowRank, y: &[f64]) -> Result<f64> {
    let f = factor(lr, y)?;
    finite(nlml_of(&f, y))
}

fn finite(x: f64) -> Result<f64> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(Error::numerical("the NLML is not finite"))
    }
}

/// The first pass over a block of columns of V (= L⁻¹Kuf): λ into `lb`, V's columns
/// divided by λ into `scaled`, and β += V Λ⁻¹ y. `kdiag` is None for DTC. Returns the
/// first column whose λ is not a positive number. Compiled for AVX2 and AVX-512 too,
/// chosen at run time; no sum is reordered, so every version gives the same bits.
#[allow(clippy::too_many_arguments)]
#[multiversion(targets = "simd")]
fn first_pass_block(
    vb: &[f64],
    m: usize,
    lb: &mut [f64],
    scaled: &mut [f64],
    beta: &mut [f64],
    kdiag: Option<&[f64]>,
    y: &[f64],
    noise: f64,
) -> Option<usize> {
    for (i, ((col, li), sc)) in vb
        .chunks(m)
        .zip(lb.iter_mut())
        .zip(scaled.chunks_mut(m))
        .enumerate()
    {
        *li = match kdiag {
            Some(kd) => kd[i] - linalg::dot(col, col) + noise,
            None => noise,
        };
        if !(li.is_finite() && *li > 0.0) {
            return Some(i);
        }
        let (inv, yi) = (1.0 / *li, y[i] / *li);
        for ((s, x), b) in sc.iter_mut().zip(col).zip(beta.iter_mut()) {
            *s = x * inv;
            *b += x * yi;
        }
    }
    None
}

/// The second pass over a block: given V's columns and P = A⁻¹V in `pb`, writes
/// g_i = ∂NLML/∂Λ_ii into `gb`, for FITC g_i v_i into `scaled` (empty for DTC), and
/// turns P's columns into Hᵀ's (see `nlml_and_adjoints`).
#[allow(clippy::too_many_arguments)]
#[multiversion(targets = "simd")]
fn second_pass_block(
    vb: &[f64],
    pb: &mut [f64],
    m: usize,
    gb: &mut [f64],
    scaled: &mut [f64],
    lambda: &[f64],
    y: &[f64],
    delta: &[f64],
) {
    let fitc = !scaled.is_empty();
    for (i, (col, pc)) in vb.chunks(m).zip(pb.chunks_mut(m)).enumerate() {
        let li = lambda[i];
        let alpha = (y[i] - linalg::dot(col, delta)) / li;
        let gi = 0.5 * (1.0 / li - linalg::dot(pc, col) / (li * li) - alpha * alpha);
        gb[i] = gi;
        let two_g = if fitc { 2.0 * gi } else { 0.0 };
        if fitc {
            let sc = &mut scaled[i * m..(i + 1) * m];
            sc.iter_mut().zip(col).for_each(|(s, x)| *s = gi * x);
        }
        for ((h, x), d) in pc.iter_mut().zip(col).zip(delta) {
            *h = *h / li - alpha * d - two_g * x;
        }
    }
}

/// The NLML and all adjoints, O(n·m²).
pub fn nlml_and_adjoints(lr: &LowRank, y: &[f64]) -> Result<Adjoints> {
    let f = factor(lr, y)?;
    let nlml = finite(nlml_of(&f, y))?;
    let Factors {
        l,
        jitter,
        v,
        lambda,
        la,
        gamma,
        ..
    } = f;
    let (m, n) = v.shape();
    let fitc = lr.mode == Mode::Fitc;
    // δ = A⁻¹β; then α = C⁻¹y = Λ⁻¹(y − Vᵀδ) and Vα = β − (A − I)δ = δ.
    let mut delta = DMatrix::from_column_slice(m, 1, gamma.as_slice());
    linalg::solve_lower_transpose(&la, &mut delta);
    let delta = delta.as_slice();
    let a_inv = linalg::chol_inverse(&la);
    // Per stripe, V's storage becomes ∂NLML/∂Kuf column block by column block:
    // P = A⁻¹V gives v_iᵀA⁻¹v_i, hence C⁻¹_ii = 1/Λ_i − v_iᵀA⁻¹v_i/Λ_i² and
    // g_i = ½(C⁻¹_ii − α_i²) = ∂NLML/∂Λ_ii; Hᵀ = (G'Vᵀ)ᵀ has column i
    // ½ p_i/Λ_i − ½ δ α_i − [FITC] g_i v_i, and ∂/∂Kuf = 2 L⁻ᵀ Hᵀ.
    let mut d_kuf = v;
    let mut g = vec![0.0; n];
    let parts = linalg::map_ordered(stripes(&mut d_kuf, &mut g), |(first, vs, gs)| {
        // FITC: this stripe's share of V D_g Vᵀ
        let mut vgv = DMatrix::zeros(if fitc { m } else { 0 }, if fitc { m } else { 0 });
        let width = m * BLOCK.min(gs.len());
        let (mut p, mut scaled) = (vec![0.0; width], vec![0.0; if fitc { width } else { 0 }]);
        for (b, (vb, gb)) in vs
            .chunks_mut(m * BLOCK)
            .zip(gs.chunks_mut(BLOCK))
            .enumerate()
        {
            let j0 = first + b * BLOCK;
            let pb = &mut p[..vb.len()];
            linalg::block_mul(
                linalg::block_mut(pb, m),
                linalg::view(&a_inv),
                linalg::block(vb, m),
            );
            let cols = j0..j0 + gb.len();
            let sb = if fitc {
                &mut scaled[..vb.len()]
            } else {
                &mut [][..]
            };
            second_pass_block(vb, pb, m, gb, sb, &lambda[cols.clone()], &y[cols], delta);
            if fitc {
                let sb = &scaled[..vb.len()];
                linalg::block_add_nt_lower(
                    &mut vgv,
                    linalg::block(sb, m),
                    linalg::block(vb, m),
                    1.0,
                );
            }
            vb.copy_from_slice(pb);
            linalg::block_solve_lower_transpose(&l, linalg::block_mut(vb, m));
        }
        vgv
    });
    // V G' Vᵀ = ½(I − A⁻¹) − ½ δδᵀ − [FITC] V D_g Vᵀ, since V C⁻¹ Vᵀ = I − A⁻¹.
    let dv = DVector::from_column_slice(delta);
    let mut vgv = (DMatrix::identity(m, m) - a_inv) * 0.5 - (&dv * dv.transpose()) * 0.5;
    if fitc {
        let mut sum = DMatrix::zeros(m, m);
        for part in parts {
            sum += part;
        }
        linalg::mirror_lower(&mut sum);
        vgv -= sum;
    }
    // ∂/∂Kuu = −L⁻ᵀ (V G' Vᵀ) L⁻¹
    linalg::solve_lower_transpose(&l, &mut vgv);
    vgv.transpose_mut();
    linalg::solve_lower_transpose(&l, &mut vgv);
    let d_kuu = (&vgv + vgv.transpose()) * -0.5;
    let d_noise = g.iter().sum();
    Ok(Adjoints {
        nlml,
        jitter,
        d_kuf,
        d_kuu,
        d_kdiag: if fitc { g } else { Vec::new() },
        d_noise,
    })
}

/// The predictive quantities of METHODS.md §1. `degenerate` selects the SSGP/EigenGP
/// variance `k*ᵀ(Kuu + Kuf Λ⁻¹ Kfu)⁻¹ k*` in place of `k** − k*ᵀ[Kuu⁻¹ − Σ⁻¹]k*`.
pub fn posterior(lr: &LowRank, y: &[f64], degenerate: bool) -> Result<Posterior> {
    let f = factor(lr, y)?;
    let m = lr.kuu.nrows();
    // w = L⁻ᵀ A⁻¹ β
    let mut w = DMatrix::from_column_slice(m, 1, f.beta.as_slice());
    linalg::solve_lower(&f.la, &mut w);
    linalg::solve_lower_transpose(&f.la, &mut w);
    linalg::solve_lower_transpose(&f.l, &mut w);
    // Σ⁻¹ = L⁻ᵀ A⁻¹ L⁻¹, Kuu⁻¹ − Σ⁻¹ = L⁻ᵀ (I − A⁻¹) L⁻¹
    let a_inv = linalg::chol_inverse(&f.la);
    let mut s = if degenerate {
        -a_inv
    } else {
        DMatrix::identity(m, m) - a_inv
    };
    linalg::solve_lower_transpose(&f.l, &mut s);
    s.transpose_mut();
    linalg::solve_lower_transpose(&f.l, &mut s);
    let s = (&s + s.transpose()) * 0.5;
    Ok(Posterior {
        mean_weights: w.as_slice().to_vec(),
        var_matrix: s,
        latent_prior: if degenerate {
            LatentPrior::None
        } else {
            LatentPrior::Kernel
        },
    })
}

impl Posterior {
    pub fn m(&self) -> usize {
        self.mean_weights.len()
    }

    /// Check the shapes of a posterior read from a file.
    pub fn check(&self, m: usize) -> Result<()> {
        if self.mean_weights.len() != m || self.var_matrix.shape() != (m, m) {
            return Err(Error::input(format!(
                "[posterior] must hold {m} mean_weights and an {m}×{m} var_matrix"
            )));
        }
        Ok(())
    }

    /// Mean and latent variance at t test points from K(u, *) (m×t) and the prior
    /// variances k(x*,x*).
    pub fn predict(&self, kus: &DMatrix<f64>, prior: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let w = DVector::from_column_slice(&self.mean_weights);
        let mean = kus.tr_mul(&w);
        let sk = linalg::mul(&self.var_matrix, false, kus, false);
        let var = (0..kus.ncols())
            .map(|t| {
                let quad = kus.column(t).dot(&sk.column(t));
                let var = match self.latent_prior {
                    LatentPrior::Kernel => prior[t] - quad,
                    LatentPrior::None => -quad,
                };
                // A variance is ≥ 0; a tiny negative one is rounding (noiseless data).
                var.max(0.0)
            })
            .collect();
        (mean.as_slice().to_vec(), var)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NLML of N(0, C) by a dense O(n³) Cholesky.
    fn dense_nlml(c: &DMatrix<f64>, y: &[f64]) -> f64 {
        let n = y.len();
        let chol = c.clone().cholesky().expect("spd");
        let yv = DVector::from_column_slice(y);
        let a = chol.solve(&yv);
        0.5 * yv.dot(&a)
            + chol.l().diagonal().iter().map(|d| d.ln()).sum::<f64>()
            + 0.5 * n as f64 * (2.0 * PI).ln()
    }

    fn problem(n: usize, m: usize) -> (DMatrix<f64>, DMatrix<f64>, Vec<f64>, Vec<f64>) {
        let x = DMatrix::from_fn(n, 2, |i, d| ((i * (d + 2)) as f64 * 0.37).sin() * 2.0);
        let z = DMatrix::from_fn(m, 2, |j, d| ((j * (d + 3)) as f64 * 0.53 + 0.1).cos() * 1.5);
        let k = crate::kernel::SeArd {
            signal_variance: 1.4,
            lengthscales: vec![0.9, 1.3],
        };
        let kuf = k.matrix(&z, &x);
        let kuu = k.gram(&z);
        let y: Vec<f64> = (0..n)
            .map(|i| (i as f64 * 0.3).sin() + 0.1 * (i % 3) as f64)
            .collect();
        (kuf, kuu, vec![1.4; n], y)
    }

    fn dense_cov(
        kuf: &DMatrix<f64>,
        kuu: &DMatrix<f64>,
        kd: &[f64],
        s2: f64,
        fitc: bool,
    ) -> DMatrix<f64> {
        let n = kuf.ncols();
        let q = kuf.transpose() * kuu.clone().cholesky().expect("spd").solve(kuf);
        let mut c = q.clone();
        for i in 0..n {
            c[(i, i)] += s2 + if fitc { kd[i] - q[(i, i)] } else { 0.0 };
        }
        c
    }

    #[test]
    fn core_matches_dense_evaluation() {
        let (kuf, kuu, kd, y) = problem(150, 12);
        for (mode, fitc) in [(Mode::Fitc, true), (Mode::Dtc, false)] {
            let lr = LowRank {
                kuf: &kuf,
                kuu: &kuu,
                mode,
                kdiag: &kd,
                noise: 0.07,
                jitter: Jitter::Fixed(0.0),
            };
            let fast = nlml(&lr, &y).expect("ok");
            let dense = dense_nlml(&dense_cov(&kuf, &kuu, &kd, 0.07, fitc), &y);
            assert!(
                ((fast - dense) / dense).abs() < 1e-11,
                "{mode:?}: {fast} vs {dense}"
            );
        }
    }

    /// n large enough for several stripes of several blocks each: the partial sums and
    /// the block bookkeeping must give the same NLML as one dense evaluation, and the
    /// adjoints of columns in a stripe's second block and in the last stripe must match
    /// finite differences.
    #[test]
    fn striped_evaluation_matches_dense_and_finite_differences() {
        let n = 2600;
        assert!(
            linalg::stripe_len(n) > BLOCK,
            "test needs two blocks per stripe"
        );
        let (kuf, kuu, kd, y) = problem(n, 6);
        let lr = |kuf: &'_ DMatrix<f64>, kd: &'_ [f64]| -> f64 {
            nlml(
                &LowRank {
                    kuf,
                    kuu: &kuu,
                    mode: Mode::Fitc,
                    kdiag: kd,
                    noise: 0.07,
                    jitter: Jitter::Fixed(0.0),
                },
                &y,
            )
            .expect("ok")
        };
        // dense reference through faer's Cholesky (nalgebra's is too slow at n = 2600)
        let c = dense_cov(&kuf, &kuu, &kd, 0.07, true);
        let l = linalg::cholesky_with(&c, 0.0).expect("spd");
        let mut a = DMatrix::from_column_slice(n, 1, &y);
        linalg::solve_lower(&l, &mut a);
        let dense =
            0.5 * a.norm_squared() + linalg::half_logdet(&l) + 0.5 * n as f64 * (2.0 * PI).ln();
        let fast = lr(&kuf, &kd);
        assert!(((fast - dense) / dense).abs() < 1e-11, "{fast} vs {dense}");
        let adj = nlml_and_adjoints(
            &LowRank {
                kuf: &kuf,
                kuu: &kuu,
                mode: Mode::Fitc,
                kdiag: &kd,
                noise: 0.07,
                jitter: Jitter::Fixed(0.0),
            },
            &y,
        )
        .expect("ok");
        let h = 1e-6;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * (1.0 + b.abs());
        for (i, j) in [(0, 300), (5, 1000), (3, 2560), (2, n - 1)] {
            let (mut p, mut q) = (kuf.clone(), kuf.clone());
            p[(i, j)] += h;
            q[(i, j)] -= h;
            let fd = (lr(&p, &kd) - lr(&q, &kd)) / (2.0 * h);
            assert!(
                close(adj.d_kuf[(i, j)], fd),
                "kuf {i},{j}: {} vs {fd}",
                adj.d_kuf[(i, j)]
            );
            let (mut p, mut q) = (kd.clone(), kd.clone());
            p[j] += h;
            q[j] -= h;
            let fd = (lr(&kuf, &p) - lr(&kuf, &q)) / (2.0 * h);
            assert!(
                close(adj.d_kdiag[j], fd),
                "kdiag {j}: {} vs {fd}",
                adj.d_kdiag[j]
            );
        }
    }

    #[test]
    fn adjoints_match_finite_differences() {
        let (kuf, kuu, kd, y) = problem(40, 6);
        for mode in [Mode::Fitc, Mode::Dtc] {
            let eval = |kuf: &DMatrix<f64>, kuu: &DMatrix<f64>, kd: &[f64], s2: f64| {
                nlml(
                    &LowRank {
                        kuf,
                        kuu,
                        mode,
                        kdiag: kd,
                        noise: s2,
                        jitter: Jitter::Fixed(0.0),
                    },
                    &y,
                )
                .expect("ok")
            };
            let adj = nlml_and_adjoints(
                &LowRank {
                    kuf: &kuf,
                    kuu: &kuu,
                    mode,
                    kdiag: &kd,
                    noise: 0.05,
                    jitter: Jitter::Fixed(0.0),
                },
                &y,
            )
            .expect("ok");
            assert!((adj.nlml - eval(&kuf, &kuu, &kd, 0.05)).abs() < 1e-12);
            let h = 1e-6;
            let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * (1.0 + b.abs());
            for (i, j) in [(0, 0), (3, 7), (5, 39), (2, 20)] {
                let (mut p, mut q) = (kuf.clone(), kuf.clone());
                p[(i, j)] += h;
                q[(i, j)] -= h;
                let fd = (eval(&p, &kuu, &kd, 0.05) - eval(&q, &kuu, &kd, 0.05)) / (2.0 * h);
                assert!(
                    close(adj.d_kuf[(i, j)], fd),
                    "{mode:?} kuf {i},{j}: {} vs {fd}",
                    adj.d_kuf[(i, j)]
                );
            }
            for (i, j) in [(0, 0), (1, 4), (5, 2)] {
                // a symmetric perturbation touches both (i,j) and (j,i)
                let (mut p, mut q) = (kuu.clone(), kuu.clone());
                p[(i, j)] += h;
                q[(i, j)] -= h;
                if i != j {
                    p[(j, i)] += h;
                    q[(j, i)] -= h;
                }
                let fd = (eval(&kuf, &p, &kd, 0.05) - eval(&kuf, &q, &kd, 0.05)) / (2.0 * h);
                let an = if i == j {
                    adj.d_kuu[(i, i)]
                } else {
                    2.0 * adj.d_kuu[(i, j)]
                };
                assert!(close(an, fd), "{mode:?} kuu {i},{j}: {an} vs {fd}");
            }
            let fd =
                (eval(&kuf, &kuu, &kd, 0.05 + h) - eval(&kuf, &kuu, &kd, 0.05 - h)) / (2.0 * h);
            assert!(close(adj.d_noise, fd), "{mode:?} noise");
            if mode == Mode::Fitc {
                let (mut p, mut q) = (kd.clone(), kd.clone());
                p[11] += h;
                q[11] -= h;
                let fd = (eval(&kuf, &kuu, &p, 0.05) - eval(&kuf, &kuu, &q, 0.05)) / (2.0 * h);
                assert!(close(adj.d_kdiag[11], fd));
            }
        }
    }

    #[test]
    fn posterior_matches_dense_conditioning() {
        let (kuf, kuu, kd, y) = problem(60, 8);
        let k = crate::kernel::SeArd {
            signal_variance: 1.4,
            lengthscales: vec![0.9, 1.3],
        };
        let z = DMatrix::from_fn(8, 2, |j, d| ((j * (d + 3)) as f64 * 0.53 + 0.1).cos() * 1.5);
        let xs = DMatrix::from_fn(5, 2, |i, d| (i as f64 - 2.0) * 0.7 + d as f64 * 0.2);
        let kus = k.matrix(&z, &xs);
        let lr = LowRank {
            kuf: &kuf,
            kuu: &kuu,
            mode: Mode::Fitc,
            kdiag: &kd,
            noise: 0.05,
            jitter: Jitter::Fixed(0.0),
        };
        let post = posterior(&lr, &y, false).expect("ok");
        let (mean, var) = post.predict(&kus, &[1.4; 5]);
        // dense FITC prediction: Q*f C⁻¹ y and Q** + (k** − Q**) − Q*f C⁻¹ Qf*
        let c = dense_cov(&kuf, &kuu, &kd, 0.05, true);
        let kuu_chol = kuu.clone().cholesky().expect("spd");
        let qsf = kus.transpose() * kuu_chol.solve(&kuf);
        let cc = c.cholesky().expect("spd");
        let dm = &qsf * cc.solve(&DVector::from_column_slice(&y));
        let dv = (&qsf * cc.solve(&qsf.transpose())).diagonal();
        for t in 0..5 {
            assert!((mean[t] - dm[t]).abs() < 1e-10);
            assert!((var[t] - (1.4 - dv[t])).abs() < 1e-10);
        }
    }
}
