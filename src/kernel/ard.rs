//! The ARD stationary kernels `k(x,x') = σ0² κ(r)`, `r² = Σ_d (x_d − x'_d)²/ℓ_d²`
//! (docs/methods.md §0.2 and "Kernels"): the squared exponential κ = exp(−r²/2), the
//! Matérn family (ν = 1/2, 3/2, 5/2) and the rational quadratic with a learned shape α,
//! as one implementor of [`Kernel`] with the SIMD fills as its fast paths.
//!
//! Every derivative of a stationary kernel in ℓ or the points goes through
//! `−2 ∂k/∂r²` (which is k itself for the SE kernel): [`Ard::grad_in`] contracts the
//! adjoint with that matrix by the SE kernel's algebra ([`Ard::contract`]), so one
//! piece of code serves every kind. The non-SE fills live in `stationary.rs`.

use super::spectral::SpectralDensity;
use super::stationary::{self, Entry, exp_nonpositive};
use super::{DEFAULT_RQ_ALPHA, Kernel, KernelBlock, KernelGrad, KernelKind};
use crate::exec::Par;
use crate::scratch::Scratch;
use multiversion::multiversion;
use nalgebra::DMatrix;
use rayon::prelude::*;

/// The names of the parameter blocks (`--fix`, the parameter layout).
pub const SIGNAL_VARIANCE: &str = "signal_variance";
pub const LENGTHSCALES: &str = "lengthscales";
pub const RQ_ALPHA: &str = "rq_alpha";

/// Matrices with fewer entries than this are filled on one thread.
const PAR_MIN_ENTRIES: usize = 1 << 16;

/// An ARD stationary kernel with its parameters: σ0², one lengthscale per input and
/// rq's shape α. Its parameter blocks, in order: `signal_variance`, `lengthscales`,
/// `rq_alpha` (rq only).
#[derive(Clone, Debug, PartialEq)]
pub struct Ard {
    pub kind: KernelKind,
    pub signal_variance: f64,
    pub lengthscales: Vec<f64>,
    /// rq's shape α (not read by the other kernels).
    pub rq_alpha: f64,
}

/// Points divided by the lengthscales, transposed so that each point is a contiguous
/// column, into `out` (D×n).
fn scaled_columns(x: &DMatrix<f64>, ell: &[f64], out: &mut DMatrix<f64>) {
    for i in 0..x.nrows() {
        for (d, l) in ell.iter().enumerate() {
            out[(d, i)] = x[(i, d)] / l;
        }
    }
}

/// Arithmetic per entry of [`Ard`]'s `matrix_in` (for `sgpw bench --roofline`): a
/// difference and a multiply-add per dimension, the scaling of r², [`exp_nonpositive`]
/// (22 operations) and σ0²·e.
pub fn fill_ops(dim: usize) -> f64 {
    2.0 * dim as f64 + 24.0
}

/// Arithmetic per entry of K in [`Ard`]'s contraction: adj ∘ K, its row and
/// column sums, a multiply-add per dimension for P·B, another for PᵀA when B's
/// gradient is asked for.
pub fn contract_ops(dim: usize, want_b: bool) -> f64 {
    3.0 + dim as f64 * if want_b { 2.0 } else { 1.0 }
}

/// Column j of K(A, B) into `col`: r² summed over d in order 0..D, then
/// σ0² exp(−r²/2). `sa` holds A scaled, one input dimension after another.
/// Compiled for AVX2 and AVX-512 too, chosen at run time (same results on each: no
/// sum is reordered).
#[multiversion(targets = "simd")]
fn fill_column(col: &mut [f64], sa: &[f64], bj: &[f64], sf2: f64) {
    let na = col.len();
    // Eight rows at a time: their r² stays in registers through the D dimensions (one
    // pass over the column, not D), added in order 0..D from 0, as a per-pair loop
    // would (0 + t² is t²), then the exp.
    const W: usize = 8;
    let full = na / W * W;
    for (b, out) in col[..full].chunks_exact_mut(W).enumerate() {
        let i0 = b * W;
        let mut r2 = [0.0; W];
        for (d, q) in bj.iter().enumerate() {
            let ad: &[f64; W] = sa[d * na + i0..d * na + i0 + W]
                .try_into()
                .expect("eight rows");
            for l in 0..W {
                let t = ad[l] - q;
                r2[l] += t * t;
            }
        }
        out.copy_from_slice(&r2);
    }
    // the last rows, fewer than eight
    let tail = &mut col[full..];
    let mut r2 = [0.0; W];
    for (d, q) in bj.iter().enumerate() {
        let ad = &sa[d * na + full..(d + 1) * na];
        for (r, p) in r2.iter_mut().zip(ad) {
            let t = p - q;
            *r += t * t;
        }
    }
    tail.copy_from_slice(&r2[..tail.len()]);
    // The exp in a loop of its own over the whole column: inside the eight-row block
    // the compiler left it scalar (a fifth of a vfe evaluation at m = 200); here it
    // runs in SIMD lanes. Same operations on the same r², so the same bits.
    for v in col.iter_mut() {
        *v = sf2 * exp_nonpositive(-0.5 * *v);
    }
}

