//! Sparse Bayesian learning by the fast marginal-likelihood algorithm of Tipping & Faul
//! (*Fast marginal likelihood maximisation for sparse Bayesian models*, AISTATS 2003),
//! docs/methods.md §9: the relevance vector machine's training loop.
//!
//! The model is y = Φw + ε, ε ~ N(0, σ²I), w_j ~ N(0, α_j⁻¹), over N candidate basis
//! functions: φ_m = k(·, x_m) at the n training inputs (m < n) and, with the bias, the
//! constant φ_n = 1. Only the M functions with finite α_j ("active", the relevance
//! vectors) are in the model; with β = 1/σ²:
//!
//! - `Σ = (A + β Φ_Aᵀ Φ_A)⁻¹`, `μ = β Σ Φ_Aᵀ y` (the weights' posterior);
//! - `S_m = β φ_mᵀφ_m − β² φ_mᵀ Φ_A Σ Φ_Aᵀ φ_m`, `Q_m = β φ_mᵀ y − β² φ_mᵀ Φ_A Σ Φ_Aᵀ y`
//!   for every candidate, and `s_m = α_m S_m/(α_m − S_m)`, `q_m = α_m Q_m/(α_m − S_m)`
//!   for the active ones (= S_m, Q_m for the others): the sparsity and quality factors;
//! - `L = −½ [n log 2π − n log β + log|Σ⁻¹| − Σ_j log α_j + β yᵀy − β yᵀΦ_A μ]`, the log
//!   marginal likelihood.
//!
//! L as a function of one α_m alone is maximised at `α_m = s_m²/(q_m² − s_m)` when
//! `θ_m = q_m² − s_m > 0` and at α_m = ∞ (not in the model) otherwise, so every step
//! takes the one change — add, re-estimate or delete — whose ΔL (closed form in S_m,
//! Q_m, α_m) is largest, and updates Σ, μ, S, Q and L by rank-one formulas (the paper's
//! appendix): O(N·M) per step. An addition also needs the new function's products with
//! every candidate, Φᵀφ_i: n kernel columns, computed a block at a time and never kept
//! (O(n²) kernel evaluations, O(block·n) memory). What is kept is Φᵀφ_j for the M
//! active j (N×M), never an n×n matrix.
//!
//! Every few steps Σ, μ, S, Q, L are recomputed from the kept products (O(N·M² + M³)),
//! which clears the rounding of the rank-one updates, and σ² is re-estimated,
//! `σ² = ‖y − Φ_A μ‖² / (n − Σ_j γ_j)` with `γ_j = 1 − α_j Σ_jj` (Tipping 2001); a
//! re-estimate that would lower L is not taken, so L never decreases (to rounding).

use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::kernel::ModelKernel;
use nalgebra::{DMatrix, DVector};
use std::f64::consts::PI;

/// Re-estimate σ² every this many steps (SparseBayes' default frequency).
pub const NOISE_EVERY: usize = 5;

/// Converged when no addition or deletion raises L and no re-estimate changes any
/// log α_j by more than this (SparseBayes' `MinDeltaLogAlpha`).
pub const MIN_DELTA_LOG_ALPHA: f64 = 1e-3;

/// A candidate whose cosine with an active function exceeds 1 − this is not added (a
/// duplicate input: its column would make Σ⁻¹ numerically singular; SparseBayes'
/// alignment test).
pub const ALIGNMENT_ZERO: f64 = 1e-3;

/// A candidate is not added while its S_m is below this fraction of β φ_mᵀφ_m (its
/// largest value): S_m is then a difference of two numbers that agree to more digits
/// than the rank-one updates keep, i.e. φ_m lies numerically in the span of the model,
/// and the gain `(Q² − S)/S + log(S/Q²)` of adding it would be rounding divided by
/// rounding.
pub const MIN_RELATIVE_S: f64 = 1e-8;

/// The candidate basis functions at the training inputs.
pub struct Candidates<'a> {
    x: &'a DMatrix<f64>,
    kernel: ModelKernel,
    bias: bool,
}

