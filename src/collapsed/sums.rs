//! A pass's sums over rows as one flat buffer, so that processes which each hold some of
//! the rows add them (an all-reduce) and finish the pass as if one had folded in all.

use super::first_pass::Accumulator;
use super::second_pass::Backward;
use crate::error::{Error, Result};
use nalgebra::DMatrix;

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

impl Accumulator {
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
}

impl Backward {
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
}
