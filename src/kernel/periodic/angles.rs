//! Periodic's fill and contraction through the points' angles (issue 42's speed): with
//! α_i = π (a_i − c)/p and β_j = π (b_j − c)/p per input,
//!
//!   sin(α_i − β_j) = sin α_i cos β_j − cos α_i sin β_j,
//!   cos(α_i − β_j) = cos α_i cos β_j + sin α_i sin β_j,
//!
//! so each point's sine and cosine are taken once (n + m per input, not n·m, and none
//! again for the gradient), and a pair's entry and derivatives are multiplications
//! that run in SIMD lanes, eight rows of A at a time. The kernel is translation
//! invariant, so the angles are taken from A's mean (c): they stay small, and their
//! rounding (a few ulps of |α|, absolute in the sines) stays at the level of the
//! entry-by-entry form's (`Periodic::warp`, relative in the sines of the differences).

use super::{Periodic, profile};
use crate::exec::Par;
use crate::kernel::KernelKind;
use crate::kernel::part::Contraction;
use crate::kernel::stationary::exp_nonpositive;
use crate::scratch::Scratch;
use multiversion::multiversion;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::f64::consts::PI;

/// Rows of A in one block of SIMD lanes.
const W: usize = 8;

/// Matrices with fewer entries than this are filled on one thread.
const PAR_MIN_ENTRIES: usize = 1 << 14;

/// Points as angles, one input after another (entry d·len + i); A's rows padded with
/// zeros to whole blocks of [`W`] (a padded row's sines and cosines are 0: r² = 0,
/// and its adjoint is 0, so it adds nothing).
struct Angles {
    /// Rows, padded for A.
    len: usize,
    sin: Vec<f64>,
    cos: Vec<f64>,
    /// The angles themselves (the period's derivative reads α_i − β_j).
    angle: Vec<f64>,
}

impl Angles {
    /// The angles of `x`'s rows from `shift`, their sines and cosines divided by `scale`.
    fn of(
        x: &DMatrix<f64>,
        shift: &[f64],
        period: &[f64],
        scale: &[f64],
        len: usize,
        scratch: &Scratch,
    ) -> Angles {
        let mut out = Angles {
            len,
            sin: scratch.zeros(len * shift.len()),
            cos: scratch.zeros(len * shift.len()),
            angle: scratch.zeros(len * shift.len()),
        };
        for d in 0..shift.len() {
            for i in 0..x.nrows() {
                let t = PI * (x[(i, d)] - shift[d]) / period[d];
                let (s, c) = t.sin_cos();
                let at = d * len + i;
                out.sin[at] = s / scale[d];
                out.cos[at] = c / scale[d];
                out.angle[at] = t;
            }
        }
        out
    }

    fn give(self, scratch: &Scratch) {
        for v in [self.sin, self.cos, self.angle] {
            scratch.give(v);
        }
    }
}

/// Point j of B: its sines, cosines and angles, one per input.
fn point(b: &Angles, j: usize, dim: usize, out: &mut [f64]) {
    for d in 0..dim {
        out[d] = b.sin[d * b.len + j];
        out[dim + d] = b.cos[d * b.len + j];
        out[2 * dim + d] = b.angle[d * b.len + j];
    }
}

/// A's angles (sines and cosines over ℓ) and B's (plain), from A's mean.
fn both(k: &Periodic, a: &DMatrix<f64>, b: &DMatrix<f64>, scratch: &Scratch) -> (Angles, Angles) {
    let (ls, p) = (k.params.get(1), k.params.get(2));
    let dim = ls.len();
    let shift: Vec<f64> = (0..dim).map(|d| a.column(d).mean()).collect();
    let ones = vec![1.0; dim];
    let pad = a.nrows().div_ceil(W) * W;
    (
        Angles::of(a, &shift, p, ls, pad, scratch),
        Angles::of(b, &shift, p, &ones, b.nrows(), scratch),
    )
}

