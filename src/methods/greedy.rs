//! Greedy basis selection (matching pursuit) for a DTC model, docs/methods.md §6 and
//! Keerthi & Chu, *A matching pursuit approach to sparse GP regression* (NIPS 2005).
//!
//! The model is DTC with `Kfu = K(X, X_I)`, `Kuu = K_I` for a subset I of the training
//! points, |I| = d_max = m, grown one point at a time at fixed σ0², ℓ, σ². With
//! `M = σ² K̂_I + K_I,· K_·,I` (K̂_I = K_I + jitter·I, the jitter of every Kuu in sgpw,
//! docs/methods.md §1.2) the solution is `α_I = M⁻¹ K_I,· y`, the minimiser of
//! `π̃(α_I) = ½ α_Iᵀ M α_I − yᵀ K_·,I α_I`. [`Incremental`] keeps it in the whitened
//! form of the likelihood core — `G = chol(K̂_I)`, `Q = K_·,I G⁻ᵀ`,
//! `L_A = chol(σ²I + QᵀQ)` (so chol(M) = G L_A) and `P = Q L_A⁻ᵀ = K_·,I chol(M)⁻ᵀ` —
//! each grown by one row or column per step (O(n·d)), with `γ = Pᵀy`, the fitted values
//! `μ = K_·,I α_I = P γ`, the residual `y − μ` and the row norms ‖Q_i‖², ‖P_i‖², so the
//! DTC latent variance at every training point, `v_i = σ0² − ‖Q_i‖² + σ² ‖P_i‖²`, is O(1).
//! (Growing chol(M) directly, as the paper writes it, loses all accuracy once σ² times
//! the jitter falls below ε‖K_·,j‖² — long lengthscales, small noise: elevators.)
//!
//! Nothing is refactorised from scratch: O(n·d) per step, O(n·d_max²) in all. The DTC
//! evidence after each step is O(1) from these
//! (`yᵀC⁻¹y = (yᵀy − ‖γ‖²)/σ²`, `log|C| = (n−d) log σ² + log|σ²I + QᵀQ|`), and so is
//! the VFE bound (`+ (n σ0² − Σ‖Q_i‖²)/(2σ²)`); the run's objective is reported as its
//! progress, so the evidence chart draws it against the number of basis points.
//!
//! Scores of a candidate i ∉ I (kernel column `r = K_·,i`):
//! - RAND: none, a random point;
//! - INFO: the relative entropy of docs/methods.md §6.2 from μ_i, v_i, y_i, σ² (O(1));
//! - KAPPA / DMAX (post-backfitting, the paper's eqs. 7–8): with α_I fixed, the 1-D
//!   optimum of α_i decreases π by `Δ_i = ½ (rᵀ(y − μ) − σ² μ_i)² / (σ² K̂_ii + rᵀr)`
//!   (O(n)), scored on a cache of c = κ or c = d_max kernel rows; each step takes the
//!   best, keeps the best-scored rest and replaces the chosen and the κ − 1 lowest by κ
//!   fresh random points from outside I and the cache;
//! - SB (Smola & Bartlett): the exact decrease when α_I and α_i are re-optimised
//!   together, `½ γ_new²` with γ_new the entry γ would gain (O(n·d)), over κ fresh
//!   random candidates per step.
//!
//! `--adapt K` alternates K times (1) a selection at fixed σ0², ℓ, σ² and (2) an L-BFGS
//! fit of σ0², ℓ, σ² at fixed I; the cache of the next selection starts from the kernel
//! rows of the previous basis (the paper's §4). The objective of (2), and the one every
//! greedy run reports, is Titsias's bound (`approx`, default vfe): the DTC evidence
//! plus `tr(K − Q)/(2σ²)`. The posterior the selection computes (and predicts with, the
//! projected-process predictive with its prior term σ0² − Q**) is exactly the optimal
//! posterior of that bound, so (2) fits the model that predicts. The DTC evidence the
//! paper's §4 writes (`approx = "dtc"`) is the exact evidence of the degenerate model
//! K_·I K_I⁻¹ f_I, which has no prior term: it cannot see σ0² − Q, and fitted at a
//! basis that does not span the kernel it doubles σ0² (kin40k, d_max = 500), so every
//! predictive variance doubles with it (docs/results/greedy-adaptation.md). The
//! objective, its gradient, the posterior and prediction all go through the SE
//! pseudo-input family (`pseudo::VFE` / `pseudo::DTC`, inducing inputs = the selected
//! X_I, held fixed): the selection's algebra above is the method, never a second
//! likelihood core.

use super::eigen::{Basis, basis_dims, basis_markers, basis_points, set_basis_points};
use super::hyper::{pack_hyper, random_rows, stage_budget, unpack_hyper};
use super::method::Markers;
use super::method::{Method, Objective, ValidRunSpec};
use super::pseudo;
use super::pseudo::Inducing;
use crate::data::TrainData;
use crate::error::Location;
use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::kernel::Kernel;
use crate::likelihood::Posterior;
use crate::linalg::{self, Jitter};
use crate::model_file::{Hyper, ModelFile, ModelTable, Witness};
use crate::optim::{Control, Outcome, Stop};
use crate::run_context::{Phase, RunContext};
use crate::run_spec::{ApproxKind, DataShape, MethodOptions, Naming, Select};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Accum, MatMut, MatRef};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::f64::consts::PI;
use std::time::Instant;

/// Candidates per step of SB and fresh kernel rows per step of KAPPA / DMAX
/// (Smola & Bartlett's κ = 59, which the paper keeps).
pub const KAPPA: usize = 59;

/// The selection's random stream: the run's seed on a stream of its own, so the draws
/// of the subset fit (in init) and of the selection do not overlap.
const SELECT_STREAM: u64 = 0x6772_6565_6479;

/// The greedy method.
pub struct Greedy;

pub const GREEDY: Greedy = Greedy;

// ---- The incremental DTC solution -------------------------------------------------