impl<'a> Candidates<'a> {
    /// φ_m = k(·, x_m) for each training input x_m, and the constant if `bias`.
    pub fn new(x: &'a DMatrix<f64>, kernel: ModelKernel, bias: bool) -> Candidates<'a> {
        Candidates { x, kernel, bias }
    }

    /// The number of training points n.
    pub fn n(&self) -> usize {
        self.x.nrows()
    }

    /// The number of candidates N (n, plus one with the bias).
    pub fn len(&self) -> usize {
        self.n() + usize::from(self.bias)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether candidate m is the bias.
    pub fn is_bias(&self, m: usize) -> bool {
        m == self.n()
    }

    /// φ_m at the training inputs (n).
    pub fn column(&self, m: usize, exec: &Exec) -> Vec<f64> {
        if self.is_bias(m) {
            return vec![1.0; self.n()];
        }
        let xm = self.x.rows(m, 1).into_owned();
        self.kernel
            .matrix(self.x, &xm, exec.par)
            .as_slice()
            .to_vec()
    }

    /// Φᵀv (N) and, when `squares` is given, diag(ΦᵀΦ) into it: one pass over the
    /// kernel a block of candidates at a time (block × n entries at most).
    pub fn project(
        &self,
        v: &[f64],
        squares: Option<&mut Vec<f64>>,
        exec: &Exec,
    ) -> Result<Vec<f64>> {
        let n = self.n();
        let vv = DVector::from_column_slice(v);
        let mut out = Vec::with_capacity(self.len());
        let mut sq = Vec::with_capacity(if squares.is_some() { self.len() } else { 0 });
        let block = exec.chunk_rows(n);
        let mut start = 0;
        while start < n {
            exec.check()?;
            let len = block.min(n - start);
            let xb = self.x.rows(start, len).into_owned();
            let k = self.kernel.matrix(&xb, self.x, exec.par);
            out.extend((&k * &vv).iter());
            if squares.is_some() {
                sq.extend(k.row_iter().map(|r| r.norm_squared()));
            }
            start += len;
        }
        if self.bias {
            out.push(v.iter().sum());
            sq.push(n as f64);
        }
        if let Some(s) = squares {
            *s = sq;
        }
        Ok(out)
    }
}

/// One step's change to the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// Candidate m joined with this α.
    Add { m: usize, alpha: f64 },
    /// Active candidate m's α was set to this.
    Reestimate { m: usize, alpha: f64 },
    /// Active candidate m left the model.
    Delete { m: usize },
}

/// What a step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The change to α (None: nothing raised L, or only σ² changed).
    pub action: Option<Action>,
    /// σ² was re-estimated (and the re-estimate taken).
    pub noise_updated: bool,
    /// The convergence test holds: no addition or deletion raises L, no α changes by
    /// more than [`MIN_DELTA_LOG_ALPHA`] in log, and σ² is settled.
    pub converged: bool,
}

/// The fast algorithm's state: the active set, its α, σ², the posterior Σ, μ, the
/// factors S, Q of every candidate and the log marginal likelihood.
pub struct FastRvm<'a> {
    cands: Candidates<'a>,
    yy: f64,
    beta: f64,
    /// σ² is never taken below this.
    noise_floor: f64,
    learn_noise: bool,
    /// At most this many active functions.
    cap: usize,
    /// Φᵀy and diag(ΦᵀΦ) (N).
    phi_y: Vec<f64>,
    phi_sq: Vec<f64>,
    active: Vec<usize>,
    alpha: Vec<f64>,
    /// Φᵀφ_j (N) for each active j, in the order of `active`.
    gram: Vec<Vec<f64>>,
    sigma: DMatrix<f64>,
    mu: Vec<f64>,
    big_s: Vec<f64>,
    big_q: Vec<f64>,
    log_ml: f64,
    steps: usize,
}

/// The dense log marginal likelihood and posterior of an active set from its
/// products: what [`FastRvm::refresh`] computes.
struct Dense {
    sigma: DMatrix<f64>,
    mu: Vec<f64>,
    big_s: Vec<f64>,
    big_q: Vec<f64>,
    log_ml: f64,
}

