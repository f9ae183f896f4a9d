//! A part of a composed kernel written entry by entry (docs/methods.md, "Kernels"):
//! a [`Form`] gives k(x, y) and the derivatives of one entry, and [`Part`] turns it
//! into a [`Kernel`] — the fills, the contractions, the diagonal and the parameter
//! blocks — so that a new part is its formula and its derivatives, nothing else.
//!
//! A part's parameters are [`Params`]: named blocks, each positive (optimised as its
//! logarithm) or unconstrained (optimised as itself), each free or fixed. A fixed block
//! is a constant of the kernel: it is not among the kernel's blocks, so no optimiser
//! sees it (`fix=period` in an expression; the variances a product fixes at 1).

use super::expression::{KernelExpr, Value};
use super::labelled::{names, numbers};
use super::{Kernel, KernelBlock, KernelGrad};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use rayon::prelude::*;

/// Matrices with fewer entries than this are filled on one thread.
const PAR_MIN_ENTRIES: usize = 1 << 14;

/// One named parameter block of a part.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its key in an expression and the last component of its block name (`var`, `ls`).
    pub name: &'static str,
    pub values: Vec<f64>,
    /// Held at its value, not a parameter of the kernel.
    pub fixed: bool,
    /// Positive, optimised as its logarithm (else as itself).
    pub positive: bool,
}

impl Param {
    /// A free positive block.
    pub fn positive(name: &'static str, values: Vec<f64>) -> Param {
        Param {
            name,
            values,
            fixed: false,
            positive: true,
        }
    }

    /// A free unconstrained block.
    pub fn real(name: &'static str, values: Vec<f64>) -> Param {
        Param {
            name,
            values,
            fixed: false,
            positive: false,
        }
    }
}

/// A part's parameter blocks and its label (its name in block paths: `se`, `se2`).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub label: String,
    pub list: Vec<Param>,
}

impl Params {
    pub fn new(label: &str, list: Vec<Param>) -> Params {
        Params {
            label: label.to_string(),
            list,
        }
    }

    /// Block `i`'s values.
    pub fn get(&self, i: usize) -> &[f64] {
        &self.list[i].values
    }

    /// The block named `name`, if any.
    pub fn find_mut(&mut self, name: &str) -> Option<&mut Param> {
        self.list.iter_mut().find(|p| p.name == name)
    }

    /// All values, fixed ones too (the length of a full gradient).
    pub fn total(&self) -> usize {
        self.list.iter().map(|p| p.values.len()).sum()
    }

    /// The free values (the kernel's parameters).
    pub fn free_len(&self) -> usize {
        self.free().map(|p| p.values.len()).sum()
    }

    fn free(&self) -> impl Iterator<Item = &Param> {
        self.list.iter().filter(|p| !p.fixed)
    }

    /// The free blocks, named `label.name`.
    pub fn blocks(&self) -> Vec<KernelBlock> {
        self.free()
            .map(|p| KernelBlock::new(format!("{}.{}", self.label, p.name), p.values.clone()))
            .collect()
    }

    /// The free values in the optimiser's coordinates.
    pub fn free_coords(&self) -> Vec<f64> {
        self.free()
            .flat_map(|p| {
                p.values
                    .iter()
                    .map(|v| if p.positive { v.ln() } else { *v })
            })
            .collect()
    }

    /// The free values from the optimiser's coordinates.
    pub fn set_free(&mut self, theta: &[f64]) {
        let mut t = theta.iter();
        for p in self.list.iter_mut().filter(|p| !p.fixed) {
            for (v, t) in p.values.iter_mut().zip(&mut t) {
                *v = if p.positive { t.exp() } else { *t };
            }
        }
    }

    /// Block `label.name`'s values, if it is one of these.
    pub fn set_block(&mut self, path: &str, values: &[f64]) -> bool {
        let Some(name) = path
            .strip_prefix(self.label.as_str())
            .and_then(|r| r.strip_prefix('.'))
        else {
            return false;
        };
        match self.find_mut(name) {
            Some(p) if p.values.len() == values.len() => {
                p.values.copy_from_slice(values);
                true
            }
            _ => false,
        }
    }

    /// Add the free entries of `full` (a gradient over every value) into `out`.
    pub fn add_free(&self, full: &[f64], out: &mut [f64]) {
        let free = self
            .list
            .iter()
            .flat_map(|p| std::iter::repeat_n(!p.fixed, p.values.len()));
        super::labelled::add_free(full, free, out);
    }
}