/// r² of eight rows of A against one point of B (`pb`: sines, cosines).
#[inline(always)]
fn block_r2(sa: &[f64], ca: &[f64], len: usize, i0: usize, pb: &[f64], dim: usize) -> [f64; W] {
    let mut r2 = [0.0; W];
    for d in 0..dim {
        let s_a: &[f64; W] = sa[d * len + i0..d * len + i0 + W]
            .try_into()
            .expect("a block");
        let c_a: &[f64; W] = ca[d * len + i0..d * len + i0 + W]
            .try_into()
            .expect("a block");
        let (sb, cb) = (pb[d], pb[dim + d]);
        for l in 0..W {
            let s = s_a[l] * cb - c_a[l] * sb;
            r2[l] += s * s;
        }
    }
    r2
}

/// κ, dκ/dr² and ∂κ/∂log α of eight r² ([`profile`]), the base matched once outside
/// the lanes' loop so that each base's loop is compiled on its own (in SIMD lanes where
/// its profile allows).
#[inline(always)]
fn profile_lanes(kind: KernelKind, alpha: f64, r2: &[f64; W]) -> [[f64; W]; 3] {
    let mut out = [[0.0; W]; 3];
    let mut lanes = |kind: KernelKind| {
        for l in 0..W {
            let [k, slope, shape] = profile(kind, alpha, r2[l]);
            out[0][l] = k;
            out[1][l] = slope;
            out[2][l] = shape;
        }
    };
    match kind {
        KernelKind::Se => lanes(KernelKind::Se),
        KernelKind::Matern12 => lanes(KernelKind::Matern12),
        KernelKind::Matern32 => lanes(KernelKind::Matern32),
        KernelKind::Matern52 => lanes(KernelKind::Matern52),
        KernelKind::Rq => lanes(KernelKind::Rq),
    }
    out
}

/// Column j of K(A, B) into `col`: r² per row, then σ² κ(r²) in a loop of its own
/// (the SE base's exp in SIMD lanes).
#[multiversion(targets = "simd")]
#[allow(clippy::too_many_arguments)] // one column: the operands and the kernel's scalars
fn fill_column(
    col: &mut [f64],
    sa: &[f64],
    ca: &[f64],
    len: usize,
    pb: &[f64],
    dim: usize,
    var: f64,
    kind: KernelKind,
    alpha: f64,
) {
    let na = col.len();
    if kind == KernelKind::Se {
        for i0 in (0..len).step_by(W) {
            let r2 = block_r2(sa, ca, len, i0, pb, dim);
            let end = (i0 + W).min(na);
            col[i0..end].copy_from_slice(&r2[..end - i0]);
        }
        // profile's SE value, spelled out so that the loop runs in SIMD lanes
        for v in col.iter_mut() {
            *v = var * exp_nonpositive(-0.5 * *v);
        }
    } else {
        for i0 in (0..len).step_by(W) {
            let r2 = block_r2(sa, ca, len, i0, pb, dim);
            let [k, _, _] = profile_lanes(kind, alpha, &r2);
            let end = (i0 + W).min(na);
            for (v, k) in col[i0..end].iter_mut().zip(k) {
                *v = var * k;
            }
        }
    }
}

/// K(A, B) into `k`.
pub(super) fn fill(
    k: &Periodic,
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    out: &mut DMatrix<f64>,
    par: Par,
    scratch: &Scratch,
) {
    let dim = k.params.get(1).len();
    let na = a.nrows();
    let (aa, ab) = both(k, a, b, scratch);
    let (var, kind, alpha) = (k.params.get(0)[0], k.base, k.alpha());
    let fill = |(j, col): (usize, &mut [f64])| {
        let mut pb = [0.0; 3 * MAX_LANE_DIM];
        let mut heap = Vec::new();
        let pb = point_buffer(dim, &mut pb, &mut heap);
        point(&ab, j, dim, pb);
        fill_column(col, &aa.sin, &aa.cos, aa.len, pb, dim, var, kind, alpha);
    };
    if par.is_parallel() && out.len() >= PAR_MIN_ENTRIES {
        out.as_mut_slice()
            .par_chunks_mut(na.max(1))
            .enumerate()
            .for_each(fill);
    } else {
        out.as_mut_slice()
            .chunks_mut(na.max(1))
            .enumerate()
            .for_each(fill);
    }
    aa.give(scratch);
    ab.give(scratch);
}

