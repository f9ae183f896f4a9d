//! A kernel expression's default start from the data ([`Start::from_data`]): what every
//! part starts from where the expression gives no value. The signal variance and the
//! lengthscales are the caller's (docs/methods.md §0.4's start, `methods::hyper`, so a
//! plain kernel and a part start alike); this file adds what only parts need: each
//! input's mean square (a linear part's scale) and a period per input, the data's
//! dominant period where it has a clear one.

use super::Start;
use nalgebra::DMatrix;

/// The most rows the period search reads (an even stride through larger data).
const PERIOD_ROWS: usize = 4000;
/// The candidate frequencies of the period search.
const PERIOD_GRID: usize = 2000;
/// A peak counts as the dominant period when its power is at least this many times the
/// median power of the grid; else the stated default ([`default_period`]). Noise alone
/// gives exponentially distributed powers, whose largest of 2000 is about 11 times
/// their median; 20 leaves a margin.
const PEAK_OVER_MEDIAN: f64 = 20.0;

impl Start {
    /// The start of a kernel on inputs `columns` (the rows of `x`, model units) with
    /// targets `y`: the variance `variance` to share among summands, stationary parts'
    /// lengthscales `lengthscales` (one per input), the inputs' mean squares, and per
    /// input the dominant period of `y` along it ([`dominant_period`]) when `periods`
    /// (the expression has a periodic part, [`searches_periods`]), else the stated
    /// default ([`default_period`]), which no part reads: the search reads up to 4000
    /// rows at 2000 frequencies per input (1.8 CPU s on elevators' 17 inputs, a third
    /// of a `linear + matern52` fit's).
    pub fn from_data(
        columns: Vec<String>,
        x: &DMatrix<f64>,
        y: &[f64],
        (variance, lengthscales): (f64, Vec<f64>),
        periods: bool,
    ) -> Start {
        let n = x.nrows().max(1) as f64;
        let mean_squares = (0..x.ncols())
            .map(|c| (x.column(c).norm_squared() / n).max(1e-12))
            .collect();
        let periods = (0..x.ncols())
            .map(|c| {
                let xc: Vec<f64> = x.column(c).iter().copied().collect();
                let found = if periods {
                    dominant_period(&xc, y)
                } else {
                    None
                };
                found.unwrap_or_else(|| default_period(&xc))
            })
            .collect();
        Start {
            columns,
            variance,
            lengthscales,
            periods,
            mean_squares,
        }
    }
}

/// Whether the kernel `expression` has a part that starts from the data's periods (a
/// `periodic` part): what [`Start::from_data`] searches for. An expression that does not
/// parse says yes (its build reports the error).
pub fn searches_periods(expression: &str) -> bool {
    super::expression::KernelExpr::parse(expression)
        .map_or(true, |e| e.parts().iter().any(|p| p.name == "periodic"))
}

/// The period a periodic part starts from when the data show none: a quarter of the
/// input's range (1 for a constant input), so a few cycles span the data.
pub fn default_period(x: &[f64]) -> f64 {
    let (lo, hi) = min_max(x);
    if hi > lo { 0.25 * (hi - lo) } else { 1.0 }
}

/// The period of the strongest sinusoid in `y` along input `x`, if one stands out: the
/// peak of the periodogram |Σ_i r_i e^(−2πi f x_i)|² of the residuals r of a quadratic
/// fit (so a trend is not taken for a long period), over frequencies from 2/range (two
/// cycles in the data) to half the reciprocal of the median spacing of the sorted
/// inputs (the Nyquist frequency of regular samples). None when the inputs are
/// constant or too few, or the peak is not [`PEAK_OVER_MEDIAN`] times the median power.
pub fn dominant_period(x: &[f64], y: &[f64]) -> Option<f64> {
    let stride = x.len().div_ceil(PERIOD_ROWS).max(1);
    let pts: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .step_by(stride)
        .map(|(a, b)| (*a, *b))
        .collect();
    if pts.len() < 8 {
        return None;
    }
    let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let (lo, hi) = min_max(&xs);
    let range = hi - lo;
    if !(range > 0.0 && range.is_finite()) {
        return None;
    }
    let mut sorted = xs.clone();
    sorted.sort_by(f64::total_cmp);
    let mut gaps: Vec<f64> = sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 0.0)
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    let spacing = gaps[gaps.len() / 2];
    let (f_lo, f_hi) = (2.0 / range, 0.5 / spacing);
    if f_hi <= f_lo {
        return None;
    }
    // residuals of the least-squares quadratic in the centred, scaled input
    let mid = 0.5 * (lo + hi);
    let u: Vec<f64> = xs.iter().map(|v| (v - mid) / range).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let r = quadratic_residuals(&u, &ys)?;
    let power = |f: f64| {
        let (mut c, mut s) = (0.0, 0.0);
        for (xi, ri) in xs.iter().zip(&r) {
            let a = 2.0 * std::f64::consts::PI * f * (xi - lo);
            c += ri * a.cos();
            s += ri * a.sin();
        }
        c * c + s * s
    };
    let freqs: Vec<f64> = (0..PERIOD_GRID)
        .map(|i| f_lo + (f_hi - f_lo) * i as f64 / (PERIOD_GRID - 1) as f64)
        .collect();
    let powers: Vec<f64> = freqs.iter().map(|f| power(*f)).collect();
    let (best, peak) = powers
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, p)| (i, *p))?;
    let mut sorted_p = powers.clone();
    sorted_p.sort_by(f64::total_cmp);
    let median = sorted_p[sorted_p.len() / 2];
    (peak.is_finite() && peak > PEAK_OVER_MEDIAN * median && peak > 0.0).then(|| 1.0 / freqs[best])
}

fn min_max(x: &[f64]) -> (f64, f64) {
    x.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        })
}

/// y minus its least-squares fit a + b u + c u² (None if the normal equations are
/// singular: fewer than three distinct inputs).
fn quadratic_residuals(u: &[f64], y: &[f64]) -> Option<Vec<f64>> {
    let design = DMatrix::from_fn(u.len(), 3, |i, j| u[i].powi(j as i32));
    let gram = design.transpose() * &design;
    let rhs = design.transpose() * nalgebra::DVector::from_column_slice(y);
    let coef = gram.cholesky()?.solve(&rhs);
    Some(
        u.iter()
            .zip(y)
            .map(|(ui, yi)| yi - (coef[0] + coef[1] * ui + coef[2] * ui * ui))
            .collect(),
    )
}
