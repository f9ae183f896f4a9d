//! An ARD kernel as a part of a composed kernel: its blocks renamed `label.var`,
//! `label.ls`, `label.alpha` (so that two `se` terms have distinct paths: `se1.ls`,
//! `se2.ls`) and some of them fixed — constants, not parameters — while the SIMD fills
//! and contractions stay [`Ard`]'s.

use super::expression::{KernelExpr, Value};
use super::{
    Ard, Kernel, KernelBlock, KernelGrad, KernelKind, LENGTHSCALES, RQ_ALPHA, SIGNAL_VARIANCE,
};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

/// An expression's key for one of [`Ard`]'s blocks.
pub fn ard_key(block: &str) -> &'static str {
    match block {
        SIGNAL_VARIANCE => "var",
        LENGTHSCALES => "ls",
        RQ_ALPHA => "alpha",
        _ => "?",
    }
}

/// [`Ard`] with a label and fixed blocks (by key).
#[derive(Clone, Debug)]
pub struct Labelled {
    pub label: String,
    pub fixed: Vec<&'static str>,
    pub inner: Ard,
}

impl Labelled {
    /// Whether each value of the inner kernel's parameters is free.
    fn free_mask(&self) -> Vec<bool> {
        self.inner
            .blocks()
            .iter()
            .flat_map(|b| {
                let free = !self.fixed.contains(&ard_key(&b.name));
                std::iter::repeat_n(free, b.values.len())
            })
            .collect()
    }

    /// The free entries of a full gradient added into `out`.
    fn add_free(&self, full: &[f64], out: &mut [f64]) {
        add_free(full, self.free_mask(), out);
    }

    /// Its part in an expression, with values.
    pub fn expr(&self) -> KernelExpr {
        let mut args: Vec<(String, Value)> = self
            .inner
            .blocks()
            .into_iter()
            .map(|b| (ard_key(&b.name).to_string(), numbers(&b.values)))
            .collect();
        if !self.fixed.is_empty() {
            args.push(("fix".into(), names(&self.fixed)));
        }
        KernelExpr::part(self.inner.kind.name(), args)
    }
}

/// One number, or a list of them.
pub(super) fn numbers(v: &[f64]) -> Value {
    match v {
        [x] => Value::Number(*x),
        _ => Value::List(v.iter().map(|x| Value::Number(*x)).collect()),
    }
}

/// One name, or a list of them.
pub(super) fn names(v: &[&str]) -> Value {
    match v {
        [x] => Value::Name(x.to_string()),
        _ => Value::List(v.iter().map(|x| Value::Name(x.to_string())).collect()),
    }
}

impl Kernel for Labelled {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn blocks(&self) -> Vec<KernelBlock> {
        self.inner
            .blocks()
            .into_iter()
            .filter(|b| !self.fixed.contains(&ard_key(&b.name)))
            .map(|b| KernelBlock::new(format!("{}.{}", self.label, ard_key(&b.name)), b.values))
            .collect()
    }
    fn params_len(&self) -> usize {
        self.free_mask().iter().filter(|f| **f).count()
    }
    fn log_params(&self) -> Vec<f64> {
        let full = self.inner.log_params();
        full.into_iter()
            .zip(self.free_mask())
            .filter_map(|(t, f)| f.then_some(t))
            .collect()
    }
    fn set_log_params(&mut self, theta: &[f64]) {
        let held = self.inner.clone();
        let mut full = self.inner.log_params();
        let mut t = theta.iter();
        for (v, free) in full.iter_mut().zip(self.free_mask()) {
            if free {
                *v = *t.next().expect("a value per free parameter");
            }
        }
        self.inner.set_log_params(&full);
        // fixed blocks exactly, not exp(log v)
        for key in self.fixed.clone() {
            let name = [SIGNAL_VARIANCE, LENGTHSCALES, RQ_ALPHA]
                .into_iter()
                .find(|n| ard_key(n) == key)
                .expect("an ARD block");
            self.inner.hold_block(&held, name);
        }
    }
    fn set_block(&mut self, name: &str, values: &[f64]) -> bool {
        let Some(key) = name
            .strip_prefix(self.label.as_str())
            .and_then(|r| r.strip_prefix('.'))
        else {
            return false;
        };
        match key {
            "var" if values.len() == 1 => self.inner.signal_variance = values[0],
            "ls" if values.len() == self.inner.lengthscales.len() => {
                self.inner.lengthscales.copy_from_slice(values)
            }
            "alpha" if values.len() == 1 && self.inner.kind == KernelKind::Rq => {
                self.inner.rq_alpha = values[0]
            }
            _ => return false,
        }
        true
    }
    fn hold_block(&mut self, from: &dyn Kernel, name: &str) {
        super::sum::hold_by_value(self, from, name);
    }
    fn matrix_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> DMatrix<f64> {
        self.inner.matrix_in(a, b, par, scratch)
    }
    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64> {
        self.inner.diag_in(x, scratch)
    }
    fn diag_grad(&self, x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        let mut full = vec![0.0; self.inner.params_len()];
        self.inner.diag_grad(x, adj, &mut full);
        self.add_free(&full, out);
    }
    fn prior_variance(&self) -> Option<f64> {
        self.inner.prior_variance()
    }
    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]) {
        let mut full = vec![0.0; self.inner.params_len()];
        self.inner.log_prior_variance_grad(d, &mut full);
        self.add_free(&full, out);
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
        let g = self
            .inner
            .grad_in(a, b, k, adj, want_a, want_b, par, scratch);
        let mut params = scratch.zeros(self.params_len());
        self.add_free(&g.params, &mut params);
        scratch.give(g.params);
        KernelGrad {
            params,
            a: g.a,
            b: g.b,
        }
    }
    fn grad_reads_matrix(&self) -> bool {
        self.inner.grad_reads_matrix()
    }
    fn is_stationary(&self) -> bool {
        true
    }
    fn to_expr(&self) -> Option<KernelExpr> {
        Some(self.expr())
    }
    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}

/// Add the entries of `full` (a gradient over every value of a kernel's blocks) that
/// `free` marks into `out`, in order: the gradient in the kernel's parameters, its
/// fixed values left out (a part's fixed parameters, a labelled ARD kernel's fixed keys).
pub(super) fn add_free(full: &[f64], free: impl IntoIterator<Item = bool>, out: &mut [f64]) {
    let kept = full.iter().zip(free).filter_map(|(g, f)| f.then_some(g));
    for (o, g) in out.iter_mut().zip(kept) {
        *o += g;
    }
}
