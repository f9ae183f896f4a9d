//! Dense linear algebra for the hot paths. Matrices are stored as nalgebra
//! `DMatrix` (column-major) everywhere; the O(n·m²) and O(n³) work is done by faer
//! on zero-copy views, because faer's gemm, triangular solves and Cholesky are 2–10×
//! faster than nalgebra's on this machine (measured when the core moved to faer).

use crate::error::{Error, Result};
pub use crate::exec::Par;
use crate::exec::{CancelToken, Exec};
use crate::scratch::Scratch;
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef};
use nalgebra::DMatrix;

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

/// How the blocked factorisation and inverse cut their work ([`cholesky_blocked`],
/// [`chol_inverse_blocked`]).
#[derive(Clone, Copy, Debug)]
pub struct Blocking {
    /// Columns per panel (and rows per step of the inverse's forward substitution).
    pub panel: usize,
    /// Columns (or rows) of one task of a panel's work: the unit the threads share, with
    /// a look at the cancel token before each.
    pub update: usize,
}

/// 256-column panels, tasks of 128 columns or rows: at n = 16,512 the largest task is
/// 16,512·128·256 ≈ 5·10⁸ multiply-adds (a tenth of a second on one core), and a
/// panel's update is over a hundred tasks for the threads to share.
pub const BLOCKING: Blocking = Blocking {
    panel: 256,
    update: 128,
};

// ---- The same bits on any number of threads --------------------------------------
//
// The factorisations, solves and inverses below cut their work into tasks by the
// matrix's size alone (`Blocking`), each task runs faer's sequential kernels, and the
// threads only decide which task runs where: the result is the same bit for bit on one
// thread or sixty-four. faer's own parallel kernels cut their work by the number of
// threads, and the exact GP's NLML and gradient differed in their last bits between 1,
// 2 and 3 threads — enough for a fit started from it (the default second start) to end
// elsewhere (docs/results/speed.md, "The same result on any number of threads").

/// Err(Cancelled) once `cancel` is set (None: not cancellable).
fn check(cancel: Option<&CancelToken>) -> Result<()> {
    match cancel {
        Some(c) if c.is_cancelled() => Err(Error::Cancelled),
        _ => Ok(()),
    }
}

/// Run `f(j, block)` on the blocks of `width` columns of `m` (`j`: the block's first
/// column), each a task on rayon's pool (on this thread for `Par::Seq`); the first error
/// is returned. The blocks depend on `width` alone, never on the threads.
fn column_tasks<'a>(
    par: Par,
    m: MatMut<'a, f64>,
    width: usize,
    f: impl Fn(usize, MatMut<'a, f64>) -> Result<()> + Sync + Send,
) -> Result<()> {
    use rayon::prelude::*;
    let width = width.max(1);
    if par.is_parallel() && m.ncols() > width {
        m.par_col_chunks_mut(width)
            .enumerate()
            .with_max_len(1)
            .try_for_each(|(i, block)| f(i * width, block))
    } else {
        let mut rest = m;
        let mut j = 0;
        while rest.ncols() > 0 {
            let c = width.min(rest.ncols());
            let (block, right) = rest.split_at_col_mut(c);
            f(j, block)?;
            rest = right;
            j += c;
        }
        Ok(())
    }
}

/// The lower Cholesky factor of `a + shift·I`, Ok(None) if it is not positive definite
/// (or holds a NaN), Err(Cancelled) once `exec`'s token is set: the O(n³) work is done in
/// panels ([`cholesky_blocked`]) that look at the token. Only the lower triangle of `a`
/// is read.
pub fn cholesky_shifted(a: &DMatrix<f64>, shift: f64, exec: &Exec) -> Result<Option<DMatrix<f64>>> {
    exec.check()?;
    let n = a.nrows();
    let mut l = exec.scratch.copy(a);
    for i in 0..n {
        l[(i, i)] += shift;
    }
    let ok = match cholesky_blocked(&mut l, exec, BLOCKING) {
        Ok(ok) => ok,
        Err(e) => {
            exec.scratch.give_matrix(l);
            return Err(e);
        }
    };
    Ok(lower_factor(l, ok, &exec.scratch))
}

/// The factor with its upper triangle zeroed if the factorisation succeeded with a
/// positive finite diagonal; otherwise its memory goes back to `scratch`.
pub fn lower_factor(mut l: DMatrix<f64>, ok: bool, scratch: &Scratch) -> Option<DMatrix<f64>> {
    let n = l.nrows();
    for j in 0..n {
        for i in 0..j {
            l[(i, j)] = 0.0;
        }
    }
    if ok && (0..n).all(|i| l[(i, i)].is_finite() && l[(i, i)] > 0.0) {
        Some(l)
    } else {
        scratch.give_matrix(l);
        None
    }
}

