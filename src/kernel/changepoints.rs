//! Change points (GPflow's `ChangePoints`): kernels k_0..k_n switched by n sigmoids
//! σ_j(x) = 1/(1 + exp(−s_j (t − l_j))) of one input t, at locations l_j with
//! steepness s_j:
//!
//!   k(x, y) = Σ_i w_i(x) k_i(x, y) w_i(y),   w_i = σ_{i−1} · (1 − σ_i)
//!
//! (σ_{−1} = 1 − σ_n = 1): k_0 holds before l_0, k_i between l_{i−1} and l_i, k_n after
//! l_{n−1}, each switched on by the sigmoid before it and off by the one after (GPflow's
//! "starters" and "stoppers"). GPflow sorts
//! the locations before use; here they pair with the kernels in the order given (the
//! same for locations given in ascending order). The locations are unconstrained (the
//! optimiser moves them as themselves), the steepnesses positive. An expression writes
//! it `changepoints(se, se, locations=[…], steepness=…)` (src/kernel/build.rs).

use super::expression::{KernelExpr, Value};
use super::labelled::{names, numbers};
use super::part::{Param, Params};
use super::sum::{Children, add_points, hold_by_value};
use super::{Kernel, KernelBlock, KernelGrad};
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

/// n + 1 kernels switched at n locations along input `on`; own blocks `locations`
/// and `steepness` after the kernels' blocks.
#[derive(Clone, Debug)]
pub struct ChangePoints {
    pub kernels: Children,
    pub params: Params,
    pub on: usize,
}

impl ChangePoints {
    pub fn new(
        kernels: Vec<Box<dyn Kernel>>,
        locations: Vec<f64>,
        steepness: Vec<f64>,
        on: usize,
    ) -> ChangePoints {
        assert_eq!(
            kernels.len(),
            locations.len() + 1,
            "n + 1 kernels for n change points"
        );
        assert_eq!(
            steepness.len(),
            locations.len(),
            "a steepness per change point"
        );
        ChangePoints {
            kernels: Children(kernels),
            params: Params::new(
                "changepoints",
                vec![
                    Param::real("locations", locations),
                    Param::positive("steepness", steepness),
                ],
            ),
            on,
        }
    }

    fn sigmoids(&self, t: f64) -> Vec<f64> {
        let (l, s) = (self.params.get(0), self.params.get(1));
        (0..l.len())
            .map(|j| 1.0 / (1.0 + (-s[j] * (t - l[j])).exp()))
            .collect()
    }

    /// w_i with σ_k's factor replaced by 1 for k = `skip` (∂w_i/∂σ_skip up to its sign).
    fn weight(sig: &[f64], i: usize, skip: Option<usize>) -> f64 {
        let start = if i > 0 && skip != Some(i - 1) {
            sig[i - 1]
        } else {
            1.0
        };
        let stop = if i < sig.len() && skip != Some(i) {
            1.0 - sig[i]
        } else {
            1.0
        };
        start * stop
    }

    /// The weights of every kernel at every point (n×(kernels)).
    fn weights(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let c = self.kernels.0.len();
        let mut w = DMatrix::zeros(x.nrows(), c);
        for r in 0..x.nrows() {
            let sig = self.sigmoids(x[(r, self.on)]);
            for i in 0..c {
                w[(r, i)] = Self::weight(&sig, i, None);
            }
        }
        w
    }

    /// Given gw = ∂/∂w_i at each point, add ∂/∂(locations, log steepness) into `full`
    /// and ∂/∂t into column `on` of `gx`.
    fn chain(
        &self,
        x: &DMatrix<f64>,
        gw: &DMatrix<f64>,
        full: &mut [f64],
        mut gx: Option<&mut DMatrix<f64>>,
    ) {
        let (l, s) = (self.params.get(0), self.params.get(1));
        let n = l.len();
        for r in 0..x.nrows() {
            let t = x[(r, self.on)];
            let sig = self.sigmoids(t);
            for j in 0..n {
                // σ_j stops k_j and starts k_{j+1}
                let gs = gw[(r, j + 1)] * Self::weight(&sig, j + 1, Some(j))
                    - gw[(r, j)] * Self::weight(&sig, j, Some(j));
                let ds = gs * sig[j] * (1.0 - sig[j]);
                full[j] -= ds * s[j];
                full[n + j] += ds * s[j] * (t - l[j]);
                if let Some(g) = gx.as_deref_mut() {
                    g[(r, self.on)] += ds * s[j];
                }
            }
        }
    }
}

