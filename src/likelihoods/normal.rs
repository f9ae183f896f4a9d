//! The standard normal's density and distribution function in the forms the probit
//! likelihood needs far into either tail: `log Φ(t)` and the ratio `φ(t)/Φ(t)` (the
//! inverse Mills ratio), which `ln(Φ(t))` and `φ(t)/Φ(t)` lose below t ≈ −38 when Φ
//! underflows.

use libm::erfc;

pub const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Below this Φ(t) is formed from its asymptotic series instead of erfc.
const TAIL: f64 = -35.0;

/// φ(t), the standard normal density.
pub fn pdf(t: f64) -> f64 {
    (-0.5 * t * t - LN_SQRT_2PI).exp()
}

/// Φ(t) = ½ erfc(−t/√2), accurate in both tails (no 1 − small).
pub fn cdf(t: f64) -> f64 {
    0.5 * erfc(-t / std::f64::consts::SQRT_2)
}

/// The factor Φ(t) = φ(t)/(−t) · s(t) of the lower tail's asymptotic series,
/// `s = Σ_k (−1)^k (2k−1)!!/t^{2k}` to k = 7 (the next term is below 1e-18 at
/// t ≤ −35, where it is used).
pub fn tail_series(t: f64) -> f64 {
    let u = 1.0 / (t * t);
    1.0 - u
        * (1.0 - u * (3.0 - u * (15.0 - u * (105.0 - u * (945.0 - u * (10395.0 - u * 135135.0))))))
}

/// log Φ(t).
pub fn log_cdf(t: f64) -> f64 {
    if t >= TAIL {
        cdf(t).ln()
    } else {
        -0.5 * t * t - LN_SQRT_2PI - (-t).ln() + tail_series(t).ln()
    }
}

/// φ(t)/Φ(t): → −t as t → −∞, → 0 as t → ∞.
pub fn pdf_over_cdf(t: f64) -> f64 {
    if t >= TAIL {
        pdf(t) / cdf(t)
    } else {
        -t / tail_series(t)
    }
}
