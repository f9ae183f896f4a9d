use sgpw::likelihoods::normal;
use sgpw::likelihoods::quantile::*;

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

use rand::SeedableRng;
use rand_distr::Distribution;
use sgpw::likelihoods::{GaussHermite, Likelihood, Poisson, StudentT};

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
            let f = sgpw::likelihoods::poisson::predictive_cdf(k, mean, var, &quad());
            assert!((f - below(&draws, k)).abs() < slack, "{what}: cdf {f}");
        }
    }
}

/// Where the Poisson's two ways of computing its distribution function meet, they
/// agree.
#[test]
fn poisson_cdf_routes_agree_at_the_switch() {
    use sgpw::likelihoods::poisson::predictive_cdf;
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
