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

use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::linalg::{self, Jitter};
use crate::scratch::Scratch;
use multiversion::multiversion;
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// How the model treats the diagonal `d = diag(Kff − Qff)` that the low-rank part
/// misses: Λ = a·diag(d) + σ²I, plus a term Σ e(d_i) added to the objective.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Approx {
    /// a = 1, e = 0: SPGP and the inter-domain GPs (Snelson & Ghahramani 2006).
    Fitc,
    /// a = 0, e = 0: the projected-process evidence; SSGP, EigenGP, greedy selection.
    Dtc,
    /// a = 0, e(d) = d/(2σ²): the negative collapsed ELBO of Titsias (2009).
    Vfe,
    /// a = α, e(d) = (1−α)/(2α)·log(1 + α d/σ²): power EP (Bui, Yan & Turner 2017),
    /// FITC at α = 1 and VFE as α → 0.
    Pep { alpha: f64 },
}

impl Approx {
    /// Whether the objective depends on d at all (everything but DTC).
    pub fn uses_diagonal(self) -> bool {
        self != Approx::Dtc
    }

    /// a in Λ = a·diag(d) + σ²I.
    fn weight(self) -> f64 {
        match self {
            Approx::Fitc => 1.0,
            Approx::Dtc | Approx::Vfe => 0.0,
            Approx::Pep { alpha } => alpha,
        }
    }

    /// Whether Λ differs from point to point (FITC, power EP). Otherwise Λ = σ²I (DTC,
    /// VFE), and the second pass needs neither V nor the per-point v_iᵀA⁻¹v_i: it works
    /// from Kuf alone ([`Backward::chunk`]).
    pub fn per_point_lambda(self) -> bool {
        self.weight() > 0.0
    }

    /// Whether there is an extra term e(d_i) (VFE, power EP), so that d is kept per
    /// point and ∂/∂d differs from the per-point ∂/∂σ².
    fn has_extra(self) -> bool {
        matches!(self, Approx::Vfe | Approx::Pep { .. })
    }

    /// e(d_i), ∂e/∂d_i and ∂e/∂σ² of the extra term.
    #[inline]
    fn extra(self, d: f64, s2: f64) -> (f64, f64, f64) {
        match self {
            Approx::Fitc | Approx::Dtc => (0.0, 0.0, 0.0),
            Approx::Vfe => (0.5 * d / s2, 0.5 / s2, -0.5 * d / (s2 * s2)),
            Approx::Pep { alpha } => {
                let c = 1.0 - alpha;
                let denom = s2 + alpha * d;
                (
                    0.5 * c / alpha * (alpha * d / s2).ln_1p(),
                    0.5 * c / denom,
                    -0.5 * c * d / (s2 * denom),
                )
            }
        }
    }

    /// What the objective is called (VFE minimises a bound, not the NLML).
    pub fn objective_name(self) -> &'static str {
        match self {
            Approx::Fitc | Approx::Dtc => "NLML",
            Approx::Vfe => "negative ELBO",
            Approx::Pep { .. } => "negative power-EP energy",
        }
    }

    /// Check α of power EP.
    pub fn check(self) -> Result<Approx> {
        match self {
            Approx::Pep { alpha } if !(alpha > 0.0 && alpha <= 1.0) => Err(Error::input(format!(
                "power EP needs 0 < alpha ≤ 1, not {alpha} (alpha = 1 is FITC, alpha → 0 is VFE)"
            ))),
            a => Ok(a),
        }
    }
}

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

/// Everything prediction needs, computed once per fitted model (O(m²) to keep):
/// `mean = k*ᵀ w`, `var_f = prior − k*ᵀ S k*`, `var_y = var_f + σ²`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Posterior {
    /// The m-vector w = (Kuu + Kuf Λ⁻¹ Kfu)⁻¹ Kuf Λ⁻¹ y.
    pub mean_weights: Vec<f64>,
    /// The m×m matrix S (stored as rows).
    #[serde(with = "crate::matrix_rows::as_rows")]
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

/// The multiply-adds of one objective-and-gradient evaluation by the core, by the kind
/// of kernel that does them, counted from the algorithm of [`Accumulator`] and
/// [`Backward`] (`sgpw bench --roofline` sets them against this machine's rates). A
/// lone addition or multiplication counts as one, like a multiply-add.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Products of an m×m matrix with blocks of columns: m² per point each.
    pub gemm: f64,
    /// Triangular solves with L on blocks of columns: m(m+1)/2 per point each.
    pub trsm: f64,
    /// Symmetric rank-k updates of an m×m lower triangle: m(m+1)/2 per point each.
    pub syrk: f64,
    /// O(m³): factorisations, inverses and sandwiches of m×m matrices.
    pub small: f64,
    /// O(n·m): the per-point vector work of the two passes.
    pub vector: f64,
    /// O(n·m·D): the feature family's Kuf and Kuu and its pull-back of their
    /// adjoints (0 here: the family adds its own, `Family::feature_work`).
    pub features: f64,
}

impl Work {
    /// Everything, in multiply-adds.
    pub fn total(&self) -> f64 {
        self.gemm + self.trsm + self.syrk + self.small + self.vector + self.features
    }

    /// The O(n·m²) part in units of n·m² multiply-adds.
    pub fn units(&self, n: usize, m: usize) -> f64 {
        (self.gemm + self.trsm + self.syrk) / (n as f64 * (m * m) as f64)
    }

    /// One evaluation of `approx` on n points with m features, Kuu dense or diagonal,
    /// V computed again in the second pass for `recomputed` of the n points (FITC and
    /// power EP: the chunks the memory budget did not keep; see `Backward`).
    ///
    /// Per point, in units of m² (a triangular solve or a symmetric update is ½):
    /// - first pass: V = L⁻¹Kuf (½) and A += V Λ⁻¹ Vᵀ (½);
    /// - FITC, power EP: P = A⁻¹V (1), V D_t Vᵀ (½), L⁻ᵀHᵀ (½), and V again (½)
    ///   where it was not kept: 3 units, 3½ recomputed;
    /// - DTC, VFE: M·Kuf (1): 2 units.
    ///
    /// A diagonal Kuu turns every solve into O(m) scalings.
    pub fn of(approx: Approx, dense_kuu: bool, n: usize, m: usize, recomputed: usize) -> Work {
        let (nf, mf) = (n as f64, m as f64);
        let tri = mf * (mf + 1.0) / 2.0;
        // a solve per point: a triangle with L, or m divisions
        let solve = if dense_kuu { tri } else { mf };
        let per_point = approx.per_point_lambda();
        let solves_per_point = if per_point { 2.0 } else { 1.0 };
        let recomputed = recomputed.min(n) as f64;
        let (gemm, syrk) = if per_point {
            (nf * mf * mf, 2.0 * nf * tri)
        } else {
            (nf * mf * mf, nf * tri)
        };
        let solves = nf * solves_per_point + if per_point { recomputed } else { 0.0 };
        let (trsm, solve_vector) = if dense_kuu {
            (solves * solve, 0.0)
        } else {
            (0.0, solves * solve)
        };
        // per point: pass 1 ‖v‖², V/λ and β (3m); pass 2 FITC/PEP v·δ, p·v, t∘v, H and
        // its copy (6m, ‖v‖² again where recomputed), DTC/VFE k·c and c α (2m)
        let vector = solve_vector
            + nf * 3.0 * mf
            + if per_point {
                nf * 6.0 * mf + recomputed * mf
            } else {
                nf * 2.0 * mf
            };
        // chol(Kuu) m³/6 (dense), chol(A) m³/6, A⁻¹ m³/3, the ∂/∂Kuu sandwich m³
        // (two triangular solves of m columns), M's sandwich for DTC/VFE another m³
        let m3 = mf * mf * mf;
        let small = m3 / 6.0
            + m3 / 3.0
            + if dense_kuu { m3 / 6.0 + m3 } else { 0.0 }
            + if !per_point && dense_kuu { m3 } else { 0.0 };
        Work {
            gemm,
            trsm,
            syrk,
            small,
            vector,
            features: 0.0,
        }
    }
}