/// At most this many inputs' (sin, cos, angle) of a point of B on the stack.
const MAX_LANE_DIM: usize = 16;

fn point_buffer<'a>(
    dim: usize,
    stack: &'a mut [f64; 3 * MAX_LANE_DIM],
    heap: &'a mut Vec<f64>,
) -> &'a mut [f64] {
    if dim <= MAX_LANE_DIM {
        &mut stack[..3 * dim]
    } else {
        heap.resize(3 * dim, 0.0);
        heap
    }
}

/// One stripe's sums, lane by lane: Σ w κ, Σ w ∂κ/∂log α, and per input (entry d·W + l)
/// Σ g s², Σ h (α − β) and B's column sums of h, with g = w σ² ∂κ/∂r², s the scaled
/// sine and h = 2 g s cos/ℓ (w ∂k/∂(α − β)); A's sums of h (entry d·len + i).
struct Sums {
    value: [f64; W],
    shape: [f64; W],
    ls: Vec<f64>,
    period: Vec<f64>,
    gb: Vec<f64>,
    ga: Vec<f64>,
}

/// Column j's part of the contraction (`w`: adj's column j, padded with zeros), B's
/// gradient for it into `gb_row` (one per input).
#[multiversion(targets = "simd")]
#[allow(clippy::too_many_arguments)] // one column: the operands and the kernel's scalars
fn contract_column(
    w: &[f64],
    a: (&[f64], &[f64], &[f64]),
    len: usize,
    pb: &[f64],
    dim: usize,
    var: f64,
    kind: KernelKind,
    alpha: f64,
    sums: &mut Sums,
    gb_row: &mut [f64],
) {
    let (sa, ca, ta) = a;
    sums.gb.iter_mut().for_each(|v| *v = 0.0);
    for i0 in (0..len).step_by(W) {
        let r2 = block_r2(sa, ca, len, i0, pb, dim);
        let [k, slope, shape] = profile_lanes(kind, alpha, &r2);
        let wl: &[f64; W] = w[i0..i0 + W].try_into().expect("a block");
        let mut g = [0.0; W];
        for l in 0..W {
            sums.value[l] += wl[l] * k[l];
            sums.shape[l] += wl[l] * shape[l];
            g[l] = wl[l] * var * slope[l];
        }
        for d in 0..dim {
            let at = d * len + i0;
            let s_a: &[f64; W] = sa[at..at + W].try_into().expect("a block");
            let c_a: &[f64; W] = ca[at..at + W].try_into().expect("a block");
            let t_a: &[f64; W] = ta[at..at + W].try_into().expect("a block");
            let ga: &mut [f64; W] = (&mut sums.ga[at..at + W]).try_into().expect("a block");
            let lane = d * W..(d + 1) * W;
            let ls: &mut [f64; W] = (&mut sums.ls[lane.clone()]).try_into().expect("lanes");
            let per: &mut [f64; W] = (&mut sums.period[lane.clone()]).try_into().expect("lanes");
            let gb: &mut [f64; W] = (&mut sums.gb[lane]).try_into().expect("lanes");
            let (sb, cb, tb) = (pb[d], pb[dim + d], pb[2 * dim + d]);
            for l in 0..W {
                let s = s_a[l] * cb - c_a[l] * sb;
                let c = c_a[l] * cb + s_a[l] * sb;
                let gs = g[l] * s;
                let h = 2.0 * gs * c;
                ls[l] += gs * s;
                per[l] += h * (t_a[l] - tb);
                ga[l] += h;
                gb[l] += h;
            }
        }
    }
    for (d, v) in gb_row.iter_mut().enumerate() {
        *v = sums.gb[d * W..(d + 1) * W].iter().sum();
    }
}