/// One column of P = adj ∘ K into `pc`; adds it to the row sums and returns its sum.
#[multiversion(targets = "simd")]
fn contract_column(pc: &mut [f64], kc: &[f64], ac: &[f64], row_sum: &mut [f64]) -> f64 {
    for ((p, kv), av) in pc.iter_mut().zip(kc).zip(ac) {
        *p = kv * av;
    }
    row_sum.iter_mut().zip(pc.iter()).for_each(|(r, p)| *r += p);
    crate::linalg::sum(pc)
}

/// Columns of P formed before their share of P·B is added as one product: a
/// column at a time, the na×D sums were loaded and stored D times per column.
const CONTRACT_BLOCK: usize = 64;

impl Ard {
    /// The kernel `kind` with these parameters (α is read by rq only).
    pub fn new(
        kind: KernelKind,
        signal_variance: f64,
        lengthscales: Vec<f64>,
        rq_alpha: f64,
    ) -> Ard {
        Ard {
            kind,
            signal_variance,
            lengthscales,
            rq_alpha,
        }
    }

    /// The squared-exponential kernel with these parameters.
    pub fn se(signal_variance: f64, lengthscales: Vec<f64>) -> Ard {
        Ard::new(
            KernelKind::Se,
            signal_variance,
            lengthscales,
            DEFAULT_RQ_ALPHA,
        )
    }

    /// A scaled by the lengthscales as na×D (each input dimension contiguous over the
    /// points, so distance loops run over i in SIMD lanes) and B scaled as D×nb, in
    /// buffers from `scratch` (given back by the caller).
    fn scaled(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        scratch: &Scratch,
    ) -> (DMatrix<f64>, DMatrix<f64>) {
        let (na, nb, dim) = (a.nrows(), b.nrows(), self.lengthscales.len());
        let mut sa = scratch.matrix(na, dim);
        for d in 0..dim {
            for i in 0..na {
                sa[(i, d)] = a[(i, d)] / self.lengthscales[d];
            }
        }
        let mut sb = scratch.matrix(dim, nb);
        scaled_columns(b, &self.lengthscales, &mut sb);
        (sa, sb)
    }

