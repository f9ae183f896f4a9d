//! Dense linear algebra for the hot paths. Matrices are stored as nalgebra
//! `DMatrix` (column-major) everywhere; the O(n·m²) and O(n³) work is done by faer
//! on zero-copy views, because faer's gemm, triangular solves and Cholesky are 2–10×
//! faster than nalgebra's on this machine (measured when the core moved to faer).
//! `tasks.rs`: the factorisations, solves and inverses cut into tasks by the matrix's
//! size (the same bits on any number of threads); `stripes.rs`: the O(n·m²) work cut
//! into column stripes.

mod stripes;
mod tasks;

use crate::error::{Error, Result};
use crate::exec::Exec;
pub use crate::exec::Par;
use crate::scratch::Scratch;
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, MatMut, MatRef};
use nalgebra::DMatrix;
pub use stripes::{STRIPES, Stripes, map_ordered, map_stripes, stripe_array, stripe_len};
pub use tasks::{
    BLOCKING, Blocking, chol_inverse, chol_inverse_blocked, chol_inverse_exec, chol_inverse_in,
    cholesky_blocked, cholesky_shifted, cholesky_with, cholesky_with_in, lower_factor, solve_lower,
    solve_lower_transpose,
};

pub fn view(m: &DMatrix<f64>) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(m.as_slice(), m.nrows(), m.ncols())
}

pub fn view_mut(m: &mut DMatrix<f64>) -> MatMut<'_, f64> {
    let (r, c) = m.shape();
    MatMut::from_column_major_slice_mut(m.as_mut_slice(), r, c)
}

/// How much to add to the diagonal of a matrix before its Cholesky factorisation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// docs/methods.md §1.3: ε·scale with ε = 1e-8, ×10 after each failure up to 1e-2.
    Auto { scale: f64 },
    /// Exactly this absolute amount (model files, reference implementations).
    Fixed(f64),
}

pub const JITTER_START: f64 = 1e-8;
pub const JITTER_MAX: f64 = 1e-2;

/// Lower Cholesky factor of `a + jitter·I` under the given policy; returns the
/// factor and the absolute jitter that was needed.
pub fn cholesky_jittered(
    a: &DMatrix<f64>,
    policy: Jitter,
    par: Par,
) -> Result<(DMatrix<f64>, f64)> {
    cholesky_jittered_in(a, policy, par, &Scratch::default())
}

/// [`cholesky_jittered`] in memory from `scratch`.
pub fn cholesky_jittered_in(
    a: &DMatrix<f64>,
    policy: Jitter,
    par: Par,
    scratch: &Scratch,
) -> Result<(DMatrix<f64>, f64)> {
    jittered(a.nrows(), policy, |j| {
        Ok(cholesky_with_in(a, j, par, scratch))
    })
}

/// The lower Cholesky factor of `a + (shift + jitter)·I` under the jitter policy, in
/// panels that look at `exec`'s cancel token ([`cholesky_shifted`]): for the n×n
/// matrices of the exact GP, whose factorisation takes minutes at n = 16,000.
pub fn cholesky_jittered_exec(
    a: &DMatrix<f64>,
    shift: f64,
    policy: Jitter,
    exec: &Exec,
) -> Result<(DMatrix<f64>, f64)> {
    jittered(a.nrows(), policy, |j| cholesky_shifted(a, shift + j, exec))
}

/// The jitter policy over one factorisation attempt: `attempt(jitter)` gives the
/// factor, None when the matrix is not positive definite with that jitter, or an error
/// (a cancelled run) that ends the search.
fn jittered(
    n: usize,
    policy: Jitter,
    mut attempt: impl FnMut(f64) -> Result<Option<DMatrix<f64>>>,
) -> Result<(DMatrix<f64>, f64)> {
    match policy {
        Jitter::Fixed(j) => attempt(j)?.map(|l| (l, j)).ok_or_else(|| {
            Error::numerical(format!(
                "a {n}×{n} covariance is not positive definite even with the fixed jitter {j:e}; \
                 remove the `jitter` key to let sgpw choose one"
            ))
        }),
        Jitter::Auto { scale } => {
            let scale = if scale.is_finite() && scale > 0.0 {
                scale
            } else {
                1.0
            };
            let mut eps = JITTER_START;
            while eps <= JITTER_MAX * 1.000001 {
                if let Some(l) = attempt(eps * scale)? {
                    return Ok((l, eps * scale));
                }
                eps *= 10.0;
            }
            Err(Error::numerical(format!(
                "a {n}×{n} covariance is not positive definite even with jitter {JITTER_MAX:e}·σ0² \
                 (duplicate inducing points or extreme lengthscales?)"
            )))
        }
    }
}