/// Columns of V processed as one block: a block of V, its scaled copy and an m×m
/// accumulator stay in cache, and the products on it still run at gemm speed.
pub const BLOCK: usize = 256;

/// The m×m work of an evaluation (factorisations, inverses, sandwiches) runs on the
/// calling thread: it is O(m³) against the passes' O(n·m²), and faer's parallel
/// versions of it allocate on every call.
const SMALL: Par = Par::Seq;

/// The Cholesky factor of Kuu (with its jitter).
#[derive(Clone, Debug)]
enum KuuFactor {
    Dense(DMatrix<f64>),
    /// √(κ_j + jitter).
    Diagonal(Vec<f64>),
}

impl KuuFactor {
    fn new(kuu: Kuu, jitter: Jitter, exec: &Exec) -> Result<(KuuFactor, f64)> {
        let scratch = &exec.scratch;
        match kuu {
            Kuu::Dense(k) => {
                let (l, j) = linalg::cholesky_jittered_in(k, jitter, SMALL, scratch)?;
                Ok((KuuFactor::Dense(l), j))
            }
            Kuu::Diagonal(k) => {
                let root = |j: f64| -> Option<Vec<f64>> {
                    let mut l = scratch.take(k.len());
                    l.iter_mut().zip(k).for_each(|(l, v)| *l = (v + j).sqrt());
                    if l.iter().all(|v| v.is_finite() && *v > 0.0) {
                        Some(l)
                    } else {
                        scratch.give(l);
                        None
                    }
                };
                let bad = || {
                    Error::numerical(format!(
                        "the diagonal Kuu holds an entry that is not a positive number \
                         (smallest {:e})",
                        k.iter().copied().fold(f64::INFINITY, f64::min)
                    ))
                };
                match jitter {
                    Jitter::Fixed(j) => {
                        root(j).map(|l| (KuuFactor::Diagonal(l), j)).ok_or_else(bad)
                    }
                    Jitter::Auto { scale } => {
                        let scale = if scale.is_finite() && scale > 0.0 {
                            scale
                        } else {
                            1.0
                        };
                        let mut eps = linalg::JITTER_START;
                        while eps <= linalg::JITTER_MAX * 1.000001 {
                            if let Some(l) = root(eps * scale) {
                                return Ok((KuuFactor::Diagonal(l), eps * scale));
                            }
                            eps *= 10.0;
                        }
                        Err(bad())
                    }
                }
            }
        }
    }

    /// Give the factor's memory back.
    fn recycle(self, scratch: &Scratch) {
        match self {
            KuuFactor::Dense(l) => scratch.give_matrix(l),
            KuuFactor::Diagonal(l) => scratch.give(l),
        }
    }

    /// A block of columns (m rows) ← L⁻¹ · block, on this thread.
    fn solve_block(&self, b: &mut [f64], m: usize) {
        match self {
            KuuFactor::Dense(l) => linalg::block_solve_lower(l, linalg::block_mut(b, m)),
            KuuFactor::Diagonal(l) => scale_rows(b, l),
        }
    }

    /// A block of columns ← L⁻ᵀ · block, on this thread.
    fn solve_transpose_block(&self, b: &mut [f64], m: usize) {
        match self {
            KuuFactor::Dense(l) => linalg::block_solve_lower_transpose(l, linalg::block_mut(b, m)),
            KuuFactor::Diagonal(l) => scale_rows(b, l),
        }
    }

    /// B ← L⁻ᵀ B for an m-row matrix.
    fn solve_transpose(&self, b: &mut DMatrix<f64>, par: Par) {
        match self {
            KuuFactor::Dense(l) => linalg::solve_lower_transpose(l, b, par),
            KuuFactor::Diagonal(l) => scale_rows(b.as_mut_slice(), l),
        }
    }

    /// L⁻¹ (m×m).
    fn inverse(&self, par: Par) -> DMatrix<f64> {
        match self {
            KuuFactor::Dense(l) => {
                let mut x = DMatrix::identity(l.nrows(), l.nrows());
                linalg::solve_lower(l, &mut x, par);
                x
            }
            KuuFactor::Diagonal(l) => {
                DMatrix::from_diagonal(&DVector::from_iterator(l.len(), l.iter().map(|v| 1.0 / v)))
            }
        }
    }

    /// L⁻ᵀ M L⁻¹ for a symmetric m×m M, symmetrised, in M's storage.
    fn sandwich(&self, mut s: DMatrix<f64>, par: Par) -> DMatrix<f64> {
        self.solve_transpose(&mut s, par);
        s.transpose_mut();
        self.solve_transpose(&mut s, par);
        let m = s.nrows();
        for j in 0..m {
            for i in j..m {
                let v = (s[(i, j)] + s[(j, i)]) * 0.5;
                s[(i, j)] = v;
                s[(j, i)] = v;
            }
        }
        s
    }
}
/// Divide each column of a column-major block (m = l.len() rows) by l entrywise.
fn scale_rows(b: &mut [f64], l: &[f64]) {
    for col in b.chunks_mut(l.len().max(1)) {
        col.iter_mut().zip(l).for_each(|(x, d)| *x /= d);
    }
}

