//! Mean and spread of a column, computed so that they neither overflow nor underflow,
//! and what makes a target column unusable for a fit.
//!
//! The values are divided by a power of two near their largest magnitude before they
//! are summed and squared: a target near 1e300 (whose squares overflow) or near 1e-300
//! (whose squares underflow) gets its true mean and standard deviation. Dividing by a
//! power of two is exact, so for every column whose sums and squares fit in f64 the
//! results are bit for bit those of the plain formulas.

/// Mean and sample standard deviation (n − 1 in the denominator; n = 1 gives 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    pub mean: f64,
    pub sd: f64,
}

/// The [`Moments`] of finite values (an empty column has mean 0 and sd 0).
pub fn moments<I>(values: I) -> Moments
where
    I: Iterator<Item = f64> + Clone,
{
    let (n, largest) = values
        .clone()
        .fold((0usize, 0.0f64), |(n, m), v| (n + 1, m.max(v.abs())));
    if n == 0 || largest == 0.0 {
        return Moments { mean: 0.0, sd: 0.0 };
    }
    let s = power_of_two_near(largest);
    let count = n as f64;
    let mean_s = values.clone().map(|v| v / s).sum::<f64>() / count;
    let squares: f64 = values.map(|v| (v / s - mean_s).powi(2)).sum();
    Moments {
        mean: mean_s * s,
        sd: (squares / f64::max(count - 1.0, 1.0)).sqrt() * s,
    }
}

/// Σ v², as (q, s) with Σ v² = q·s² and s a power of two, so that neither the squares
/// nor their sum overflow or underflow (and q·s² is bit for bit the plain sum when it
/// fits in f64). (0, 1) for no values or only zeros.
pub fn sum_of_squares<I>(values: I) -> (f64, f64)
where
    I: Iterator<Item = f64> + Clone,
{
    let largest = values.clone().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest == 0.0 || !largest.is_finite() {
        return (values.map(|v| v * v).sum(), 1.0);
    }
    let s = power_of_two_near(largest);
    (values.map(|v| (v / s).powi(2)).sum(), s)
}

/// 2^e with 2^e ≤ x < 2^(e+1) for a normal x (dividing by it is exact); x itself
/// for a subnormal one.
pub fn power_of_two_near(x: f64) -> f64 {
    let exponent = (x.to_bits() >> 52) & 0x7ff;
    if exponent == 0 {
        x
    } else {
        f64::from_bits(exponent << 52)
    }
}

/// The largest standard deviation whose square (a variance in the target's units, as
/// every prediction reports) is a finite f64.
pub const MAX_TARGET_SD: f64 = 1.3407807929942596e154; // sqrt(f64::MAX)
/// The smallest standard deviation whose square is a normal (full-precision) f64.
pub const MIN_TARGET_SD: f64 = 1.4916681462400413e-154; // sqrt(f64::MIN_POSITIVE)

/// Why a fit cannot use this target, or None: a constant target has nothing to learn
/// (its noise variance goes to zero and its NMSE divides by zero); one whose variance
/// does not fit in f64 gives infinite or zero predictive variances.
pub fn target_problem(y: &[f64]) -> Option<String> {
    let Moments { sd, .. } = moments(y.iter().copied());
    let first = *y.first()?;
    if y.len() < 2 {
        return Some(format!(
            "has a single row (value {first}): a fit needs at least two rows"
        ));
    }
    if y.iter().all(|&v| v == first) {
        return Some(format!(
            "is constant (every value is {first}): there is nothing to learn; choose the \
             column to predict with --target (a session: `target = ...`)"
        ));
    }
    let power = |sd: f64| format!("1e{}", sd.log10().floor());
    if sd > MAX_TARGET_SD {
        return Some(format!(
            "spreads too widely for double precision: its standard deviation is {sd:.3e}, \
             whose square (the unit of every predictive variance) overflows; divide the \
             column by a power of ten (e.g. {}) and fit again",
            power(sd)
        ));
    }
    if sd < MIN_TARGET_SD {
        return Some(format!(
            "varies too little for double precision: its standard deviation is {sd:.3e}, \
             whose square (the unit of every predictive variance) underflows; multiply the \
             column by a power of ten (e.g. 1e{}) and fit again",
            -sd.log10().floor()
        ));
    }
    None
}
