//! Test metrics of docs/methods.md §0.5, defined once.

use crate::data::moments::sum_of_squares;
use crate::likelihoods::{GaussHermite, Likelihood};

/// Normalised mean squared error `Σ(y−μ)² / Σ(y−ȳ)²` with ȳ the TRAINING mean: the
/// model's squared error over that of predicting the training mean, so a constant test
/// target still has one (it divides by the test targets' distance from ȳ, not by their
/// variance). None when it is undefined: every test target equals ȳ, so the mean
/// predictor makes no error to compare with.
pub fn nmse(y: &[f64], mean: &[f64], train_mean: f64) -> Option<f64> {
    // scaled sums (bit for bit the plain ones where those fit), so that targets near
    // 1e150 do not overflow to inf / inf
    let (num, a) = sum_of_squares(y.iter().zip(mean).map(|(y, m)| y - m));
    let (den, b) = sum_of_squares(y.iter().map(|y| y - train_mean));
    (den > 0.0).then(|| num / den * (a / b).powi(2))
}

/// Why the NMSE is missing, for the line that would show it.
pub const NMSE_UNDEFINED: &str =
    "undefined: every test target equals the training mean, so there is no error to normalise by";

/// Mean squared error `mean((y−μ)²)` in the target's units (the SPGP+DR/HS paper's
/// "MSE").
pub fn mse(y: &[f64], mean: &[f64]) -> f64 {
    let num: f64 = y.iter().zip(mean).map(|(y, m)| (y - m).powi(2)).sum();
    num / y.len().max(1) as f64
}

/// Mean negative log probability `½ mean((y−μ)²/s² + log s² + log 2π)`, with s² the
/// predictive variance of a noisy target.
pub fn mnlp(y: &[f64], mean: &[f64], var_noisy: &[f64]) -> f64 {
    // −½t summed is −½ times t summed exactly (a power of two), so this is the sum of
    // the terms halved once
    -log_densities(y, mean, var_noisy).iter().sum::<f64>() / y.len() as f64
}

/// The log predictive density of each target, `−½((y−μ)²/s² + log s² + log 2π)`, with s²
/// the predictive variance of a noisy target (GPflow's `predict_log_density`).
pub fn log_densities(y: &[f64], mean: &[f64], var_noisy: &[f64]) -> Vec<f64> {
    let ln2pi = (2.0 * std::f64::consts::PI).ln();
    y.iter()
        .zip(mean)
        .zip(var_noisy)
        .map(|((y, m), s2)| -0.5 * ((y - m).powi(2) / s2 + s2.ln() + ln2pi))
        .collect()
}

/// MNLP of the constant predictor: the training mean `ybar` and the training targets'
/// variance `var` at every test point — the score a model must beat to be of use.
pub fn constant_mnlp(y: &[f64], ybar: f64, var: f64) -> f64 {
    let mean = vec![ybar; y.len()];
    mnlp(y, &mean, &vec![var; y.len()])
}

/// MNLP with every noisy variance below `floor` raised to it — the only place a
/// predictive variance is clamped. The Nyström predictor's variances can be negative;
/// with `floor` = σ² a negative latent variance counts as 0. For every other method
/// the noisy variance is already ≥ σ², so this is [`mnlp`] exactly.
pub fn mnlp_clamped(y: &[f64], mean: &[f64], var_noisy: &[f64], floor: f64) -> f64 {
    let clamped: Vec<f64> = var_noisy.iter().map(|v| v.max(floor)).collect();
    mnlp(y, mean, &clamped)
}

/// Test-set scores.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TestMetrics {
    /// None when undefined (see [`nmse`]).
    pub nmse: Option<f64>,
    /// With the variances clamped at σ² (see [`mnlp_clamped`]).
    pub mnlp: f64,
    /// Unnormalised MSE (original units).
    #[serde(default)]
    pub mse: f64,
    /// Test points whose predictive latent variance came out negative (Nyström); MNLP
    /// used σ² for their noisy variance.
    #[serde(default)]
    pub negative_var_latent: usize,
    /// Test points whose noisy predictive variance (latent + σ²) came out negative.
    #[serde(default)]
    pub negative_var_noisy: usize,
    /// bernoulli: the share of test points on the wrong side of p(y = 1) = ½.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
    /// bernoulli: the area under the ROC curve of p(y = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auc: Option<f64>,
    /// poisson: the root mean squared error of the predictive mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmse: Option<f64>,
}

