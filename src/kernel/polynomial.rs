//! The polynomial kernel k(x, y) = (Σ_d v_d x_d y_d + c)^p (GPflow's `Polynomial`: its
//! `Linear` part with one variance per input, an `offset` c and an integer `degree` p,
//! which is a constant, not a parameter).

use super::expression::Value;
use super::part::{Form, Param, Params};

/// k = (Σ_d v_d x_d y_d + c)^p, blocks `var` (one per input) and `offset`.
#[derive(Clone, Debug, PartialEq)]
pub struct Polynomial {
    pub params: Params,
    pub degree: i32,
}

impl Polynomial {
    pub fn new(variances: Vec<f64>, offset: f64, degree: i32) -> Polynomial {
        Polynomial {
            params: Params::new(
                "polynomial",
                vec![
                    Param::positive("var", variances),
                    Param::positive("offset", vec![offset]),
                ],
            ),
            degree,
        }
    }

    /// Σ_d v_d x_d y_d + c
    fn base(&self, x: &[f64], y: &[f64]) -> f64 {
        let v = self.params.get(0);
        (0..v.len()).map(|d| v[d] * x[d] * y[d]).sum::<f64>() + self.params.get(1)[0]
    }
}

impl Form for Polynomial {
    fn name(&self) -> &'static str {
        "polynomial"
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
        self.base(x, y).powi(self.degree)
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
        // w ∂k/∂base
        let g = w * f64::from(self.degree) * self.base(x, y).powi(self.degree - 1);
        let v = self.params.get(0);
        for (d, v) in v.iter().enumerate() {
            gp[d] += g * v * x[d] * y[d];
            gx[d] += g * v * y[d];
            gy[d] += g * v * x[d];
        }
        gp[v.len()] += g * self.params.get(1)[0];
    }
    fn is_stationary(&self) -> bool {
        false
    }
    fn shape_args(&self) -> Vec<(String, Value)> {
        vec![("degree".into(), Value::Number(f64::from(self.degree)))]
    }
}
