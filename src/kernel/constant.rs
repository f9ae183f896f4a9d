//! The constant kernel k(x, y) = c (GPflow's `Constant`, scikit-learn's
//! `ConstantKernel`): a random offset shared by every point; in a product, a scale.
//! Its matrix is filled with c and its contraction is c Σ adj (no pair's points read).

use super::part::{Contraction, Form, Param, Params};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

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
    fn fill(
        &self,
        _a: &DMatrix<f64>,
        _b: &DMatrix<f64>,
        k: &mut DMatrix<f64>,
        _par: Par,
        _scratch: &Scratch,
    ) -> bool {
        k.fill(self.params.get(0)[0]);
        true
    }
    /// Σ_ij adj_ij c in `add_grad`'s order (column by column); no point moves k.
    fn contract(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        _par: Par,
        scratch: &Scratch,
    ) -> Option<Contraction> {
        let c = self.params.get(0)[0];
        let full = vec![adj.iter().fold(0.0, |t, w| t + w * c)];
        Some(Contraction {
            full,
            a: want_a.then(|| scratch.zero_matrix(a.nrows(), a.ncols())),
            b: want_b.then(|| scratch.zero_matrix(b.nrows(), b.ncols())),
        })
    }
}
