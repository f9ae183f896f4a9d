//! The fill of the non-SE kernels: a column of r² as the SE fill forms it, then the
//! kernel's profile κ(r) per entry (or a derivative of it, [`Entry`]). The Matérn
//! profiles need a square root and an exponential per entry: `sqrt` is one SIMD
//! instruction and [`exp_nonpositive`] has no branches or calls, so the loops stay in
//! SIMD lanes. rq's power goes through `ln_1p` and `exp`, scalar calls.

use super::KernelKind;
use super::ard::{Entry, exp_nonpositive};
use multiversion::multiversion;

const SQRT3: f64 = 1.732_050_807_568_877_2;
const SQRT5: f64 = 2.236_067_977_499_79;

/// Column j of the `entry` matrix of a non-SE kernel into `col`; `sa` holds A scaled
/// (one input dimension after another), `bj` point j of B scaled.
#[multiversion(targets = "simd")]
pub(super) fn fill_column(
    col: &mut [f64],
    sa: &[f64],
    bj: &[f64],
    sf2: f64,
    kind: KernelKind,
    rq_alpha: f64,
    entry: Entry,
) {
    let na = col.len();
    // r², summed over d in order as the SE fill does
    let mut dims = bj.iter().zip(sa.chunks(na.max(1)));
    match dims.next() {
        Some((q, ad)) => col.iter_mut().zip(ad).for_each(|(r2, p)| {
            let t = p - q;
            *r2 = t * t;
        }),
        None => col.fill(0.0),
    }
    for (q, ad) in dims {
        for (r2, p) in col.iter_mut().zip(ad) {
            let t = p - q;
            *r2 += t * t;
        }
    }
    // κ as a function of r (Matérn) or r² (rq); each arm its own loop
    match (kind, entry) {
        (KernelKind::Matern12, Entry::Value) => col.iter_mut().for_each(|v| {
            *v = sf2 * exp_nonpositive(-v.sqrt());
        }),
        // −2∂k/∂r² = −k'(r)/r = σ0² e^{−r}/r; 0 where r = 0 (k is not differentiable
        // there; its ℓ-derivative is 0 and 0 is a subgradient in the points)
        (KernelKind::Matern12, Entry::Slope) => col.iter_mut().for_each(|v| {
            let r = v.sqrt();
            let s = sf2 * exp_nonpositive(-r) / r;
            *v = if r > 0.0 { s } else { 0.0 };
        }),
        (KernelKind::Matern32, Entry::Value) => col.iter_mut().for_each(|v| {
            let t = SQRT3 * v.sqrt();
            *v = sf2 * (1.0 + t) * exp_nonpositive(-t);
        }),
        // −k'(r)/r = 3σ0² e^{−√3 r}
        (KernelKind::Matern32, Entry::Slope) => col.iter_mut().for_each(|v| {
            *v = 3.0 * sf2 * exp_nonpositive(-SQRT3 * v.sqrt());
        }),
        (KernelKind::Matern52, Entry::Value) => col.iter_mut().for_each(|v| {
            let t = SQRT5 * v.sqrt();
            *v = sf2 * (1.0 + t + t * t / 3.0) * exp_nonpositive(-t);
        }),
        // −k'(r)/r = (5/3) σ0² (1 + √5 r) e^{−√5 r}
        (KernelKind::Matern52, Entry::Slope) => col.iter_mut().for_each(|v| {
            let t = SQRT5 * v.sqrt();
            *v = (5.0 / 3.0) * sf2 * (1.0 + t) * exp_nonpositive(-t);
        }),
        // k = σ0² u^{−α}, u = 1 + r²/(2α)
        (KernelKind::Rq, Entry::Value) => col.iter_mut().for_each(|v| {
            *v = sf2 * (-rq_alpha * (*v / (2.0 * rq_alpha)).ln_1p()).exp();
        }),
        // −2∂k/∂r² = σ0² u^{−α−1} = k/u
        (KernelKind::Rq, Entry::Slope) => col.iter_mut().for_each(|v| {
            let x = *v / (2.0 * rq_alpha);
            *v = sf2 * (-(rq_alpha + 1.0) * x.ln_1p()).exp();
        }),
        // ∂k/∂log α = k (r²/(2u) − α log u)
        (KernelKind::Rq, Entry::ShapeSlope) => col.iter_mut().for_each(|v| {
            let x = *v / (2.0 * rq_alpha);
            let log_u = x.ln_1p();
            let k = sf2 * (-rq_alpha * log_u).exp();
            *v = k * (*v / (2.0 * (1.0 + x)) - rq_alpha * log_u);
        }),
        // the SE kernel is filled by its own code; a shape slope of a kernel without
        // a shape is zero
        (KernelKind::Se, Entry::Value | Entry::Slope) => col.iter_mut().for_each(|v| {
            *v = sf2 * exp_nonpositive(-0.5 * *v);
        }),
        (_, Entry::ShapeSlope) => col.fill(0.0),
    }
}