/// The DTC solution on a basis grown one training point at a time.
///
/// Kept for the current basis I (d points), in the whitened form of the likelihood
/// core (docs/methods.md §1.2), which stays accurate when σ² is small and K_I nearly singular:
/// - `G = chol(K̂_I)` and `Q = K_·,I G⁻ᵀ` (n×d, the incomplete Cholesky factor of the
///   Nyström matrix; `Qᵀ` is the core's V);
/// - `L_A = chol(A)`, `A = σ²I + QᵀQ = G⁻¹ M G⁻ᵀ` (so chol(M) = G L_A), and
///   `P = Q L_A⁻ᵀ = K_·,I chol(M)⁻ᵀ` (n×d) with `T = σ L_A⁻ᵀ` (d×d): `[P ; T]` has
///   orthonormal columns;
/// - `γ = L_A⁻¹ Qᵀ y = Pᵀ y`, the fitted values `μ = K_·,I α_I = P γ`, `y − μ`, and
///   the row norms ‖Q_i‖², ‖P_i‖² (the DTC latent variance at x_i is
///   `σ0² − ‖Q_i‖² + σ² ‖P_i‖²`).
///
/// Adding point j with kernel column r = K_·,j: `g = G⁻¹ K̂_I,j`,
/// `g_jj² = K̂_jj − ‖g‖²`, `q = (r − Q g)/g_jj`; then one Gram–Schmidt step of
/// `[q ; 0 ; σ]` against `[P ; T]`: `a = Pᵀ q`, residual `[q − P a ; −T a ; σ]` whose norm
/// is the new diagonal `a_jj` of L_A (a sum of squares: nothing cancels), new column
/// of P = `(q − P a)/a_jj`, new entry of γ = `(q − P a)ᵀ y / a_jj`. Three O(n·d) passes.
pub struct Incremental {
    y: Vec<f64>,
    yy: f64,
    sf2: f64,
    noise: f64,
    jitter: f64,
    rows: Vec<usize>,
    in_basis: Vec<bool>,
    /// cap×cap; the leading d×d block is chol(K̂_I).
    g: DMatrix<f64>,
    /// cap×cap; the leading d×d block is chol(A).
    la: DMatrix<f64>,
    /// cap×cap, upper triangular; the leading d×d block is σ L_A⁻ᵀ.
    t: DMatrix<f64>,
    /// n×cap; the first d columns are K_·,I G⁻ᵀ.
    q: DMatrix<f64>,
    /// n×cap; the first d columns are Q L_A⁻ᵀ = K_·,I chol(M)⁻ᵀ.
    p: DMatrix<f64>,
    gamma: Vec<f64>,
    mu: Vec<f64>,
    resid: Vec<f64>,
    p2: Vec<f64>,
    q2: Vec<f64>,
    half_logdet_a: f64,
    gamma2: f64,
    /// Σ_i ‖Q_i‖² = tr(Q Qᵀ), the trace of the Nyström matrix (the bound's term).
    trace_q: f64,
}

/// What including candidate `j` takes: its new rows of chol(K̂_I) and chol(A) and the
/// new columns of Q, P and T.
#[derive(Clone, Debug)]
pub struct Column {
    pub j: usize,
    g: Vec<f64>,
    gjj: f64,
    a: Vec<f64>,
    ajj: f64,
    /// q (n)
    q: Vec<f64>,
    /// q − P a (n)
    res: Vec<f64>,
    /// −T a (d)
    tres: Vec<f64>,
}

/// A column-major matrix view of a slice.
fn mat(s: &[f64], rows: usize, cols: usize) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(s, rows, cols)
}

fn mat_mut(s: &mut [f64], rows: usize, cols: usize) -> MatMut<'_, f64> {
    MatMut::from_column_major_slice_mut(s, rows, cols)
}

/// k candidates' parts before the choice (column c of each block for candidate c).
struct Candidates {
    /// d×k: g_c = G⁻¹ K̂_I,c and g_cc².
    g: Vec<f64>,
    gjj2: Vec<f64>,
    /// n×k: q_c = (r_c − Q g_c)/g_cc (zero where g_cc² is not positive).
    q: Vec<f64>,
    /// d×k: a_c = Pᵀ q_c.
    a: Vec<f64>,
    /// n×k: q_c − P a_c; d×k: −T a_c.
    res: Vec<f64>,
    tres: Vec<f64>,
    /// a_cc² = ‖q_c − P a_c‖² + ‖T a_c‖² + σ².
    ajj2: Vec<f64>,
}

impl Incremental {
    /// An empty basis with room for `cap` points (two n×cap matrices).
    pub fn new(y: &[f64], hyper: &Hyper, jitter: f64, cap: usize) -> Incremental {
        let n = y.len();
        Incremental {
            y: y.to_vec(),
            yy: linalg::dot(y, y),
            sf2: hyper.signal_variance,
            noise: hyper.noise_variance,
            jitter,
            rows: Vec::with_capacity(cap),
            in_basis: vec![false; n],
            g: DMatrix::zeros(cap, cap),
            la: DMatrix::zeros(cap, cap),
            t: DMatrix::zeros(cap, cap),
            q: DMatrix::zeros(n, cap),
            p: DMatrix::zeros(n, cap),
            gamma: Vec::with_capacity(cap),
            mu: vec![0.0; n],
            resid: y.to_vec(),
            p2: vec![0.0; n],
            q2: vec![0.0; n],
            half_logdet_a: 0.0,
            gamma2: 0.0,
            trace_q: 0.0,
        }
    }

    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// Basis points so far.
    pub fn d(&self) -> usize {
        self.rows.len()
    }

    /// Room for this many basis points.
    pub fn capacity(&self) -> usize {
        self.g.nrows()
    }

    /// Training rows of the basis, in the order they were added.
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    pub fn contains(&self, i: usize) -> bool {
        self.in_basis[i]
    }

    /// μ = K_·,I α_I at the training inputs.
    pub fn mean(&self) -> &[f64] {
        &self.mu
    }

    /// σ² K̂_ii, the prior term of a candidate's 1-D problem.
    fn prior_term(&self) -> f64 {
        self.noise * (self.sf2 + self.jitter)
    }

    /// The DTC NLML −log N(y | 0, K_·,I K̂_I⁻¹ K_I,· + σ²I), in O(1):
    /// `½(yᵀy − ‖γ‖²)/σ² + ½ log|A| + ½(n − d) log σ² + ½ n log 2π`.
    pub fn nlml(&self) -> f64 {
        let n = self.n() as f64;
        let d = self.d() as f64;
        0.5 * (self.yy - self.gamma2) / self.noise
            + self.half_logdet_a
            + 0.5 * (n - d) * self.noise.ln()
            + 0.5 * n * (2.0 * PI).ln()
    }

    /// Titsias's negative collapsed ELBO at this basis, in O(1): the DTC NLML plus
    /// `tr(K − Q)/(2σ²) = (n σ0² − Σ_i ‖Q_i‖²)/(2σ²)`, the prior variance at the training
    /// points that the basis does not span (docs/methods.md §1, VFE).
    pub fn bound(&self) -> f64 {
        let n = self.n() as f64;
        self.nlml() + 0.5 * (n * self.sf2 - self.trace_q) / self.noise
    }

    /// The objective `approx` names at this basis: [`Incremental::nlml`] for DTC,
    /// [`Incremental::bound`] for VFE.
    pub fn objective(&self, approx: ApproxKind) -> f64 {
        match approx {
            ApproxKind::Vfe => self.bound(),
            _ => self.nlml(),
        }
    }

    /// π̃ at its minimum over α_I: −½ ‖γ‖² (π of the paper's eq. 4 with α_R = 0).
    pub fn pi(&self) -> f64 {
        -0.5 * self.gamma2
    }

