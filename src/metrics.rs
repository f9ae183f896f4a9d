//! Test metrics of METHODS.md §0, defined once.

/// Normalised mean squared error `Σ(y−μ)² / Σ(y−ȳ)²` with ȳ the TRAINING mean.
pub fn nmse(y: &[f64], mean: &[f64], train_mean: f64) -> f64 {
    let num: f64 = y.iter().zip(mean).map(|(y, m)| (y - m).powi(2)).sum();
    let den: f64 = y.iter().map(|y| (y - train_mean).powi(2)).sum();
    num / den
}

/// Mean squared error `mean((y−μ)²)` in the target's units (the SPGP+DR/HS paper's
/// "MSE").
pub fn mse(y: &[f64], mean: &[f64]) -> f64 {
    let num: f64 = y.iter().zip(mean).map(|(y, m)| (y - m).powi(2)).sum();
    num / y.len().max(1) as f64
}

/// Mean negative log probability `½ mean((y−μ)²/s² + log s² + log 2π)`, with s² the
/// predictive variance of a noisy target.
pub fn mnlp(y: &[f64], mean: &[f64], var_noisy: &[f64]) -> f64 {
    let ln2pi = (2.0 * std::f64::consts::PI).ln();
    let total: f64 = y
        .iter()
        .zip(mean)
        .zip(var_noisy)
        .map(|((y, m), s2)| (y - m).powi(2) / s2 + s2.ln() + ln2pi)
        .sum();
    0.5 * total / y.len() as f64
}

/// Test-set scores.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TestMetrics {
    pub nmse: f64,
    pub mnlp: f64,
    /// Unnormalised MSE (original units).
    #[serde(default)]
    pub mse: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        // y = [1, 3], μ = [2, 2], training mean 0: NMSE = (1 + 1)/(1 + 9) = 0.2
        assert!((nmse(&[1.0, 3.0], &[2.0, 2.0], 0.0) - 0.2).abs() < 1e-15);
        // the training mean, not the test mean, normalises
        assert!((nmse(&[1.0, 3.0], &[2.0, 2.0], 2.0) - 1.0).abs() < 1e-15);
        assert!((mse(&[1.0, 3.0], &[2.0, 5.0]) - 2.5).abs() < 1e-15);
        // standard normal at its mean: ½ log 2π
        let v = mnlp(&[0.0], &[0.0], &[1.0]);
        assert!((v - 0.5 * (2.0 * std::f64::consts::PI).ln()).abs() < 1e-15);
        // one sd away with variance 4: ½(1 + ln 4 + ln 2π)
        let v = mnlp(&[2.0], &[0.0], &[4.0]);
        assert!((v - 0.5 * (1.0 + 4f64.ln() + (2.0 * std::f64::consts::PI).ln())).abs() < 1e-15);
    }
}
