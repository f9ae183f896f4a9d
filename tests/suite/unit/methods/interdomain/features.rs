#[test]
fn fast_sin_cos_matches_libm() {
    let mut worst: f64 = 0.0;
    for k in -200_000..200_000 {
        let x = k as f64 * 0.0137 + (k as f64 * 0.37).sin() * 1e-3;
        let (s, c) = sgpw::methods::interdomain::features::sin_cos(x);
        worst = worst.max((s - x.sin()).abs()).max((c - x.cos()).abs());
    }
    for x in [1e5 + 0.3, -7.5e5, 1.5e6, 1e7, f64::NAN] {
        let (s, c) = sgpw::methods::interdomain::features::sin_cos(x);
        assert!(
            (s - x.sin()).abs() < 2e-15 || x.is_nan() && s.is_nan(),
            "{x}"
        );
        assert!(
            (c - x.cos()).abs() < 2e-15 || x.is_nan() && c.is_nan(),
            "{x}"
        );
    }
    assert!(worst < 5e-16, "worst absolute error {worst:e}");
}