/// C ← α·op(A)·op(B) (+ C if `accumulate`), with op = transpose where asked.
#[allow(clippy::too_many_arguments)] // BLAS's gemm: operands, flags, scale, threads
pub fn gemm(
    c: &mut DMatrix<f64>,
    accumulate: bool,
    a: &DMatrix<f64>,
    ta: bool,
    b: &DMatrix<f64>,
    tb: bool,
    alpha: f64,
    par: Par,
) {
    let (av, bv, acc) = operands(a, ta, b, tb, accumulate);
    matmul(view_mut(c), acc, av, bv, alpha, par.faer());
}

/// op(A), op(B) and faer's accumulation flag, for [`gemm`] and [`gemm_shaped`].
fn operands<'a>(
    a: &'a DMatrix<f64>,
    ta: bool,
    b: &'a DMatrix<f64>,
    tb: bool,
    accumulate: bool,
) -> (MatRef<'a, f64>, MatRef<'a, f64>, Accum) {
    let av = if ta { view(a).transpose() } else { view(a) };
    let bv = if tb { view(b).transpose() } else { view(b) };
    let acc = if accumulate {
        Accum::Add
    } else {
        Accum::Replace
    };
    (av, bv, acc)
}

/// Which part of a matrix a structured product reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Full,
    /// the lower triangle, diagonal included (the rest is zero, or not wanted)
    Lower,
    /// the upper triangle, diagonal included
    Upper,
}

impl Shape {
    fn faer(self) -> faer::linalg::matmul::triangular::BlockStructure {
        use faer::linalg::matmul::triangular::BlockStructure;
        match self {
            Shape::Full => BlockStructure::Rectangular,
            Shape::Lower => BlockStructure::TriangularLower,
            Shape::Upper => BlockStructure::TriangularUpper,
        }
    }
}

/// [`gemm`] where op(A) is triangular or only a triangle of C is wanted: the zero or
/// unwanted half is skipped, half the multiply-adds of the plain product. `ca` is the
/// shape of op(A) (after the transpose); C's other triangle is left alone.
#[allow(clippy::too_many_arguments)] // gemm's arguments and two shapes
pub fn gemm_shaped(
    c: &mut DMatrix<f64>,
    cs: Shape,
    accumulate: bool,
    a: &DMatrix<f64>,
    ta: bool,
    ca: Shape,
    b: &DMatrix<f64>,
    tb: bool,
    alpha: f64,
    par: Par,
) {
    let (av, bv, acc) = operands(a, ta, b, tb, accumulate);
    faer::linalg::matmul::triangular::matmul(
        view_mut(c),
        cs.faer(),
        acc,
        av,
        ca.faer(),
        bv,
        Shape::Full.faer(),
        alpha,
        par.faer(),
    );
}

/// Copy the lower triangle of a square matrix to its upper triangle.
pub fn mirror_lower(c: &mut DMatrix<f64>) {
    let n = c.nrows();
    for j in 0..n {
        for i in 0..j {
            c[(i, j)] = c[(j, i)];
        }
    }
}

/// Below this many entries a matrix is zeroed or copied on one thread.
pub const PAR_WRITE_MIN: usize = 1 << 18;

/// An nrows×ncols matrix of zeros, written by the pool's threads when it is large: one
/// thread writing an n×m matrix while the others waited was a visible share of a large
/// evaluation (the kernel matrix is allocated this way, then filled).
pub fn zeros(nrows: usize, ncols: usize, par: Par) -> DMatrix<f64> {
    use rayon::prelude::*;
    let len = nrows * ncols;
    if !par.is_parallel() || len < PAR_WRITE_MIN {
        return DMatrix::zeros(nrows, ncols);
    }
    let mut v = Vec::with_capacity(len);
    v.par_extend(rayon::iter::repeat_n(0.0, len).with_min_len(PAR_WRITE_MIN / 4));
    DMatrix::from_vec(nrows, ncols, v)
}