/// Right-looking blocked Cholesky in place on the lower triangle of `a`: for each panel
/// of `panel` columns, faer factorises its diagonal block, solves the rows below it (in
/// tasks of `blocking.update` rows), and subtracts their outer product from the trailing
/// matrix (in tasks of `blocking.update` columns). The cancel token is read before each
/// task, so a cancelled run stops within one of them instead of after the whole O(n³)
/// factorisation. Ok(false): not positive definite. The upper triangle is left as it
/// was. The same bits on any number of threads (see above).
pub fn cholesky_blocked(a: &mut DMatrix<f64>, exec: &Exec, blocking: Blocking) -> Result<bool> {
    cholesky_panels(
        view_mut(a),
        exec.par,
        Some(&exec.cancel),
        blocking,
        &exec.scratch,
    )
}

/// [`cholesky_blocked`] on a view, on the threads of `par`, cancelled by `cancel`.
fn cholesky_panels(
    mut a: MatMut<'_, f64>,
    par: Par,
    cancel: Option<&CancelToken>,
    blocking: Blocking,
    scratch: &Scratch,
) -> Result<bool> {
    use faer::linalg::matmul::triangular::matmul as tri_matmul;
    let seq = faer::Par::Seq;
    let n = a.nrows();
    let (panel, task) = (blocking.panel.max(1), blocking.update.max(1));
    let mut k = 0;
    while k < n {
        check(cancel)?;
        let b = panel.min(n - k);
        let (_, _, _, rest) = a.rb_mut().split_at_mut(k, k);
        let (mut a11, _, mut a21, a22) = rest.split_at_mut(b, b);
        let req = cholesky_in_place_scratch::<f64>(b, seq, Default::default());
        let ok = scratch.with_stack(req, |stack| {
            cholesky_in_place(
                a11.rb_mut(),
                Default::default(),
                seq,
                stack,
                Default::default(),
            )
            .is_ok()
        });
        if !ok {
            return Ok(false);
        }
        let rows = n - k - b;
        if rows > 0 {
            let l11 = a11.rb();
            // L21 = A21·L11⁻ᵀ, i.e. L11·L21ᵀ = A21ᵀ: its rows are independent
            column_tasks(par, a21.rb_mut().transpose_mut(), task, |_, block| {
                check(cancel)?;
                solve_lower_triangular_in_place(l11, block, seq);
                Ok(())
            })?;
            let l21 = a21.rb();
            // A22 −= L21·L21ᵀ (its lower triangle), a block of columns per task
            column_tasks(par, a22, task, |j, cols| {
                check(cancel)?;
                let c = cols.ncols();
                let (_, lower) = cols.split_at_row_mut(j);
                let (diag, below) = lower.split_at_row_mut(c);
                let left = l21.submatrix(j, 0, c, b);
                tri_matmul(
                    diag,
                    Shape::Lower.faer(),
                    Accum::Add,
                    left,
                    Shape::Full.faer(),
                    left.transpose(),
                    Shape::Full.faer(),
                    -1.0,
                    seq,
                );
                let under = l21.submatrix(j + c, 0, rows - j - c, b);
                matmul(below, Accum::Add, under, left.transpose(), -1.0, seq);
                Ok(())
            })?;
        }
        k += b;
    }
    Ok(true)
}

/// Lower Cholesky factor of `a + jitter·I`, or None if it is not positive definite
/// (or holds a NaN). Only the lower triangle of `a` is read.
pub fn cholesky_with(a: &DMatrix<f64>, jitter: f64, par: Par) -> Option<DMatrix<f64>> {
    cholesky_with_in(a, jitter, par, &Scratch::default())
}

/// [`cholesky_with`] in memory from `scratch` (given back when it fails).
pub fn cholesky_with_in(
    a: &DMatrix<f64>,
    jitter: f64,
    par: Par,
    scratch: &Scratch,
) -> Option<DMatrix<f64>> {
    let n = a.nrows();
    let mut l = scratch.copy(a);
    for i in 0..n {
        l[(i, i)] += jitter;
    }
    let ok = matches!(
        cholesky_panels(view_mut(&mut l), par, None, BLOCKING, scratch),
        Ok(true)
    );
    lower_factor(l, ok, scratch)
}

/// B ← L⁻¹ B for lower-triangular L (the columns of B in tasks, see [`BLOCKING`]).
pub fn solve_lower(l: &DMatrix<f64>, b: &mut DMatrix<f64>, par: Par) {
    let lv = view(l);
    let never = column_tasks(par, view_mut(b), BLOCKING.update, |_, cols| {
        solve_lower_triangular_in_place(lv, cols, faer::Par::Seq);
        Ok(())
    });
    debug_assert!(never.is_ok());
}

