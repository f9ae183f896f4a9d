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

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain two-pass formulas, as `train::prepare` computed them before.
    fn plain(v: &[f64]) -> Moments {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let ss: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
        Moments {
            mean,
            sd: (ss / f64::max(n - 1.0, 1.0)).sqrt(),
        }
    }

    #[test]
    fn equals_the_plain_formulas_bit_for_bit_on_ordinary_data() {
        let v: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 1013) as f64 * 0.37 - 120.0)
            .collect();
        assert_eq!(moments(v.iter().copied()), plain(&v));
        let w: Vec<f64> = v.iter().map(|x| x * 1e-9 + 3.0).collect();
        assert_eq!(moments(w.iter().copied()), plain(&w));
    }

    #[test]
    fn huge_and_tiny_values_keep_their_true_moments() {
        let base = [1.0, 2.0, 4.0, 7.0];
        let want = plain(&base);
        for scale in [1e300, 1e-300, 1e200, 1e-200] {
            let v: Vec<f64> = base.iter().map(|x| x * scale).collect();
            let got = moments(v.iter().copied());
            assert!((got.mean / scale - want.mean).abs() < 1e-14, "{scale}");
            assert!((got.sd / scale - want.sd).abs() < 1e-14, "{scale}");
        }
        // the plain formulas fail on both
        assert!(!plain(&[1e300, 2e300]).sd.is_finite());
        assert_eq!(plain(&[1e-300, 2e-300]).sd, 0.0);
    }

    #[test]
    fn sums_of_squares_are_plain_when_they_fit_and_scaled_when_not() {
        let v = [0.3, -1.7, 2.25, 1e-3];
        let (q, s) = sum_of_squares(v.iter().copied());
        assert_eq!(q * s * s, v.iter().map(|x| x * x).sum::<f64>());
        let big = [3e200, -4e200];
        let (q, s) = sum_of_squares(big.iter().copied());
        assert!(
            ((q / 25.0).sqrt() * s / 1e200 - 1.0).abs() < 1e-15,
            "{q} {s}"
        );
        assert_eq!(sum_of_squares([0.0, 0.0].into_iter()), (0.0, 1.0));
    }

    #[test]
    fn constant_huge_and_tiny_targets_are_refused_with_what_to_do() {
        let c = target_problem(&[3.5, 3.5, 3.5]).expect("constant");
        assert!(c.contains("constant") && c.contains("3.5"), "{c}");
        let h = target_problem(&[1e300, 2e300, 1.5e300]).expect("huge");
        assert!(h.contains("overflows") && h.contains("divide"), "{h}");
        let t = target_problem(&[1e-300, 2e-300, 1.5e-300]).expect("tiny");
        assert!(t.contains("underflows") && t.contains("multiply"), "{t}");
        assert_eq!(target_problem(&[1e150, 2e150, 0.0]), None);
        assert_eq!(target_problem(&[1e-150, 2e-150, 0.0]), None);
        assert_eq!(target_problem(&[0.0, 1.0]), None);
        let one = target_problem(&[2.5]).expect("one row");
        assert!(
            one.contains("single row") && !one.contains("constant"),
            "{one}"
        );
    }
}
