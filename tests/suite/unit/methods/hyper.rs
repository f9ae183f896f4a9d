use sgpw::run_spec::Positive;

#[test]
fn softplus_coordinates_round_trip_and_carry_the_gradient() {
    for t in [-40.0, -8.0, -1.0, 0.0, 0.5, 3.0, 12.0] {
        for p in [Positive::Log, Positive::Softplus] {
            let u = p.from_log(t);
            assert!(
                (p.log_of(u) - t).abs() <= 1e-12 * t.abs().max(1.0),
                "{p:?} {t}"
            );
            // dt/du against a central difference
            let h = 1e-6 * u.abs().max(1.0);
            let fd = (p.log_of(u + h) - p.log_of(u - h)) / (2.0 * h);
            let an = p.dlog_du(u);
            assert!(
                (fd - an).abs() <= 1e-6 * an.abs().max(1e-12),
                "{p:?} {t}: {fd} {an}"
            );
        }
    }
    // softplus is the identity on large values: u ≈ p
    let p = 50.0f64;
    assert!((Positive::Softplus.from_log(p.ln()) - p).abs() < 1e-12);
}