impl<'a> FastRvm<'a> {
    /// Start from the single candidate with the largest normalised projection on y,
    /// `(φᵀy)²/φᵀφ`, with its optimal α at σ² (Tipping & Faul §4): one pass over the
    /// kernel for Φᵀy and diag(ΦᵀΦ), one for the chosen function's products.
    /// `cap` bounds the number of active functions (≥ 1); `learn_noise`: re-estimate
    /// σ², never below `noise_floor`.
    pub fn new(
        cands: Candidates<'a>,
        y: &[f64],
        noise: f64,
        noise_floor: f64,
        learn_noise: bool,
        cap: usize,
        exec: &Exec,
    ) -> Result<FastRvm<'a>> {
        if !(noise.is_finite() && noise > 0.0) {
            return Err(Error::input(format!(
                "rvm: the noise variance must be positive to start, not {noise}"
            )));
        }
        let mut phi_sq = Vec::new();
        let phi_y = cands.project(y, Some(&mut phi_sq), exec)?;
        let best = (0..cands.len())
            .filter(|&m| phi_sq[m] > 0.0)
            .max_by(|&a, &b| {
                (phi_y[a] * phi_y[a] / phi_sq[a]).total_cmp(&(phi_y[b] * phi_y[b] / phi_sq[b]))
            })
            .filter(|&m| phi_y[m] != 0.0)
            .ok_or_else(|| {
                Error::input(
                    "rvm: no basis function correlates with the targets (are they all \
                     equal to their mean?)",
                )
            })?;
        let proj = phi_y[best] * phi_y[best] / phi_sq[best];
        // the optimum of α for one function, α = φᵀφ / ((φᵀy)²/φᵀφ − σ²); where that
        // is not positive, a large α (the first re-estimate or deletion settles it)
        let alpha = if proj > noise {
            phi_sq[best] / (proj - noise)
        } else {
            phi_sq[best] / (1e-3 * proj)
        };
        let mut r = FastRvm {
            yy: y.iter().map(|v| v * v).sum(),
            beta: 1.0 / noise,
            noise_floor,
            learn_noise,
            cap: cap.max(1),
            phi_y,
            phi_sq,
            active: Vec::new(),
            alpha: Vec::new(),
            gram: Vec::new(),
            sigma: DMatrix::zeros(0, 0),
            mu: Vec::new(),
            big_s: Vec::new(),
            big_q: Vec::new(),
            log_ml: 0.0,
            steps: 0,
            cands,
        };
        let column = r.cands.column(best, exec);
        let g = r.cands.project(&column, None, exec)?;
        r.active.push(best);
        r.alpha.push(alpha);
        r.gram.push(g);
        r.refresh()?;
        Ok(r)
    }

    /// Active candidates (relevance vectors; index n is the bias), in order of entry.
    pub fn active(&self) -> &[usize] {
        &self.active
    }

    /// α of the active candidates.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// σ².
    pub fn noise(&self) -> f64 {
        1.0 / self.beta
    }

    /// The weights' posterior covariance Σ (M×M) and mean μ.
    pub fn sigma(&self) -> &DMatrix<f64> {
        &self.sigma
    }

    pub fn mu(&self) -> &[f64] {
        &self.mu
    }

    /// S_m and Q_m of every candidate.
    pub fn big_s(&self) -> &[f64] {
        &self.big_s
    }

    pub fn big_q(&self) -> &[f64] {
        &self.big_q
    }

    /// The sparsity and quality factors s_m, q_m of every candidate. For an active j,
    /// `s_j = α_j S_j/(α_j − S_j)` cancels when S_j is close to α_j (a well-determined
    /// weight, s_j ≫ α_j); since `S_j = α_j − α_j² Σ_jj` and `Q_j = α_j μ_j`, the same
    /// factors are then `s_j = 1/Σ_jj − α_j`, `q_j = μ_j/Σ_jj`, which do not.
    pub fn factors(&self) -> (Vec<f64>, Vec<f64>) {
        let (mut s, mut q) = (self.big_s.clone(), self.big_q.clone());
        for (p, (&m, &a)) in self.active.iter().zip(&self.alpha).enumerate() {
            let d = a - self.big_s[m];
            if d < 0.5 * a {
                let spp = self.sigma[(p, p)];
                s[m] = 1.0 / spp - a;
                q[m] = self.mu[p] / spp;
            } else {
                s[m] = a * self.big_s[m] / d;
                q[m] = a * self.big_q[m] / d;
            }
        }
        (s, q)
    }

    /// The log marginal likelihood log p(y | α, σ²).
    pub fn log_ml(&self) -> f64 {
        self.log_ml
    }

    /// Steps taken.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The candidates.
    pub fn candidates(&self) -> &Candidates<'a> {
        &self.cands
    }

    /// Σ_j c_j Φᵀφ_j over the active j (N): O(N·M).
    fn gram_times(&self, c: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.cands.len()];
        for (g, &cj) in self.gram.iter().zip(c) {
            out.iter_mut().zip(g).for_each(|(o, gv)| *o += cj * gv);
        }
        out
    }

    /// Φ_Aᵀφ_m (M) of candidate m.
    fn active_products(&self, m: usize) -> Vec<f64> {
        self.gram.iter().map(|g| g[m]).collect()
    }

    /// Σ, μ, S, Q and L from scratch at the current active set, α and σ² (O(N·M² + M³)).
    fn dense(&self) -> Result<Dense> {
        let k = self.active.len();
        let beta = self.beta;
        let gaa = DMatrix::from_fn(k, k, |a, b| self.gram[b][self.active[a]]);
        let mut inv = gaa * beta;
        for (j, a) in self.alpha.iter().enumerate() {
            inv[(j, j)] += a;
        }
        let inv = (&inv + inv.transpose()) * 0.5;
        let chol = inv.clone().cholesky().ok_or_else(|| {
            Error::numerical(
                "rvm: A + βΦᵀΦ is not positive definite at these α and σ² (basis functions \
                 too alike for double precision)",
            )
        })?;
        let logdet = 2.0 * chol.l().diagonal().iter().map(|d| d.ln()).sum::<f64>();
        let sigma = chol.inverse();
        let sigma = (&sigma + sigma.transpose()) * 0.5;
        let ay = DVector::from_iterator(k, self.active.iter().map(|&m| self.phi_y[m]));
        let mu = (&sigma * &ay) * beta;
        let n_c = self.cands.len();
        let g = DMatrix::from_fn(n_c, k, |m, j| self.gram[j][m]);
        let gs = &g * &sigma;
        let gmu = &g * &mu;
        let big_s = (0..n_c)
            .map(|m| beta * self.phi_sq[m] - beta * beta * gs.row(m).dot(&g.row(m)))
            .collect();
        let big_q = (0..n_c)
            .map(|m| beta * self.phi_y[m] - beta * gmu[m])
            .collect();
        let n = self.cands.n() as f64;
        let log_ml = -0.5
            * (n * (2.0 * PI).ln() - n * beta.ln() + logdet
                - self.alpha.iter().map(|a| a.ln()).sum::<f64>()
                + beta * self.yy
                - beta * ay.dot(&mu));
        if !log_ml.is_finite() {
            return Err(Error::numerical(
                "rvm: the log marginal likelihood is not finite",
            ));
        }
        Ok(Dense {
            sigma,
            mu: mu.as_slice().to_vec(),
            big_s,
            big_q,
            log_ml,
        })
    }

    /// Recompute Σ, μ, S, Q and L from scratch (clears the rank-one updates' rounding).
    pub fn refresh(&mut self) -> Result<()> {
        let d = self.dense()?;
        self.sigma = d.sigma;
        self.mu = d.mu;
        self.big_s = d.big_s;
        self.big_q = d.big_q;
        self.log_ml = d.log_ml;
        Ok(())
    }

    /// The best change to α and its ΔL (> 0), and whether α has converged (no addition
    /// or deletion raises L and no re-estimate moves a log α by more than
    /// [`MIN_DELTA_LOG_ALPHA`]).
    fn best_action(&self) -> (Option<(Action, f64)>, bool) {
        let (s, q) = self.factors();
        let mut best: Option<(Action, f64)> = None;
        let mut settled = true;
        let consider = |a: Action, dl: f64, best: &mut Option<(Action, f64)>| {
            if dl.is_finite() && dl > 0.0 && best.is_none_or(|(_, b)| dl > b) {
                *best = Some((a, dl));
            }
        };
        let mut pos = vec![usize::MAX; self.cands.len()];
        for (p, &m) in self.active.iter().enumerate() {
            pos[m] = p;
        }
        for m in 0..self.cands.len() {
            let theta = q[m] * q[m] - s[m];
            if pos[m] != usize::MAX {
                let (p, a) = (pos[m], self.alpha[pos[m]]);
                if theta > 0.0 {
                    // ℓ(α) = ½[log α − log(α + s) + q²/(α + s)] is L's part in α_m
                    let new = s[m] * s[m] / theta;
                    let dl = 0.5
                        * ((new / a).ln() - ((new + s[m]) / (a + s[m])).ln()
                            + q[m] * q[m] * (1.0 / (new + s[m]) - 1.0 / (a + s[m])));
                    if (new / a).ln().abs() > MIN_DELTA_LOG_ALPHA {
                        settled = false;
                    }
                    consider(Action::Reestimate { m, alpha: new }, dl, &mut best);
                } else if self.active.len() > 1 {
                    // the last function is never deleted (the model would be empty);
                    // −ℓ(α) with α + s = 1/Σ_mm and q = μ_m/Σ_mm
                    settled = false;
                    let spp = self.sigma[(p, p)];
                    let dl = 0.5 * (-(a * spp).ln() - self.mu[p] * self.mu[p] / spp);
                    consider(Action::Delete { m }, dl, &mut best);
                }
            } else if theta > 0.0
                && self.active.len() < self.cap
                && self.big_s[m] > MIN_RELATIVE_S * self.beta * self.phi_sq[m]
                && !self.aligned(m)
            {
                settled = false;
                let (bs, bq) = (self.big_s[m], self.big_q[m]);
                let dl = 0.5 * ((bq * bq - bs) / bs + (bs / (bq * bq)).ln());
                consider(
                    Action::Add {
                        m,
                        alpha: s[m] * s[m] / theta,
                    },
                    dl,
                    &mut best,
                );
            }
        }
        (best, settled)
    }

    /// Whether candidate m is (nearly) parallel to an active function.
    fn aligned(&self, m: usize) -> bool {
        self.active.iter().zip(&self.gram).any(|(&j, g)| {
            let c2 = g[m] * g[m] / (self.phi_sq[m] * self.phi_sq[j]);
            c2 > (1.0 - ALIGNMENT_ZERO) * (1.0 - ALIGNMENT_ZERO)
        })
    }

    /// Apply an action with the rank-one updates of Σ, μ, S, Q and L += ΔL.
    fn apply(&mut self, action: Action, delta_ml: f64, exec: &Exec) -> Result<()> {
        let beta = self.beta;
        match action {
            Action::Reestimate { m, alpha } => {
                let p = self.position(m);
                let sp: Vec<f64> = self.sigma.column(p).iter().copied().collect();
                let kappa = 1.0 / (sp[p] + 1.0 / (alpha - self.alpha[p]));
                let mu_p = self.mu[p];
                self.sigma -= kappa
                    * DVector::from_column_slice(&sp)
                    * DVector::from_column_slice(&sp).transpose();
                self.mu
                    .iter_mut()
                    .zip(&sp)
                    .for_each(|(u, s)| *u -= kappa * mu_p * s);
                let v = self.gram_times(&sp);
                for ((bs, bq), vm) in self.big_s.iter_mut().zip(&mut self.big_q).zip(&v) {
                    let w = beta * vm;
                    *bs += kappa * w * w;
                    *bq += kappa * mu_p * w;
                }
                self.alpha[p] = alpha;
            }
            Action::Add { m, alpha } => {
                let column = self.cands.column(m, exec);
                let g_new = self.cands.project(&column, None, exec)?;
                let sii = 1.0 / (alpha + self.big_s[m]);
                let mu_i = sii * self.big_q[m];
                let gam = DVector::from_vec(self.active_products(m));
                let c = (&self.sigma * &gam) * beta;
                let k = self.active.len();
                let mut sigma = DMatrix::zeros(k + 1, k + 1);
                sigma
                    .view_mut((0, 0), (k, k))
                    .copy_from(&(&self.sigma + (&c * c.transpose()) * sii));
                for j in 0..k {
                    sigma[(j, k)] = -sii * c[j];
                    sigma[(k, j)] = -sii * c[j];
                }
                sigma[(k, k)] = sii;
                let gc = self.gram_times(c.as_slice());
                for mm in 0..gc.len() {
                    let w = beta * (g_new[mm] - gc[mm]);
                    self.big_s[mm] -= sii * w * w;
                    self.big_q[mm] -= mu_i * w;
                }
                self.mu
                    .iter_mut()
                    .zip(c.iter())
                    .for_each(|(u, cj)| *u -= mu_i * cj);
                self.mu.push(mu_i);
                self.sigma = sigma;
                self.active.push(m);
                self.alpha.push(alpha);
                self.gram.push(g_new);
            }
            Action::Delete { m } => {
                let p = self.position(m);
                let sp: Vec<f64> = self.sigma.column(p).iter().copied().collect();
                let (spp, mu_p) = (sp[p], self.mu[p]);
                let v = self.gram_times(&sp);
                for ((bs, bq), vm) in self.big_s.iter_mut().zip(&mut self.big_q).zip(&v) {
                    let w = beta * vm;
                    *bs += w * w / spp;
                    *bq += mu_p * w / spp;
                }
                self.sigma -= DVector::from_column_slice(&sp)
                    * DVector::from_column_slice(&sp).transpose()
                    / spp;
                self.mu
                    .iter_mut()
                    .zip(&sp)
                    .for_each(|(u, s)| *u -= mu_p * s / spp);
                self.sigma = self.sigma.clone().remove_row(p).remove_column(p);
                self.mu.remove(p);
                self.active.remove(p);
                self.alpha.remove(p);
                self.gram.remove(p);
            }
        }
        self.log_ml += delta_ml;
        Ok(())
    }

    fn position(&self, m: usize) -> usize {
        self.active
            .iter()
            .position(|&a| a == m)
            .expect("internal: the action names an active candidate")
    }

    /// Recompute everything from scratch, re-estimate σ² (Tipping 2001's fixed point,
    /// floored), and keep the re-estimate only if L at it is not below L recomputed
    /// at the old σ². Returns |Δ log σ²| when taken.
    fn update_noise(&mut self) -> Result<Option<f64>> {
        self.refresh()?;
        let n = self.cands.n() as f64;
        let k = self.active.len();
        let gaa = DMatrix::from_fn(k, k, |a, b| self.gram[b][self.active[a]]);
        let mu = DVector::from_column_slice(&self.mu);
        let ay: f64 = self
            .active
            .iter()
            .zip(&self.mu)
            .map(|(&m, u)| self.phi_y[m] * u)
            .sum();
        let resid2 = (self.yy - 2.0 * ay + mu.dot(&(&gaa * &mu))).max(0.0);
        let gamma: f64 = (0..k)
            .map(|j| 1.0 - self.alpha[j] * self.sigma[(j, j)])
            .sum();
        if n - gamma <= 0.0 || resid2 <= 0.0 {
            return Ok(None);
        }
        let noise = (resid2 / (n - gamma)).max(self.noise_floor);
        let old_beta = self.beta;
        if (noise * old_beta).ln().abs() == 0.0 {
            return Ok(Some(0.0));
        }
        self.beta = 1.0 / noise;
        match self.dense() {
            Ok(d) if d.log_ml >= self.log_ml => {
                self.sigma = d.sigma;
                self.mu = d.mu;
                self.big_s = d.big_s;
                self.big_q = d.big_q;
                self.log_ml = d.log_ml;
                Ok(Some((noise * old_beta).ln().abs()))
            }
            _ => {
                self.beta = old_beta;
                Ok(None)
            }
        }
    }

    /// One step: the change to α that raises L most (if any) and, every
    /// [`NOISE_EVERY`] steps or once α has converged, a re-estimate of σ².
    pub fn step(&mut self, exec: &Exec) -> Result<Step> {
        exec.check()?;
        self.steps += 1;
        let (best, settled) = self.best_action();
        // nothing raises L: α is at a (coordinate-wise) maximum as well
        let settled = settled || best.is_none();
        let mut action = None;
        if let Some((a, dl)) = best
            && !settled
        {
            self.apply(a, dl, exec)?;
            action = Some(a);
        }
        let mut noise_updated = false;
        let mut noise_settled = !self.learn_noise;
        let due = self.steps.is_multiple_of(NOISE_EVERY);
        if self.learn_noise && (settled || due) {
            match self.update_noise()? {
                Some(change) => {
                    noise_updated = change > 0.0;
                    noise_settled = change < 1e-6;
                }
                None => noise_settled = true,
            }
        } else if due {
            // clear the rank-one updates' rounding as often without σ²
            self.refresh()?;
        }
        Ok(Step {
            action,
            noise_updated,
            converged: settled && noise_settled,
        })
    }
}
