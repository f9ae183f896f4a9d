//! When svgp's training is done, and the steps that get it there (docs/methods.md §8.2).
//!
//! Minibatch steps of a fixed size never settle: q(u) is an average over the last
//! ~1/γ batches and Adam's parameters wander by about its rate, so the bound stalls at
//! a level set by the noise, not by the optimum. The [`Schedule`] runs in stages: when
//! the bound stops improving (the [`Plateau`] rule), the batch grows, the
//! natural-gradient step grows toward 1 (exact, and VFE's optimal q(u), once the batch is
//! the whole data) and Adam's rate halves, so each stage's noise is below the last's.
//! When the last stage stops improving, the fit has converged.

/// The rule itself (a window of checks against the window before, beyond their noise
/// and a tolerance per row) is L-BFGS's plateau test too.
pub use crate::optim::{WINDOW, plateaued_within};
/// An improvement of less than this many nats per training row and check counts as
/// none, noise or not (a deterministic last stage creeps, it does not stop).
const TOL_PER_ROW: f64 = 1e-5;
/// The tolerance of a non-Gaussian likelihood's exact stage (L-BFGS on every parameter,
/// q(v) included): its checks have no noise, and L-BFGS's improvements over q(v)'s many
/// directions fall below [`TOL_PER_ROW`] while tenths of a nat remain, so its rule asks
/// ten times less — L-BFGS's plateau tolerance, as for EP's evidence.
pub const JOINT_TOL_PER_ROW: f64 = crate::optim::PLATEAU_TOL_PER_ROW;
/// Stages after the first: each grows the batch ×4, doubles γ and halves Adam's rate.
pub const STAGES: usize = 3;
const BATCH_GROWTH: usize = 4;
/// A stage of at most this many steps per epoch is the exact one instead: a step of
/// L-BFGS costs a pass over the data, and once a batch is a sixteenth of it, a pass of
/// minibatch steps is too few steps to gain what an L-BFGS step on the whole data does
/// (kin40k, m = 200: 1 nat an epoch at B = 1024, against 5–10 an L-BFGS step).
const EXACT_STEPS: usize = 16;

/// Whether the negative bound (lower is better) of the checks `values`, all of one
/// stage, has stopped improving beyond its noise ([`plateaued_within`] at
/// [`TOL_PER_ROW`]; `rows` scales the tolerance).
pub fn plateaued(values: &[f64], rows: usize) -> bool {
    plateaued_within(values, rows, TOL_PER_ROW)
}

/// The step sizes of the current stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Rows per minibatch.
    pub batch: usize,
    /// The natural-gradient step γ.
    pub gamma: f64,
    /// Adam's rate.
    pub lr: f64,
    /// 0 for the start; [`STAGES`] for the last.
    pub stage: usize,
    n: usize,
}

impl Schedule {
    /// The first stage: the given batch (at most n), γ and rate.
    pub fn new(batch: usize, gamma: f64, lr: f64, n: usize) -> Schedule {
        let batch = batch.min(n).max(1);
        Schedule {
            batch,
            gamma,
            lr,
            stage: 0,
            n,
        }
    }

    /// Whether this stage's batch is the whole data, reached by the schedule: its
    /// bound is deterministic and q(u)'s optimum closed-form, so training finishes with
    /// L-BFGS at that optimum (the exact stage) rather than with more steps.
    pub fn exact(&self) -> bool {
        self.stage > 0 && self.batch == self.n
    }

    /// The next stage, or None after the last: the batch ×4, γ doubled (at most 1),
    /// the rate halved; the whole data with γ = 1 (the exact stage) once the batch would
    /// be at least n / 16.
    pub fn next(&self) -> Option<Schedule> {
        if self.stage >= STAGES || self.exact() {
            return None;
        }
        let batch = self.batch * BATCH_GROWTH;
        let batch = if batch.saturating_mul(EXACT_STEPS) >= self.n {
            self.n
        } else {
            batch
        };
        let gamma = (2.0 * self.gamma).min(1.0);
        Some(Schedule {
            batch,
            gamma: if batch == self.n { 1.0 } else { gamma },
            lr: self.lr / 2.0,
            stage: self.stage + 1,
            n: self.n,
        })
    }
}