impl TestMetrics {
    /// "37 of 500 negative (12 even with σ²); MNLP clamps them", or None when none are.
    pub fn negative_note(&self, n_test: usize) -> Option<String> {
        negative_note(self.negative_var_latent, self.negative_var_noisy, n_test)
    }
}

/// The sentence the CLI and the app show for negative predictive variances.
pub fn negative_note(latent: usize, noisy: usize, n_test: usize) -> Option<String> {
    (latent > 0).then(|| {
        format!(
            "{latent} of {n_test} predictive variances negative ({noisy} even after adding σ²); \
             MNLP uses σ² for them"
        )
    })
}

/// The test scores of a model with a likelihood other than the Gaussian, defined once
/// for `fit`, sessions and Python (docs/methods.md, "Likelihoods"): MNLP from the
/// likelihood's log predictive density, and by likelihood — bernoulli: error rate, AUC,
/// and as `mse` the Brier score (the mean squared error of p(y = 1)); poisson: RMSE of
/// the predictive mean (and its square as `mse`); studentt: NMSE and MSE of the
/// predictive mean. `y`, `mean`, `var` (the latent f's) are in model units; the model
/// divides targets by `scale` after subtracting `target_mean` (1 and 0 for labels and
/// counts), so densities and means are taken back to the data's units.
pub fn likelihood_scores(
    lik: &dyn Likelihood,
    quad: &GaussHermite,
    y: &[f64],
    mean: &[f64],
    var: &[f64],
    (target_mean, scale): (f64, f64),
) -> TestMetrics {
    let n = y.len().max(1) as f64;
    let lpd: f64 = (0..y.len())
        .map(|i| lik.log_predictive_density(y[i], mean[i], var[i].max(0.0), quad))
        .sum::<f64>()
        / n;
    let predicted: Vec<f64> = (0..y.len())
        .map(|i| lik.predictive_moments(mean[i], var[i].max(0.0), quad).0 * scale + target_mean)
        .collect();
    let y_data: Vec<f64> = y.iter().map(|v| v * scale + target_mean).collect();
    let mse = mse(&y_data, &predicted);
    let mut out = TestMetrics {
        nmse: None,
        mnlp: -(lpd - scale.ln()),
        mse,
        negative_var_latent: var.iter().filter(|v| **v < 0.0).count(),
        negative_var_noisy: 0,
        error_rate: None,
        auc: None,
        rmse: None,
    };
    match lik.name() {
        "bernoulli" => {
            out.error_rate = Some(error_rate(y, &predicted));
            out.auc = auc(y, &predicted);
        }
        "poisson" => out.rmse = Some(mse.sqrt()),
        _ => out.nmse = nmse(&y_data, &predicted, target_mean),
    }
    out
}

/// Classification error rate: the share of 0/1 targets on the wrong side of p = ½ (p
/// exactly ½ predicts class 0, as scikit-learn's classifiers' `predict` does: class 1
/// only for a positive decision value).
pub fn error_rate(y: &[f64], p_one: &[f64]) -> f64 {
    let wrong = y
        .iter()
        .zip(p_one)
        .filter(|(y, p)| (**p > 0.5) != (**y == 1.0))
        .count();
    wrong as f64 / y.len().max(1) as f64
}

/// Area under the ROC curve of 0/1 targets ranked by a score: the probability that a
/// random class-1 point scores above a random class-0 point, ties counting ½ (the
/// Mann–Whitney statistic, scikit-learn's `roc_auc_score`). None without both classes.
pub fn auc(y: &[f64], score: &[f64]) -> Option<f64> {
    let mut order: Vec<usize> = (0..y.len()).collect();
    order.sort_by(|&a, &b| score[a].total_cmp(&score[b]));
    // midranks of tied scores, summed over class 1
    let (mut rank_sum, mut positives) = (0.0, 0usize);
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && score[order[j + 1]] == score[order[i]] {
            j += 1;
        }
        let midrank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            if y[k] == 1.0 {
                rank_sum += midrank;
                positives += 1;
            }
        }
        i = j + 1;
    }
    let negatives = y.len() - positives;
    (positives > 0 && negatives > 0).then(|| {
        let p = positives as f64;
        (rank_sum - p * (p + 1.0) / 2.0) / (p * negatives as f64)
    })
}