    /// α_I = M⁻¹ K_I,· y = G⁻ᵀ L_A⁻ᵀ γ (O(d²)), in the order of [`Incremental::rows`].
    pub fn alpha(&self) -> Vec<f64> {
        use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
        let d = self.d();
        let mut a = self.gamma.clone();
        for f in [&self.la, &self.g] {
            let v = linalg::view(f).submatrix(0, 0, d, d);
            solve_upper_triangular_in_place(v.transpose(), mat_mut(&mut a, d, 1), faer::Par::Seq);
        }
        a
    }

    /// The DTC latent variance at training point i: σ0² − ‖Q_i‖² + σ² ‖P_i‖².
    pub fn variance(&self, i: usize) -> f64 {
        self.sf2 - self.q2[i] + self.noise * self.p2[i]
    }

    /// K̂_I,c for candidate columns `r` (n×k): their entries at the basis rows.
    fn basis_entries(&self, r: MatRef<'_, f64>) -> Vec<f64> {
        let (d, k) = (self.d(), r.ncols());
        let mut out = vec![0.0; d * k];
        for c in 0..k {
            for (a, &i) in self.rows.iter().enumerate() {
                out[c * d + a] = r[(i, c)];
            }
        }
        out
    }

    /// Everything about k candidates with kernel columns `r` (n×k) that adding one
    /// of them needs: three O(n·d·k) products and O(d²·k) solves.
    fn candidates(&self, r: MatRef<'_, f64>, par: Par) -> Candidates {
        let (d, k, n) = (self.d(), r.ncols(), self.n());
        let mut g = self.basis_entries(r);
        let mut q: Vec<f64> = (0..k).flat_map(|c| r.col(c).iter().copied()).collect();
        if d > 0 {
            let gv = linalg::view(&self.g).submatrix(0, 0, d, d);
            solve_lower_triangular_in_place(gv, mat_mut(&mut g, d, k), par.faer());
            let qv = linalg::view(&self.q).submatrix(0, 0, n, d);
            matmul(
                mat_mut(&mut q, n, k),
                Accum::Add,
                qv,
                mat(&g, d, k),
                -1.0,
                par.faer(),
            );
        }
        let gjj2: Vec<f64> = (0..k)
            .map(|c| {
                let gc = &g[c * d..(c + 1) * d];
                self.sf2 + self.jitter - linalg::dot(gc, gc)
            })
            .collect();
        for (c, col) in q.chunks_mut(n.max(1)).enumerate() {
            let s = if gjj2[c] > 0.0 {
                1.0 / gjj2[c].sqrt()
            } else {
                0.0
            };
            col.iter_mut().for_each(|v| *v *= s);
        }
        let mut a = vec![0.0; d * k];
        let mut res = q.clone();
        let mut tres = vec![0.0; d * k];
        if d > 0 {
            let pv = linalg::view(&self.p).submatrix(0, 0, n, d);
            let tv = linalg::view(&self.t).submatrix(0, 0, d, d);
            matmul(
                mat_mut(&mut a, d, k),
                Accum::Replace,
                pv.transpose(),
                mat(&q, n, k),
                1.0,
                par.faer(),
            );
            matmul(
                mat_mut(&mut res, n, k),
                Accum::Add,
                pv,
                mat(&a, d, k),
                -1.0,
                par.faer(),
            );
            matmul(
                mat_mut(&mut tres, d, k),
                Accum::Replace,
                tv,
                mat(&a, d, k),
                -1.0,
                par.faer(),
            );
        }
        let ajj2 = (0..k)
            .map(|c| {
                let (rc, tc) = (&res[c * n..(c + 1) * n], &tres[c * d..(c + 1) * d]);
                linalg::dot(rc, rc) + linalg::dot(tc, tc) + self.noise
            })
            .collect();
        Candidates {
            g,
            gjj2,
            q,
            a,
            res,
            tres,
            ajj2,
        }
    }

    /// Candidate c of `cands` as a [`Column`], or None when it is (numerically) in the
    /// span of the basis: its new diagonal of chol(K̂_I) below half the jitter (in
    /// exact arithmetic it is at least the jitter).
    fn take(&self, j: usize, cands: &Candidates, c: usize) -> Option<Column> {
        let (d, n) = (self.d(), self.n());
        let floor = if self.jitter > 0.0 {
            0.5 * self.jitter
        } else {
            100.0 * f64::EPSILON * self.sf2
        };
        let (gjj2, ajj2) = (cands.gjj2[c], cands.ajj2[c]);
        (gjj2 > floor && ajj2.is_finite()).then(|| Column {
            j,
            g: cands.g[c * d..(c + 1) * d].to_vec(),
            gjj: gjj2.sqrt(),
            a: cands.a[c * d..(c + 1) * d].to_vec(),
            ajj: ajj2.sqrt(),
            q: cands.q[c * n..(c + 1) * n].to_vec(),
            res: cands.res[c * n..(c + 1) * n].to_vec(),
            tres: cands.tres[c * d..(c + 1) * d].to_vec(),
        })
    }

    /// Everything needed to include candidate j with kernel column `r` = K(X, x_j):
    /// O(n·d). None when it is (numerically) in the span of the basis, or already in it.
    pub fn column(&self, j: usize, r: &[f64], par: Par) -> Option<Column> {
        if self.in_basis[j] || self.d() == self.capacity() {
            return None;
        }
        let cands = self.candidates(mat(r, r.len(), 1), par);
        self.take(j, &cands, 0)
    }

    /// Append candidate `col.j`: one row of G and L_A, one column of Q, P and T, and
    /// the running γ, μ, y − μ and row norms. O(n + d²).
    pub fn add(&mut self, col: Column) {
        let d = self.d();
        for k in 0..d {
            self.g[(d, k)] = col.g[k];
            self.la[(d, k)] = col.a[k];
            self.t[(k, d)] = col.tres[k] / col.ajj;
        }
        self.g[(d, d)] = col.gjj;
        self.la[(d, d)] = col.ajj;
        self.t[(d, d)] = self.noise.sqrt() / col.ajj;
        let mut p = col.res;
        p.iter_mut().for_each(|v| *v /= col.ajj);
        let b = linalg::dot(&p, &self.y);
        for (i, (pi, qi)) in p.iter().zip(&col.q).enumerate() {
            self.mu[i] += b * pi;
            self.resid[i] -= b * pi;
            self.p2[i] += pi * pi;
            self.q2[i] += qi * qi;
        }
        self.trace_q += linalg::dot(&col.q, &col.q);
        self.p.column_mut(d).copy_from_slice(&p);
        self.q.column_mut(d).copy_from_slice(&col.q);
        self.gamma.push(b);
        self.gamma2 += b * b;
        self.half_logdet_a += col.ajj.ln();
        self.rows.push(col.j);
        self.in_basis[col.j] = true;
    }