/// B ← L⁻ᵀ B for lower-triangular L.
pub fn solve_lower_transpose(l: &DMatrix<f64>, b: &mut DMatrix<f64>, par: Par) {
    let lt = view(l).transpose();
    let never = column_tasks(par, view_mut(b), BLOCKING.update, |_, cols| {
        solve_upper_triangular_in_place(lt, cols, faer::Par::Seq);
        Ok(())
    });
    debug_assert!(never.is_ok());
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

// ---- Column stripes: the O(n·m²) work cut along n -------------------------------
//
// The low-rank core and the kernel contractions cut their n columns into a fixed
// number of stripes; each stripe runs sequential faer kernels on cache-sized blocks
// and keeps its own partial sums, which are then added in stripe order. The threads
// only decide which stripe runs where, so the result is the same bit for bit on any
// number of threads.

/// Stripes per evaluation (enough to keep two to eight cores busy).
pub const STRIPES: usize = 8;
/// Fewer columns than this per stripe cost more in overhead than they save.
const MIN_STRIPE: usize = 64;

/// Columns per stripe for n columns; depends on n alone.
pub fn stripe_len(n: usize) -> usize {
    n.div_ceil(STRIPES).max(MIN_STRIPE)
}

/// Map `f` over `items` on the rayon pool (or on this thread for `Par::Seq`),
/// returning the results in the order of `items`. Each item is a task of its own, so a
/// thread that finishes early takes any item not yet started (rayon's default handed
/// each of two threads half the items up front, and the faster half waited).
pub fn map_ordered<I: Send, T: Send>(
    par: Par,
    items: Vec<I>,
    f: impl Fn(I) -> T + Sync + Send,
) -> Vec<T> {
    use rayon::prelude::*;
    if !par.is_parallel() {
        items.into_iter().map(f).collect()
    } else {
        items.into_par_iter().with_max_len(1).map(f).collect()
    }
}

/// The items of at most [`STRIPES`] stripes, as [`map_stripes`] takes them (an array,
/// not a vector: nothing is allocated).
pub type Stripes<T> = [Option<T>; STRIPES];

/// Collect at most [`STRIPES`] items into an array.
pub fn stripe_array<I>(items: impl IntoIterator<Item = I>) -> Stripes<I> {
    let mut out: Stripes<I> = std::array::from_fn(|_| None);
    for (slot, item) in out.iter_mut().zip(items) {
        *slot = Some(item);
    }
    out
}

/// [`map_ordered`] on at most [`STRIPES`] items held in an array, without allocating:
/// the results come back in the same slots.
pub fn map_stripes<I: Send, T: Send>(
    par: Par,
    mut items: Stripes<I>,
    f: impl Fn(I) -> T + Sync + Send,
) -> Stripes<T> {
    use rayon::prelude::*;
    let mut out: Stripes<T> = std::array::from_fn(|_| None);
    let run = |(item, slot): (&mut Option<I>, &mut Option<T>)| {
        if let Some(x) = item.take() {
            *slot = Some(f(x));
        }
    };
    if par.is_parallel() {
        items
            .par_iter_mut()
            .zip(out.par_iter_mut())
            .with_max_len(1)
            .for_each(run);
    } else {
        items.iter_mut().zip(out.iter_mut()).for_each(run);
    }
    out
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

/// (L Lᵀ)⁻¹ from its Cholesky factor: L⁻¹ then L⁻ᵀL⁻¹ on triangles, ⅔n³ flops
/// (a third of solving against the identity). Used for m×m matrices and for the
/// exact GP's gradient, where the inverse itself is needed.
pub fn chol_inverse(l: &DMatrix<f64>, par: Par) -> DMatrix<f64> {
    chol_inverse_in(l, par, &Scratch::default())
}

/// [`chol_inverse`] in memory from `scratch`: one sequential call of faer's up to a
/// panel's order, the blocked inverse above it (the same bits on any number of threads).
pub fn chol_inverse_in(l: &DMatrix<f64>, par: Par, scratch: &Scratch) -> DMatrix<f64> {
    use faer::linalg::cholesky::llt::inverse::{inverse, inverse_scratch};
    let n = l.nrows();
    if n > BLOCKING.panel {
        let mut x = scratch.zero_matrix(n, n);
        let never = inverse_panels(l, &mut x, par, None, BLOCKING);
        debug_assert!(never.is_ok());
        mirror_lower(&mut x);
        return x;
    }
    let mut x = scratch.zero_matrix(n, n);
    let seq = faer::Par::Seq;
    scratch.with_stack(inverse_scratch::<f64>(n, seq), |stack| {
        inverse(view_mut(&mut x), view(l), seq, stack)
    });
    mirror_lower(&mut x);
    x
}

/// [`chol_inverse`] in panels that look at `exec`'s cancel token
/// ([`chol_inverse_blocked`]): the exact GP's K⁻¹.
pub fn chol_inverse_exec(l: &DMatrix<f64>, exec: &Exec) -> Result<DMatrix<f64>> {
    if l.nrows() <= BLOCKING.panel {
        exec.check()?;
        return Ok(chol_inverse_in(l, exec.par, &exec.scratch));
    }
    chol_inverse_blocked(l, exec, BLOCKING)
}

/// (L Lᵀ)⁻¹ from its Cholesky factor in two blocked passes, ⅔n³ flops as faer's
/// inverse: X = L⁻¹ a task of `blocking.update` columns at a time, then (L Lᵀ)⁻¹ = XᵀX
/// a panel of `panel` columns at a time, each panel in tasks of `blocking.update` rows,
/// with a look at the cancel token before each task. The same bits on any number of
/// threads.
pub fn chol_inverse_blocked(
    l: &DMatrix<f64>,
    exec: &Exec,
    blocking: Blocking,
) -> Result<DMatrix<f64>> {
    exec.check()?;
    let n = l.nrows();
    let mut x = exec.scratch.zero_matrix(n, n);
    if let Err(e) = inverse_panels(l, &mut x, exec.par, Some(&exec.cancel), blocking) {
        exec.scratch.give_matrix(x);
        return Err(e);
    }
    mirror_lower(&mut x);
    Ok(x)
}

/// The two passes of [`chol_inverse_blocked`] into `x` (zero on entry): the lower
/// triangle of (L Lᵀ)⁻¹, or Err(Cancelled) part way.
fn inverse_panels(
    l: &DMatrix<f64>,
    x: &mut DMatrix<f64>,
    par: Par,
    cancel: Option<&CancelToken>,
    blocking: Blocking,
) -> Result<()> {
    use faer::linalg::matmul::triangular::matmul as tri_matmul;
    let seq = faer::Par::Seq;
    let n = l.nrows();
    let (panel, task) = (blocking.panel.max(1), blocking.update.max(1));
    let lv = view(l);
    for i in 0..n {
        x[(i, i)] = 1.0;
    }
    // X = L⁻¹, whose columns are independent: a task's columns from row j solve
    // L[j.., j..]·X = I by blocks of rows (forward substitution: subtract what the
    // rows above give, then solve against the diagonal block).
    column_tasks(par, view_mut(x), task, |j, cols| {
        let mut cols = cols.subrows_mut(j, n - j);
        let mut r = 0;
        while r < n - j {
            check(cancel)?;
            let h = panel.min(n - j - r);
            let (done, mut rest) = cols.rb_mut().split_at_row_mut(r);
            let mut rows = rest.rb_mut().subrows_mut(0, h);
            if r > 0 {
                let lr = lv.submatrix(j + r, j, h, r);
                matmul(rows.rb_mut(), Accum::Add, lr, done.rb(), -1.0, seq);
            }
            solve_lower_triangular_in_place(lv.submatrix(j + r, j + r, h, h), rows, seq);
            r += h;
        }
        Ok(())
    })?;
    // (L Lᵀ)⁻¹ = XᵀX: the lower part of the panel's columns from row j is
    // X[j.., j..]ᵀ·X[j.., panel], written over the panel once the later panels no
    // longer need it (they read only the columns right of it).
    let mut tmp = DMatrix::<f64>::zeros(n, panel.min(n));
    let mut j = 0;
    while j < n {
        let b = panel.min(n - j);
        {
            let out = view_mut(&mut tmp).submatrix_mut(0, 0, n - j, b);
            let xr = view(x);
            let rhs = xr.submatrix(j, j, n - j, b);
            // rows j+r..j+r+c of C: Σ over k ≥ j+r of X[k, i]·X[k, panel]; the
            // square part of X is lower triangular, the rest full.
            column_tasks(par, out.transpose_mut(), task, |r, rows_t| {
                check(cancel)?;
                let mut rows = rows_t.transpose_mut();
                let c = rows.nrows();
                tri_matmul(
                    rows.rb_mut(),
                    Shape::Full.faer(),
                    Accum::Replace,
                    xr.submatrix(j + r, j + r, c, c).transpose(),
                    Shape::Upper.faer(),
                    rhs.subrows(r, c),
                    Shape::Full.faer(),
                    1.0,
                    seq,
                );
                let below = n - j - r - c;
                if below > 0 {
                    matmul(
                        rows,
                        Accum::Add,
                        xr.submatrix(j + r + c, j + r, below, c).transpose(),
                        rhs.subrows(r + c, below),
                        1.0,
                        seq,
                    );
                }
                Ok(())
            })?;
        }
        view_mut(x)
            .submatrix_mut(j, j, n - j, b)
            .copy_from(view(&tmp).submatrix(0, 0, n - j, b));
        j += b;
    }
    Ok(())
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