/// A copy of `m`, written by the pool's threads when it is large (see [`zeros`]).
pub fn copy(m: &DMatrix<f64>, par: Par) -> DMatrix<f64> {
    use rayon::prelude::*;
    let (nrows, ncols) = m.shape();
    if !par.is_parallel() || m.len() < PAR_WRITE_MIN {
        return m.clone();
    }
    let mut v = Vec::with_capacity(m.len());
    v.par_extend(
        m.as_slice()
            .par_iter()
            .copied()
            .with_min_len(PAR_WRITE_MIN / 4),
    );
    DMatrix::from_vec(nrows, ncols, v)
}

/// A column-major block of `nrows` rows held in a slice.
pub fn block(s: &[f64], nrows: usize) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(s, nrows, s.len() / nrows.max(1))
}

pub fn block_mut(s: &mut [f64], nrows: usize) -> MatMut<'_, f64> {
    let ncols = s.len() / nrows.max(1);
    MatMut::from_column_major_slice_mut(s, nrows, ncols)
}

/// B ← L⁻¹ B on one thread (the caller parallelises over blocks).
pub fn block_solve_lower(l: &DMatrix<f64>, b: MatMut<'_, f64>) {
    solve_lower_triangular_in_place(view(l), b, faer::Par::Seq);
}

/// B ← L⁻ᵀ B on one thread.
pub fn block_solve_lower_transpose(l: &DMatrix<f64>, b: MatMut<'_, f64>) {
    solve_upper_triangular_in_place(view(l).transpose(), b, faer::Par::Seq);
}

/// C ← A·B on one thread.
pub fn block_mul(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    matmul(c, Accum::Replace, a, b, 1.0, faer::Par::Seq);
}

/// C ← C + A·B on one thread.
pub fn block_mul_add(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    matmul(c, Accum::Add, a, b, 1.0, faer::Par::Seq);
}

/// The lower triangle of C ← C + α·A·Bᵀ on one thread (the upper triangle is left
/// alone: call `mirror_lower` once the sums are complete).
pub fn block_add_nt_lower(
    c: &mut DMatrix<f64>,
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    alpha: f64,
) {
    use faer::linalg::matmul::triangular::{BlockStructure, matmul as tri_matmul};
    tri_matmul(
        view_mut(c),
        BlockStructure::TriangularLower,
        Accum::Add,
        a,
        BlockStructure::Rectangular,
        b.transpose(),
        BlockStructure::Rectangular,
        alpha,
        faer::Par::Seq,
    );
}

/// Σ a_i b_i with eight running sums, so the loop vectorises (a fixed order: the
/// same inputs always give the same bits). Inlined, so that it is compiled for the
/// SIMD level of the multiversioned loops that call it.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// Σ a_i, eight running sums as in `dot`.
#[inline]
pub fn sum(a: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let ac = a.chunks_exact(8);
    let tail: f64 = ac.remainder().iter().sum();
    for x in ac {
        for k in 0..8 {
            acc[k] += x[k];
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// op(A)·op(B) as a new matrix.
pub fn mul(a: &DMatrix<f64>, ta: bool, b: &DMatrix<f64>, tb: bool, par: Par) -> DMatrix<f64> {
    let r = if ta { a.ncols() } else { a.nrows() };
    let c = if tb { b.nrows() } else { b.ncols() };
    let mut out = DMatrix::zeros(r, c);
    gemm(&mut out, false, a, ta, b, tb, 1.0, par);
    out
}

/// Σ log diag(L) — half the log-determinant of L Lᵀ.
pub fn half_logdet(l: &DMatrix<f64>) -> f64 {
    (0..l.nrows()).map(|i| l[(i, i)].ln()).sum()
}

/// L ← chol(LLᵀ + xxᵀ) in place, O(m²); `x` is overwritten. Column-major storage
/// makes the inner loop run down a contiguous column.
pub fn rank_one_update(l: &mut DMatrix<f64>, x: &mut [f64]) -> Result<()> {
    let m = l.nrows();
    let data = l.as_mut_slice();
    for k in 0..m {
        let col = &mut data[k * m..(k + 1) * m];
        let lkk = col[k];
        let r = lkk.hypot(x[k]);
        if !(r.is_finite() && r > 0.0) {
            return Err(Error::numerical(
                "a rank-one Cholesky update broke down (a non-finite value)",
            ));
        }
        let (c, s) = (r / lkk, x[k] / lkk);
        col[k] = r;
        let (ci, xi) = (&mut col[k + 1..], &mut x[k + 1..]);
        for (li, xv) in ci.iter_mut().zip(xi.iter_mut()) {
            *li = (*li + s * *xv) / c;
            *xv = c * *xv - s * *li;
        }
    }
    Ok(())
}
