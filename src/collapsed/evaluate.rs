//! One evaluation of the core on the whole data set as one chunk: the objective, its
//! adjoints, the summary and the posterior (the first pass, then the second).

use super::first_pass::Accumulator;
use super::inputs::{LowRank, check_chunk};
use super::posterior::Posterior;
use super::second_pass::Backward;
use super::summary::Summary;
use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

/// The objective and its adjoints.
#[derive(Clone, Debug)]
pub struct Adjoints {
    pub nlml: f64,
    /// Absolute jitter that was added to Kuu's diagonal.
    pub jitter: f64,
    pub d_kuf: DMatrix<f64>,
    /// Symmetric; pair it with ∂Kuu/∂θ entry by entry (the jitter counts as part of Kuu).
    /// For a diagonal Kuu only its diagonal matters.
    pub d_kuu: DMatrix<f64>,
    /// ∂/∂kdiag — empty for DTC.
    pub d_kdiag: Vec<f64>,
    pub d_noise: f64,
}

impl Adjoints {
    /// Give the adjoints' memory back (to the scratch of the evaluation that made them).
    pub fn recycle(self, scratch: &Scratch) {
        scratch.give_matrix(self.d_kuf);
        scratch.give_matrix(self.d_kuu);
        scratch.give(self.d_kdiag);
    }
}

/// The objective alone (no adjoints).
pub fn nlml(lr: &LowRank, y: &[f64], exec: &Exec) -> Result<f64> {
    finite(summary(lr, y, exec)?.nlml())
}

/// The summary of the data (for the NLML and the posterior together).
pub fn summary(lr: &LowRank, y: &[f64], exec: &Exec) -> Result<Summary> {
    check_chunk(lr, y)?;
    if y.is_empty() {
        return Err(Error::input("likelihood core: no data"));
    }
    let mut acc = Accumulator::new(lr.kuu, lr.jitter, lr.approx, lr.noise, exec)?;
    acc.add(lr, y, exec, false)?;
    acc.finish(exec)
}

fn finite(x: f64) -> Result<f64> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(Error::numerical("the NLML is not finite"))
    }
}

/// The objective and all adjoints, O(n·m²): the whole data set as one chunk.
pub fn nlml_and_adjoints(lr: &LowRank, y: &[f64], exec: &Exec) -> Result<Adjoints> {
    check_chunk(lr, y)?;
    if y.is_empty() {
        return Err(Error::input("likelihood core: no data"));
    }
    let mut acc = Accumulator::new(lr.kuu, lr.jitter, lr.approx, lr.noise, exec)?;
    let values = acc.add(lr, y, exec, true)?;
    let summary = acc.finish(exec)?;
    let nlml = finite(summary.nlml_in(&exec.scratch))?;
    let jitter = summary.jitter;
    let mut back = Backward::new(summary, exec);
    let (d_kuf, d_kdiag) = back.chunk(lr, y, values, exec)?;
    let (d_kuu, d_noise) = back.finish(exec);
    Ok(Adjoints {
        nlml,
        jitter,
        d_kuf,
        d_kuu,
        d_kdiag,
        d_noise,
    })
}

/// The posterior of docs/methods.md §1.4 (see [`Summary::posterior`]).
pub fn posterior(lr: &LowRank, y: &[f64], degenerate: bool, exec: &Exec) -> Result<Posterior> {
    Ok(summary(lr, y, exec)?.posterior(degenerate, exec.par))
}