    /// Post-backfitting scores (eqs. 7–8) of candidates with kernel columns `r` (n×k)
    /// and `rr_c = ‖r_c‖²`: `½ (r_cᵀ(y − μ) − σ² μ_c)² / (σ² K̂_cc + rr_c)`. O(n·k).
    pub fn backfit_scores(
        &self,
        cands: &[usize],
        r: &DMatrix<f64>,
        rr: &[f64],
        par: Par,
    ) -> Vec<f64> {
        let k = r.ncols();
        let r = linalg::view(r);
        let mut s = vec![0.0; k];
        matmul(
            mat_mut(&mut s, k, 1),
            Accum::Replace,
            r.transpose(),
            mat(&self.resid, self.n(), 1),
            1.0,
            par.faer(),
        );
        cands
            .iter()
            .zip(&s)
            .zip(rr)
            .map(|((&i, &s), &rr)| {
                let num = s - self.noise * self.mu[i];
                0.5 * num * num / (self.prior_term() + rr)
            })
            .collect()
    }

    /// The 1-D optimum α_i* of eq. 7 for one candidate (for tests and diagnostics).
    pub fn backfit_alpha(&self, i: usize, r: &[f64]) -> f64 {
        (linalg::dot(r, &self.resid) - self.noise * self.mu[i])
            / (self.prior_term() + linalg::dot(r, r))
    }

    /// SB gains of candidates with kernel columns `r` (n×k): the exact decrease of π
    /// when α_I and α_c are re-optimised together, `½ γ_c²` with
    /// `γ_c = (q_c − P a_c)ᵀ y / a_cc` (the new entry of γ); −∞ for a candidate in the
    /// span of the basis. O(n·d·k): three blocked products.
    pub fn sb_gains(&self, cands: &[usize], r: &DMatrix<f64>, par: Par) -> Vec<f64> {
        self.sb(cands, r, par).0
    }

    /// SB gains and the candidates' parts (so the chosen one need not be recomputed).
    fn sb(&self, cands: &[usize], r: &DMatrix<f64>, par: Par) -> (Vec<f64>, Candidates) {
        let n = self.n();
        let parts = self.candidates(linalg::view(r), par);
        let gains = cands
            .iter()
            .enumerate()
            .map(|(c, &j)| {
                if self.in_basis[j] || self.take(j, &parts, c).is_none() {
                    return f64::NEG_INFINITY;
                }
                let b = linalg::dot(&parts.res[c * n..(c + 1) * n], &self.y) / parts.ajj2[c].sqrt();
                0.5 * b * b
            })
            .collect();
        (gains, parts)
    }

    /// INFO's score of candidate i (docs/methods.md §6.2): the relative entropy between the
    /// updated and the current DTC marginal, `½[v'/v − 1 − log(v'/v) + (μ'−μ)²/v]` with
    /// `v' = vσ²/(v+σ²)`, `μ' = μ + v(y−μ)/(v+σ²)`, written without cancellation as
    /// `½[log(1 + v/σ²) − v/(v+σ²) + v(y−μ)²/(v+σ²)²]`; 0 where v ≤ 0 (rounding).
    pub fn info_score(&self, i: usize) -> f64 {
        let v = self.variance(i);
        if v.is_nan() || v <= 0.0 {
            return 0.0;
        }
        let s = v + self.noise;
        let e = self.resid[i];
        0.5 * ((v / self.noise).ln_1p() - v / s + v * e * e / (s * s))
    }
}

// ---- Kernel rows and random draws ---------------------------------------------------

/// Kernel columns K(X, x_c) of candidates, with the optional cache of discarded rows.
struct Rows<'a> {
    x: &'a DMatrix<f64>,
    kernel: Kernel,
    /// Discarded rows by training index, oldest first out.
    discarded: HashMap<usize, Vec<f64>>,
    fifo: VecDeque<usize>,
    capacity: usize,
    computed: usize,
    hits: usize,
}

impl<'a> Rows<'a> {
    fn new(x: &'a DMatrix<f64>, kernel: Kernel, capacity: usize) -> Rows<'a> {
        Rows {
            x,
            kernel,
            discarded: HashMap::new(),
            fifo: VecDeque::new(),
            capacity,
            computed: 0,
            hits: 0,
        }
    }

    /// K(X, x_c) for each candidate (n×k, column c for candidate c).
    fn fetch(&mut self, cands: &[usize], par: Par) -> DMatrix<f64> {
        let n = self.x.nrows();
        let mut out = DMatrix::zeros(n, cands.len());
        let mut missing = Vec::new();
        for (c, i) in cands.iter().enumerate() {
            match self.discarded.remove(i) {
                Some(row) => {
                    out.column_mut(c).copy_from_slice(&row);
                    self.hits += 1;
                }
                None => missing.push(c),
            }
        }
        if !missing.is_empty() {
            let xc = DMatrix::from_fn(missing.len(), self.x.ncols(), |a, d| {
                self.x[(cands[missing[a]], d)]
            });
            let k = self.kernel.matrix(self.x, &xc, par);
            for (a, &c) in missing.iter().enumerate() {
                out.column_mut(c).copy_from(&k.column(a));
            }
            self.computed += missing.len();
        }
        out
    }

    /// Keep a row that is leaving the candidates, if there is room for discarded rows.
    fn discard(&mut self, i: usize, row: &[f64]) {
        if self.capacity == 0 {
            return;
        }
        // the FIFO may still name rows that were fetched again since; skip those
        while self.discarded.len() >= self.capacity {
            match self.fifo.pop_front() {
                Some(old) => {
                    self.discarded.remove(&old);
                }
                None => break,
            }
        }
        self.discarded.insert(i, row.to_vec());
        self.fifo.push_back(i);
    }
}

/// Points that may not be drawn (in the basis, in the cache, unusable), with their count.
struct Taken {
    flag: Vec<bool>,
    count: usize,
}

impl Taken {
    fn new(n: usize) -> Taken {
        Taken {
            flag: vec![false; n],
            count: 0,
        }
    }

    fn set(&mut self, i: usize) {
        if !self.flag[i] {
            self.flag[i] = true;
            self.count += 1;
        }
    }

    fn clear(&mut self, i: usize) {
        if self.flag[i] {
            self.flag[i] = false;
            self.count -= 1;
        }
    }

    fn free(&self) -> usize {
        self.flag.len() - self.count
    }