    /// A Matérn kernel's −2∂K/∂r² (as `matrix_of` with [`Entry::Slope`]) and
    /// Σ_ij adj_ij K_ij, column by column from one pass over the pairs
    /// ([`stationary::fill_slope_and_value_column`]); the columns' sums are added in
    /// order, the same on any number of threads.
    fn slope_and_weighed_value(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> (DMatrix<f64>, f64) {
        let (na, nb, dim) = (a.nrows(), b.nrows(), self.lengthscales.len());
        let (sa, sb) = self.scaled(a, b, scratch);
        let (sf2, kind) = (self.signal_variance, self.kind);
        let mut slope = scratch.matrix(na, nb);
        let mut sums = scratch.zeros(nb);
        let fill = |value: &mut Vec<f64>, (j, (col, sum)): (usize, (&mut [f64], &mut f64))| {
            let bj = &sb.as_slice()[j * dim..(j + 1) * dim];
            stationary::fill_slope_and_value_column(col, value, sa.as_slice(), bj, sf2, kind);
            *sum = crate::linalg::dot(value, &adj.as_slice()[j * na..(j + 1) * na]);
        };
        if par.is_parallel() && na * nb >= PAR_MIN_ENTRIES {
            slope
                .as_mut_slice()
                .par_chunks_mut(na.max(1))
                .zip(sums.par_iter_mut())
                .enumerate()
                .for_each_init(|| vec![0.0; na], fill);
        } else {
            let mut value = scratch.take(na);
            slope
                .as_mut_slice()
                .chunks_mut(na.max(1))
                .zip(sums.iter_mut())
                .enumerate()
                .for_each(|item| fill(&mut value, item));
            scratch.give(value);
        }
        let total = sums.iter().fold(0.0, |t, s| t + s);
        scratch.give(sums);
        scratch.give_matrix(sa);
        scratch.give_matrix(sb);
        (slope, total)
    }

    /// K(A, B) or one of its entrywise derivatives ([`Entry`]), in memory from `scratch`.
    fn matrix_of(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        par: Par,
        entry: Entry,
        scratch: &Scratch,
    ) -> DMatrix<f64> {
        // A scaled stays na×D (each input dimension contiguous over the points) so the
        // distance loop runs over i in SIMD lanes; every r²_ij is still summed over d
        // in order 0..D, exactly as a per-pair loop would.
        let (na, nb, dim) = (a.nrows(), b.nrows(), self.lengthscales.len());
        let (sa, sb) = self.scaled(a, b, scratch);
        let sf2 = self.signal_variance;
        let (kind, rq_alpha) = (self.kind, self.rq_alpha);
        let mut k = scratch.matrix(na, nb);
        let fill = |(j, col): (usize, &mut [f64])| {
            let bj = &sb.as_slice()[j * dim..(j + 1) * dim];
            match (kind, entry) {
                (KernelKind::Se, Entry::Value | Entry::Slope) => {
                    fill_column(col, sa.as_slice(), bj, sf2)
                }
                _ => stationary::fill_column(col, sa.as_slice(), bj, sf2, kind, rq_alpha, entry),
            }
        };
        if par.is_parallel() && na * nb >= PAR_MIN_ENTRIES {
            k.as_mut_slice()
                .par_chunks_mut(na.max(1))
                .with_min_len(8)
                .enumerate()
                .for_each(fill);
        } else {
            k.as_mut_slice()
                .chunks_mut(na.max(1))
                .enumerate()
                .for_each(fill);
        }
        scratch.give_matrix(sa);
        scratch.give_matrix(sb);
        k
    }
}

impl Kernel for Ard {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn dim(&self) -> usize {
        self.lengthscales.len()
    }

    fn blocks(&self) -> Vec<KernelBlock> {
        let mut b = vec![
            KernelBlock::new(SIGNAL_VARIANCE, vec![self.signal_variance]),
            KernelBlock::new(LENGTHSCALES, self.lengthscales.clone()),
        ];
        if self.kind == KernelKind::Rq {
            b.push(KernelBlock::new(RQ_ALPHA, vec![self.rq_alpha]));
        }
        b.retain(|b| !b.values.is_empty());
        b
    }

    /// σ0², ℓ, then rq's α.
    fn params_len(&self) -> usize {
        1 + self.lengthscales.len() + self.kind.shape_len()
    }

    fn set_log_params(&mut self, theta: &[f64]) {
        let d = self.lengthscales.len();
        self.signal_variance = theta[0].exp();
        for (l, t) in self.lengthscales.iter_mut().zip(&theta[1..=d]) {
            *l = t.exp();
        }
        if self.kind == KernelKind::Rq {
            self.rq_alpha = theta[1 + d].exp();
        }
    }

    fn to_expr(&self) -> Option<super::expression::KernelExpr> {
        Some(
            super::Labelled {
                label: self.kind.name().to_string(),
                fixed: vec![],
                inner: self.clone(),
            }
            .expr(),
        )
    }

    fn hold_block(&mut self, from: &dyn Kernel, name: &str) {
        let Some(from) = from.as_ard() else {
            return;
        };
        match name {
            SIGNAL_VARIANCE => self.signal_variance = from.signal_variance,
            LENGTHSCALES => self.lengthscales.copy_from_slice(&from.lengthscales),
            RQ_ALPHA => self.rq_alpha = from.rq_alpha,
            _ => {}
        }
    }

    fn matrix_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> DMatrix<f64> {
        self.matrix_of(a, b, par, Entry::Value, scratch)
    }

    /// σ0² at every point.
    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64> {
        let mut d = scratch.take(x.nrows());
        d.fill(self.signal_variance);
        d
    }

