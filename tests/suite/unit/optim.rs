use sgpw::error::Error;
use sgpw::error::Result;
use sgpw::optim::*;

fn rosenbrock(x: &[f64]) -> Result<(f64, Vec<f64>)> {
    let (a, b) = (x[0], x[1]);
    let f = (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2);
    let g = vec![
        -2.0 * (1.0 - a) - 400.0 * a * (b - a * a),
        200.0 * (b - a * a),
    ];
    Ok((f, g))
}

/// f = 10⁴ + 10⁵/x falls toward its limit as x grows without end. L-BFGS walks
/// on until the gradient is below 10⁻⁵ (x ≈ 10⁵); with `plateau_rows` (10⁸ rows:
/// 100 a step at 10⁻⁶ per row) it stops, converged, sooner: once the last five
/// iterations' mean is within that of the five before's.
#[test]
fn the_plateau_test_ends_a_drift_toward_a_limit() {
    let drift = |x: &[f64]| -> Result<(f64, Vec<f64>)> {
        if x[0] <= 0.0 {
            return Err(Error::numerical("x ≤ 0"));
        }
        Ok((1e4 + 1e5 / x[0], vec![-1e5 / (x[0] * x[0])]))
    };
    let walk = minimize(drift, &[1.0], &Options::default(), &mut |_| {
        Control::Continue
    })
    .expect("runs");
    assert_eq!(walk.stop, Stop::Converged);
    let opts = Options {
        plateau_rows: Some(100_000_000),
        ..Default::default()
    };
    let out = minimize(drift, &[1.0], &opts, &mut |_| Control::Continue).expect("runs");
    assert_eq!(out.stop, Stop::Converged);
    assert!(
        out.iterations < walk.iterations && out.f > walk.f,
        "{} {}",
        out.iterations,
        walk.iterations
    );
    let k = out.trace.len();
    let gain = |t: &[f64]| t[..5].iter().sum::<f64>() / 5.0 - t[5..].iter().sum::<f64>() / 5.0;
    let tol = PLATEAU_TOL_PER_ROW * 1e8 * WINDOW as f64;
    assert!(gain(&out.trace[k - 10..]) <= tol);
    assert!(gain(&out.trace[k - 11..k - 1]) > tol);
}

#[test]
fn minimises_rosenbrock() {
    let opts = Options {
        max_iters: 200,
        grad_tol: 1e-8,
        f_tol: 0.0,
        ..Default::default()
    };
    let out = minimize(rosenbrock, &[-1.2, 1.0], &opts, &mut |_| Control::Continue).expect("runs");
    assert!(
        (out.x[0] - 1.0).abs() < 1e-6 && (out.x[1] - 1.0).abs() < 1e-6,
        "{:?}",
        out.x
    );
    assert_eq!(out.stop, Stop::Converged);
    assert!(out.trace.windows(2).all(|w| w[1] <= w[0]), "monotone trace");
}

#[test]
fn failed_evaluations_shrink_the_step() {
    // Undefined for x ≥ 1 (like a non-positive-definite matrix): minimum at 0.9.
    let f = |x: &[f64]| {
        if x[0] >= 1.0 {
            Err(Error::numerical("outside"))
        } else {
            Ok((
                (x[0] - 0.9).powi(2) - (1.0 - x[0]).ln() * 1e-3,
                vec![2.0 * (x[0] - 0.9) + 1e-3 / (1.0 - x[0])],
            ))
        }
    };
    let out = minimize(f, &[-5.0], &Options::default(), &mut |_| Control::Continue).expect("runs");
    assert!(
        out.x[0] < 1.0 && (out.x[0] - 0.9).abs() < 0.01,
        "{:?}",
        out.x
    );
}

#[test]
fn a_cancelled_evaluation_ends_the_run_at_the_last_point() {
    let mut calls = 0;
    let f = |x: &[f64]| {
        calls += 1;
        if calls > 4 {
            Err(Error::Cancelled)
        } else {
            rosenbrock(x)
        }
    };
    let out = minimize(f, &[-1.2, 1.0], &Options::default(), &mut |_| {
        Control::Continue
    })
    .expect("runs");
    assert_eq!(out.stop, Stop::Cancelled);
    assert!(out.f.is_finite() && out.trace.len() == out.iterations + 1);
}

#[test]
fn callback_can_stop_and_budget_is_respected() {
    let mut seen = 0;
    let out = minimize(rosenbrock, &[-1.2, 1.0], &Options::default(), &mut |i| {
        seen = i.iteration;
        if i.iteration == 3 {
            Control::Stop
        } else {
            Control::Continue
        }
    })
    .expect("runs");
    assert_eq!((out.iterations, out.stop, seen), (3, Stop::Cancelled, 3));
    let opts = Options {
        max_iters: 5,
        ..Default::default()
    };
    let out = minimize(rosenbrock, &[-1.2, 1.0], &opts, &mut |_| Control::Continue).expect("runs");
    assert_eq!(
        (out.iterations, out.stop, out.trace.len()),
        (5, Stop::Budget, 6)
    );
}