    /// Up to k distinct free points uniformly at random, marked taken.
    fn draw(&mut self, k: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
        let n = self.flag.len();
        let free = self.free();
        let k = k.min(free);
        let out: Vec<usize> = if k == free {
            (0..n).filter(|&i| !self.flag[i]).collect()
        } else if 2 * free > n {
            // mostly free: rejection is cheap
            let mut out = Vec::with_capacity(k);
            while out.len() < k {
                let i = rng.random_range(0..n);
                if !self.flag[i] && !out.contains(&i) {
                    out.push(i);
                }
            }
            out
        } else {
            let pool: Vec<usize> = (0..n).filter(|&i| !self.flag[i]).collect();
            rand::seq::index::sample(rng, pool.len(), k)
                .iter()
                .map(|a| pool[a])
                .collect()
        };
        for &i in &out {
            self.set(i);
        }
        out
    }
}

// ---- Selection ------------------------------------------------------------------------

/// How one selection runs.
#[derive(Clone, Debug)]
pub struct Config {
    pub select: Select,
    pub d_max: usize,
    /// Candidates per step (SB) and fresh rows per step (KAPPA, DMAX).
    pub kappa: usize,
    /// Cache size c of KAPPA / DMAX (κ and d_max in the paper).
    pub cache: usize,
    /// Discarded kernel rows kept for reuse (0: none).
    pub discard_cache: usize,
}

impl Config {
    /// The paper's settings for a rule: κ = 59, c = κ (KAPPA) or d_max (DMAX).
    pub fn paper(select: Select, d_max: usize) -> Config {
        Config {
            select,
            d_max,
            kappa: KAPPA,
            cache: match select {
                Select::Dmax => d_max,
                _ => KAPPA,
            },
            discard_cache: 0,
        }
    }
}

/// What a selection produced.
#[derive(Clone, Debug)]
pub struct Selected {
    /// Training rows in the order they were selected.
    pub rows: Vec<usize>,
    /// The DTC NLML with 0, 1, …, d_max basis points.
    pub trace: Vec<f64>,
    pub seconds: f64,
    /// Kernel rows computed, and rows served by the discard cache.
    pub kernel_rows: usize,
    pub discard_hits: usize,
    /// The absolute jitter on K_I's diagonal the selection used.
    pub jitter: f64,
}

/// Select a basis of `cfg.d_max` training points at the model's hyperparameters.
/// `warm`: rows to fill the cache of KAPPA / DMAX with first (the previous basis during
/// adaptation). `step(rows, nlml)` is called with the basis so far (training rows, in
/// selection order) and its DTC NLML after every added point (and at d = 0); an error
/// from it (cancellation) ends the selection, `Control::Finish` (early stopping on a
/// validation score) ends it with the basis it has, which may then be smaller than
/// d_max.
///
/// The jitter on K_I's diagonal follows docs/methods.md §1.3: the model's `jitter` if it has
/// one, else ε·σ0² with ε = 1e-8, and when fewer than d_max training points are
/// numerically independent at that jitter (every other one within it of the span of
/// the basis: long lengthscales), the selection starts again with ε ten times larger,
/// up to 1e-2. [`Selected::jitter`] is the absolute jitter that was used; `step` then
/// sees d = 0 again.
pub fn select(
    data: &TrainData,
    model: &ModelFile,
    cfg: &Config,
    warm: &[usize],
    rng: &mut ChaCha8Rng,
    step: &mut dyn FnMut(&[usize], f64) -> Result<Control>,
    exec: &Exec,
) -> Result<Selected> {
    let n = data.y.len();
    if cfg.d_max == 0 || cfg.d_max > n {
        return Err(Error::input(format!(
            "greedy: d_max = {} must be between 1 and the training size {n}",
            cfg.d_max
        )));
    }
    let started = Instant::now();
    let (mut jitter, scale, auto) = match model.jitter_policy() {
        Jitter::Fixed(j) => (j, 1.0, false),
        Jitter::Auto { scale } => (linalg::JITTER_START * scale, scale, true),
    };
    loop {
        if let Some(mut s) = attempt(data, model, cfg, warm, rng, step, exec, jitter)? {
            s.seconds = started.elapsed().as_secs_f64();
            return Ok(s);
        }
        if !auto || jitter * 10.0 > linalg::JITTER_MAX * scale * 1.000001 {
            return Err(Error::numerical(format!(
                "greedy: fewer than the {} basis points requested are numerically \
                 independent of each other at these hyperparameters, even with the jitter \
                 {jitter:e}{}; choose a smaller m",
                cfg.d_max,
                if auto {
                    ""
                } else {
                    " (the model's fixed jitter: remove the key to let sgpw raise it)"
                }
            )));
        }
        jitter *= 10.0;
    }
}

/// One selection at an absolute jitter; None when the candidates ran out first.
#[allow(clippy::too_many_arguments)]
fn attempt(
    data: &TrainData,
    model: &ModelFile,
    cfg: &Config,
    warm: &[usize],
    rng: &mut ChaCha8Rng,
    step: &mut dyn FnMut(&[usize], f64) -> Result<Control>,
    exec: &Exec,
    jitter: f64,
) -> Result<Option<Selected>> {
    let n = data.y.len();
    let par = exec.par;
    let mut inc = Incremental::new(&data.y, &model.hyper, jitter, cfg.d_max);
    let mut rows = Rows::new(&data.x, model.kernel(), cfg.discard_cache);
    let approx = objective_kind(model);
    let mut trace = vec![inc.objective(approx)];
    let mut finished = step(&[], trace[0])? == Control::Finish;
    // in the basis or unusable (numerically in its span)
    let mut taken = Taken::new(n);
    let mut record = |inc: &Incremental, trace: &mut Vec<f64>| -> Result<bool> {
        let v = inc.objective(approx);
        trace.push(v);
        Ok(step(inc.rows(), v)? == Control::Finish)
    };
    match cfg.select {
        _ if finished => {}
        Select::Rand | Select::Info => {
            while inc.d() < cfg.d_max && !finished {
                exec.check()?;
                let j = if cfg.select == Select::Rand {
                    taken.draw(1, rng).first().copied()
                } else {
                    let mut best: Option<(usize, f64)> = None;
                    for i in (0..n).filter(|&i| !taken.flag[i]) {
                        let s = inc.info_score(i);
                        if best.is_none_or(|(_, b)| s > b) {
                            best = Some((i, s));
                        }
                    }
                    best.map(|(i, _)| {
                        taken.set(i);
                        i
                    })
                };
                let Some(j) = j else { return Ok(None) };
                let r = rows.fetch(&[j], par);
                if let Some(col) = inc.column(j, r.as_slice(), par) {
                    inc.add(col);
                    finished = record(&inc, &mut trace)?;
                }
            }
        }
        Select::Sb => {
            while inc.d() < cfg.d_max && !finished {
                exec.check()?;
                let cands = taken.draw(cfg.kappa, rng);
                if cands.is_empty() {
                    return Ok(None);
                }
                let r = rows.fetch(&cands, par);
                let (gains, parts) = inc.sb(&cands, &r, par);
                let best = (0..cands.len()).filter(|&c| gains[c].is_finite()).fold(
                    None,
                    |b: Option<usize>, c| match b {
                        Some(b) if gains[b] >= gains[c] => Some(b),
                        _ => Some(c),
                    },
                );
                for (c, &i) in cands.iter().enumerate() {
                    // the chosen one joins the basis; a candidate in the span of the
                    // basis (no finite gain) is never drawn again
                    if best == Some(c) || !gains[c].is_finite() {
                        continue;
                    }
                    taken.clear(i);
                    rows.discard(i, r.column(c).as_slice());
                }
                if let Some(c) = best
                    && let Some(col) = inc.take(cands[c], &parts, c)
                {
                    inc.add(col);
                    finished = record(&inc, &mut trace)?;
                }
            }
        }
        Select::Kappa | Select::Dmax => {
            let mut on_add = |inc: &Incremental| record(inc, &mut trace);
            let complete = select_cached(
                &mut inc,
                &mut rows,
                &mut taken,
                cfg,
                warm,
                rng,
                &mut on_add,
                exec,
            )?;
            if !complete {
                return Ok(None);
            }
        }
    }
    Ok(Some(Selected {
        rows: inc.rows().to_vec(),
        trace,
        seconds: 0.0,
        kernel_rows: rows.computed,
        discard_hits: rows.hits,
        jitter,
    }))
}

/// KAPPA / DMAX: post-backfitting scores on a cache of `cfg.cache` kernel rows. Each
/// step scores the cache, adds the best, and replaces it and the κ − 1 lowest-scored by
/// κ fresh random points from outside the basis and the cache. `on_add` returns true to
/// finish early. Returns false when the candidates ran out before d_max points.
#[allow(clippy::too_many_arguments)]
fn select_cached(
    inc: &mut Incremental,
    rows: &mut Rows,
    taken: &mut Taken,
    cfg: &Config,
    warm: &[usize],
    rng: &mut ChaCha8Rng,
    on_add: &mut dyn FnMut(&Incremental) -> Result<bool>,
    exec: &Exec,
) -> Result<bool> {
    let n = inc.n();
    let par = exec.par;
    let c_cap = cfg.cache.clamp(1, n);
    let mut slot: Vec<Option<usize>> = vec![None; c_cap];
    let mut cols = DMatrix::zeros(n, c_cap);
    let mut rr = vec![0.0; c_cap];
    let fill = |points: &[usize],
                slot: &mut Vec<Option<usize>>,
                cols: &mut DMatrix<f64>,
                rr: &mut Vec<f64>,
                rows: &mut Rows| {
        let r = rows.fetch(points, par);
        let free: Vec<usize> = (0..c_cap).filter(|&s| slot[s].is_none()).collect();
        for ((c, &i), &s) in points.iter().enumerate().zip(&free) {
            slot[s] = Some(i);
            cols.column_mut(s).copy_from(&r.column(c));
            rr[s] = r.column(c).norm_squared();
        }
    };
    let mut start: Vec<usize> = Vec::with_capacity(c_cap);
    for &i in warm {
        if start.len() < c_cap && i < n && !taken.flag[i] {
            taken.set(i);
            start.push(i);
        }
    }
    start.extend(taken.draw(c_cap - start.len(), rng));
    fill(&start, &mut slot, &mut cols, &mut rr, rows);
    while inc.d() < cfg.d_max {
        exec.check()?;
        let index: Vec<usize> = slot.iter().map(|s| s.unwrap_or(0)).collect();
        let scores = inc.backfit_scores(&index, &cols, &rr, par);
        let mut order: Vec<usize> = (0..c_cap).filter(|&s| slot[s].is_some()).collect();
        if order.is_empty() {
            return Ok(false);
        }
        order.sort_by(|&a, &b| {
            scores[b]
                .total_cmp(&scores[a])
                .then(index[a].cmp(&index[b]))
        });
        let mut chosen = None;
        for &s in &order {
            let i = index[s];
            match inc.column(i, cols.column(s).as_slice(), par) {
                Some(col) => {
                    chosen = Some((s, col));
                    break;
                }
                // in the span of the basis: leaves the cache, never drawn again
                None => slot[s] = None,
            }
        }
        if let Some((s, col)) = chosen {
            inc.add(col);
            slot[s] = None;
            if on_add(inc)? {
                break;
            }
        }
        if inc.d() == cfg.d_max {
            break;
        }
        // κ fresh points from outside the basis and the cache replace the chosen one
        // (and any that left) and, for the rest, the lowest-scored
        let fresh = taken.draw(cfg.kappa.min(c_cap), rng);
        let empty = slot.iter().filter(|s| s.is_none()).count();
        let mut evict = fresh.len().saturating_sub(empty);
        for &s in order.iter().rev() {
            if evict == 0 {
                break;
            }
            if let Some(i) = slot[s] {
                rows.discard(i, cols.column(s).as_slice());
                taken.clear(i);
                slot[s] = None;
                evict -= 1;
            }
        }
        fill(&fresh, &mut slot, &mut cols, &mut rr, rows);
    }
    Ok(true)
}

// ---- The method ------------------------------------------------------------------------

/// `[greedy]`: how greedy selected its basis points. `[basis] points` holds the selected
/// inputs themselves, so prediction needs no training data; this table is
/// informational except for the check that `order` matches them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GreedyTable {
    pub select: Select,
    /// Training rows (0-based, of the data the model was fitted on) of the basis points,
    /// in the order they were selected; `[basis] points` lists their inputs in this order.
    pub order: Vec<usize>,
    /// Rounds of model adaptation (0: σ0², ℓ, σ² fixed during selection).
    #[serde(default)]
    pub adapt: usize,
    /// Seconds spent selecting (all rounds; without the subset fit and the
    /// hyperparameter fits of adaptation).
    #[serde(default)]
    pub select_seconds: f64,
    /// Kernel rows K(X, x_i) computed during selection (all rounds).
    #[serde(default)]
    pub kernel_rows: usize,
}