/// A kernel's formula, entry by entry. The gradient is in the optimiser's coordinates
/// (∂/∂log v of a positive block, ∂/∂v of an unconstrained one), over every value of
/// [`Form::params`] in order, fixed ones too.
pub trait Form: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// Its name in an expression.
    fn name(&self) -> &'static str;
    /// The number of inputs it reads.
    fn dim(&self) -> usize;
    fn params(&self) -> &Params;
    fn params_mut(&mut self) -> &mut Params;
    /// k(x, y).
    fn value(&self, x: &[f64], y: &[f64]) -> f64;
    /// Add w ∂k(x, y)/∂(parameters) into `gp`, w ∂k/∂x into `gx` and w ∂k/∂y into `gy`.
    fn add_grad(
        &self,
        x: &[f64],
        y: &[f64],
        w: f64,
        gp: &mut [f64],
        gx: &mut [f64],
        gy: &mut [f64],
    );
    /// Whether k(x, y) depends on x − y only.
    fn is_stationary(&self) -> bool;
    /// Its arguments besides the parameter blocks (periodic's base, a degree), as an
    /// expression writes them.
    fn shape_args(&self) -> Vec<(String, Value)> {
        Vec::new()
    }
    /// K(A, B) into `k` (every entry written) by a faster way than entry by entry,
    /// where the form has one (periodic's: each point's sines once, not each pair's);
    /// false if it has none.
    fn fill(
        &self,
        _a: &DMatrix<f64>,
        _b: &DMatrix<f64>,
        _k: &mut DMatrix<f64>,
        _par: Par,
        _scratch: &Scratch,
    ) -> bool {
        false
    }
    /// Σ_ij adj_ij ∂k(a_i, b_j)/∂(every value of [`Form::params`]; a_i; b_j) by a faster
    /// way than entry by entry, where the form has one; None if it has none. A set of
    /// points' gradient not wanted may be left out.
    #[allow(clippy::too_many_arguments)] // the points, the adjoint, which gradients, threads
    fn contract(
        &self,
        _a: &DMatrix<f64>,
        _b: &DMatrix<f64>,
        _adj: &DMatrix<f64>,
        _want_a: bool,
        _want_b: bool,
        _par: Par,
        _scratch: &Scratch,
    ) -> Option<Contraction> {
        None
    }
}

/// What [`Form::contract`] gives: the gradient over every value (fixed ones too, as
/// [`Form::add_grad`] adds it) and the sets of points' (rows as the points'), each if
/// computed.
pub struct Contraction {
    pub full: Vec<f64>,
    pub a: Option<DMatrix<f64>>,
    pub b: Option<DMatrix<f64>>,
}

/// A [`Form`] as a [`Kernel`].
#[derive(Clone, Debug, PartialEq)]
pub struct Part<F>(pub F);

/// The rows of `x` one after another.
fn rows(x: &DMatrix<f64>) -> Vec<f64> {
    x.transpose().as_slice().to_vec()
}

impl<F: Form> Part<F> {
    /// Σ_i adj_i ∂k(x_i, x_i)/∂θ over every value (fixed too).
    fn diag_full(&self, x: &DMatrix<f64>, adj: &[f64]) -> Vec<f64> {
        let d = x.ncols();
        let xr = rows(x);
        let mut full = vec![0.0; self.0.params().total()];
        let (mut gx, mut gy) = (vec![0.0; d], vec![0.0; d]);
        for (i, w) in adj.iter().enumerate() {
            let xi = &xr[i * d..(i + 1) * d];
            self.0.add_grad(xi, xi, *w, &mut full, &mut gx, &mut gy);
        }
        full
    }
}

