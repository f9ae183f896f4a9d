use sgpw::data::moments::*;

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