impl ModelTable for GreedyTable {
    const NAME: &'static str = "greedy";
}

/// The selection rule of a run (default DMAX, the paper's recommendation).
fn rule(options: &MethodOptions) -> Select {
    options.select.unwrap_or(Select::Dmax)
}

/// The objective of a greedy model (`approx`): the VFE bound unless it says `dtc`.
pub fn objective_kind(model: &ModelFile) -> ApproxKind {
    model.approx.unwrap_or(ApproxKind::Vfe)
}

/// The pseudo-input method whose objective is the greedy model's, with the model as
/// its inducing-input model ([`as_dtc`], or the same as `vfe`).
fn evidence(model: &ModelFile) -> (&'static dyn Method, ModelFile) {
    let mut p = as_dtc(model);
    match objective_kind(model) {
        ApproxKind::Dtc => (&pseudo::DTC, p),
        _ => {
            p.method = pseudo::VFE.name.to_string();
            (&pseudo::VFE, p)
        }
    }
}

/// The model as the SE pseudo-input method `dtc` with the basis points as its inducing
/// inputs: what the posterior and predictions are computed on (the DTC and VFE
/// posteriors at a fixed basis are one and the same, Titsias 2009).
pub fn as_dtc(model: &ModelFile) -> ModelFile {
    let mut p = ModelFile::new("dtc", model.hyper.clone());
    p.jitter = model.jitter;
    // σ² = floor + e^θ: the gradient in θ needs the floor
    p.noise_floor = model.noise_floor;
    // [basis] and [inducing] hold the same `points`
    if let Some(points) = model.tables.get(Basis::NAME) {
        p.tables.insert(Inducing::NAME.to_string(), points.clone());
    }
    p
}

