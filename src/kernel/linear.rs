//! The linear kernel k(x, y) = Σ_d v_d x_d y_d (GPflow's `Linear` with one variance per
//! input; scikit-learn's `DotProduct` with σ0 = 0): Bayesian linear regression through
//! the origin, a prior N(0, v_d) on each input's slope.
//!
//! Its matrix is a product of matrices, K(A, B) = A diag(v) Bᵀ, and so is its
//! contraction with an adjoint G: Σ_ij G_ij ∂k(a_i, b_j)/∂a_i = (G B) diag(v), the same
//! into B with Gᵀ A, and ∂/∂log v_d = v_d Σ_i a_id (G B)_id — matrix products
//! ([`crate::linalg::gemm`]) instead of a loop over pairs and inputs. `polynomial`,
//! a power of the same sum, uses them too.

use super::part::{Contraction, Form, Param, Params};
use crate::exec::Par;
use crate::linalg::gemm;
use crate::scratch::Scratch;
use nalgebra::DMatrix;

/// `k` ← A diag(v) Bᵀ: Σ_d v_d a_id b_jd for every pair (A's columns scaled first, so
/// each term is (v_d a_id) b_jd as the entry-by-entry form takes it).
pub(super) fn scaled_products(
    v: &[f64],
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    k: &mut DMatrix<f64>,
    par: Par,
    scratch: &Scratch,
) {
    let mut av = scratch.matrix(a.nrows(), a.ncols());
    for (d, v) in v.iter().enumerate() {
        av.column_mut(d).zip_apply(&a.column(d), |s, x| *s = v * x);
    }
    gemm(k, false, &av, false, b, true, 1.0, par);
    scratch.give_matrix(av);
}

/// Σ_ij g_ij ∂(Σ_d v_d a_id b_jd) with respect to log v (over every d), to A's rows
/// (if `want_a`) and to B's rows (if `want_b`): two products of an n×m adjoint with an
/// m×D or n×D matrix at most.
#[allow(clippy::too_many_arguments)] // the variances, the points, the adjoint, which gradients, threads
pub(super) fn contract_products(
    v: &[f64],
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    g: &DMatrix<f64>,
    want_a: bool,
    want_b: bool,
    par: Par,
    scratch: &Scratch,
) -> (Vec<f64>, Option<DMatrix<f64>>, Option<DMatrix<f64>>) {
    let dim = v.len();
    // G B (row i: Σ_j g_ij b_j), needed for A's gradient and, when B's is not wanted
    // alone, for the variances'
    let g_b = (want_a || !want_b).then(|| {
        let mut p = scratch.matrix(a.nrows(), dim);
        gemm(&mut p, false, g, false, b, false, 1.0, par);
        p
    });
    // Gᵀ A (row j: Σ_i g_ij a_i), B's gradient
    let gt_a = want_b.then(|| {
        let mut q = scratch.matrix(b.nrows(), dim);
        gemm(&mut q, false, g, true, a, false, 1.0, par);
        q
    });
    // ∂/∂log v_d = v_d Σ_ij g_ij a_id b_jd, read from whichever product there is
    let full: Vec<f64> = match (&g_b, &gt_a) {
        (Some(p), _) => (0..dim)
            .map(|d| v[d] * a.column(d).dot(&p.column(d)))
            .collect(),
        (None, Some(q)) => (0..dim)
            .map(|d| v[d] * b.column(d).dot(&q.column(d)))
            .collect(),
        (None, None) => unreachable!("one product is always formed"),
    };
    let scale = |mut m: DMatrix<f64>| {
        for (d, v) in v.iter().enumerate() {
            m.column_mut(d).apply(|x| *x *= v);
        }
        m
    };
    let ga = match g_b {
        Some(p) if want_a => Some(scale(p)),
        Some(p) => {
            scratch.give_matrix(p);
            None
        }
        None => None,
    };
    (full, ga, gt_a.map(scale))
}

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
    fn fill(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &mut DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> bool {
        scaled_products(self.params.get(0), a, b, k, par, scratch);
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
        let (full, a, b) =
            contract_products(self.params.get(0), a, b, adj, want_a, want_b, par, scratch);
        Some(Contraction { full, a, b })
    }
}
