//! The periodic version of a stationary kernel (MacKay 1998; GPflow's `Periodic`):
//! the base kernel's profile κ applied to r² = Σ_d (sin(π (x_d − y_d)/p_d) / ℓ_d)²,
//! k = σ² κ(r²). With the SE base, k = σ² exp(−½ Σ_d sin²(π τ_d/p_d)/ℓ_d²):
//!
//! - GPflow's `Periodic(SquaredExponential(variance=σ², lengthscales=ℓ), period=p)`
//!   is exactly this (GPflow also feeds the same r² to any stationary base's `K_r2`,
//!   as here for the Matérn and rq bases);
//! - scikit-learn's `ExpSineSquared(length_scale=ℓ_s, periodicity=p)`, exp(−2 sin²(π
//!   |τ|/p)/ℓ_s²), is the 1-D SE case with ℓ = ℓ_s/2 and σ² = 1 (its variance comes
//!   from a `ConstantKernel` factor).

mod angles;

use super::KernelKind;
use super::expression::Value;
use super::part::{Contraction, Form, Param, Params};
use super::stationary::exp_nonpositive;
use crate::exec::Par;
use crate::scratch::Scratch;
use nalgebra::DMatrix;
use std::f64::consts::PI;

/// k = σ² κ(r²) with the sine-warped distance; blocks `var`, `ls` and `period` (one per
/// input each), and `alpha` for the rq base.
#[derive(Clone, Debug, PartialEq)]
pub struct Periodic {
    pub base: KernelKind,
    pub params: Params,
}

impl Periodic {
    pub fn new(
        base: KernelKind,
        variance: f64,
        lengthscales: Vec<f64>,
        periods: Vec<f64>,
        rq_alpha: f64,
    ) -> Periodic {
        let mut list = vec![
            Param::positive("var", vec![variance]),
            Param::positive("ls", lengthscales),
            Param::positive("period", periods),
        ];
        if base == KernelKind::Rq {
            list.push(Param::positive("alpha", vec![rq_alpha]));
        }
        Periodic {
            base,
            params: Params::new("periodic", list),
        }
    }

    /// (u_d, s_d) with u_d = π (x_d − y_d)/p_d and s_d = sin(u_d)/ℓ_d, into `u`, `s`;
    /// returns r².
    fn warp(&self, x: &[f64], y: &[f64], u: &mut [f64], s: &mut [f64]) -> f64 {
        let (ls, p) = (self.params.get(1), self.params.get(2));
        let mut r2 = 0.0;
        for d in 0..ls.len() {
            u[d] = PI * (x[d] - y[d]) / p[d];
            s[d] = u[d].sin() / ls[d];
            r2 += s[d] * s[d];
        }
        r2
    }

    fn alpha(&self) -> f64 {
        self.params.list.get(3).map_or(1.0, |p| p.values[0])
    }
}

/// The unit-variance profile of a stationary kernel at r²: κ, dκ/dr² and (rq)
/// ∂κ/∂log α. Matérn ½'s dκ/dr² is taken as 0 at r = 0, where it is not defined.
/// Every exponent is ≤ 0, so the exponentials are [`exp_nonpositive`]'s, which keep the
/// fills' loops in SIMD lanes.
#[inline(always)]
pub(super) fn profile(kind: KernelKind, alpha: f64, r2: f64) -> [f64; 3] {
    const SQRT3: f64 = 1.732_050_807_568_877_2;
    const SQRT5: f64 = 2.236_067_977_499_79;
    match kind {
        KernelKind::Se => {
            let k = exp_nonpositive(-0.5 * r2);
            [k, -0.5 * k, 0.0]
        }
        KernelKind::Matern12 => {
            let r = r2.sqrt();
            let k = exp_nonpositive(-r);
            [k, if r > 0.0 { -0.5 * k / r } else { 0.0 }, 0.0]
        }
        KernelKind::Matern32 => {
            let t = SQRT3 * r2.sqrt();
            let e = exp_nonpositive(-t);
            [(1.0 + t) * e, -1.5 * e, 0.0]
        }
        KernelKind::Matern52 => {
            let t = SQRT5 * r2.sqrt();
            let e = exp_nonpositive(-t);
            [
                (1.0 + t + t * t / 3.0) * e,
                -(5.0 / 6.0) * (1.0 + t) * e,
                0.0,
            ]
        }
        KernelKind::Rq => {
            // κ = u^{−α}, u = 1 + r²/(2α)
            let x = r2 / (2.0 * alpha);
            let log_u = x.ln_1p();
            let k = exp_nonpositive(-alpha * log_u);
            let slope = -0.5 * exp_nonpositive(-(alpha + 1.0) * log_u);
            [k, slope, k * (r2 / (2.0 * (1.0 + x)) - alpha * log_u)]
        }
    }
}