/// Σ_ij adj_ij ∂k(a_i, b_j)/∂(var, ℓ, p, α; a_i; b_j): stripes of B's points, each with
/// its own sums, added in order (the same result on any number of threads).
pub(super) fn contract(
    k: &Periodic,
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    adj: &DMatrix<f64>,
    par: Par,
    scratch: &Scratch,
) -> Contraction {
    let (ls, p) = (k.params.get(1), k.params.get(2));
    let dim = ls.len();
    let (na, nb) = (a.nrows(), b.nrows());
    let (aa, ab) = both(k, a, b, scratch);
    let (var, kind, alpha) = (k.params.get(0)[0], k.base, k.alpha());
    let len = crate::linalg::stripe_len(nb);
    let mut gb_rows = scratch.zeros(nb * dim);
    let parts = {
        let mut rows = gb_rows.chunks_mut((len * dim).max(1));
        let items = crate::linalg::stripe_array((0..nb).step_by(len.max(1)).map(|j0| {
            let cols = j0..(j0 + len).min(nb);
            (cols, rows.next().unwrap_or_default())
        }));
        crate::linalg::map_stripes(par, items, |(cols, gb)| {
            let mut sums = Sums {
                value: [0.0; W],
                shape: [0.0; W],
                ls: scratch.zeros(dim * W),
                period: scratch.zeros(dim * W),
                gb: scratch.zeros(dim * W),
                ga: scratch.zeros(aa.len * dim),
            };
            let mut w = scratch.zeros(aa.len);
            let mut pb = [0.0; 3 * MAX_LANE_DIM];
            let mut heap = Vec::new();
            let pb = point_buffer(dim, &mut pb, &mut heap);
            let first = cols.start;
            for j in cols {
                w[..na].copy_from_slice(&adj.as_slice()[j * na..(j + 1) * na]);
                point(&ab, j, dim, pb);
                let row = &mut gb[(j - first) * dim..(j - first + 1) * dim];
                contract_column(
                    &w,
                    (&aa.sin, &aa.cos, &aa.angle),
                    aa.len,
                    pb,
                    dim,
                    var,
                    kind,
                    alpha,
                    &mut sums,
                    row,
                );
            }
            scratch.give(w);
            scratch.give(std::mem::take(&mut sums.gb));
            sums
        })
    };
    // every value's derivative: [var, ℓ (dim), p (dim), α (rq)]
    let mut full = vec![0.0; k.params.total()];
    let mut ga = scratch.zeros(aa.len * dim);
    let (mut value, mut shape) = (0.0, 0.0);
    for s in parts.into_iter().flatten() {
        value += s.value.iter().sum::<f64>();
        shape += s.shape.iter().sum::<f64>();
        for d in 0..dim {
            full[1 + d] += s.ls[d * W..(d + 1) * W].iter().sum::<f64>();
            full[1 + dim + d] += s.period[d * W..(d + 1) * W].iter().sum::<f64>();
        }
        ga.iter_mut().zip(&s.ga).for_each(|(t, v)| *t += v);
        for v in [s.ls, s.period, s.ga] {
            scratch.give(v);
        }
    }
    // ∂k/∂log σ² = k; ∂r²/∂log ℓ_d = −2 s_d²; ∂(α − β)/∂log p_d = −(α − β);
    // ∂(α − β)/∂a_d = π/p_d = −∂(α − β)/∂b_d
    full[0] = var * value;
    for d in 0..dim {
        full[1 + d] *= -2.0;
        full[1 + dim + d] = -full[1 + dim + d];
    }
    if kind == KernelKind::Rq {
        full[1 + 2 * dim] = var * shape;
    }
    let mut ga_m = scratch.matrix(na, dim);
    let mut gb_m = scratch.matrix(nb, dim);
    for d in 0..dim {
        let f = PI / p[d];
        for i in 0..na {
            ga_m[(i, d)] = ga[d * aa.len + i] * f;
        }
        for j in 0..nb {
            gb_m[(j, d)] = -gb_rows[j * dim + d] * f;
        }
    }
    scratch.give(ga);
    scratch.give(gb_rows);
    aa.give(scratch);
    ab.give(scratch);
    Contraction {
        full,
        a: Some(ga_m),
        b: Some(gb_m),
    }
}