impl Kernel for ChangePoints {
    fn name(&self) -> &'static str {
        "changepoints"
    }
    fn dim(&self) -> usize {
        self.kernels.dim()
    }
    fn blocks(&self) -> Vec<KernelBlock> {
        let mut b = self.kernels.blocks();
        b.extend(self.params.blocks());
        b
    }
    fn params_len(&self) -> usize {
        self.kernels.params_len() + self.params.free_len()
    }
    fn set_log_params(&mut self, theta: &[f64]) {
        let k = self.kernels.params_len();
        self.kernels.set_log_params(&theta[..k]);
        self.params.set_free(&theta[k..]);
    }
    fn log_params(&self) -> Vec<f64> {
        let mut t = self.kernels.log_params();
        t.extend(self.params.free_coords());
        t
    }
    fn set_block(&mut self, name: &str, values: &[f64]) -> bool {
        self.kernels.set_block(name, values) || self.params.set_block(name, values)
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
        let (wa, wb) = (self.weights(a), self.weights(b));
        let mut k = scratch.zero_matrix(a.nrows(), b.nrows());
        for (i, ki) in self.kernels.0.iter().enumerate() {
            let mut m = ki.matrix_in(a, b, par, scratch);
            for (c, mut col) in m.column_iter_mut().enumerate() {
                col.component_mul_assign(&wa.column(i));
                col *= wb[(c, i)];
            }
            k += &m;
            scratch.give_matrix(m);
        }
        k
    }

    fn diag_in(&self, x: &DMatrix<f64>, scratch: &Scratch) -> Vec<f64> {
        let w = self.weights(x);
        let mut d = scratch.zeros(x.nrows());
        for (i, ki) in self.kernels.0.iter().enumerate() {
            for (r, v) in ki.diag(x).iter().enumerate() {
                d[r] += w[(r, i)] * w[(r, i)] * v;
            }
        }
        d
    }

    fn diag_grad(&self, x: &DMatrix<f64>, adj: &[f64], out: &mut [f64]) {
        let w = self.weights(x);
        let mut gw = DMatrix::zeros(x.nrows(), self.kernels.0.len());
        for ((i, ki), range) in self.kernels.0.iter().enumerate().zip(self.kernels.ranges()) {
            let kd = ki.diag(x);
            let ai: Vec<f64> = (0..x.nrows())
                .map(|r| adj[r] * w[(r, i)] * w[(r, i)])
                .collect();
            ki.diag_grad(x, &ai, &mut out[range]);
            for r in 0..x.nrows() {
                gw[(r, i)] = 2.0 * adj[r] * w[(r, i)] * kd[r];
            }
        }
        let mut full = vec![0.0; self.params.total()];
        self.chain(x, &gw, &mut full, None);
        self.params
            .add_free(&full, &mut out[self.kernels.params_len()..]);
    }

    fn prior_variance(&self) -> Option<f64> {
        None
    }

    fn log_prior_variance_grad(&self, _d: f64, _out: &mut [f64]) {}

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
        let (wa, wb) = (self.weights(a), self.weights(b));
        let c = self.kernels.0.len();
        let (mut gwa, mut gwb) = (DMatrix::zeros(a.nrows(), c), DMatrix::zeros(b.nrows(), c));
        let mut params = scratch.zeros(self.params_len());
        let mut ga = want_a.then(|| scratch.zero_matrix(a.nrows(), a.ncols()));
        let mut gb = want_b.then(|| scratch.zero_matrix(b.nrows(), b.ncols()));
        for ((i, ki), range) in self.kernels.0.iter().enumerate().zip(self.kernels.ranges()) {
            let km = ki.matrix_in(a, b, par, scratch);
            // adj ∘ K_i: its row sums against w_i(B) and column sums against w_i(A)
            // are the weights' adjoints; adj ∘ w_i(A) w_i(B)ᵀ is k_i's
            let mut ai = adj.component_mul(&km);
            let wai = wa.column(i);
            let wbi = wb.column(i);
            gwa.set_column(i, &(&ai * wbi));
            gwb.set_column(i, &(ai.transpose() * wai));
            ai.copy_from(adj);
            for (cc, mut col) in ai.column_iter_mut().enumerate() {
                col.component_mul_assign(&wai);
                col *= wbi[cc];
            }
            let g = ki.grad_in(a, b, &km, &ai, want_a, want_b, par, scratch);
            scratch.give_matrix(km);
            params[range].copy_from_slice(&g.params);
            add_points(&mut ga, &g.a);
            add_points(&mut gb, &g.b);
            g.recycle(scratch);
        }
        let mut full = vec![0.0; self.params.total()];
        self.chain(a, &gwa, &mut full, ga.as_mut());
        self.chain(b, &gwb, &mut full, gb.as_mut());
        let k = self.kernels.params_len();
        self.params.add_free(&full, &mut params[k..]);
        KernelGrad {
            params,
            a: ga,
            b: gb,
        }
    }

    /// Each kernel's contraction reads its own K(A, B), never the whole one's.
    fn grad_reads_matrix(&self) -> bool {
        false
    }
    fn is_stationary(&self) -> bool {
        false
    }

    /// `changepoints(k_0, …, locations=…, steepness=…)`, with `dims=[on]` when there
    /// are several inputs to switch along (src/kernel/build.rs reads it back).
    fn to_expr(&self) -> Option<KernelExpr> {
        let kernels = self
            .kernels
            .0
            .iter()
            .map(|k| k.to_expr())
            .collect::<Option<Vec<_>>>()?;
        let mut args: Vec<(String, Value)> = self
            .params
            .list
            .iter()
            .map(|b| (b.name.to_string(), numbers(&b.values)))
            .collect();
        let fixed: Vec<&str> = self
            .params
            .list
            .iter()
            .filter(|b| b.fixed)
            .map(|b| b.name)
            .collect();
        if !fixed.is_empty() {
            args.push(("fix".into(), names(&fixed)));
        }
        if self.dim() > 1 {
            args.push((
                "dims".into(),
                Value::List(vec![Value::Number(self.on as f64)]),
            ));
        }
        Some(KernelExpr::combining("changepoints", kernels, args))
    }

    fn clone_box(&self) -> Box<dyn Kernel> {
        Box::new(self.clone())
    }
}