impl<F: Form> Kernel for Part<F> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn blocks(&self) -> Vec<KernelBlock> {
        self.0.params().blocks()
    }
    fn params_len(&self) -> usize {
        self.0.params().free_len()
    }
    fn set_log_params(&mut self, theta: &[f64]) {
        self.0.params_mut().set_free(theta);
    }
    fn log_params(&self) -> Vec<f64> {
        self.0.params().free_coords()
    }
    fn set_block(&mut self, name: &str, values: &[f64]) -> bool {
        self.0.params_mut().set_block(name, values)
    }
    fn hold_block(&mut self, from: &dyn Kernel, name: &str) {
        if let Some(b) = from.blocks().into_iter().find(|b| b.name == name) {
            self.set_block(name, &b.values);
        }
    }

    fn matrix_in(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> DMatrix<f64> {
        let (na, d) = (a.nrows(), a.ncols());
        let mut k = scratch.matrix(na, b.nrows());
        if self.0.fill(a, b, &mut k, par, scratch) {
            return k;
        }
        let (ar, br) = (rows(a), rows(b));
        let fill = |(j, col): (usize, &mut [f64])| {
            let y = &br[j * d..(j + 1) * d];
            for (i, v) in col.iter_mut().enumerate() {
                *v = self.0.value(&ar[i * d..(i + 1) * d], y);
            }
        };
        if par.is_parallel() && k.len() >= PAR_MIN_ENTRIES {
            k.as_mut_slice()
                .par_chunks_mut(na.max(1))
                .enumerate()
                .for_each(fill);
        } else {
            k.as_mut_slice()
                .chunks_mut(na.max(1))
                .enumerate()
                .for_each(fill);
        }
        k
    }

    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64> {
        let d = x.ncols();
        let xr = rows(x);
        let mut out = scratch.take(x.nrows());
        for (i, v) in out.iter_mut().enumerate() {
            let xi = &xr[i * d..(i + 1) * d];
            *v = self.0.value(xi, xi);
        }
        out
    }

    fn diag_grad(&self, x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        let full = self.diag_full(x, adj);
        self.0.params().add_free(&full, out);
    }

    /// k(x, x) at the origin, for a stationary part.
    fn prior_variance(&self) -> Option<f64> {
        let zero = vec![0.0; self.0.dim()];
        self.0.is_stationary().then(|| self.0.value(&zero, &zero))
    }

    fn log_prior_variance_grad(&self, d: f64, out: &mut [f64]) {
        if let Some(v) = self.prior_variance().filter(|v| *v > 0.0) {
            let zero = DMatrix::zeros(1, self.0.dim());
            let full = self.diag_full(&zero, &[d / v]);
            self.0.params().add_free(&full, out);
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
        if let Some(c) = self.0.contract(a, b, adj, want_a, want_b, par, scratch) {
            let mut params = scratch.zeros(self.params_len());
            self.0.params().add_free(&c.full, &mut params);
            let keep = |m: Option<DMatrix<f64>>, want: bool| match m {
                Some(m) if !want => {
                    scratch.give_matrix(m);
                    None
                }
                m => {
                    debug_assert!(!want || m.is_some(), "a wanted gradient left out");
                    m
                }
            };
            return KernelGrad {
                params,
                a: keep(c.a, want_a),
                b: keep(c.b, want_b),
            };
        }
        let (na, nb, d) = (a.nrows(), b.nrows(), a.ncols());
        let (ar, br) = (rows(a), rows(b));
        let mut full = vec![0.0; self.0.params().total()];
        // point gradients row-major, transposed into matrices at the end
        let (mut ga, mut gb) = (vec![0.0; na * d], vec![0.0; nb * d]);
        for j in 0..nb {
            let y = &br[j * d..(j + 1) * d];
            let gy = &mut gb[j * d..(j + 1) * d];
            for i in 0..na {
                let w = adj[(i, j)];
                if w != 0.0 {
                    let (x, gx) = (&ar[i * d..(i + 1) * d], &mut ga[i * d..(i + 1) * d]);
                    self.0.add_grad(x, y, w, &mut full, gx, gy);
                }
            }
        }
        let mut params = scratch.zeros(self.params_len());
        self.0.params().add_free(&full, &mut params);
        let points = |g: &[f64], n: usize| DMatrix::from_row_slice(n, d, g);
        KernelGrad {
            params,
            a: want_a.then(|| points(&ga, na)),
            b: want_b.then(|| points(&gb, nb)),
        }
    }

    /// Its contraction works entry by entry (or by [`Form::contract`]): K(A, B) unread.
    fn grad_reads_matrix(&self) -> bool {
        false
    }
    fn is_stationary(&self) -> bool {
        self.0.is_stationary()
    }

    fn to_expr(&self) -> Option<KernelExpr> {
        let p = self.0.params();
        let mut args = self.0.shape_args();
        args.extend(
            p.list
                .iter()
                .map(|b| (b.name.to_string(), numbers(&b.values))),
        );
        let fixed: Vec<&str> = p.list.iter().filter(|b| b.fixed).map(|b| b.name).collect();
        if !fixed.is_empty() {
            args.push(("fix".into(), names(&fixed)));
        }
        Some(KernelExpr::part(self.0.name(), args))
    }

    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}