    /// Σ_i adj_i σ0² into log σ0².
    fn diag_grad(&self, _x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        out[0] += self.signal_variance * adj.iter().sum::<f64>();
    }

    fn prior_variance(&self) -> Option<f64> {
        Some(self.signal_variance)
    }

    /// The prior variance is σ0²: all of `d` goes to log σ0².
    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]) {
        out[0] += d;
    }

    fn grad_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        par: Par,
        scratch: &Scratch,
    ) -> KernelGrad {
        if self.kind.is_se() {
            return self.contract(a, b, k, adj, want_a, want_b, par, scratch);
        }
        // ℓ and the points enter through r² only, so their derivatives are the SE
        // kernel's with −2∂k/∂r² in place of k; σ0² scales k, α has its own slope.
        // Without K(A, B) (a term of a sum: `grad_reads_matrix`), a Matérn kernel's
        // value is taken with its slope, not filled again.
        let given = k.shape() == (a.nrows(), b.nrows());
        let (slope, variance) = if !given
            && matches!(
                self.kind,
                KernelKind::Matern12 | KernelKind::Matern32 | KernelKind::Matern52
            ) {
            self.slope_and_weighed_value(a, b, adj, par, scratch)
        } else {
            let slope = self.matrix_of(a, b, par, Entry::Slope, scratch);
            let variance = if given {
                crate::linalg::dot(k.as_slice(), adj.as_slice())
            } else {
                let k = self.matrix_of(a, b, par, Entry::Value, scratch);
                let v = crate::linalg::dot(k.as_slice(), adj.as_slice());
                scratch.give_matrix(k);
                v
            };
            (slope, variance)
        };
        let mut g = self.contract(a, b, &slope, adj, want_a, want_b, par, scratch);
        scratch.give_matrix(slope);
        g.params[0] = variance;
        if self.kind == KernelKind::Rq {
            let shape = self.matrix_of(a, b, par, Entry::ShapeSlope, scratch);
            g.params[1 + self.lengthscales.len()] =
                crate::linalg::dot(shape.as_slice(), adj.as_slice());
            scratch.give_matrix(shape);
        }
        g
    }

    /// SE's contraction is with K(A, B) itself; the others' read it for σ0²'s
    /// derivative only, which they take with their slope when it is not given.
    fn grad_reads_matrix(&self) -> bool {
        self.kind.is_se()
    }

    fn is_stationary(&self) -> bool {
        true
    }

    fn spectral(&self) -> Option<SpectralDensity> {
        SpectralDensity::of(self.kind)
    }

    fn as_ard(&self) -> Option<&Ard> {
        Some(self)
    }

    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}

