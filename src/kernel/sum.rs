//! The sum of kernels, k = Σ_i k_i: independent processes added. Its parameters are its
//! terms' in order. [`Children`] is the bookkeeping every composed kernel shares (a sum,
//! a product, change points): the terms' parameters laid end to end.

use super::{Kernel, KernelBlock, KernelGrad};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

/// Kernels whose parameters are laid end to end.
#[derive(Clone, Debug)]
pub struct Children(pub Vec<Box<dyn Kernel>>);

impl Children {
    /// Each child's range in the parameters.
    pub fn ranges(&self) -> Vec<std::ops::Range<usize>> {
        let mut at = 0;
        self.0
            .iter()
            .map(|k| {
                let r = at..at + k.params_len();
                at = r.end;
                r
            })
            .collect()
    }
    pub fn params_len(&self) -> usize {
        self.0.iter().map(|k| k.params_len()).sum()
    }
    pub fn blocks(&self) -> Vec<KernelBlock> {
        self.0.iter().flat_map(|k| k.blocks()).collect()
    }
    pub fn set_log_params(&mut self, theta: &[f64]) {
        for (k, r) in self.ranges().into_iter().enumerate() {
            self.0[k].set_log_params(&theta[r]);
        }
    }
    pub fn log_params(&self) -> Vec<f64> {
        self.0.iter().flat_map(|k| k.log_params()).collect()
    }
    pub fn set_block(&mut self, name: &str, values: &[f64]) -> bool {
        self.0.iter_mut().any(|k| k.set_block(name, values))
    }
    pub fn dim(&self) -> usize {
        self.0.first().map_or(0, |k| k.dim())
    }
    pub fn is_stationary(&self) -> bool {
        self.0.iter().all(|k| k.is_stationary())
    }
}

/// Copy block `name` from `from` by value (composed kernels: their blocks have paths).
pub(super) fn hold_by_value(to: &mut dyn Kernel, from: &dyn Kernel, name: &str) {
    if let Some(b) = from.blocks().into_iter().find(|b| b.name == name) {
        to.set_block(name, &b.values);
    }
}

/// k = Σ_i k_i.
#[derive(Clone, Debug)]
pub struct Sum(pub Children);

impl Sum {
    pub fn new(terms: Vec<Box<dyn Kernel>>) -> Sum {
        Sum(Children(terms))
    }
}

impl Kernel for Sum {
    fn name(&self) -> &'static str {
        "sum"
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
        let mut terms = self.0.0.iter();
        let first = terms.next().expect("a sum has terms");
        let mut k = first.matrix_in(a, b, par, scratch);
        for t in terms {
            let kt = t.matrix_in(a, b, par, scratch);
            k += &kt;
            scratch.give_matrix(kt);
        }
        k
    }

    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64> {
        let mut d = scratch.zeros(x.nrows());
        for t in &self.0.0 {
            let dt = t.diag_in(x, scratch);
            d.iter_mut().zip(&dt).for_each(|(s, v)| *s += v);
            scratch.give(dt);
        }
        d
    }

    fn diag_grad(&self, x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        for (t, r) in self.0.0.iter().zip(self.0.ranges()) {
            t.diag_grad(x, adj, &mut out[r]);
        }
    }

    fn prior_variance(&self) -> Option<f64> {
        self.0.0.iter().map(|t| t.prior_variance()).sum()
    }

    /// log V = log Σ v_i: term i's share of `d` is v_i/V.
    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]) {
        let Some(total) = self.prior_variance().filter(|v| *v > 0.0) else {
            return;
        };
        for (t, r) in self.0.0.iter().zip(self.0.ranges()) {
            let v = t.prior_variance().unwrap_or(0.0);
            t.log_prior_variance_grad(d * v / total, &mut out[r]);
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
        let mut params = scratch.zeros(self.params_len());
        let mut ga = want_a.then(|| scratch.zero_matrix(a.nrows(), a.ncols()));
        let mut gb = want_b.then(|| scratch.zero_matrix(b.nrows(), b.ncols()));
        for (t, r) in self.0.0.iter().zip(self.0.ranges()) {
            // a term's contraction reads its own K(A, B), if it reads one at all
            let kt = if t.grad_reads_matrix() {
                t.matrix_in(a, b, par, scratch)
            } else {
                scratch.matrix(0, 0)
            };
            let g = t.grad_in(a, b, &kt, adj, want_a, want_b, par, scratch);
            scratch.give_matrix(kt);
            params[r].copy_from_slice(&g.params);
            add_points(&mut ga, &g.a);
            add_points(&mut gb, &g.b);
            g.recycle(scratch);
        }
        KernelGrad {
            params,
            a: ga,
            b: gb,
        }
    }

    /// Each term's contraction reads its own K(A, B), never the sum's.
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
        Some(super::expression::KernelExpr::Sum(terms))
    }

    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}

/// `to += from` where both are there.
pub(super) fn add_points(to: &mut Option<DMatrix<f64>>, from: &Option<DMatrix<f64>>) {
    if let (Some(t), Some(f)) = (to, from) {
        *t += f;
    }
}
