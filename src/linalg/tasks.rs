//! The Cholesky factorisation, triangular solves and inverse of `linalg`, cut into tasks
//! by the matrix's size alone ([`Blocking`]): each task runs faer's sequential kernels,
//! and the threads only decide which task runs where, so the result is the same bit for
//! bit on one thread or sixty-four. faer's own parallel kernels cut their work by the
//! number of threads, and the exact GP's NLML and gradient differed in their last bits
//! between 1, 2 and 3 threads — enough for a fit started from it (the default second
//! start) to end elsewhere (docs/results/speed.md, "The same result on any number of
//! threads"). The blocked forms of the large matrices (the exact GP's) look at the
//! cancel token between tasks.

use super::{Shape, mirror_lower, view, view_mut};
use crate::error::{Error, Result};
use crate::exec::{CancelToken, Exec, Par};
use crate::scratch::Scratch;
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut};
use nalgebra::DMatrix;

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
