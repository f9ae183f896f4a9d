//! White noise k(x, y) = v · [x = y] (GPflow's `White`, scikit-learn's `WhiteKernel`):
//! variance at a point, no covariance between distinct points. Points are the same
//! when every coordinate is bitwise equal, so two rows of the data at the same input
//! share it (scikit-learn and GPflow instead add v to K(X, X)'s diagonal only, treating
//! repeated inputs as independent; for a Gaussian likelihood, noise_variance is that).

use super::part::{Form, Param, Params};

/// k = v [x = y], block `var`.
#[derive(Clone, Debug, PartialEq)]
pub struct White {
    pub params: Params,
    dim: usize,
}

impl White {
    pub fn new(dim: usize, variance: f64) -> White {
        White {
            params: Params::new("white", vec![Param::positive("var", vec![variance])]),
            dim,
        }
    }
}

impl Form for White {
    fn name(&self) -> &'static str {
        "white"
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn params_mut(&mut self) -> &mut Params {
        &mut self.params
    }
    fn value(&self, x: &[f64], y: &[f64]) -> f64 {
        if x == y { self.params.get(0)[0] } else { 0.0 }
    }
    /// Nothing into the points: k is flat wherever x ≠ y.
    fn add_grad(&self, x: &[f64], y: &[f64], w: f64, gp: &mut [f64], _: &mut [f64], _: &mut [f64]) {
        gp[0] += w * self.value(x, y);
    }
    fn is_stationary(&self) -> bool {
        true
    }
}