/// What the objective and the posterior need once the data have been folded in: the
/// factors of Kuu and of `A = I + V Λ⁻¹ Vᵀ`, `β = V Λ⁻¹ y`, and three sums over the
/// data. O(m²) to keep, so a model that grows one sample at a time (online PSDS)
/// keeps only this.
#[derive(Clone, Debug)]
pub struct Summary {
    kuu: KuuFactor,
    jitter: f64,
    approx: Approx,
    noise: f64,
    /// A itself (both triangles) and its Cholesky factor.
    a: DMatrix<f64>,
    la: DMatrix<f64>,
    beta: DVector<f64>,
    /// Σ y_i²/Λ_i
    quad: f64,
    /// ½ Σ log Λ_i
    half_logdet_lambda: f64,
    /// Σ e(d_i), the approximation's extra term.
    extra: f64,
    n: usize,
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
    fn gamma(&self, scratch: &Scratch) -> DMatrix<f64> {
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

/// The n-sized values of one chunk that the second pass of FITC and power EP needs:
/// V = L⁻¹Kuf (m×len), λ, and d where the extra term needs it (power EP).
pub struct ChunkValues {
    v: DMatrix<f64>,
    lambda: Vec<f64>,
    d: Vec<f64>,
}

impl ChunkValues {
    /// Give the values' memory back.
    pub fn recycle(self, scratch: &Scratch) {
        scratch.give_matrix(self.v);
        scratch.give(self.lambda);
        scratch.give(self.d);
    }
}

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

/// The first pass over the data, chunk by chunk: A = I + V Λ⁻¹ Vᵀ, β = V Λ⁻¹ y and the
/// sums over the data, added stripe by stripe in order. Data too large for one
/// m×n matrix are folded in a chunk of rows at a time ([`Accumulator::add`]); the
/// whole data set as one chunk gives exactly what a single evaluation gives.
pub struct Accumulator {
    kuu: KuuFactor,
    jitter: f64,
    approx: Approx,
    noise: f64,
    /// I + V Λ⁻¹ Vᵀ so far (lower triangle).
    a: DMatrix<f64>,
    beta: DVector<f64>,
    quad: f64,
    sum_log_lambda: f64,
    extra: f64,
    n: usize,
}

impl Accumulator {
    /// Factor Kuu (with its jitter policy) and start from no data.
    pub fn new(
        kuu: Kuu,
        jitter: Jitter,
        approx: Approx,
        noise: f64,
        exec: &Exec,
    ) -> Result<Accumulator> {
        let approx = approx.check()?;
        if !(noise.is_finite() && noise > 0.0) {
            return Err(Error::numerical(format!(
                "the noise variance {noise:e} is not a positive number"
            )));
        }
        exec.check()?;
        let m = kuu.size();
        if m == 0 {
            return Err(Error::input("likelihood core: no features"));
        }
        let (kuu, jitter) = KuuFactor::new(kuu, jitter, exec)?;
        let mut a = exec.scratch.zero_matrix(m, m);
        a.fill_diagonal(1.0);
        Ok(Accumulator {
            kuu,
            jitter,
            approx,
            noise,
            a,
            beta: DVector::from_vec(exec.scratch.zeros(m)),
            quad: 0.0,
            sum_log_lambda: 0.0,
            extra: 0.0,
            n: 0,
        })
    }

    /// Fold in a chunk of data (its Kuf columns, prior variances and targets; `lr`'s
    /// Kuu and settings are those of [`Accumulator::new`]). With `keep`, returns the
    /// chunk's V, λ and d for the second pass where it needs them (FITC, power EP), so
    /// that V is not computed twice.
    pub fn add(
        &mut self,
        lr: &LowRank,
        y: &[f64],
        exec: &Exec,
        keep: bool,
    ) -> Result<Option<ChunkValues>> {
        check_chunk(lr, y)?;
        let keep = keep && self.approx.per_point_lambda();
        let values = chunk_pass(&self.kuu, lr, y, exec, keep, (&mut self.a, &mut self.beta))?;
        self.quad += y
            .iter()
            .zip(&values.lambda)
            .map(|(y, l)| y * y / l)
            .sum::<f64>();
        self.sum_log_lambda += values.lambda.iter().map(|l| l.ln()).sum::<f64>();
        self.extra += values
            .d
            .iter()
            .map(|di| self.approx.extra(*di, self.noise).0)
            .sum::<f64>();
        self.n += y.len();
        if keep {
            Ok(Some(values))
        } else {
            values.recycle(&exec.scratch);
            Ok(None)
        }
    }

    /// Without A's identity: the accumulator of a process other than the root of an
    /// evaluation whose rows are spread over processes ([`Sums`]), so that the identity
    /// is counted once. Only before any data are added.
    pub fn without_identity(mut self) -> Accumulator {
        if self.n == 0 {
            self.a.fill_diagonal(0.0);
        }
        self
    }

    /// The sums over the rows folded in so far, as one flat buffer: A's lower triangle
    /// (column by column), β, Σy²/λ, Σ log λ, Σ e(d), n — what adds across processes
    /// exactly as it adds across chunks.
    pub fn sums(&self) -> Sums {
        let m = self.beta.len();
        let mut buf = Vec::with_capacity(Accumulator::sums_len(m));
        push_lower(&self.a, &mut buf);
        buf.extend(self.beta.iter());
        buf.extend([self.quad, self.sum_log_lambda, self.extra, self.n as f64]);
        Sums(buf)
    }

    /// The length of [`Accumulator::sums`] for m features.
    pub fn sums_len(m: usize) -> usize {
        m * (m + 1) / 2 + m + 4
    }

    /// Replace the sums with `sums` (in [`Accumulator::sums`]' layout: e.g. their total
    /// over every process).
    pub fn set_sums(&mut self, sums: &Sums) -> Result<()> {
        let m = self.beta.len();
        let buf = &sums.0;
        if buf.len() != Accumulator::sums_len(m) {
            return Err(Error::input("likelihood core: sums of another shape"));
        }
        let rest = pull_lower(&mut self.a, buf);
        self.beta.copy_from_slice(&rest[..m]);
        let [quad, log_lambda, extra, n] = rest[m..] else {
            unreachable!("checked length")
        };
        (self.quad, self.sum_log_lambda, self.extra) = (quad, log_lambda, extra);
        self.n = n as usize;
        Ok(())
    }

    /// Factor A: the summary the objective, the adjoints and the posterior come from.
    pub fn finish(self, exec: &Exec) -> Result<Summary> {
        let mut a = self.a;
        linalg::mirror_lower(&mut a);
        let la = linalg::cholesky_with_in(&a, 0.0, SMALL, &exec.scratch).ok_or_else(|| {
            Error::numerical("I + V Λ⁻¹ Vᵀ is not positive definite (NaN in the parameters?)")
        })?;
        Ok(Summary {
            kuu: self.kuu,
            jitter: self.jitter,
            approx: self.approx,
            noise: self.noise,
            a,
            la,
            beta: self.beta,
            quad: self.quad,
            half_logdet_lambda: 0.5 * self.sum_log_lambda,
            extra: self.extra,
            n: self.n,
        })
    }
}

/// The sums over rows of a pass of the core as one flat buffer ([`Accumulator::sums`],
/// [`Backward::sums`]): a process that holds some of the rows adds its buffer to the
/// others' (an all-reduce), then finishes the pass as if it had folded in every row.
#[derive(Clone, Debug, PartialEq)]
pub struct Sums(pub Vec<f64>);

/// Append the lower triangle of a square matrix, column by column.
fn push_lower(a: &DMatrix<f64>, buf: &mut Vec<f64>) {
    for j in 0..a.ncols() {
        buf.extend(a.column(j).iter().skip(j));
    }
}

/// Fill the lower triangle of a square matrix from the front of `buf` (as
/// [`push_lower`] wrote it); returns the rest of `buf`.
fn pull_lower<'a>(a: &mut DMatrix<f64>, buf: &'a [f64]) -> &'a [f64] {
    let mut at = 0;
    for j in 0..a.ncols() {
        let len = a.nrows() - j;
        a.column_mut(j)
            .iter_mut()
            .skip(j)
            .zip(&buf[at..at + len])
            .for_each(|(x, v)| *x = *v);
        at += len;
    }
    &buf[at..]
}

/// Copy a block of Kuf's columns into V's storage and solve it in place, V_b = L⁻¹K_b:
/// block by block, while the block is in cache (a whole-matrix copy first was a pass
/// over memory of its own).
fn solve_copy(l: &KuuFactor, kuf: &[f64], j0: usize, vb: &mut [f64], m: usize) {
    vb.copy_from_slice(&kuf[j0 * m..j0 * m + vb.len()]);
    l.solve_block(vb, m);
}

