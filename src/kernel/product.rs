//! The product of kernels, k = Π_i k_i (entrywise): a periodic pattern whose shape
//! drifts (`se * periodic`), a kernel on some inputs times one on others. Its
//! parameters are its factors' in order. The variance convention — only the first
//! factor keeps a free variance — is the expression's (a product of scales is one
//! scale); this type multiplies whatever it is given.

use super::sum::{Children, add_points, hold_by_value};
use super::{Kernel, KernelBlock, KernelGrad};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

/// k = Π_i k_i.
#[derive(Clone, Debug)]
pub struct Product(pub Children);

impl Product {
    pub fn new(factors: Vec<Box<dyn Kernel>>) -> Product {
        Product(Children(factors))
    }
}

impl Kernel for Product {
    fn name(&self) -> &'static str {
        "product"
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn blocks(&self) -> Vec<KernelBlock> {
        self.0.blocks()
    }
    fn params_len(&self) -> usize {
        self.0.params_len()
    }
    fn set_log_params(&mut self, theta: &[f64]) {
        self.0.set_log_params(theta);
    }
    fn log_params(&self) -> Vec<f64> {
        self.0.log_params()
    }
    fn set_block(&mut self, name: &str, values: &[f64]) -> bool {
        self.0.set_block(name, values)
    }
    fn hold_block(&mut self, from: &dyn Kernel, name: &str) {
        hold_by_value(self, from, name);
    }

    fn matrix_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> DMatrix<f64> {
        let mut factors = self.0.0.iter();
        let first = factors.next().expect("a product has factors");
        let mut k = first.matrix_in(a, b, par, scratch);
        for f in factors {
            let kf = f.matrix_in(a, b, par, scratch);
            k.component_mul_assign(&kf);
            scratch.give_matrix(kf);
        }
        k
    }

    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64> {
        let mut d = scratch.take(x.nrows());
        d.fill(1.0);
        for f in &self.0.0 {
            let df = f.diag_in(x, scratch);
            d.iter_mut().zip(&df).for_each(|(s, v)| *s *= v);
            scratch.give(df);
        }
        d
    }

    /// Factor i's adjoint is adj ∘ Π_{j≠i} diag_j.
    fn diag_grad(&self, x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        let diags: Vec<Vec<f64>> = self.0.0.iter().map(|f| f.diag(x)).collect();
        for (i, (f, r)) in self.0.0.iter().zip(self.0.ranges()).enumerate() {
            let mut ai = adj.to_vec();
            for (_, dj) in diags.iter().enumerate().filter(|(j, _)| *j != i) {
                ai.iter_mut().zip(dj).for_each(|(a, v)| *a *= v);
            }
            f.diag_grad(x, &ai, &mut out[r]);
        }
    }

    fn prior_variance(&self) -> Option<f64> {
        self.0.0.iter().map(|f| f.prior_variance()).product()
    }

    /// log V = Σ log v_i: every factor gets all of `d`.
    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]) {
        if self.prior_variance().is_none() {
            return;
        }
        for (f, r) in self.0.0.iter().zip(self.0.ranges()) {
            f.log_prior_variance_grad(d, &mut out[r]);
        }
    }

    fn grad_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        _k: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        par: Par,
        scratch: &Scratch,
    ) -> KernelGrad {
        let ks: Vec<DMatrix<f64>> = self
            .0
            .0
            .iter()
            .map(|f| f.matrix_in(a, b, par, scratch))
            .collect();
        let mut params = scratch.zeros(self.params_len());
        let mut ga = want_a.then(|| scratch.zero_matrix(a.nrows(), a.ncols()));
        let mut gb = want_b.then(|| scratch.zero_matrix(b.nrows(), b.ncols()));
        let mut ai = scratch.matrix(adj.nrows(), adj.ncols());
        for (i, (f, r)) in self.0.0.iter().zip(self.0.ranges()).enumerate() {
            // factor i's adjoint: adj ∘ Π_{j≠i} K_j
            ai.copy_from(adj);
            for (_, kj) in ks.iter().enumerate().filter(|(j, _)| *j != i) {
                ai.component_mul_assign(kj);
            }
            let g = f.grad_in(a, b, &ks[i], &ai, want_a, want_b, par, scratch);
            params[r].copy_from_slice(&g.params);
            add_points(&mut ga, &g.a);
            add_points(&mut gb, &g.b);
            g.recycle(scratch);
        }
        scratch.give_matrix(ai);
        for k in ks {
            scratch.give_matrix(k);
        }
        KernelGrad {
            params,
            a: ga,
            b: gb,
        }
    }

    /// Each factor's contraction reads its own K(A, B), never the product's.
    fn grad_reads_matrix(&self) -> bool {
        false
    }
    fn is_stationary(&self) -> bool {
        self.0.is_stationary()
    }

    fn to_expr(&self) -> Option<super::expression::KernelExpr> {
        let terms = self
            .0
            .0
            .iter()
            .map(|k| k.to_expr())
            .collect::<Option<Vec<_>>>()?;
        Some(super::expression::KernelExpr::Product(terms))
    }

    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}
