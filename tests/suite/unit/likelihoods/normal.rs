use sgpw::likelihoods::normal::*;

#[test]
fn the_two_forms_agree_where_both_hold() {
    // at the switch both are accurate: the series and erfc meet
    for t in [-34.0, -35.0, -36.0] {
        let direct = cdf(t).ln();
        let series = -0.5 * t * t - LN_SQRT_2PI - (-t).ln() + tail_series(t).ln();
        assert!(
            (direct - series).abs() < 1e-13 * direct.abs(),
            "{t}: {direct} {series}"
        );
        let ratio = pdf(t) / cdf(t);
        assert!((ratio + t / tail_series(t)).abs() < 1e-12 * ratio, "{t}");
    }
}

#[test]
fn known_values_and_the_far_tail() {
    // Φ(0) = ½, Φ(1.96) ≈ 0.9750021048517795 (scipy.special.ndtr)
    assert_eq!(cdf(0.0), 0.5);
    assert!(
        (cdf(1.96) - 0.9750021048517795).abs() < 4e-16,
        "{}",
        cdf(1.96)
    );
    // scipy.special.log_ndtr(-40) = -804.6084420137538
    assert!((log_cdf(-40.0) + 804.6084420137538).abs() < 1e-12 * 804.6);
    assert!(log_cdf(-1e5).is_finite());
    // φ/Φ = −t + 1/(−t) − … far out
    assert!((pdf_over_cdf(-1e5) - (1e5 + 1e-5)).abs() < 1e-9);
    assert!(pdf_over_cdf(40.0) >= 0.0 && pdf_over_cdf(40.0) < 1e-300);
}
