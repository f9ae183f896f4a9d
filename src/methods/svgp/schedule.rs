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

#[cfg(test)]
mod tests {
    use super::*;

    /// A bound that fell and then sits at a level with noise is flat; with the same
    /// noise on a steady fall it is not.
    #[test]
    fn stops_on_a_flat_noisy_bound_not_on_a_falling_one() {
        let noise = [
            3.1, -2.4, 0.7, -4.0, 2.2, 1.5, -0.3, -3.3, 4.1, -1.0, 0.4, 2.8,
        ];
        let flat: Vec<f64> = noise.iter().map(|e| 1000.0 + e).collect();
        assert!(plateaued(&flat, 10_000), "{flat:?}");
        // falling 5 nats a check under noise of ±4: still improving
        let falling: Vec<f64> = noise
            .iter()
            .enumerate()
            .map(|(i, e)| 1000.0 - 5.0 * i as f64 + e)
            .collect();
        assert!(!plateaued(&falling, 10_000), "{falling:?}");
        // a noiseless fall of 2 nats a check: above the tolerance (0.1 a check)
        let smooth: Vec<f64> = (0..12).map(|i| 1000.0 - 2.0 * i as f64).collect();
        assert!(!plateaued(&smooth, 10_000));
        // a noiseless creep below the tolerance: done
        let creep: Vec<f64> = (0..12).map(|i| 1000.0 - 0.01 * i as f64).collect();
        assert!(plateaued(&creep, 10_000));
    }

    /// The exact stage's tighter tolerance: a noiseless creep of 0.001 nats a check on
    /// 300 rows is flat to the rule (below 10⁻⁵ · 300 · 5 a window) but not to the
    /// non-Gaussian exact stage's (10⁻⁶), which a creep five times slower is.
    #[test]
    fn the_joint_stage_asks_ten_times_less() {
        let creep: Vec<f64> = (0..12).map(|i| 100.0 - 0.001 * i as f64).collect();
        assert!(plateaued(&creep, 300));
        assert!(!plateaued_within(&creep, 300, JOINT_TOL_PER_ROW));
        let slower: Vec<f64> = (0..12).map(|i| 100.0 - 0.0002 * i as f64).collect();
        assert!(plateaued_within(&slower, 300, JOINT_TOL_PER_ROW));
    }

    /// Too few checks to compare two windows: never flat.
    #[test]
    fn needs_two_windows() {
        assert!(!plateaued(&[5.0; 2 * WINDOW - 1], 100));
        assert!(plateaued(&[5.0; 2 * WINDOW], 100));
    }

    /// The stages grow the batch to the whole data (γ = 1 there), halve the rate, and
    /// end after the last.
    #[test]
    fn stages_grow_the_batch_to_the_data() {
        let s0 = Schedule::new(256, 0.1, 0.01, 200_000);
        let s1 = s0.next().expect("stage 1");
        assert_eq!((s1.batch, s1.gamma, s1.lr), (1024, 0.2, 0.005));
        let s2 = s1.next().expect("stage 2");
        assert_eq!((s2.batch, s2.gamma), (4096, 0.4));
        assert!(!s2.exact());
        // 16384 · 16 ≥ 200 000: the whole data
        let s3 = s2.next().expect("stage 3");
        assert_eq!((s3.batch, s3.gamma, s3.stage), (200_000, 1.0, STAGES));
        assert!(s3.exact());
        assert_eq!(s3.next(), None);
        // larger data stay on minibatches to the last stage
        let big = Schedule::new(256, 0.1, 0.01, 1_000_000);
        let last = big.next().and_then(|s| s.next()).and_then(|s| s.next());
        assert_eq!(last.map(|s| (s.batch, s.exact())), Some((16_384, false)));
        // 10 000 rows: at B = 1024 an epoch is 10 steps, the exact stage comes next
        let s1 = Schedule::new(256, 0.1, 0.01, 10_000)
            .next()
            .expect("stage 1");
        assert_eq!((s1.batch, s1.gamma, s1.exact()), (10_000, 1.0, true));
        assert_eq!(s1.next(), None);
        // a batch larger than the data is the data (the first stage is not exact)
        let small = Schedule::new(500, 0.1, 0.01, 300);
        assert_eq!((small.batch, small.exact()), (300, false));
    }
}
