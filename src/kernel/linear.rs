//! The linear kernel k(x, y) = Σ_d v_d x_d y_d (GPflow's `Linear` with one variance per
//! input; scikit-learn's `DotProduct` with σ0 = 0): Bayesian linear regression through
//! the origin, a prior N(0, v_d) on each input's slope.

use super::part::{Form, Param, Params};

/// k = Σ_d v_d x_d y_d, block `var` (one per input).
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    pub params: Params,
}

impl Linear {
    pub fn new(variances: Vec<f64>) -> Linear {
        Linear {
            params: Params::new("linear", vec![Param::positive("var", variances)]),
        }
    }
}

impl Form for Linear {
    fn name(&self) -> &'static str {
        "linear"
    }
    fn dim(&self) -> usize {
        self.params.get(0).len()
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn params_mut(&mut self) -> &mut Params {
        &mut self.params
    }
    fn value(&self, x: &[f64], y: &[f64]) -> f64 {
        let v = self.params.get(0);
        (0..v.len()).map(|d| v[d] * x[d] * y[d]).sum()
    }
    fn add_grad(
        &self,
        x: &[f64],
        y: &[f64],
        w: f64,
        gp: &mut [f64],
        gx: &mut [f64],
        gy: &mut [f64],
    ) {
        for (d, v) in self.params.get(0).iter().enumerate() {
            gp[d] += w * v * x[d] * y[d];
            gx[d] += w * v * y[d];
            gy[d] += w * v * x[d];
        }
    }
    fn is_stationary(&self) -> bool {
        false
    }
}