impl Ard {
    /// Σ_ij adj_ij ∂P_ij/∂(log ℓ, A, B) for P = `k` with the SE kernel's dependence on
    /// r² (∂P/∂r² = −P/2), and Σ adj ∘ P for log σ0².
    #[allow(clippy::too_many_arguments)] // a BLAS-like call: operands, flags, threads, memory
    fn contract(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        par: Par,
        scratch: &Scratch,
    ) -> KernelGrad {
        let dim = self.dim();
        // The kernel is translation invariant: shifting both point sets to A's mean
        // keeps the expanded squares below from cancelling on data far from the origin.
        let mut shift = scratch.take(dim);
        for (d, s) in shift.iter_mut().enumerate() {
            *s = a.column(d).mean();
        }
        let shifted = |p: &DMatrix<f64>| {
            let mut out = scratch.matrix(p.nrows(), dim);
            for d in 0..dim {
                for i in 0..p.nrows() {
                    out[(i, d)] = p[(i, d)] - shift[d];
                }
            }
            out
        };
        let (a_shifted, b_shifted) = (shifted(a), shifted(b));
        let (a, b) = (&a_shifted, &b_shifted);
        // P = Ā ∘ K carries every derivative: ∂K_ij/∂θ = K_ij · (something of a_i, b_j).
        // P is never stored whole: each stripe of columns j forms CONTRACT_BLOCK of P's
        // columns at a time and keeps its own row sums r_i = Σ_j P_ij and
        // PB = Σ_j P_ij b_j (na×D); stripes are added in order (see linalg::map_stripes).
        let (na, nb) = k.shape();
        let len = crate::linalg::stripe_len(nb);
        let ranges =
            crate::linalg::stripe_array((0..nb).step_by(len.max(1)).map(|j| j..(j + len).min(nb)));
        // each column's sum, and B's gradient's PᵀA (nb×D, one row per column of P),
        // written by the stripe that owns the column
        let mut col_sum = scratch.take(nb);
        let mut pta_rows = scratch.take(if want_b { nb * dim } else { 0 });
        let parts = {
            let mut cs = col_sum.chunks_mut(len.max(1));
            let mut pt = pta_rows.chunks_mut((len * dim).max(1));
            let items = crate::linalg::stripe_array(ranges.into_iter().flatten().map(|cols| {
                let c = cs.next().unwrap_or_default();
                let p = if want_b {
                    pt.next().unwrap_or_default()
                } else {
                    &mut []
                };
                (cols, c, p)
            }));
            crate::linalg::map_stripes(par, items, |(cols, cs, pta)| {
                let mut row_sum = scratch.zeros(na);
                let mut pb = scratch.zero_matrix(na, dim);
                let mut block = scratch.take(na * CONTRACT_BLOCK.min(cols.len()));
                let (first, end) = (cols.start, cols.end);
                for j0 in cols.step_by(CONTRACT_BLOCK) {
                    let w = CONTRACT_BLOCK.min(end - j0);
                    let pblock = &mut block[..na * w];
                    for i in 0..w {
                        let (j, c) = (j0 + i, j0 + i - first);
                        let pc = &mut pblock[i * na..(i + 1) * na];
                        cs[c] = contract_column(
                            pc,
                            &k.as_slice()[j * na..(j + 1) * na],
                            &adj.as_slice()[j * na..(j + 1) * na],
                            &mut row_sum,
                        );
                        if want_b {
                            for d in 0..dim {
                                pta[c * dim + d] =
                                    crate::linalg::dot(pc, &a.as_slice()[d * na..(d + 1) * na]);
                            }
                        }
                    }
                    crate::linalg::block_mul_add(
                        crate::linalg::view_mut(&mut pb),
                        crate::linalg::block(pblock, na),
                        crate::linalg::view(b).subrows(j0, w),
                    );
                }
                scratch.give(block);
                (row_sum, pb)
            })
        };
        let mut row_sum = scratch.zeros(na);
        let mut pb = scratch.zero_matrix(na, dim);
        for (r, p) in parts.into_iter().flatten() {
            row_sum.iter_mut().zip(&r).for_each(|(s, v)| *s += v);
            pb += &p;
            scratch.give(r);
            scratch.give_matrix(p);
        }
        // [log σ0², log ℓ, rq's log α (its slot filled by grad_in)]
        let mut params = scratch.take(self.params_len());
        for (d, g) in params[1..=dim].iter_mut().enumerate() {
            let l2 = self.lengthscales[d] * self.lengthscales[d];
            // Σ_ij P_ij (a_id − b_jd)² = Σ_i a_id² r_i + Σ_j b_jd² c_j − 2 Σ_i a_id (PB)_id
            let s_a: f64 = (0..a.nrows())
                .map(|i| a[(i, d)] * (a[(i, d)] * row_sum[i] - 2.0 * pb[(i, d)]))
                .sum();
            let s_b: f64 = (0..b.nrows())
                .map(|j| b[(j, d)] * b[(j, d)] * col_sum[j])
                .sum();
            *g = (s_a + s_b) / l2;
        }
        let inv_l2 = |d: usize| 1.0 / (self.lengthscales[d] * self.lengthscales[d]);
        let ga = want_a.then(|| {
            let mut g = scratch.matrix(na, dim);
            for d in 0..dim {
                for i in 0..na {
                    g[(i, d)] = (pb[(i, d)] - a[(i, d)] * row_sum[i]) * inv_l2(d);
                }
            }
            g
        });
        let gb = want_b.then(|| {
            let mut g = scratch.matrix(nb, dim);
            for d in 0..dim {
                for j in 0..nb {
                    g[(j, d)] = (pta_rows[j * dim + d] - b[(j, d)] * col_sum[j]) * inv_l2(d);
                }
            }
            g
        });
        params[0] = col_sum.iter().sum();
        for v in [row_sum, col_sum, pta_rows, shift] {
            scratch.give(v);
        }
        for m in [pb, a_shifted, b_shifted] {
            scratch.give_matrix(m);
        }
        KernelGrad {
            params,
            a: ga,
            b: gb,
        }
    }
}
