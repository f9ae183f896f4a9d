use sgpw::likelihoods::quadrature::*;

/// numpy.polynomial.hermite.hermgauss(5), printed with repr (the physicists' rule).
const HERMGAUSS_5: ([f64; 5], [f64; 5]) = (
    [
        -2.0201828704560856,
        -0.9585724646138185,
        0.0,
        0.9585724646138185,
        2.0201828704560856,
    ],
    [
        0.019953242059045917,
        0.3936193231522411,
        0.9453087204829418,
        0.3936193231522411,
        0.019953242059045917,
    ],
);

#[test]
fn five_points_match_numpy() {
    let (x, w) = physicists_rule(5);
    for i in 0..5 {
        assert!(
            (x[i] - HERMGAUSS_5.0[i]).abs() < 1e-15,
            "{} {}",
            x[i],
            HERMGAUSS_5.0[i]
        );
        assert!(
            (w[i] - HERMGAUSS_5.1[i]).abs() < 1e-15,
            "{} {}",
            w[i],
            HERMGAUSS_5.1[i]
        );
    }
}

/// numpy's hermgauss(20): the outermost node and weight, and the 11th weight.
#[test]
fn twenty_points_match_numpy() {
    let (x, w) = physicists_rule(20);
    assert!((x[19] - 5.387480890011233).abs() < 1e-14);
    assert!((w[19] - 2.2293936455341447e-13).abs() < 1e-13 * 2.23e-13);
    assert!((w[10] - 0.4622436696006101).abs() < 1e-15);
}

#[test]
fn moments_of_the_standard_normal_are_exact() {
    // E[z^k] = (k−1)!! for even k, 0 for odd; exact up to degree 2n−1
    for n in [1, 2, 5, 20, 60, MAX_POINTS] {
        let q = GaussHermite::new(n).unwrap();
        let mut double_factorial = 1.0;
        for k in 0..(2 * n).min(24) {
            let terms = q
                .nodes
                .iter()
                .zip(&q.weights)
                .map(|(z, w)| w * z.powi(k as i32));
            let got: f64 = terms.clone().sum();
            // odd moments cancel to rounding in the largest terms
            let scale: f64 = terms.map(f64::abs).sum();
            let want = if k % 2 == 1 { 0.0 } else { double_factorial };
            assert!(
                (got - want).abs() <= 1e-13 * scale,
                "n = {n}, k = {k}: {got} against {want}"
            );
            if k % 2 == 1 {
                double_factorial *= k as f64;
            }
        }
    }
}

#[test]
fn expectations_of_smooth_functions() {
    let q = GaussHermite::new(DEFAULT_POINTS).unwrap();
    // E[exp(f)] = exp(μ + v/2) (the log-normal mean), and its log in log space
    let (mu, v) = (0.3, 0.7);
    let want = (mu + v / 2.0_f64).exp();
    assert!((q.expect(mu, v, f64::exp) - want).abs() < 1e-13 * want);
    assert!((q.log_expect_exp(mu, v, |f| f) - (mu + v / 2.0)).abs() < 1e-13);
    // log space survives what would underflow
    let far = q.log_expect_exp(mu, v, |f| f - 2000.0);
    assert!((far - (mu + v / 2.0 - 2000.0)).abs() < 1e-10, "{far}");
}

#[test]
fn refuses_a_rule_it_cannot_form() {
    assert!(GaussHermite::new(0).is_err());
    assert!(GaussHermite::new(MAX_POINTS + 1).is_err());
}

/// A rule is found once per size and handed out again: each size gets its own, the
/// same bits as the rule formed from [`physicists_rule`] directly.
#[test]
fn a_rule_handed_out_again_is_the_rule_of_its_size() {
    for points in [5, 20, 5, 7, 20, 1, 150] {
        let rule = GaussHermite::new(points).unwrap();
        let (x, w) = physicists_rule(points);
        let nodes: Vec<f64> = x.iter().map(|v| std::f64::consts::SQRT_2 * v).collect();
        let weights: Vec<f64> = w.iter().map(|v| v / std::f64::consts::PI.sqrt()).collect();
        assert_eq!(rule.nodes, nodes, "{points} points");
        assert_eq!(rule.weights, weights, "{points} points");
    }
}
