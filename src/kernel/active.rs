//! A kernel on some of the inputs (`dims=[0, 2]`; GPflow's `active_dims`): the inner
//! kernel sees only the named columns of the points, and its gradient into the points
//! is zero on the others.

use super::expression::{Arg, KernelExpr, Value};
use super::sum::hold_by_value;
use super::{Kernel, KernelBlock, KernelGrad};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

/// `inner` on columns `dims` of points with `input_dim` columns.
#[derive(Clone, Debug)]
pub struct Active {
    pub dims: Vec<usize>,
    pub input_dim: usize,
    pub inner: Box<dyn Kernel>,
}

impl Active {
    /// `inner` reads `dims.len()` inputs, each below `input_dim`.
    pub fn new(dims: Vec<usize>, input_dim: usize, inner: Box<dyn Kernel>) -> Active {
        debug_assert!(dims.iter().all(|d| *d < input_dim));
        debug_assert_eq!(inner.dim(), dims.len());
        Active {
            dims,
            input_dim,
            inner,
        }
    }

    fn select(&self, x: &DMatrix<f64>, scratch: &Scratch) -> DMatrix<f64> {
        let mut s = scratch.matrix(x.nrows(), self.dims.len());
        for (c, d) in self.dims.iter().enumerate() {
            s.column_mut(c).copy_from(&x.column(*d));
        }
        s
    }

    /// A gradient in the selected columns, spread onto every column.
    fn spread(&self, g: DMatrix<f64>, scratch: &Scratch) -> DMatrix<f64> {
        let mut full = scratch.zero_matrix(g.nrows(), self.input_dim);
        for (c, d) in self.dims.iter().enumerate() {
            let mut col = full.column_mut(*d);
            col += g.column(c);
        }
        scratch.give_matrix(g);
        full
    }
}

impl Kernel for Active {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.input_dim
    }
    fn blocks(&self) -> Vec<KernelBlock> {
        self.inner.blocks()
    }
    fn params_len(&self) -> usize {
        self.inner.params_len()
    }
    fn set_log_params(&mut self, theta: &[f64]) {
        self.inner.set_log_params(theta);
    }
    fn log_params(&self) -> Vec<f64> {
        self.inner.log_params()
    }
    fn set_block(&mut self, name: &str, values: &[f64]) -> bool {
        self.inner.set_block(name, values)
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
        let (sa, sb) = (self.select(a, scratch), self.select(b, scratch));
        let k = self.inner.matrix_in(&sa, &sb, par, scratch);
        scratch.give_matrix(sa);
        scratch.give_matrix(sb);
        k
    }
    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64> {
        let sx = self.select(x, scratch);
        let d = self.inner.diag_in(&sx, scratch);
        scratch.give_matrix(sx);
        d
    }
    fn diag_grad(&self, x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        let sx = self.select(x, &Scratch::default());
        self.inner.diag_grad(&sx, adj, out);
    }
    fn prior_variance(&self) -> Option<f64> {
        self.inner.prior_variance()
    }
    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]) {
        self.inner.log_prior_variance_grad(d, out);
    }
    fn grad_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        want_a: bool,
        want_b: bool,
        par: Par,
        scratch: &Scratch,
    ) -> KernelGrad {
        let (sa, sb) = (self.select(a, scratch), self.select(b, scratch));
        let g = self
            .inner
            .grad_in(&sa, &sb, k, adj, want_a, want_b, par, scratch);
        scratch.give_matrix(sa);
        scratch.give_matrix(sb);
        KernelGrad {
            params: g.params,
            a: g.a.map(|m| self.spread(m, scratch)),
            b: g.b.map(|m| self.spread(m, scratch)),
        }
    }
    fn grad_reads_matrix(&self) -> bool {
        self.inner.grad_reads_matrix()
    }
    fn is_stationary(&self) -> bool {
        self.inner.is_stationary()
    }
    /// The inner part with `dims=[…]` (by index) among its arguments.
    fn to_expr(&self) -> Option<KernelExpr> {
        let KernelExpr::Part(mut part) = self.inner.to_expr()? else {
            return None;
        };
        let dims = Value::List(self.dims.iter().map(|d| Value::Number(*d as f64)).collect());
        part.args.insert(
            0,
            Arg {
                key: "dims".into(),
                value: dims,
                span: part.span,
            },
        );
        Some(KernelExpr::Part(part))
    }
    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}
