//! The polynomial kernel k(x, y) = (Σ_d v_d x_d y_d + c)^p (GPflow's `Polynomial`: its
//! `Linear` part with one variance per input, an `offset` c and an integer `degree` p,
//! which is a constant, not a parameter). Filled and contracted by matrix products, as
//! `linear` is ([`super::linear`]): the base Σ_d v_d a_id b_jd for every pair at once,
//! then the power entrywise.

use super::expression::Value;
use super::linear::{contract_products, scaled_products};
use super::part::{Contraction, Form, Param, Params};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

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
    fn fill(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &mut DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> bool {
        scaled_products(self.params.get(0), a, b, k, par, scratch);
        let (c, p) = (self.params.get(1)[0], self.degree);
        k.apply(|s| *s = (*s + c).powi(p));
        true
    }
    fn contract(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        par: Par,
        scratch: &Scratch,
    ) -> Option<Contraction> {
        let v = self.params.get(0);
        let (c, p) = (self.params.get(1)[0], self.degree);
        // g_ij = adj_ij ∂k/∂base at (a_i, b_j), as `add_grad` weighs an entry
        let mut g = scratch.matrix(a.nrows(), b.nrows());
        scaled_products(v, a, b, &mut g, par, scratch);
        g.zip_apply(adj, |s, w| *s = w * f64::from(p) * (*s + c).powi(p - 1));
        let (mut full, ga, gb) = contract_products(v, a, b, &g, want_a, want_b, par, scratch);
        full.push(g.iter().fold(0.0, |t, g| t + g * c));
        scratch.give_matrix(g);
        Some(Contraction { full, a: ga, b: gb })
    }
    fn shape_args(&self) -> Vec<(String, Value)> {
        vec![("degree".into(), Value::Number(f64::from(self.degree)))]
    }
}