/// One chunk's first pass: V = L⁻¹Kuf, λ (and d) per column, and its share of
/// V Λ⁻¹ Vᵀ and β, added stripe by stripe in order. λ and d are always returned
/// (O(n)); V only with `keep_v` — without, each stripe works in a block-sized scratch
/// and nothing of size m×n is kept.
fn chunk_pass(
    l: &KuuFactor,
    lr: &LowRank,
    y: &[f64],
    exec: &Exec,
    keep_v: bool,
    (a, beta): (&mut DMatrix<f64>, &mut DVector<f64>),
) -> Result<ChunkValues> {
    let (m, n) = lr.kuf.shape();
    let kuf = lr.kuf.as_slice();
    let scratch = &exec.scratch;
    let keep_d = lr.approx.has_extra();
    let mut v = scratch.matrix(m, if keep_v { n } else { 0 });
    let mut lambda = scratch.take(n);
    let mut d = scratch.take(if keep_d { n } else { 0 });
    let work = stripes(n, m, v.as_mut_slice(), &mut lambda, &mut d);
    let parts = linalg::map_stripes(exec.par, work, |(first, vs, ls, ds)| {
        let cols = ls.len();
        let mut a = scratch.zero_matrix(m, m);
        let mut beta = scratch.zeros(m);
        let width = m * BLOCK.min(cols);
        let mut scaled = scratch.take(width);
        // without V kept: a block-sized scratch for its columns
        let mut block = scratch.take(if keep_v { 0 } else { width });
        let mut ds_blocks = ds.chunks_mut(BLOCK);
        let mut vs_blocks = vs.chunks_mut(m * BLOCK);
        let mut result = Ok(());
        for (b, lb) in ls.chunks_mut(BLOCK).enumerate() {
            if let Err(e) = exec.check() {
                result = Err(e);
                break;
            }
            let j0 = first + b * BLOCK;
            let w = lb.len();
            let vb: &mut [f64] = if keep_v {
                vs_blocks.next().unwrap_or_default()
            } else {
                &mut block[..w * m]
            };
            let db = ds_blocks.next().unwrap_or_default();
            solve_copy(l, kuf, j0, vb, m);
            let sb = &mut scaled[..vb.len()];
            if let Err(e) = lambdas(lr, y, j0, vb, lb, db, sb, &mut beta) {
                result = Err(e);
                break;
            }
            linalg::block_add_nt_lower(&mut a, linalg::block(sb, m), linalg::block(vb, m), 1.0);
        }
        scratch.give(scaled);
        scratch.give(block);
        result.map(|()| (a, beta))
    });
    let mut failed = None;
    for part in parts.into_iter().flatten() {
        match part {
            Ok((sa, sb)) => {
                *a += &sa;
                beta.iter_mut().zip(&sb).for_each(|(b, v)| *b += v);
                scratch.give_matrix(sa);
                scratch.give(sb);
            }
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    let values = ChunkValues { v, lambda, d };
    match failed {
        Some(e) => {
            values.recycle(scratch);
            Err(e)
        }
        None => Ok(values),
    }
}

/// [`first_pass_block`] on the block of V whose first column is data point `j0`
/// of the chunk, with the error that names the point whose λ is not positive.
#[allow(clippy::too_many_arguments)] // the block's slices, as first_pass_block takes them
fn lambdas(
    lr: &LowRank,
    y: &[f64],
    j0: usize,
    vb: &[f64],
    lb: &mut [f64],
    db: &mut [f64],
    scaled: &mut [f64],
    beta: &mut [f64],
) -> Result<()> {
    let range = j0..j0 + lb.len();
    let pass = FirstPass {
        m: lr.kuf.nrows(),
        kdiag: lr.approx.uses_diagonal().then(|| &lr.kdiag[range.clone()]),
        weight: lr.approx.weight(),
        y: &y[range],
        noise: lr.noise,
    };
    match first_pass_block(&pass, vb, lb, db, scaled, beta) {
        Some(i) => Err(Error::numerical(format!(
            "diagonal of the covariance is {} at training point {} (noise variance {:e})",
            lb[i],
            j0 + i + 1,
            lr.noise
        ))),
        None => Ok(()),
    }
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
/// What the first pass needs besides the block itself.
struct FirstPass<'a> {
    m: usize,
    /// None for DTC.
    kdiag: Option<&'a [f64]>,
    /// a in Λ = a·d + σ².
    weight: f64,
    y: &'a [f64],
    noise: f64,
}

/// The first pass over a block of columns of V (= L⁻¹Kuf): λ into `lb` (and d into
/// `db` unless it is empty), then — unless `scaled` is empty (the second pass
/// recomputing λ) — V's columns divided by λ into `scaled` and β += V Λ⁻¹ y. Returns
/// the first column whose λ is not a positive number. Compiled for AVX2 and AVX-512
/// too, chosen at run time; no sum is reordered, so every version gives the same bits.
#[multiversion(targets = "simd")]
fn first_pass_block(
    p: &FirstPass,
    vb: &[f64],
    lb: &mut [f64],
    db: &mut [f64],
    scaled: &mut [f64],
    beta: &mut [f64],
) -> Option<usize> {
    let m = p.m;
    for (i, (col, li)) in vb.chunks(m).zip(lb.iter_mut()).enumerate() {
        *li = match p.kdiag {
            Some(kd) => {
                let di = kd[i] - linalg::dot(col, col);
                if !db.is_empty() {
                    db[i] = di;
                }
                p.weight * di + p.noise
            }
            None => p.noise,
        };
        if !(li.is_finite() && *li > 0.0) {
            return Some(i);
        }
    }
    for (i, ((col, li), sc)) in vb
        .chunks(m)
        .zip(lb.iter())
        .zip(scaled.chunks_mut(m))
        .enumerate()
    {
        let (inv, yi) = (1.0 / *li, p.y[i] / *li);
        for ((s, x), b) in sc.iter_mut().zip(col).zip(beta.iter_mut()) {
            *s = x * inv;
            *b += x * yi;
        }
    }
    None
}

/// What the second pass needs besides the block itself.
struct SecondPass<'a> {
    m: usize,
    approx: Approx,
    lambda: &'a [f64],
    /// d (VFE, power EP), else empty.
    d: &'a [f64],
    y: &'a [f64],
    delta: &'a [f64],
    noise: f64,
}

/// The second pass over a block: given V's columns and P = A⁻¹V in `pb`, writes the
/// per-point ∂/∂σ² (g_i plus the extra term's) into `gb`, t_i = ∂/∂d_i into `tb`
/// (unless empty), for the approximations that use d t_i v_i into `scaled` (empty for
/// DTC), and turns P's columns into Hᵀ's (see `nlml_and_adjoints`).
#[multiversion(targets = "simd")]
fn second_pass_block(
    p: &SecondPass,
    vb: &[f64],
    pb: &mut [f64],
    gb: &mut [f64],
    tb: &mut [f64],
    scaled: &mut [f64],
) {
    let m = p.m;
    let uses_d = !scaled.is_empty();
    let weight = p.approx.weight();
    for (i, (col, pc)) in vb.chunks(m).zip(pb.chunks_mut(m)).enumerate() {
        let li = p.lambda[i];
        let alpha = (p.y[i] - linalg::dot(col, p.delta)) / li;
        let gi = 0.5 * (1.0 / li - linalg::dot(pc, col) / (li * li) - alpha * alpha);
        let (ti, gs) = if p.d.is_empty() {
            (weight * gi, gi)
        } else {
            let (_, de, ds) = p.approx.extra(p.d[i], p.noise);
            (weight * gi + de, gi + ds)
        };
        gb[i] = gs;
        if !tb.is_empty() {
            tb[i] = ti;
        }
        let two_t = if uses_d { 2.0 * ti } else { 0.0 };
        if uses_d {
            let sc = &mut scaled[i * m..(i + 1) * m];
            sc.iter_mut().zip(col).for_each(|(s, x)| *s = ti * x);
        }
        for ((h, x), d) in pc.iter_mut().zip(col).zip(p.delta) {
            *h = *h / li - alpha * d - two_t * x;
        }
    }
}

/// The second pass of DTC and VFE (Λ = σ²I) over a block of Kuf's columns, given
/// `ob` = M·K_b (M = L⁻ᵀ N L⁻¹, see [`Backward::chunk`]): α_i = (y_i − k_iᵀc)/σ² and
/// column i of ∂/∂Kuf, M k_i − c α_i, in place of `ob`'s. Returns Σ α_i².
#[multiversion(targets = "simd")]
fn second_pass_const_block(kb: &[f64], ob: &mut [f64], c: &[f64], y: &[f64], noise: f64) -> f64 {
    let m = c.len();
    let mut sum_alpha2 = 0.0;
    for ((col, oc), yi) in kb.chunks(m).zip(ob.chunks_mut(m)).zip(y) {
        let alpha = (yi - linalg::dot(col, c)) / noise;
        sum_alpha2 += alpha * alpha;
        oc.iter_mut().zip(c).for_each(|(o, ci)| *o -= ci * alpha);
    }
    sum_alpha2
}

/// The second pass over the data, chunk by chunk, after the first: the adjoints of
/// each chunk's Kuf and kdiag ([`Backward::chunk`]), while the parts of ∂/∂Kuu and
/// ∂/∂σ² that sum over the data accumulate ([`Backward::finish`]).
///
/// Work per data point, in multiply-adds (m² = one "unit"; see [`Work`]):
/// - FITC, power EP: P = A⁻¹V (1), V D_t Vᵀ (½, lower triangle), L⁻ᵀ Hᵀ (½), and
///   V = L⁻¹Kuf again (½) unless the first pass kept it: 2 or 2½ units.
/// - DTC, VFE: Λ = σ²I, so v_iᵀA⁻¹v_i is needed only in its sum over the data,
///   Σ_i v_iᵀA⁻¹v_i = tr(A⁻¹ V Vᵀ) = σ²(m − tr A⁻¹), and V D_t Vᵀ = tσ²(A − I)
///   (t = ∂e/∂d is a constant); ∂/∂Kuf = 2L⁻ᵀ(G'Vᵀ)ᵀ becomes M·Kuf − c αᵀ with
///   M = L⁻ᵀ(A⁻¹ − 2tσ² I)L⁻¹/σ² and c = L⁻ᵀδ: one product with Kuf (1 unit), and
///   neither V nor a second solve.
///
/// Its m×m and n-sized matrices come from `exec.scratch` and go back there
/// ([`Backward::finish`], and [`Adjoints::recycle`] for what it hands out).
pub struct Backward {
    summary: Summary,
    /// δ = A⁻¹β (m×1)
    delta: DMatrix<f64>,
    a_inv: DMatrix<f64>,
    /// DTC, VFE: M and c (see above); empty otherwise.
    m_const: DMatrix<f64>,
    c_const: DMatrix<f64>,
    /// FITC, power EP: V D_t Vᵀ so far (lower triangle); empty otherwise.
    vtv: DMatrix<f64>,
    /// DTC, VFE: Σ α_i² so far.
    sum_alpha2: f64,
    /// FITC, power EP: Σ ∂/∂σ² of the points so far.
    d_noise: f64,
}

impl Backward {
    /// Start the second pass from the first pass's summary (which it keeps: see
    /// [`Backward::summary`]; [`Backward::finish`] gives its memory back).
    pub fn new(summary: Summary, exec: &Exec) -> Backward {
        let scratch = &exec.scratch;
        let m = summary.beta.len();
        // δ = A⁻¹β; then α = C⁻¹y = Λ⁻¹(y − Vᵀδ) and Vα = β − (A − I)δ = δ.
        let mut delta = summary.gamma(scratch);
        linalg::solve_lower_transpose(&summary.la, &mut delta, SMALL);
        let a_inv = linalg::chol_inverse_in(&summary.la, SMALL, scratch);
        let per_point = summary.approx.per_point_lambda();
        let (m_const, c_const) = if per_point {
            (scratch.matrix(0, 0), scratch.matrix(0, 0))
        } else {
            let s2 = summary.noise;
            let (_, t, _) = summary.approx.extra(0.0, s2);
            let mut n = scratch.matrix(m, m);
            n.iter_mut()
                .zip(a_inv.iter())
                .for_each(|(n, a)| *n = a * (1.0 / s2));
            for j in 0..m {
                n[(j, j)] -= 2.0 * t;
            }
            let mut c = scratch.copy(&delta);
            summary.kuu.solve_transpose(&mut c, SMALL);
            (summary.kuu.sandwich(n, SMALL), c)
        };
        let k = if per_point { m } else { 0 };
        Backward {
            summary,
            delta,
            a_inv,
            m_const,
            c_const,
            vtv: scratch.zero_matrix(k, k),
            sum_alpha2: 0.0,
            d_noise: 0.0,
        }
    }

    /// ∂/∂Kuf (m×len) and ∂/∂kdiag (len; empty for DTC) of one chunk; `values` are the
    /// chunk's from the first pass if it kept them (FITC, power EP), else V and λ are
    /// computed again, block by block as each block is used (the block stays in
    /// cache). DTC and VFE need neither.
    pub fn chunk(
        &mut self,
        lr: &LowRank,
        y: &[f64],
        values: Option<ChunkValues>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        check_chunk(lr, y)?;
        if self.summary.approx.per_point_lambda() {
            self.chunk_per_point(lr, y, values, exec)
        } else {
            if let Some(v) = values {
                v.recycle(&exec.scratch);
            }
            self.chunk_const(lr, y, exec)
        }
    }

    /// [`Backward::chunk`] for DTC and VFE: per stripe and block, ∂/∂Kuf = M·K_b − c αᵀ.
    fn chunk_const(
        &mut self,
        lr: &LowRank,
        y: &[f64],
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let s = &self.summary;
        let (m, n) = lr.kuf.shape();
        let kuf = lr.kuf.as_slice();
        let mut d_kuf = exec.scratch.matrix(m, n);
        let (mm, c) = (&self.m_const, self.c_const.as_slice());
        let work = stripes(n, m, d_kuf.as_mut_slice(), &mut [], &mut []);
        let parts = linalg::map_stripes(exec.par, work, |(first, os, _, _)| {
            let mut sum = 0.0;
            for (b, ob) in os.chunks_mut(m * BLOCK).enumerate() {
                exec.check()?;
                let j0 = first + b * BLOCK;
                let w = ob.len() / m;
                let kb = &kuf[j0 * m..(j0 + w) * m];
                linalg::block_mul(
                    linalg::block_mut(ob, m),
                    linalg::view(mm),
                    linalg::block(kb, m),
                );
                sum += second_pass_const_block(kb, ob, c, &y[j0..j0 + w], s.noise);
            }
            Ok(sum)
        });
        for part in parts.into_iter().flatten() {
            match part {
                Ok(sum) => self.sum_alpha2 += sum,
                Err(e) => {
                    exec.scratch.give_matrix(d_kuf);
                    return Err(e);
                }
            }
        }
        let mut d_kdiag = exec
            .scratch
            .take(if s.approx == Approx::Vfe { n } else { 0 });
        d_kdiag.fill(s.approx.extra(0.0, s.noise).1);
        Ok((d_kuf, d_kdiag))
    }

    /// [`Backward::chunk`] for FITC and power EP.
    fn chunk_per_point(
        &mut self,
        lr: &LowRank,
        y: &[f64],
        values: Option<ChunkValues>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        let s = &self.summary;
        let scratch = &exec.scratch;
        let recompute = values.is_none();
        let (m, n) = lr.kuf.shape();
        let kuf = lr.kuf.as_slice();
        // computed again, V is built block by block below; its storage becomes ∂/∂Kuf
        let ChunkValues {
            v: mut d_kuf,
            mut lambda,
            mut d,
        } = match values {
            Some(v) => v,
            None => ChunkValues {
                v: scratch.matrix(m, n),
                lambda: scratch.take(n),
                d: scratch.take(if lr.approx.has_extra() { n } else { 0 }),
            },
        };
        let approx = s.approx;
        // t = ∂/∂d has its own vector unless it equals the per-point ∂/∂σ² (FITC)
        let separate_t = approx.has_extra();
        let (delta, a_inv, l) = (self.delta.as_slice(), &self.a_inv, &s.kuu);
        // Per stripe, V's storage becomes ∂NLML/∂Kuf column block by column block:
        // P = A⁻¹V gives v_iᵀA⁻¹v_i, hence C⁻¹_ii = 1/Λ_i − v_iᵀA⁻¹v_i/Λ_i² and
        // g_i = ½(C⁻¹_ii − α_i²) = ∂NLML/∂Λ_ii; Hᵀ = (G'Vᵀ)ᵀ has column i
        // ½ p_i/Λ_i − ½ δ α_i − t_i v_i, and ∂/∂Kuf = 2 L⁻ᵀ Hᵀ.
        let mut g = scratch.take(n);
        let mut t = scratch.take(if separate_t { n } else { 0 });
        let work = {
            let work = stripes(n, m, d_kuf.as_mut_slice(), &mut g, &mut t);
            let values = stripes(n, 0, &mut [], &mut lambda, &mut d);
            linalg::stripe_array(
                work.into_iter()
                    .zip(values)
                    .map_while(|(w, v)| Some((w?, v?)))
                    .map(|(w, (_, _, ls, ds))| (w, ls, ds)),
            )
        };
        let parts = linalg::map_stripes(exec.par, work, |((first, vs, gs, ts), ls, ds)| {
            // this stripe's share of V D_t Vᵀ
            let mut vtv = scratch.zero_matrix(m, m);
            let width = m * BLOCK.min(gs.len());
            let (mut p, mut scaled) = (scratch.take(width), scratch.take(width));
            let mut ts_blocks = ts.chunks_mut(BLOCK);
            let mut ds_blocks = ds.chunks_mut(BLOCK);
            let mut result = Ok(());
            for (b, ((vb, gb), lb)) in vs
                .chunks_mut(m * BLOCK)
                .zip(gs.chunks_mut(BLOCK))
                .zip(ls.chunks_mut(BLOCK))
                .enumerate()
            {
                if let Err(e) = exec.check() {
                    result = Err(e);
                    break;
                }
                let j0 = first + b * BLOCK;
                let db = ds_blocks.next().unwrap_or_default();
                if recompute {
                    solve_copy(l, kuf, j0, vb, m);
                    if let Err(e) = lambdas(lr, y, j0, vb, lb, db, &mut [], &mut []) {
                        result = Err(e);
                        break;
                    }
                }
                let pb = &mut p[..vb.len()];
                linalg::block_mul(
                    linalg::block_mut(pb, m),
                    linalg::view(a_inv),
                    linalg::block(vb, m),
                );
                let sb = &mut scaled[..vb.len()];
                let pass = SecondPass {
                    m,
                    approx,
                    lambda: lb,
                    d: db,
                    y: &y[j0..j0 + gb.len()],
                    delta,
                    noise: s.noise,
                };
                let tb = ts_blocks.next().unwrap_or_default();
                second_pass_block(&pass, vb, pb, gb, tb, sb);
                linalg::block_add_nt_lower(
                    &mut vtv,
                    linalg::block(sb, m),
                    linalg::block(vb, m),
                    1.0,
                );
                vb.copy_from_slice(pb);
                l.solve_transpose_block(vb, m);
            }
            scratch.give(p);
            scratch.give(scaled);
            result.map(|()| vtv)
        });
        scratch.give(lambda);
        scratch.give(d);
        let mut failed = None;
        for part in parts.into_iter().flatten() {
            match part {
                Ok(part) => {
                    self.vtv += &part;
                    scratch.give_matrix(part);
                }
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            scratch.give_matrix(d_kuf);
            return Err(e);
        }
        self.d_noise += g.iter().sum::<f64>();
        let d_kdiag = if separate_t {
            scratch.give(g);
            t
        } else {
            scratch.give(t);
            g
        };
        Ok((d_kuf, d_kdiag))
    }

    /// The second pass's sums over the rows so far and `grad` (the family's pull-back
    /// of them so far) as one flat buffer: V D_t Vᵀ's lower triangle (FITC, power EP),
    /// Σα², Σ ∂/∂σ², then `grad`.
    pub fn sums(&self, grad: &[f64]) -> Sums {
        let mut buf = Vec::with_capacity(self.vtv.len() + 2 + grad.len());
        push_lower(&self.vtv, &mut buf);
        buf.extend([self.sum_alpha2, self.d_noise]);
        buf.extend(grad);
        Sums(buf)
    }

    /// Replace the sums and `grad` with `sums` (in [`Backward::sums`]' layout).
    pub fn set_sums(&mut self, sums: &Sums, grad: &mut Vec<f64>) -> Result<()> {
        let k = self.vtv.nrows();
        let buf = &sums.0;
        if buf.len() < k * (k + 1) / 2 + 2 {
            return Err(Error::input("likelihood core: sums of another shape"));
        }
        let rest = pull_lower(&mut self.vtv, buf);
        (self.sum_alpha2, self.d_noise) = (rest[0], rest[1]);
        grad.clear();
        grad.extend(&rest[2..]);
        Ok(())
    }

    /// The summary of the first pass.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// ∂/∂Kuu and ∂/∂σ² once every chunk has been through [`Backward::chunk`].
    pub fn finish(self, exec: &Exec) -> (DMatrix<f64>, f64) {
        let s = &self.summary;
        let scratch = &exec.scratch;
        let m = self.delta.len();
        let delta = self.delta.as_slice();
        // V G' Vᵀ = ½(I − A⁻¹) − ½ δδᵀ − V D_t Vᵀ, since V C⁻¹ Vᵀ = I − A⁻¹.
        let mut vgv = scratch.matrix(m, m);
        for j in 0..m {
            for i in 0..m {
                let eye = if i == j { 1.0 } else { 0.0 };
                vgv[(i, j)] = (eye - self.a_inv[(i, j)]) * 0.5 - (delta[i] * delta[j]) * 0.5;
            }
        }
        let d_noise = if s.approx.per_point_lambda() {
            let mut sum = self.vtv;
            linalg::mirror_lower(&mut sum);
            vgv -= &sum;
            scratch.give_matrix(sum);
            self.d_noise
        } else {
            // Λ = σ²I: V D_t Vᵀ = tσ²(A − I); Σ_i g_i = ½(n/σ² − Σ_i v_iᵀA⁻¹v_i/σ⁴ −
            // Σ_i α_i²) with Σ_i v_iᵀA⁻¹v_i = σ²(m − tr A⁻¹); VFE's ∂e/∂σ² = −d/(2σ⁴)
            // sums to −extra/σ²
            let s2 = s.noise;
            let (_, t, _) = s.approx.extra(0.0, s2);
            if t != 0.0 {
                for j in 0..m {
                    for i in 0..m {
                        let eye = if i == j { 1.0 } else { 0.0 };
                        vgv[(i, j)] -= (s.a[(i, j)] - eye) * (t * s2);
                    }
                }
            }
            let sum_q = s2 * (m as f64 - self.a_inv.trace());
            let sum_g = 0.5 * (s.n as f64 / s2 - sum_q / (s2 * s2) - self.sum_alpha2);
            scratch.give_matrix(self.vtv);
            sum_g - if t != 0.0 { s.extra / s2 } else { 0.0 }
        };
        scratch.give_matrix(self.delta);
        scratch.give_matrix(self.a_inv);
        scratch.give_matrix(self.m_const);
        scratch.give_matrix(self.c_const);
        // ∂/∂Kuu = −L⁻ᵀ (V G' Vᵀ) L⁻¹
        let mut d_kuu = s.kuu.sandwich(vgv, SMALL);
        d_kuu.neg_mut();
        self.summary.recycle(scratch);
        (d_kuu, d_noise)
    }
}

impl Adjoints {
    /// Give the adjoints' memory back (to the scratch of the evaluation that made them).
    pub fn recycle(self, scratch: &Scratch) {
        scratch.give_matrix(self.d_kuf);
        scratch.give_matrix(self.d_kuu);
        scratch.give(self.d_kdiag);
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
    pub fn predict(&self, kus: &DMatrix<f64>, prior: &[f64], par: Par) -> (Vec<f64>, Vec<f64>) {
        let w = DVector::from_column_slice(&self.mean_weights);
        let mean = kus.tr_mul(&w);
        let sk = linalg::mul(&self.var_matrix, false, kus, false, par);
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

    /// The latent covariance (t×t) at t test points from K(u, *) (m×t) and, for a
    /// kernel prior, the prior covariance k(X*, X*): prior − K*u S Ku*, or − K*u S Ku*
    /// for a degenerate model. Its diagonal is [`Posterior::predict`]'s variance before
    /// the clamp at 0; it is symmetrised against rounding.
    pub fn covariance(
        &self,
        kus: &DMatrix<f64>,
        prior: Option<DMatrix<f64>>,
        par: Par,
    ) -> crate::error::Result<DMatrix<f64>> {
        let sk = linalg::mul(&self.var_matrix, false, kus, false, par);
        let quad = linalg::mul(kus, true, &sk, false, par);
        let mut cov = match (self.latent_prior, prior) {
            (LatentPrior::Kernel, Some(p)) => p - quad,
            (LatentPrior::None, _) => -quad,
            (LatentPrior::Kernel, None) => {
                return Err(crate::error::Error::input(
                    "the posterior's variance needs the prior covariance at the test points",
                ));
            }
        };
        let t = cov.nrows();
        for i in 0..t {
            for j in 0..i {
                let v = 0.5 * (cov[(i, j)] + cov[(j, i)]);
                cov[(i, j)] = v;
                cov[(j, i)] = v;
            }
        }
        Ok(cov)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEQ: fn() -> Exec = Exec::sequential;

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
        let k = crate::kernel::Kernel::se(1.4, vec![0.9, 1.3]);
        let kuf = k.matrix(&z, &x, Par::Seq);
        let kuu = k.gram(&z, Par::Seq);
        let y: Vec<f64> = (0..n)
            .map(|i| (i as f64 * 0.3).sin() + 0.1 * (i % 3) as f64)
            .collect();
        (kuf, kuu, vec![1.4; n], y)
    }

    /// Q = Kfu Kuu⁻¹ Kuf and d = diag(K − Q), densely.
    fn dense_q(kuf: &DMatrix<f64>, kuu: &DMatrix<f64>, kd: &[f64]) -> (DMatrix<f64>, Vec<f64>) {
        let q = kuf.transpose() * kuu.clone().cholesky().expect("spd").solve(kuf);
        let d = (0..kd.len()).map(|i| kd[i] - q[(i, i)]).collect();
        (q, d)
    }

    /// The objective of every approximation by a dense O(n³) evaluation.
    fn dense_objective(
        kuf: &DMatrix<f64>,
        kuu: &DMatrix<f64>,
        kd: &[f64],
        s2: f64,
        approx: Approx,
        y: &[f64],
    ) -> f64 {
        let (q, d) = dense_q(kuf, kuu, kd);
        let (a, extra) = match approx {
            Approx::Fitc => (1.0, 0.0),
            Approx::Dtc => (0.0, 0.0),
            Approx::Vfe => (0.0, d.iter().sum::<f64>() / (2.0 * s2)),
            Approx::Pep { alpha } => (
                alpha,
                (1.0 - alpha) / (2.0 * alpha)
                    * d.iter().map(|di| (1.0 + alpha * di / s2).ln()).sum::<f64>(),
            ),
        };
        let mut c = q;
        for i in 0..kd.len() {
            c[(i, i)] += s2 + a * d[i];
        }
        dense_nlml(&c, y) + extra
    }

    fn dense_cov(
        kuf: &DMatrix<f64>,
        kuu: &DMatrix<f64>,
        kd: &[f64],
        s2: f64,
        fitc: bool,
    ) -> DMatrix<f64> {
        let (mut c, d) = dense_q(kuf, kuu, kd);
        for i in 0..kd.len() {
            c[(i, i)] += s2 + if fitc { d[i] } else { 0.0 };
        }
        c
    }

    const ALL: [Approx; 5] = [
        Approx::Fitc,
        Approx::Dtc,
        Approx::Vfe,
        Approx::Pep { alpha: 0.5 },
        Approx::Pep { alpha: 0.1 },
    ];

    fn lr<'a>(
        kuf: &'a DMatrix<f64>,
        kuu: &'a DMatrix<f64>,
        kd: &'a [f64],
        s2: f64,
        approx: Approx,
    ) -> LowRank<'a> {
        LowRank {
            kuf,
            kuu: Kuu::Dense(kuu),
            approx,
            kdiag: kd,
            noise: s2,
            jitter: Jitter::Fixed(0.0),
        }
    }

    #[test]
    fn core_matches_dense_evaluation() {
        let (kuf, kuu, kd, y) = problem(150, 12);
        for approx in ALL {
            let fast = nlml(&lr(&kuf, &kuu, &kd, 0.07, approx), &y, &SEQ()).expect("ok");
            let dense = dense_objective(&kuf, &kuu, &kd, 0.07, approx, &y);
            assert!(
                ((fast - dense) / dense).abs() < 1e-11,
                "{approx:?}: {fast} vs {dense}"
            );
        }
    }

    /// Power EP is FITC at α = 1 (bit for bit: the same operations) and VFE as α → 0;
    /// VFE's bound lies above the DTC/FITC evidence it bounds (−ELBO ≥ NLML_DTC).
    #[test]
    fn power_ep_ties_fitc_and_vfe() {
        let (kuf, kuu, kd, y) = problem(120, 9);
        let f = |a| nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.05, a), &y, &SEQ()).expect("ok");
        let (fitc, pep1) = (f(Approx::Fitc), f(Approx::Pep { alpha: 1.0 }));
        assert_eq!(fitc.nlml, pep1.nlml);
        assert_eq!(fitc.d_kuf, pep1.d_kuf);
        assert_eq!(fitc.d_kdiag, pep1.d_kdiag);
        assert_eq!(fitc.d_noise, pep1.d_noise);
        let (vfe, pep0) = (f(Approx::Vfe), f(Approx::Pep { alpha: 1e-6 }));
        assert!(((vfe.nlml - pep0.nlml) / vfe.nlml).abs() < 1e-5);
        let dtc = f(Approx::Dtc);
        assert!(vfe.nlml >= dtc.nlml);
    }

    /// A diagonal Kuu (scalings in place of triangular solves) gives what the dense
    /// path gives for the same matrix, for every approximation, adjoints included.
    #[test]
    fn diagonal_kuu_equals_the_dense_path() {
        let (kuf, _, kd, y) = problem(90, 7);
        let diag: Vec<f64> = (0..7).map(|j| 2.0 + 0.3 * j as f64).collect();
        let dense = DMatrix::from_diagonal(&DVector::from_column_slice(&diag));
        // a prior diagonal large enough that d = kdiag − q stays positive
        let kd: Vec<f64> = kd.iter().map(|v| v * 4.0).collect();
        for approx in ALL {
            let a =
                nlml_and_adjoints(&lr(&kuf, &dense, &kd, 0.05, approx), &y, &SEQ()).expect("dense");
            let b = nlml_and_adjoints(
                &LowRank {
                    kuu: Kuu::Diagonal(&diag),
                    ..lr(&kuf, &dense, &kd, 0.05, approx)
                },
                &y,
                &SEQ(),
            )
            .expect("diagonal");
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-11 * (1.0 + y.abs());
            assert!(close(a.nlml, b.nlml), "{approx:?}");
            assert!(close(a.d_noise, b.d_noise), "{approx:?}");
            for (x, y) in a.d_kuf.iter().zip(b.d_kuf.iter()) {
                assert!(close(*x, *y), "{approx:?} kuf");
            }
            for j in 0..7 {
                assert!(close(a.d_kuu[(j, j)], b.d_kuu[(j, j)]), "{approx:?} kuu");
            }
            for (x, y) in a.d_kdiag.iter().zip(&b.d_kdiag) {
                assert!(close(*x, *y), "{approx:?} kdiag");
            }
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
        for approx in [Approx::Fitc, Approx::Vfe] {
            let eval = |kuf: &'_ DMatrix<f64>, kd: &'_ [f64]| -> f64 {
                nlml(&lr(kuf, &kuu, kd, 0.07, approx), &y, &Exec::default()).expect("ok")
            };
            // dense reference through faer's Cholesky (nalgebra's is too slow at n = 2600)
            let c = dense_cov(&kuf, &kuu, &kd, 0.07, approx == Approx::Fitc);
            let l = linalg::cholesky_with(&c, 0.0, Par::Threads(0)).expect("spd");
            let mut a = DMatrix::from_column_slice(n, 1, &y);
            linalg::solve_lower(&l, &mut a, Par::Threads(0));
            let trace = match approx {
                Approx::Vfe => dense_q(&kuf, &kuu, &kd).1.iter().sum::<f64>() / (2.0 * 0.07),
                _ => 0.0,
            };
            let dense = 0.5 * a.norm_squared()
                + linalg::half_logdet(&l)
                + 0.5 * n as f64 * (2.0 * PI).ln()
                + trace;
            let fast = eval(&kuf, &kd);
            assert!(((fast - dense) / dense).abs() < 1e-11, "{fast} vs {dense}");
            let adj = nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.07, approx), &y, &Exec::default())
                .expect("ok");
            let h = 1e-6;
            let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * (1.0 + b.abs());
            for (i, j) in [(0, 300), (5, 1000), (3, 2560), (2, n - 1)] {
                let (mut p, mut q) = (kuf.clone(), kuf.clone());
                p[(i, j)] += h;
                q[(i, j)] -= h;
                let fd = (eval(&p, &kd) - eval(&q, &kd)) / (2.0 * h);
                assert!(
                    close(adj.d_kuf[(i, j)], fd),
                    "{approx:?} kuf {i},{j}: {} vs {fd}",
                    adj.d_kuf[(i, j)]
                );
                let (mut p, mut q) = (kd.clone(), kd.clone());
                p[j] += h;
                q[j] -= h;
                let fd = (eval(&kuf, &p) - eval(&kuf, &q)) / (2.0 * h);
                assert!(
                    close(adj.d_kdiag[j], fd),
                    "{approx:?} kdiag {j}: {} vs {fd}",
                    adj.d_kdiag[j]
                );
            }
        }
    }

    #[test]
    fn adjoints_match_finite_differences() {
        let (kuf, kuu, kd, y) = problem(40, 6);
        for approx in ALL {
            let eval = |kuf: &DMatrix<f64>, kuu: &DMatrix<f64>, kd: &[f64], s2: f64| {
                nlml(&lr(kuf, kuu, kd, s2, approx), &y, &SEQ()).expect("ok")
            };
            let adj =
                nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.05, approx), &y, &SEQ()).expect("ok");
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
                    "{approx:?} kuf {i},{j}: {} vs {fd}",
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
                assert!(close(an, fd), "{approx:?} kuu {i},{j}: {an} vs {fd}");
            }
            let fd =
                (eval(&kuf, &kuu, &kd, 0.05 + h) - eval(&kuf, &kuu, &kd, 0.05 - h)) / (2.0 * h);
            assert!(
                close(adj.d_noise, fd),
                "{approx:?} noise {} vs {fd}",
                adj.d_noise
            );
            if approx.uses_diagonal() {
                let (mut p, mut q) = (kd.clone(), kd.clone());
                p[11] += h;
                q[11] -= h;
                let fd = (eval(&kuf, &kuu, &p, 0.05) - eval(&kuf, &kuu, &q, 0.05)) / (2.0 * h);
                assert!(close(adj.d_kdiag[11], fd), "{approx:?} kdiag");
            } else {
                assert!(adj.d_kdiag.is_empty());
            }
        }
    }

    #[test]
    fn posterior_matches_dense_conditioning() {
        let (kuf, kuu, kd, y) = problem(60, 8);
        let k = crate::kernel::Kernel::se(1.4, vec![0.9, 1.3]);
        let z = DMatrix::from_fn(8, 2, |j, d| ((j * (d + 3)) as f64 * 0.53 + 0.1).cos() * 1.5);
        let xs = DMatrix::from_fn(5, 2, |i, d| (i as f64 - 2.0) * 0.7 + d as f64 * 0.2);
        let kus = k.matrix(&z, &xs, Par::Seq);
        for (approx, fitc) in [(Approx::Fitc, true), (Approx::Vfe, false)] {
            let post =
                posterior(&lr(&kuf, &kuu, &kd, 0.05, approx), &y, false, &SEQ()).expect("ok");
            let (mean, var) = post.predict(&kus, &[1.4; 5], Par::Seq);
            // dense prediction: Q*f C⁻¹ y and k** − Q*f C⁻¹ Qf* (VFE predicts as DTC)
            let c = dense_cov(&kuf, &kuu, &kd, 0.05, fitc);
            let kuu_chol = kuu.clone().cholesky().expect("spd");
            let qsf = kus.transpose() * kuu_chol.solve(&kuf);
            let cc = c.cholesky().expect("spd");
            let dm = &qsf * cc.solve(&DVector::from_column_slice(&y));
            let dv = (&qsf * cc.solve(&qsf.transpose())).diagonal();
            for t in 0..5 {
                assert!((mean[t] - dm[t]).abs() < 1e-10, "{approx:?}");
                assert!((var[t] - (1.4 - dv[t])).abs() < 1e-10, "{approx:?}");
            }
        }
    }

    /// A cancelled token stops an evaluation inside its stripes.
    #[test]
    fn a_cancelled_evaluation_stops_with_cancelled() {
        let (kuf, kuu, kd, y) = problem(50, 5);
        let exec = Exec::sequential();
        exec.cancel.cancel();
        let e = nlml_and_adjoints(&lr(&kuf, &kuu, &kd, 0.05, Approx::Fitc), &y, &exec)
            .expect_err("cancelled");
        assert!(matches!(e, Error::Cancelled));
    }

    /// Folding points into a DTC summary one at a time gives the batch summary.
    #[test]
    fn the_streamed_summary_equals_the_batch_one() {
        let (kuf, _, _, y) = problem(30, 6);
        let diag = vec![1.7; 6];
        let batch = summary(
            &LowRank {
                kuf: &kuf,
                kuu: Kuu::Diagonal(&diag),
                approx: Approx::Dtc,
                kdiag: &[],
                noise: 0.03,
                jitter: Jitter::Fixed(0.0),
            },
            &y,
            &SEQ(),
        )
        .expect("batch");
        let mut s =
            Summary::empty_dtc(Kuu::Diagonal(&diag), Jitter::Fixed(0.0), 0.03).expect("empty");
        for (i, yi) in y.iter().enumerate() {
            let mut col = kuf.column(i).iter().copied().collect::<Vec<_>>();
            s.add_dtc(&mut col, *yi).expect("adds");
        }
        assert!((s.nlml() - batch.nlml()).abs() < 1e-10 * batch.nlml().abs());
        let (a, b) = (s.posterior(true, Par::Seq), batch.posterior(true, Par::Seq));
        assert!((a.var_matrix - b.var_matrix).abs().max() < 1e-10);
    }
}