/// At most this many inputs on the stack in a periodic entry.
const MAX_STACK_DIM: usize = 16;

impl Form for Periodic {
    fn name(&self) -> &'static str {
        "periodic"
    }
    fn dim(&self) -> usize {
        self.params.get(1).len()
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn params_mut(&mut self) -> &mut Params {
        &mut self.params
    }
    fn value(&self, x: &[f64], y: &[f64]) -> f64 {
        let dim = self.dim();
        let (mut stack, mut heap) = ([0.0; 2 * MAX_STACK_DIM], Vec::new());
        let (u, s) = buffers(dim, &mut stack, &mut heap);
        let r2 = self.warp(x, y, u, s);
        self.params.get(0)[0] * profile(self.base, self.alpha(), r2)[0]
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
        let dim = self.dim();
        let (mut stack, mut heap) = ([0.0; 2 * MAX_STACK_DIM], Vec::new());
        let (u, s) = buffers(dim, &mut stack, &mut heap);
        let r2 = self.warp(x, y, u, s);
        let var = self.params.get(0)[0];
        let [k, slope, shape] = profile(self.base, self.alpha(), r2);
        gp[0] += w * var * k;
        // w ∂k/∂r²
        let g = w * var * slope;
        let (ls, p) = (self.params.get(1), self.params.get(2));
        for d in 0..dim {
            // ∂r²/∂u_d = 2 s_d cos(u_d)/ℓ_d
            let du = 2.0 * s[d] * u[d].cos() / ls[d];
            gp[1 + d] += g * (-2.0 * s[d] * s[d]);
            gp[1 + dim + d] += g * du * (-u[d]);
            gx[d] += g * du * PI / p[d];
            gy[d] -= g * du * PI / p[d];
        }
        if self.base == KernelKind::Rq {
            gp[1 + 2 * dim] += w * var * shape;
        }
    }
    fn is_stationary(&self) -> bool {
        true
    }
    fn fill(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        k: &mut DMatrix<f64>,
        par: Par,
        scratch: &Scratch,
    ) -> bool {
        angles::fill(self, a, b, k, par, scratch);
        true
    }
    fn contract(
        &self,
        a: &DMatrix<f64>,
        b: &DMatrix<f64>,
        adj: &DMatrix<f64>,
        _want_a: bool,
        _want_b: bool,
        par: Par,
        scratch: &Scratch,
    ) -> Option<Contraction> {
        Some(angles::contract(self, a, b, adj, par, scratch))
    }
    fn shape_args(&self) -> Vec<(String, Value)> {
        if self.base == KernelKind::Se {
            return Vec::new();
        }
        vec![("base".into(), Value::Name(self.base.name().into()))]
    }
}

/// Two slices of `dim` for one entry's per-input terms: on the stack for up to
/// [`MAX_STACK_DIM`] inputs.
fn buffers<'a>(
    dim: usize,
    stack: &'a mut [f64; 2 * MAX_STACK_DIM],
    heap: &'a mut Vec<f64>,
) -> (&'a mut [f64], &'a mut [f64]) {
    if dim <= MAX_STACK_DIM {
        let (u, s) = stack.split_at_mut(MAX_STACK_DIM);
        (&mut u[..dim], &mut s[..dim])
    } else {
        heap.resize(2 * dim, 0.0);
        heap.split_at_mut(dim)
    }
}
