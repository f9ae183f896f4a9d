//! The Cholesky factor of Kuu with its jitter, dense or diagonal, and the solves the
//! passes make with it (a diagonal Kuu's solves are scalings).

use super::inputs::Kuu;
use crate::error::{Error, Result};
use crate::exec::{Exec, Par};
use crate::linalg::{self, Jitter};
use crate::scratch::Scratch;
use nalgebra::{DMatrix, DVector};

/// The m×m work of an evaluation (factorisations, inverses, sandwiches) runs on the
/// calling thread: it is O(m³) against the passes' O(n·m²), and faer's parallel
/// versions of it allocate on every call.
pub(super) const SMALL: Par = Par::Seq;

/// The Cholesky factor of Kuu (with its jitter).
#[derive(Clone, Debug)]
pub(super) enum KuuFactor {
    Dense(DMatrix<f64>),
    /// √(κ_j + jitter).
    Diagonal(Vec<f64>),
}

impl KuuFactor {
    pub(super) fn new(kuu: Kuu, jitter: Jitter, exec: &Exec) -> Result<(KuuFactor, f64)> {
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
    pub(super) fn recycle(self, scratch: &Scratch) {
        match self {
            KuuFactor::Dense(l) => scratch.give_matrix(l),
            KuuFactor::Diagonal(l) => scratch.give(l),
        }
    }

    /// A block of columns (m rows) ← L⁻¹ · block, on this thread.
    pub(super) fn solve_block(&self, b: &mut [f64], m: usize) {
        match self {
            KuuFactor::Dense(l) => linalg::block_solve_lower(l, linalg::block_mut(b, m)),
            KuuFactor::Diagonal(l) => scale_rows(b, l),
        }
    }

    /// A block of columns ← L⁻ᵀ · block, on this thread.
    pub(super) fn solve_transpose_block(&self, b: &mut [f64], m: usize) {
        match self {
            KuuFactor::Dense(l) => linalg::block_solve_lower_transpose(l, linalg::block_mut(b, m)),
            KuuFactor::Diagonal(l) => scale_rows(b, l),
        }
    }

    /// B ← L⁻ᵀ B for an m-row matrix.
    pub(super) fn solve_transpose(&self, b: &mut DMatrix<f64>, par: Par) {
        match self {
            KuuFactor::Dense(l) => linalg::solve_lower_transpose(l, b, par),
            KuuFactor::Diagonal(l) => scale_rows(b.as_mut_slice(), l),
        }
    }

    /// L⁻¹ (m×m).
    pub(super) fn inverse(&self, par: Par) -> DMatrix<f64> {
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
    pub(super) fn sandwich(&self, mut s: DMatrix<f64>, par: Par) -> DMatrix<f64> {
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
