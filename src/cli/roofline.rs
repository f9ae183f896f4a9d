//! `sgpw bench --roofline`: one evaluation's time against its arithmetic at the rates
//! this machine reaches with the core's own kernels. The rates are measured as the core
//! runs them — faer's sequential kernels on blocks of `collapsed::BLOCK` columns, in
//! the stripes of `linalg::map_ordered` on the same threads — and the arithmetic is the
//! method's own count (`Method::work`, from `collapsed::Work` and the family's).

use crate::collapsed::{BLOCK, Work};
use crate::exec::Par;
use crate::linalg;
use nalgebra::DMatrix;
use std::time::Instant;

/// Multiply-adds per second of the core's three block kernels.
#[derive(Clone, Copy, Debug)]
pub struct Rates {
    /// C = A·B, A m×m, B a block of columns.
    pub gemm: f64,
    /// B ← L⁻¹B, L lower triangular m×m.
    pub trsm: f64,
    /// The lower triangle of C += A·Bᵀ (A, B blocks of columns).
    pub syrk: f64,
}

/// The median of `reps` timings of `f` (after one untimed call), in seconds.
fn median_seconds(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The rates of the three kernels on n columns of m rows, cut into stripes and blocks
/// as the core cuts them, on the threads of `par` (median of `reps` passes each).
pub fn measure(n: usize, m: usize, par: Par, reps: usize) -> Rates {
    // Values of order one that stay so under repeated solves: L = I + small entries
    // below the diagonal, so that no denormal slows a kernel down.
    let l = DMatrix::from_fn(m, m, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Greater => ((i * 7 + j * 3) % 11) as f64 * 1e-3 / m as f64,
        std::cmp::Ordering::Less => 0.0,
    });
    let a = DMatrix::from_fn(m, m, |i, j| ((i * 5 + j * 11) % 13) as f64 / 13.0 - 0.5);
    let mut v = DMatrix::from_fn(m, n, |i, j| ((i * 3 + j * 17) % 19) as f64 / 19.0 - 0.5);
    let mut out = DMatrix::zeros(m, n);
    let len = linalg::stripe_len(n);
    let (nf, mf) = (n as f64, m as f64);
    let tri = nf * mf * (mf + 1.0) / 2.0;

    let gemm = median_seconds(reps, || {
        let work: Vec<(&[f64], &mut [f64])> = v
            .as_slice()
            .chunks(m * len)
            .zip(out.as_mut_slice().chunks_mut(m * len))
            .collect();
        linalg::map_ordered(par, work, |(vs, os)| {
            for (vb, ob) in vs.chunks(m * BLOCK).zip(os.chunks_mut(m * BLOCK)) {
                linalg::block_mul(
                    linalg::block_mut(ob, m),
                    linalg::view(&a),
                    linalg::block(vb, m),
                );
            }
        });
    });
    let trsm = median_seconds(reps, || {
        let work: Vec<&mut [f64]> = v.as_mut_slice().chunks_mut(m * len).collect();
        linalg::map_ordered(par, work, |vs| {
            for vb in vs.chunks_mut(m * BLOCK) {
                linalg::block_solve_lower(&l, linalg::block_mut(vb, m));
            }
        });
    });
    let syrk = median_seconds(reps, || {
        let work: Vec<&[f64]> = v.as_slice().chunks(m * len).collect();
        linalg::map_ordered(par, work, |vs| {
            let mut c = DMatrix::zeros(m, m);
            for vb in vs.chunks(m * BLOCK) {
                let b = linalg::block(vb, m);
                linalg::block_add_nt_lower(&mut c, b, b, 1.0);
            }
            c
        });
    });
    Rates {
        gemm: nf * mf * mf / gemm,
        trsm: tri / trsm,
        syrk: tri / syrk,
    }
}

/// Seconds the arithmetic of `w` takes at `r`: each O(n·m²) kind at its own rate,
/// everything else (O(m³), O(n·m), the family's O(n·m·D)) at the product's rate.
pub fn arithmetic_seconds(w: &Work, r: &Rates) -> f64 {
    w.gemm / r.gemm + w.trsm / r.trsm + w.syrk / r.syrk + (w.small + w.vector + w.features) / r.gemm
}

/// What `sgpw bench --roofline` prints.
pub struct Report {
    pub seconds: f64,
    pub rates: Rates,
    pub work: Work,
    pub arithmetic: f64,
}

impl Report {
    pub fn ratio(&self) -> f64 {
        self.seconds / self.arithmetic
    }
}

/// Set a median evaluation time against its arithmetic at rates measured now.
pub fn report(seconds: f64, work: Work, n: usize, m: usize, par: Par) -> Report {
    let rates = measure(n, m, par, 7);
    Report {
        seconds,
        rates,
        work,
        arithmetic: arithmetic_seconds(&work, &rates),
    }
}
