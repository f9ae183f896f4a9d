//! What the likelihoods' predictive intervals share ([`super::Likelihood::predictive_interval`]):
//! expectations over the logarithm of a Gamma variable, and the search for a quantile of
//! a distribution function, continuous or on the counts.
//!
//! Both intervals reduce to E[Φ(…)] over s = log G, G ~ Gamma(a, 1): Student-t noise is a
//! scale mixture of normals (precision ~ Gamma), and a Poisson count's distribution
//! function is a Gamma variable's tail, P(Pois(λ) ≤ k) = P(Gamma(k + 1) > λ). In s the
//! density exp(a·s − eˢ)/Γ(a) is smooth with exponential tails, so the trapezoid rule
//! on a grid a fraction of its width apart converges geometrically.

use libm::lgamma as ln_gamma;

/// E[g(s)] for s = log G, G ~ Gamma(shape, 1), by the trapezoid rule.
#[derive(Clone, Debug)]
pub struct LogGamma {
    pub nodes: Vec<f64>,
    pub weights: Vec<f64>,
    /// The grid's step, relative to which a function is smooth enough to integrate.
    pub step: f64,
}

impl LogGamma {
    pub fn new(shape: f64) -> LogGamma {
        let a = shape;
        // the mode ln a, where the log density's curvature is −a: width 1/√a there;
        // the left tail falls as e^{a·s} (by e^{−32} at 32/a below), the right as
        // e^{−a(e^d − 1 − d)} at d above (by e^{−70} or more at 12 widths)
        let mode = a.ln();
        let width = 1.0 / a.sqrt();
        let lo = mode - (32.0 / a).max(12.0 * width);
        let hi = mode + 12.0 * width;
        let step = width.min(1.0) / 8.0;
        let n = ((hi - lo) / step).ceil() as usize + 1;
        let nodes: Vec<f64> = (0..n).map(|i| lo + i as f64 * step).collect();
        let log_norm = ln_gamma(a);
        let mut weights: Vec<f64> = nodes
            .iter()
            .map(|s| (a * s - s.exp() - log_norm).exp())
            .collect();
        // normalised, so that E[1] = 1 exactly
        let total: f64 = weights.iter().sum();
        weights.iter_mut().for_each(|w| *w /= total);
        LogGamma {
            nodes,
            weights,
            step,
        }
    }

    pub fn expect(&self, g: impl Fn(f64) -> f64) -> f64 {
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(s, w)| w * g(*s))
            .sum()
    }
}

/// The p-quantile of a continuous distribution function `cdf` (increasing from 0 to 1),
/// searched from `guess` with `scale` a rough width: bracketed by doubling steps, then
/// narrowed by the Illinois variant of regula falsi to a relative 1e-12.
pub fn continuous(cdf: impl Fn(f64) -> f64, p: f64, guess: f64, scale: f64) -> f64 {
    let scale = if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    };
    let g = |t: f64| cdf(t) - p;
    let (mut a, mut b) = (guess, guess);
    let (mut ga, mut gb) = (g(a), g(a));
    let mut step = scale;
    // a ≤ b with g(a) < 0 ≤ g(b)
    while ga >= 0.0 {
        b = a;
        gb = ga;
        a -= step;
        step *= 2.0;
        ga = g(a);
        if !a.is_finite() {
            return f64::NEG_INFINITY;
        }
    }
    step = scale;
    while gb < 0.0 {
        a = b;
        ga = gb;
        b += step;
        step *= 2.0;
        gb = g(b);
        if !b.is_finite() {
            return f64::INFINITY;
        }
    }
    let mut side = 0;
    for _ in 0..200 {
        if (b - a) <= 1e-12 * (a.abs().max(b.abs()).max(scale)) {
            break;
        }
        let mut c = (a * gb - b * ga) / (gb - ga);
        if !(c > a && c < b) {
            c = 0.5 * (a + b);
        }
        let gc = g(c);
        if gc < 0.0 {
            a = c;
            ga = gc;
            if side == -1 {
                gb *= 0.5;
            }
            side = -1;
        } else {
            b = c;
            gb = gc;
            if side == 1 {
                ga *= 0.5;
            }
            side = 1;
        }
    }
    0.5 * (a + b)
}

/// The smallest count k ≥ 0 with `cdf(k)` ≥ p (`cdf` increasing in k), by doubling and
/// bisection; infinity if none below 2⁵³.
pub fn counts(cdf: impl Fn(f64) -> f64, p: f64) -> f64 {
    if cdf(0.0) >= p {
        return 0.0;
    }
    // cdf(lo) < p ≤ cdf(hi)
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while cdf(hi) < p {
        lo = hi;
        hi *= 2.0;
        if hi > 9.007_199_254_740_992e15 {
            return f64::INFINITY;
        }
    }
    while hi - lo > 1.0 {
        let mid = (0.5 * (lo + hi)).floor();
        if cdf(mid) >= p {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}
