//! The algebra of greedy selection: the DTC solution on a basis grown one training
//! point at a time, in the whitened form of the likelihood core, and the scores of a
//! candidate (the derivation is in the comment of `methods/greedy.rs`).

use crate::exec::Par;
use crate::linalg;
use crate::run_spec::ApproxKind;
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Accum, MatMut, MatRef};
use nalgebra::DMatrix;
use std::f64::consts::PI;

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
pub(super) struct Candidates {
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
    /// An empty basis with room for `cap` points (two n×cap matrices), for the kernel's
    /// prior variance k(x, x) = `signal_variance` and the Gaussian noise σ² = `noise`.
    pub fn new(
        y: &[f64],
        signal_variance: f64,
        noise: f64,
        jitter: f64,
        cap: usize,
    ) -> Incremental {
        let n = y.len();
        Incremental {
            y: y.to_vec(),
            yy: linalg::dot(y, y),
            sf2: signal_variance,
            noise,
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
    pub(super) fn take(&self, j: usize, cands: &Candidates, c: usize) -> Option<Column> {
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
    pub(super) fn sb(&self, cands: &[usize], r: &DMatrix<f64>, par: Par) -> (Vec<f64>, Candidates) {
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
