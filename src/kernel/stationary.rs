//! The fill of the non-SE kernels: a column of r² as the SE fill forms it, then the
//! kernel's profile κ(r) per entry (or a derivative of it, [`Entry`]). The Matérn
//! profiles need a square root and an exponential per entry: `sqrt` is one SIMD
//! instruction and [`exp_nonpositive`] has no branches or calls, so the loops stay in
//! SIMD lanes. rq's power goes through `ln_1p` and `exp`, scalar calls.

use super::KernelKind;
use multiversion::multiversion;

/// What `Ard::matrix_of` writes per entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Entry {
    /// k(a, b)
    Value,
    /// −2 ∂k/∂r², through which every derivative in ℓ and the points goes.
    Slope,
    /// ∂k/∂log α (rq).
    ShapeSlope,
}

/// e^x for the kernel's x = −r²/2 ≤ 0, without branches or calls so that the loop
/// around it runs in SIMD lanes (a call to libm's exp per entry was a sixth of a large
/// evaluation and kept the loop scalar). Within 1 ulp of `f64::exp` on [−708, 0]
/// (tested); 0 below −708, where e^x < 3.3·10⁻³⁰⁸ would be subnormal; NaN for NaN.
/// Plain operations only, never fused, so every compiled version gives the same bits.
#[inline(always)]
pub fn exp_nonpositive(x: f64) -> f64 {
    // 1.5·2⁵²: adding it rounds x·log₂e to the nearest integer n, which then sits in
    // the low bits of the sum
    const SHIFT: f64 = 6755399441055744.0;
    // ln 2 in two parts (fdlibm's bits): LN2_HI ends in 21 zero bits, so n·LN2_HI
    // is exact for |n| < 2²¹
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    let t = x * std::f64::consts::LOG2_E + SHIFT;
    let n = t - SHIFT;
    // |r| ≤ ln2/2, e^x = 2ⁿ e^r
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // e^r − 1 − r = r² Σ_{k≥2} r^(k−2)/k!, to degree 13 (the rest is below 5·10⁻¹⁸),
    // by Estrin's scheme: eight dependent steps instead of Horner's twenty-four
    const C: [f64; 12] = [
        0.5,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5_040.0,
        1.0 / 40_320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    let r2 = r * r;
    let r4 = r2 * r2;
    let pair = |k: usize| C[k] + C[k + 1] * r;
    let q0 = pair(0) + pair(2) * r2;
    let q1 = pair(4) + pair(6) * r2;
    let q2 = pair(8) + pair(10) * r2;
    let s = (q0 + q1 * r4) + q2 * (r4 * r4);
    let er = 1.0 + (r + r2 * s);
    // 2ⁿ from its exponent bits; n ≥ −1021 wherever it is used
    let k = (t.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let two_n = f64::from_bits((k.wrapping_add(1023) as u64).wrapping_shl(52));
    if x < -708.0 { 0.0 } else { er * two_n }
}

const SQRT3: f64 = 1.732_050_807_568_877_2;
const SQRT5: f64 = 2.236_067_977_499_79;

/// r² of column j into `col`, summed over d in order as the SE fill does.
#[inline(always)]
fn squared_distances(col: &mut [f64], sa: &[f64], bj: &[f64]) {
    let na = col.len();
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
}

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
    squared_distances(col, sa, bj);
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

/// Column j of a Matérn kernel's slope (−2∂k/∂r², as [`fill_column`] writes it for
/// [`Entry::Slope`]) into `slope` and of its value (as for [`Entry::Value`]) into
/// `value`, from one square root and one exponential per entry: a term of a sum, whose
/// K(A, B) is not at hand, needs both for its contraction. The same bits as the two
/// fills. Not for SE (its slope is its value) nor rq (scalar calls either way).
#[multiversion(targets = "simd")]
pub(super) fn fill_slope_and_value_column(
    slope: &mut [f64],
    value: &mut [f64],
    sa: &[f64],
    bj: &[f64],
    sf2: f64,
    kind: KernelKind,
) {
    squared_distances(slope, sa, bj);
    let pairs = slope.iter_mut().zip(value.iter_mut());
    match kind {
        KernelKind::Matern12 => pairs.for_each(|(s, v)| {
            let r = s.sqrt();
            let e = exp_nonpositive(-r);
            *v = sf2 * e;
            let q = sf2 * e / r;
            *s = if r > 0.0 { q } else { 0.0 };
        }),
        KernelKind::Matern32 => pairs.for_each(|(s, v)| {
            let t = SQRT3 * s.sqrt();
            let e = exp_nonpositive(-t);
            *v = sf2 * (1.0 + t) * e;
            *s = 3.0 * sf2 * e;
        }),
        KernelKind::Matern52 => pairs.for_each(|(s, v)| {
            let t = SQRT5 * s.sqrt();
            let e = exp_nonpositive(-t);
            *v = sf2 * (1.0 + t + t * t / 3.0) * e;
            *s = (5.0 / 3.0) * sf2 * (1.0 + t) * e;
        }),
        KernelKind::Se | KernelKind::Rq => unreachable!("a Matérn kernel's fill"),
    }
}
