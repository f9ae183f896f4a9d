//! The first pass of the core over the data, chunk by chunk (docs/methods.md §1):
//! V = L⁻¹Kuf, λ and d per point, A = I + V Λ⁻¹ Vᵀ and β = V Λ⁻¹ y, ending in the
//! [`Summary`] the objective and the posterior come from.

use super::approx::Approx;
use super::inputs::{Kuu, LowRank, check_chunk};
use super::kuu_factor::{KuuFactor, SMALL};
use super::summary::Summary;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::linalg::{self, Jitter};
use crate::scratch::Scratch;
use multiversion::multiversion;
use nalgebra::{DMatrix, DVector};

/// Columns of V processed as one block: a block of V, its scaled copy and an m×m
/// accumulator stay in cache, and the products on it still run at gemm speed.
pub const BLOCK: usize = 256;

/// Cut n columns of m rows (`cols`, empty when there is no such matrix) and two
/// n-vectors (each of length n or empty) into the stripes of `linalg::stripe_len`:
/// (first column, its columns, its entries of each vector).
#[allow(clippy::type_complexity)] // the stripe's pieces, named in the doc comment
pub(super) fn stripes<'a>(
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

/// The n-sized values of one chunk that the second pass of FITC and power EP needs:
/// V = L⁻¹Kuf (m×len), λ, and d where the extra term needs it (power EP).
pub struct ChunkValues {
    pub(super) v: DMatrix<f64>,
    pub(super) lambda: Vec<f64>,
    pub(super) d: Vec<f64>,
}

impl ChunkValues {
    /// Give the values' memory back.
    pub fn recycle(self, scratch: &Scratch) {
        scratch.give_matrix(self.v);
        scratch.give(self.lambda);
        scratch.give(self.d);
    }
}

/// The first pass over the data, chunk by chunk: A = I + V Λ⁻¹ Vᵀ, β = V Λ⁻¹ y and the
/// sums over the data, added stripe by stripe in order. Data too large for one
/// m×n matrix are folded in a chunk of rows at a time ([`Accumulator::add`]); the
/// whole data set as one chunk gives exactly what a single evaluation gives.
pub struct Accumulator {
    pub(super) kuu: KuuFactor,
    pub(super) jitter: f64,
    pub(super) approx: Approx,
    pub(super) noise: f64,
    /// I + V Λ⁻¹ Vᵀ so far (lower triangle).
    pub(super) a: DMatrix<f64>,
    pub(super) beta: DVector<f64>,
    pub(super) quad: f64,
    pub(super) sum_log_lambda: f64,
    pub(super) extra: f64,
    pub(super) n: usize,
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

/// Copy a block of Kuf's columns into V's storage and solve it in place, V_b = L⁻¹K_b:
/// block by block, while the block is in cache (a whole-matrix copy first was a pass
/// over memory of its own).
pub(super) fn solve_copy(l: &KuuFactor, kuf: &[f64], j0: usize, vb: &mut [f64], m: usize) {
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
pub(super) fn lambdas(
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