/// The rows `order` of the training inputs as basis points, with the greedy table.
fn with_basis(model: &mut ModelFile, data: &TrainData, order: &[usize]) {
    let b = DMatrix::from_fn(order.len(), data.x.ncols(), |a, d| data.x[(order[a], d)]);
    set_basis_points(model, &b);
}

impl Method for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["matching-pursuit"]
    }
    fn second_start(&self, options: &MethodOptions) -> bool {
        options.adapt.is_some()
    }
    fn fits_by_lbfgs(&self, options: &MethodOptions) -> bool {
        options.adapt.is_some_and(|k| k > 0)
    }
    fn summary(&self) -> &'static str {
        "greedy basis selection for DTC (Keerthi & Chu, NIPS 2005): m = d_max training points \
         chosen one at a time by --select rand|info|kappa|dmax|sb (default dmax) at fixed \
         σ0², ℓ, σ² (--hyper-from-subset N), or --adapt K rounds of selection and \
         hyperparameter fits"
    }
    fn m_meaning(&self) -> &'static str {
        "basis points (d_max training points)"
    }
    fn progress_unit(&self) -> &'static str {
        "basis point"
    }
    fn options(&self) -> &'static [&'static str] {
        &[
            "select",
            "adapt",
            "approx",
            "hyper_from_subset",
            "discard_cache",
        ]
    }
    fn model_tables(&self) -> &'static [&'static str] {
        &[Basis::NAME, GreedyTable::NAME]
    }
    fn input_dims(&self, model: &ModelFile) -> Vec<Witness> {
        basis_dims(model)
    }
    fn markers(&self, model: &ModelFile, input: usize) -> Result<Markers> {
        basis_markers(model, input)
    }

    fn check_options(
        &self,
        options: &MethodOptions,
        _data: DataShape,
        naming: Naming,
    ) -> Result<()> {
        // both fit a full GP on a subset for σ0², ℓ, σ²: --init-lengthscales-from-subset
        // with min(iterations, 200) iterations as for every method, --hyper-from-subset
        // with 200 whatever the budget (the paper's FIXED runs and adapted runs with a
        // smaller budget then start from the same hyperparameters)
        super::start::check_one_subset_fit("greedy", options, naming)?;
        if let Some(a @ (ApproxKind::Fitc | ApproxKind::Pep)) = options.approx {
            return Err(Error::input(format!(
                "--approx {} does not apply to greedy: its objective is vfe (the default: \
                 Titsias's bound, whose optimal posterior is the one the selection computes) \
                 or dtc (the DTC evidence of the paper's section 4)",
                a.name()
            )));
        }
        if options.discard_cache.is_some() && matches!(rule(options), Select::Rand | Select::Info) {
            return Err(Error::input(format!(
                "discard_cache{} applies to select kappa, dmax and sb; {} computes each \
                 kernel row once",
                naming.flag("discard_cache"),
                rule(options).name()
            )));
        }
        Ok(())
    }

    /// The starting hyperparameters (from the subset fit when asked) and, so that the
    /// starting model is complete, a random basis of m training points (the selection
    /// in `fit` replaces it).
    fn init(
        &self,
        data: &TrainData,
        spec: &ValidRunSpec,
        hyper: Hyper,
        ctx: &RunContext,
        rng: &mut ChaCha8Rng,
    ) -> Result<ModelFile> {
        // σ0², ℓ, σ² are never fitted without --adapt: with no other source they come
        // from a full GP on min(n, 2000) random points (the paper's FIXED setting), not
        // from the §0 defaults, which would stay as they are
        let o = &spec.options;
        let hyper =
            super::start::hyper_for_fixed_kernel(data, spec, hyper, o.adapt.is_none(), ctx, rng)?;
        let mut model = ModelFile::new(self.name(), hyper);
        // the default (vfe) is not written, as for the other methods with --approx
        model.approx = o.approx.filter(|a| *a == ApproxKind::Dtc);
        set_basis_points(&mut model, &random_rows(&data.x, spec.m, rng));
        Ok(model)
    }

    fn check(&self, model: &ModelFile) -> Result<()> {
        let m = basis_points(model)?.nrows();
        if let Some(g) = model.table::<GreedyTable>()? {
            let at = Location::key(GreedyTable::NAME).then("order");
            if g.order.len() != m {
                return Err(Error::at(
                    at,
                    format!(
                        "[greedy] order lists {} training rows but [basis] has {m} points (one \
                         row per basis point, in the order they were selected)",
                        g.order.len()
                    ),
                ));
            }
            let mut seen = std::collections::HashSet::new();
            if let Some(i) = g.order.iter().find(|i| !seen.insert(**i)) {
                return Err(Error::at(
                    at,
                    format!("[greedy] order names training row {i} twice"),
                ));
            }
        }
        if let Some(p) = &model.posterior {
            p.check(m)?;
        }
        if let Some(a @ (ApproxKind::Fitc | ApproxKind::Pep)) = model.approx {
            return Err(Error::input(format!(
                "approx = \"{}\" does not apply to a greedy model: remove the key (the \
                 VFE bound) or write approx = \"dtc\"",
                a.name()
            )));
        }
        if model.alpha.is_some() {
            return Err(Error::input(
                "a greedy model has no alpha (that is power EP's): remove the key",
            ));
        }
        Ok(())
    }

    fn objective_name(&self, model: &ModelFile) -> &'static str {
        let (method, p) = evidence(model);
        method.objective_name(&p)
    }

    /// σ0², ℓ, σ² (the basis is selected, not optimised).
    fn pack(&self, model: &ModelFile) -> Vec<f64> {
        let mut theta = Vec::new();
        pack_hyper(model, &mut theta);
        theta
    }

    fn unpack(&self, theta: &[f64], model: &mut ModelFile) {
        unpack_hyper(theta, model);
    }

    /// The objective at the basis — the VFE bound (`pseudo::VFE`) or, with
    /// `approx = "dtc"`, the DTC evidence (`pseudo::DTC`) — and its gradient in σ0², ℓ, σ².
    fn objective(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<Objective> {
        let (method, p) = evidence(model);
        let mut obj = method.objective(&p, data, exec)?;
        obj.grad.truncate(super::hyper::head_len(model));
        Ok(obj)
    }

    fn nlml(&self, model: &ModelFile, data: &TrainData, exec: &Exec) -> Result<f64> {
        let (method, p) = evidence(model);
        method.nlml(&p, data, exec)
    }

    fn posterior(
        &self,
        model: &ModelFile,
        data: &TrainData,
        exec: &Exec,
    ) -> Result<(Posterior, Option<DMatrix<f64>>)> {
        pseudo::DTC.posterior(&as_dtc(model), data, exec)
    }

    fn prior_cov(&self, model: &ModelFile, x: &DMatrix<f64>, exec: &Exec) -> Result<DMatrix<f64>> {
        pseudo::DTC.prior_cov(&as_dtc(model), x, exec)
    }

    fn cross(
        &self,
        model: &ModelFile,
        basis: Option<&DMatrix<f64>>,
        x: &DMatrix<f64>,
        exec: &Exec,
    ) -> Result<(DMatrix<f64>, Vec<f64>)> {
        pseudo::DTC.cross(&as_dtc(model), basis, x, exec)
    }

    /// Selection at fixed σ0², ℓ, σ²; with `--adapt K`, K rounds of (selection, L-BFGS
    /// on σ0², ℓ, σ² at the basis), the budget split evenly over the rounds. The trace
    /// is the evidence with 0, 1, …, m basis points of each selection, followed by that
    /// round's optimiser iterations.
    fn fit(
        &self,
        model: ModelFile,
        data: &TrainData,
        spec: &ValidRunSpec,
        ctx: &RunContext,
    ) -> Result<(ModelFile, Outcome)> {
        let select_rule = rule(&spec.options);
        let cfg = Config {
            discard_cache: spec.options.discard_cache.unwrap_or(0),
            ..Config::paper(select_rule, spec.m)
        };
        let adapt = spec.options.adapt.unwrap_or(0);
        // restart k of --restarts draws its candidates from a stream of its own (start 0
        // and the main fit share the run's)
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        rng.set_stream(SELECT_STREAM + ctx.restart_index().unwrap_or(0) as u64);
        // the best start of --restarts continues here: a model that already has its
        // basis keeps it (without --adapt there is nothing more to do); with --adapt
        // the next rounds start their cache from it
        let selected = model.table::<GreedyTable>().ok().flatten().map(|g| g.order);
        if adapt == 0 && selected.as_ref().is_some_and(|o| o.len() == spec.m) {
            let f = self.nlml(&model, data, &ctx.exec)?;
            ctx.report(Phase::Fit { stage: 0 }, 0, f);
            return Ok((model.clone(), Outcome::unfitted(self.pack(&model), f)));
        }
        let mut model = model;
        let mut trace: Vec<f64> = Vec::new();
        let mut iterations = 0usize;
        let mut evaluations = 0usize;
        let mut stop = Stop::NothingToFit;
        let (mut seconds, mut kernel_rows) = (0.0, 0usize);
        let mut warm: Vec<usize> = selected.unwrap_or_default();
        // optimiser iterations used by earlier rounds (the budget is theirs alone)
        let mut used = 0usize;
        let auto_jitter = model.jitter.is_none();
        for round in 0..adapt.max(1) {
            // a round without iterations left would only select again
            if round > 0 && used >= spec.iters {
                break;
            }
            let phase = Phase::Fit {
                stage: if adapt == 0 { 0 } else { 2 * round + 1 },
            };
            // trace entries after the first count as iterations; a selection that
            // starts again with a larger jitter (d = 0 once more) replaces its entries
            let (round_start, round_iterations) = (trace.len(), iterations);
            if auto_jitter {
                model.jitter = None;
            }
            let at_start = &model;
            let mut push = |rows: &[usize], v: f64| {
                if rows.is_empty() && trace.len() > round_start {
                    trace.truncate(round_start);
                    iterations = round_iterations;
                }
                if !trace.is_empty() {
                    iterations += 1;
                }
                trace.push(v);
                ctx.report(phase, iterations, v);
                ctx.exec.check()?;
                // --validation scores the basis so far (at least one point)
                if rows.is_empty() || !ctx.observes(phase, iterations) {
                    return Ok(Control::Continue);
                }
                let mut reached = at_start.clone();
                with_basis(&mut reached, data, rows);
                reached.set(&GreedyTable {
                    select: select_rule,
                    order: rows.to_vec(),
                    adapt,
                    select_seconds: 0.0,
                    kernel_rows: 0,
                });
                match ctx.observe(iterations, &reached) {
                    Control::Stop => Err(Error::Cancelled),
                    c => Ok(c),
                }
            };
            let sel = select(data, &model, &cfg, &warm, &mut rng, &mut push, &ctx.exec)?;
            let finished = sel.rows.len() < cfg.d_max;
            // a raised jitter stays with the model, so the core's evidence and posterior
            // use the one the selection did
            if auto_jitter
                && sel.jitter > linalg::JITTER_START * model.hyper.signal_variance * 1.000001
            {
                model.jitter = Some(sel.jitter);
            }
            seconds += sel.seconds;
            kernel_rows += sel.kernel_rows;
            evaluations += sel.trace.len();
            with_basis(&mut model, data, &sel.rows);
            model.set(&GreedyTable {
                select: select_rule,
                order: sel.rows.clone(),
                adapt,
                select_seconds: seconds,
                kernel_rows,
            });
            if finished {
                // --early-stop: the validation score stopped improving while selecting
                stop = Stop::EarlyStop;
                break;
            }
            if adapt == 0 {
                break;
            }
            let budget = stage_budget(spec.iters - used.min(spec.iters), adapt - round);
            let free = 0..super::hyper::head_len(&model);
            let (fitted, out) = super::hyper::fit_free(
                self,
                model,
                data,
                free,
                budget.max(1),
                Phase::Fit {
                    stage: 2 * round + 2,
                },
                Some(iterations),
                ctx,
            )?;
            model = fitted;
            trace.extend(out.trace.iter().skip(1));
            iterations += out.iterations;
            used += out.iterations;
            evaluations += out.evaluations;
            stop = out.stop;
            if matches!(stop, Stop::Cancelled | Stop::EarlyStop) {
                break;
            }
            warm = sel.rows;
        }
        let f = trace.last().copied().unwrap_or(f64::NAN);
        Ok((
            model.clone(),
            Outcome {
                x: self.pack(&model),
                f,
                grad: Vec::new(),
                iterations,
                evaluations,
                trace,
                stop,
            },
        ))
    }
}
