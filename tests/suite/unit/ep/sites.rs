use sgpw::ep::sites::*;
use sgpw::likelihoods::normal;

/// The matched site against moments computed by brute-force quadrature.
#[test]
fn probit_moments_match_quadrature() {
    for (s, mu, var) in [(1.0f64, 0.3f64, 0.7f64), (-1.0, 1.2, 2.5), (1.0, -2.0, 0.1)] {
        let (a, b, steps) = (mu - 12.0 * var.sqrt(), mu + 12.0 * var.sqrt(), 200_000);
        let h = (b - a) / steps as f64;
        let (mut z0, mut z1, mut z2) = (0.0, 0.0, 0.0);
        for k in 0..=steps {
            let f = a + h * k as f64;
            let w = if k == 0 || k == steps { 0.5 } else { 1.0 };
            let p = w * normal::cdf(s * f) * normal::pdf((f - mu) / var.sqrt()) / var.sqrt();
            z0 += p * h;
            z1 += p * f * h;
            z2 += p * f * f * h;
        }
        let (m, v) = (z1 / z0, z2 / z0 - (z1 / z0).powi(2));
        let t = probit_tilted(s, mu, var);
        assert!((t.log_z - z0.ln()).abs() < 1e-9, "{t:?} {z0}");
        // the matched moments are those of cavity × site
        let prec = 1.0 / var + t.tau;
        let mean = (mu / var + t.nu) / prec;
        assert!(
            (1.0 / prec - v).abs() < 1e-8 && (mean - m).abs() < 1e-8,
            "{m} {v}"
        );
    }
}
