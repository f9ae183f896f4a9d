use nalgebra::DMatrix;
use sgpw::kernel::Start;
use sgpw::kernel::start::*;

/// A yearly cycle on a quadratic trend, sampled monthly over 40 years with noise:
/// the period found is the year's, not the trend's length.
#[test]
fn the_dominant_period_is_the_cycle_not_the_trend() {
    let x: Vec<f64> = (0..480).map(|i| 1960.0 + i as f64 / 12.0).collect();
    let y: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let s = t - 1960.0;
            0.02 * s * s
                + 1.3 * s
                + 3.0 * (2.0 * std::f64::consts::PI * t).sin()
                + 0.5 * ((i * 7919 % 101) as f64 / 101.0 - 0.5)
        })
        .collect();
    let p = dominant_period(&x, &y).expect("a clear cycle");
    assert!((p - 1.0).abs() < 0.01, "{p}");
}

/// Noise alone has no dominant period: the start falls back to a quarter of the range.
#[test]
fn noise_alone_gives_the_stated_default() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let x: Vec<f64> = (0..300).map(|i| i as f64 * 0.1).collect();
    let y: Vec<f64> = (0..300).map(|_| rng.random::<f64>() - 0.5).collect();
    assert_eq!(dominant_period(&x, &y), None);
    let xm = DMatrix::from_column_slice(300, 1, &x);
    let s = Start::from_data(vec!["t".into()], &xm, &y, (2.0, vec![3.0]), true);
    assert!((s.periods[0] - 0.25 * 29.9).abs() < 1e-12);
    assert_eq!(s.variance, 2.0);
    assert_eq!(s.lengthscales, [3.0]);
}

/// The period search runs only for an expression with a periodic part: without one
/// the periods are the stated default even where the data have a clear cycle.
#[test]
fn the_period_search_runs_only_for_a_periodic_part() {
    assert!(searches_periods("se + se * periodic(period=1) + rq"));
    assert!(searches_periods(
        "changepoints(se, periodic, locations=[1])"
    ));
    assert!(!searches_periods("linear + matern52"));
    assert!(!searches_periods("se(dims=[0]) * matern32(dims=[1])"));
    let t: Vec<f64> = (0..240).map(|i| 1990.0 + i as f64 / 12.0).collect();
    let y: Vec<f64> = t
        .iter()
        .map(|t| (2.0 * std::f64::consts::PI * t).sin())
        .collect();
    let x = DMatrix::from_column_slice(240, 1, &t);
    let start = |periods| Start::from_data(vec!["t".into()], &x, &y, (1.0, vec![1.0]), periods);
    assert!((start(true).periods[0] - 1.0).abs() < 0.01);
    assert_eq!(start(false).periods[0], default_period(&t));
}
