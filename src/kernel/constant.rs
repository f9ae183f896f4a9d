//! The constant kernel k(x, y) = c (GPflow's `Constant`, scikit-learn's
//! `ConstantKernel`): a random offset shared by every point; in a product, a scale.

use super::part::{Form, Param, Params};

/// k = c, block `var`.
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    pub params: Params,
    dim: usize,
}

impl Constant {
    pub fn new(dim: usize, variance: f64) -> Constant {
        Constant {
            params: Params::new("constant", vec![Param::positive("var", vec![variance])]),
            dim,
        }
    }
}

impl Form for Constant {
    fn name(&self) -> &'static str {
        "constant"
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
    fn value(&self, _x: &[f64], _y: &[f64]) -> f64 {
        self.params.get(0)[0]
    }
    fn add_grad(
        &self,
        _x: &[f64],
        _y: &[f64],
        w: f64,
        gp: &mut [f64],
        _: &mut [f64],
        _: &mut [f64],
    ) {
        gp[0] += w * self.params.get(0)[0];
    }
    fn is_stationary(&self) -> bool {
        true
    }
}
