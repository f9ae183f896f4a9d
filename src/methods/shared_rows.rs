//! One evaluation of a low-rank method over training rows spread across processes
//! (`sgpw fit --distributed`): each process folds its own rows into the core's sums,
//! the sums are added across processes ([`RowShare::all_sum`]) once after the first
//! pass and once after the second, and every process finishes from the totals.
//!
//! A failure on one process (a λ that is not positive at one of its rows, a
//! cancelled run) must not leave the others waiting in a collective: every sum
//! carries a failure slot, a process that fails joins the next sum with it set, and a
//! sum that reports a failure ends the evaluation on every process with an error.

use crate::collapsed::{Accumulator, Approx, Backward, Sums};
use crate::error::{Error, Result};
use crate::exec::RowShare;
use std::cell::Cell;

/// The state of one shared evaluation: how many of its sums this process has joined
/// and whether one of them reported a failure.
pub struct SharedEval<'a> {
    share: &'a dyn RowShare,
    /// Features and packed parameters: the shapes of the sums when this process has
    /// none of its own to send (it failed first).
    m: usize,
    params: usize,
    approx: Approx,
    joined: Cell<usize>,
    ended: Cell<bool>,
}

impl<'a> SharedEval<'a> {
    pub fn new(share: &'a dyn RowShare, m: usize, params: usize, approx: Approx) -> Self {
        SharedEval {
            share,
            m,
            params,
            approx,
            joined: Cell::new(0),
            ended: Cell::new(false),
        }
    }

    /// Whether this process counts the terms that are not sums over rows.
    pub fn is_root(&self) -> bool {
        self.share.is_root()
    }

    /// Add `sums` (with this process's failure slot appended) across processes.
    fn add(&self, mut buf: Vec<f64>, failed: bool) -> Result<Sums> {
        buf.push(if failed { 1.0 } else { 0.0 });
        self.joined.set(self.joined.get() + 1);
        let reduced = self.share.all_sum(&mut buf);
        if let Err(e) = reduced {
            self.ended.set(true);
            return Err(e);
        }
        let failures = buf.pop().unwrap_or(0.0);
        if failures > 0.0 {
            self.ended.set(true);
            return Err(Error::numerical(format!(
                "the evaluation failed on {failures} of the processes (the first process's \
                 own error, if it had one, is reported above)"
            )));
        }
        Ok(Sums(buf))
    }

    /// The first pass's totals in `acc`.
    pub fn first(&self, acc: &mut Accumulator) -> Result<()> {
        let sums = self.add(acc.sums().0, false)?;
        acc.set_sums(&sums)
    }

    /// The second pass's totals in `back` and `grad` (zeros where this process's
    /// pull-back added nothing).
    pub fn second(&self, back: &mut Backward, grad: &mut Vec<f64>) -> Result<()> {
        grad.resize(self.params, 0.0);
        let sums = self.add(back.sums(grad).0, false)?;
        back.set_sums(&sums, grad)
    }

    /// After `error` on this process: join the sum the others are waiting in, with the
    /// failure slot set (unless a sum already reported a failure to everyone, or every
    /// sum has been added), then hand the error back.
    pub fn failed(&self, error: Error, sums_in_evaluation: usize) -> Error {
        if !self.ended.get() && self.joined.get() < sums_in_evaluation {
            let len = match self.joined.get() {
                0 => Accumulator::sums_len(self.m),
                _ => {
                    let k = if self.approx.per_point_lambda() {
                        self.m
                    } else {
                        0
                    };
                    k * (k + 1) / 2 + 2 + self.params
                }
            };
            // the sum's own error, if any, matters less than the one that got here
            let _ = self.add(vec![0.0; len], true);
        }
        error
    }
}
