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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::likelihoods::normal;

    #[test]
    fn log_gamma_moments_are_the_digamma_and_trigamma() {
        use statrs::function::gamma::digamma;
        for a in [0.3, 1.0, 2.5, 40.0, 5000.0] {
            let r = LogGamma::new(a);
            let mean = r.expect(|s| s);
            assert!((mean - digamma(a)).abs() < 1e-10, "a = {a}: {mean}");
            // E[G] = a, E[G²] = a(a + 1)
            assert!((r.expect(f64::exp) / a - 1.0).abs() < 1e-10, "a = {a}");
            assert!((r.expect(|s| (2.0 * s).exp()) / (a * (a + 1.0)) - 1.0).abs() < 1e-10);
        }
    }

    #[test]
    fn quantiles_of_known_distributions() {
        // the normal's 97.5% point, from far away, and with a wrong scale
        for (guess, scale) in [(0.0, 1.0), (50.0, 0.01), (-3.0, 1e3)] {
            let q = continuous(normal::cdf, 0.975, guess, scale);
            assert!((q - 1.959_963_984_540_054).abs() < 1e-10, "{q}");
        }
        // a geometric count: P(K ≤ k) = 1 − 0.5^{k+1}
        let geometric = |k: f64| 1.0 - 0.5_f64.powf(k + 1.0);
        assert_eq!(counts(geometric, 0.5), 0.0);
        assert_eq!(counts(geometric, 0.75), 1.0);
        assert_eq!(counts(geometric, 0.76), 2.0);
        assert_eq!(counts(geometric, 1.0 - 0.5_f64.powi(40)), 39.0);
    }

    use crate::likelihoods::{GaussHermite, Likelihood, Poisson, StudentT};
    use rand::SeedableRng;
    use rand_distr::Distribution;

    /// The share of `draws` at or below t.
    fn below(draws: &[f64], t: f64) -> f64 {
        draws.iter().filter(|y| **y <= t).count() as f64 / draws.len() as f64
    }

    const DRAWS: usize = 400_000;

    fn quad() -> GaussHermite {
        GaussHermite::new(20).unwrap()
    }

    /// Each end of the 95% interval against the distribution function of draws of
    /// f ~ N(mean, var), y ~ Poisson(e^f): the lower end is the smallest count with at
    /// least 2.5% below or at it, the upper with 97.5%, within 5 standard errors.
    #[test]
    fn poisson_interval_matches_monte_carlo() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        // small counts, a wide and a narrow latent (the two ways of computing it), zero
        for (mean, var) in [
            (0.5, 0.2),
            (200f64.ln(), 0.5),
            (50f64.ln(), 1e-4),
            (-1.0, 2.0),
            (3.0, 0.0),
        ] {
            let normal = rand_distr::Normal::new(mean, f64::sqrt(var)).unwrap();
            let draws: Vec<f64> = (0..DRAWS)
                .map(|_| {
                    let rate: f64 = normal.sample(&mut rng).exp();
                    rand_distr::Poisson::new(rate).unwrap().sample(&mut rng)
                })
                .collect();
            let (lo, hi) = Poisson
                .predictive_interval(mean, var, 0.95, &quad())
                .expect("an interval");
            for (k, p) in [(lo, 0.025), (hi, 0.975)] {
                let slack = 5.0 * (p * (1.0 - p) / DRAWS as f64).sqrt();
                let what = format!("mean {mean}, var {var}: {k} for {p}");
                assert!(
                    below(&draws, k) >= p - slack,
                    "{what}: {}",
                    below(&draws, k)
                );
                assert!(
                    k == 0.0 || below(&draws, k - 1.0) < p + slack,
                    "{what}: {}",
                    below(&draws, k - 1.0)
                );
                // and its distribution function by either route agrees with the draws
                let f = super::super::poisson::predictive_cdf(k, mean, var, &quad());
                assert!((f - below(&draws, k)).abs() < slack, "{what}: cdf {f}");
            }
        }
    }

    /// Where the Poisson's two ways of computing its distribution function meet, they
    /// agree.
    #[test]
    fn poisson_cdf_routes_agree_at_the_switch() {
        use super::super::poisson::predictive_cdf;
        for k in [0.0, 3.0, 40.0, 900.0] {
            let step = LogGamma::new(k + 1.0).step;
            let mean = (k + 1.0f64).ln();
            for t in [k - 2.0 * (k + 1.0).sqrt(), k, k + 2.0 * (k + 1.0).sqrt()] {
                let t = t.max(0.0).floor();
                let by_f = predictive_cdf(t, mean, (1.999 * step).powi(2), &quad());
                let by_g = predictive_cdf(t, mean, (2.001 * step).powi(2), &quad());
                assert!((by_f - by_g).abs() < 2e-4, "k {k}, t {t}: {by_f} {by_g}");
            }
        }
    }

    /// The Student-t interval's ends against draws of f + σ·t_ν, and the closed forms
    /// where there is one: the Cauchy (ν = 1, no latent variance) and the normal limit.
    #[test]
    fn student_t_interval_matches_monte_carlo_and_closed_forms() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        for (mean, var, scale, df) in [
            (0.3, 0.04, 0.5, 3.0),
            (-2.0, 4.0, 0.1, 1.5),
            (1.0, 0.5, 2.0, 0.7),
            (0.0, 1e-6, 1.0, 25.0),
        ] {
            let lik = StudentT { scale, df };
            let normal = rand_distr::Normal::new(mean, f64::sqrt(var)).unwrap();
            let t = rand_distr::StudentT::new(df).unwrap();
            let draws: Vec<f64> = (0..DRAWS)
                .map(|_| normal.sample(&mut rng) + scale * t.sample(&mut rng))
                .collect();
            let (lo, hi) = lik.predictive_interval(mean, var, 0.95, &quad()).unwrap();
            for (y, p) in [(lo, 0.025), (hi, 0.975)] {
                let slack = 5.0 * (p * (1.0 - p) / DRAWS as f64).sqrt();
                let got = below(&draws, y);
                assert!(
                    (got - p).abs() < slack,
                    "{mean} {var} {scale} {df}: {y} has {got}"
                );
            }
        }
        // Cauchy: mean + σ tan(π(p − ½))
        let cauchy = StudentT {
            scale: 0.7,
            df: 1.0,
        };
        let (lo, hi) = cauchy.predictive_interval(2.0, 0.0, 0.9, &quad()).unwrap();
        let q = 0.7 * (std::f64::consts::PI * 0.45).tan();
        assert!(
            (lo - (2.0 - q)).abs() < 1e-8 && (hi - (2.0 + q)).abs() < 1e-8,
            "{lo} {hi}"
        );
        // ν → ∞: the normal N(mean, var + σ²)
        let (lo, hi) = StudentT {
            scale: 0.6,
            df: 1e6,
        }
        .predictive_interval(0.0, 0.64, 0.95, &quad())
        .unwrap();
        let z = 1.959_963_984_540_054;
        assert!((lo + z).abs() < 1e-5 && (hi - z).abs() < 1e-5, "{lo} {hi}");
    }
}
